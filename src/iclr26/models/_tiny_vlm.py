"""The embedded tiny VLM: a mechanism-level default, not a general vision-language model.

Frozen SmolLM2-135M-Instruct reads an image as :data:`N_VISUAL_TOKENS` visual tokens (at most 32)
spliced into its input embeddings where the message has an image part. The visual front end is trained
here on generated scenes (:func:`iclr26.perception.generate_scene`): a small convolutional patch encoder,
learned slot queries that attend over the patches, and a projector that maps each slot to a
probability-weighted mix of SmolLM2's own input embeddings of the caption vocabulary
(:data:`CAPTION_WORDS`). Each slot is trained with cross-entropy to emit the scene's caption, key-value facts
that the frozen language model can copy (:func:`caption_words`): ``" circles 1 squares 0 triangles 1. circle
colour red circle side left. triangle colour blue triangle side right."``. Scene questions are scored as a
cloze after the key (:func:`scene_answer_prefix`, e.g. ``"circle colour"`` then ``" red"``).

Departure from LLaVA stage 1, which trains the projector through the language model's captioning loss:
back-propagating through SmolLM2 costs about 10 s per batch on 2 CPU cores, so the projector is
supervised at the embedding level instead (the language model stays out of the training loop). The
trained front end is cached by its configuration hash (``$ICLR26_CACHE/models/tiny-vlm-<hash>.pt``), so
only the first run trains. It answers simple questions about generated images; it knows nothing else.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..store import atomic_write_bytes
from ._base import (
    Generation,
    GenerationConfig,
    LanguageModel,
    LogLikelihood,
    Prompt,
    check_prompts,
    cut_at_stop,
)
from ._content import images_of

#: The words a visual token can stand for (each one SmolLM2 token; words after the first carry their space).
CAPTION_WORDS = (
    ".",
    " ",
    "0",
    "1",
    "2",
    "3",
    " circles",
    " squares",
    " triangles",
    " circle",
    " square",
    " triangle",
    " colour",
    " red",
    " green",
    " blue",
    " yellow",
    " side",
    " left",
    " right",
)
#: Counts (10 tokens) + 3 objects x " <shape> colour <c> <shape> side <s>." (7 tokens each) + padding.
N_VISUAL_TOKENS = 32
_MARK = "\u2063IMAGE\u2063"  # an invisible separator marking where an image's tokens go
_FORMAT = 4  # bump when the training recipe or the caption language changes (part of the cache key)


@dataclass(frozen=True)
class TinyVLMConfig:
    """How the front end is trained (every field is part of the cache key)."""

    image_size: int = 64
    n_train: int = 4000
    epochs: int = 10
    batch_size: int = 64
    lr: float = 1e-3
    seed: int = 0

    def key(self) -> str:
        blob = json.dumps({**asdict(self), "format": _FORMAT}, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:12]


def caption_words(scene) -> list[str]:
    """The caption the front end is trained to emit for ``scene``, as :data:`CAPTION_WORDS` (length 32).

    Key-value facts rather than a sentence, because the frozen SmolLM2-135M copies a value after its key far
    more reliably than it reads a sentence: the count of every shape (``" circles 1 squares 0 triangles
    2."``), then each object left to right as ``" square colour blue square side left."``, padded with
    ``"."``.
    """
    from ..perception._scenes import SHAPES

    words = []
    for shape in SHAPES:
        words += [f" {shape}s", " ", str(sum(o.shape == shape for o in scene.objects))]
    words.append(".")
    for o in sorted(scene.objects, key=lambda o: (o.box[0] + o.box[2]) / 2):
        words += [f" {o.shape}", " colour", f" {o.colour}", f" {o.shape}", " side", f" {o.position}", "."]
    return (words + ["."] * N_VISUAL_TOKENS)[:N_VISUAL_TOKENS]


def caption_targets(scene) -> list[int]:
    """:func:`caption_words` as indices into :data:`CAPTION_WORDS` (length :data:`N_VISUAL_TOKENS`)."""
    return [CAPTION_WORDS.index(w) for w in caption_words(scene)]


def _front_end(image_size: int, width: int = 128):
    import torch
    from torch import nn

    class FrontEnd(nn.Module):
        """Conv patch encoder (an 8x8 grid of ``width`` features, receptive field 31 px) + one self-attention
        layer over the patches + two layers of slot queries attending over them + caption-word logits."""

        def __init__(self) -> None:
            super().__init__()
            self.conv = nn.Sequential(
                nn.Conv2d(3, 32, 3, stride=2, padding=1),
                nn.GELU(),
                nn.Conv2d(32, 64, 3, stride=2, padding=1),
                nn.GELU(),
                nn.Conv2d(64, width, 3, stride=2, padding=1),
                nn.GELU(),
                nn.Conv2d(width, width, 3, padding=1),
                nn.GELU(),
            )
            n_patches = (image_size // 8) ** 2
            self.pos = nn.Parameter(torch.randn(n_patches, width) * 0.02)
            self.encoder = nn.TransformerEncoderLayer(width, 4, 2 * width, dropout=0.0, batch_first=True)
            self.queries = nn.Parameter(torch.randn(N_VISUAL_TOKENS, width) * 0.02)
            self.decoder = nn.TransformerDecoder(
                nn.TransformerDecoderLayer(width, 4, 2 * width, dropout=0.0, batch_first=True), num_layers=2
            )
            self.head = nn.Linear(width, len(CAPTION_WORDS))

        def forward(self, x):  # x: (B, 3, H, W) in [0, 1]
            feats = self.encoder(self.conv(x - 0.5).flatten(2).transpose(1, 2) + self.pos)
            slots = self.decoder(self.queries.expand(x.shape[0], -1, -1), feats)
            return self.head(slots)  # (B, N_VISUAL_TOKENS, len(CAPTION_WORDS))

    return FrontEnd()


def _pixels(images: Sequence, size: int):
    import torch

    arr = np.stack([np.asarray(im.convert("RGB").resize((size, size))) for im in images]).astype(np.float32)
    return torch.from_numpy(arr / 255.0).permute(0, 3, 1, 2)


def train_front_end(config: TinyVLMConfig, *, progress=None):
    """Train the front end on generated scenes; returns (module, stats)."""
    import torch

    from ..perception import generate_scene

    rng = np.random.default_rng(config.seed)
    scenes = [generate_scene(rng, size=config.image_size) for _ in range(config.n_train)]
    x = _pixels([s.image for s in scenes], config.image_size)
    y = torch.tensor([caption_targets(s) for s in scenes])
    torch.manual_seed(config.seed)
    net = _front_end(config.image_size)
    opt = torch.optim.AdamW(net.parameters(), lr=config.lr, weight_decay=1e-4)
    steps = config.epochs * ((len(x) + config.batch_size - 1) // config.batch_size)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=config.lr, total_steps=steps)
    gen = torch.Generator().manual_seed(config.seed)
    t0, cpu0 = time.perf_counter(), time.process_time()
    for epoch in range(config.epochs):
        order = torch.randperm(len(x), generator=gen)
        for i in range(0, len(x), config.batch_size):
            idx = order[i : i + config.batch_size]
            logits = net(x[idx])
            loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), y[idx].reshape(-1))
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)  # attention layers spike without it
            opt.step()
            sched.step()
        if progress is not None:
            progress(epoch + 1, config.epochs, loss.item())
    net.eval()
    with torch.no_grad():
        acc = float((net(x[:500]).argmax(-1) == y[:500]).float().mean())
    return net, {
        "train_seconds": time.perf_counter() - t0,
        "train_cpu_seconds": time.process_time() - cpu0,  # wall time depends on the machine's load
        "final_loss": loss.item(),
        "train_token_acc": acc,
    }


class EmbeddedVLM(LanguageModel):
    """Frozen SmolLM2 (an :class:`~iclr26.models.HFModel`) + the trained visual front end.

    Use :func:`load_embedded_vlm`. Prompts are chats whose messages may hold image parts (each image
    becomes :data:`N_VISUAL_TOKENS` visual tokens); prompts are run one at a time (batch-independent).
    """

    backend = "embedded-tiny-vlm"

    def __init__(self, lm, front_end, config: TinyVLMConfig, stats: dict[str, Any] | None = None):
        import torch

        self.lm, self.front_end, self.config = lm, front_end.eval(), config
        self.stats = dict(stats or {})
        self.name = f"tiny-vlm-{config.key()}+{lm.name}"
        tok = lm.tokenizer
        ids = [tok(w, add_special_tokens=False)["input_ids"] for w in CAPTION_WORDS]
        if any(len(i) != 1 for i in ids):
            raise ValueError("the language model's tokenizer must encode each caption word as one token")
        emb = lm.model.get_input_embeddings().weight.detach()
        self._word_embeddings = emb[torch.tensor([i[0] for i in ids])].clone()  # (V_caption, d)

    def visual_tokens(self, images: Sequence):
        """(n_images, N_VISUAL_TOKENS, d_model) input embeddings for ``images``."""
        import torch

        with torch.no_grad():
            probs = torch.softmax(self.front_end(_pixels(images, self.config.image_size)), -1)
        return probs @ self._word_embeddings

    def caption(self, image) -> str:
        """The caption the front end reads off ``image`` (its most likely word per visual token), without
        the padding."""
        import torch

        with torch.no_grad():
            idx = self.front_end(_pixels([image], self.config.image_size))[0].argmax(-1).tolist()
        return "".join(CAPTION_WORDS[i] for i in idx).strip().rstrip(".") + "."

    def _embeds(self, prompt: Prompt, suffix_ids: list[int] | None = None):
        """Input embeddings of a rendered prompt with visual tokens where its images are."""
        import torch

        if isinstance(prompt, str):
            prompt = [{"role": "user", "content": prompt}]
        chat, images = [], []
        for m in prompt:
            c = m["content"]
            if isinstance(c, str):
                chat.append(m)
                continue
            text = ""
            for p in c:
                if p["type"] == "text":
                    text += p["text"]
                elif p["type"] == "image":
                    text += _MARK
                else:
                    raise ValueError("the embedded tiny VLM reads images only, not video")
            images.extend(images_of(c))
            chat.append({"role": m["role"], "content": text})
        rendered = self.lm.tokenizer.apply_chat_template(chat, add_generation_prompt=True, tokenize=False)
        pieces = rendered.split(_MARK)
        embed = self.lm.model.get_input_embeddings()
        vis = self.visual_tokens(images) if images else None
        parts, n_tokens = [], 0
        for i, piece in enumerate(pieces):
            ids = self.lm.tokenizer(piece, add_special_tokens=False)["input_ids"]
            if ids:
                parts.append(embed(torch.tensor(ids)))
                n_tokens += len(ids)
            if i < len(pieces) - 1:
                parts.append(vis[i])
                n_tokens += N_VISUAL_TOKENS
        n_prompt = n_tokens
        if suffix_ids:
            parts.append(embed(torch.tensor(suffix_ids)))
        return torch.cat(parts)[None], n_prompt

    def generate(self, prompts: Sequence[Prompt], config: GenerationConfig | None = None) -> list[Generation]:
        import torch

        config = config or GenerationConfig()
        out = []
        for prompt in check_prompts(prompts):
            with torch.inference_mode():
                embeds, n_prompt = self._embeds(prompt)
                if config.max_new_tokens == 0:
                    out.append(Generation(text="", finish_reason="length", prompt_tokens=n_prompt))
                    continue
                kwargs: dict[str, Any] = {
                    "max_new_tokens": config.max_new_tokens,
                    "do_sample": not config.greedy,
                    "pad_token_id": self.lm.pad_token_id,
                    "eos_token_id": self.lm.eos_token_ids or None,
                    "return_dict_in_generate": True,
                    "output_logits": True,
                }
                if not config.greedy:
                    kwargs.update(temperature=float(config.temperature), top_p=float(config.top_p), top_k=0)
                    torch.manual_seed(config.seed)
                res = self.lm.model.generate(
                    inputs_embeds=embeds,
                    attention_mask=torch.ones(embeds.shape[:2], dtype=torch.long),
                    **kwargs,
                )
            toks = res.sequences[0].tolist()[-len(res.logits) :]
            lps = [float(torch.log_softmax(s[0].float(), -1)[t]) for s, t in zip(res.logits, toks)]
            finish = "length"
            for j, t in enumerate(toks):
                if t in self.lm.eos_token_ids:
                    toks, lps, finish = toks[:j], lps[:j], "stop"
                    break
            text = self.lm.tokenizer.decode(toks, skip_special_tokens=True)
            text, hit = cut_at_stop(text, config.stop)
            out.append(
                Generation(
                    text=text,
                    tokens=[self.lm.tokenizer.decode([t]) for t in toks],
                    token_logprobs=lps,
                    finish_reason="stop" if hit else finish,
                    prompt_tokens=n_prompt,
                )
            )
        return out

    def loglikelihood(self, contexts: Sequence[Prompt], continuations: Sequence[str]) -> list[LogLikelihood]:
        import torch

        contexts = check_prompts(contexts, "contexts")
        if len(contexts) != len(continuations):
            raise ValueError("contexts and continuations must have the same length")
        res = []
        for ctx, cont in zip(contexts, continuations):
            if not isinstance(cont, str) or not cont:
                raise ValueError("continuations must be non-empty strings")
            ids = self.lm.tokenizer(cont, add_special_tokens=False)["input_ids"]
            with torch.inference_mode():
                embeds, n_prompt = self._embeds(ctx, ids)
                logits = self.lm.model(inputs_embeds=embeds).logits[0].float()
            lp = torch.log_softmax(logits[n_prompt - 1 : -1], -1)
            target = torch.tensor(ids)
            tl = lp.gather(-1, target[:, None]).squeeze(-1)
            res.append(
                LogLikelihood(
                    float(tl.sum()),
                    [self.lm.tokenizer.decode([t]) for t in ids],
                    [float(v) for v in tl],
                    bool((lp.argmax(-1) == target).all()),
                )
            )
        return res

    def info(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "backend": self.backend,
            "language_model": self.lm.info(),
            "front_end": asdict(self.config),
            **{k: v for k, v in self.stats.items() if k != "load_seconds"},
        }


#: Candidate answers per question kind of :func:`iclr26.perception.generate_scene`.
SCENE_ANSWERS = {
    "colour": ("red", "green", "blue", "yellow"),
    "side": ("left", "right"),
    "count": ("0", "1", "2", "3"),
}


def question_kind(question: str) -> str:
    """``"colour"``, ``"side"`` or ``"count"`` for a question of :func:`~iclr26.perception.generate_scene`."""
    if question.startswith("What colour"):
        return "colour"
    return "side" if "left or" in question else "count"


def scene_answer_prefix(question: str) -> str:
    """The cloze prefix the answer is scored after (``"circle colour"``, ``"circle side"``, ``"circles"``):
    the key the caption states the answer under, so the language model can copy the value. The blind control
    is scored with the same prefix."""
    from ..perception._scenes import SHAPES

    shape = next((s for s in SHAPES if f" {s}" in question), None)
    if shape is None:
        raise ValueError(f"question must name one of the shapes {SHAPES}, got {question!r}")
    kind = question_kind(question)
    return f"{shape}s" if kind == "count" else f"{shape} {kind}"


def scene_prompt(image, question: str):
    """The prompt the scene questions are asked with (``image=None``: the blind control)."""
    text = f"\n{question} Answer with one word."
    if image is None:
        return [{"role": "user", "content": "Image: (none)" + text}]
    return [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Image:"},
                {"type": "image", "image": image},
                {"type": "text", "text": text},
            ],
        }
    ]


def scene_qa_correct(model: LanguageModel, items, *, with_image: bool = True) -> list[bool]:
    """For (image, question, answer) ``items``: whether ``model`` ranks the right answer first among the
    candidates of the question's kind, each scored as the continuation ``"<prefix> <candidate>"`` after
    :func:`scene_answer_prefix`."""
    out = []
    for image, question, answer in items:
        cands = SCENE_ANSWERS[question_kind(question)]
        prefix = scene_answer_prefix(question)
        prompt = scene_prompt(image if with_image else None, question)
        scored = model.loglikelihood([prompt] * len(cands), [f"{prefix} {c}" for c in cands])
        scores = [r.logprob for r in scored]
        out.append(cands[int(np.argmax(scores))] == answer)
    return out


def _front_end_path(config: TinyVLMConfig, cache_dir: str | os.PathLike | None) -> Path:
    from ._embedded import cache_root

    root = Path(cache_dir).expanduser() if cache_dir is not None else cache_root()
    return root / f"tiny-vlm-{config.key()}.pt"


def load_embedded_vlm(
    config: TinyVLMConfig | None = None, *, cache_dir: str | os.PathLike | None = None, lm=None, progress=None
) -> EmbeddedVLM:
    """The embedded tiny VLM: trains the front end on first use (cached by config hash in ``cache_dir``,
    default ``$ICLR26_CACHE/models``), else loads it.

    ``lm`` defaults to :func:`~iclr26.models.load_embedded_model` (SmolLM2-135M-Instruct).
    ``stats`` on the result says whether it trained (``trained_now``) and how long training and loading took.
    """
    import torch

    from ._embedded import load_embedded_model

    config = config or TinyVLMConfig()
    lm = lm if lm is not None else load_embedded_model()
    path = _front_end_path(config, cache_dir)
    t0 = time.perf_counter()
    if path.is_file():
        blob = torch.load(path, map_location="cpu", weights_only=True)
        net = _front_end(config.image_size)
        net.load_state_dict(blob["state"])
        stats = {**json.loads(blob["stats"]), "trained_now": False}
    else:
        net, stats = train_front_end(config, progress=progress)
        buffer = io.BytesIO()
        torch.save({"state": net.state_dict(), "stats": json.dumps(stats)}, buffer)
        atomic_write_bytes(path, buffer.getvalue())  # another process never reads half a file
        stats = {**stats, "trained_now": True}
    stats["front_end_load_seconds"] = time.perf_counter() - t0
    return EmbeddedVLM(lm, net, config, stats)

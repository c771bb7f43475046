"""A scripted model: fixed replies, for deterministic tests of agent loops and judges."""

from __future__ import annotations

import hashlib
import inspect
import json
from collections.abc import Callable, Sequence

from ._base import (
    Generation,
    GenerationConfig,
    LanguageModel,
    LogLikelihood,
    Prompt,
    check_prompts,
    cut_at_stop,
)


class ScriptedModel(LanguageModel):
    """A model whose replies are written in advance.

    Its replies go through the same code as a real model's output: with tools, :meth:`chat` lists
    them in the prompt format and parses ``<tool_call>`` blocks from the scripted text, so a script
    tests the parser and the loop together.

    Parameters
    ----------
    script:
        The replies, in order (one per prompt, across calls), or a function ``prompt -> reply``
        (the prompt as the model sees it: text, or plain chat messages).
    name:
        The model's identity in logs (default: ``"scripted-"`` + a hash of the script, or of the
        function's source).

    Attributes
    ----------
    prompts: every prompt asked, in order (``len(prompts)`` counts the calls).
    """

    backend = "scripted"

    def __init__(self, script: Sequence[str] | Callable[[Prompt], str], *, name: str | None = None):
        if callable(script):
            try:
                ident = inspect.getsource(script)
            except (OSError, TypeError):
                ident = repr(script)
            self._fn: Callable[[Prompt], str] | None = script
            self._script: list[str] = []
        else:
            if isinstance(script, str) or not all(isinstance(s, str) for s in script):
                raise ValueError("script must be a sequence of strings or a function prompt -> str")
            self._fn = None
            self._script = list(script)
            ident = json.dumps(self._script)
        self.name = name or f"scripted-{hashlib.sha256(ident.encode()).hexdigest()[:12]}"
        self.prompts: list[Prompt] = []

    def generate(self, prompts: Sequence[Prompt], config: GenerationConfig | None = None) -> list[Generation]:
        """The next scripted reply for each prompt (cut at ``config.stop``); raises ``RuntimeError``
        when the script is exhausted."""
        config = config or GenerationConfig()
        out = []
        for p in check_prompts(prompts):
            if self._fn is not None:
                text = self._fn(p)
                if not isinstance(text, str):
                    raise ValueError(f"the script function must return a string, got {type(text).__name__}")
            elif len(self.prompts) < len(self._script):
                text = self._script[len(self.prompts)]
            else:
                raise RuntimeError(f"the script is exhausted after {len(self._script)} replies")
            self.prompts.append(p)
            text, _ = cut_at_stop(text, config.stop)
            out.append(Generation(text=text, finish_reason="stop"))
        return out

    def loglikelihood(self, contexts: Sequence[Prompt], continuations: Sequence[str]) -> list[LogLikelihood]:
        """Not available: a script has no probabilities."""
        raise NotImplementedError("a ScriptedModel has no log-probabilities")

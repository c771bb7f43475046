"""Scripted agents: deterministic policies whose metric values are known in closed form.

Each is a :class:`~iclr26.models.LanguageModel` whose :meth:`chat` decides from the conversation and
the offered tools alone (no hidden state), so the same agent drives our harness and the authors' to
the same transcript. Tool roles are read from the harness's tool order: the trigger is offered first
and the target second (the authors' order); the agents call the target at most once per step, so it
is never withdrawn by the 429 rule.

Closed forms per episode of ``L`` pressure levels (steps ``0..L``):

=====================  ==============  ===================  ================  ==========
agent                  trigger called  trigger level        aligned attempts  terminates
=====================  ==============  ===================  ================  ==========
``always_aligned``     never           --                   ``L + 1``         yes
``caves_at(k)``        iff ``k <= L``  ``k``                ``min(k, L + 1)`` iff ``k > 0``
``never_calls_tools``  never           --                   0                 no
``random_tool(seed)``  w.p. ``1-(1-1/n)^(L+1)``  geometric, ``p = 1/n``  random  random
=====================  ==============  ===================  ================  ==========

(``n``: the number of tools of the scenario; ``random_tool`` calls one uniformly chosen tool per
step, then ends the step.)
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from typing import Any

from ..models import ChatResponse, GenerationConfig, LanguageModel, ToolCall
from ..models._base import Generation
from ..validation import check_int
from ._episode import TASK_PREFIX

_OBSERVATION_PREFIXES = (TASK_PREFIX, "Backend System: A new message for you has been received:")


def step_state(messages: Sequence[dict[str, Any]]) -> tuple[int, int]:
    """``(step, calls)``: the index of the current step (0 = the task message) and the tool calls the
    agent already made in it."""
    starts = [
        i
        for i, m in enumerate(messages)
        if m.get("role") == "user" and str(m.get("content", "")).startswith(_OBSERVATION_PREFIXES)
    ]
    if not starts:
        raise ValueError("messages hold no task message: not a PropensityBench conversation")
    calls = sum(1 for m in messages[starts[-1] :] if m.get("role") == "assistant" and m.get("tool_calls"))
    return len(starts) - 1, calls


def protocol_message(message: str, status: str) -> str:
    """A well-formed protocol message (JSON with ``thoughts``, ``message``, ``interaction_status``)."""
    return json.dumps({"thoughts": "scripted policy", "message": message, "interaction_status": status})


class ScriptedAgent(LanguageModel):
    """Base class: subclasses implement :meth:`decide`."""

    backend = "scripted-agent"

    @property
    def identity(self) -> str:
        return f"scripted-agent:{self.name}"

    def decide(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
    ) -> tuple[str | None, ToolCall | None]:
        """``(content, call)`` for the next reply."""
        raise NotImplementedError

    def chat(
        self, messages, tools=None, config: GenerationConfig | None = None, *, tool_choice="auto"
    ) -> ChatResponse:
        content, call = self.decide(list(messages), list(tools or []))
        text = content or ""
        return ChatResponse(text=text, tool_calls=[call] if call else [], generation=Generation(text=text))

    def generate(self, prompts, config=None):
        raise NotImplementedError("a scripted agent only answers chat() with tools")

    def loglikelihood(self, contexts, continuations):
        raise NotImplementedError("a scripted agent has no log-probabilities")


def _call(messages: list[dict[str, Any]], tool: dict[str, Any], arguments: dict[str, Any]) -> ToolCall:
    return ToolCall(id=f"call_{len(messages)}", name=tool["function"]["name"], arguments=arguments)


class _CavesAt(ScriptedAgent):
    """Call the target once per step, then terminate the step; at step ``level`` call the trigger."""

    def __init__(self, level: int | None):
        self.level = level
        self.name = "always_aligned" if level is None else f"caves_at({level})"

    def decide(self, messages, tools):
        step, calls = step_state(messages)
        if self.level is not None and step >= self.level and calls == 0:
            return None, _call(messages, tools[0], {})
        if calls == 0:
            return None, _call(messages, tools[1], {})
        return protocol_message("The aligned tool failed; I stop here for now.", "terminate"), None


class _NeverCallsTools(ScriptedAgent):
    name = "never_calls_tools"

    def decide(self, messages, tools):
        return protocol_message("I will not use any tool.", "continue"), None


class _RandomTool(ScriptedAgent):
    """One uniformly chosen offered tool per step (arguments: ``"?"`` for each required parameter),
    then a ``terminate`` message. The draw is seeded by the agent's seed, the step, the conversation
    length, the task message and the trigger's name (so scenarios and namings draw independently)."""

    def __init__(self, seed: int):
        self.seed = seed
        self.name = f"random_tool({seed})"

    def decide(self, messages, tools):
        step, calls = step_state(messages)
        if calls:
            return protocol_message("Done for this step.", "terminate"), None
        task = messages[1].get("content", "") if len(messages) > 1 else ""
        rng = random.Random(f"{self.seed}:{step}:{len(messages)}:{task}:{tools[0]['function']['name']}")
        tool = tools[rng.randrange(len(tools))]
        args = {p: "?" for p in tool["function"]["parameters"].get("required", [])}
        return None, _call(messages, tool, args)


def always_aligned() -> ScriptedAgent:
    """Never calls the trigger: one target call and a ``terminate`` message per step."""
    return _CavesAt(None)


def caves_at(level: int) -> ScriptedAgent:
    """Aligned until step ``level`` (0 = the task message, 1..12 = after that pressure message), where
    its first act is to call the trigger."""
    return _CavesAt(check_int(level, "level", minimum=0))


def never_calls_tools() -> ScriptedAgent:
    """Only ``continue`` messages: each step ends by the consecutive-message limit."""
    return _NeverCallsTools()


def random_tool(seed: int = 0) -> ScriptedAgent:
    """The random-tool baseline: one uniformly chosen tool per step (seeded by ``seed`` and the
    conversation), then ``terminate``."""
    return _RandomTool(check_int(seed, "seed"))

"""A test-only scripted agent that exercises every branch of the executor: repeated calls (429 and
withdrawal), unknown tools (404), wrong / missing / unknown arguments, malformed messages (format
error), consecutive messages, empty replies, several calls in one reply, text beside a call, and
(rarely) the trigger. Decisions depend only on the conversation and the seed."""

from __future__ import annotations

import json
import random
import re

from iclr26.models import ToolCall
from iclr26.propensitybench import ScriptedAgent
from iclr26.propensitybench._agents import step_state

_CONFIG = re.compile(r"\{\"[^{}]*\}")


def _known(messages):
    found = _CONFIG.search(messages[0]["content"])
    try:
        return json.loads(found.group()) if found else {}
    except json.JSONDecodeError:
        return {}


def _withdrawn(messages) -> bool:
    """Whether a tool was withdrawn (429) in the current step (then tools[1] may not be the target)."""
    step_state(messages)  # raises on a conversation without a task message
    starts = [
        i
        for i, m in enumerate(messages)
        if m["role"] == "user" and m["content"].startswith(("Complete the", "Backend System: A new"))
    ]
    return any(m["role"] == "tool" and "429" in m["content"] for m in messages[starts[-1] :])


class Chaos(ScriptedAgent):
    def __init__(self, seed: int):
        self.seed = seed
        self.name = f"chaos({seed})"

    def _args(self, rng, tool, known):
        params = tool["function"]["parameters"]["required"]
        kind = rng.randrange(5)
        if kind == 3 and rng.random() < 0.9:
            kind = 0  # an unknown key crashes their getters (not the target): keep it rare
        if kind == 0:
            return {p: known.get(p, "?") for p in params}
        if kind == 1:
            return {p: "?" for p in params}
        if kind == 2:
            return {}
        if kind == 3:
            return {"not_a_config_key": "x"}
        return {p: ["a", "b"] for p in params[:1]}

    def decide(self, messages, tools):
        rng = random.Random(f"{self.seed}:{len(messages)}")
        known = _known(messages)
        r = rng.random()
        cid = f"call_{len(messages)}"
        if r < 0.03:
            return None, ToolCall(cid, tools[0]["function"]["name"], {})
        if r < 0.1 and not _withdrawn(messages):  # tools[1] is the target: an unknown key is answered
            return None, ToolCall(cid, tools[1]["function"]["name"], {"not_a_config_key": "x"})
        if r < 0.5 and len(tools) > 1:
            return None, ToolCall(cid, tools[1]["function"]["name"], self._args(rng, tools[1], known))
        if r < 0.62:
            tool = tools[rng.randrange(len(tools))]
            if tool is tools[0]:
                tool = tools[-1]
            text = "reasoning first" if rng.random() < 0.3 else None
            return text, ToolCall(cid, tool["function"]["name"], self._args(rng, tool, known))
        if r < 0.66:
            return None, ToolCall(cid, "no_such_tool", {})
        if r < 0.76:
            if rng.random() < 0.05:
                return "[1, 2]", None  # a JSON value that is not an object crashes theirs: keep it rare
            return rng.choice(
                [
                    "plain prose",
                    '{"thoughts": "t"}',
                    '{"thoughts": "a", "message": "b", "interaction_status": "maybe"}',
                ]
            ), None
        if r < 0.9:
            return json.dumps({"thoughts": "t", "message": "m", "interaction_status": "continue"}), None
        if r < 0.96:
            return "prefix " + json.dumps(
                {"thoughts": "t", "message": "m", "interaction_status": "terminate"}
            ), None
        return None, None

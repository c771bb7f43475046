"""Tool calling: OpenAI-style tool schemas in, text or parsed tool calls out, on every backend.

Messages follow the OpenAI chat format, extended with tool turns:

- ``{"role": "system" | "user", "content": str}``;
- ``{"role": "assistant", "content": str, "tool_calls": [{"id", "type": "function",
  "function": {"name", "arguments"}}]}`` (``arguments`` a dict, or its JSON text as OpenAI sends it);
- ``{"role": "tool", "tool_call_id": str, "name": str, "content": str}``.

Local models whose chat template has no tool format (the embedded SmolLM2 has none) get the
*prompt format* used by Hermes/Qwen-style templates: the tools are listed as JSON schemas in the
system message, and the model writes each call as
``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``; tool results go back as user turns
wrapped in ``<tool_response>...</tool_response>``. A call that cannot be parsed is kept as a
:class:`ToolParseError` with the raw text, never dropped.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ._base import Generation, GenerationConfig

if TYPE_CHECKING:
    from ._base import LanguageModel

TOOL_CALL_OPEN = "<tool_call>"
TOOL_CALL_CLOSE = "</tool_call>"
TOOL_CHOICES = ("auto", "none", "required")
_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


class RenderedChat(str):
    """Text already rendered by a chat template (it holds its own special tokens): local backends
    encode it without adding any."""


@dataclass(frozen=True)
class ToolCall:
    """One call a model asked for: the tool's ``name``, its ``arguments`` (parsed JSON) and an ``id``
    that the tool's result must quote (``tool_call_id``)."""

    id: str
    name: str
    arguments: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        """The OpenAI message form, with ``arguments`` as a dict (JSON text on the wire)."""
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ToolCall:
        fn = d.get("function", d)
        args = fn.get("arguments", {})
        if isinstance(args, str):
            args = json.loads(args) if args.strip() else {}
        return cls(id=str(d["id"]), name=str(fn["name"]), arguments=args)


@dataclass(frozen=True)
class ToolParseError:
    """A tool call the model tried to make but that could not be parsed: the ``raw`` text and why."""

    raw: str
    error: str

    def to_dict(self) -> dict[str, str]:
        return {"raw": self.raw, "error": self.error}


@dataclass
class ChatResponse:
    """A model's reply to a chat with tools: its ``text`` (tool-call markup removed), the parsed
    ``tool_calls``, the calls that failed to parse (``parse_errors``), and the raw ``generation``
    (whose ``text`` is exactly what the model emitted)."""

    text: str
    tool_calls: list[ToolCall] = field(default_factory=list)
    parse_errors: list[ToolParseError] = field(default_factory=list)
    generation: Generation = field(default_factory=lambda: Generation(text=""))

    @property
    def finish_reason(self) -> str:
        return "tool_calls" if self.tool_calls else self.generation.finish_reason

    def message(self) -> dict[str, Any]:
        """The assistant message to append to the conversation."""
        msg: dict[str, Any] = {"role": "assistant", "content": self.text}
        if self.tool_calls:
            msg["tool_calls"] = [c.to_dict() for c in self.tool_calls]
        return msg

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "tool_calls": [c.to_dict() for c in self.tool_calls],
            "parse_errors": [e.to_dict() for e in self.parse_errors],
            "generation": self.generation.to_dict(),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ChatResponse:
        return cls(
            text=d["text"],
            tool_calls=[ToolCall.from_dict(c) for c in d.get("tool_calls", [])],
            parse_errors=[ToolParseError(**e) for e in d.get("parse_errors", [])],
            generation=Generation.from_dict(d.get("generation", {"text": d["text"]})),
        )


# ---------------------------------------------------------------------- validation
def check_tools(tools: Any, name: str = "tools") -> list[dict[str, Any]]:
    """Validate tool schemas; return them in the OpenAI form ``{"type": "function", "function":
    {"name", "description", "parameters"}}``. A bare ``{"name", "description", "parameters"}`` dict
    is accepted too. Names must be unique."""
    if tools is None:
        return []
    if isinstance(tools, dict) or not isinstance(tools, list | tuple):
        raise ValueError(f"{name} must be a list of tool schemas, got {type(tools).__name__}")
    out, seen = [], set()
    for i, t in enumerate(tools):
        if not isinstance(t, dict):
            raise ValueError(f"{name}[{i}] must be a dict (an OpenAI-style tool schema), got {t!r}")
        fn = t.get("function", t) if t.get("type", "function") == "function" else None
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str) or not _NAME.match(fn["name"]):
            raise ValueError(
                f"{name}[{i}] must be {{'type': 'function', 'function': {{'name': ..., 'parameters': ...}}}} "
                "with a name of 1-64 letters, digits, '_', '.' or '-'"
            )
        params = fn.get("parameters", {"type": "object", "properties": {}})
        if not isinstance(params, dict) or params.get("type", "object") != "object":
            raise ValueError(f"{name}[{i}]['function']['parameters'] must be a JSON schema of type 'object'")
        if fn["name"] in seen:
            raise ValueError(f"{name} has two tools named {fn['name']!r}")
        seen.add(fn["name"])
        out.append(
            {
                "type": "function",
                "function": {
                    "name": fn["name"],
                    "description": str(fn.get("description") or ""),
                    "parameters": params,
                },
            }
        )
    return out


def check_tool_choice(tool_choice: Any, tools: list[dict[str, Any]]) -> str | dict[str, Any]:
    """``"auto"``, ``"none"``, ``"required"`` or ``{"type": "function", "function": {"name": ...}}``
    naming one of ``tools``."""
    if isinstance(tool_choice, str):
        if tool_choice not in TOOL_CHOICES:
            raise ValueError(
                f"tool_choice must be one of {TOOL_CHOICES} or a function choice, got {tool_choice!r}"
            )
        return tool_choice
    if isinstance(tool_choice, dict):
        fname = (tool_choice.get("function") or {}).get("name")
        if fname not in {t["function"]["name"] for t in tools}:
            raise ValueError(f"tool_choice names {fname!r}, which is not among the tools")
        return {"type": "function", "function": {"name": fname}}
    raise ValueError(f"tool_choice must be a string or a dict, got {type(tool_choice).__name__}")


def check_messages(messages: Any, name: str = "messages") -> list[dict[str, Any]]:
    """Validate a chat that may hold tool turns; return a normalised copy (call arguments as dicts)."""
    if not isinstance(messages, list | tuple) or not messages:
        raise ValueError(f"{name} must be a non-empty list of chat messages")
    out: list[dict[str, Any]] = []
    for i, m in enumerate(messages):
        where = f"{name}[{i}]"
        if not isinstance(m, dict) or "role" not in m:
            raise ValueError(f"{where} must be a dict with a 'role', got {m!r}")
        role = m["role"]
        content = m.get("content")
        if content is None and role == "assistant":
            content = ""
        if not isinstance(content, str):
            raise ValueError(f"{where}['content'] must be a string")
        if role in ("system", "user"):
            out.append({"role": role, "content": content})
        elif role == "assistant":
            msg: dict[str, Any] = {"role": "assistant", "content": content}
            if m.get("tool_calls"):
                try:
                    calls = [ToolCall.from_dict(c) for c in m["tool_calls"]]
                except (KeyError, TypeError, AttributeError, json.JSONDecodeError) as exc:
                    raise ValueError(f"{where}['tool_calls'] is malformed: {exc}") from None
                if any(not isinstance(c.arguments, dict) for c in calls):
                    raise ValueError(f"{where}['tool_calls']: arguments must be JSON objects")
                msg["tool_calls"] = [c.to_dict() for c in calls]
            out.append(msg)
        elif role == "tool":
            if not isinstance(m.get("tool_call_id"), str):
                raise ValueError(f"{where} (a tool result) needs a string 'tool_call_id'")
            out.append(
                {
                    "role": "tool",
                    "tool_call_id": m["tool_call_id"],
                    "name": str(m.get("name", "")),
                    "content": content,
                }
            )
        else:
            raise ValueError(f"{where}['role'] must be system, user, assistant or tool, got {role!r}")
    return out


# ---------------------------------------------------------------------- prompt format
def tools_system_prompt(tools: list[dict[str, Any]], tool_choice: str | dict[str, Any] = "auto") -> str:
    """The system-message text that offers ``tools`` to a model without a native tool format."""
    lines = [
        "You may call functions to help with the user's request. The available functions are listed "
        "as JSON schemas inside <tools></tools>:",
        "<tools>",
        *(json.dumps(t, ensure_ascii=False) for t in tools),
        "</tools>",
        "To call a function, write a JSON object with its name and arguments inside "
        '<tool_call></tool_call> tags, e.g. <tool_call>{"name": "function_name", "arguments": '
        '{"arg": "value"}}</tool_call>. You may make several calls. When you need no function, '
        "answer directly without tags.",
    ]
    if tool_choice == "required":
        lines.append("You must call at least one function.")
    elif isinstance(tool_choice, dict):
        lines.append(f"You must call the function {tool_choice['function']['name']}.")
    return "\n".join(lines)


def to_prompt_format(
    messages: list[dict[str, Any]], tools: list[dict[str, Any]], tool_choice: str | dict[str, Any] = "auto"
) -> list[dict[str, str]]:
    """Rewrite a chat with tool turns into plain ``system``/``user``/``assistant`` messages: the tool
    list joins the system message, calls become ``<tool_call>`` text, results ``<tool_response>`` user
    turns (consecutive results share one turn)."""
    out: list[dict[str, str]] = []
    offer = bool(tools) and tool_choice != "none"
    if offer:
        head = tools_system_prompt(tools, tool_choice)
        if messages[0]["role"] == "system":
            out.append({"role": "system", "content": messages[0]["content"] + "\n\n" + head})
            messages = messages[1:]
        else:
            out.append({"role": "system", "content": head})
    for m in messages:
        if m["role"] == "assistant":
            parts = [m["content"]] if m["content"] else []
            for c in m.get("tool_calls", []):
                fn = c["function"]
                call = json.dumps({"name": fn["name"], "arguments": fn["arguments"]}, ensure_ascii=False)
                parts.append(f"{TOOL_CALL_OPEN}{call}{TOOL_CALL_CLOSE}")
            out.append({"role": "assistant", "content": "\n".join(parts)})
        elif m["role"] == "tool":
            block = f"<tool_response>\n{m['content']}\n</tool_response>"
            if out and out[-1]["role"] == "user" and out[-1]["content"].startswith("<tool_response>"):
                out[-1] = {"role": "user", "content": out[-1]["content"] + "\n" + block}
            else:
                out.append({"role": "user", "content": block})
        else:
            out.append({"role": m["role"], "content": m["content"]})
    return out


def _call_id(raw: str, index: int) -> str:
    """A deterministic call id (the same output always gets the same ids)."""
    return f"call_{hashlib.sha256(raw.encode()).hexdigest()[:10]}_{index}"


def _as_call(obj: Any, raw: str, index: int, full_text: str) -> ToolCall | ToolParseError:
    if not isinstance(obj, dict):
        return ToolParseError(raw, "a tool call must be a JSON object with 'name' and 'arguments'")
    name = obj.get("name")
    args = obj.get("arguments", obj.get("parameters", {}))
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except json.JSONDecodeError as exc:
            return ToolParseError(raw, f"'arguments' is a string that is not JSON: {exc}")
    if not isinstance(name, str) or not name:
        return ToolParseError(raw, "the tool call has no string 'name'")
    if not isinstance(args, dict):
        return ToolParseError(raw, "'arguments' must be a JSON object")
    return ToolCall(id=_call_id(full_text, index), name=name, arguments=args)


def parse_tool_calls(
    text: str, *, bare_json: bool = False
) -> tuple[str, list[ToolCall], list[ToolParseError]]:
    """Split a model output into (text without call markup, parsed calls, unparseable calls).

    Calls are ``<tool_call>{...}</tool_call>`` blocks; an opening tag without a closing one (the output
    was cut) is an unparseable call. With ``bare_json=True`` an output that is one JSON object with a
    ``name`` and ``arguments``/``parameters`` (the Llama 3.1 template's format) is a call too.
    """
    calls: list[ToolCall] = []
    errors: list[ToolParseError] = []
    kept: list[str] = []
    pos = 0
    while True:
        start = text.find(TOOL_CALL_OPEN, pos)
        if start < 0:
            kept.append(text[pos:])
            break
        kept.append(text[pos:start])
        end = text.find(TOOL_CALL_CLOSE, start)
        if end < 0:
            errors.append(ToolParseError(text[start:], "a <tool_call> tag is never closed"))
            break
        raw = text[start + len(TOOL_CALL_OPEN) : end].strip()
        try:
            got = _as_call(json.loads(raw), text[start : end + len(TOOL_CALL_CLOSE)], len(calls), text)
        except json.JSONDecodeError as exc:
            got = ToolParseError(text[start : end + len(TOOL_CALL_CLOSE)], f"not valid JSON: {exc}")
        (calls if isinstance(got, ToolCall) else errors).append(got)
        pos = end + len(TOOL_CALL_CLOSE)
    rest = "".join(kept).strip()
    if bare_json and not calls and not errors and rest.startswith("{") and rest.endswith("}"):
        try:
            obj = json.loads(rest)
        except json.JSONDecodeError:
            obj = None
        if isinstance(obj, dict) and "name" in obj and ("arguments" in obj or "parameters" in obj):
            got = _as_call(obj, rest, 0, text)
            (calls if isinstance(got, ToolCall) else errors).append(got)
            rest = ""
    return rest, calls, errors


def chat_via_prompt(
    model: LanguageModel,
    messages: Any,
    tools: Any = None,
    config: GenerationConfig | None = None,
    tool_choice: Any = "auto",
) -> ChatResponse:
    """Chat with tools through the prompt format (any model with ``generate``)."""
    msgs = check_messages(messages)
    schemas = check_tools(tools)
    choice = check_tool_choice(tool_choice, schemas)
    gen = model.generate([to_prompt_format(msgs, schemas, choice)], config or GenerationConfig())[0]
    return response_from_text(gen, parse=bool(schemas) and choice != "none")


def response_from_text(gen: Generation, *, parse: bool = True, bare_json: bool = False) -> ChatResponse:
    """A :class:`ChatResponse` from raw generated text (calls parsed from ``<tool_call>`` blocks)."""
    if not parse:
        return ChatResponse(text=gen.text, generation=gen)
    text, calls, errors = parse_tool_calls(gen.text, bare_json=bare_json)
    return ChatResponse(text=text, tool_calls=calls, parse_errors=errors, generation=gen)


def to_openai_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages as the OpenAI protocol sends them: call ``arguments`` as JSON text."""
    out = []
    for m in messages:
        if m.get("tool_calls"):
            calls = [
                {
                    "id": c["id"],
                    "type": "function",
                    "function": {
                        "name": c["function"]["name"],
                        "arguments": json.dumps(c["function"]["arguments"], ensure_ascii=False),
                    },
                }
                for c in m["tool_calls"]
            ]
            m = {**m, "tool_calls": calls}
        out.append(m)
    return out


def response_from_openai(message: dict[str, Any], gen: Generation) -> ChatResponse:
    """A :class:`ChatResponse` from an OpenAI ``choices[i].message``: its ``tool_calls`` are parsed
    (arguments that are not a JSON object become parse errors); a reply with no ``tool_calls`` but
    ``<tool_call>`` blocks in its text (a server without a tool parser) is parsed with the prompt
    format."""
    calls: list[ToolCall] = []
    errors: list[ToolParseError] = []
    for i, c in enumerate(message.get("tool_calls") or []):
        fn = c.get("function") or {}
        raw = json.dumps(c, ensure_ascii=False)
        args = fn.get("arguments", "{}")
        try:
            args = json.loads(args) if isinstance(args, str) else args
        except json.JSONDecodeError as exc:
            errors.append(ToolParseError(raw, f"arguments are not valid JSON: {exc}"))
            continue
        if not isinstance(fn.get("name"), str) or not isinstance(args, dict):
            errors.append(ToolParseError(raw, "a tool call needs a string name and JSON-object arguments"))
            continue
        calls.append(ToolCall(id=str(c.get("id") or _call_id(raw, i)), name=fn["name"], arguments=args))
    if calls or errors:
        return ChatResponse(text=gen.text, tool_calls=calls, parse_errors=errors, generation=gen)
    return response_from_text(gen, parse=TOOL_CALL_OPEN in gen.text)

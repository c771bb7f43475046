"""Tools for agents: plain Python callables and MCP servers started over stdio, behind one interface.

A tool call never raises into the agent loop: a bad argument, an exception, a time-out or a dead
server becomes an error result the model sees (and the log keeps). Results longer than the cap are
cut with a marker.
"""

from __future__ import annotations

import functools
import inspect
import json
import os
import tempfile
import threading
import time
import typing
from collections.abc import Callable, Sequence
from contextlib import ExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..models._tools import check_tools

#: Appended to a tool result (or judge input) that was cut to its size cap.
TRUNCATION_MARKER = "[... {n} characters cut by iclr26: over the {cap}-character cap]"

_JSON_TYPES = {int: "integer", float: "number", str: "string", bool: "boolean", list: "array", dict: "object"}


def cap_text(text: str, cap: int) -> tuple[str, int]:
    """Cut ``text`` to ``cap`` characters plus a marker saying how many were cut; return the text
    and the number of characters removed (0 when it fitted)."""
    if len(text) <= cap:
        return text, 0
    return text[:cap] + "\n" + TRUNCATION_MARKER.format(n=len(text) - cap, cap=cap), len(text) - cap


@dataclass
class ToolResult:
    """What a tool call returned: its text ``content`` (after the size cap), whether it is an error,
    how long it took, and how many characters the cap removed."""

    content: str
    is_error: bool = False
    seconds: float = 0.0
    truncated: int = 0


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


class FunctionTool:
    """A plain Python callable offered to a model as a tool.

    Parameters
    ----------
    fn: the callable; the model's arguments are passed as keywords; its return value is sent back
        as text (strings as they are, anything else as JSON).
    name, description: default to the function's name and the first paragraph of its docstring.
    parameters: the JSON schema of the arguments (default: built from the signature's annotations;
        ``int``, ``float``, ``str``, ``bool``, ``list``, ``dict``, anything else unconstrained).

    The call runs in a worker thread so a time-out can be enforced; a Python thread cannot be
    killed, so a callable that never returns keeps its thread until the process exits.
    """

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        parameters: dict[str, Any] | None = None,
    ):
        if not callable(fn):
            raise ValueError(f"fn must be callable, got {type(fn).__name__}")
        self.fn = fn
        self.name = name or getattr(fn, "__name__", "")
        doc = inspect.getdoc(fn) or ""
        self.description = description if description is not None else doc.split("\n\n")[0].strip()
        self.parameters = parameters if parameters is not None else _signature_schema(fn)
        self.schema = check_tools(
            [{"name": self.name, "description": self.description, "parameters": self.parameters}]
        )[0]

    def identity(self) -> dict[str, Any]:
        """What identifies this tool in episode keys: its schema and the callable's qualified name."""
        qual = f"{getattr(self.fn, '__module__', '')}.{getattr(self.fn, '__qualname__', self.name)}"
        return {"function": qual, "schema": self.schema}

    def call(self, arguments: dict[str, Any], timeout: float) -> ToolResult:
        box: dict[str, Any] = {}

        def run() -> None:
            try:
                box["value"] = self.fn(**arguments)
            except BaseException as exc:  # reported to the model, never raised into the loop
                box["error"] = exc

        t0 = time.perf_counter()
        worker = threading.Thread(target=run, name=f"iclr26-tool-{self.name}", daemon=True)
        worker.start()
        worker.join(timeout)
        seconds = time.perf_counter() - t0
        if worker.is_alive():
            return ToolResult(f"error: tool {self.name!r} timed out after {timeout:.3g} s", True, seconds)
        if "error" in box:
            exc = box["error"]
            return ToolResult(f"error: {type(exc).__name__}: {exc}", True, seconds)
        return ToolResult(_as_text(box.get("value")), False, seconds)


def _signature_schema(fn: Callable[..., Any]) -> dict[str, Any]:
    try:
        hints = typing.get_type_hints(fn)
    except Exception:  # unresolvable annotations: leave the arguments unconstrained
        hints = {}
    props: dict[str, Any] = {}
    required = []
    for p in inspect.signature(fn).parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        ann = typing.get_origin(hints.get(p.name)) or hints.get(p.name)
        props[p.name] = {"type": _JSON_TYPES[ann]} if ann in _JSON_TYPES else {}
        if p.default is p.empty:
            required.append(p.name)
    return {"type": "object", "properties": props, "required": required}


class MCPStdioServer:
    """Tools served by an MCP server started as a subprocess over stdio (official ``mcp`` SDK, 2.x).

    Each episode starts its own server (fresh state) and closes it when the episode ends, even on
    error: stdin is closed, then the process tree is terminated and killed by the SDK if it lingers.

    Parameters
    ----------
    command, args: the program and its arguments, e.g. ``sys.executable, ["server.py"]``.
    env: extra environment variables for the server. The server sees only these and the SDK's safe
        defaults (``HOME``, ``PATH``, ``USER``, ...): secrets in our environment are not passed on
        unless named here. Only the variable *names* enter episode keys and logs.
    cwd: the server's working directory.
    startup_timeout: seconds allowed for starting, the handshake and listing tools.
    prefix: prepended to the names of this server's tools as the model sees them (e.g. ``"mail."``),
        so two servers may offer tools of the same name; calls are routed back to the server's names.
    """

    def __init__(
        self,
        command: str,
        args: Sequence[str] = (),
        *,
        env: dict[str, str] | None = None,
        cwd: str | os.PathLike | None = None,
        startup_timeout: float = 60.0,
        prefix: str = "",
    ):
        if not isinstance(command, str) or not command:
            raise ValueError("command must be a non-empty string")
        if isinstance(args, str) or not all(isinstance(a, str | os.PathLike) for a in args):
            raise ValueError("args must be a sequence of strings")
        if env is not None and not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
            raise ValueError("env must map strings to strings")
        if not startup_timeout > 0:
            raise ValueError(f"startup_timeout must be > 0, got {startup_timeout!r}")
        self.command = command
        self.args = [str(a) for a in args]
        self.env = dict(env or {})
        self.cwd = cwd
        self.startup_timeout = float(startup_timeout)
        if not isinstance(prefix, str):
            raise ValueError(f"prefix must be a string, got {type(prefix).__name__}")
        self.prefix = prefix

    def identity(self) -> dict[str, Any]:
        return {
            "mcp_stdio": self.command,
            "args": self.args,
            "env_names": sorted(self.env),
            "prefix": self.prefix,
        }

    def open(self) -> _MCPConnection:
        return _MCPConnection(self)


class _MCPConnection:
    """A running MCP server and its client session, driven from synchronous code through an anyio
    portal (an event loop in a helper thread)."""

    def __init__(self, server: MCPStdioServer):
        self.server = server
        self.schemas: list[dict[str, Any]] = []
        self._stack = ExitStack()

    def __enter__(self) -> _MCPConnection:
        from anyio.from_thread import start_blocking_portal

        try:
            self._errlog = self._stack.enter_context(tempfile.TemporaryFile("w+", encoding="utf-8"))
            self._portal = self._stack.enter_context(start_blocking_portal())
            self._session = self._stack.enter_context(
                self._portal.wrap_async_context_manager(self._connect())
            )
            listed = self._portal.call(self._list_tools)
            self.schemas = check_tools(
                [
                    {
                        "name": t.name,
                        "description": t.description or "",
                        "parameters": t.input_schema or {"type": "object"},
                    }
                    for t in listed
                ],
                name="the tools it listed",
            )
        except Exception as exc:
            tail = self._stderr_tail()
            self._close()
            where = " ".join([self.server.command, *self.server.args])
            raise RuntimeError(
                f"MCP server {where!r} could not start or list its tools ({type(exc).__name__}: {exc})"
                + (f"; its stderr ends with:\n{tail}" if tail else "")
            ) from exc
        except BaseException:
            self._close()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self._close()

    def _close(self) -> None:
        try:
            self._stack.close()
        except Exception:  # a crashed server can make the transport's shutdown complain; it is closed
            pass

    def _stderr_tail(self, n: int = 2000) -> str:
        """The end of what the server wrote to stderr so far."""
        try:
            self._errlog.seek(0)
            return self._errlog.read()[-n:].strip()
        except (AttributeError, OSError, ValueError):
            return ""

    @asynccontextmanager
    async def _connect(self):
        import anyio
        from mcp import ClientSession, StdioServerParameters, stdio_client

        params = StdioServerParameters(
            command=self.server.command,
            args=self.server.args,
            env=self.server.env or None,
            cwd=self.server.cwd,
        )
        async with stdio_client(params, errlog=self._errlog) as (read, write):
            async with ClientSession(read, write) as session:
                with anyio.fail_after(self.server.startup_timeout):
                    await session.initialize()
                yield session

    async def _list_tools(self):
        import anyio
        from mcp.types import PaginatedRequestParams

        tools, cursor = [], None
        with anyio.fail_after(self.server.startup_timeout):
            while True:
                page = await self._session.list_tools(
                    params=PaginatedRequestParams(cursor=cursor) if cursor else None
                )
                tools.extend(page.tools)
                cursor = page.next_cursor
                if not cursor:
                    return tools

    def call(self, name: str, arguments: dict[str, Any], timeout: float) -> ToolResult:
        t0 = time.perf_counter()
        try:
            res = self._portal.call(
                functools.partial(self._session.call_tool, name, arguments, read_timeout_seconds=timeout)
            )
        except Exception as exc:  # time-out, dead server, protocol error: the model is told
            msg = str(exc) or type(exc).__name__
            return ToolResult(f"error: MCP tool {name!r}: {msg}", True, time.perf_counter() - t0)
        parts = []
        for block in res.content:
            text = getattr(block, "text", None)
            parts.append(text if isinstance(text, str) else f"[{getattr(block, 'type', 'content')} content]")
        if not parts and res.structured_content is not None:
            parts.append(_as_text(res.structured_content))
        return ToolResult("\n".join(parts), bool(res.is_error), time.perf_counter() - t0)


def toy_mcp_server(
    *, tools: Sequence[str] | None = None, pid_file: str | os.PathLike | None = None, prefix: str = ""
) -> MCPStdioServer:
    """Our toy MCP server (:mod:`iclr26.evaluation.toy_mcp_server`) over stdio, in this Python.

    ``tools`` serves only the named tools (default: all); ``pid_file`` makes each server append its
    process id to that file; ``prefix`` as in :class:`MCPStdioServer`."""
    import sys

    args = [str(Path(__file__).with_name("toy_mcp_server.py"))]
    if tools is not None:
        if isinstance(tools, str) or not tools or not all(isinstance(t, str) and t for t in tools):
            raise ValueError("tools must be a non-empty sequence of tool names")
        args += ["--tools", ",".join(tools)]
    env = {"ICLR26_TOY_MCP_PIDS": str(pid_file)} if pid_file is not None else None
    return MCPStdioServer(sys.executable, args, env=env, prefix=prefix)


class Toolbox:
    """The tools of one episode: function tools and MCP servers (started on enter, closed on exit)."""

    def __init__(self, tools: Sequence[Any]):
        self.specs: list[FunctionTool | MCPStdioServer] = []
        for i, t in enumerate(tools):
            if isinstance(t, FunctionTool | MCPStdioServer):
                self.specs.append(t)
            elif callable(t):
                self.specs.append(FunctionTool(t))
            else:
                raise ValueError(
                    f"tools[{i}] must be a callable, a FunctionTool or an MCPStdioServer, "
                    f"got {type(t).__name__}"
                )
        self.schemas: list[dict[str, Any]] = []
        self._route: dict[str, Any] = {}
        self._stack = ExitStack()

    def identity(self) -> list[dict[str, Any]]:
        return [t.identity() for t in self.specs]

    def __enter__(self) -> Toolbox:
        try:
            for spec in self.specs:
                if isinstance(spec, MCPStdioServer):
                    conn = self._stack.enter_context(spec.open())
                    entries = [(s, conn, spec.prefix) for s in conn.schemas]
                else:
                    entries = [(spec.schema, spec, "")]
                for schema, handler, prefix in entries:
                    original = schema["function"]["name"]
                    name = prefix + original
                    if name in self._route:
                        raise ValueError(
                            f"two tools are named {name!r} "
                            "(give an MCPStdioServer a prefix to tell them apart)"
                        )
                    self._route[name] = (handler, original)
                    self.schemas.append(
                        check_tools([{**schema["function"], "name": name}])[0] if prefix else schema
                    )
        except BaseException:
            self._stack.close()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self._stack.close()

    def call(self, name: str, arguments: dict[str, Any], timeout: float, cap: int) -> ToolResult:
        """Run one call; never raises. The result's content is capped at ``cap`` characters."""
        handler, original = self._route.get(name, (None, name))
        if handler is None:
            res = ToolResult(f"error: there is no tool named {name!r}", True)
        elif isinstance(handler, _MCPConnection):
            res = handler.call(original, arguments, timeout)
        else:
            res = handler.call(arguments, timeout)
        res.content, res.truncated = cap_text(res.content, cap)
        return res

"""Our offline MCP servers for MSB, one process per server, spoken to over stdio (``mcp`` 2.x).

``python -m iclr26.msb._server fs``: the filesystem tools of
``@modelcontextprotocol/server-filesystem`` (same tool names and parameter names), confined to the
configured roots (an instance's workspace).
``python -m iclr26.msb._server proc``: process control in the manner of Desktop Commander
(``read_file``, ``write_file``, ``list_processes``, ``kill_process``); only the configured pid (the
sleeper the harness spawned) may be listed or killed.
``python -m iclr26.msb._server tool TOOL VARIANT``: the task tool ``TOOL`` in ``VARIANT``
(:func:`iclr26.msb._spec.task_tools`); name-overlap and preference-manipulation tools answer with
the configured payload, as the authors' attack servers do.

Every server also has the hidden tool ``_configure(config)`` (JSON: ``roots``, ``pid``,
``payload``) that the harness calls before each instance, so one process serves many instances;
the harness never shows it to the agent.
"""

from __future__ import annotations

import fnmatch
import inspect
import json
import os
import signal
import sys
import time
from pathlib import Path

from mcp.server.mcpserver import MCPServer

from iclr26.msb._spec import CONFIGURE, ToolSpec, task_tools

STATE: dict = {"roots": [], "pid": -1, "payload": ""}


def configure(config: str) -> str:
    """Set this server's per-instance state (harness only)."""
    new = json.loads(config)
    STATE.update(
        roots=[Path(r).resolve() for r in new.get("roots", [])],
        pid=int(new.get("pid", -1)),
        payload=str(new.get("payload", "")),
    )
    return "configured"


class Confined:
    """Path checks: every path must resolve inside one of the configured roots."""

    @property
    def roots(self) -> list[Path]:
        return STATE["roots"]

    def __call__(self, path: str) -> Path:
        if not self.roots:
            raise ValueError("no allowed directories are configured")
        p = Path(path).expanduser()
        p = (p if p.is_absolute() else self.roots[0] / p).resolve()
        if not any(p == r or r in p.parents for r in self.roots):
            raise ValueError(f"Access denied - path outside allowed directories: {path}")
        return p


def fs_tools(check: Confined) -> list:
    def read_text_file(path: str, head: int | None = None, tail: int | None = None) -> str:
        """Read the complete contents of a file from the file system as text."""
        lines = check(path).read_text(encoding="utf-8").splitlines()
        lines = lines[:head] if head else lines[-tail:] if tail else lines
        return "\n".join(lines)

    def read_file(path: str, head: int | None = None, tail: int | None = None) -> str:
        """Read the complete contents of a file as text. DEPRECATED: Use read_text_file instead."""
        return read_text_file(path, head, tail)

    def read_media_file(path: str) -> str:
        """Read an image or audio file."""
        raise ValueError(f"not a media file: {path}")

    def read_multiple_files(paths: list[str]) -> str:
        """Read the contents of multiple files simultaneously."""
        return "\n---\n".join(f"{p}:\n{read_text_file(p)}" for p in paths)

    def write_file(path: str, content: str) -> str:
        """Create a new file or completely overwrite an existing file with new content."""
        check(path).write_text(content, encoding="utf-8")
        return f"Successfully wrote to {path}"

    def edit_file(path: str, edits: list[dict], dryRun: bool = False) -> str:  # noqa: N803 (their name)
        """Make line-based edits to a text file: each edit replaces exact oldText with newText."""
        p = check(path)
        text = p.read_text(encoding="utf-8")
        for e in edits:
            if e.get("oldText", "") not in text:
                raise ValueError(f"Could not find exact match for edit:\n{e.get('oldText')}")
            text = text.replace(e["oldText"], e.get("newText", ""), 1)
        if not dryRun:
            p.write_text(text, encoding="utf-8")
        return f"Successfully edited {path}"

    def create_directory(path: str) -> str:
        """Create a new directory or ensure a directory exists."""
        check(path).mkdir(parents=True, exist_ok=True)
        return f"Successfully created directory {path}"

    def list_directory(path: str) -> str:
        """Get a detailed listing of all files and directories in a specified path."""
        return "\n".join(
            f"{'[DIR]' if c.is_dir() else '[FILE]'} {c.name}" for c in sorted(check(path).iterdir())
        )

    def list_directory_with_sizes(path: str, sortBy: str = "name") -> str:  # noqa: N803
        """Get a detailed listing of all files and directories in a specified path, with sizes."""
        return "\n".join(f"{c.name} {c.stat().st_size}" for c in sorted(check(path).iterdir()))

    def directory_tree(path: str, excludePatterns: list[str] | None = None) -> str:  # noqa: N803
        """Get a recursive tree view of files and directories."""
        root = check(path)
        return "\n".join(str(c.relative_to(root)) for c in _walk(root, excludePatterns))

    def move_file(source: str, destination: str) -> str:
        """Move or rename files and directories."""
        check(source).rename(check(destination))
        return f"Successfully moved {source} to {destination}"

    def search_files(path: str, pattern: str, excludePatterns: list[str] | None = None) -> str:  # noqa: N803
        """Recursively search for files and directories whose name matches a pattern."""
        hits = [str(c) for c in _walk(check(path), excludePatterns) if pattern.lower() in c.name.lower()]
        return "\n".join(hits) or "No matches found"

    def get_file_info(path: str) -> str:
        """Retrieve detailed metadata about a file or directory."""
        st = check(path).stat()
        return f"size: {st.st_size}\nisDirectory: {check(path).is_dir()}"

    def list_allowed_directories() -> str:
        """Returns the list of directories that this server is allowed to access."""
        return "Allowed directories:\n" + "\n".join(str(r) for r in check.roots)

    return [
        read_file, read_text_file, read_media_file, read_multiple_files, write_file, edit_file,
        create_directory, list_directory, list_directory_with_sizes, directory_tree, move_file,
        search_files, get_file_info, list_allowed_directories,
    ]  # fmt: skip


def _walk(root: Path, exclude: list[str] | None) -> list[Path]:
    """Everything under ``root``, sorted, without the entries (and what is under them) whose path
    relative to ``root``, or whose name, matches a glob of ``exclude``."""

    def excluded(rel: Path) -> bool:
        return any(fnmatch.fnmatch(str(rel), p) or fnmatch.fnmatch(rel.name, p) for p in exclude or ())

    return [c for c in sorted(root.rglob("*")) if not any(map(excluded, _prefixes(c.relative_to(root))))]


def _prefixes(rel: Path) -> list[Path]:
    """``a``, ``a/b``, ``a/b/c`` for ``a/b/c``: an excluded folder hides its contents."""
    return [Path(*rel.parts[: i + 1]) for i in range(len(rel.parts))]


def spec_tool(spec: ToolSpec, answers_payload: bool):
    """A callable for ``spec`` whose signature is the spec's string parameters."""

    def tool(**kwargs: str) -> str:
        if answers_payload:
            return STATE["payload"]
        return spec.reply.format(**{k: kwargs.get(k, "") for k in ("text", "query")})

    tool.__signature__ = inspect.Signature(
        [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, annotation=str) for n, _ in spec.params]
    )
    tool.__annotations__ = {n: str for n, _ in spec.params} | {"return": str}
    return tool


def build(argv: list[str]) -> MCPServer:
    """The server for ``argv`` (``fs``, ``proc`` or ``tool TOOL VARIANT``), its hidden tool included."""
    role, *rest = argv
    server = MCPServer(f"iclr26-msb-{role}", log_level="CRITICAL")
    if role == "fs":
        for f in fs_tools(Confined()):
            server.add_tool(f)
    elif role == "proc":
        fs = {f.__name__: f for f in fs_tools(Confined())}
        for f in (fs["read_file"], fs["write_file"], list_processes, kill_process):
            server.add_tool(f)
    elif role == "tool":
        tool, variant = rest
        answers_payload = variant in ("name_overlap", "preference_manipulation")
        for spec in task_tools(tool, variant):
            server.add_tool(spec_tool(spec, answers_payload), spec.name, description=spec.docstring)
    else:
        raise SystemExit(f"unknown role {role!r}; choose fs, proc or tool")
    server.add_tool(configure, CONFIGURE)
    return server


def list_processes() -> str:
    """List running processes (only the one this benchmark may touch)."""
    pid = STATE["pid"]
    return f"PID: {pid}, command: sleeper" if pid > 0 and Path(f"/proc/{pid}").exists() else "No processes"


def kill_process(pid: int) -> str:
    """Terminate a running process by PID."""
    allowed = STATE["pid"]
    if allowed <= 0 or int(pid) != allowed:
        raise ValueError(f"process {pid} may not be touched (only the benchmark's sleeper)")
    os.kill(allowed, signal.SIGTERM)
    for _ in range(200):  # return once it has terminated (gone, or a zombie awaiting its parent)
        try:
            if Path(f"/proc/{allowed}/stat").read_text().split(") ", 1)[1][:1] in "ZX":
                break
        except (OSError, IndexError):
            break
        time.sleep(0.005)
    return f"Successfully terminated process {allowed}"


if __name__ == "__main__":
    build(sys.argv[1:]).run("stdio")

"""A small MCP server of ours, for tests and examples: a few useful tools and three that misbehave.

Run over stdio: ``python path/to/toy_mcp_server.py [--tools add,capital]`` (it imports only ``mcp``,
so it runs without ``iclr26`` on the path; ``--tools`` serves only the named tools);
:func:`iclr26.evaluation.agent.toy_mcp_server` builds the matching
:class:`~iclr26.evaluation.agent.MCPStdioServer`.

Tools: ``add(a, b)``, ``capital(country)``, ``slow(seconds)`` (sleeps), ``fail()`` (raises: an error
result), ``crash()`` (kills the server process), ``huge(n)`` (returns ``n`` characters). When the
environment variable ``ICLR26_TOY_MCP_PIDS`` names a file, the server appends its process id to it
on start (tests check that every server is gone after its episode).
"""

from __future__ import annotations

import argparse
import os
import time

from mcp.server.mcpserver import MCPServer

CAPITALS = {"france": "Paris", "japan": "Tokyo", "kenya": "Nairobi", "peru": "Lima", "norway": "Oslo"}


def add(a: int, b: int) -> int:
    """Add two integers and return their sum."""
    return a + b


def capital(country: str) -> str:
    """The capital city of a country (a few countries only)."""
    try:
        return CAPITALS[country.strip().lower()]
    except KeyError:
        raise ValueError(f"unknown country {country!r}") from None


def slow(seconds: float) -> str:
    """Sleep for the given number of seconds, then answer."""
    time.sleep(float(seconds))
    return f"slept {seconds} s"


def fail() -> str:
    """Always raises an error."""
    raise RuntimeError("the fail tool failed, as it always does")


def crash() -> str:
    """Kill the server process."""
    os._exit(3)


def huge(n: int) -> str:
    """Return a text of n characters."""
    return "x" * int(n)


TOOLS = {f.__name__: f for f in (add, capital, slow, fail, crash, huge)}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="iclr26's toy MCP server (stdio)")
    ap.add_argument("--tools", default=",".join(TOOLS), help="comma-separated tools to serve")
    names = [n for n in ap.parse_args(argv).tools.split(",") if n]
    unknown = sorted(set(names) - set(TOOLS))
    if unknown:
        ap.error(f"unknown tools {unknown}; choose from {sorted(TOOLS)}")
    server = MCPServer("iclr26-toy", log_level="CRITICAL")
    for name in names:
        server.add_tool(TOOLS[name])
    pid_file = os.environ.get("ICLR26_TOY_MCP_PIDS")
    if pid_file:
        with open(pid_file, "a") as fh:
            fh.write(f"{os.getpid()}\n")
    server.run("stdio")


if __name__ == "__main__":
    main()

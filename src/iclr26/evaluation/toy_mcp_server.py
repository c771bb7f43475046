"""A small MCP server of ours, for tests and examples: a few useful tools and three that misbehave.

Run over stdio: ``python path/to/toy_mcp_server.py`` (it imports only ``mcp``, so it runs without
``iclr26`` on the path); :func:`iclr26.evaluation.agent.toy_mcp_server` builds the matching
:class:`~iclr26.evaluation.agent.MCPStdioServer`.

Tools: ``add(a, b)``, ``capital(country)``, ``slow(seconds)`` (sleeps), ``fail()`` (raises: an error
result), ``crash()`` (kills the server process), ``huge(n)`` (returns ``n`` characters). When the
environment variable ``ICLR26_TOY_MCP_PIDS`` names a file, the server appends its process id to it
on start (tests check that every server is gone after its episode).
"""

from __future__ import annotations

import os
import time

from mcp.server.mcpserver import MCPServer

CAPITALS = {"france": "Paris", "japan": "Tokyo", "kenya": "Nairobi", "peru": "Lima", "norway": "Oslo"}

server = MCPServer("iclr26-toy", log_level="CRITICAL")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers and return their sum."""
    return a + b


@server.tool()
def capital(country: str) -> str:
    """The capital city of a country (a few countries only)."""
    try:
        return CAPITALS[country.strip().lower()]
    except KeyError:
        raise ValueError(f"unknown country {country!r}") from None


@server.tool()
def slow(seconds: float) -> str:
    """Sleep for the given number of seconds, then answer."""
    time.sleep(float(seconds))
    return f"slept {seconds} s"


@server.tool()
def fail() -> str:
    """Always raises an error."""
    raise RuntimeError("the fail tool failed, as it always does")


@server.tool()
def crash() -> str:
    """Kill the server process."""
    os._exit(3)


@server.tool()
def huge(n: int) -> str:
    """Return a text of n characters."""
    return "x" * int(n)


def main() -> None:
    pid_file = os.environ.get("ICLR26_TOY_MCP_PIDS")
    if pid_file:
        with open(pid_file, "a") as fh:
            fh.write(f"{os.getpid()}\n")
    server.run("stdio")


if __name__ == "__main__":
    main()

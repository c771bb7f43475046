"""MSB — MCP Security Bench (Zhang et al., ICLR 2026): 12 attacks on MCP tool-using agents over
real stdio MCP servers, scored as the authors score them (ASR, PUA, NRP).

Public API: :class:`AttackType`, :class:`AttackGoal`, :func:`load_msb`,
:func:`enumerate_instances`, :func:`run_instance` → :class:`Episode`, :func:`score_episode`,
:func:`msb_metrics`, :func:`write_authors_log`, :func:`scripted_agent`.
Reference code: github.com/dongsenzhang/MSB (MIT).
"""

from __future__ import annotations

from ._agents import AGENTS, ScriptedAgent
from ._data import Instance, MSBData, enumerate_instances, load_msb
from ._harness import PI_PLACEMENTS, Episode, ServerPool, run_instance
from ._score import COMPAT_MODES, METRIC_MODES, info_entries, msb_metrics, score_episode, write_authors_log
from ._spec import AttackGoal, AttackType

__all__ = [
    "AGENTS",
    "COMPAT_MODES",
    "METRIC_MODES",
    "PI_PLACEMENTS",
    "AttackGoal",
    "AttackType",
    "Episode",
    "Instance",
    "MSBData",
    "ScriptedAgent",
    "ServerPool",
    "enumerate_instances",
    "info_entries",
    "load_msb",
    "msb_metrics",
    "run_instance",
    "score_episode",
    "scripted_agent",
    "write_authors_log",
]


def scripted_agent(name: str) -> ScriptedAgent:
    """The scripted agent ``name`` (one of :data:`AGENTS`); ``ValueError`` listing them otherwise."""
    return ScriptedAgent(name)

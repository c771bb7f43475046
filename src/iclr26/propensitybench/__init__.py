"""PropensityBench: would an agent use a dangerous proxy tool when its safe tool keeps failing and
pressure escalates?

Each scenario offers a *target* (aligned) tool that always fails, a *trigger* (misaligned) tool that
would work, and getters. The agent gets the task, then up to twelve escalating pressure messages of one
of six categories; the episode ends when it calls the trigger. The trigger's name is either harmful
or benign (same description of consequences in the system prompt).

>>> from iclr26.propensitybench import embedded_scenarios, run_episode, caves_at, propensity_metrics
>>> s = embedded_scenarios()[0]
>>> r = run_episode(caves_at(3), s, "time", "harmful")
>>> (r.trigger_called, r.trigger_level, r.aligned_attempts)
(True, 3, 3)

Reference: Sehwag et al., "PropensityBench: Evaluating Latent Safety Risks in Large Language Models
via an Agentic Approach", ICLR 2026 (arXiv:2511.20703); harness rules from
github.com/scaleapi/propensity-evaluation (reimplemented; no code copied).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..models import GenerationConfig, LanguageModel
from ..validation import check_in, check_int
from ._agents import ScriptedAgent, always_aligned, caves_at, never_calls_tools, random_tool
from ._environment import NAMINGS, ProxyEnvironment, equals
from ._episode import ACK, FORMAT_ERROR, EpisodeResult, Limits, read_protocol_message
from ._generate import embedded_scenarios, embedded_tree
from ._metrics import METRICS, propensity_metrics
from ._runs import episode, from_authors_rows, load_results, run_cells, to_authors_rows
from ._scenario import CATEGORIES, N_LEVELS, Scenario, load_scenarios, scenarios_from_tree

__all__ = [
    "ACK",
    "CATEGORIES",
    "FORMAT_ERROR",
    "METRICS",
    "NAMINGS",
    "N_LEVELS",
    "EpisodeResult",
    "PropensityRun",
    "ProxyEnvironment",
    "Scenario",
    "ScriptedAgent",
    "always_aligned",
    "caves_at",
    "embedded_scenarios",
    "embedded_tree",
    "equals",
    "from_authors_rows",
    "load_results",
    "load_scenarios",
    "never_calls_tools",
    "propensity_metrics",
    "random_tool",
    "read_protocol_message",
    "run_episode",
    "run_propensity",
    "scenarios_from_tree",
    "to_authors_rows",
]

DEFAULT_CONFIG = GenerationConfig(max_new_tokens=128)
SystemPrompt = str | Callable[[ProxyEnvironment], str] | None


def _check_common(model, naming, seed, config, levels, limits) -> tuple[GenerationConfig, Limits]:
    if not isinstance(model, LanguageModel):
        raise ValueError(f"model must be an iclr26.models.LanguageModel, got {type(model).__name__}")
    check_in(naming, NAMINGS, "naming")
    check_int(seed, "seed")
    check_int(levels, "levels", minimum=0, maximum=N_LEVELS)
    config = DEFAULT_CONFIG if config is None else config
    if not isinstance(config, GenerationConfig):
        raise ValueError("config must be an iclr26.models.GenerationConfig")
    mi, mt, mm = limits
    return config, Limits(
        check_int(mi, "max_interactions", minimum=0),
        check_int(mt, "max_tool_calls", minimum=0),
        check_int(mm, "max_messages", minimum=0),
    )


def _check_system_prompt(system_prompt: Any) -> None:
    if system_prompt is not None and not isinstance(system_prompt, str) and not callable(system_prompt):
        raise ValueError("system_prompt must be None, a string or a function ProxyEnvironment -> str")


def run_episode(
    model: LanguageModel,
    scenario: Scenario,
    category: str | None = None,
    naming: str = "harmful",
    seed: int = 0,
    *,
    config: GenerationConfig | None = None,
    levels: int = N_LEVELS,
    max_interactions: int = 12,
    max_tool_calls: int = 3,
    max_messages: int = 2,
    compat: bool = False,
    system_prompt: SystemPrompt = None,
) -> EpisodeResult:
    """Play one episode of ``model`` on ``scenario``.

    Parameters
    ----------
    model: any :class:`~iclr26.models.LanguageModel`: tools go natively to an OpenAI-compatible
        backend, through the documented ``<tool_call>`` prompt format to local models, or to a
        :class:`ScriptedAgent`.
    category: a pressure category of the scenario, or ``None`` for zero pressure (task message only).
    naming: ``"harmful"`` or ``"benign"`` trigger name and description.
    seed: seeds the target tool's error draw (and the model's sampling, advanced per call).
    config: generation settings (default: 128 new tokens, greedy).
    levels: pressure messages to deliver (the authors: all 12).
    max_interactions, max_tool_calls, max_messages: the executor's limits (authors' defaults).
    compat: reproduce the authors' crashes (getter ``KeyError``, non-object JSON message) as a
        dropped run (``error`` set) instead of answering them with an error string.
    system_prompt: ``None`` (ours, :meth:`ProxyEnvironment.system_prompt`), a string, or a function of
        the environment.

    Returns
    -------
    :class:`EpisodeResult` (transcript in the authors' message format, ``trigger_called``,
    ``trigger_level``, ``aligned_attempts``, ``terminates``, ``error``).
    """
    config, limits = _check_common(
        model, naming, seed, config, levels, (max_interactions, max_tool_calls, max_messages)
    )
    if not isinstance(scenario, Scenario):
        raise ValueError(f"scenario must be a Scenario, got {type(scenario).__name__}")
    if category is not None:
        check_in(category, scenario.categories, "category")
    _check_system_prompt(system_prompt)
    return episode(
        model,
        scenario,
        category,
        naming,
        seed,
        config=config,
        levels=levels,
        limits=limits,
        compat=bool(compat),
        system_prompt=system_prompt,
    )


@dataclass
class PropensityRun:
    """The results of :func:`run_propensity`: every cell's :class:`EpisodeResult` (in cell order),
    how many were played now and how many came from the log, and their :func:`propensity_metrics`."""

    results: list[EpisodeResult]
    n_played: int
    n_reused: int
    metrics: dict[str, Any] = field(default_factory=dict)


def run_propensity(
    model: LanguageModel,
    scenarios: Sequence[Scenario],
    categories: Sequence[str] = CATEGORIES,
    namings: Sequence[str] = NAMINGS,
    *,
    zero_pressure: bool = False,
    seed: int = 0,
    log: str | os.PathLike | None = None,
    config: GenerationConfig | None = None,
    levels: int = N_LEVELS,
    max_interactions: int = 12,
    max_tool_calls: int = 3,
    max_messages: int = 2,
    compat: bool = False,
    system_prompt: SystemPrompt = None,
    progress: Callable | None = None,
) -> PropensityRun:
    """Play every (scenario, category, naming) cell (plus one zero-pressure run per scenario and
    naming when ``zero_pressure``), one logged row per cell: rerun with the same ``log`` and finished
    cells are read back, not played (a killed run loses only the episode in flight).

    Parameters as in :func:`run_episode`; a scenario without a category's messages skips that cell.
    """
    if (
        not isinstance(scenarios, Sequence)
        or not scenarios
        or not all(isinstance(s, Scenario) for s in scenarios)
    ):
        raise ValueError("scenarios must be a non-empty sequence of Scenario")
    categories = list(categories)
    for c in categories:
        check_in(c, CATEGORIES, "categories")
    namings = list(namings)
    if not namings:
        raise ValueError("namings must name at least one of ('harmful', 'benign')")
    for n in namings:
        check_in(n, NAMINGS, "namings")
    config, limits = _check_common(
        model, namings[0], seed, config, levels, (max_interactions, max_tool_calls, max_messages)
    )
    _check_system_prompt(system_prompt)
    cells = [
        (s, c, n)
        for s in scenarios
        for n in namings
        for c in ([None] if zero_pressure else []) + [c for c in categories if c in s.categories]
    ]
    settings = {
        "config": config.to_dict(),
        "levels": levels,
        "limits": limits.__dict__,
        "compat": bool(compat),
        "system_prompt": system_prompt
        if isinstance(system_prompt, str | None)
        else getattr(system_prompt, "__qualname__", "custom"),
    }

    def play_one(s: Scenario, c: str | None, n: str) -> EpisodeResult:
        return episode(
            model,
            s,
            c,
            n,
            seed,
            config=config,
            levels=levels,
            limits=limits,
            compat=bool(compat),
            system_prompt=system_prompt,
        )

    results, played = run_cells(model, cells, play_one, settings, seed, log, progress)
    return PropensityRun(results, played, len(cells) - played, propensity_metrics(results))

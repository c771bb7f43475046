"""LGBO: LLM-guided Bayesian optimisation with a region-lifted GP posterior mean (ICLR 2026).

An LLM (or an offline :class:`PreferenceOracle`) states one preference per round, a point or a box with a
confidence; :func:`preference_to_lift` turns it into a lift plan (the authors' ``decide.py`` rules);
:func:`lifted_model` wraps any single-output BoTorch GP so its posterior mean is raised by
``lambda * k_n(X, G) a`` over the preferred region (covariance unchanged); qLogEI on the lifted model picks
the batch. :class:`LGBO` runs the loop (ask/tell or dry runs). Reference: the LGBO paper (arXiv
2605.17976) and the authors' code, Xinzhe309/SAIBO-framework ``saibo/methods/lgbo``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ._bo import LGBO, RunResult, fit_gp
from ._hplc import HPLC_PARAMETERS, IDWOracle, hplc_data, hplc_task
from ._lift import LiftedModel, RegionLift, lifted_model, sobol_grid
from ._oracle import TOY_BOUNDS, TOY_OPTIMUM, PreferenceOracle, toy_function
from ._plan import LiftPlan, preference_to_lift, strength
from ._prompt import STRICT_RETRY, SYSTEM_PROMPT, check_parameters, parse_preference, toy_task, user_prompt
from ._tabular import (
    GridOracle,
    TabularBenchmark,
    load_concrete,
    load_crossed_barrel,
    load_lnp3,
    tabular_oracle,
)

__all__ = [
    "SYSTEM_PROMPT",
    "STRICT_RETRY",
    "HPLC_PARAMETERS",
    "IDWOracle",
    "LGBO",
    "LiftPlan",
    "PreferenceOracle",
    "RunResult",
    "TOY_BOUNDS",
    "TOY_OPTIMUM",
    "fit_gp",
    "GridOracle",
    "TabularBenchmark",
    "load_concrete",
    "load_crossed_barrel",
    "load_lnp3",
    "tabular_oracle",
    "hplc_data",
    "hplc_task",
    "toy_function",
    "LiftedModel",
    "RegionLift",
    "build_prompts",
    "lifted_model",
    "parse_preference",
    "preference_to_lift",
    "sobol_grid",
    "strength",
    "toy_task",
]


def build_prompts(task: Mapping[str, Any], history: Iterable[Any] | None, q: int | None) -> tuple[str, str]:
    """``(system, user)`` prompts for one round.

    ``task``: keyword arguments of the user prompt (``background``, ``parameters`` — a list of
    ``{"name", "bounds", "unit", "description"}`` —, ``objective``, optional ``constraints``, ``y_key``,
    ``extra_request``), e.g. :func:`toy_task`; ``history``: observations ``{"x": {name: value}, y_key: y}``
    or preformatted lines; ``q``: the batch size announced to the LLM.
    """
    if not isinstance(task, Mapping):
        raise ValueError(f"task must be a mapping of prompt fields, got {type(task).__name__}")
    missing = {"background", "parameters", "objective"} - set(task)
    if missing:
        raise ValueError(f"task is missing {sorted(missing)}")
    check_parameters(task["parameters"])
    if isinstance(history, str | bytes | Mapping):
        raise ValueError(
            f"history must be an iterable of observations or lines, got a single {type(history).__name__}"
        )
    if q is not None and (isinstance(q, bool) or not isinstance(q, int) or q < 1):
        raise ValueError(f"q must be None or a positive integer (the batch size), got {q!r}")
    return SYSTEM_PROMPT, user_prompt(**task, history=history, batch_q=q)

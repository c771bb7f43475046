"""From a parsed preference to a lift plan (the rules of the authors' ``decide.py``).

A preference (point or box, physical coordinates, confidence ``c``) becomes a box in the unit cube; the
expected number of grid points it covers, ``E = grid_size * vol``, picks the regime:

- ``E < 2``: too small for the grid. The authors fall back to "point" mode, which the region lift ignores
  (their point prior is a separate Monte-Carlo path, inert in ``propose_lgbo_batch``); by default we
  re-centre a box of the minimal size (below) around the box centre instead, so the preference is used.
- ``2 <= E < 6``: soft box, logistic edges of width 0.08.
- ``E >= 6``: hard box. The authors' proposal code still smooths it with width 0.06; by default we keep the
  indicator, as the plan states.

A point becomes the smallest box around it that covers ``2.05`` expected grid points (bisection on the
radius, clipped to the cube), so it lands in the soft regime.
"""

from __future__ import annotations

import math
import numbers
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from scipy import special

from iclr26.validation import check_in, check_int, check_real

EPS = 1e-6
E_SOFT_LOW, E_SOFT_HIGH = 2.0, 6.0
SOFT_SMOOTH, AUTHORS_HARD_SMOOTH = 0.08, 0.06


def strength(confidence: float, rule: str = "authors", guidance_scale: float = 3.0) -> float:
    """Numerator ``delta`` of the lift strength ``lambda = delta / sqrt(a' Sigma a)``.

    ``rule="authors"``: ``delta = guidance_scale * Phi^{-1}(c)`` (c clipped to [1e-12, 1 - 1e-12]), so
    ``c = 0.5`` gives no lift and ``c < 0.5`` pushes the mean *down* in the region. ``rule="paper"``:
    ``delta = c`` (the paper's ``lambda = c / sqrt(a' Sigma a)``), always a lift.
    """
    c = _check_confidence(confidence)
    if rule == "paper":
        return c
    if rule != "authors":
        raise ValueError(f"rule must be one of ('authors', 'paper'), got {rule!r}")
    _check_guidance_scale(guidance_scale)
    p = min(max(c, 1e-12), 1.0 - 1e-12)
    return float(guidance_scale) * float(special.ndtri(p))


def _check_guidance_scale(guidance_scale: Any) -> None:
    """A finite number >= 0 (a bool would silently be 1; a negative scale would turn every stated
    preference into its opposite)."""
    if check_real(guidance_scale, "guidance_scale") < 0:
        raise ValueError(f"guidance_scale must be >= 0, got {guidance_scale!r}")


def _check_confidence(confidence: Any) -> float:
    if isinstance(confidence, bool) or not isinstance(confidence, int | float | np.floating):
        raise ValueError(f"confidence must be a number in [0, 1], got {confidence!r}")
    c = float(confidence)
    if not (0.0 <= c <= 1.0):
        raise ValueError(f"confidence must lie in [0, 1], got {c!r}")
    return c


@dataclass(frozen=True)
class LiftPlan:
    """What :func:`preference_to_lift` decided. Boxes are in the unit cube (normalised by ``bounds``).

    ``mode`` is ``"region"`` (hard), ``"region-soft"``, ``"point"`` (the authors' inert fallback) or
    ``"none"`` (no usable preference); ``smooth`` is the edge width the plan states (``None`` = hard);
    ``applied_smooth`` the width actually used for the weights.
    """

    mode: str
    delta: float = 0.0
    confidence: float | None = None
    lb: np.ndarray | None = None
    ub: np.ndarray | None = None
    smooth: float | None = None
    applied_smooth: float | None = None
    expected_hits: float = 0.0
    grid_size: int = 512
    compat: str | None = None
    why: str = ""
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def lifts(self) -> bool:
        """Whether this plan moves the posterior mean at all."""
        return self.mode.startswith("region") and self.delta != 0.0


def _clip_unit(values: Any, lo: np.ndarray, hi: np.ndarray, name: str) -> np.ndarray:
    items = np.asarray(values, dtype=object).reshape(-1)
    if any(isinstance(v, bool | np.bool_) or not isinstance(v, numbers.Real) for v in items):
        raise ValueError(f"{name} must hold {lo.size} finite numbers, got {values!r}")
    x = np.asarray(values, dtype=float)
    if x.shape != lo.shape or not np.isfinite(x).all():
        raise ValueError(f"{name} must hold {lo.size} finite numbers, got {values!r}")
    if np.any(x < lo) or np.any(x > hi):
        warnings.warn(f"{name} lies partly outside the bounds; clipped to them", stacklevel=3)
    return (np.clip(x, lo, hi) - lo) / (hi - lo)


def _effective_volume(center: np.ndarray, r: float) -> float:
    lo = np.maximum(center - r, EPS)
    hi = np.minimum(center + r, 1.0 - EPS)
    return float(np.prod(np.maximum(hi - lo, 0.0)))


def point_radius(center: np.ndarray, grid_size: int, hits: float = E_SOFT_LOW + 0.05) -> float:
    """Half-width of the smallest clipped box around ``center`` expected to cover ``hits`` grid points.

    Bisection (50 steps) on ``r`` in ``[1e-8, 0.5 - 1e-6]``, then up to ten 1.2x growths if the box still
    covers fewer than 2 points.
    """
    target = max(hits / float(grid_size), 1e-12)
    lo, hi = 1e-8, 0.5 - EPS
    if _effective_volume(center, hi) < target:
        return hi
    for _ in range(50):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if _effective_volume(center, mid) >= target else (mid, hi)
    r = 0.5 * (lo + hi)
    for _ in range(10):
        if grid_size * _effective_volume(center, r) >= E_SOFT_LOW:
            break
        r = min(r * 1.2, 0.5 - EPS)
    return float(r)


def _unit_box(pref: dict, lo: np.ndarray, hi: np.ndarray, grid_size: int) -> tuple[np.ndarray, np.ndarray]:
    if pref["mode"] == "point":
        x = np.clip(_clip_unit(pref.get("point"), lo, hi, "pref['point']"), EPS, 1 - EPS)
        r = point_radius(x, grid_size)
        return np.clip(x - r, EPS, 1 - EPS), np.clip(x + r, EPS, 1 - EPS)
    a = _clip_unit(pref.get("lb"), lo, hi, "pref['lb']")
    b = _clip_unit(pref.get("ub"), lo, hi, "pref['ub']")
    return np.clip(np.minimum(a, b), EPS, 1 - EPS), np.clip(np.maximum(a, b), EPS, 1 - EPS)


def _confidence(pref: dict, compat: str | None) -> float:
    c = pref.get("confidence")
    if compat == "authors":  # their safe_confidence: anything unusable is 0.5, then clipped
        try:
            c = float(c)
        except (TypeError, ValueError):
            c = 0.5
        return min(max(c, 1e-4), 1 - 1e-4)
    return min(max(_check_confidence(c), 1e-4), 1 - 1e-4)


def preference_to_lift(
    pref: dict,
    bounds: Any,
    *,
    rule: str = "authors",
    guidance_scale: float = 3.0,
    grid_size: int = 512,
    compat: str | None = None,
) -> LiftPlan:
    """Turn a parsed preference into a :class:`LiftPlan` (see the module docstring for the regimes).

    ``pref``: the dict of :func:`parse_preference` (``mode`` ``"point"`` with ``point``, or ``"region"``
    with ``lb``/``ub``, and ``confidence``), physical coordinates; values outside ``bounds`` (shape
    ``(2, d)``) are clipped with a warning. ``compat="authors"`` keeps the authors' rules exactly
    (inert point fallback, width 0.06 on hard boxes, out-of-range confidence clipped rather than refused).
    """
    from . import _validate

    lo, hi = _validate.bounds(bounds)
    if compat not in (None, "authors"):
        raise ValueError(f"compat must be None or 'authors', got {compat!r}")
    check_in(rule, ("authors", "paper"), "rule")
    _check_guidance_scale(guidance_scale)
    grid_size = check_int(grid_size, "grid_size", minimum=2)
    if not isinstance(pref, dict):
        raise ValueError(f"pref must be a dict from parse_preference, got {type(pref).__name__}")
    if pref.get("mode") not in ("point", "region"):
        return LiftPlan("none", grid_size=grid_size, compat=compat, why="no valid point/region preference")
    c = _confidence(pref, compat)
    delta = strength(c, rule, guidance_scale)
    if compat == "authors" and rule == "authors":  # their Phi^-1 goes through a float32 erfinv
        delta = float(guidance_scale) * math.sqrt(2.0) * float(torch.erfinv(torch.tensor(2.0 * c - 1.0)))
    lb, ub = _unit_box(pref, lo, hi, grid_size)
    hits = grid_size * float(np.prod(np.clip(ub - lb, 0.0, 1.0)))
    common = dict(delta=delta, confidence=c, grid_size=grid_size, compat=compat, expected_hits=hits)
    if hits < E_SOFT_LOW and compat == "authors":
        center = 0.5 * (lb + ub)
        return LiftPlan(
            "point", lb=center, ub=center, why=f"E={hits:.2f} < 2: point fallback (inert)", **common
        )
    if hits < E_SOFT_LOW:
        center = 0.5 * (lb + ub)
        r = point_radius(center, grid_size)
        lb, ub = np.clip(center - r, EPS, 1 - EPS), np.clip(center + r, EPS, 1 - EPS)
        common["expected_hits"] = grid_size * float(np.prod(ub - lb))
        return LiftPlan(
            "region-soft",
            lb=lb,
            ub=ub,
            smooth=SOFT_SMOOTH,
            applied_smooth=SOFT_SMOOTH,
            why=f"E={hits:.2f} < 2: box grown to the minimal soft box",
            **common,
        )
    if hits < E_SOFT_HIGH:
        return LiftPlan(
            "region-soft",
            lb=lb,
            ub=ub,
            smooth=SOFT_SMOOTH,
            applied_smooth=SOFT_SMOOTH,
            why=f"E={hits:.2f} in [2, 6): soft box",
            **common,
        )
    applied = AUTHORS_HARD_SMOOTH if compat == "authors" else None
    return LiftPlan(
        "region",
        lb=lb,
        ub=ub,
        smooth=None,
        applied_smooth=applied,
        why=f"E={hits:.2f} >= 6: hard box",
        **common,
    )

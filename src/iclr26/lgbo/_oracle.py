"""Offline preference sources and the authors' toy benchmarks."""

from __future__ import annotations

from typing import Any

import numpy as np

from iclr26.validation import check_array, check_in

from . import _validate

#: The authors' toy functions (all minimised) with their default per-dimension bounds and optimum.
TOY_BOUNDS = {
    "rastrigin": (-5.12, 5.12),
    "ackley": (-5.0, 5.0),
    "griewank": (-600.0, 600.0),
    "levy": (-10.0, 10.0),
}
TOY_OPTIMUM = {"rastrigin": 0.0, "ackley": 0.0, "griewank": 0.0, "levy": 1.0}


def toy_function(name: str, X: Any) -> np.ndarray:
    """Value of a toy function at each row of ``X`` ``(m, d)`` -> ``(m,)`` (vectorised)."""
    check_in(name, tuple(TOY_BOUNDS), "name")
    X = check_array(np.atleast_2d(X), "X")
    d = X.shape[1]
    if d < 1:
        raise ValueError(f"X must have at least one column, got shape {X.shape}")
    if name == "rastrigin":
        return 10.0 * d + (X**2 - 10.0 * np.cos(2 * np.pi * X)).sum(1)
    if name == "ackley":
        a = -20.0 * np.exp(-0.2 * np.sqrt((X**2).sum(1) / d))
        return a - np.exp(np.cos(2 * np.pi * X).sum(1) / d) + 20.0 + np.e
    if name == "griewank":
        return 1.0 + (X**2).sum(1) / 4000.0 - np.prod(np.cos(X / np.sqrt(np.arange(1, d + 1))), axis=1)
    w = 1.0 + (X - 1.0) / 4.0
    mid = ((w[:, :-1] - 1) ** 2 * (1 + 10 * np.sin(np.pi * w[:, :-1] + 1) ** 2)).sum(1)
    last = (w[:, -1] - 1) ** 2 * (1 + np.sin(2 * np.pi * w[:, -1]) ** 2)
    return np.sin(np.pi * w[:, 0]) ** 2 + mid + last


class PreferenceOracle:
    """A simulated expert that answers every prompt with one box preference, in the LLM's reply format.

    Parameters
    ----------
    kind:
        ``"aligned"`` (box centred near ``optimum``, jittered by up to a quarter of its side),
        ``"misaligned"`` (box in the corner farthest from ``optimum``) or ``"random"`` (box centred
        uniformly at random each round: the paper's random-region ablation).
    confidence:
        The stated confidence, in [0, 1].
    box_frac:
        Side of the box as a fraction of each parameter's range, in (0, 1].
    optimum, bounds:
        The true optimiser ``(d,)`` and the ``(2, d)`` box (physical units).
    seed:
        Seed of the jitter / random centres.
    """

    def __init__(
        self, kind: str, confidence: float, box_frac: float, optimum: Any, bounds: Any, seed: int = 0
    ):
        self.kind = check_in(kind, ("aligned", "misaligned", "random"), "kind")
        if isinstance(confidence, bool) or not (
            isinstance(confidence, int | float) and 0.0 <= confidence <= 1.0
        ):
            raise ValueError(f"confidence must lie in [0, 1], got {confidence!r}")
        if isinstance(box_frac, bool) or not (isinstance(box_frac, int | float) and 0.0 < box_frac <= 1.0):
            raise ValueError(f"box_frac must lie in (0, 1], got {box_frac!r}")
        self.lo, self.hi = _validate.bounds(bounds)
        self.optimum = check_array(optimum, "optimum", ndim=None).reshape(-1)
        if self.optimum.shape != self.lo.shape:
            raise ValueError(f"optimum must have {self.lo.size} entries, got {self.optimum.size}")
        self.confidence, self.box_frac = float(confidence), float(box_frac)
        self.rng = np.random.default_rng(seed)

    def box(self) -> tuple[np.ndarray, np.ndarray]:
        """The next preferred box ``(lb, ub)``, physical units."""
        span = self.hi - self.lo
        half = 0.5 * self.box_frac * span
        if self.kind == "aligned":
            center = self.optimum + self.rng.uniform(-0.5, 0.5, self.lo.size) * half
        elif self.kind == "misaligned":
            far = np.where(self.optimum - self.lo < self.hi - self.optimum, self.hi, self.lo)
            center = np.clip(far, self.lo + half, self.hi - half)
        else:
            center = self.rng.uniform(self.lo + half, self.hi - half)
        return np.clip(center - half, self.lo, self.hi), np.clip(center + half, self.lo, self.hi)

    def reply(self, system: str, user: str) -> str:
        """A reply in the LLM's format: ``Final Answer: [region, [[lb..], [ub..]], c]``."""
        lb, ub = self.box()
        lbs = ", ".join(f"{v:.4f}" for v in lb)
        ubs = ", ".join(f"{v:.4f}" for v in ub)
        answer = f"[region, [[{lbs}], [{ubs}]], {self.confidence}]"
        return f"Thinking:\n- {self.kind} oracle.\n\nFinal Answer:\n{answer}"

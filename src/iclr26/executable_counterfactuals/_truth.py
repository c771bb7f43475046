"""Ground truth by exhaustive execution over the latent prior (abduction, action, prediction).

The program is compiled once; each call of ``random.randint`` inside it returns the next value of the
latent assignment being tried, so one compiled function is run on every point of the prior grid
``R^k`` (``k`` latents). A loop body calls ``_tick()``, which raises past the step budget.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from collections.abc import Sequence

STEP_BUDGET = 200


class StepBudgetExceeded(RuntimeError):
    """A loop ran more than :data:`STEP_BUDGET` iterations."""


class _Feeder:
    """Stands in for the ``random`` module: ``randint`` returns the assigned latents in order."""

    def __init__(self) -> None:
        self.values: Sequence[int] = ()
        self.i = 0

    def randint(self, lo: int, hi: int) -> int:
        v = self.values[self.i]
        self.i += 1
        return v


class Runner:
    """``run(x, latents) -> int``: the program ``source`` (checked rendering) on input ``x`` with the latents
    fixed to ``latents``; raises :class:`StepBudgetExceeded` past ``budget`` loop iterations."""

    def __init__(self, source: str, budget: int = STEP_BUDGET) -> None:
        self.feeder = _Feeder()
        self.steps = 0
        self.budget = budget
        ns = {"_tick": self._tick}
        exec(compile(source.replace("import random\n", ""), "<program>", "exec"), ns)  # noqa: S102
        ns["random"] = self.feeder
        self.f = ns["f"]

    def _tick(self) -> None:
        self.steps += 1
        if self.steps > self.budget:
            raise StepBudgetExceeded

    def __call__(self, x: int, latents: Sequence[int]) -> int:
        self.feeder.values = latents
        self.feeder.i = 0
        self.steps = 0
        return self.f(x)


def grid(ranges: Sequence[tuple[int, int]]) -> list[tuple[int, ...]]:
    """Every joint latent assignment of the prior (``ranges``: inclusive ``(lo, hi)`` per latent)."""
    return list(itertools.product(*(range(lo, hi + 1) for lo, hi in ranges)))


def solve(
    run: Runner, ranges: Sequence[tuple[int, int]], x_factual: int, y_factual: int, x_cf: int
) -> tuple[list[tuple[int, ...]], set[int]]:
    """Abduction over the prior grid, then prediction: ``(consistent latents, counterfactual answer set)``."""
    consistent = [lat for lat in grid(ranges) if run(x_factual, lat) == y_factual]
    return consistent, {run(x_cf, lat) for lat in consistent}


_CHILD = r"""
import itertools, json, random, sys
spec = json.loads(sys.stdin.read())
out = []
for item in spec:
    ns = {}
    exec(item["code"], ns)
    pts = itertools.product(*(range(lo, hi + 1) for lo, hi in item["ranges"]))
    cons, ans = [], set()
    for lat in pts:
        seq = iter(lat)
        random.randint = lambda lo, hi, _s=seq: next(_s)
        if ns["f"](item["x"]) == item["y"]:
            seq = iter(lat)
            random.randint = lambda lo, hi, _s=seq: next(_s)
            cons.append(list(lat))
            ans.add(ns["f"](item["x_cf"]))
    out.append({"consistent": cons, "answers": sorted(ans)})
print(json.dumps(out))
"""


def subprocess_truth(problems: Sequence, timeout: float = 120.0) -> list[dict]:
    """The independent ground-truth path: each problem's shown ``code`` run as written (its own
    ``random.randint`` patched per latent point) in a fresh ``python -I`` subprocess over the grid.

    ``problems``: :class:`Problem` records; only what a solver is shown is sent (``code``, the latent
    ranges, the factual input and output, the counterfactual input). Returns per problem
    ``{"consistent": [[...], ...], "answers": [...]}``.
    """
    items = [
        {
            "code": p.code,
            "ranges": list(p.latents.values()),
            "x": p.x_factual,
            "y": p.y_factual,
            "x_cf": p.x_cf,
        }
        for p in problems
    ]
    proc = subprocess.run(
        [sys.executable, "-I", "-c", _CHILD],
        input=json.dumps(items),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=True,
    )
    return json.loads(proc.stdout)

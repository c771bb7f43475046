"""Toy systems for the executor tests: cheap experiments that Ray workers can import by name.

Not collected by pytest (no ``test_`` prefix). The fixtures put this folder on ``sys.path`` and on
``PYTHONPATH`` (which the processes of a local Ray instance inherit).
"""

import os
import random
import signal
from dataclasses import dataclass

import numpy as np

from iclr26.catalogue import SystemEntry
from iclr26.claims import Claim, Result
from iclr26.uncertainty import bootstrap


def interval_claims(ctx):
    """A bootstrap interval, an exact count, a metric and a table, all from the run's seed."""
    x = ctx.rng().normal(loc=0.3, size=60)
    est = bootstrap(np.mean, x, n_boot=300, seed=ctx.seed)
    claims = [
        est.claim("the mean is positive", ">", 0.0, paper="mean > 0", scale="60 draws"),
        Claim("all 60 draws are finite", float(np.isfinite(x).sum()), ">=", 60, exact=True),
    ]
    return Result(
        claims,
        metrics={"mean": x.mean(), "first": x[:3]},
        tables={"draws": [{"i": i, "x": v} for i, v in enumerate(x[:5])]},
    )


def global_state(ctx):
    """Draws from the global generators that the runner seeds (Python's and NumPy's)."""
    a = np.random.standard_normal(30)  # noqa: NPY002 - the point is the runner's global seeding
    b = random.random()
    est = bootstrap(np.median, a, n_boot=200, seed=1)
    claim = est.claim("the median is within 1 of 0", "within", 0.0, tolerance=1.0)
    return Result([claim], metrics={"b": b, "a_sum": float(a.sum())})


def dies(ctx):
    """The worker process kills itself, as the OOM killer or an operator would."""
    os.kill(os.getpid(), signal.SIGKILL)


def fails(ctx):
    raise RuntimeError("toy failure")


@dataclass(frozen=True)
class ToyEntry(SystemEntry):
    """A catalogue entry whose headline experiment is one of the toys above."""

    toy: str = "interval_claims"

    def experiment(self):
        return globals()[self.toy]

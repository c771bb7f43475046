"""Toy systems for the executor tests: cheap experiments that Ray workers can import by name.

Not collected by pytest (no ``test_`` prefix). The fixtures put this folder on ``sys.path`` and on
``PYTHONPATH`` (which the processes of a local Ray instance inherit).
"""

import os
import random
import signal
import sys
from dataclasses import dataclass

import numpy as np

from iclr26.catalogue import SystemEntry
from iclr26.claims import Claim, Result


def _bootstrap(stat, x, rng, n_boot=300):
    """Percentile bootstrap interval with NumPy only (scipy takes seconds to import in each worker)."""
    reps = [stat(x[rng.integers(0, len(x), len(x))]) for _ in range(n_boot)]
    lo, hi = np.quantile(reps, [0.025, 0.975])
    return float(lo), float(hi)


def _note_where():
    """In a Ray worker, append the node's and the GCS's addresses to the file $ICLR26_TOY_WHERE."""
    path = os.environ.get("ICLR26_TOY_WHERE")
    if path and "ray" in sys.modules and sys.modules["ray"].is_initialized():
        ray = sys.modules["ray"]
        with open(path, "a") as fh:
            fh.write(f"{ray.util.get_node_ip_address()} {ray.get_runtime_context().gcs_address}\n")


def interval_claims(ctx):
    """A bootstrap interval, an exact count, a metric and a table, all from the run's seed."""
    _note_where()
    x = ctx.rng().normal(loc=0.3, size=60)
    interval = _bootstrap(np.mean, x, ctx.rng(1))
    claims = [
        Claim("the mean is positive", x.mean(), ">", 0.0, paper="mean > 0", interval=interval),
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
    interval = _bootstrap(np.median, a, np.random.default_rng(1))
    claim = Claim("the median is near 0", np.median(a), "within", 0.0, tolerance=1.0, interval=interval)
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

"""A run killed with SIGKILL midway resumes without asking the agent about finished episodes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from iclr26.evaluation import SampleLog
from iclr26.propensitybench import embedded_scenarios, run_propensity
from iclr26.propensitybench._agents import _CavesAt

SRC = str(Path(__file__).resolve().parents[2] / "src")
CHILD = """
import sys, time
from iclr26.propensitybench import embedded_scenarios, run_propensity
from iclr26.propensitybench._agents import _CavesAt

class Slow(_CavesAt):
    def decide(self, messages, tools):
        time.sleep(0.02)
        return super().decide(messages, tools)

run_propensity(Slow(None), embedded_scenarios()[:8], ["time"], log=sys.argv[1])
"""


class Counting(_CavesAt):
    calls = 0

    def decide(self, messages, tools):
        Counting.calls += 1
        return super().decide(messages, tools)


def test_killed_run_resumes(tmp_path):
    log = tmp_path / "runs.sqlite"
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(log)], env={**os.environ, "PYTHONPATH": SRC})
    try:
        deadline = time.monotonic() + 120
        n = 0
        while time.monotonic() < deadline and proc.poll() is None:
            if log.exists():
                with SampleLog(log) as slog:
                    n = len(slog)
                if n >= 3:
                    break
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait()
    with SampleLog(log) as slog:
        done = len(slog)
    assert 3 <= done < 16, done
    # same agent identity (name "always_aligned"), same cells: finished ones are read back
    res = run_propensity(Counting(None), embedded_scenarios()[:8], ["time"], log=log)
    assert (res.n_reused, res.n_played) == (done, 16 - done)
    with SampleLog(log) as slog:
        ids = [r["sample_id"] for r in slog.records()]
    assert len(ids) == len(set(ids)) == 16  # each episode logged once
    before = set(ids[:done])
    played = [r for r in res.results if f"{r.scenario}|{r.category}|{r.naming}" not in before]
    assert len(played) == 16 - done
    assert Counting.calls == sum(r.n_model_calls for r in played)  # finished episodes were not asked

"""PropensityBench harness speed: ours vs the authors' ``PropensityEvaluator`` / ``Executor``.

Both play the same episodes with the same scripted agents (the random-tool baseline and the chaos
agent of the tests), in one process, so the figure is the harness's own overhead per transcript and
per model turn (the agent's reply costs the same on both sides). Theirs twice: the evaluator loop
alone (their client replaced by the agent), and with their client (rate limiter, litellm) answering
through litellm's ``mock_response`` (no network; their process pool is still left out, which favours
them). Best of 3 rounds each. Needs the
authors' code and a venv where it imports (litellm, setproctitle, python-dotenv, rich; see
docs/propensitybench.md):

    PROPENSITYBENCH_AUTHORS=/tmp/propensitybench-authors PYTHONPATH=src \
        python benchmarks/propensity_harness.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests" / "propensitybench")]

from authors_driver import agent_from_spec  # noqa: E402

from iclr26.propensitybench import CATEGORIES, embedded_scenarios, embedded_tree, run_episode  # noqa: E402


def cases(n_rounds: int) -> list[dict]:
    tree = embedded_tree()
    out = []
    for k in range(n_rounds):
        for i, s in enumerate(embedded_scenarios()):
            agent = [f"random_tool:{k}", f"chaos:{k}"][i % 2]
            out.append(
                {
                    "tree": tree,
                    "domain": s.domain,
                    "workspace": s.workspace,
                    "role": s.role,
                    "scenario": s.name,
                    "category": CATEGORIES[i % 6],
                    "naming": "harmful",
                    "seed": i,
                    "agent": agent,
                }
            )
    return out


def ours(batch: list[dict]) -> tuple[float, int, int]:
    index = {s.name: s for s in embedded_scenarios()}
    t0 = time.perf_counter()
    turns = n = 0
    for c in batch:
        r = run_episode(
            agent_from_spec(c["agent"]), index[c["scenario"]], c["category"], c["naming"], c["seed"]
        )
        turns += r.n_model_calls
        n += r.error is None
    return time.perf_counter() - t0, turns, n


def theirs(batch: list[dict], authors: Path, mode: str) -> tuple[float, int]:
    """Seconds over the runs they finish, and how many: ``mode="loop"`` replaces their client by the
    agent; ``"litellm"`` keeps their client (rate limiter, ``litellm.completion``) with the network
    replaced by litellm's ``mock_response`` carrying the agent's reply."""
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "cases.json").write_text(json.dumps(batch))
        env = {
            **os.environ,
            "PYTHONPATH": str(ROOT / "src"),
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "PROPENSITYBENCH_DRIVER": mode,
        }
        subprocess.run(
            [
                str(authors / "venv/bin/python"),
                str(ROOT / "tests/propensitybench/authors_driver.py"),
                str(authors),
                f"{tmp}/cases.json",
                f"{tmp}/out.json",
            ],
            check=True,
            env=env,
        )
        out = json.loads((Path(tmp) / "out.json").read_text())
    done = [o for o in out if o["error"] is None]
    return sum(o["seconds"] for o in done), len(done)


def main() -> None:
    authors = Path(os.environ.get("PROPENSITYBENCH_AUTHORS", "/tmp/propensitybench-authors"))
    batch = cases(3)
    t_ours, turns, n_ours = min(ours(batch) for _ in range(3))  # best of 3 (a loaded machine)
    print(f"episodes: {len(batch)} ({turns} agent turns); ours finishes {n_ours}")
    print(f"ours:   {n_ours / t_ours:8.1f} transcripts/s, {1e6 * t_ours / turns:7.1f} us per turn")
    for mode in ("loop", "litellm"):
        t, n = min(theirs(batch, authors, mode) for _ in range(3))
        print(
            f"theirs ({mode}): {n / t:8.1f} transcripts/s on the {n} runs they finish; "
            f"ours / theirs = {(n_ours / t_ours) / (n / t):.1f}x"
        )


if __name__ == "__main__":
    main()

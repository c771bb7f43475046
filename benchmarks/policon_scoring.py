"""PoliCon deterministic scoring: ``iclr26.policon.score_rows`` against the authors' Python functions.

Scores 28,620 scenario rows (the full benchmark's size: 5,724 tasks x 5 goals) built from the tasks at
hand (the authors' data when ``--data`` points to it, else our generated tasks), with random 0-9 party
scores: ours in one vectorised pass (every rule and welfare at once) against the authors'
``get_voting_result`` row by row (their code from ``--authors``, a checkout outside this repository;
default ``/tmp/policon-authors``; ours alone when absent). Also checks the outcomes are equal.

Run from the repository root::

    PYTHONPATH=src .venv/bin/python benchmarks/policon_scoring.py --data ../shared/data/policon
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from iclr26.policon import (
    AUTHORS_GOALS,
    GOALS,
    build_tasks,
    generate_topics,
    load_policon,
    row_arrays,
    score_rows,
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=28620)
    ap.add_argument("--data", default=None)
    ap.add_argument("--authors", default="/tmp/policon-authors")
    args = ap.parse_args()
    if args.data:
        tasks = load_policon(args.data).tasks
    else:
        topics = generate_topics(12, seed=0)
        tasks = [t for k in (2, 4, 6) for t in build_tasks(topics, k, rng=k)]
    rng = np.random.default_rng(0)
    rows = []
    while len(rows) < args.rows:
        t = tasks[len(rows) // len(GOALS) % len(tasks)]
        scores = {s["party_name"]: int(v) for s, v in zip(t["stances"], rng.integers(0, 10, 6))}
        rows.append(
            {
                "goal": GOALS[len(rows) % len(GOALS)],
                "party_num": t["party_num"],
                "topic": t["topic"],
                "scores": scores,
                "weights": t["seat_weights"],
                "veto_party_name": t["veto_party_name"],
                "_task": t,
            }
        )
    t0 = time.perf_counter()
    arrays = row_arrays(rows)
    t1 = time.perf_counter()
    ours = score_rows(arrays)["outcome"]
    t2 = time.perf_counter()
    print(f"ours: {len(rows)} rows, arrays {t1 - t0:.3f} s, scoring {t2 - t1:.3f} s")
    if not (Path(args.authors) / "evals" / "get_voting_result.py").is_file():
        print(f"the authors' code is absent ({args.authors}); measured ours alone")
        return
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "policon"))
    import _authors

    gv = _authors.load().voting.get_voting_result
    settings = {
        g: ("seat_apportionment", a) if g in ("simple_majority", "two_thirds", "veto") else (a, None)
        for g, a in AUTHORS_GOALS.items()
    }
    pick = {"simple_majority": 0, "two_thirds": 1, "veto": 1}
    t0 = time.perf_counter()
    theirs = []
    for r in rows:
        out = gv(r["_task"], r["scores"], *settings[r["goal"]])
        theirs.append(out[pick[r["goal"]]] if r["goal"] in pick else out)
    t_auth = time.perf_counter() - t0
    equal = int(np.sum(np.asarray(theirs, dtype=float) == ours))
    print(
        f"authors: {t_auth:.3f} s row by row; ours/theirs time {(t2 - t1) / t_auth:.3f}; "
        f"equal outcomes {equal}/{len(rows)}"
    )


if __name__ == "__main__":
    main()

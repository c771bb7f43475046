"""MSB: the full scripted sweep (2,000 instances per agent) over our stdio MCP servers, scored by
our ``compat="msb-2026"`` scorer and by the authors' ``metrics.check_result``/``get_result``.

Reports per-instance agreement (booleans identical), the largest difference of the result table
(percentage points), wall time, instances/s, server processes spawned and peak RSS.

    PYTHONPATH=src python benchmarks/msb_sweep.py [--agent obedient] [--data ../shared/data/msb]
        [--every 1] [--out /tmp/msb-sweep.json]

The authors' scorer is read from ``$MSB_AUTHORS_DIR`` (default ``/tmp/msb-authors``: their
``metrics.py`` and ``data/prompt_template.py``); without it only our side runs.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "msb"))
from authors import load_authors  # noqa: E402

from iclr26.msb import (  # noqa: E402
    ServerPool,
    enumerate_instances,
    info_entries,
    load_msb,
    msb_metrics,
    run_instance,
    score_episode,
    scripted_agent,
    write_authors_log,
)
from iclr26.msb._data import output_stem  # noqa: E402
from iclr26.msb._spec import TABLE_NAME  # noqa: E402


def authors_table(ns, episodes, workdir: Path) -> tuple[list[dict], dict[str, float]]:
    """Their check_result on every episode (one metrics CSV), then their get_result (mode llm)."""
    cwd = os.getcwd()
    os.chdir(workdir)
    try:
        Path("logs").mkdir()
        Path("operation_space/output").mkdir(parents=True)
        for ep in episodes:
            if ep.output_exists:
                Path(f"operation_space/output/{output_stem(ep.log_name)}.txt").write_text(ep.output_text)
            write_authors_log(ep, f"logs/{ep.log_name}.log")
            ns["check_result"](f"logs/{ep.log_name}", "metrics.csv")
        rows = pd.read_csv("metrics.csv", sep="\t").to_dict("records")
        ns["LLM_MODEL"] = [episodes[0].llm]
        ns["get_result"]("llm", "metrics.csv", "result.csv")
        table = pd.read_csv("result.csv", sep="\t").iloc[0].to_dict()
    finally:
        os.chdir(cwd)
    return rows, table


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--agent", default="obedient")
    ap.add_argument("--data", default=os.environ.get("ICLR26_MSB_DATA", "../shared/data/msb"))
    ap.add_argument("--every", type=int, default=1, help="play every k-th instance (1 = all 2,000)")
    ap.add_argument("--out", default="")
    a = ap.parse_args()
    data = load_msb(a.data)
    instances = enumerate_instances(data)[:: a.every]
    agent = scripted_agent(a.agent)
    t0 = time.perf_counter()
    episodes = []
    with ServerPool() as pool:
        for i, inst in enumerate(instances):
            with tempfile.TemporaryDirectory(prefix="msb-") as ws:
                episodes.append(run_instance(agent, inst, ws, information=data.information, pool=pool))
            if (i + 1) % 100 == 0:
                print(
                    f"{i + 1}/{len(instances)} {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True
                )
        spawned = pool.spawned
    wall = time.perf_counter() - t0
    ours = [score_episode(ep, "msb-2026") for ep in episodes]
    kept = [(ep, s) for ep, s in zip(episodes, ours) if s is not None]
    report = {
        "agent": a.agent,
        "instances": len(instances),
        "errors": sum(s is None for s in ours),
        "wall_s": round(wall, 1),
        "instances_per_s": round(len(instances) / wall, 2),
        "servers_spawned": spawned,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "log_entries_mean": round(sum(len(info_entries(ep)) for ep, _ in kept) / max(len(kept), 1), 2),
    }
    ns = load_authors()
    if ns is not None:
        with tempfile.TemporaryDirectory() as tmp:
            theirs, table = authors_table(ns, [ep for ep, _ in kept], Path(tmp))
        keys = ("attack_success", "mixed_attack_success", "user_task_success")

        def norm(v):
            return None if v is None or (isinstance(v, float) and math.isnan(v)) else bool(v)

        same = sum(all(norm(t[k]) == norm(s[k]) for k in keys) for (_, s), t in zip(kept, theirs))
        mine = msb_metrics([{"attack_type": ep.instance.attack_type, **s} for ep, s in kept])
        diffs = []
        for name, vals in mine.items():
            for m, v in vals.items():
                col = f"{TABLE_NAME.get(name, name)}#{m}"
                if col in table and str(table[col]) not in ("-", "nan"):
                    diffs.append(abs(round(100 * v, 2) - float(table[col])))
        report |= {
            "authors_rows": len(theirs),
            "per_instance_identical": same,
            "table_cells_compared": len(diffs),
            "table_max_abs_diff_pp": max(diffs) if diffs else None,
        }
    print(json.dumps(report, indent=1))
    if a.out:
        Path(a.out).write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()

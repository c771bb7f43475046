"""MSB harness overhead per instance with a scripted agent (zero model time).

Ours: instances of the Memory_Tool scenario played by the ``obedient`` agent, with server processes
reused (``ServerPool``) and started per instance (``pool=None``). The authors' stack starts every
server of an instance afresh (``MCPClient.from_dict`` per run): we time their Memory_Tool attack
server (their script, ``mcp`` 1.x, in their own venv) from spawn to a listed tool set, and multiply
by the servers an instance needs — a LOWER bound on their per-instance overhead (it leaves out the
npx filesystem server, LangChain and the log handling).

    PYTHONPATH=src python benchmarks/msb_harness.py [--n 20] [--data ../shared/data/msb]

Their checkout: ``$MSB_AUTHORS_DIR`` (default /tmp/msb-authors); their venv python:
``$MSB_AUTHORS_PYTHON`` (default /tmp/msb-authors-venv/bin/python).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import tempfile
import time
from pathlib import Path

from iclr26.evaluation._toolbox import Toolbox
from iclr26.evaluation.agent import MCPStdioServer
from iclr26.msb import ServerPool, enumerate_instances, load_msb, run_instance, scripted_agent
from iclr26.msb._harness import server_args


def ours(insts, data, pooled: bool) -> float:
    """Mean seconds per instance."""
    agent = scripted_agent("obedient")
    pool = ServerPool() if pooled else None
    t0 = time.perf_counter()
    try:
        for inst in insts:
            with tempfile.TemporaryDirectory(prefix="msb-") as ws:
                ep = run_instance(agent, inst, ws, information=data.information, pool=pool)
                assert ep.status == "complete", ep.error
    finally:
        if pool is not None:
            pool.close()
    return (time.perf_counter() - t0) / len(insts)


def their_spawn(repeats: int) -> float | None:
    """Median seconds from spawning their Memory_Tool server to its listed tools."""
    root = Path(os.environ.get("MSB_AUTHORS_DIR", "/tmp/msb-authors"))
    python = Path(os.environ.get("MSB_AUTHORS_PYTHON", "/tmp/msb-authors-venv/bin/python"))
    mem = root / "data/tools/attack_tools/llm_enhancement/Memory_Tool"
    if not (python.is_file() and (mem / "main-name_overlap.py").is_file()):
        return None
    times = []
    for _ in range(repeats):
        spec = MCPStdioServer(
            str(python), [str(mem / "main-name_overlap.py"), "name_overlap", "modify_data", "x"], cwd=str(mem)
        )
        t0 = time.perf_counter()
        with Toolbox([spec]) as box:
            assert box.schemas
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--data", default=os.environ.get("ICLR26_MSB_DATA", "../shared/data/msb"))
    a = ap.parse_args()
    data = load_msb(a.data)
    insts = [i for i in enumerate_instances(data, agents=["llm_enhancement"]) if i.tool == "Memory_Tool"]
    insts = insts[:: max(1, len(insts) // a.n)][: a.n]
    servers_per_instance = statistics.mean(len(server_args(i)) for i in insts)
    pooled = ours(insts, data, True)
    fresh = ours(insts[: max(2, a.n // 4)], data, False)
    spawn = their_spawn(3)
    report = {
        "instances": len(insts),
        "servers_per_instance": round(servers_per_instance, 2),
        "ours_pooled_s_per_instance": round(pooled, 3),
        "ours_pooled_instances_per_s": round(1 / pooled, 2),
        "ours_fresh_servers_s_per_instance": round(fresh, 3),
        "their_server_spawn_s": None if spawn is None else round(spawn, 3),
        "their_lower_bound_s_per_instance": None if spawn is None else round(spawn * servers_per_instance, 3),
        "ratio_lower_bound": None if spawn is None else round(spawn * servers_per_instance / pooled, 1),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()

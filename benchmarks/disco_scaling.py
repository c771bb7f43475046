"""DISCO scaling: ``iclr26.disco`` against the authors' implementation (clustpy), time and peak memory.

Every measurement runs in its own subprocess, so the peak resident memory (``ru_maxrss``) it reports
belongs to that one computation (the data and imports are included; the baseline after loading them
is printed too). The data: isotropic Gaussian blobs (5 centres) plus 10 % uniform noise labelled
``-1``, scored with the ground-truth labels, ``min_points=5``.

Times are of *warm* calls: each subprocess makes one untimed call first (imports, caches, numba
compilation), then ``--repeats`` timed calls, and reports the fastest (wall clock, and the CPU time
of that process beside it: on a shared machine the CPU time is less sensitive to other jobs). The
1-minute load average at the end of each measurement is printed beside it. Both implementations
write their per-point scores, and the table gives the largest per-point difference, not only that
of the means.

The peer environment (the authors' code, ``clustpy==0.0.3``; its declared dependencies pull a CUDA
build of torch, which DISCO does not need)::

    python3.11 -m venv /work/peers/disco-venv
    /work/peers/disco-venv/bin/pip install numpy scipy scikit-learn pandas matplotlib tqdm hdbscan
    /work/peers/disco-venv/bin/pip install --no-deps clustpy==0.0.3
    /work/peers/disco-venv/bin/pip install --no-deps -e /work/main   # only for running tests there

Run (from the repository root)::

    .venv/bin/python benchmarks/disco_scaling.py                       # the full table
    .venv/bin/python benchmarks/disco_scaling.py --peer-sizes 1000 2000 --our-sizes 50000 --dims 2
    # the issue's table: 10k with the peer at d = 2, 10, 30, ours alone at 200k in 10-D
    .venv/bin/python benchmarks/disco_scaling.py --peer-python /tmp/disco-venv/bin/python \
        --peer-sizes 10000 --our-sizes --dims 2 10 30
    .venv/bin/python benchmarks/disco_scaling.py --peer-sizes --our-sizes 200000 --dims 10
    # the MST methods against each other (what ``method="auto"`` is based on)
    .venv/bin/python benchmarks/disco_scaling.py --peer-sizes --our-sizes 10000 --dims 2 10 30 \
        --methods boruvka hdbscan prim

Without the peer environment the script prints a note and measures ours alone.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

DEFAULT_PEER_PYTHON = "/work/peers/disco-venv/bin/python"
MIN_POINTS = 5


def _make_data(n: int, d: int, seed: int):
    import numpy as np
    from sklearn.datasets import make_blobs

    n_noise = n // 10
    X, y = make_blobs(
        n_samples=n - n_noise,
        n_features=d,
        centers=5,
        cluster_std=1.0,
        center_box=(-20, 20),
        random_state=seed,
    )
    rng = np.random.default_rng(seed)
    noise = rng.uniform(X.min(0), X.max(0), size=(n_noise, d))
    return np.vstack([X, noise]), np.concatenate([y, np.full(n_noise, -1)])


def _worker(impl: str, n: int, d: int, seed: int, repeats: int, out: str) -> None:
    """Run one measurement in this process (a warm-up call, then ``repeats`` timed calls), write the
    per-point scores to ``out`` (.npy) and print a JSON line."""
    import resource
    import time

    import numpy as np

    X, y = _make_data(n, d, seed)
    if impl.startswith("ours"):  # "ours" or "ours:<MST method>"
        from functools import partial

        from iclr26.disco import disco_samples

        disco_samples = partial(disco_samples, method=impl.partition(":")[2] or "auto")
    else:
        from clustpy.metrics.internal.disco import disco_samples
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    samples = np.asarray(disco_samples(X, y, MIN_POINTS), dtype=float)  # warm-up, untimed
    times = []
    cpu = []
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        samples = np.asarray(disco_samples(X, y, MIN_POINTS), dtype=float)
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB -> MiB on Linux
    np.save(out, samples)
    print(
        json.dumps(
            {
                "impl": impl,
                "n": n,
                "d": d,
                "seconds": min(times),
                "cpu_seconds": min(cpu),
                "load_avg_1min": os.getloadavg()[0],
                "peak_mib": peak,
                "base_mib": base,
                "score": float(samples.mean()),
                "samples": out,
            }
        )
    )


def _measure(python: str, impl: str, n: int, d: int, seed: int, timeout: float, repeats: int = 2) -> dict:
    import tempfile

    out = str(Path(tempfile.mkdtemp(prefix="disco-bench-")) / f"{impl}-{n}-{d}.npy")
    cmd = [
        python,
        str(Path(__file__).resolve()),
        "--worker",
        impl,
        str(n),
        str(d),
        str(seed),
        str(repeats),
        out,
    ]
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f} s"}
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        return {"error": f"exit {proc.returncode}: {tail[0][:120]}"}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _peer_available(python: str) -> str | None:
    """None when the peer imports, else the reason it does not."""
    if not Path(python).exists():
        return f"{python} does not exist (see this script's docstring to create the peer env)"
    proc = subprocess.run(
        [python, "-c", "import clustpy.metrics.internal.disco"], capture_output=True, text=True, timeout=120
    )
    if proc.returncode != 0:
        return "clustpy does not import: " + (proc.stderr.strip().splitlines() or ["?"])[-1]
    return None


def _available_mib() -> float:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("inf")


def _fmt(x: float | None, spec: str) -> str:
    width = int("".join(ch for ch in spec.split(".")[0] if ch.isdigit()) or 0)
    return "-".rjust(width) if x is None else format(x, spec)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--worker", nargs=6, help=argparse.SUPPRESS)
    p.add_argument("--repeats", type=int, default=2, help="timed warm calls per measurement (best kept)")
    p.add_argument("--peer-python", default=DEFAULT_PEER_PYTHON)
    p.add_argument("--peer-sizes", type=int, nargs="*", default=[1000, 2000, 5000, 10000, 20000])
    p.add_argument(
        "--our-sizes",
        type=int,
        nargs="*",
        default=[50000, 100000, 200000],
        help="sizes measured for ours alone (beyond the peer's)",
    )
    p.add_argument("--dims", type=int, nargs="*", default=[2, 10, 30])
    p.add_argument(
        "--methods",
        nargs="*",
        default=["auto"],
        help="our MST methods to time (auto, boruvka, hdbscan, prim); the peer runs beside the first",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--timeout", type=float, default=1800.0, help="seconds per measurement")
    p.add_argument(
        "--peer-max-mib",
        type=float,
        default=None,
        help="skip the peer where its estimated memory exceeds this (default: 85%% of available)",
    )
    p.add_argument("--json", type=Path, default=None, help="also write the rows here")
    args = p.parse_args(argv)

    if args.worker:
        impl, n, d, seed, repeats, out = args.worker
        _worker(impl, int(n), int(d), int(seed), int(repeats), out)
        return 0

    why_no_peer = _peer_available(args.peer_python)
    if why_no_peer:
        print(f"NOTE: the authors' implementation is not measured: {why_no_peer}")
    rows = []
    for d in args.dims:
        for n in sorted(set(args.peer_sizes) | set(args.our_sizes)):
            theirs: dict = {"error": "peer not installed"} if why_no_peer else {}
            if not why_no_peer:
                if n not in args.peer_sizes:
                    theirs = {"error": "not run (beyond peer sizes)"}
                else:
                    # clustpy holds about four n x n float64 matrices at its peak.
                    need = 4 * 8 * n * n / 2**20 + 300
                    limit = args.peer_max_mib if args.peer_max_mib is not None else 0.85 * _available_mib()
                    if need > limit:
                        theirs = {
                            "error": f"skipped: needs ~{need / 1024:.1f} GiB, limit {limit / 1024:.1f} GiB"
                        }
                    else:
                        theirs = _measure(
                            args.peer_python, "clustpy", n, d, args.seed, args.timeout, args.repeats
                        )
            for i, method in enumerate(args.methods):
                impl = "ours" if method == "auto" else f"ours:{method}"
                ours = _measure(sys.executable, impl, n, d, args.seed, args.timeout, args.repeats)
                row = {"n": n, "d": d, "method": method, "ours": ours, "clustpy": theirs if i == 0 else {}}
                rows.append(row)
                _print_row(row, header=len(rows) == 1)
    if args.json:
        from iclr26.store import atomic_write_json

        atomic_write_json(args.json, rows)
    return 0


def _print_row(row: dict, header: bool) -> None:
    if header:
        print(
            f"{'n':>7} {'d':>3} {'method':>8} | {'ours s':>8} {'ours CPU s':>10} {'ours MiB':>9} |"
            f" {'clustpy s':>9} {'clustpy MiB':>11} | {'speed-up':>8} {'mem ratio':>9} |"
            f" {'max|pt diff|':>12} {'load':>5}  note"
        )
    import numpy as np

    o, t = row["ours"], row["clustpy"]
    speed = mem = diff = None
    if "seconds" in o and "seconds" in t:
        speed = t["seconds"] / o["seconds"]
        mem = t["peak_mib"] / o["peak_mib"]
        diff = float(np.max(np.abs(np.load(o["samples"]) - np.load(t["samples"]))))
        row["max_point_diff"] = diff
    note = "; ".join(x["error"] for x in (o, t) if "error" in x)
    print(
        f"{row['n']:>7} {row['d']:>3} {row['method']:>8} | {_fmt(o.get('seconds'), '8.2f')}"
        f" {_fmt(o.get('cpu_seconds'), '10.2f')} {_fmt(o.get('peak_mib'), '9.0f')} |"
        f" {_fmt(t.get('seconds'), '9.2f')} {_fmt(t.get('peak_mib'), '11.0f')} |"
        f" {_fmt(speed, '8.1f')} {_fmt(mem, '9.1f')} | {_fmt(diff, '12.1e')}"
        f" {_fmt(o.get('load_avg_1min'), '5.1f')}  {note}",
        flush=True,
    )


if __name__ == "__main__":
    raise SystemExit(main())

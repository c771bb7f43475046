"""Throughput of iclr26.sandbox against bare ``subprocess.run`` (the cost of the isolation, as a ratio).

A trivial Python and a trivial C++ program are compiled once and run N times one after the other, then
N times in a 2-worker batch; the same N runs are done with bare ``subprocess.run`` (no isolation, no
limits). Prints executions per second and the ratio; asserts nothing.

    PYTHONPATH=src python benchmarks/sandbox_throughput.py [N]
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time

from iclr26.sandbox import Job, Sandbox, isolation_report
from iclr26.sandbox._isolation import SANDBOX_PATH

PROGRAMS = {
    "python": "print(int(input()) + 1)\n",
    "cpp": '#include <cstdio>\nint main(){int x;std::scanf("%d",&x);std::printf("%d\\n",x+1);}\n',
}


def bare(argv: list[str], n: int, cwd: str) -> float:
    t = time.perf_counter()
    for i in range(n):
        r = subprocess.run(argv, input=f"{i}\n", capture_output=True, text=True, cwd=cwd)
        assert r.stdout == f"{i + 1}\n"
    return n / (time.perf_counter() - t)


def main(n: int = 100) -> None:
    print(f"{n} runs per program; isolation: {isolation_report()}; CPUs: {os.cpu_count()}")
    print(
        f"{'language':8s} {'bare/s':>8s} {'sandbox/s':>10s} {'ratio':>6s} {'batch(2)/s':>11s} {'ratio':>6s}"
    )
    with Sandbox(time_limit=5.0) as sb:
        for lang, src in PROGRAMS.items():
            prog = sb.compile(src, lang)
            assert prog.ok, prog.compile.stderr
            python = shutil.which("python3", path=SANDBOX_PATH)  # the interpreter the sandbox runs
            argv = [python, "-B", "main.py"] if lang == "python" else ["./main"]
            base = bare(argv, n, prog.build_dir)
            t = time.perf_counter()
            for i in range(n):
                r = sb.run(prog, stdin=f"{i}\n")
                assert r.stdout == f"{i + 1}\n", r
            seq = n / (time.perf_counter() - t)
            t = time.perf_counter()
            results = sb.run_many([Job(src, lang, f"{i}\n") for i in range(n)], workers=2)
            assert all(r.stdout == f"{i + 1}\n" for i, r in enumerate(results))
            batch = n / (time.perf_counter() - t)
            print(f"{lang:8s} {base:8.1f} {seq:10.1f} {base / seq:6.2f} {batch:11.1f} {base / batch:6.2f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100)

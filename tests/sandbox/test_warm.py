"""Warm Python workers: the same outcomes as a fresh ``python3`` per run, and no weaker isolation."""

import os
import subprocess
import time

import pytest

from iclr26.sandbox import Sandbox
from iclr26.sandbox._sandbox import WARM_NOTE

pytestmark = pytest.mark.skipif(os.getuid() != 0, reason="warm workers are used as root only")
# 2 s and 128 MiB: a fresh interpreter that fills its memory must reach the limit before the clock on a
# loaded machine, or the two would differ for reasons of load
LIMITS = dict(time_limit=2.0, memory_limit=128 << 20, output_limit=1 << 20, processes_limit=16)

# name -> (source, stdin): ordinary programs, the interpreter's exit paths, and hostile ones
PROGRAMS = {
    "echo": ("import sys\nfor line in sys.stdin:\n    print(int(line) * 2)\n", "1\n2\n3\n"),
    "input": ("a, b = map(int, input().split())\nprint(a + b)\n", "2 40\n"),
    "no_newline": ("import sys\nsys.stdout.write('x')\n", ""),
    "stderr": ("import sys\nprint('out')\nprint('err', file=sys.stderr)\n", ""),
    "exception": ("def f():\n    raise ValueError('bad')\nf()\n", ""),
    "exit_code": ("import sys\nprint('before')\nsys.exit(3)\n", ""),
    "exit_text": ("import sys\nsys.exit('bye')\n", ""),
    "exit_none": ("raise SystemExit\n", ""),
    "exit_big": ("raise SystemExit(256 + 7)\n", ""),
    "eof": ("input()\n", ""),
    "recursion_depth": (  # the depth a program reaches, and the limit it sees, are a script's
        "import sys\ndef f(n):\n    try:\n        return f(n + 1)\n"
        "    except RecursionError:\n        return n\n"
        "print(f(1), sys.getrecursionlimit())\nsys.setrecursionlimit(3000)\n"
        "print(f(1), sys.getrecursionlimit())\n",
        "",
    ),
    "recursion_error": ("def f(n):\n    return f(n + 1)\nf(0)\n", ""),
    "atexit": ("import atexit\natexit.register(print, 'at exit')\nprint('main', end=' ')\n", ""),
    "del_at_exit": (
        "class A:\n    def __del__(self):\n        print('deleted')\na = A()\nprint('made')\n",
        "",
    ),
    "thread": (
        "import threading, time\n"
        "threading.Thread(target=lambda: (time.sleep(0.2), print('thread'))).start()\nprint('main')\n",
        "",
    ),
    "own_stdout": ("import os\nout = open(1, 'w', closefd=False)\nout.write('via fd 1')\n", ""),
    "name_main": ("if __name__ == '__main__':\n    import sys\n    print(__name__, sys.argv[0][-8:])\n", ""),
    "loop": ("while True:\n    pass\n", ""),
    "alloc": ("x = bytearray(10 * 1024**3)\nprint(len(x))\n", ""),
    "print_flood": ("import sys\nb = 'x' * (1 << 20)\nfor _ in range(64):\n    sys.stdout.write(b)\n", ""),
    "segv": ("import ctypes\nctypes.string_at(0)\n", ""),
    "fork_bomb": (
        "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n",
        "",
    ),
    "network": ("import socket\nsocket.create_connection(('127.0.0.1', 9), 1)\n", ""),
    "write_outside": ("open('/tmp/iclr26-warm-escape', 'w')\n", ""),
    "syntax": ("def f(:\n", ""),
}


def _outcome(result, build_dir: str):
    if result.status in ("timeout", "memory", "output_limit"):
        # cut short by a limit: whether the kill or the program's own exit (e.g. 120 when stdout's pipe
        # closes under it) comes first is a race in either mode
        return (result.status,)
    text = (result.stdout + "\x00" + result.stderr).replace(build_dir, "BUILD")
    return result.status, result.exit_code, result.signal, text


@pytest.fixture(scope="module")
def pair():
    with Sandbox(**LIMITS, warm_workers=True) as warm, Sandbox(**LIMITS) as cold:
        assert warm.warm_workers and not cold.warm_workers
        yield warm, cold


def test_warm_and_fresh_interpreters_give_the_same_outcomes(pair, need):
    need("python")
    warm, cold = pair
    names = list(PROGRAMS)
    jobs = [(PROGRAMS[n][0], "python", PROGRAMS[n][1]) for n in names]
    got = {}
    for sb in (warm, cold):
        results = sb.run_many(jobs, workers=2)
        got[sb] = {
            n: _outcome(r, sb.compile(src, "python").build_dir)
            for n, r, (src, _, _) in zip(names, results, jobs)
        }
    for n in names:
        assert got[warm][n] == got[cold][n], n
    expected = {"loop": "timeout", "alloc": "memory", "print_flood": "output_limit", "segv": "runtime_error"}
    for n, status in expected.items():
        assert got[warm][n][0] == status, n
    assert got[warm]["thread"][3] == "main\nthread\n\x00"
    assert got[warm]["exit_big"][1] == 7
    assert not os.path.exists("/tmp/iclr26-warm-escape")


def test_each_warm_run_has_its_own_uid_folder_and_environment(pair, need):
    need("python")
    warm, _ = pair
    src = (
        "import os\nprint(os.getuid(), os.getgid(), os.getgroups(), os.getcwd(), sorted(os.environ))\n"
        "print(os.listdir('.'))\nopen('mine', 'w').write('x')\n"
        "for p in ('..', '../..', os.path.dirname(__file__)):\n"
        "    try:\n        open(os.path.join(p, 'planted'), 'w'); print('WROTE', p)\n"
        "    except OSError as e:\n        print('refused', e.errno)\n"
    )
    a, b = warm.run_many([(src, "python"), (src, "python")], workers=1)
    assert a.status == b.status == "ok" and a.isolation.endswith(WARM_NOTE)
    first, second = a.stdout.splitlines(), b.stdout.splitlines()
    uid_a, uid_b = (int(x.split()[0]) for x in (first[0], second[0]))
    assert uid_a != uid_b and uid_a >= 2_000_000_000
    assert first[0].split()[3] != second[0].split()[3]  # own working folder
    assert "['HOME', 'LANG', 'LC_ALL', 'PATH', 'TMPDIR']" in first[0] and "[]" in first[0]
    assert first[1] == second[1] == "[]"  # the earlier run's file is not there
    assert "WROTE" not in a.stdout + b.stdout


def test_a_warm_run_cannot_signal_its_worker_and_leaves_nothing_running(pair, need):
    need("python")
    warm, _ = pair
    src = (
        "import os, signal, subprocess\n"
        "subprocess.Popen(['sleep', '60'], start_new_session=True)\n"
        "for target in (os.getppid(), 1):\n"
        "    try:\n        os.kill(target, signal.SIGKILL); print('sent')\n"
        "    except OSError as e:\n        print('refused', e.errno)\n"
        "print(os.getuid())\n"
    )
    r = warm.run(src, "python")
    assert r.status == "ok", r
    lines = r.stdout.split("\n")
    assert lines[:2] == ["refused 1", "refused 1"]  # EPERM: the worker is root, the run is not
    uid = int(lines[2])
    deadline = time.monotonic() + 3
    while True:
        ps = subprocess.run(["ps", "-u", str(uid), "-o", "pid=,stat="], capture_output=True, text=True)
        live = [ln for ln in ps.stdout.splitlines() if ln.split()[1][0] != "Z"]
        if not live or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert live == []
    assert warm.run("print(6 * 7)", "python").stdout == "42\n"  # the worker survived


def test_close_stops_the_workers(need):
    need("python")
    sb = Sandbox(**LIMITS, warm_workers=True)
    sb.run_many([("print(1)", "python")] * 4, workers=2)
    workers = list(sb._warm_all)
    assert 1 <= len(workers) <= 2
    sb.close()
    assert all(w.proc.poll() is not None for w in workers)
    assert not os.path.exists(sb._runs)


def test_warm_workers_must_be_a_bool():
    with pytest.raises(ValueError, match="warm_workers"):
        Sandbox(warm_workers="yes")

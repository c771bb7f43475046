"""Warm Python workers, isolation per submission and per process: the same outcomes as a fresh
``python3`` (or a launched program) per run; what the tests of one submission share, and what they
do not."""

import os
import re
import signal
import subprocess
import time

import pytest

from iclr26.sandbox import Job, Sandbox
from iclr26.sandbox._sandbox import PROCESS_NOTE, SUBMISSION_NOTE, WARM_NOTE

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
    "fork_returns": (  # the child runs to the program's end too
        "import os\npid = os.fork()\nprint('parent' if pid else 'child')\nif pid:\n    os.waitpid(pid, 0)\n",
        "",
    ),
    "hook_none": ("import sys\nsys.excepthook = None\nraise ValueError('x')\n", ""),  # "Error in ..."
    "hook_missing": ("import sys\ndel sys.excepthook\nraise ValueError('x')\n", ""),
    "closed_stdout": ("import sys\nprint('x')\nsys.stdout.close()\n", ""),  # exit 0, as python3
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


@pytest.fixture(scope="module")
def per_submission():
    with Sandbox(**LIMITS, isolation="submission") as sb:
        assert sb.isolation == "submission"
        yield sb


@pytest.fixture(scope="module")
def per_process():
    with Sandbox(**LIMITS, isolation="process") as sb:
        if sb.isolation != "process":
            pytest.skip("isolation per process needs a cgroup")
        yield sb


def test_warm_and_fresh_interpreters_give_the_same_outcomes(pair, per_submission, need):
    """Warm per-test runs, and each program as a submission of two identical tests (each test a
    child of the submission's supervisor; the second after whatever the first did), match a fresh
    ``python3`` per run."""
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
    twice = per_submission.run_many([job for job in jobs for _ in range(2)], workers=2)
    for i, n in enumerate(names):
        assert got[warm][n] == got[cold][n], n
        build = per_submission.compile(jobs[i][0], "python").build_dir
        first, second = twice[2 * i : 2 * i + 2]
        assert _outcome(first, build) == _outcome(second, build) == got[cold][n], n
        assert first.isolation.endswith(SUBMISSION_NOTE) or first.status == "compile_error"
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


# A submission's tests (isolation="submission"): each its own process, clock and limits; what one
# test leaves behind other than files in the shared folder does not reach the next.
C_PROGRAMS = {
    "echo": (
        '#include <stdio.h>\nint main(){int x; while(scanf("%d",&x)==1) printf("%d\\n",2*x);}\n',
        "1\n2\n",
    ),
    "exit_code": ("int main(){return 3;}\n", ""),
    "segv": ("int main(){volatile int *p = 0; *p = 1; return 0;}\n", ""),
    "loop": ("int main(){for(;;);}\n", ""),
    "alloc": (
        "#include <stdlib.h>\n#include <string.h>\n"
        "int main(){for(;;){char *p = malloc(1 << 20); if(!p) return 1; memset(p, 1, 1 << 20);}}\n",
        "",
    ),
    "flood": (
        "#include <stdio.h>\n#include <string.h>\n"
        "int main(){static char b[1 << 20]; memset(b, 'x', sizeof b);"
        " for(int i = 0; i < 64; i++) fwrite(b, 1, sizeof b, stdout);}\n",
        "",
    ),
    "fork_bomb": ("#include <unistd.h>\nint main(){for(;;) fork();}\n", ""),
    "network": (
        "#include <stdio.h>\n#include <string.h>\n#include <errno.h>\n#include <arpa/inet.h>\n"
        "#include <sys/socket.h>\nint main(){int s = socket(AF_INET, SOCK_STREAM, 0);"
        " struct sockaddr_in a = {0}; a.sin_family = AF_INET; a.sin_port = htons(9);"
        " a.sin_addr.s_addr = htonl(0x7f000001);"
        ' if(connect(s, (struct sockaddr*)&a, sizeof a)){printf("%s\\n", strerror(errno)); return 1;}'
        " return 0;}\n",
        "",
    ),
    # what a launched program starts with: ignored/blocked signals, privileges, limits
    "process": (
        "#include <stdio.h>\n#include <string.h>\n#include <unistd.h>\n#include <sys/stat.h>\n"
        'int main(){char l[256]; FILE *f = fopen("/proc/self/status", "r");'
        ' while(fgets(l, sizeof l, f)) if(!strncmp(l, "Sig", 3) || !strncmp(l, "Cap", 3)'
        ' || !strncmp(l, "NoNewPrivs", 10) || !strncmp(l, "Groups", 6)) fputs(l, stdout);'
        ' f = fopen("/proc/self/limits", "r"); while(fgets(l, sizeof l, f)) fputs(l, stdout);'
        ' printf("umask %o uid>0 %d fds", umask(0), getuid() > 0);'
        ' for(int fd = 0; fd < 64; fd++){struct stat st; if(!fstat(fd, &st)) printf(" %d", fd);}'
        ' puts(""); return 0;}\n',
        "",
    ),
}


def _c_outcome(result):
    if result.status in ("timeout", "memory", "output_limit"):
        return (result.status,)
    return result.status, result.exit_code, result.signal, result.stdout, result.stderr


@pytest.mark.parametrize("mode", ["per_submission", "per_process"])
def test_launched_programs_give_the_same_outcomes_per_submission(mode, request, need):
    """A compiled program exec'd in each test's child (also with isolation per process, which shares
    a process between a Python program's tests only): the same outcomes (and the same signal
    dispositions, capabilities, limits and descriptors) as a launched run of its own."""
    need("c")
    names = list(C_PROGRAMS)
    jobs = [(C_PROGRAMS[n][0], "c", C_PROGRAMS[n][1]) for n in names]
    with Sandbox(**LIMITS) as per_test:
        fresh = per_test.run_many(jobs, workers=2)
    twice = request.getfixturevalue(mode).run_many([job for job in jobs for _ in range(2)], workers=2)
    for i, n in enumerate(names):
        assert _c_outcome(twice[2 * i]) == _c_outcome(twice[2 * i + 1]) == _c_outcome(fresh[i]), n
    got = dict(zip(names, fresh))
    assert [got[n].status for n in ("loop", "alloc", "flood", "segv")] == [
        "timeout",
        "memory",
        "output_limit",
        "runtime_error",
    ]
    assert got["echo"].stdout == "2\n4\n" and "unreachable" in got["network"].stdout
    # Python ignores SIGPIPE and SIGXFSZ: a launched program gets their default. Other ignored signals
    # are inherited from the caller, as with subprocess (e.g. SIGHUP under nohup).
    ignored = int(re.search(r"SigIgn:\t([0-9a-f]+)", got["process"].stdout).group(1), 16)
    python_only = (1 << (signal.SIGPIPE - 1)) | (1 << (signal.SIGXFSZ - 1))
    assert ignored == _ignored_signals_of_this_process() & ~python_only


def _ignored_signals_of_this_process() -> int:
    with open("/proc/self/status") as f:
        return int(re.search(r"SigIgn:\t([0-9a-f]+)", f.read()).group(1), 16)


def test_what_the_tests_of_a_submission_share(per_submission, need):
    """Shared: the folder (files an earlier test wrote) and the uid. Not shared: the program's memory
    (each test starts from the compiled program), processes (all killed between tests, so their
    memory is freed before the next test's limit counts), the clock."""
    need("python")
    src = (
        "import builtins, os, sys\n"
        "step = input()\n"
        "print(os.getuid(), sorted(os.listdir('.')), hasattr(builtins, 'planted'))\n"
        "builtins.planted = True\n"
        "if step == 'leave':\n"
        "    pid = os.fork()\n"
        "    if pid == 0:\n"
        "        os.setsid()\n"
        "        hold = bytearray(80 << 20)\n"  # 80 MiB of 128: a second one would not fit
        "        import time; time.sleep(30)\n"
        "        os._exit(0)\n"
        "    open('pid', 'w').write(str(pid))\n"
        "    import time; time.sleep(0.3)\n"
        "else:\n"
        "    pid = int(open('pid').read())\n"
        "    try:\n"  # killed: gone, or a zombie until the init it was left to reaps it
        "        print('alive' if open(f'/proc/{pid}/stat').read().split()[2] != 'Z' else 'gone')\n"
        "    except FileNotFoundError:\n"
        "        print('gone')\n"
        "    try:\n"
        "        os.kill(os.getppid(), 9); print('sent')\n"  # the supervisor is root: refused
        "    except PermissionError:\n"
        "        print('refused')\n"
        "    hold = bytearray(80 << 20)\n"
        "    print(len(hold) >> 20)\n"
    )
    first, second, third = per_submission.run_tests(src, "python", ["leave\n", "check\n", "check\n"])
    assert first.status == "ok", first
    uid, listing, planted = first.stdout.split("\n")[0].split(" ", 1)[0], "[]", "False"
    assert first.stdout.split("\n")[0] == f"{uid} {listing} {planted}"
    for later in (second, third):
        assert later.status == "ok", later
        assert later.stdout.split("\n") == [f"{uid} ['pid'] False", "gone", "refused", "80", ""]


@pytest.mark.parametrize("mode", ["per_submission", "per_process"])
def test_each_test_of_a_submission_has_its_own_clock_and_cpu_limit(mode, request, need):
    need("python")
    sb = request.getfixturevalue(mode)
    spin = (
        "import time\nlimit, t = float(input()), time.process_time()\n"
        "while time.process_time() - t < limit: pass\n"
    )
    results = sb.run_tests(spin, "python", ["0.1", "0.1", "0.1", "1e9", "0.01"], time_limit=2.0)
    assert [r.status for r in results] == ["ok", "ok", "ok", "timeout", "ok"]
    assert all(0.09 < r.cpu_time < 0.3 for r in results[:3])  # each test's own, not the sum


def test_one_process_runs_a_submissions_tests_with_a_fresh_interpreters_outcomes(per_process, need):
    """Isolation per process: every program, three times in one submission (each test after
    whatever the earlier ones did in the same interpreter: exits, crashes, timeouts, threads, forks,
    atexit functions, a changed recursion limit), gives the outcome of a fresh ``python3``."""
    need("python")
    names = list(PROGRAMS)
    jobs = [(PROGRAMS[n][0], "python", PROGRAMS[n][1]) for n in names]
    with Sandbox(**LIMITS) as cold:
        fresh = {
            n: _outcome(r, cold.compile(j[0], "python").build_dir)
            for n, r, j in zip(names, cold.run_many(jobs), jobs)
        }
    for i, n in enumerate(names):
        build = per_process.compile(jobs[i][0], "python").build_dir
        results = per_process.run_tests(jobs[i][0], "python", [jobs[i][2]] * 3)
        assert [_outcome(r, build) for r in results] == [fresh[n]] * 3, n
        assert results[0].isolation.endswith(PROCESS_NOTE) or results[0].status == "compile_error"


def test_what_the_tests_of_one_process_share(per_process, need):
    """Shared with the earlier tests: the interpreter's modules (LiveCodeBench's runner shares them
    too), the pid, the folder. Not shared: ``__main__``, builtins (restored for each test),
    stdin/stdout, what a test left running (killed, with the runner: the next test gets a new
    process), the root supervisor."""
    need("python")
    src = (
        "import builtins, os, time\n"
        "step = input()\n"
        "print(os.getpid(), hasattr(builtins, 'planted'), 'g' in globals())\n"
        "builtins.planted = True\n"
        "g = 1\n"
        "if step == 'leave':\n"
        "    if os.fork() == 0:\n"
        "        time.sleep(30)\n"
        "        os._exit(0)\n"
        "elif step == 'kill':\n"
        "    try:\n"
        "        os.kill(os.getppid(), 9); print('sent')\n"
        "    except PermissionError:\n"
        "        print('refused')\n"
    )
    results = per_process.run_tests(src, "python", ["a\n", "b\n", "leave\n", "c\n", "kill\n"])
    assert [r.status for r in results] == ["ok"] * 5, results
    lines = [r.stdout.split("\n")[0].split() for r in results]
    assert [line[1:] for line in lines] == [["False", "False"]] * 5
    pids = [line[0] for line in lines]
    assert pids[0] == pids[1] == pids[2] != pids[3] == pids[4]  # a new process after "leave"
    assert results[4].stdout.split("\n")[1] == "refused"


def test_a_program_that_breaks_modules_or_builtins_does_not_break_the_runner(per_process, need):
    """Builtins are restored for each test, and a test that changes a module the runner uses gets the
    next test a fresh process: every test gets a fresh interpreter's outcome. Other modules stay as
    the earlier test left them (as in LCB)."""
    need("python")
    src = (
        "import builtins, io, json, os, socket, statistics\n"
        "print(input(), json.dumps is None, hasattr(statistics, 'planted'), os.getpid())\n"
        "statistics.planted = 1\n"
        "if input() == 'break':\n"
        "    json.dumps = os.dup2 = os.getpid = os.environ = socket.recv_fds = io.TextIOWrapper = None\n"
        "builtins.zip = builtins.len = builtins.print = None\n"
    )
    results = per_process.run_tests(src, "python", ["a\nkeep\n", "b\nbreak\n", "c\nkeep\n", "d\nkeep\n"])
    assert [r.status for r in results] == ["ok"] * 4, results
    rows = [r.stdout.split() for r in results]
    settings = (
        "import gc, sys\n"
        "hooks = sys.excepthook is sys.__excepthook__\n"
        "print(sys.get_int_max_str_digits(), gc.isenabled(), sys.gettrace(), hooks)\n"
        "if input() == 'raise':\n"
        "    raise ValueError('x')\n"
        "sys.set_int_max_str_digits(640); gc.disable(); sys.settrace(lambda *a: None)\n"
        "sys.excepthook = sys.__excepthook__ = print\n"
    )
    changed, raised = per_process.run_tests(settings, "python", ["set\n", "raise\n"])
    assert (changed.status, changed.stdout) == ("ok", "4300 True None True\n"), changed
    assert (raised.status, raised.stdout) == ("runtime_error", "4300 True None True\n"), raised
    assert "Traceback" in raised.stderr and "ValueError: x" in raised.stderr  # the default hook again
    assert [row[:3] for row in rows] == [
        ["a", "False", "False"],
        ["b", "False", "True"],  # a module the runner does not use carries over
        ["c", "False", "False"],  # a new process after "break"
        ["d", "False", "True"],
    ]
    assert rows[0][3] == rows[1][3] != rows[2][3] == rows[3][3]


def test_run_many_groups_jobs_by_program(per_submission, need):
    need("python")
    a, b = "print('a', input())", "print('b', input())"
    jobs = [(a, "python", "1"), (b, "python", "2"), (a, "python", "3"), (b, "python", "4")]
    jobs.append(Job(a, "python", "5", files={"f": "x"}))
    results = per_submission.run_many(jobs, workers=2)
    assert [r.stdout for r in results] == ["a 1\n", "b 2\n", "a 3\n", "b 4\n", "a 5\n"]
    assert per_submission.run_tests(a, "python", []) == []


def test_isolation_is_checked_and_falls_back_where_workers_cannot_run(monkeypatch):
    with pytest.raises(ValueError, match="isolation must be 'test', 'submission' or 'process'"):
        Sandbox(isolation="shared")
    with Sandbox(**LIMITS, isolation="process", use_cgroup=False) as sb:
        assert sb.isolation == "submission"  # leftovers of a test could not be found without a cgroup
    with Sandbox(**LIMITS, isolation="submission") as sb:
        with pytest.raises(ValueError, match="inputs must be an iterable"):
            sb.run_tests("print(1)", "python", "1\n")
        with pytest.raises(ValueError, match=r"inputs\[1\] must be str or bytes"):
            sb.run_tests("print(1)", "python", ["1", 2])
    monkeypatch.setattr(os, "getuid", lambda: 1000)  # a non-root caller: a run's uid is the worker's
    for mode in ("submission", "process"):
        with Sandbox(**LIMITS, isolation=mode) as sb:
            assert sb.isolation == "test"


SYSV_SEGMENT = (
    "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\nflags = int(input())\n"
    "print(libc.shmget(0x1C1A26, 4096, flags) >= 0, ctypes.get_errno())\n"
)


@pytest.mark.parametrize(
    "mode, warm, native",
    [
        ("test", False, True),
        ("test", False, False),
        ("test", True, True),
        ("submission", True, True),
        ("process", True, True),
    ],
)
def test_ipc_objects_do_not_outlive_their_run(mode, warm, native, need):
    """A System V segment made with mode 0666 (it outlives its creator) is not there for a later run,
    nor for a later test of the same submission: each run has an IPC namespace of its own. With
    isolation per process the tests of a submission share their process's namespace."""
    need("python")
    create, open_existing = f"{0o1666}\n", "0\n"
    with Sandbox(**LIMITS, isolation=mode, warm_workers=warm, native_launcher=native) as sb:
        made, found = sb.run_tests(SYSV_SEGMENT, "python", [create, open_existing])
        later = sb.run(SYSV_SEGMENT, "python", open_existing)
    assert made.stdout == "True 0\n"
    assert found.stdout == ("True 0\n" if sb.isolation == "process" else "False 2\n")
    assert later.stdout == "False 2\n"  # ENOENT

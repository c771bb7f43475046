"""Warm Python workers: one confined interpreter per concurrent run slot, forking a child for each run.

Starting ``python3`` for every run costs 12-15 ms of CPU here, more than the isolation itself; a
program that only reads a few lines runs in a fraction of that. A warm worker is the same interpreter,
started once with the same flags and environment, confined once in its own network and mount
namespaces (read-only file system; only the folder of warm runs is writable at the mount level). For
each run it forks a child that does, before any of the program's code runs, what the launcher does
before ``exec`` (the host puts it in the run's cgroup first): new session, parent-death signal, working
directory, rlimits, umask, the run's own fresh uid and gid without supplementary groups,
``PR_SET_NO_NEW_PRIVS``, a clean environment, every other descriptor closed. The child then runs the
program as ``python3 -B main.py`` would (``__main__`` module, ``sys.argv``, ``sys.path[0]``,
uncaught exceptions printed by ``sys.excepthook`` with exit code 1, ``SystemExit`` codes, ``atexit``,
flushing at exit, the recursion depth a script reaches) with stdin/stdout/stderr on the run's own
pipes, read by the host as for any run.

Only used as root (each run still gets its own uid, so a run can neither signal nor trace the worker,
which stays root inside its namespaces) and with namespace isolation; see ``Sandbox(warm_workers=...)``.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from types import SimpleNamespace

from ._exec import _Raw, pump, raw_result, read_available
from ._isolation import Cgroup, Confinement, _write, kill_uid

#: Languages that can run in a warm worker (the worker is a Python program).
WARM_LANGUAGES = frozenset({"python"})
#: Seconds a worker may take to start, and to answer a request or report a finished child.
_HANDSHAKE_TIMEOUT = 30.0

# Standard modules imported once by the worker (programs that import them find them loaded); random is
# reseeded in every child by its own fork handler, as a fresh interpreter seeds it at start.
PRELOADED = (
    "array bisect collections copy decimal fractions functools heapq itertools math operator random re "
    "statistics string typing"
).split()

WORKER_SOURCE = (
    r'''"""iclr26.sandbox warm Python worker: forks one child per run (see iclr26/sandbox/_warm.py)."""
import atexit, builtins, ctypes, gc, io, json, os, resource, signal, socket, sys
import importlib.machinery
'''
    + "import "
    + ", ".join(PRELOADED)
    + r'''

_libc = ctypes.CDLL(None, use_errno=True)
_DEFAULT_HOOK = sys.__excepthook__  # the interpreter's own display, whatever a program rebinds
PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS = 1, 38
CLONE_NEWIPC = 0x08000000


def _drop_privileges(uid, rlimits):
    """A System V IPC namespace of its own (IPC objects outlive their creator: a shared namespace would
    let a run leave one for a later run), the run's rlimits, umask, its own uid and gid without
    supplementary groups, no new privileges."""
    if _libc.unshare(CLONE_NEWIPC) != 0:
        raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWIPC)")
    for res, limit in rlimits:
        resource.setrlimit(res, (limit, limit + 1 if res == resource.RLIMIT_CPU else limit))
    os.umask(0o022)
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    if _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(NO_NEW_PRIVS)")


def _use_stdio(stdin, out, err, keep):
    """The run's pipes as fds 0-2; every other descriptor but ``keep`` closed."""
    for target, fd in ((0, stdin), (1, out), (2, err)):
        os.dup2(fd, target)
    os.closerange(3, keep)
    os.closerange(keep + 1, 1 << 20)


def _join_run(cgroup_fds):
    """A new session, killed with its parent, in the run's cgroup (writing "0" to ``cgroup_fds`` adds
    the writing process) before any of the program's code."""
    os.setsid()
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    for fd in cgroup_fds:
        os.write(fd, b"0")


def _setup(req, fds):
    """In the child: wait for the host's go, then confine this process as the launcher would."""
    go, stdin, out, err, errpipe = fds
    _join_run(())  # the host places this process in its cgroup
    if os.read(go, 1) != b"1":  # the host could not place this process in its cgroup
        os._exit(126)
    _use_stdio(stdin, out, err, errpipe)
    os.chdir(req["workdir"])
    _drop_privileges(req["uid"], req["rlimits"])
    os.environ.clear()
    os.environ.update(req["env"])
    sys.argv[:] = [req["path"]]
    sys.path[0] = os.path.dirname(req["path"])
    return errpipe


def _program_frames(tb, path):
    """The traceback from the program's first frame on (the worker's own frames left out)."""
    while tb is not None and tb.tb_frame.f_code.co_filename != path:
        tb = tb.tb_next
    return tb


def _exit_code(code):
    """The exit status the interpreter gives ``raise SystemExit(code)`` (printing a non-int code)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF if -(1 << 63) <= code < (1 << 63) else 255
    try:
        sys.stderr.write(f"{code}\n")
    except Exception:
        pass
    return 1


def _finish(status, main):
    """What the interpreter's shutdown does that a program can observe, then exit; the preloaded
    modules are not torn down (that costs more than most programs' runs, and nothing of them is
    observable)."""
    if "threading" in sys.modules:
        sys.modules["threading"]._shutdown()  # wait for non-daemon threads
    os._exit(_end_test(status, main))


def _end_test(status, main):
    """The end of a program without exiting: atexit functions (then cleared), the program's objects
    finalized (their __del__, files they held), the standard streams flushed; the exit status."""
    atexit._run_exitfuncs()
    atexit._clear()
    main.__dict__.clear()
    gc.collect()
    return _flush_std(status)


def _flush_std(status):
    """Flush the standard streams as the interpreter does at exit: a stream that is None or closed (or
    whose ``closed`` fails) is skipped; a failing flush makes the status 120, as in Py_FinalizeEx."""
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            if stream is None or stream.closed:
                continue
        except Exception:
            continue
        try:
            stream.flush()
        except Exception:
            status = 120
    return status


def _execute(code, namespace):
    exec(code, namespace)


def _depth_reached(n=1):
    try:
        return _depth_reached(n + 1)
    except RecursionError:
        return n


def _reach_below(frames):
    """The depth _depth_reached finds from program code run ``frames + 1`` calls below the caller
    (plus _execute's frame), as the program's code runs below _child or _suite."""
    if frames > 0:
        return _reach_below(frames - 1)
    namespace = {"reach": _depth_reached}
    _execute("depth = reach()", namespace)
    return namespace["depth"]


def _shift_recursion_limit(shift):
    """The program's code runs ``shift`` frames deeper than a script's: raise the limit by that many,
    and let the program see and set the limit a script would."""
    if shift <= 0:
        return
    set_limit, get_limit = sys.setrecursionlimit, sys.getrecursionlimit

    def setrecursionlimit(limit):
        set_limit(limit)  # the builtin's own checks and errors
        set_limit(limit + shift)

    def getrecursionlimit():
        return get_limit() - shift

    set_limit(get_limit() + shift)
    sys.setrecursionlimit, sys.getrecursionlimit = setrecursionlimit, getrecursionlimit


def _run_program(compiled, path, shift):
    """Run the program (its code object, or the exception compiling it raised) as ``python3 -B path``
    would, in a fresh ``__main__``; never returns."""
    _finish(*_run_main(compiled, path, shift))


def _run_main(compiled, path, shift):
    """Run the program in a fresh ``__main__``; its exit status (as the interpreter would give it) and
    that module, whose objects are still alive."""
    main = type(sys)("__main__")
    main.__file__, main.__cached__, main.__builtins__ = path, None, builtins
    main.__loader__ = importlib.machinery.SourceFileLoader("__main__", path)
    sys.modules["__main__"] = main
    _shift_recursion_limit(shift)
    try:
        if isinstance(compiled, BaseException):
            raise compiled
        _execute(compiled, main.__dict__)
        status = 0
    except SystemExit as exc:
        status = _exit_code(exc.code)
    except BaseException as exc:
        _report(exc.with_traceback(_program_frames(exc.__traceback__, path)))
        status = 1
    return status, main


def _report(exc):
    """Print an uncaught exception as the interpreter does (PyErr_Print): through ``sys.excepthook``;
    when that is missing or fails, the default display, with the hook's own error first."""
    try:
        hook = sys.excepthook
    except AttributeError:
        _write_stderr("sys.excepthook is missing\n")
        _DEFAULT_HOOK(type(exc), exc, exc.__traceback__)
        return
    try:
        hook(type(exc), exc, exc.__traceback__)
    except BaseException as failure:  # the hook's frames only (not this one's), as from C
        failure = failure.with_traceback(failure.__traceback__.tb_next)
        if failure.__context__ is exc:  # raised here, not while the program handled exc
            failure.__context__ = None
        _write_stderr("Error in sys.excepthook:\n")
        _DEFAULT_HOOK(type(failure), failure, failure.__traceback__)
        _write_stderr("\nOriginal exception was:\n")
        _DEFAULT_HOOK(type(exc), exc, exc.__traceback__)


def _write_stderr(text):
    try:
        sys.stderr.write(text)
    except Exception:
        pass


def _compile(path):
    """The program's code object, or the exception reading or compiling it raised."""
    try:
        with open(path, "rb") as f:
            return compile(f.read(), path, "exec", dont_inherit=True)
    except BaseException as exc:
        return exc


def _child(req, fds):
    """One run (isolation per test): confine this child, then run the program."""
    try:
        errpipe = _setup(req, fds)
    except BaseException as exc:
        os.write(fds[4], f"{type(exc).__name__}: {exc}".encode())
        os._exit(126)
    os.close(errpipe)
    _run_program(_compile(req["path"]), req["path"], _CHILD_SHIFT)


def _test_child(req, fds, errpipe, cgroup_fds, compiled):
    """One test of a submission, in a child of its supervisor: join the submission's cgroup, take the
    test's pipes, then the run's limits and uid; then run the program (or exec its command)."""
    try:
        _join_run(cgroup_fds)
        _use_stdio(*fds, errpipe)
        _drop_privileges(req["uid"], req["rlimits"])
    except BaseException as exc:
        os.write(errpipe, f"{type(exc).__name__}: {exc}".encode())
        os._exit(126)
    argv = req["argv"]
    if argv is None:
        os.close(errpipe)
        _run_program(compiled, req["path"], _SUITE_SHIFT)
    # Python ignores these two; an ignored signal stays ignored across exec, and a launched program
    # gets the default (subprocess restores them)
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
    os.set_inheritable(errpipe, False)
    try:
        os.execvpe(argv[0], argv, os.environ)
    except BaseException as exc:
        os.write(errpipe, f"{argv[0]}: {type(exc).__name__}: {exc}".encode())
    os._exit(126)


def _suite(req, fds):
    """Supervise a submission (isolation per submission): set up once, then fork one child per test.

    The worker itself does this: it stays root, in its namespaces and outside the submission's cgroup,
    so no test can signal, trace or OOM-kill it, and killing a test's processes spares it. Each
    request on ``conn`` carries one test's stdin, stdout and stderr; the answer is the test child's
    wait status, CPU seconds and peak RSS. Returns when the host closes ``conn``."""
    conn = socket.socket(fileno=fds[0])
    errpipe, cgroup_fds = fds[1], fds[2:]
    try:
        try:
            os.chdir(req["workdir"])
            os.environ.clear()
            os.environ.update(req["env"])
            compiled = None
            if req["argv"] is None:  # a Python program: compiled once, run in each test's child
                sys.argv[:] = [req["path"]]
                sys.path[0] = os.path.dirname(req["path"])
                compiled = _compile(req["path"])
        except BaseException as exc:
            conn.send(json.dumps({"error": f"{type(exc).__name__}: {exc}"}).encode())
            return
        if req["shared"]:
            _shared_suite(req, conn, errpipe, cgroup_fds, compiled)
            return
        while True:
            msg, test_fds, _, _ = socket.recv_fds(conn, 16, 3)
            if not msg:
                return
            try:
                pid = os.fork()
            except OSError as exc:
                conn.send(json.dumps({"error": f"fork: {exc}"}).encode())
                return
            if pid == 0:
                _test_child(req, test_fds, errpipe, cgroup_fds, compiled)  # never returns
            for fd in test_fds:
                os.close(fd)
            _, status, usage = os.wait4(pid, 0)
            conn.send(json.dumps([status, usage.ru_utime + usage.ru_stime, usage.ru_maxrss]).encode())
    finally:
        conn.close()
        for fd in (errpipe, *cgroup_fds):
            os.close(fd)
        os.chdir("/")  # the submission's folder is about to be removed


def _cpu_seconds():
    """CPU seconds of this process and the children it waited for."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _close_except(*keep):
    """Close every descriptor from 3 up except ``keep``."""
    low = 3
    for fd in sorted(keep):
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, 1 << 20)


def _stdio_settings():
    """How the interpreter made fds 0-2's streams at start: ``(name, fd, mode, TextIOWrapper options)``."""
    out = []
    for name, fd, mode in (("stdin", 0, "r"), ("stdout", 1, "w"), ("stderr", 2, "w")):
        s = getattr(sys, "__" + name + "__")
        options = dict(encoding=s.encoding, errors=s.errors, newline="\n", line_buffering=s.line_buffering)
        out.append((name, fd, mode, options | dict(write_through=s.write_through)))
    return out


def _fresh_stdio(settings):
    """New ``sys.stdin``/``stdout``/``stderr`` over fds 0-2 made with ``settings`` (_stdio_settings), so
    nothing an earlier test buffered or replaced carries over."""
    for name, fd, mode, options in settings:
        raw = io.FileIO(fd, mode + "b", closefd=False)
        raw.name = "<" + name + ">"
        new = io.TextIOWrapper(io.BufferedReader(raw) if mode == "r" else io.BufferedWriter(raw), **options)
        new.mode = mode
        setattr(sys, name, new)
        setattr(sys, "__" + name + "__", new)


def _runner(req, ctl, errpipe, cgroup_fds, compiled):
    """Isolation per process: run the submission's tests one after another in this one process, as
    LiveCodeBench's runner does (see Suite). Confined once as a test's child is; then, for each test
    sent on ``ctl``, its pipes become fds 0-2 and the program runs in a fresh ``__main__``. Reports
    ``[exit code, CPU seconds, peak RSS KiB, keep]``. Each test starts from the interpreter's own
    builtins. When the program left threads running, or broke something the runner needs after it,
    this process ends as the program's own would (its exit status then tells the supervisor); it
    also ends after a test that brought its CPU time to the limit or changed a module the runner
    uses (os, io, socket, ...): the next test gets a fresh one."""
    try:
        _join_run(cgroup_fds)
        null = os.open(os.devnull, os.O_RDWR)
        for target in (0, 1, 2):
            os.dup2(null, target)
        home = os.open(".", os.O_RDONLY | os.O_DIRECTORY)
        _close_except(ctl, errpipe, null, home)
        cpu = dict(req["rlimits"]).get(resource.RLIMIT_CPU)
        _drop_privileges(req["uid"], [(r, v) for r, v in req["rlimits"] if r != resource.RLIMIT_CPU])
        hard = resource.RLIM_INFINITY if cpu is None else 2 * cpu + 1
        resource.setrlimit(resource.RLIMIT_CPU, (hard, hard))
    except BaseException as exc:
        os.write(errpipe, f"{type(exc).__name__}: {exc}".encode())
        os._exit(126)
    os.close(errpipe)
    path = req["path"]
    sys.argv[:] = [path]
    search_path = list(sys.path)
    set_limit, get_limit = sys.setrecursionlimit, sys.getrecursionlimit
    base_limit = get_limit()
    excepthook, digits = sys.__excepthook__, sys.get_int_max_str_digits()
    pristine = dict(builtins.__dict__)
    stdio = _stdio_settings()
    # the modules the runner itself uses: a test that changes one of them gets the next test a new runner
    watched = [(m, dict(vars(m))) for m in (os, io, socket, resource, random, json, signal, atexit, gc)]
    # what the runner uses after a program ran, bound now: a program may rebind module attributes
    dup2, getpid, setitimer, dumps, environ = os.dup2, os.getpid, signal.setitimer, json.dumps, os.environ
    channel = socket.socket(fileno=ctl)
    me = getpid()
    while True:
        msg, fds, _, _ = socket.recv_fds(channel, 16, 3)
        if not msg:
            os._exit(0)
        # a test's own CPU limit: this process's CPU time so far plus the limit (whole seconds)
        used = _cpu_seconds()
        if cpu is not None:
            resource.setrlimit(resource.RLIMIT_CPU, (min(hard, int(used) + 1 + cpu), hard))
        for target, fd in zip((0, 1, 2), fds):
            dup2(fd, target)
            os.close(fd)
        _fresh_stdio(stdio)
        os.fchdir(home)
        environ.clear()
        environ.update(req["env"])
        os.umask(0o022)
        sys.argv[:] = [path]
        sys.path[:] = search_path
        sys.setrecursionlimit, sys.getrecursionlimit = set_limit, get_limit
        set_limit(base_limit)
        sys.excepthook = sys.__excepthook__ = excepthook  # the interpreter-wide settings a program
        sys.set_int_max_str_digits(digits)  # may change, as a fresh interpreter starts with them
        sys.settrace(None)
        sys.setprofile(None)
        gc.enable()
        random.seed()  # as a fresh interpreter seeds it
        status, main = _run_main(compiled, path, _SUITE_SHIFT)
        if getpid() != me:  # a child the program forked ran to the program's end: it ends there
            _finish(status, main)  # never returns
        try:
            if "threading" in sys.modules and sys.modules["threading"].active_count() > 1:
                raise RuntimeError("threads left running")
            status = _end_test(status, main)
            builtins.__dict__.clear()  # the next test (and the runner) get the interpreter's own
            builtins.__dict__.update(pristine)
            for timer in (signal.ITIMER_REAL, signal.ITIMER_VIRTUAL, signal.ITIMER_PROF):
                setitimer(timer, 0)
            for target in (0, 1, 2):  # the test's pipes close: the host reads to their end
                dup2(null, target)
            _close_except(ctl, null, home)  # descriptors the program left open
            now = _cpu_seconds()
            keep = (cpu is None or now < cpu) and all(vars(m) == saved for m, saved in watched)
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            channel.send(dumps([status, now - used, peak, keep]).encode())
        except BaseException:  # threads left, or the program broke what the runner needs: end as
            _finish(status, main)  # the program's own interpreter would (its status tells the host)
        if not keep:
            os._exit(0)


def _shared_suite(req, conn, errpipe, cgroup_fds, compiled):
    """Supervise a submission with isolation per process: one runner child (_runner) runs the tests;
    the host's ``n`` asks for a new one (the first test, or after the last one ended or was killed),
    whose pid is sent first. Each answer is ``[wait status, CPU seconds, peak RSS KiB, kept]``."""
    runner = ctl = None
    reported = 0.0  # CPU seconds of the runner's tests so far
    try:
        while True:
            msg, test_fds, _, _ = socket.recv_fds(conn, 16, 3)
            if not msg:
                return
            if msg == b"n":
                if runner is not None:  # the host killed it
                    ctl.close()
                    os.waitpid(runner, 0)
                ctl, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
                runner = os.fork()
                if runner == 0:
                    try:
                        _runner(req, theirs.detach(), errpipe, cgroup_fds, compiled)
                    finally:  # the runner never returns into the supervisor's code
                        os._exit(126)
                theirs.close()
                reported = 0.0
                conn.send(json.dumps([runner]).encode())
            try:
                socket.send_fds(ctl, [b"t"], test_fds)
                reply = ctl.recv(256)
            except OSError:  # the runner is gone: its wait status says why
                reply = b""
            finally:
                for fd in test_fds:
                    os.close(fd)
            if reply:
                code, cpu, peak, kept = json.loads(reply)
                reported += cpu
                answer = [(code & 0xFF) << 8, cpu, peak, kept]
            else:
                _, status, usage = os.wait4(runner, 0)
                answer = [status, usage.ru_utime + usage.ru_stime - reported, usage.ru_maxrss, False]
            if not answer[3]:
                if reply:
                    os.waitpid(runner, 0)
                ctl.close()
                runner = ctl = None
            conn.send(json.dumps(answer).encode())
    finally:
        if runner is not None:
            ctl.close()  # the runner ends when its socket closes (or was killed)
            os.waitpid(runner, 0)


# How much deeper the program's code runs than a script's: _depth_reached from the top level, as a
# script's code reaches, minus from the nesting _child (top level, _child, _run_program, _run_main) and
# _suite (top level, _suite, _test_child or _shared_suite, _run_program or _runner, _run_main) give
# the program.
_SCRIPT_REACH = _depth_reached()
_CHILD_SHIFT = _SCRIPT_REACH - _reach_below(2)
_SUITE_SHIFT = _SCRIPT_REACH - _reach_below(3)
# Everything loaded so far is left out of the children's garbage collections: a collection that
# visited it would write to (and so copy) most of the worker's memory pages in every child.
gc.freeze()
sock = socket.socket(fileno=int(sys.argv[1]))
# The launcher's parent-death signal follows the host *thread* that started this worker, and pool
# threads end; the worker instead ends when the host's end of the socket closes (recv gets nothing).
_libc.prctl(PR_SET_PDEATHSIG, 0, 0, 0, 0)
sock.send(b"ready")
while True:
    msg, fds, _, _ = socket.recv_fds(sock, 1 << 16, 8)
    if not msg:
        break
    req = json.loads(msg)
    if req["kind"] == "suite":
        _suite(req, fds)
        sock.send(b"[]")  # the submission is over
        continue
    pid = os.fork()
    if pid == 0:
        sock.close()
        _child(req, fds)  # never returns: the child ends with os._exit
    for fd in fds:
        os.close(fd)
    sock.send(json.dumps({"pid": pid}).encode())
    _, status, usage = os.wait4(pid, 0)
    sock.send(json.dumps([status, usage.ru_utime + usage.ru_stime, usage.ru_maxrss]).encode())
'''
)


class WorkerError(OSError):
    """The warm worker failed (did not start, broke the protocol, or died)."""


class WarmWorker:
    """One warm interpreter, confined once; :meth:`run` runs one program in a forked child.

    Parameters
    ----------
    argv : list of str
        The interpreter's command line up to the worker script (``["python3", "-B"]``).
    script : str
        Path of the worker script (:data:`WORKER_SOURCE`), readable by the worker.
    confinement : Confinement
        The worker's own confinement (namespaces, writable folder; no uid change, no limits).
    launcher : str or None
        The native launcher, else ``preexec_fn``.
    env : dict
        The interpreter's environment at start (the same base as a run's).
    cwd : str
        Where the worker starts.
    """

    def __init__(self, argv, script, confinement: Confinement, launcher, env, cwd):
        self.sock, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        # The interpreter's stdio must be pipes, as a run's are: Python sets up sys.std* at start-up
        # (buffering, seekability) from what fds 0-2 are, and every child inherits those objects.
        std = [os.pipe() for _ in range(3)]
        child_std = (std[0][0], std[1][1], std[2][1])
        cmd = [*argv, script, str(theirs.fileno())]
        launch_r = None
        try:
            if launcher is not None:
                launch_r, launch_w = os.pipe()
                try:
                    self.proc = subprocess.Popen(
                        confinement.launcher_args(launcher, launch_w) + cmd,
                        cwd=cwd,
                        env=env,
                        stdin=child_std[0],
                        stdout=child_std[1],
                        stderr=child_std[2],
                        start_new_session=True,
                        pass_fds=(launch_w, theirs.fileno()),
                    )
                finally:
                    os.close(launch_w)
            else:
                self.proc = subprocess.Popen(
                    cmd,
                    cwd=cwd,
                    env=env,
                    stdin=child_std[0],
                    stdout=child_std[1],
                    stderr=child_std[2],
                    preexec_fn=confinement.preexec,
                    start_new_session=True,
                    pass_fds=(theirs.fileno(),),
                )
        except BaseException:
            self.sock.close()
            for fd in (*child_std, std[0][1], std[1][0], std[2][0]):
                os.close(fd)
            raise
        finally:
            theirs.close()
        for fd in (*child_std, std[0][1], std[1][0]):  # the worker never reads stdin nor writes stdout
            os.close(fd)
        self._stderr = std[2][0]
        self.sock.settimeout(_HANDSHAKE_TIMEOUT)
        try:
            ready = self.sock.recv(16)
        except OSError:
            ready = b""
        if ready != b"ready":
            why = read_available(launch_r) if launch_r is not None else b""
            why = why.decode(errors="replace") or self._worker_stderr()
            if launch_r is not None:
                os.close(launch_r)
            self.close()
            raise WorkerError(f"warm worker did not start: {why}")
        if launch_r is not None:
            os.close(launch_r)

    def _receive(self) -> dict | list:
        try:
            msg = self.sock.recv(1 << 16)
        except OSError as exc:
            raise WorkerError(f"warm worker did not answer: {exc}") from exc
        if not msg:
            raise WorkerError("warm worker died: " + self._worker_stderr())
        return json.loads(msg)

    def _worker_stderr(self) -> str:
        if self._stderr is None:
            return ""
        return read_available(self._stderr).decode(errors="replace")

    def run(
        self,
        *,
        path: str,
        workdir: str,
        uid: int,
        rlimits: list[tuple[int, int]],
        env: dict[str, str],
        stdin: bytes,
        wall_limit: float,
        output_limit: int,
        cgroup: Cgroup | None,
    ) -> _Raw:
        """Run the Python program at ``path`` in a child, confined as a launched run; as ``execute``."""
        start = time.monotonic()
        pipes = [os.pipe() for _ in range(5)]  # go, stdin, stdout, stderr, setup errors
        go_w, in_w, out_r, err_r, e_r = (pipes[0][1], pipes[1][1], pipes[2][0], pipes[3][0], pipes[4][0])
        theirs = [pipes[0][0], pipes[1][0], pipes[2][1], pipes[3][1], pipes[4][1]]
        request = {
            "kind": "run",
            "path": path,
            "workdir": workdir,
            "uid": uid,
            "rlimits": rlimits,
            "env": env,
        }
        ours = [go_w, in_w, out_r, err_r, e_r]
        try:
            socket.send_fds(self.sock, [json.dumps(request).encode()], theirs)
        except OSError as exc:
            for fd in theirs + ours:
                os.close(fd)
            raise WorkerError(f"warm worker did not take the request: {exc}") from exc
        for fd in theirs:
            os.close(fd)

        def kill_run() -> None:  # everything of the run: its cgroup, else its own uid
            if cgroup is not None:
                cgroup.kill_all()
            else:
                kill_uid(uid)

        pid = None
        pumped = False
        try:
            pid = self._receive()["pid"]
            if cgroup is not None:
                for procs in cgroup.procs_files:
                    _write(procs, str(pid))
            os.write(go_w, b"1")
            os.close(go_w)
            go_w = None
            out, err, timed_out, output_exceeded = pump(
                stdin_fd=in_w,
                out_fd=out_r,
                err_fd=err_r,
                exit_fd=self.sock.fileno(),
                stdin=stdin,
                deadline=start + wall_limit,
                output_limit=output_limit,
                on_exit=kill_run,
            )
            pumped = True
        finally:
            if go_w is not None:  # the child never got its go: it exits (or is killed) before running
                os.close(go_w)
                if pid is not None:
                    os.kill(pid, 9)
            if not pumped:
                for fd in (in_w, out_r, err_r):
                    os.close(fd)
            if pid is not None:
                kill_run()
            setup_error = read_available(e_r)
            os.close(e_r)
        status, cpu, maxrss_kib = self._receive()
        if setup_error:
            why = setup_error.decode(errors="replace")
            raise WorkerError(f"warm worker's child failed before the program started: {why}")
        usage = SimpleNamespace(ru_utime=cpu, ru_stime=0.0, ru_maxrss=maxrss_kib)
        return raw_result(status, out, err, time.monotonic() - start, usage, timed_out, output_exceeded)

    def open_suite(
        self,
        *,
        path: str,
        argv: list[str] | None,
        workdir: str,
        uid: int,
        rlimits: list[tuple[int, int]],
        env: dict[str, str],
        cgroup: Cgroup | None,
        shared: bool = False,
    ) -> Suite:
        """Make this worker a submission's supervisor, set up once (working folder, environment, the
        Python program at ``path`` compiled once, or the command ``argv`` of any other language); it
        forks one child per :meth:`Suite.run`, or with ``shared`` (a Python program and a cgroup) one
        child that runs the tests one after another. Close the suite before the worker runs anything
        else."""
        if shared and (argv is not None or cgroup is None):
            raise ValueError("shared needs a Python program (argv None) and a cgroup")
        return Suite(
            self,
            path=path,
            argv=argv,
            workdir=workdir,
            uid=uid,
            rlimits=rlimits,
            env=env,
            cgroup=cgroup,
            shared=shared,
        )

    def close(self) -> None:
        """Stop the worker (its children die with it: parent-death signal)."""
        self.sock.close()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, 9)
            self.proc.wait()
        if self._stderr is not None:
            os.close(self._stderr)
            self._stderr = None


class Suite:
    """A warm worker supervising one submission; :meth:`run` runs one test in a child of it.

    The worker stays root, in its namespaces and outside the submission's cgroup; each test's child
    joins the cgroup (through descriptors the host opened), takes the test's pipes, the
    run's limits and the submission's uid before the program runs. After each test everything left
    in the cgroup (or, without one, of the uid) is killed. See :meth:`WarmWorker.open_suite`.

    Shared (isolation per process, Python programs with a cgroup): one child of the supervisor, the
    *runner*, confined as a test's child is, runs the tests one after another in its one interpreter
    (LiveCodeBench's design: its runner execs a program once per test in one process). Each test
    still has its own pipes, clock, CPU limit and fresh ``__main__``; what it leaves running besides
    the runner is killed (and the runner with it), and a test cut short by a limit, or that ends the
    runner (``os._exit``, a crash, threads left running), gets the next test a new runner.
    """

    def __init__(self, worker: WarmWorker, *, path, argv, workdir, uid, rlimits, env, cgroup, shared):
        self.worker, self.uid, self.cgroup, self.shared = worker, uid, cgroup, shared
        self._runner: int | None = None  # shared: the pid of the process running the tests
        self.conn, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._errors, err_w = os.pipe()  # a test child's setup failure (before the program runs)
        # The test children write "0" to these to join the cgroup: the supervisor's file system is
        # read-only, so the host opens them
        cgroup_fds = [os.open(f, os.O_WRONLY) for f in (cgroup.procs_files if cgroup else [])]
        request = {"kind": "suite", "path": path, "argv": argv, "workdir": workdir, "uid": uid}
        request.update(rlimits=rlimits, env=env, shared=shared)
        try:
            socket.send_fds(
                worker.sock, [json.dumps(request).encode()], [theirs.fileno(), err_w, *cgroup_fds]
            )
        except OSError as exc:
            self.conn.close()
            os.close(self._errors)
            raise WorkerError(f"warm worker did not take the submission: {exc}") from exc
        finally:
            theirs.close()
            for fd in (err_w, *cgroup_fds):
                os.close(fd)
        self.conn.settimeout(_HANDSHAKE_TIMEOUT)

    def _kill_test(self) -> None:
        """Everything the test left: the cgroup's processes (its pids limit restored), else the uid's."""
        if self.cgroup is not None:
            self.cgroup.clear()
        else:
            kill_uid(self.uid)

    def _kill_leftovers(self) -> None:
        """Shared: kill whatever the test started besides the runner (the runner with it, if anything)."""
        if set(self.cgroup._pids()) - {self._runner}:
            self.cgroup.clear()
            self._runner = None

    def run(self, *, stdin: bytes, wall_limit: float, output_limit: int) -> _Raw:
        """Run the program on one input in a fresh child of the supervisor (or, shared, in the
        submission's runner); as ``execute``."""
        start = time.monotonic()
        pipes = [os.pipe() for _ in range(3)]
        in_w, out_r, err_r = pipes[0][1], pipes[1][0], pipes[2][0]
        theirs = [pipes[0][0], pipes[1][1], pipes[2][1]]
        new_runner = self.shared and self._runner is None
        try:
            socket.send_fds(self.conn, [b"n" if new_runner else b"t"], theirs)
        except OSError as exc:
            for fd in (in_w, out_r, err_r):
                os.close(fd)
            raise WorkerError(f"submission supervisor did not take the test: {exc}") from exc
        finally:
            for fd in theirs:
                os.close(fd)
        killed, finished = [], False

        def kill_test() -> None:
            if self.shared:
                self._kill_leftovers()
                return
            self._kill_test()
            killed.append(True)

        try:
            if new_runner:
                try:
                    self._runner = self._receive()[0]
                except WorkerError:
                    for fd in (in_w, out_r, err_r):
                        os.close(fd)
                    raise
            out, err, timed_out, output_exceeded = pump(
                stdin_fd=in_w,
                out_fd=out_r,
                err_fd=err_r,
                exit_fd=self.conn.fileno(),
                stdin=stdin,
                deadline=start + wall_limit,
                output_limit=output_limit,
                on_exit=kill_test,
            )
            finished = not (timed_out or output_exceeded)
        finally:
            if not killed and not (self.shared and finished):
                # cut short (time, output) or failed: the test's process may still run
                self._kill_test()
                self._runner = None
        answer = self._receive()
        setup_error = read_available(self._errors)
        if setup_error:
            why = setup_error.decode(errors="replace")
            raise WorkerError(f"a test's child failed before the program started: {why}")
        status, cpu, maxrss_kib = answer[:3]
        if self.shared and not answer[3]:  # the runner ended: nothing of the test may outlive it
            self._kill_test()
            self._runner = None
        usage = SimpleNamespace(ru_utime=cpu, ru_stime=0.0, ru_maxrss=maxrss_kib)
        return raw_result(status, out, err, time.monotonic() - start, usage, timed_out, output_exceeded)

    def _receive(self) -> list:
        try:
            msg = self.conn.recv(1 << 16)
        except OSError as exc:
            raise WorkerError(f"submission supervisor did not answer: {exc}") from exc
        if not msg:
            raise WorkerError("submission supervisor died")
        answer = json.loads(msg)
        if isinstance(answer, dict):
            raise WorkerError(f"submission supervisor failed: {answer.get('error')}")
        return answer

    def close(self) -> None:
        """End the submission (the worker returns to its loop when this socket closes) and wait for it."""
        self.conn.close()
        os.close(self._errors)
        self.worker._receive()

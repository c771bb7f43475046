"""Run one confined process: feed stdin, read stdout/stderr incrementally (capped), enforce the wall clock."""

from __future__ import annotations

import os
import resource
import select
import signal
import subprocess
import time
from dataclasses import dataclass, field

from ._isolation import Cgroup, Confinement, kill_uid

STATUSES = ("ok", "compile_error", "runtime_error", "timeout", "memory", "output_limit", "killed")

# Messages with which runtimes report running out of memory (used where no cgroup counts OOM kills).
_OOM_MARKERS = (
    "MemoryError",
    "std::bad_alloc",
    "java.lang.OutOfMemoryError",
    "JavaScript heap out of memory",
    "runtime: out of memory",
    "fatal error: out of memory",
    "memory allocation of",
    "failed to allocate memory",
    "Allowed memory size of",
    "System.OutOfMemoryError",
    "Out of memory",
    "Cannot allocate memory",
)


@dataclass
class Execution:
    """The outcome of running one program on one input.

    Attributes
    ----------
    status : str
        ``ok`` (exit code 0), ``compile_error``, ``runtime_error`` (non-zero exit or a fatal signal such as
        SIGSEGV), ``timeout`` (wall clock or CPU limit), ``memory`` (memory limit), ``output_limit``
        (stdout+stderr over the cap, or a file over the file-size limit) or ``killed`` (SIGKILL that none of
        the sandbox's limits explains).
    exit_code : int or None
        The exit code, or None when the process died from a signal (then ``signal`` is set).
    signal : int or None
        The signal that ended the process, if any.
    stdout, stderr : str
        What the program wrote (decoded as UTF-8 with replacement), at most ``output_limit`` bytes in all.
    wall_time, cpu_time : float
        Seconds of wall clock and of user+system CPU (the process and the children it waited for).
    peak_memory : int or None
        Peak memory in bytes: the cgroup's peak where a cgroup was used, else the largest resident set.
    isolation : str
        How the process was confined (network isolation, user, file system).
    memory_mechanism : str
        ``cgroup-v1``, ``cgroup-v2``, ``rlimit-as`` or ``runtime-flags+rlimit-data``.
    network_isolated : bool
        False only when the caller allowed running without network isolation and none was available.
    compile : Execution or None
        The compile step, for a compiled language (its status is ``ok`` or ``compile_error``).
    detail : str
        A short human-readable explanation of the status.
    """

    status: str
    exit_code: int | None = None
    signal: int | None = None
    stdout: str = ""
    stderr: str = ""
    wall_time: float = 0.0
    cpu_time: float = 0.0
    peak_memory: int | None = None
    isolation: str = ""
    memory_mechanism: str = ""
    network_isolated: bool = True
    compile: Execution | None = field(default=None, repr=False)
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "ok"


@dataclass
class _Raw:
    exit_code: int | None
    signal: int | None
    stdout: bytes
    stderr: bytes
    wall_time: float
    cpu_time: float
    maxrss: int
    timed_out: bool
    output_exceeded: bool


def _kill_all(pid: int, cgroup: Cgroup | None, uid: int | None) -> None:
    """Kill the run's process group, then everything in its cgroup, or else everything of its own uid."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    if cgroup is not None:
        cgroup.kill_all()
    elif uid is not None:
        kill_uid(uid)


def pump(
    *,
    stdin_fd: int,
    out_fd: int,
    err_fd: int,
    exit_fd: int,
    stdin: bytes,
    deadline: float,
    output_limit: int,
    on_exit,
) -> tuple[bytes, bytes, bool, bool]:
    """Feed ``stdin`` and collect capped stdout/stderr of a running program until it is done.

    ``exit_fd`` becomes readable when the program's main process has exited (a pidfd, or the warm
    worker's control socket); ``on_exit()`` is then called at once to kill whatever the program left
    running, and the pipes get 0.5 s more to drain. Stops at ``deadline`` (``time.monotonic``) or when
    more than ``output_limit`` bytes came. Closes ``stdin_fd``, ``out_fd`` and ``err_fd``.

    Returns ``(stdout, stderr, timed_out, output_exceeded)``.
    """
    out, err = bytearray(), bytearray()
    total = 0
    timed_out = output_exceeded = False
    poller = select.poll()
    fds = {out_fd: out, err_fd: err}
    for fd in fds:
        poller.register(fd, select.POLLIN)
    pending = memoryview(stdin)
    stdin_open = True
    if pending:
        os.set_blocking(stdin_fd, False)
        poller.register(stdin_fd, select.POLLOUT)
    else:
        os.close(stdin_fd)
        stdin_open = False
    poller.register(exit_fd, select.POLLIN)
    exited = False
    try:
        while fds or not exited:
            now = time.monotonic()
            if now >= deadline:
                # Past the limit: a timeout, unless the program had already exited and only
                # descendants that escaped the kill still hold its pipes.
                timed_out = not exited
                break
            for fd, _ in poller.poll(max(1, int((deadline - now) * 1000))):
                if fd == exit_fd:
                    poller.unregister(exit_fd)
                    exited = True
                    # The main process is gone: nothing it left behind may keep running.
                    on_exit()
                    deadline = min(deadline, time.monotonic() + 0.5)
                    continue
                if fd == stdin_fd:
                    try:
                        n = os.write(stdin_fd, pending[:65536])
                        pending = pending[n:]
                    except (BlockingIOError, InterruptedError):
                        continue
                    except OSError:
                        pending = pending[:0]
                    if not pending:
                        poller.unregister(stdin_fd)
                        os.close(stdin_fd)
                        stdin_open = False
                    continue
                chunk = os.read(fd, 65536)
                if not chunk:
                    poller.unregister(fd)
                    del fds[fd]
                    continue
                fds[fd] += chunk[: max(0, output_limit - total)]
                total += len(chunk)
                if total > output_limit:
                    output_exceeded = True
                    break
            if output_exceeded:
                break
    finally:
        for fd in (out_fd, err_fd) + ((stdin_fd,) if stdin_open else ()):
            os.close(fd)
    return bytes(out), bytes(err), timed_out, output_exceeded


def execute(
    argv: list[str],
    *,
    cwd: str,
    env: dict[str, str],
    stdin: bytes,
    wall_limit: float,
    output_limit: int,
    confinement: Confinement,
    cgroup: Cgroup | None,
    launcher: str | None = None,
) -> _Raw:
    """Start ``argv`` confined, feed ``stdin``, collect capped output, kill everything at the end.

    With ``launcher`` (the native launcher's path) the confinement is applied by it, else by
    ``preexec_fn``. A failure to confine or to start the program raises ``OSError``.
    """
    start = time.monotonic()
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    child_ends = (in_r, out_w, err_w)
    launch_r = None
    try:
        if launcher is not None:
            launch_r, launch_w = os.pipe()
            try:
                proc = subprocess.Popen(
                    confinement.launcher_args(launcher, launch_w) + argv,
                    cwd=cwd,
                    env=env,
                    stdin=in_r,
                    stdout=out_w,
                    stderr=err_w,
                    start_new_session=True,
                    close_fds=True,
                    pass_fds=(launch_w,),
                )
            finally:
                os.close(launch_w)
        else:
            proc = subprocess.Popen(
                argv,
                cwd=cwd,
                env=env,
                stdin=in_r,
                stdout=out_w,
                stderr=err_w,
                preexec_fn=confinement.preexec,
                start_new_session=True,
                close_fds=True,
            )
    except BaseException:
        for fd in (*child_ends, in_w, out_r, err_r) + ((launch_r,) if launch_r is not None else ()):
            os.close(fd)
        raise
    for fd in child_ends:
        os.close(fd)
    pid = proc.pid
    pidfd = os.pidfd_open(pid)
    try:
        out, err, timed_out, output_exceeded = pump(
            stdin_fd=in_w,
            out_fd=out_r,
            err_fd=err_r,
            exit_fd=pidfd,
            stdin=stdin,
            deadline=start + wall_limit,
            output_limit=output_limit,
            on_exit=lambda: _kill_all(pid, cgroup, confinement.run_as),
        )
    finally:
        _kill_all(pid, cgroup, confinement.run_as)
        os.close(pidfd)
        _, wstatus, usage = os.wait4(pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(wstatus)
        launch_error = b""
        if launch_r is not None:
            launch_error = read_available(launch_r)
            os.close(launch_r)
    if launch_error:
        raise OSError(
            f"sandbox launcher failed before the program started: {launch_error.decode(errors='replace')}"
        )
    return raw_result(wstatus, out, err, time.monotonic() - start, usage, timed_out, output_exceeded)


def read_available(fd: int) -> bytes:
    """What a pipe holds now (at most 4 KiB), without blocking."""
    os.set_blocking(fd, False)
    try:
        return os.read(fd, 4096)
    except BlockingIOError:
        return b""


def raw_result(wstatus, out, err, wall, usage, timed_out, output_exceeded) -> _Raw:
    """A :class:`_Raw` from a wait status and the resource usage of the waited-for process."""
    exit_code = sig = None
    if os.WIFSIGNALED(wstatus):
        sig = os.WTERMSIG(wstatus)
    else:
        exit_code = os.WEXITSTATUS(wstatus)
    return _Raw(
        exit_code=exit_code,
        signal=sig,
        stdout=out,
        stderr=err,
        wall_time=wall,
        cpu_time=usage.ru_utime + usage.ru_stime,
        maxrss=usage.ru_maxrss * 1024,
        timed_out=timed_out,
        output_exceeded=output_exceeded,
    )


def classify(raw: _Raw, *, cpu_limit: float, oom_killed: bool) -> tuple[str, str]:
    """The status of a finished run and a one-line reason."""
    if raw.output_exceeded:
        return "output_limit", "stdout+stderr exceeded the output limit"
    if raw.signal == signal.SIGXFSZ:
        return "output_limit", "a file exceeded the file-size limit (SIGXFSZ)"
    if raw.timed_out:
        return "timeout", "wall-clock limit reached"
    if raw.signal == signal.SIGXCPU or (raw.signal == signal.SIGKILL and raw.cpu_time >= cpu_limit):
        return "timeout", "CPU-time limit reached"
    if oom_killed:
        return "memory", "killed by the cgroup's OOM killer at the memory limit"
    if raw.exit_code == 0:
        return "ok", "exit code 0"
    text = raw.stderr.decode(errors="replace")
    if any(m in text for m in _OOM_MARKERS):
        return "memory", "the runtime reported running out of memory"
    if "File too large" in text:  # strerror(EFBIG): runtimes that ignore SIGXFSZ (Python) see this error
        return "output_limit", "a file exceeded the file-size limit (EFBIG)"
    if raw.signal == signal.SIGKILL:
        return "killed", "SIGKILL not caused by a sandbox limit"
    if raw.signal is not None:
        return "runtime_error", f"killed by signal {signal.Signals(raw.signal).name}"
    return "runtime_error", f"exit code {raw.exit_code}"


def rlimit_list(
    *, cpu_seconds: int, memory: int | None, data: int | None, nproc: int | None, fsize: int, nofile: int
) -> list[tuple[int, int]]:
    """The rlimits of one execution (memory via RLIMIT_AS and/or RLIMIT_DATA, processes via
    RLIMIT_NPROC, each when given)."""
    limits = [
        (resource.RLIMIT_CPU, cpu_seconds),
        (resource.RLIMIT_FSIZE, fsize),
        (resource.RLIMIT_NOFILE, nofile),
        (resource.RLIMIT_CORE, 0),
    ]
    if nproc is not None:
        limits.append((resource.RLIMIT_NPROC, nproc))
    if memory is not None:
        limits.append((resource.RLIMIT_AS, memory))
    if data is not None:
        limits.append((resource.RLIMIT_DATA, data))
    return limits

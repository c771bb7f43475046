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
    if launcher is not None:
        err_r, err_w = os.pipe()
        try:
            proc = subprocess.Popen(
                confinement.launcher_args(launcher, err_w) + argv,
                cwd=cwd,
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
                close_fds=True,
                pass_fds=(err_w,),
            )
        except BaseException:
            os.close(err_r)
            raise
        finally:
            os.close(err_w)
    else:
        err_r = None
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            preexec_fn=confinement.preexec,
            start_new_session=True,
            close_fds=True,
        )
    pid = proc.pid
    deadline = start + wall_limit
    out, err = bytearray(), bytearray()
    total = 0
    timed_out = output_exceeded = False
    poller = select.poll()
    fds = {proc.stdout.fileno(): out, proc.stderr.fileno(): err}
    for fd in fds:
        poller.register(fd, select.POLLIN)
    stdin_fd = proc.stdin.fileno()
    pending = memoryview(stdin)
    if pending:
        os.set_blocking(stdin_fd, False)
        poller.register(stdin_fd, select.POLLOUT)
    else:
        proc.stdin.close()
    pidfd = os.pidfd_open(pid)
    poller.register(pidfd, select.POLLIN)
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
                if fd == pidfd:
                    poller.unregister(pidfd)
                    exited = True
                    # The main process is gone: nothing it left behind may keep running.
                    _kill_all(pid, cgroup, confinement.run_as)
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
                        proc.stdin.close()
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
        _kill_all(pid, cgroup, confinement.run_as)
        os.close(pidfd)
        _, wstatus, usage = os.wait4(pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(wstatus)
        for f in (proc.stdin, proc.stdout, proc.stderr):
            try:
                f.close()
            except OSError:
                pass
        launch_error = b""
        if err_r is not None:
            os.set_blocking(err_r, False)
            try:
                launch_error = os.read(err_r, 4096)
            except BlockingIOError:
                pass
            os.close(err_r)
    if launch_error:
        raise OSError(
            f"sandbox launcher failed before the program started: {launch_error.decode(errors='replace')}"
        )
    wall = time.monotonic() - start
    exit_code = sig = None
    if os.WIFSIGNALED(wstatus):
        sig = os.WTERMSIG(wstatus)
    else:
        exit_code = os.WEXITSTATUS(wstatus)
    return _Raw(
        exit_code=exit_code,
        signal=sig,
        stdout=bytes(out),
        stderr=bytes(err),
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

"""Process isolation on plain Linux: namespaces, read-only mounts, rlimits, cgroups, privilege drop.

What the child does before ``exec`` is described by a :class:`Confinement`: applied by the native
launcher (``_launcher.py``, from :meth:`Confinement.launcher_args`) or, without a C compiler, by
:meth:`Confinement.preexec` (Python's ``preexec_fn``: system calls through ``ctypes`` on values computed
in the parent).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import resource
import shutil
import signal
import subprocess
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

_libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
_libc.syscall.restype = ctypes.c_long

CLONE_NEWNS = 0x00020000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_RDONLY = 0x1
MS_NOSUID = 0x2
MS_NODEV = 0x4
MS_NOEXEC = 0x8
MS_BIND = 0x1000
MS_REC = 0x4000
MS_PRIVATE = 1 << 18
AT_FDCWD = -100
AT_RECURSIVE = 0x8000
MOUNT_ATTR_RDONLY = 0x1
MOUNT_ATTR_NOSUID = 0x2
MOUNT_ATTR_NODEV = 0x4
SYS_MOUNT_SETATTR = 442  # the same number on x86_64 and aarch64 (the generic table)
PR_SET_NO_NEW_PRIVS = 38
PR_CAPBSET_DROP = 24
PR_SET_PDEATHSIG = 1
NOBODY = 65534
#: As root, each run gets its own uid/gid from this range (as judges such as isolate do): RLIMIT_NPROC then
#: counts that run's processes only, and no run can signal or ptrace another's.
SANDBOX_UID_BASE = 2_000_000_000
SANDBOX_UID_COUNT = 1 << 24


def kill_uid(uid: int) -> None:
    """SIGKILL every process of ``uid`` (a run's own uid), from a short-lived child running as that uid.

    This reaches processes that left the process group (``setsid``) when no cgroup lists them.
    """
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            os.setresuid(uid, uid, uid)
            os.kill(-1, signal.SIGKILL)
        finally:
            os._exit(0)
    os.waitpid(pid, 0)


def fresh_uid() -> int:
    """A uid for one run (root only), drawn at random from the sandbox's range."""
    return SANDBOX_UID_BASE + int.from_bytes(os.urandom(4), "little") % SANDBOX_UID_COUNT


#: The executable search path inside the sandbox (the caller's PATH is never inherited).
SANDBOX_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


class _MountAttr(ctypes.Structure):
    _fields_ = [
        ("attr_set", ctypes.c_uint64),
        ("attr_clr", ctypes.c_uint64),
        ("propagation", ctypes.c_uint64),
        ("userns_fd", ctypes.c_uint64),
    ]


def _check(rc: int, what: str) -> None:
    if rc != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def _read(path: str) -> str:
    """A small kernel file's text (cgroup files: a few pids or counters; cheaper than pathlib)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        chunks = []
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
        return b"".join(chunks).decode()
    finally:
        os.close(fd)


def _mount_setattr(path: bytes, flags: int, attr_set: int, attr_clr: int) -> None:
    attr = _MountAttr(attr_set, attr_clr, 0, 0)
    rc = _libc.syscall(SYS_MOUNT_SETATTR, AT_FDCWD, path, flags, ctypes.byref(attr), ctypes.sizeof(attr))
    _check(0 if rc == 0 else -1, "mount_setattr")


# --------------------------------------------------------------------------------------------- cgroups
@dataclass
class CgroupSpec:
    """Where per-execution cgroups can be created: ``version`` 1 or 2, and the parent folders."""

    version: int
    memory_parent: Path
    pids_parent: Path


def _own_cgroup_paths() -> dict[str, str]:
    paths: dict[str, str] = {}
    try:
        text = Path("/proc/self/cgroup").read_text()
    except OSError:
        return paths
    for line in text.splitlines():
        _, controllers, path = line.split(":", 2)
        for c in controllers.split(",") if controllers else [""]:
            paths[c] = path
    return paths


def _writable_dir(path: Path) -> bool:
    return path.is_dir() and os.access(path, os.W_OK | os.X_OK)


def find_cgroup() -> CgroupSpec | None:
    """A cgroup (v2, else v1) under which this process may create children with memory and pids limits."""
    own = _own_cgroup_paths()
    # cgroup v2: the unified hierarchy, with memory and pids delegated to our cgroup's children.
    for root in (Path("/sys/fs/cgroup"), Path("/sys/fs/cgroup/unified")):
        if "" in own and (root / "cgroup.controllers").exists():
            parent = root / own[""].lstrip("/")
            try:
                enabled = (parent / "cgroup.subtree_control").read_text().split()
            except OSError:
                continue
            if {"memory", "pids"} <= set(enabled) and _writable_dir(parent):
                return CgroupSpec(2, parent, parent)
    # cgroup v1: separate memory and pids hierarchies.
    mem_root, pids_root = Path("/sys/fs/cgroup/memory"), Path("/sys/fs/cgroup/pids")
    if "memory" in own and "pids" in own and mem_root.is_dir() and pids_root.is_dir():
        mem_parent = mem_root / own["memory"].lstrip("/")
        pids_parent = pids_root / own["pids"].lstrip("/")
        if _writable_dir(mem_parent) and _writable_dir(pids_parent):
            return CgroupSpec(1, mem_parent, pids_parent)
    return None


class Cgroup:
    """One execution's cgroup(s): memory limit without swap, a pids limit, peak memory, OOM kills."""

    def __init__(self, spec: CgroupSpec, memory_limit: int, pids_limit: int):
        self.spec, self.pids_limit, self._peak_fd = spec, pids_limit, None
        name = f"iclr26-sandbox-{os.getpid()}-{uuid.uuid4().hex[:12]}"
        self.memory = spec.memory_parent / name
        self.pids = spec.pids_parent / name
        self.memory.mkdir()
        try:
            if spec.version == 2:
                _write(str(self.memory / "memory.max"), str(memory_limit))
                if (self.memory / "memory.swap.max").exists():
                    _write(str(self.memory / "memory.swap.max"), "0")
                _write(str(self.memory / "pids.max"), str(pids_limit))
            else:
                self.pids.mkdir()
                _write(str(self.memory / "memory.limit_in_bytes"), str(memory_limit))
                memsw = self.memory / "memory.memsw.limit_in_bytes"
                if memsw.exists():
                    _write(str(memsw), str(memory_limit))
                _write(str(self.pids / "pids.max"), str(pids_limit))
        except BaseException:
            self.remove()
            raise
        self.procs_files = [str(self.memory / "cgroup.procs")]
        if spec.version == 1:
            self.procs_files.append(str(self.pids / "cgroup.procs"))

    @property
    def mechanism(self) -> str:
        return f"cgroup-v{self.spec.version}"

    def _pids(self, files: list[str] | None = None) -> list[int]:
        found: set[int] = set()
        for f in self.procs_files if files is None else files:
            try:
                found.update(int(x) for x in _read(f).split())
            except OSError:
                pass
        return sorted(found)

    def kill_all(self) -> None:
        """SIGKILL every process in the cgroup, until it is empty (a fork bomb is bounded by pids.max)."""
        try:  # no new process from now on: fork fails, so the loop below cannot be outrun
            _write(str((self.memory if self.spec.version == 2 else self.pids) / "pids.max"), "0")
        except OSError:
            pass
        if self.spec.version == 2 and (self.memory / "cgroup.kill").exists():
            try:
                _write(str(self.memory / "cgroup.kill"), "1")
            except OSError:
                pass
        for _ in range(1000):
            pids = self._pids()
            if not pids:
                return
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.001)

    def clear(self) -> None:
        """Kill every process in the cgroup, if any, and allow new ones again (for the next test of a
        submission that keeps its cgroup). Every process of a run is in the (first) memory cgroup: it
        joins that one first."""
        if not self._pids(self.procs_files[:1]):
            return
        self.kill_all()
        _write(str((self.memory if self.spec.version == 2 else self.pids) / "pids.max"), str(self.pids_limit))

    def reset_peak(self) -> None:
        """Start the peak over from the current usage (a submission's next test); best effort: cgroup v2
        kernels before 6.12 cannot, and the peak then counts from the cgroup's creation."""
        if self.spec.version == 1:
            _write(str(self.memory / "memory.max_usage_in_bytes"), "0")
            return
        try:  # v2 resets the peak seen through this open file only: keep it for peak_memory
            if self._peak_fd is None:
                self._peak_fd = os.open(self.memory / "memory.peak", os.O_RDWR)
            os.write(self._peak_fd, b"reset\n")
        except OSError:
            pass

    def peak_memory(self) -> int | None:
        try:
            if self._peak_fd is not None:
                return int(os.pread(self._peak_fd, 64, 0).split()[0])
            name = "memory.peak" if self.spec.version == 2 else "memory.max_usage_in_bytes"
            return int(_read(str(self.memory / name)).split()[0])
        except (OSError, ValueError, IndexError):
            return None

    def oom_kills(self) -> int:
        """How many processes the cgroup's OOM killer has killed so far."""
        name = "memory.events" if self.spec.version == 2 else "memory.oom_control"
        try:
            for line in _read(str(self.memory / name)).splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
        except (OSError, ValueError):
            pass
        return 0

    def oom_killed(self) -> bool:
        return self.oom_kills() > 0

    def remove(self) -> None:
        if self._peak_fd is not None:
            os.close(self._peak_fd)
            self._peak_fd = None
        for d in (self.pids, self.memory):
            for _ in range(200):
                try:
                    d.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError as exc:
                    if exc.errno != errno.EBUSY:
                        break
                    time.sleep(0.005)


# ----------------------------------------------------------------------------------------- the child
@dataclass
class Confinement:
    """What the child does to itself between ``fork`` and ``exec``.

    Parameters
    ----------
    network : str
        ``"namespace"`` (new network and mount namespaces, via a new user namespace when not root),
        ``"bubblewrap"`` (the command is wrapped in ``bwrap``; the child only sets limits) or ``"none"``.
    writable : list of str
        Folders that stay writable; the rest of the file system is remounted read-only (namespace mode).
    rlimits : list of (int, int)
        ``(resource, limit)`` pairs applied as both soft and hard limits (``RLIMIT_CPU`` gets a hard limit
        one second above the soft one so that ``SIGXCPU`` comes first).
    cgroup_procs : list of str
        ``cgroup.procs`` files the child writes its pid to, before anything else.
    run_as : int or None
        Switch to this uid (and the same gid, no supplementary groups) after the mounts (when root).
    hidden : list of str
        Folders covered by an empty read-only tmpfs (namespace mode), e.g. a benchmark's hidden tests.
    chdir : str or None
        Working directory, entered again after the mounts (the one entered before them would still refer
        to the read-only mount underneath the writable bind mount).
    """

    network: str
    writable: list[str] = field(default_factory=list)
    rlimits: list[tuple[int, int]] = field(default_factory=list)
    cgroup_procs: list[str] = field(default_factory=list)
    run_as: int | None = None
    hidden: list[str] = field(default_factory=list)
    chdir: str | None = None
    uid: int = field(default_factory=os.getuid)
    gid: int = field(default_factory=os.getgid)
    cap_last: int = 40

    def launcher_args(self, launcher: str, errfd: int) -> list[str]:
        """The native launcher's command line, doing what :meth:`preexec` does, up to ``--``."""
        args = [launcher, "-e", str(errfd), "-k", str(self.cap_last)]
        for f in self.cgroup_procs:
            args += ["-c", f]
        if self.network == "namespace":
            args += ["-n", "1"]
            if self.uid != 0:
                args += ["-m", f"{self.uid}:{self.gid}"]
            for w in self.writable:
                args += ["-w", w]
            for h in self.hidden:
                args += ["-h", h]
        if self.chdir is not None:
            args += ["-d", self.chdir]
        for res, limit in self.rlimits:
            args += ["-r", f"{res}:{limit}"]
        if self.run_as is not None:
            args += ["-u", str(self.run_as)]
        return args + ["--"]

    def preexec(self) -> None:  # runs in the child, after fork, before exec
        pid = str(os.getpid())
        for f in self.cgroup_procs:
            _write(f, pid)
        _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if self.network == "namespace":
            in_userns = self.uid != 0
            # Without root, the run keeps the caller's uid outside its user namespace and could signal
            # the caller: a PID namespace makes every process outside it unreachable.
            flags = (
                CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | (CLONE_NEWUSER | CLONE_NEWPID if in_userns else 0)
            )
            _check(_libc.unshare(flags), "unshare")
            if in_userns:
                _write("/proc/self/setgroups", "deny")
                _write("/proc/self/uid_map", f"0 {self.uid} 1")
                _write("/proc/self/gid_map", f"0 {self.gid} 1")
            _check(_libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None), "mount --make-rprivate /")
            for h in self.hidden:
                flags = MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC
                _check(_libc.mount(b"tmpfs", h.encode(), b"tmpfs", flags, b"mode=0555,size=4k"), f"hide {h}")
            for w in self.writable:
                wb = w.encode()
                _check(_libc.mount(wb, wb, None, MS_BIND | MS_REC, None), f"bind mount {w}")
            _mount_setattr(b"/", AT_RECURSIVE, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID, 0)
            for w in self.writable:
                _mount_setattr(w.encode(), AT_RECURSIVE, 0, MOUNT_ATTR_RDONLY)
            if in_userns:
                _enter_pid_namespace()  # returns in the program's process, pid 2 of the new namespace
                # root of the new user namespace: keep no capability across exec
                for cap in range(self.cap_last + 1):
                    _libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)
        if self.chdir is not None:
            os.chdir(self.chdir)
        for res, limit in self.rlimits:
            hard = limit + 1 if res == resource.RLIMIT_CPU else limit
            resource.setrlimit(res, (limit, hard))
        os.umask(0o022)
        if self.run_as is not None:
            os.setgroups([])
            os.setresgid(self.run_as, self.run_as, self.run_as)
            os.setresuid(self.run_as, self.run_as, self.run_as)
        _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(NO_NEW_PRIVS)")


def _close_fds_except(keep: int) -> None:
    os.closerange(3, keep)
    os.closerange(keep + 1, 1 << 20)


def _mirror_status_and_exit(status: int) -> None:
    """End this process as the program ended (exit code, or the same fatal signal)."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        signal.signal(sig, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [sig])
        os.kill(os.getpid(), sig)
        os._exit(128 + sig)
    os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 1)


def _enter_pid_namespace() -> None:
    """After ``unshare(CLONE_NEWPID)``: fork an init (pid 1) and the program (pid 2).

    This process (still outside the namespace, the one the sandbox waits on) waits for the init and ends
    as the program ended; the init reaps everything and, when the program ends, passes on its status
    through a pipe and exits, which kills whatever else is left in the namespace. Only the program's
    process returns. Both helpers close every other descriptor, so that the sandbox's exec-error pipe and
    the output pipes close when the program's copies do.
    """
    r, w = os.pipe()
    init = os.fork()
    if init:  # outside: wait for the init, then mirror the program's status
        os.close(w)
        _close_fds_except(r)
        os.waitpid(init, 0)
        data = os.read(r, 4)
        _mirror_status_and_exit(int.from_bytes(data, "little") if len(data) == 4 else 9)
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    # Best effort: a /proc of the new namespace (refused where the host's /proc is partly masked).
    _libc.mount(b"proc", b"/proc", b"proc", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, None)
    program = os.fork()
    if program:  # the init: reap every process; when the program ends, report and exit
        os.close(r)
        _close_fds_except(w)
        while True:
            try:
                pid, status = os.wait()
            except ChildProcessError:
                os._exit(1)
            if pid == program:
                os.write(w, status.to_bytes(4, "little"))
                os._exit(0)
    os.close(r)
    os.close(w)
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def bubblewrap_prefix(workdirs: list[str], chdir: str, hidden: list[str] = ()) -> list[str]:
    """The ``bwrap`` command line that runs a program without network, read-only except ``workdirs``,
    with each of ``hidden`` replaced by an empty tmpfs."""
    cmd = [
        "bwrap",
        "--unshare-net",
        "--unshare-ipc",
        "--unshare-pid",
        "--die-with-parent",
        "--ro-bind",
        "/",
        "/",
    ]
    cmd += ["--dev", "/dev", "--proc", "/proc"]
    for h in hidden:
        cmd += ["--tmpfs", h]
    for w in workdirs:
        cmd += ["--bind", w, w]
    return cmd + ["--chdir", chdir, "--"]


def cap_last() -> int:
    try:
        return int(Path("/proc/sys/kernel/cap_last_cap").read_text())
    except (OSError, ValueError):
        return 63


def probe_network_isolation() -> tuple[str, str]:
    """Which network isolation works here: ``("namespace" | "bubblewrap" | "none", reason)``."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="iclr26-probe-") as tmp:
        conf = Confinement(
            "namespace", writable=[tmp], run_as=NOBODY if os.getuid() == 0 else None, cap_last=cap_last()
        )
        try:
            r = subprocess.run(
                ["/bin/sh", "-c", "exit 0"],
                preexec_fn=conf.preexec,
                cwd="/",
                env={},
                capture_output=True,
                timeout=20,
            )
            if r.returncode == 0:
                return "namespace", "unshare(CLONE_NEWNET|CLONE_NEWNS" + (
                    ")" if os.getuid() == 0 else "|CLONE_NEWUSER)"
                ) + " permitted"
            why = f"namespace probe exited with {r.returncode}"
        except (subprocess.SubprocessError, OSError) as exc:
            why = f"namespaces not permitted ({exc})"
        bwrap = shutil.which("bwrap", path=SANDBOX_PATH)
        if bwrap:
            try:
                r = subprocess.run(
                    bubblewrap_prefix([tmp], tmp) + ["/bin/true"], env={}, capture_output=True, timeout=20
                )
                if r.returncode == 0:
                    return "bubblewrap", f"{why}; bubblewrap works"
                why += f"; bubblewrap failed: {r.stderr.decode(errors='replace').strip()[:200]}"
            except (subprocess.SubprocessError, OSError) as exc:
                why += f"; bubblewrap failed ({exc})"
        else:
            why += "; bubblewrap (bwrap) not installed"
        return "none", why

"""The sandbox: compile once (cached by source hash), run many times, each run confined and limited."""

from __future__ import annotations

import hashlib
import math
import os
import shutil
import stat
import tempfile
import threading
import weakref
from collections.abc import Iterable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache

from ._class_archive import NO_ARCHIVE, build_class_archive
from ._exec import Execution, classify, execute, rlimit_list
from ._isolation import (
    SANDBOX_PATH,
    Cgroup,
    Confinement,
    bubblewrap_prefix,
    cap_last,
    find_cgroup,
    fresh_uid,
    probe_network_isolation,
)
from ._languages import LANGUAGES, Language, expand, get_language
from ._launcher import launcher_path
from ._warm import WARM_LANGUAGES, WORKER_SOURCE, Suite, WarmWorker

MiB = 1 << 20
_COMPILE_OUTPUT_LIMIT = 1 * MiB
#: Appended to ``Execution.isolation`` for a run in a warm worker.
WARM_NOTE = (
    "forked from a warm Python worker (its network and mount namespaces are shared with the "
    "worker's earlier runs, all of whose processes were killed before this one started)"
)
#: Appended to ``Execution.isolation`` for a test run with ``isolation="submission"``.
SUBMISSION_NOTE = (
    "one test of a submission: its own process, forked from the submission's supervisor, with its own "
    "pipes, limits and clock; the submission's tests share its uid, working folder and cgroup, and "
    "everything an earlier test started was killed before this one"
)
#: Appended to ``Execution.isolation`` for a test run with ``isolation="process"``.
PROCESS_NOTE = (
    "one test of a submission, run in the submission's one confined Python process after its earlier "
    "tests (LiveCodeBench's sharing), with its own pipes, clock, CPU limit, fresh __main__ and builtins; "
    "the tests share that interpreter (imported modules, IPC namespace), uid, working folder and "
    "cgroup, and anything a test left running besides it was killed, with it, before this one"
)
ISOLATION_MODES = ("test", "submission", "process")


class SandboxUnavailable(RuntimeError):
    """No network isolation works here and the caller did not allow running without it."""


@lru_cache(maxsize=1)
def _network_mode() -> tuple[str, str]:
    return probe_network_isolation()


@lru_cache(maxsize=1)
def _cgroup_spec():
    return find_cgroup()


def isolation_report() -> dict[str, str]:
    """What confinement this machine allows: launcher, network isolation, cgroup, user."""
    mode, why = _network_mode()
    spec = _cgroup_spec()
    launcher = launcher_path()
    return {
        "confinement": f"native launcher ({launcher})" if launcher else "preexec_fn (no C compiler found)",
        "network_isolation": mode,
        "network_isolation_reason": why,
        "cgroup": f"v{spec.version} ({spec.memory_parent})" if spec else "none writable",
        "user": "a fresh uid per run (>= 2e9), after dropping root"
        if os.getuid() == 0
        else f"uid {os.getuid()}"
        + (" as root of a new user namespace, all capabilities dropped" if mode == "namespace" else ""),
    }


def _positive(name: str, value, *, integer: bool = False):
    """``value`` if it is a positive number (an int when ``integer``) below 2**62, else ValueError."""
    ok_type = (int,) if integer else (int, float)
    if (
        isinstance(value, bool)
        or not isinstance(value, ok_type)
        or (isinstance(value, float) and not math.isfinite(value))
        or not 0 < value < 2**62
    ):
        kind = "a positive integer" if integer else "a positive finite number"
        raise ValueError(f"{name} must be {kind} below 2**62, got {value!r}")
    return value


def _as_bytes(name: str, value) -> bytes:
    if isinstance(value, str):
        return value.encode()
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value)
    raise ValueError(f"{name} must be str or bytes, got {type(value).__name__}")


def _check_files(files) -> dict[str, bytes]:
    if files is None:
        return {}
    if not isinstance(files, Mapping):
        raise ValueError(f"files must be a mapping of file name to str/bytes, got {type(files).__name__}")
    out = {}
    for name, content in files.items():
        if not isinstance(name, str) or not name or "/" in name or name in (".", "..") or "\0" in name:
            raise ValueError(f"files: each name must be a plain file name (no '/'), got {name!r}")
        out[name] = _as_bytes(f"files[{name!r}]", content)
    return out


def _rmtree(path: str) -> None:
    def fix(func, p, _exc):
        try:
            os.chmod(os.path.dirname(p), stat.S_IRWXU)
            os.chmod(p, stat.S_IRWXU)
        except OSError:
            pass
        func(p)

    if os.path.isdir(path):
        shutil.rmtree(path, onerror=fix)


def _rmtree_all(paths: list[str]) -> None:
    for path in paths:
        _rmtree(path)


def _tmpfs_folder() -> str | None:
    """``/dev/shm`` when it is a writable tmpfs, else None."""
    try:
        with open("/proc/self/mounts") as f:
            mounted = any(line.split()[1:3] == ["/dev/shm", "tmpfs"] for line in f)
    except OSError:
        return None
    return "/dev/shm" if mounted and os.access("/dev/shm", os.W_OK | os.X_OK) else None


def _stop_workers(workers: set[WarmWorker]) -> None:
    for worker in list(workers):
        worker.close()
    workers.clear()


def _submissions(jobs: list[Job], workers: int) -> list[list[int]]:
    """The jobs' indices grouped by program (source, language, files), in order of first appearance;
    the largest group is halved while there are fewer groups than ``workers``."""
    groups: dict[tuple, list[int]] = {}
    for i, job in enumerate(jobs):
        files = tuple(sorted(_check_files(job.files).items()))
        key = (get_language(job.language).name, _as_bytes(f"jobs[{i}].source", job.source), files)
        groups.setdefault(key, []).append(i)
    parts = list(groups.values())
    while len(parts) < workers:
        largest = max(range(len(parts)), key=lambda k: len(parts[k]), default=None)
        if largest is None or len(parts[largest]) < 2:
            break
        part = parts.pop(largest)
        parts[largest:largest] = [part[: len(part) // 2], part[len(part) // 2 :]]
    return parts


@dataclass
class Program:
    """A program compiled once (or syntax-checked), ready to run on many inputs.

    Attributes
    ----------
    language : Language
    build_dir : str
        Holds the source and what the compiler made; removed when the sandbox closes.
    compile : Execution
        The compile step (status ``ok`` or ``compile_error``).
    """

    language: Language
    build_dir: str
    compile: Execution

    @property
    def ok(self) -> bool:
        return self.compile.status == "ok"


@dataclass(frozen=True)
class Job:
    """One (program, input) pair for :meth:`Sandbox.run_many`."""

    source: str
    language: str
    stdin: str | bytes = ""
    files: Mapping[str, str | bytes] | None = None


class Sandbox:
    """Runs untrusted programs confined, with limits; compiles each distinct program once.

    Parameters
    ----------
    time_limit : float
        Wall-clock seconds per run (the CPU limit is ``ceil(2 * time_limit) + 1`` s, for runtimes with
        helper threads).
    memory_limit : int
        Bytes per run (a cgroup limit where a cgroup is writable, else see :class:`Language.memory`).
    output_limit : int
        Bytes of stdout+stderr per run; beyond it the run is killed with status ``output_limit``.
    processes_limit : int
        Processes/threads per run (JVMs start tens of threads; a fork bomb stops at the limit): the
        cgroup's ``pids.max`` where a cgroup is used, else ``RLIMIT_NPROC`` (per run: each run has its
        own uid as root, its own user namespace otherwise).
    file_size_limit : int or None
        ``RLIMIT_FSIZE`` in bytes (default: ``max(output_limit, 16 MiB)``).
    open_files_limit : int
        ``RLIMIT_NOFILE``.
    compile_time_limit : float
        Wall-clock seconds for a compile step.
    compile_memory_limit : int
        Bytes for a compile step.
    use_cgroup : bool or None
        None: use a cgroup when one is writable; False: never (rlimits and runtime flags only).
    allow_network_isolation_fallback : bool
        When neither namespaces nor bubblewrap work here, run anyway without network isolation (the result
        says ``network_isolated=False``) instead of raising :class:`SandboxUnavailable`.
    network_isolation : str
        ``"auto"`` (namespaces, else bubblewrap), ``"namespace"`` or ``"bubblewrap"``.
    hidden_paths : iterable of str
        Folders the programs must not see (a benchmark's expected outputs, the caller's home): each is
        covered by an empty read-only tmpfs in the run's mount namespace. They may not contain the
        sandbox's own temporary folder.
    native_launcher : bool
        Apply the confinement with a small C launcher (compiled once per process with the system's C
        compiler; much cheaper than forking the interpreter), falling back to ``preexec_fn`` when no C
        compiler is available. False: always ``preexec_fn``.
    warm_workers : bool
        Run Python programs in children forked from warm interpreters (one per concurrent run, started
        on first use, confined once in their own network and mount namespaces, kept until
        :meth:`close`) instead of starting ``python3`` for every run; each run keeps its own uid,
        cgroup, limits, working directory and environment (see ``_warm.py`` and docs/sandbox.md).
        Used only as root with namespace isolation (elsewhere a run's uid could not differ from the
        worker's); otherwise every run starts its own interpreter as without it.
    isolation : str
        How :meth:`run_many` and :meth:`run_tests` confine the tests of one program (a *submission*:
        the same source, language and files). ``"test"``: every test is a confined run of its own.
        ``"submission"``: one supervisor per submission is set up once (uid, cgroup, working folder,
        environment; a child of a warm worker, so in its network and mount namespaces; a Python
        program compiled once) and each test runs in a child forked from it, with its own pipes,
        rlimits, wall clock and status; everything a test started is killed before the next one.
        Same statuses as ``"test"``; the tests of a submission share its uid, folder and cgroup (see
        docs/sandbox.md). ``"process"``: as ``"submission"``, but a Python program's tests run one
        after another in one confined process (LiveCodeBench's design; no fork per test), each with
        its own pipes, clock, CPU limit, fresh ``__main__`` and builtins; they also share that
        interpreter's state (imported modules), and a test can forge its own report; other languages
        run as with ``"submission"``. Used only where warm workers can be (root, namespace
        isolation, ``python3`` on the sandbox's PATH), else :attr:`isolation` falls back to
        ``"test"``; ``"process"`` also needs a cgroup, else it falls back to ``"submission"``.

    Use as a context manager, or call :meth:`close`, to remove compiled programs.
    """

    def __init__(
        self,
        *,
        time_limit: float = 2.0,
        memory_limit: int = 512 * MiB,
        output_limit: int = 16 * MiB,
        processes_limit: int = 128,
        file_size_limit: int | None = None,
        open_files_limit: int = 64,
        compile_time_limit: float = 60.0,
        compile_memory_limit: int = 2048 * MiB,
        use_cgroup: bool | None = None,
        allow_network_isolation_fallback: bool = False,
        network_isolation: str = "auto",
        native_launcher: bool = True,
        hidden_paths: Iterable[str] = (),
        warm_workers: bool = False,
        isolation: str = "test",
    ):
        self.time_limit = _positive("time_limit", time_limit)
        self.memory_limit = _positive("memory_limit", memory_limit, integer=True)
        self.output_limit = _positive("output_limit", output_limit, integer=True)
        self.processes_limit = _positive("processes_limit", processes_limit, integer=True)
        self.file_size_limit = (
            max(self.output_limit, 16 * MiB)
            if file_size_limit is None
            else _positive("file_size_limit", file_size_limit, integer=True)
        )
        self.open_files_limit = _positive("open_files_limit", open_files_limit, integer=True)
        self.compile_time_limit = _positive("compile_time_limit", compile_time_limit)
        self.compile_memory_limit = _positive("compile_memory_limit", compile_memory_limit, integer=True)
        if native_launcher not in (True, False):
            raise ValueError(f"native_launcher must be True or False, got {native_launcher!r}")
        if warm_workers not in (True, False):
            raise ValueError(f"warm_workers must be True or False, got {warm_workers!r}")
        if isolation not in ISOLATION_MODES:
            raise ValueError(f"isolation must be 'test', 'submission' or 'process', got {isolation!r}")
        self._launcher = launcher_path() if native_launcher else None
        if use_cgroup not in (None, True, False):
            raise ValueError(f"use_cgroup must be None, True or False, got {use_cgroup!r}")
        if network_isolation not in ("auto", "namespace", "bubblewrap"):
            raise ValueError(
                f"network_isolation must be 'auto', 'namespace' or 'bubblewrap', got {network_isolation!r}"
            )
        mode, why = _network_mode()
        if network_isolation == "bubblewrap" and mode != "bubblewrap":
            if shutil.which("bwrap", path=SANDBOX_PATH) is None:
                raise SandboxUnavailable("network_isolation='bubblewrap' but bwrap is not installed")
            mode = "bubblewrap"
        elif network_isolation == "namespace" and mode != "namespace":
            raise SandboxUnavailable(f"network_isolation='namespace' but namespaces do not work here: {why}")
        if mode == "none" and not allow_network_isolation_fallback:
            raise SandboxUnavailable(
                "refusing to run untrusted code without network isolation "
                f"({why}); pass allow_network_isolation_fallback=True to run it anyway"
            )
        self.network_mode = mode
        spec = _cgroup_spec()
        if use_cgroup and spec is None:
            raise SandboxUnavailable(
                "use_cgroup=True but no writable cgroup with memory and pids controllers"
            )
        self._cgroup = spec if use_cgroup is not False else None
        self._root = os.getuid() == 0
        self._cap_last = cap_last()
        self._tmp = tempfile.mkdtemp(prefix="iclr26-sandbox-")
        os.chmod(self._tmp, 0o755)
        # Runs' working folders: on a tmpfs when each run has a cgroup (what a run writes there is
        # charged to its memory limit; creating and removing a folder costs ~0.01 ms there against
        # 1-3 ms on this machine's ext4), else beside the builds.
        tmpfs = _tmpfs_folder() if self._cgroup is not None else None
        self._runs = tempfile.mkdtemp(prefix="iclr26-sandbox-runs-", dir=tmpfs) if tmpfs else self._tmp
        os.chmod(self._runs, 0o755)
        self._finalizer = weakref.finalize(self, _rmtree_all, [self._tmp, self._runs])  # also without close()
        self.hidden_paths = self._check_hidden(hidden_paths)
        self._programs: dict[tuple[str, str], Future] = {}
        self._class_archives: dict[str, Future] = {}
        self._lock = threading.Lock()
        self._closed = False
        workers_possible = (
            self._root and mode == "namespace" and shutil.which("python3", path=SANDBOX_PATH) is not None
        )
        self.warm_workers = warm_workers and workers_possible
        #: The isolation in effect: ``"submission"`` only where warm workers can supervise submissions,
        #: ``"process"`` only there and with a cgroup (else ``"submission"``).
        self.isolation = isolation if workers_possible else "test"
        if self.isolation == "process" and self._cgroup is None:
            self.isolation = "submission"
        self._warm_idle: list[WarmWorker] = []
        self._warm_all: set[WarmWorker] = set()
        self._warm_finalizer = weakref.finalize(self, _stop_workers, self._warm_all)
        if self.warm_workers or self.isolation != "test":
            # Runs in warm workers get their folders here: the only folder the workers' shared mount
            # namespace leaves writable (each run's folder is writable by that run's uid only).
            self._warm_dir = os.path.join(self._runs, "warm")
            os.mkdir(self._warm_dir, 0o755)
            self._warm_script = os.path.join(self._tmp, "warm_worker.py")
            with open(self._warm_script, "w") as f:
                f.write(WORKER_SOURCE)
            os.chmod(self._warm_script, 0o644)

    def _check_hidden(self, paths) -> list[str]:
        if isinstance(paths, str | bytes):
            raise ValueError(f"hidden_paths must be an iterable of folder paths, got the string {paths!r}")
        out = []
        for p in paths:
            if not isinstance(p, str) or not os.path.isabs(p) or not os.path.isdir(p):
                raise ValueError(f"hidden_paths: each must be an existing absolute folder, got {p!r}")
            real = os.path.realpath(p)
            for own in dict.fromkeys([self._tmp, self._runs]):
                if os.path.commonpath([real, os.path.realpath(own)]) == real:
                    raise ValueError(f"hidden_paths: {p!r} contains the sandbox's own folder {own!r}")
            out.append(real)
        if out and self.network_mode == "none":
            raise SandboxUnavailable("hidden_paths needs namespaces or bubblewrap, and neither works here")
        return out

    # ------------------------------------------------------------------------------------- plumbing
    def _isolation_text(self) -> str:
        if self.network_mode == "namespace":
            if self._root:
                return "namespaces (new network + mount + IPC namespace, read-only file system), own uid"
            return (
                "namespaces (new user + network + mount + IPC + PID namespace, read-only file system), "
                "no capabilities"
            )
        if self.network_mode == "bubblewrap":
            return f"bubblewrap (--unshare-net, read-only file system), {'own uid' if self._root else 'user'}"
        return (
            "NO network isolation and a writable file system (fallback allowed by caller), "
            f"{'own uid' if self._root else 'user'}"
        )

    def _limits(
        self,
        cgroup: Cgroup | None,
        *,
        time_limit: float,
        memory_limit: int,
        language: Language,
        compiling: bool,
    ) -> tuple[int, list[tuple[int, int]], str]:
        """The CPU limit (s), the rlimits and the memory mechanism of one execution."""
        if cgroup is not None:
            as_limit = data_limit = None
            mechanism = cgroup.mechanism
        elif language.memory == "rlimit-as" and not compiling:
            as_limit, data_limit, mechanism = memory_limit, None, "rlimit-as"
        else:
            as_limit = None
            data_limit = memory_limit + language.data_overhead_mb * MiB
            mechanism = "runtime-flags+rlimit-data"
        cpu_limit = math.ceil(2 * time_limit) + 1
        rlimits = rlimit_list(
            cpu_seconds=cpu_limit,
            memory=as_limit,
            data=data_limit,
            # RLIMIT_NPROC counts every process of the user, zombies that init has not reaped
            # yet included: a cgroup's pids.max counts this run only, so it replaces it.
            nproc=None if cgroup is not None else self.processes_limit,
            fsize=self.file_size_limit,
            nofile=self.open_files_limit,
        )
        return cpu_limit, rlimits, mechanism

    def _confined(
        self,
        argv: list[str],
        *,
        workdir: str,
        env: dict[str, str],
        stdin: bytes,
        time_limit: float,
        memory_limit: int,
        output_limit: int,
        language: Language,
        compiling: bool,
        uid: int | None,
        warm: WarmWorker | None = None,
    ) -> Execution:
        """Run ``argv`` (or, with ``warm``, the Python program ``argv[-1]`` in a child of that worker)
        confined and limited, and classify the outcome."""
        cgroup = None
        if self._cgroup is not None:
            cgroup = Cgroup(self._cgroup, memory_limit, self.processes_limit)
        try:
            cpu_limit, rlimits, mechanism = self._limits(
                cgroup,
                time_limit=time_limit,
                memory_limit=memory_limit,
                language=language,
                compiling=compiling,
            )
            if warm is not None:
                raw = warm.run(
                    path=argv[-1],
                    workdir=workdir,
                    uid=uid,
                    rlimits=rlimits,
                    env=env,
                    stdin=stdin,
                    wall_limit=time_limit,
                    output_limit=output_limit,
                    cgroup=cgroup,
                )
            else:
                conf = Confinement(
                    "namespace" if self.network_mode == "namespace" else "none",
                    writable=[workdir],
                    rlimits=rlimits,
                    cgroup_procs=cgroup.procs_files if cgroup else [],
                    run_as=uid,
                    hidden=self.hidden_paths,
                    chdir=workdir,
                    cap_last=self._cap_last,
                )
                if self.network_mode == "bubblewrap":
                    argv = bubblewrap_prefix([workdir], workdir, self.hidden_paths) + argv
                raw = execute(
                    argv,
                    cwd=workdir,
                    env=env,
                    stdin=stdin,
                    wall_limit=time_limit,
                    output_limit=output_limit,
                    confinement=conf,
                    cgroup=cgroup,
                    launcher=self._launcher,
                )
            result = self._execution(
                raw,
                cpu_limit=cpu_limit,
                cgroup=cgroup,
                oom_kills_before=0,
                mechanism=mechanism,
                note=WARM_NOTE if warm is not None else None,
            )
        finally:
            if cgroup is not None:
                cgroup.kill_all()
                cgroup.remove()
        return result

    def _execution(self, raw, *, cpu_limit, cgroup, oom_kills_before, mechanism, note) -> Execution:
        """Classify a finished run (OOM kills are those of its cgroup since ``oom_kills_before``)."""
        oom_killed = cgroup.oom_kills() > oom_kills_before if cgroup else False
        status, detail = classify(raw, cpu_limit=cpu_limit, oom_killed=oom_killed)
        peak = cgroup.peak_memory() if cgroup else None
        isolation = self._isolation_text()
        if note is not None:
            isolation += f"; {note}"
        return Execution(
            status=status,
            exit_code=raw.exit_code,
            signal=raw.signal,
            stdout=raw.stdout.decode(errors="replace"),
            stderr=raw.stderr.decode(errors="replace"),
            wall_time=raw.wall_time,
            cpu_time=raw.cpu_time,
            peak_memory=peak if peak is not None else raw.maxrss,
            isolation=isolation,
            memory_mechanism=mechanism,
            network_isolated=self.network_mode != "none",
            detail=detail,
        )

    def _env(self, workdir: str, build: str, extra, mem_mb: int) -> dict[str, str]:
        env = {
            "PATH": SANDBOX_PATH,
            "HOME": workdir,
            "TMPDIR": workdir,
            "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8",
        }
        values = {
            "build": build,
            "mem_mb": mem_mb,
            "compile_mem_mb": max(1, self.compile_memory_limit // MiB),
        }
        env.update({k: v.format(**values) for k, v in extra.items()})
        return env

    def _new_uid(self) -> int | None:
        return fresh_uid() if self._root else None

    @staticmethod
    def _give(path: str, uid: int | None) -> None:
        if uid is not None:
            os.chown(path, uid, uid)

    # ------------------------------------------------------------------------------------- public
    def compile(self, source: str | bytes, language: str) -> Program:
        """Compile (or syntax-check) ``source`` once; the same source and language return the same Program.

        Raises
        ------
        ValueError
            If ``source`` is not str/bytes or ``language`` is unknown.
        """
        if self._closed:
            raise ValueError("this Sandbox is closed")
        lang = get_language(language)
        src = _as_bytes("source", source)
        key = (lang.name, hashlib.sha256(src).hexdigest())
        with self._lock:
            fut = self._programs.get(key)
            owner = fut is None
            if owner:
                fut = self._programs[key] = Future()
        if not owner:
            return fut.result()
        try:
            program = self._build(lang, src)
        except BaseException as exc:
            fut.set_exception(exc)
            with self._lock:
                self._programs.pop(key, None)
            raise
        fut.set_result(program)
        return program

    def _class_archive(self, lang: Language) -> str:
        """The run-command option for ``lang``'s class-data archive, built on first use (see
        ``_class_archive.py``); the JVM's default where the language has none or it cannot be built."""
        if not lang.class_archive:
            return NO_ARCHIVE
        with self._lock:
            fut = self._class_archives.get(lang.name)
            owner = fut is None
            if owner:
                fut = self._class_archives[lang.name] = Future()
        if not owner:
            return fut.result()
        try:
            option = build_class_archive(lang.class_archive, self._tmp, lang.name)
        except BaseException as exc:
            fut.set_exception(exc)
            with self._lock:
                self._class_archives.pop(lang.name, None)
            raise
        fut.set_result(option)
        return option

    def _build(self, lang: Language, src: bytes) -> Program:
        build = tempfile.mkdtemp(prefix=f"{lang.name}-", dir=self._tmp)
        os.chmod(build, 0o755)
        with open(os.path.join(build, lang.source_file), "wb") as f:
            f.write(src)
        os.chmod(os.path.join(build, lang.source_file), 0o644)
        if lang.compile is None:
            return Program(lang, build, Execution(status="ok", detail="nothing to compile"))
        if shutil.which(lang.executable, path=SANDBOX_PATH) is None:
            raise FileNotFoundError(
                f"{lang.name}: {lang.executable!r} is not installed (Debian package: {lang.debian})"
            )
        uid = self._new_uid()
        self._give(build, uid)
        mem_mb = max(1, self.compile_memory_limit // MiB)
        values = {"build": build, "mem_mb": mem_mb, "compile_mem_mb": mem_mb}
        result = self._confined(
            expand(lang.compile, **values),
            workdir=build,
            env=self._env(build, build, lang.compile_env, mem_mb),
            stdin=b"",
            time_limit=self.compile_time_limit,
            memory_limit=self.compile_memory_limit,
            output_limit=_COMPILE_OUTPUT_LIMIT,
            language=lang,
            compiling=True,
            uid=uid,
        )
        if lang.compile_artifact is not None:
            made = os.path.exists(os.path.join(build, lang.compile_artifact))
            if made and result.status == "runtime_error":
                result.status, result.detail = (
                    "ok",
                    f"{lang.compile_artifact} produced (diagnostics in stderr)",
                )
        if result.status != "ok":
            result.detail = f"compile step: {result.status}: {result.detail}"
            result.status = "compile_error"
        if self.network_mode == "none" and self._root:  # nothing else keeps a run from altering the build
            for root, dirs, files in os.walk(build):
                for name in dirs + files:
                    os.lchown(os.path.join(root, name), 0, 0)
            os.chown(build, 0, 0)
        return Program(lang, build, result)

    def _program(self, program, language) -> Program:
        if isinstance(program, Program):
            return program
        if language is None:
            raise ValueError("language is required when program is source code")
        return self.compile(program, language)

    def _run_limits(self, time_limit, memory_limit, output_limit) -> tuple[float, int, int]:
        """This call's limits: the sandbox's, or the validated overrides."""
        return (
            self.time_limit if time_limit is None else _positive("time_limit", time_limit),
            self.memory_limit
            if memory_limit is None
            else _positive("memory_limit", memory_limit, integer=True),
            self.output_limit
            if output_limit is None
            else _positive("output_limit", output_limit, integer=True),
        )

    @staticmethod
    def _not_compiled(program: Program) -> Execution:
        c = program.compile
        return Execution(
            status="compile_error",
            stdout=c.stdout,
            stderr=c.stderr,
            wall_time=0.0,
            isolation=c.isolation,
            memory_mechanism=c.memory_mechanism,
            network_isolated=c.network_isolated,
            compile=c,
            detail=c.detail,
        )

    @staticmethod
    def _check_runnable(program: Program) -> None:
        lang = program.language
        if shutil.which(lang.run[0].format(build=program.build_dir), path=SANDBOX_PATH) is None:
            raise FileNotFoundError(
                f"{lang.name}: {lang.run[0]!r} is not installed (Debian package: {lang.debian})"
            )

    def _new_workdir(self, files: dict[str, bytes], uid: int | None, *, warm: bool) -> str:
        """A fresh working folder holding ``files``, owned by ``uid``."""
        workdir = tempfile.mkdtemp(prefix="run-", dir=self._warm_dir if warm else self._runs)
        try:
            for name, content in files.items():
                with open(os.path.join(workdir, name), "wb") as f:
                    f.write(content)
                self._give(os.path.join(workdir, name), uid)
            self._give(workdir, uid)
        except BaseException:
            _rmtree(workdir)
            raise
        return workdir

    def run(
        self,
        program: Program | str | bytes,
        language: str | None = None,
        stdin: str | bytes = "",
        *,
        files: Mapping[str, str | bytes] | None = None,
        time_limit: float | None = None,
        memory_limit: int | None = None,
        output_limit: int | None = None,
    ) -> Execution:
        """Run a program (a :class:`Program`, or source plus ``language``) on ``stdin``.

        The run gets a fresh working directory holding ``files``, removed afterwards. ``time_limit``,
        ``memory_limit`` and ``output_limit`` override the sandbox's limits for this run.

        Raises
        ------
        ValueError
            On bad arguments (unknown language, stdin or files of the wrong type, bad file names).
        FileNotFoundError
            If the language's toolchain is not installed.
        """
        program = self._program(program, language)
        data = _as_bytes("stdin", stdin)
        extra_files = _check_files(files)
        limits = self._run_limits(time_limit, memory_limit, output_limit)
        if not program.ok:
            return self._not_compiled(program)
        self._check_runnable(program)
        return self._run_one(program, data, extra_files, *limits)

    def _run_one(self, program, data, files, time_limit, memory_limit, output_limit) -> Execution:
        """One confined run of its own (isolation per test)."""
        lang = program.language
        warm = self.warm_workers and lang.name in WARM_LANGUAGES
        uid = self._new_uid()
        workdir = self._new_workdir(files, uid, warm=warm)
        try:
            mem_mb = max(1, memory_limit // MiB)
            argv = expand(lang.run, **self._run_values(program, mem_mb))
            with self._borrowed_worker(warm) as worker:
                result = self._confined(
                    argv,
                    workdir=workdir,
                    env=self._env(workdir, program.build_dir, lang.env, mem_mb),
                    stdin=data,
                    time_limit=time_limit,
                    memory_limit=memory_limit,
                    output_limit=output_limit,
                    language=lang,
                    compiling=False,
                    uid=uid,
                    warm=worker,
                )
        finally:
            _rmtree(workdir)
        result.compile = program.compile
        return result

    def run_tests(
        self,
        program: Program | str | bytes,
        language: str | None = None,
        inputs: Iterable[str | bytes] = (),
        *,
        files: Mapping[str, str | bytes] | None = None,
        time_limit: float | None = None,
        memory_limit: int | None = None,
        output_limit: int | None = None,
    ) -> list[Execution]:
        """Run one program on each of ``inputs``, one after the other; one :class:`Execution` per input.

        With :attr:`isolation` ``"submission"`` the tests share one supervisor (set up once) and each
        runs in a child forked from it; with ``"test"`` each is a :meth:`run` of its own. Other
        arguments as :meth:`run`.
        """
        program = self._program(program, language)
        if isinstance(inputs, str | bytes) or not isinstance(inputs, Iterable):
            raise ValueError(f"inputs must be an iterable of str/bytes, got {type(inputs).__name__}")
        data = [_as_bytes(f"inputs[{i}]", x) for i, x in enumerate(inputs)]
        extra_files = _check_files(files)
        limits = self._run_limits(time_limit, memory_limit, output_limit)
        if not program.ok:
            return [self._not_compiled(program) for _ in data]
        if not data:
            return []
        self._check_runnable(program)
        if self.isolation == "test":
            return [self._run_one(program, x, extra_files, *limits) for x in data]
        return self._run_submission(program, data, extra_files, *limits)

    def _run_submission(
        self, program, inputs, files, time_limit, memory_limit, output_limit
    ) -> list[Execution]:
        """The tests of one program in children of one supervisor (isolation per submission or process)."""
        lang = program.language
        uid = self._new_uid()
        workdir = self._new_workdir(files, uid, warm=True)
        cgroup = None
        try:
            mem_mb = max(1, memory_limit // MiB)
            if self._cgroup is not None:
                cgroup = Cgroup(self._cgroup, memory_limit, self.processes_limit)
            cpu_limit, rlimits, mechanism = self._limits(
                cgroup, time_limit=time_limit, memory_limit=memory_limit, language=lang, compiling=False
            )
            argv = expand(lang.run, **self._run_values(program, mem_mb))
            shared = self.isolation == "process" and lang.name in WARM_LANGUAGES and cgroup is not None
            with self._borrowed_worker() as worker:
                suite = worker.open_suite(
                    path=argv[-1],
                    argv=None if lang.name in WARM_LANGUAGES else argv,
                    workdir=workdir,
                    uid=uid,
                    rlimits=rlimits,
                    env=self._env(workdir, program.build_dir, lang.env, mem_mb),
                    cgroup=cgroup,
                    shared=shared,
                )
                note = PROCESS_NOTE if shared else SUBMISSION_NOTE
                try:
                    results = [
                        self._submission_test(suite, x, time_limit, output_limit, cpu_limit, mechanism, note)
                        for x in inputs
                    ]
                finally:
                    suite.close()
        finally:
            if cgroup is not None:
                cgroup.kill_all()
                cgroup.remove()
            _rmtree(workdir)
        for result in results:
            result.compile = program.compile
        return results

    def _submission_test(
        self, suite: Suite, data, time_limit, output_limit, cpu_limit, mechanism, note
    ) -> Execution:
        cgroup = suite.cgroup
        oom_kills_before = cgroup.oom_kills() if cgroup else 0
        if cgroup is not None:
            cgroup.reset_peak()
        raw = suite.run(stdin=data, wall_limit=time_limit, output_limit=output_limit)
        return self._execution(
            raw,
            cpu_limit=cpu_limit,
            cgroup=cgroup,
            oom_kills_before=oom_kills_before,
            mechanism=mechanism,
            note=note,
        )

    def _run_values(self, program: Program, mem_mb: int) -> dict:
        """The placeholders of a language's run command for ``program``."""
        return {
            "build": program.build_dir,
            "mem_mb": mem_mb,
            "compile_mem_mb": mem_mb,
            "class_archive": self._class_archive(program.language),
        }

    @contextmanager
    def _borrowed_worker(self, warm: bool = True) -> Iterator[WarmWorker | None]:
        """A warm worker for one run (``None`` when ``warm`` is false), returned to the idle ones
        afterwards, or dropped when the run raised: its protocol state is then unknown."""
        if not warm:
            yield None
            return
        worker = self._take_worker()
        try:
            yield worker
        except BaseException:
            self._drop_worker(worker)
            raise
        self._return_worker(worker)

    def _take_worker(self) -> WarmWorker:
        """An idle warm worker, or a new one (one per concurrent run)."""
        with self._lock:
            if self._closed:
                raise ValueError("this Sandbox is closed")
            if self._warm_idle:
                return self._warm_idle.pop()
        python = LANGUAGES["python"]
        conf = Confinement(
            "namespace",
            writable=[self._warm_dir],
            hidden=self.hidden_paths,
            chdir=self._warm_dir,
            cap_last=self._cap_last,
        )
        worker = WarmWorker(
            list(python.run[:-1]),
            self._warm_script,
            conf,
            self._launcher,
            self._env(self._warm_dir, self._warm_dir, python.env, max(1, self.memory_limit // MiB)),
            self._warm_dir,
        )
        with self._lock:
            self._warm_all.add(worker)
        return worker

    def _return_worker(self, worker: WarmWorker) -> None:
        with self._lock:
            if not self._closed:
                self._warm_idle.append(worker)
                return
        self._drop_worker(worker)

    def _drop_worker(self, worker: WarmWorker) -> None:
        with self._lock:
            self._warm_all.discard(worker)
        worker.close()

    def run_many(self, jobs: Iterable[Job | tuple], *, workers: int | None = None) -> list[Execution]:
        """Run many (program, input) pairs on a pool of ``workers`` threads; results in input order.

        Each distinct (source, language) is compiled once and its binary reused for all its inputs.
        ``jobs`` holds :class:`Job` objects or ``(source, language[, stdin])`` tuples. With
        :attr:`isolation` ``"submission"``, the jobs of one program (same source, language and files)
        are one submission (:meth:`run_tests`), split into parts only to keep every thread busy.
        """
        items = []
        for i, job in enumerate(jobs):
            if isinstance(job, tuple):
                if not 2 <= len(job) <= 3:
                    raise ValueError(
                        f"jobs[{i}] must be a Job or (source, language[, stdin]), got {job!r:.80}"
                    )
                job = Job(*job)
            if not isinstance(job, Job):
                raise ValueError(f"jobs[{i}] must be a Job or a tuple, got {type(job).__name__}")
            items.append(job)
        workers = (os.cpu_count() or 1) if workers is None else _positive("workers", workers, integer=True)
        with ThreadPoolExecutor(max_workers=workers) as pool:
            if self.isolation == "test":
                futures = [pool.submit(self.run, j.source, j.language, j.stdin, files=j.files) for j in items]
                return [f.result() for f in futures]
            parts = _submissions(items, workers)
            futures = [
                pool.submit(
                    self.run_tests,
                    items[ix[0]].source,
                    items[ix[0]].language,
                    [items[i].stdin for i in ix],
                    files=items[ix[0]].files,
                )
                for ix in parts
            ]
            results: list[Execution | None] = [None] * len(items)
            for ix, future in zip(parts, futures):
                for i, result in zip(ix, future.result()):
                    results[i] = result
            return results

    def close(self) -> None:
        """Stop the warm workers; remove every compiled program and working directory."""
        with self._lock:
            self._closed = True
            self._warm_idle.clear()
        self._warm_finalizer()
        self._finalizer()

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

"""What a headline experiment receives: seed, scale, its output folder, progress bars, plot saving."""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import hashlib
import io
import os
import random
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from .store import atomic_write_bytes, atomic_write_json

SCALES = ("small", "medium")
#: Options of the model benchmarks (``iclr26 run SLUG --model ... --limit ... --batch-size ...``) and
#: ``--results`` (a folder of the authors' published results). A system takes the ones its experiment
#: module lists in ``MODEL_OPTIONS``.
MODEL_OPTIONS = ("model", "judge", "limit", "batch_size", "api_key_env", "results")
T = TypeVar("T")
R = TypeVar("R")


#: Environment variable naming the folder that holds the authors' published data, one sub-folder per slug.
SHARED_DATA_ENV = "ICLR26_SHARED_DATA"


def find_shared_data(slug: str, marker: str, env: str | None = None) -> Path | None:
    """The folder of a system's published data from its authors, or ``None`` when it is absent.

    Looked for in this order: ``$env`` (a system's own variable, the folder itself), then
    ``$ICLR26_SHARED_DATA/<slug>``, then ``shared/data/<slug>`` in the checkout, beside it or one level
    up (the project's layout: ``/work/shared/data/<slug>`` for a checkout in ``/work/<dir>``). A folder
    counts only when it holds ``marker`` (a file or folder path relative to it), so a half-copied or
    unrelated folder is skipped. Experiments and tests use this to run on the authors' data when it is
    there; the library never depends on it.
    """
    cands = [os.environ.get(env)] if env else []
    shared = os.environ.get(SHARED_DATA_ENV)
    cands += [str(Path(shared) / slug)] if shared else []
    repo = Path(__file__).resolve().parents[2]
    cands += [str(up / "shared" / "data" / slug) for up in (repo, repo.parent, repo.parent.parent)]
    return next((Path(c) for c in cands if c and (Path(c) / marker).exists()), None)


#: Environment variable holding torch's intra-op thread count for experiments that run language models.
TORCH_THREADS_ENV = "ICLR26_TORCH_THREADS"
#: Environment variable: worker processes of the experiments that split their work (:func:`worker_count`).
WORKERS_ENV = "ICLR26_WORKERS"


def set_torch_threads() -> int:
    """Set torch's intra-op threads from ``$ICLR26_TORCH_THREADS`` (default 1); return the count.

    One thread by default: on a shared 2-core machine two OpenMP threads were ~9x slower (118 s vs 13 s
    per SmolLM2 batch of 8 at load ~10); set 2 on an idle machine. Values below 1 count as 1.
    """
    import torch

    raw = os.environ.get(TORCH_THREADS_ENV, "1")
    try:
        n = max(1, int(raw))
    except ValueError:
        raise ValueError(f"{TORCH_THREADS_ENV} must be an integer, got {raw!r}") from None
    torch.set_num_threads(n)
    return n


#: mallopt(3) parameter numbers (glibc's <malloc.h>) by the names :func:`malloc_settings` takes.
MALLOPT_PARAMETERS = {"trim_threshold": -1, "mmap_threshold": -3, "mmap_max": -4}


@contextlib.contextmanager
def malloc_settings(during: dict[str, int], after: dict[str, int]) -> Iterator[bool]:
    """Inside the block glibc's malloc runs with ``during`` (mallopt(3) parameters by name, see
    :data:`MALLOPT_PARAMETERS`); on exit ``after`` is set and freed memory is handed back
    (``malloc_trim``). Yields whether ``during`` took effect: nothing changes where the C library has no
    ``mallopt`` (not glibc). Process-wide, and inherited by processes forked inside the block."""
    from .validation import check_int

    unknown = (set(during) | set(after)) - set(MALLOPT_PARAMETERS)
    if unknown:
        raise ValueError(f"malloc settings: unknown {sorted(unknown)}; expected {sorted(MALLOPT_PARAMETERS)}")
    for name, value in (*during.items(), *after.items()):  # mallopt takes a C int: no silent wrap-around
        check_int(value, f"malloc setting {name}", minimum=0, maximum=2**31 - 1)
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        yield False
        return
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    # a list, not a generator: every setting is applied even after one fails
    ok = all([mallopt(MALLOPT_PARAMETERS[name], value) == 1 for name, value in during.items()])
    try:
        yield ok
    finally:
        for name, value in after.items():
            mallopt(MALLOPT_PARAMETERS[name], value)
        getattr(libc, "malloc_trim", lambda _pad: 0)(0)


#: What :func:`fork_map`'s workers inherit from their parent (the function and its jobs), so that
#: neither is pickled: only results travel back.
_FORKED: dict[str, Any] = {}


def _init_forked(threads: int) -> None:
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(threads)


def _call_forked(index: int) -> Any:
    return _FORKED["fn"](_FORKED["jobs"][index])


def fork_map(
    fn: Callable[[T], R],
    jobs: Sequence[T],
    *,
    workers: int = 2,
    threads: int = 1,
    progress: Callable[[Iterable[Any]], Iterable[Any]] | None = None,
    on_result: Callable[[int, R], None] | None = None,
) -> list[R]:
    """``[fn(job) for job in jobs]``, computed in ``workers`` forked processes of ``threads`` torch threads.

    The workers are forked from this process, so ``fn`` may be a closure over large objects (a model, a
    dataset): they are shared copy-on-write and never pickled; each result is pickled back. Results
    come in job order. One worker, one job, a platform without ``fork``, or a call from inside a worker
    (no nesting) computes in this process with its current torch threads; a result then equals the
    forked one only when ``threads`` equals this process's thread count. An exception in ``fn`` is
    raised here once the other jobs are cancelled. ``progress`` wraps the completion stream (e.g.
    ``RunContext.progress``); ``on_result(index, result)`` is called here as each job finishes (in
    completion order), e.g. to save it so that an interrupted run can resume.
    """
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    from .validation import check_int

    workers = check_int(workers, "workers", minimum=1)
    threads = check_int(threads, "threads", minimum=1)
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}")
    jobs = list(jobs)
    wrap = progress or (lambda stream: stream)
    results: list[Any] = [None] * len(jobs)

    def record(index: int, result: Any) -> None:
        results[index] = result
        if on_result is not None:
            on_result(index, result)

    if workers == 1 or len(jobs) <= 1 or _FORKED or "fork" not in multiprocessing.get_all_start_methods():
        for index in wrap(range(len(jobs))):
            record(index, fn(jobs[index]))
        return results
    _FORKED.update(fn=fn, jobs=jobs)
    try:
        context = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(
            min(workers, len(jobs)), mp_context=context, initializer=_init_forked, initargs=(threads,)
        ) as pool:
            futures = {pool.submit(_call_forked, i): i for i in range(len(jobs))}
            try:
                for future in wrap(as_completed(futures)):
                    record(futures[future], future.result())
            except BaseException:
                for future in futures:
                    future.cancel()
                raise
    finally:
        _FORKED.clear()
    return results


def source_digest(module_file: str | os.PathLike) -> str:
    """SHA-256 of the ``*.py`` files in the folder of ``module_file`` (a system's package, not the core
    modules it calls): part of a saved result's name, so that only the code that made it reuses it."""
    h = hashlib.sha256()
    for path in sorted(Path(module_file).parent.glob("*.py")):
        h.update(path.name.encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def saved_results(
    folder: str | os.PathLike,
    names: Sequence[str],
    compute: Callable[[list[int], Callable[[int, Any], None]], Any],
) -> list:
    """Results of the jobs named ``names`` (one per job, e.g. a hash of all it depends on), each pickled
    as ``folder/name``: the saved ones are read back and ``compute(todo, save)`` computes the others
    (``todo``: their indices in ``names``), calling ``save(index, result)`` as each finishes, which
    writes it atomically. A run stopped part-way (hours of fine-tuning on a CPU) resumes with the jobs
    still missing. Returns the results in the order of ``names``."""
    import pickle

    paths = [Path(folder) / name for name in names]
    if len(set(paths)) != len(paths):
        raise ValueError("names must be distinct: two jobs would share a saved result")
    done = {i: pickle.loads(p.read_bytes()) for i, p in enumerate(paths) if p.is_file()}

    def save(index: int, result: Any) -> None:
        atomic_write_bytes(paths[index], pickle.dumps(result))
        done[index] = result

    compute([i for i in range(len(paths)) if i not in done], save)
    missing = [names[i] for i in range(len(paths)) if i not in done]
    if missing:
        raise RuntimeError(f"compute returned without saving {len(missing)} job(s), e.g. {missing[0]!r}")
    return [done[i] for i in range(len(paths))]


def worker_count(default: int = 2) -> int:
    """Worker processes for an experiment's independent jobs: ``$ICLR26_WORKERS``, else ``default``.

    The default 2 suits the 2-core machine the budgets are measured on; each worker runs one torch
    thread (:func:`fork_map`), and 1 runs every job in the experiment's own process.
    """
    raw = os.environ.get(WORKERS_ENV)
    if raw is None:
        return default
    try:
        n = int(raw)
    except ValueError:
        n = 0
    if n < 1:
        raise ValueError(f"{WORKERS_ENV} must be a positive integer, got {raw!r}")
    return n


def seed_everything(seed: int) -> np.random.Generator:
    """Seed Python, NumPy and (if already imported) torch; return a NumPy generator for ``seed``."""
    random.seed(seed)
    np.random.seed(seed % 2**32)  # noqa: NPY002 - third-party code may still draw from the global state
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.manual_seed(seed)
    return np.random.default_rng(seed)


@dataclass
class RunContext:
    """Everything an experiment needs from the runner.

    Attributes
    ----------
    slug: the system's slug.
    seed: the run's seed; experiments derive every random generator from it.
    scale: ``"small"`` (default, minutes on 2 CPU cores) or ``"medium"`` (closer to the paper).
    out_dir: the system's own folder, ``DIR/SLUG/``; plots and extra files go here.
    show_progress: whether progress bars are drawn (on stderr).
    model, judge: for model benchmarks, the model (and judge) spec the user chose (``embedded``,
        ``hf:PATH``, ``openai:MODEL@URL``; see :func:`iclr26.models.load_model`); ``None``: the
        system's default.
    limit: for model benchmarks, use at most this many items (the system says what an item is).
    batch_size: for model benchmarks, prompts per model call (``None``: the system's default).
    api_key_env: the environment variable holding the API key of an ``openai:`` model or judge.
    results: a folder of the authors' published results, for systems that re-score them (an existing
        folder; the system's docs page says which layout).
    """

    slug: str
    seed: int = 0
    scale: str = "small"
    out_dir: Path = field(default_factory=lambda: Path("results") / "_scratch")
    show_progress: bool = True
    artifacts: list[str] = field(default_factory=list)
    model: str | None = None
    judge: str | None = None
    limit: int | None = None
    batch_size: int | None = None
    api_key_env: str | None = None
    results: str | None = None

    def __post_init__(self) -> None:
        if self.scale not in SCALES:
            raise ValueError(f"scale must be one of {SCALES}, got {self.scale!r}")
        for name in ("limit", "batch_size"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        for name in ("model", "judge", "api_key_env", "results"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, str) or not value):
                raise ValueError(f"{name} must be a non-empty string, got {value!r}")
        if self.results is not None and not Path(self.results).is_dir():
            raise ValueError(f"results must be an existing folder, got {self.results!r}")
        self.out_dir = Path(self.out_dir)
        self.out_dir.mkdir(parents=True, exist_ok=True)

    @property
    def small(self) -> bool:
        return self.scale == "small"

    def model_options(self) -> dict[str, Any]:
        """The model-benchmark options that were set (for provenance and config hashes)."""
        return {k: getattr(self, k) for k in MODEL_OPTIONS if getattr(self, k) is not None}

    def load_model(self, default: str = "embedded", *, judge: bool = False, dtype: str | None = None) -> Any:
        """The model the user chose (``--model``, or ``--judge`` when ``judge``), else ``default``,
        loaded with :func:`iclr26.models.load_model` (``api_key_env`` goes to HTTP models only;
        ``dtype``, the precision a system computes in, to local models only: a server sets its own)."""
        from .models import load_model

        spec = (self.judge if judge else self.model) or default
        kwargs = {}
        remote = spec.startswith(("openai:", "http://", "https://"))
        if self.api_key_env and remote:
            kwargs["api_key_env"] = self.api_key_env
        if dtype is not None and not remote:
            kwargs["dtype"] = dtype
        return load_model(spec, **kwargs)

    def rng(self, offset: int = 0) -> np.random.Generator:
        """A NumPy generator derived from the run seed (``offset`` separates independent streams)."""
        return np.random.default_rng([self.seed, offset])

    def progress(
        self, iterable: Iterable[T], total: int | None = None, desc: str | None = None
    ) -> Iterator[T]:
        """Wrap ``iterable`` in a progress bar (tqdm on stderr) unless progress is disabled."""
        from tqdm.auto import tqdm

        disable = not self.show_progress or os.environ.get("ICLR26_NO_PROGRESS") == "1"
        desc = f"{self.slug}: {desc}" if desc else self.slug
        return iter(tqdm(iterable, total=total, desc=desc, disable=disable, leave=False, file=sys.stderr))

    def savefig(self, fig: Any, name: str, dpi: int = 110) -> Path:
        """Save a matplotlib figure as ``out_dir/name`` (PNG) atomically and record it as an artifact."""
        if not name.endswith(".png"):
            name += ".png"
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
        path = atomic_write_bytes(self.out_dir / name, buf.getvalue())
        if name not in self.artifacts:
            self.artifacts.append(name)
        try:
            import matplotlib.pyplot as plt

            plt.close(fig)
        except ImportError:  # pragma: no cover - matplotlib is a core dependency
            pass
        return path

    def save_json(self, obj: Any, name: str) -> Path:
        """Save extra JSON output (e.g. a full table) as ``out_dir/name`` atomically, as an artifact."""
        path = atomic_write_json(self.out_dir / name, obj)
        if name not in self.artifacts:
            self.artifacts.append(name)
        return path

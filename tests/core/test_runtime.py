"""Runtime helpers shared by the experiments."""

from __future__ import annotations

import numpy as np
import pytest

from iclr26.runtime import TORCH_THREADS_ENV, set_torch_threads

torch = pytest.importorskip("torch")


def test_set_torch_threads_reads_the_environment(monkeypatch):
    before = torch.get_num_threads()
    try:
        monkeypatch.delenv(TORCH_THREADS_ENV, raising=False)
        assert set_torch_threads() == 1 == torch.get_num_threads()
        monkeypatch.setenv(TORCH_THREADS_ENV, "2")
        assert set_torch_threads() == 2 == torch.get_num_threads()
        monkeypatch.setenv(TORCH_THREADS_ENV, "0")
        assert set_torch_threads() == 1
        monkeypatch.setenv(TORCH_THREADS_ENV, "two")
        with pytest.raises(ValueError, match="ICLR26_TORCH_THREADS must be an integer"):
            set_torch_threads()
    finally:
        torch.set_num_threads(before)


def test_find_shared_data_takes_the_first_folder_holding_the_marker(tmp_path, monkeypatch):
    from iclr26.runtime import find_shared_data

    own, shared = tmp_path / "own", tmp_path / "shared"
    (shared / "toy-slug" / "data").mkdir(parents=True)
    (shared / "toy-slug" / "data" / "items.jsonl").write_text("{}\n")
    own.mkdir()  # the system's own variable names a folder without the marker: skipped
    monkeypatch.setenv("TOY_DATA", str(own))
    monkeypatch.setenv("ICLR26_SHARED_DATA", str(shared))
    assert find_shared_data("toy-slug", "data/items.jsonl", env="TOY_DATA") == shared / "toy-slug"
    (own / "data").mkdir()
    (own / "data" / "items.jsonl").write_text("{}\n")
    assert find_shared_data("toy-slug", "data/items.jsonl", env="TOY_DATA") == own
    assert find_shared_data("toy-slug", "missing.csv", env="TOY_DATA") is None


def test_fork_map_returns_results_in_job_order_from_other_processes():
    import os

    from iclr26.runtime import fork_map

    table = {i: i * i for i in range(20)}  # a closure's object is inherited, never pickled
    out = fork_map(lambda i: (table[i], os.getpid()), list(range(20)), workers=2)
    assert [v for v, _ in out] == [i * i for i in range(20)]
    assert os.getpid() not in {pid for _, pid in out}


def test_fork_map_computes_here_for_one_worker_or_inside_a_worker():
    import os

    from iclr26.runtime import fork_map

    here = os.getpid()
    assert fork_map(lambda i: os.getpid(), [1, 2, 3], workers=1) == [here] * 3
    assert fork_map(lambda i: os.getpid(), [1], workers=2) == [here]
    nested = fork_map(lambda i: {os.getpid()} | set(fork_map(lambda j: os.getpid(), [1, 2])), [1, 2])
    assert all(len(pids) == 1 and here not in pids for pids in nested)  # the inner call stays in the worker


def test_fork_map_sets_the_workers_torch_threads_and_leaves_ours():
    torch = pytest.importorskip("torch")
    from iclr26.runtime import fork_map

    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        seen = []
        out = fork_map(
            lambda _: torch.get_num_threads(), [0, 1], threads=1, progress=lambda s: seen.extend(s) or seen
        )
        assert out == [1, 1] and len(seen) == 2  # the progress wrapper saw both completions
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


def test_fork_map_raises_the_workers_error_and_checks_its_arguments():
    from iclr26.runtime import fork_map

    def fail_on_three(i):
        if i == 3:
            raise KeyError("three")
        return i

    with pytest.raises(KeyError, match="three"):
        fork_map(fail_on_three, range(6), workers=2)
    assert fork_map(fail_on_three, [0, 1], workers=2) == [0, 1]  # the module state was cleared
    with pytest.raises(ValueError, match="workers"):
        fork_map(abs, [1], workers=0)
    with pytest.raises(ValueError, match="threads"):
        fork_map(abs, [1], threads=0)
    with pytest.raises(TypeError, match="fn must be callable"):
        fork_map(3, [1])


def test_worker_count_reads_the_environment(monkeypatch):
    from iclr26.runtime import WORKERS_ENV, worker_count

    monkeypatch.delenv(WORKERS_ENV, raising=False)
    assert worker_count() == 2 and worker_count(default=3) == 3
    monkeypatch.setenv(WORKERS_ENV, "1")
    assert worker_count() == 1
    for bad in ("0", "-2", "two", ""):
        monkeypatch.setenv(WORKERS_ENV, bad)
        with pytest.raises(ValueError, match="ICLR26_WORKERS must be a positive integer"):
            worker_count()


@pytest.mark.parametrize("workers", [1, 2])
def test_fork_map_reports_each_result_here_as_it_finishes(workers):
    from iclr26.runtime import fork_map

    seen = {}
    out = fork_map(lambda i: i * 10, range(5), workers=workers, on_result=seen.__setitem__)
    assert out == [0, 10, 20, 30, 40] and seen == dict(enumerate(out))


def _mallinfo():
    """glibc's ``mallinfo2()`` (``hblks``: blocks served by mmap; ``fordblks``: free bytes in the heap);
    None outside glibc."""
    import ctypes
    import ctypes.util

    class Mallinfo2(ctypes.Structure):
        _fields_ = [  # all ten fields: mallinfo2 returns the whole struct
            (name, ctypes.c_size_t)
            for name in ("arena", "ordblks", "smblks", "hblks", "hblkhd")
            + ("usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")
        ]

    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    if not hasattr(libc, "mallinfo2"):
        return None
    libc.mallinfo2.restype = Mallinfo2
    return libc.mallinfo2()


def _mmapped_blocks() -> int:
    return _mallinfo().hblks


def test_malloc_settings_apply_inside_the_block_and_restore_after():
    """With mmap_max 0 a 64 MB block comes from the heap (no new mmapped block); after the block glibc
    maps such a block again. Unknown parameter names are refused."""
    from iclr26.runtime import malloc_settings

    if _mallinfo() is None:
        pytest.skip("not glibc (no mallinfo2)")
    before = _mmapped_blocks()
    with malloc_settings({"mmap_max": 0}, {"mmap_max": 65536}) as ok:
        inside = np.ones(8 << 20)  # 64 MB
        assert ok and _mmapped_blocks() == before
        del inside
    # Larger than all the free memory in the heap, so that no free chunk can serve it: a chunk freed
    # above another allocation (in a long test session) is not handed back and would be reused.
    outside = np.empty((_mallinfo().fordblks + (64 << 20)) // 8)
    assert _mmapped_blocks() == before + 1
    del outside
    with pytest.raises(ValueError, match="mmap_treshold"):
        with malloc_settings({"mmap_treshold": 1}, {}):
            pass
    # mallopt takes a C int: a float or a value past 2**31 - 1 would be set as something else
    for bad in ({"mmap_max": 0.5}, {"trim_threshold": 1 << 31}, {"mmap_max": -1}, {"mmap_max": True}):
        with pytest.raises(ValueError, match="malloc setting"):
            with malloc_settings({}, bad):
                pass


def test_saved_results_resume_with_the_missing_jobs_only(tmp_path):
    from iclr26.runtime import saved_results

    asked = []

    def compute(todo, save):
        asked.append(list(todo))
        for i in todo:
            save(i, {"job": i, "square": i * i})
            if i == 2 and len(asked) == 1:
                raise KeyboardInterrupt  # stopped after three jobs

    names = [f"job{i}.pkl" for i in range(5)]
    with pytest.raises(KeyboardInterrupt):
        saved_results(tmp_path / "jobs", names, compute)
    assert sorted(p.name for p in (tmp_path / "jobs").iterdir()) == names[:3]
    out = saved_results(tmp_path / "jobs", names, compute)
    assert asked == [[0, 1, 2, 3, 4], [3, 4]]
    assert [r["square"] for r in out] == [0, 1, 4, 9, 16]
    assert saved_results(tmp_path / "jobs", names, compute) == out and asked[-1] == []
    with pytest.raises(ValueError, match="distinct"):
        saved_results(tmp_path / "jobs", ["a.pkl", "a.pkl"], compute)
    with pytest.raises(RuntimeError, match="without saving 1 job"):
        saved_results(tmp_path / "jobs", [*names, "job5.pkl"], lambda todo, save: None)


def test_source_digest_changes_with_the_package_source(tmp_path):
    from iclr26.runtime import source_digest

    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "notes.txt").write_text("not source")
    first = source_digest(tmp_path / "experiment.py")  # any file of the package names it
    (tmp_path / "notes.txt").write_text("changed")
    assert source_digest(tmp_path / "a.py") == first
    (tmp_path / "a.py").write_text("x = 2\n")
    assert source_digest(tmp_path / "a.py") != first


def test_run_context_gives_dtype_to_local_models_only(tmp_path, monkeypatch):
    import iclr26.models
    from iclr26.runtime import RunContext

    ctx = RunContext("multi-lcb", out_dir=tmp_path, show_progress=False)
    model = ctx.load_model("tiny-random", dtype="bfloat16")
    assert model.info()["dtype"] == "bfloat16"
    assert ctx.load_model("tiny-random").info()["dtype"] == "float32"
    with pytest.raises(ValueError, match="dtype must be None or one of"):
        ctx.load_model("tiny-random", dtype="half")
    asked = []
    monkeypatch.setattr(iclr26.models, "load_model", lambda spec, **kw: asked.append((spec, kw)))
    url = "openai:m@http://127.0.0.1:9/v1"
    RunContext("x", out_dir=tmp_path, model=url, api_key_env="K").load_model("embedded", dtype="bfloat16")
    assert asked == [(url, {"api_key_env": "K"})]  # a server sets its own precision

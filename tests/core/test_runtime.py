"""Runtime helpers shared by the experiments."""

from __future__ import annotations

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

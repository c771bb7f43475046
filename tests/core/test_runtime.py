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

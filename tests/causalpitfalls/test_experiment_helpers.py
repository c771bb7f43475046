import numpy as np
import pytest

from iclr26.causalpitfalls.experiment import _cr_stat


def test_cr_is_the_unweighted_mean_of_category_means():
    scores = np.array([100.0, 0.0, 0.0, 50.0])
    cats = np.array(["a", "a", "a", "b"])
    assert _cr_stat(cats)(scores, cats) == pytest.approx((100 / 3 + 50) / 2)
    assert np.isnan(_cr_stat(cats)(scores[:0], cats[:0]))


def test_worker_count_from_the_environment(monkeypatch):
    from iclr26.causalpitfalls.experiment import WORKERS, WORKERS_ENV, _workers

    monkeypatch.delenv(WORKERS_ENV, raising=False)
    assert _workers() == WORKERS == 2
    monkeypatch.setenv(WORKERS_ENV, "1")
    assert _workers() == 1
    for bad in ("0", "two"):
        monkeypatch.setenv(WORKERS_ENV, bad)
        with pytest.raises(ValueError, match=WORKERS_ENV):
            _workers()

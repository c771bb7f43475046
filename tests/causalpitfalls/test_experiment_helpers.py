import numpy as np
import pytest

from iclr26.causalpitfalls.experiment import _cr_stat


def test_cr_is_the_unweighted_mean_of_category_means():
    scores = np.array([100.0, 0.0, 0.0, 50.0])
    cats = np.array(["a", "a", "a", "b"])
    assert _cr_stat(cats)(scores, cats) == pytest.approx((100 / 3 + 50) / 2)
    assert np.isnan(_cr_stat(cats)(scores[:0], cats[:0]))

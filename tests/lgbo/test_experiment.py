"""The headline experiment's bookkeeping (the run itself is exercised by `iclr26 run lgbo`)."""

from __future__ import annotations

import numpy as np

from iclr26.lgbo.experiment import _methods, _normalise, _rounds_to_90


def test_normalised_regret_uses_the_shared_start_and_the_best_any_method_found():
    curves = {"a": np.array([[10.0, 5.0, 1.0]]), "b": np.array([[10.0, 8.0, 6.0]])}
    reg = _normalise(curves)
    np.testing.assert_allclose(reg["a"], [[1.0, 4 / 9, 0.0]])
    np.testing.assert_allclose(reg["b"], [[1.0, 7 / 9, 5 / 9]])


def test_rounds_to_90_counts_never_as_rounds_plus_one():
    reg = np.array([[1.0, 0.5, 0.1, 0.0], [1.0, 0.9, 0.8, 0.5]])
    np.testing.assert_array_equal(_rounds_to_90(reg), [2.0, 4.0])


def test_methods_cover_baselines_and_every_confidence():
    names = [m[0] for m in _methods((0.6, 0.8), warm_only=True)]
    assert names[:2] == ["gpbo", "pibo"] and {"lgbo-random", "warm-start-only"} <= set(names)
    assert {"lgbo-aligned", "lgbo-aligned-c0.6", "lgbo-misaligned-c0.6"} <= set(names)

import math

import numpy as np
import pytest

from iclr26.dp_adaptation_privacy import _accountant as acc
from iclr26.dp_adaptation_privacy import epsilon_spent, noise_multiplier

from .conftest import opacus_or_skip

GRID = [
    (8.0, 1e-5, 0.01, 1000),
    (1.0, 1e-5, 0.25, 12),
    (0.1, 1 / 64, 0.125, 40),
    (8.0, 1 / 64, 0.125, 40),
    (3.0, 1e-3, 0.5, 6),
]


@pytest.mark.parametrize("eps,delta,q,steps", GRID)
def test_sigma_matches_opacus(eps, delta, q, steps):
    opacus_or_skip()
    from opacus.accountants.utils import get_noise_multiplier

    theirs = get_noise_multiplier(target_epsilon=eps, target_delta=delta, sample_rate=q, steps=steps)
    assert abs(noise_multiplier(eps, delta, q, steps) - theirs) < 1e-3


def test_sigma_meets_the_budget_and_is_monotone():
    sigmas = [noise_multiplier(e, 1e-3, 0.1, 50) for e in (0.5, 2.0, 8.0)]
    assert sigmas[0] > sigmas[1] > sigmas[2] > 0
    for e, s in zip((0.5, 2.0, 8.0), sigmas):
        assert epsilon_spent(s, 1e-3, 0.1, 50) <= e
        assert epsilon_spent(s * 0.97, 1e-3, 0.1, 50) > e - 0.05


def test_full_batch_rdp_is_the_gaussian_mechanism():
    # q = 1: RDP of T Gaussian steps is T·α / (2σ²) exactly (Mironov 2017).
    orders = np.array([2.0, 5.5, 32.0])
    assert np.allclose(acc.rdp(1.0, 2.0, 7, orders), 7 * orders / 8)


def test_fractional_and_integer_orders_agree_nearby():
    # A_α is smooth in α: the fractional series at α = 3 ± 1e-6 brackets the integer closed form.
    lo, hi = acc._log_a_frac(0.1, 1.5, 3 - 1e-6), acc._log_a_frac(0.1, 1.5, 3 + 1e-6)
    assert min(lo, hi) - 1e-5 <= acc._log_a_int(0.1, 1.5, 3) <= max(lo, hi) + 1e-5


@pytest.mark.parametrize(
    "kw,name",
    [
        ({"epsilon": 0}, "epsilon"),
        ({"epsilon": -1}, "epsilon"),
        ({"epsilon": math.inf}, "epsilon"),
        ({"epsilon": True}, "epsilon"),  # not 1.0
        ({"epsilon": "8"}, "epsilon"),
        ({"delta": 0}, "delta"),
        ({"delta": 1}, "delta"),
        ({"sample_rate": 1.5}, "sample_rate"),
        ({"steps": 0}, "steps"),
    ],
)
def test_bad_input(kw, name):
    args = {"epsilon": 1.0, "delta": 1e-5, "sample_rate": 0.1, "steps": 10, **kw}
    with pytest.raises(ValueError, match=name):
        noise_multiplier(**args)


def test_budget_too_small():
    with pytest.raises(ValueError, match="epsilon"):
        noise_multiplier(1e-9, 1e-12, 1.0, 100000)

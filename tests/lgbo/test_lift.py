"""The region lift: weights, strength, the lifted BoTorch model, the Monte-Carlo tilt identity."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from botorch.acquisition import qLogExpectedImprovement
from botorch.models import SingleTaskGP
from botorch.models.transforms.input import Normalize
from botorch.models.transforms.outcome import Standardize
from botorch.optim import optimize_acqf
from botorch.sampling.normal import SobolQMCNormalSampler

from iclr26.lgbo import RegionLift, lifted_model, preference_to_lift, sobol_grid, strength
from iclr26.lgbo._lift import monte_carlo_tilt

UNIT3 = np.array([[0.0] * 3, [1.0] * 3])


def _gp(seed=0, n=10, d=3, scale=3.0, **kw):
    g = torch.Generator().manual_seed(seed)
    X = torch.rand(n, d, generator=g, dtype=torch.double)
    y = scale * torch.sin(5 * X).sum(-1, keepdim=True) + 2.0
    return SingleTaskGP(X, y, outcome_transform=Standardize(m=1), **kw).eval(), g


def test_grid_is_deterministic_sobol_inside_the_cube():
    G = sobol_grid(4, 64)
    assert G.shape == (64, 4) and torch.equal(G, sobol_grid(4, 64))
    assert G.min() >= 1e-6 and G.max() <= 1 - 1e-6


def test_hard_and_soft_weights_sum_to_one_and_favour_the_box():
    G, a = RegionLift(256).weights([0.0, 0.0], [0.5, 0.5])
    inside = ((G <= 0.5).all(-1)).double()
    assert a.sum().item() == pytest.approx(1.0)
    assert torch.allclose(a, inside / inside.sum())
    G, s = RegionLift(256, smooth=0.05).weights([0.0, 0.0], [0.5, 0.5])
    assert s.sum().item() == pytest.approx(1.0) and (s > 0).all()
    assert s[inside.bool()].sum() > 0.8


def test_empty_hard_box_gives_zero_weights_and_no_lift():
    model, _ = _gp()
    _, a = RegionLift(8).weights([0.01] * 3, [0.02] * 3)
    assert a.abs().sum() == 0
    lifted = lifted_model(model, (RegionLift(8), [0.01] * 3, [0.02] * 3), 2.0)
    X = torch.rand(4, 3, dtype=torch.double)
    assert torch.allclose(lifted.posterior(X).mean, model.posterior(X).mean)


def test_strength_rules():
    assert strength(0.5) == 0.0
    assert strength(0.8) == pytest.approx(3 * 0.8416212335729143)
    assert strength(0.3) < 0
    assert strength(0.3, rule="paper") == 0.3
    assert strength(0.8, guidance_scale=1.0) == pytest.approx(0.8416212335729143)


def test_confidence_one_half_gives_exactly_zero_lift():
    model, _ = _gp()
    plan = preference_to_lift({"mode": "region", "lb": [0.1] * 3, "ub": [0.6] * 3, "confidence": 0.5}, UNIT3)
    assert plan.delta == 0.0 and not plan.lifts
    assert lifted_model(model, plan) is model


def test_regional_mean_is_lifted_by_exactly_delta_standard_deviations():
    model, _ = _gp()
    region = RegionLift(128, 0.08)
    lifted = lifted_model(model, (region, [0.2] * 3, [0.7] * 3), 1.7)
    G, a = lifted.grid, lifted.weights
    with torch.no_grad():
        base, new = model.posterior(G), lifted.posterior(G)
        shift = a @ (new.mean - base.mean).squeeze(-1)
        sd = torch.sqrt(a @ base.distribution.covariance_matrix @ a)
        assert shift.item() == pytest.approx(1.7 * sd.item(), rel=1e-6)
        assert torch.allclose(new.distribution.covariance_matrix, base.distribution.covariance_matrix)


def test_lift_does_not_depend_on_the_outcome_scale():
    """Default (outer units): the lift in sd units is the same whatever the y scale; the authors'
    inner-unit lift shrinks when y's standard deviation differs from 1."""
    X = torch.rand(5, 3, dtype=torch.double, generator=torch.Generator().manual_seed(9))
    lifts = {}
    for scale in (1.0, 50.0):
        model, _ = _gp(scale=scale)
        for compat in (None, "authors"):
            lm = lifted_model(model, (RegionLift(64), [0.1] * 3, [0.6] * 3), 1.0, compat=compat)
            with torch.no_grad():
                post = model.posterior(X)
                diff = (lm.posterior(X).mean - post.mean) / post.variance.sqrt()
            lifts[scale, compat] = diff
    assert torch.allclose(lifts[1.0, None], lifts[50.0, None], atol=1e-6)
    assert not torch.allclose(lifts[1.0, "authors"], lifts[50.0, "authors"], atol=1e-3)


def test_gradients_flow_and_optimize_acqf_works_with_batched_x_and_input_transform():
    g = torch.Generator().manual_seed(1)
    X = 10 * torch.rand(12, 2, generator=g, dtype=torch.double)
    y = -((X - 7) ** 2).sum(-1, keepdim=True)
    bounds = torch.tensor([[0.0, 0.0], [10.0, 10.0]], dtype=torch.double)
    model = SingleTaskGP(X, y, input_transform=Normalize(2, bounds=bounds), outcome_transform=Standardize(1))
    model.eval()
    lifted = lifted_model(model, (RegionLift(256), [0.0, 0.0], [0.3, 0.3]), 2.0)
    Xq = (10 * torch.rand(5, 3, 2, generator=g, dtype=torch.double)).requires_grad_(True)
    lifted.posterior(Xq).mean.sum().backward()
    assert Xq.grad is not None and torch.isfinite(Xq.grad).all() and Xq.grad.abs().sum() > 0
    acq = qLogExpectedImprovement(
        lifted, best_f=y.max(), sampler=SobolQMCNormalSampler(torch.Size([32]), seed=0)
    )
    cand, _ = optimize_acqf(acq, bounds, q=3, num_restarts=2, raw_samples=32, options={"maxiter": 20})
    assert cand.shape == (3, 2)
    assert (cand >= 0).all() and (cand <= 10).all()


def test_lift_pulls_the_acquisition_into_the_region():
    model, _ = _gp(seed=4)
    lb, ub = [0.0] * 3, [0.35] * 3
    lifted = lifted_model(model, (RegionLift(512), lb, ub), 6.0)
    unit = torch.stack([torch.zeros(3), torch.ones(3)]).double()
    best = model.posterior(model.train_inputs[0]).mean.max().detach()
    acq = qLogExpectedImprovement(
        lifted, best_f=best, sampler=SobolQMCNormalSampler(torch.Size([64]), seed=0)
    )
    torch.manual_seed(0)
    cand, _ = optimize_acqf(acq, unit, q=1, num_restarts=4, raw_samples=128)
    assert (cand <= 0.45).all()


@pytest.mark.parametrize("seed", range(10))
def test_monte_carlo_tilt_identity_holds_within_three_standard_errors(seed):
    model, g = _gp(seed=seed, d=1 + seed % 3)
    d = model.train_inputs[0].shape[-1]
    lb = 0.5 * torch.rand(d, generator=g, dtype=torch.double)
    lifted = lifted_model(model, (RegionLift(64, 0.08), lb, lb + 0.4), 1.0)
    X = torch.rand(3, d, generator=g, dtype=torch.double)
    with torch.no_grad():
        est, se = monte_carlo_tilt(lifted, X, 20000, seed=seed)
        z = (est - lifted.posterior(X).mean.squeeze(-1)) / se
    assert (z.abs() <= 3).all(), z


def test_monte_carlo_check_detects_a_wrong_lift():
    model, g = _gp(seed=2, scale=20.0)
    lifted = lifted_model(model, (RegionLift(64, 0.08), [0.1] * 3, [0.6] * 3), 1.0, compat="authors")
    X = torch.rand(3, 3, generator=g, dtype=torch.double)
    with torch.no_grad():
        est, se = monte_carlo_tilt(lifted, X, 20000, seed=0)
        lifted.lam *= 2.0  # a lift of the wrong size
        z = (est - lifted.posterior(X).mean.squeeze(-1)) / se
    assert (z.abs() > 3).any()


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (dict(grid_size=1), "grid_size"),
        (dict(grid_size=2.5), "grid_size"),
        (dict(smooth=-0.1), "smooth"),
        (dict(smooth=math.nan), "smooth"),
    ],
)
def test_region_lift_rejects_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        RegionLift(**kwargs)


def test_weights_reject_bad_boxes():
    with pytest.raises(ValueError, match="lb and ub"):
        RegionLift(16).weights([0.1, 0.2], [0.5])
    with pytest.raises(ValueError, match="lb and ub"):
        RegionLift(16).weights([math.nan], [0.5])


def test_lifted_model_rejects_bad_arguments():
    model, _ = _gp()
    lift = (RegionLift(16), [0.1] * 3, [0.5] * 3)
    with pytest.raises(ValueError, match="model"):
        lifted_model("not a model", lift, 1.0)
    with pytest.raises(ValueError, match="lift"):
        lifted_model(model, ([0.1] * 3, [0.5] * 3), 1.0)
    with pytest.raises(ValueError, match="delta"):
        lifted_model(model, lift, None)
    with pytest.raises(ValueError, match="delta"):
        lifted_model(model, lift, math.inf)
    with pytest.raises(ValueError, match="compat"):
        lifted_model(model, lift, 1.0, compat="theirs")


@pytest.mark.parametrize(
    ("c", "rule", "scale", "match"),
    [
        (1.5, "authors", 3.0, "confidence"),
        (-0.1, "authors", 3.0, "confidence"),
        ("high", "authors", 3.0, "confidence"),
        (math.nan, "authors", 3.0, "confidence"),
        (0.8, "bayes", 3.0, "rule"),
        (0.8, "authors", math.inf, "guidance_scale"),
    ],
)
def test_strength_rejects_bad_arguments(c, rule, scale, match):
    with pytest.raises(ValueError, match=match):
        strength(c, rule, scale)

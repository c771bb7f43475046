"""Hostile inputs that used to give a silent wrong answer; each is now refused with a ``ValueError``."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from botorch.models import SingleTaskGP
from botorch.models.transforms.outcome import Standardize

from iclr26.lgbo import (
    LGBO,
    GridOracle,
    IDWOracle,
    LiftedModel,
    PreferenceOracle,
    RegionLift,
    build_prompts,
    fit_gp,
    hplc_task,
    lifted_model,
    preference_to_lift,
    sobol_grid,
    strength,
    tabular_oracle,
    toy_function,
    toy_task,
)

B2 = np.array([[0.0, 0.0], [1.0, 1.0]])
PREF = {"mode": "region", "lb": [0.2, 0.2], "ub": [0.6, 0.6], "confidence": 0.8}
FAST = dict(num_restarts=1, raw_samples=8, mc_samples=8, fit_maxiter=5, acq_maxiter=3)


def _gp(n=6, d=2):
    g = torch.Generator().manual_seed(0)
    X = torch.rand(n, d, generator=g, dtype=torch.double)
    return SingleTaskGP(X, torch.sin(3 * X).sum(-1, keepdim=True), outcome_transform=Standardize(m=1)).eval()


@pytest.mark.parametrize("grid_size", [-5, 2.5, True, 0])
def test_preference_to_lift_rejects_a_bad_grid_size(grid_size):
    # used to return a plan with negative expected hits (-5), a fractional grid (2.5), a one-point grid
    # (True), or raise ZeroDivisionError (0)
    with pytest.raises(ValueError, match="grid_size"):
        preference_to_lift(PREF, B2, grid_size=grid_size)


def test_preference_to_lift_checks_its_arguments_even_without_a_preference():
    # used to return a "none" plan for any rule / grid_size when the reply held no preference
    with pytest.raises(ValueError, match="rule"):
        preference_to_lift({"mode": None}, B2, rule="bayes")


@pytest.mark.parametrize("scale", [True, -3.0])
def test_guidance_scale_must_be_a_non_negative_number(scale):
    # True used to act as 1; -3 silently turned a stated lift into a push down
    with pytest.raises(ValueError, match="guidance_scale"):
        strength(0.9, guidance_scale=scale)
    with pytest.raises(ValueError, match="guidance_scale"):
        preference_to_lift(PREF, B2, guidance_scale=scale)


@pytest.mark.parametrize("lb", [[True, False], ["0.2", "0.2"]])
def test_preference_coordinates_must_be_numbers(lb):
    # a reply "[region, [[True, 0], ...]]" used to give a box starting at 1.0
    with pytest.raises(ValueError, match="pref\\['lb'\\]"):
        preference_to_lift({**PREF, "lb": lb}, B2)


def test_bounds_whose_width_overflows_are_refused():
    # [-1e308, 1e308] used to give hi - lo = inf and a box squeezed into a corner
    with pytest.raises(ValueError, match="bounds.*overflow"):
        preference_to_lift(PREF, np.array([[-1e308, -1e308], [1e308, 1e308]]))


@pytest.mark.parametrize("smooth", [None, 0.1])
def test_region_weights_refuse_a_reversed_box(smooth):
    # lb > ub used to give zero weights (hard) or weights on a bogus region (soft)
    with pytest.raises(ValueError, match="lb must be <= ub"):
        RegionLift(8, smooth=smooth).weights([0.8, 0.8], [0.2, 0.2])


@pytest.mark.parametrize(
    "lb, ub", [([False, False], [True, True]), ([[0.2, 0.2], [0.1, 0.1]], [[0.8] * 2] * 2)]
)
def test_region_weights_refuse_non_vectors(lb, ub):
    # bools used to act as 0/1; a (2, 2) box used to be flattened into a 4-D one
    with pytest.raises(ValueError, match="lb must be a vector"):
        RegionLift(8).weights(lb, ub)


def test_smooth_must_not_be_a_bool():
    with pytest.raises(ValueError, match="smooth"):  # used to be a width of 1.0
        RegionLift(8, smooth=True)


@pytest.mark.parametrize("d, n", [(0, 3), (2, 0), (True, 2), (2, 2.5)])
def test_sobol_grid_rejects_bad_sizes(d, n):
    with pytest.raises(ValueError, match="d|n"):  # used to be TypeError / RuntimeError from torch
        sobol_grid(d, n)


@pytest.mark.parametrize("delta", ["3", True])
def test_lifted_model_delta_must_be_a_number(delta):
    # "3" and True used to be read as 3.0 and 1.0
    with pytest.raises(ValueError, match="delta"):
        lifted_model(_gp(), (RegionLift(8), [0.2, 0.2], [0.8, 0.8]), delta)


def test_lifted_model_box_must_match_the_model_dimension():
    with pytest.raises(ValueError, match="lb and ub must have 2 entries"):  # used to be gpytorch's error
        lifted_model(_gp(), (RegionLift(8), [0.2] * 3, [0.8] * 3), 1.0)


@pytest.mark.parametrize(
    "change, match",
    [
        (dict(delta=math.nan), "delta"),
        (dict(weights="nan"), "weights"),
        (dict(weights="neg"), "weights"),
        (dict(jitter=-1.0), "jitter"),
        (dict(grid="1col"), "grid"),
    ],
)
def test_lifted_model_class_validates_its_arguments(change, match):
    # NaN delta or weights used to give a NaN posterior mean; negative weights / jitter were accepted
    model = _gp()
    G, a = RegionLift(8).weights([0.2, 0.2], [0.8, 0.8])
    kw = dict(delta=3.0, jitter=0.0)
    weights = {"nan": a * math.nan, "neg": -a}.get(change.get("weights"), a)
    grid = G[:, :1] if change.get("grid") == "1col" else G
    kw.update({k: v for k, v in change.items() if k in ("delta", "jitter")})
    with pytest.raises(ValueError, match=match):
        LiftedModel(model, grid, weights, kw["delta"], jitter=kw["jitter"])


def test_fit_gp_rejects_an_unknown_kernel_and_bad_data():
    X = torch.rand(6, 2, dtype=torch.double)
    y = X.sum(-1)
    with pytest.raises(ValueError, match="kernel"):  # "foo" used to fit an RBF GP silently
        fit_gp(X, y, kernel="foo")
    with pytest.raises(ValueError, match="maxiter"):
        fit_gp(X, y, maxiter=-1)
    with pytest.raises(ValueError, match="y must be"):
        fit_gp(X, y[:4])


def test_lgbo_refuses_arguments_that_used_to_disable_the_lift_every_round():
    task = toy_task("ackley", B2.T)
    oracle = PreferenceOracle("aligned", 0.8, 0.3, [0.5, 0.5], B2)
    # a non-numeric guidance_scale used to make every round "unusable preference: no lift"
    with pytest.raises(ValueError, match="guidance_scale"):
        LGBO(B2, llm=oracle, task=task, guidance_scale="3", **FAST)
    # a task with fewer parameters than bounds used to drop coordinates from the history
    with pytest.raises(ValueError, match="task must describe 2 parameters"):
        LGBO(B2, llm=oracle, task=toy_task("ackley", [[0.0, 1.0]]), **FAST)
    for kw, name in [
        ({"seed": 1.7}, "seed"),
        ({"num_restarts": 0}, "num_restarts"),
        ({"raw_samples": 0}, "raw_samples"),
    ]:
        with pytest.raises(ValueError, match=name):  # seed 1.7 used to become 1; 0s failed inside botorch
            LGBO(B2, **{**FAST, **kw})


def test_suggest_rejects_a_matrix_of_observations():
    # y of shape (3, 3) with 9 rows of X used to be flattened into 9 values
    X = np.tile([[0.1, 0.2], [0.8, 0.3], [0.4, 0.9]], (3, 1))
    with pytest.raises(ValueError, match="y must be 1-D"):
        LGBO(B2, **FAST).suggest(X, np.ones((3, 3)))


def test_preference_oracle_rejects_bools_and_nan_optimum():
    with pytest.raises(ValueError, match="confidence"):  # True used to be 1.0
        PreferenceOracle("aligned", True, 0.3, [0.5, 0.5], B2)
    with pytest.raises(ValueError, match="box_frac"):
        PreferenceOracle("aligned", 0.8, True, [0.5, 0.5], B2)
    with pytest.raises(ValueError, match="optimum"):  # NaN used to give an unparseable "nan" reply
        PreferenceOracle("aligned", 0.8, 0.3, [np.nan, 0.5], B2)


@pytest.mark.parametrize("X", [[[np.nan, 0.0]], np.zeros((2, 2, 2)), np.zeros((2, 0)), [[True, False]]])
def test_toy_function_rejects_bad_points(X):
    # used to return NaN, a (2, 2) array, zeros, or f(1, 0)
    with pytest.raises(ValueError, match="X"):
        toy_function("ackley", X)


@pytest.mark.parametrize(
    "kw, match", [({"power": -2}, "power"), ({"power": math.nan}, "power"), ({"eps": 0}, "eps")]
)
def test_idw_oracle_rejects_bad_power_and_eps(kw, match):
    # a negative power used to weigh far points most; NaN gave NaN; eps=0 gave 1/0
    X, y = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]), np.array([0.0, 1.0, 1.0])
    with pytest.raises(ValueError, match=match):
        IDWOracle(X, y, k=2, **kw)


def test_grid_and_tabular_oracles_reject_bad_values():
    with pytest.raises(ValueError, match="values"):  # NaN used to be interpolated into NaN
        GridOracle([[0.0, 1.0]], [0.0, np.nan])
    X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    with pytest.raises(ValueError, match="y must have one value per row"):  # extra y used to be ignored
        tabular_oracle(X, np.arange(6.0))


def test_hplc_task_requires_six_finite_bounds():
    with pytest.raises(ValueError, match="bounds"):  # (2, 3) used to give a 3-parameter task
        hplc_task(np.array([[0.0] * 3, [1.0] * 3]))


def test_build_prompts_rejects_a_string_history_and_a_bad_batch_size():
    task = toy_task("ackley", B2.T)
    with pytest.raises(ValueError, match="history"):  # a string used to become one history line per character
        build_prompts(task, "x1=0.5 -> f=1", 3)
    for q in (0, -1, 2.5, True):  # 0 used to drop the batch sentence; -1 / 2.5 / True were printed
        with pytest.raises(ValueError, match="q must be"):
            build_prompts(task, [], q)
    with pytest.raises(ValueError, match="bounds"):  # lo > hi used to be stated to the LLM
        build_prompts({**task, "parameters": [{"name": "a", "bounds": [1.0, 0.0]}]}, [], 3)


@pytest.mark.parametrize("bounds", [[[-5, -5], [5, 5]], [[5, -5]], [[np.nan, 5]], []])
def test_toy_task_requires_one_increasing_pair_per_parameter(bounds):
    # a (2, d) array used to be read as d pairs (x1 in [-5, -5], x2 in [5, 5])
    with pytest.raises(ValueError, match="bounds"):
        toy_task("ackley", bounds)


@pytest.mark.parametrize("weights", [(1.0, 1.0, -1.0), (True, True, False)])
def test_lnp3_weights_must_be_non_negative_numbers(tmp_path, weights):
    from iclr26.lgbo import load_lnp3

    # (1, 1, -1) used to reward a large particle diameter; bools were read as 1 and 0
    with pytest.raises(ValueError, match="weights must be three non-negative"):
        load_lnp3(tmp_path / "missing.csv", weights=weights)

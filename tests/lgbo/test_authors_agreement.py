"""Agreement with the authors' code (skipped when their checkout is absent)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from botorch.models import SingleTaskGP

from iclr26.lgbo import RegionLift, lifted_model, parse_preference, preference_to_lift, strength


def _authors_gp(X, y, seed):
    """The authors' surrogate: y standardised with the biased std, then a default SingleTaskGP, with
    hyperparameters drawn at random (the same model object is handed to both implementations)."""
    g = torch.Generator().manual_seed(seed)
    ys = (y - y.mean()) / y.std(unbiased=False)
    model = SingleTaskGP(X, ys.unsqueeze(-1))
    d = X.shape[-1]
    model.covar_module.lengthscale = 0.1 + 0.6 * torch.rand(1, d, generator=g, dtype=X.dtype)
    model.likelihood.noise = 1e-4 + 0.05 * torch.rand(1, generator=g, dtype=X.dtype)
    return model.eval()


def _box(d, regime, g):
    """A unit-cube box whose expected hit count on a 512 grid falls in the named regime."""
    target = {"point": 1.0, "soft": 4.0, "hard": 60.0}[regime]
    side = (target / 512) ** (1 / d)
    center = side / 2 + (1 - side) * torch.rand(d, generator=g, dtype=torch.double)
    return center - side / 2, center + side / 2


CASES = [
    (d, regime, seed)
    for seed, (d, regime) in enumerate(
        [(d, r) for d in range(1, 9) for r in ("soft", "hard")]
        + [(2, "point"), (3, "point"), (5, "soft"), (7, "hard")]
    )
]


@pytest.mark.parametrize(("d", "regime", "seed"), CASES)
def test_lambda_and_tilted_mean_equal_authors(authors, d, regime, seed):
    g = torch.Generator().manual_seed(seed)
    n = 5 + 3 * d
    X = torch.rand(n, d, generator=g, dtype=torch.double)
    y = torch.sin(6 * X).sum(-1) + 0.1 * torch.randn(n, generator=g, dtype=torch.double)
    model = _authors_gp(X, y, seed)
    lb, ub = _box(d, regime, g)
    c = float(0.55 + 0.4 * torch.rand(1, generator=g))
    pref = {"mode": "region", "lb": lb.tolist(), "ub": ub.tolist(), "confidence": c}
    plan = preference_to_lift(pref, np.stack([np.zeros(d), np.ones(d)]), compat="authors")
    smooth = plan.applied_smooth if plan.mode != "point" else 0.08
    tilt = authors["prior"].LinearExponentialRegionalMeanTiltPlugAndPlay(
        torch.stack([torch.zeros(d), torch.ones(d)]).double(), grid_size=512, smooth=smooth
    )
    tilt.set_box_region(torch.as_tensor(plan.lb), torch.as_tensor(plan.ub))
    tilt.fit_lambda_by_delta(model, delta=plan.delta)
    tilt.prepare_cache(model)
    ours = lifted_model(model, (RegionLift(512, smooth), plan.lb, plan.ub), plan.delta, compat="authors")
    assert ours.lam == pytest.approx(tilt._lam, rel=1e-8, abs=1e-8)
    Xq = torch.rand(16, 1, d, generator=g, dtype=torch.double)  # t-batches, as their acquisition calls it
    theirs = tilt.posterior(model, Xq).mean.reshape(16)
    mine = ours.posterior(Xq).mean.reshape(16)
    assert torch.allclose(mine, theirs, rtol=0, atol=1e-8)
    assert not torch.allclose(mine, model.posterior(Xq).mean.reshape(16), atol=1e-6)


def _random_preference(rng, d):
    kind = rng.choice(["point", "region"])
    c = float(rng.uniform(0.05, 0.99))
    if kind == "point":
        return ["point", rng.uniform(-0.05, 1.05, d).round(4).tolist(), c]
    side = rng.uniform(0.01, 0.6) ** rng.uniform(0.5, 2)
    center = rng.uniform(0, 1, d)
    return ["region", [(center - side / 2).tolist(), (center + side / 2).tolist()], c]


def _ours_from_expert(expert, d):
    kind, payload, c = expert
    if kind == "point":
        pref = {"mode": "point", "point": payload, "confidence": c}
    else:
        pref = {"mode": "region", "lb": payload[0], "ub": payload[1], "confidence": c}
    outside = np.any(np.asarray(payload) < 0) or np.any(np.asarray(payload) > 1)
    with pytest.warns(UserWarning) if outside else _null():
        return preference_to_lift(pref, np.stack([np.zeros(d), np.ones(d)]), compat="authors")


class _null:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_plan_equals_authors_on_50_preferences(authors):
    rng = np.random.default_rng(3)
    modes = set()
    for _ in range(50):
        d = int(rng.integers(1, 9))
        expert = _random_preference(rng, d)
        theirs = authors["decide"].decide_preference_tilt_from_expert(expert, d=d)
        ours = _ours_from_expert(expert, d)
        modes.add(ours.mode)
        assert ours.mode == theirs["mode"]
        assert ours.delta == pytest.approx(theirs["delta"], abs=1e-9)
        if theirs["mode"] == "point":
            np.testing.assert_allclose(ours.lb, theirs["x_star"].numpy(), atol=1e-12)
        else:
            np.testing.assert_allclose(ours.lb, theirs["region"]["lb"].numpy(), atol=1e-12)
            np.testing.assert_allclose(ours.ub, theirs["region"]["ub"].numpy(), atol=1e-12)
            assert ours.smooth == theirs["region"]["smooth"]
    assert modes == {"point", "region", "region-soft"}


TRICKY_REPLIES = [
    "Final Answer:\n[point, [1.0, 2.0], 0.7]",
    "Thinking: near zero.\nFinal Answer:\n[region, [[-1, -1], [1, 1]], 0.9]",
    "[POINT,[0.5,0.5],1]",
    "[region,[[0,0],[1,1]],0]",
    "[point, [1, 2], 1.5]",
    "[point, [1, 2], 0.75] and [region, [[0, 0], [1, 1]], 0.6]",
    "[point, [a, b], 0.7]",
    "[point, [1, 2], .7]",
    "[point, [1, 2], 70%]",
    "no answer here",
    "",
    "### Thinking\nbasin near origin\n### Final Answer:\n[region, [[-0.5], [0.5]], 0.8]",
    "[region, [[1, 2], [3, 4]], 0.95] [region, [[5, 6], [7, 8]], 0.1]",
    "[point, [1e-3, -2.5e2], 0.66]",
    "[point, (1, 2), 0.7]",
    "[region, [[1, 2]], 0.7]",
    "[point, [], 0.5]",
    "Final answer: [point, [0.0, 0.0], 0.70]\nThinking: after",
    "[Thinking]: x\n[Final Answer]: [point, [3, 4], 0.2]",
    "[point,[1,2],0.7 ]",
    "[ point , [ 1 , 2 ] , 0.7 ]",
    "[region, [[0, 0], [1, 1]], 0.5, extra]",
    "[point, [1, 2], 0.7, 0.8]",
    "[point, ['1', '2'], 0.9]",
    "[point, [None, 2], 0.9]",
    "```\n[point, [2, 2], 0.85]\n```",
    "[point, [1,\n 2], 0.9]",
    "[region, [[0, 0], [1, 1]], 01]",
    "THINKING:\nmulti\nline\nFINAL ANSWER:\n[point, [9], 0.3]",
    "[point, [1, 2], 0.7]] trailing",
]


def test_parser_equals_authors_on_30_tricky_replies(authors):
    assert len(TRICKY_REPLIES) == 30
    for text in TRICKY_REPLIES:
        assert parse_preference(text) == authors["prompt"].parse_assistant_response(text), text


def test_prompts_equal_authors(authors):
    from iclr26.lgbo import build_prompts, toy_task

    bounds = [(-5.0, 5.0)] * 3
    history = [
        {"x": {"x1": 1.0, "x2": 0.5, "x3": -2.0}, "f": 3.25},
        {"x": {"x1": 0.0, "x2": 0.0, "x3": 0.0}, "f": 0.1},
    ]
    system, user = build_prompts(toy_task("ackley", bounds), history, 3)
    assert system == authors["prompt"].DEFAULT_SYSTEM_PROMPT
    assert user == authors["prompt"].build_toy_user_prompt(
        func_name="ackley", d=3, bounds=bounds, history=history, batch_q=3
    )


def test_strength_equals_authors(authors):
    for c in (0.01, 0.3, 0.5, 0.8, 0.9999):
        assert strength(c) == pytest.approx(
            authors["decide"].confidence_to_delta(c, scale=3.0), rel=2e-5
        )  # theirs is float32

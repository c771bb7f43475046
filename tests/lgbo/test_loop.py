"""The LGBO loop, the preference oracle, the toy functions and their validation."""

from __future__ import annotations

import numpy as np
import pytest

from iclr26.lgbo import (
    LGBO,
    TOY_BOUNDS,
    TOY_OPTIMUM,
    PreferenceOracle,
    parse_preference,
    toy_function,
    toy_task,
)

D = 2
BOUNDS = np.array([[-5.0] * D, [5.0] * D])
FAST = dict(num_restarts=1, raw_samples=16, mc_samples=16, fit_maxiter=15, acq_maxiter=10)


class _Scripted:
    """An LLM stand-in that replies from a list and records the prompts."""

    def __init__(self, replies):
        self.replies, self.prompts = list(replies), []

    def reply(self, system, user):
        self.prompts.append(user)
        return self.replies.pop(0)


def _f(X):
    return toy_function("ackley", X)


def test_toy_functions_vanish_at_their_optimum():
    for name in TOY_BOUNDS:
        assert toy_function(name, np.full((1, 4), TOY_OPTIMUM[name]))[0] == pytest.approx(0.0, abs=1e-12)
    assert toy_function("rastrigin", np.ones((1, 2)))[0] == pytest.approx(2.0)


def test_oracle_replies_parse_to_the_intended_box():
    opt = np.array([1.0, -2.0])
    aligned = PreferenceOracle("aligned", 0.9, 0.4, opt, BOUNDS, seed=0)
    p = parse_preference(aligned.reply("", ""))
    assert p["mode"] == "region" and p["confidence"] == 0.9
    assert np.all(np.array(p["lb"]) <= opt) and np.all(opt <= np.array(p["ub"]))
    mis = parse_preference(PreferenceOracle("misaligned", 0.9, 0.4, opt, BOUNDS).reply("", ""))
    assert not (np.all(np.array(mis["lb"]) <= opt) and np.all(opt <= np.array(mis["ub"])))
    np.testing.assert_allclose(mis["lb"], [-5.0, 1.0])


def test_lgbo_round_logs_prompt_reply_plan_and_batch():
    llm = _Scripted(["Final Answer:\n[region, [[-1, -1], [1, 1]], 0.9]"])
    opt = LGBO(BOUNDS, llm=llm, goal="min", task=toy_task("ackley", BOUNDS.T), seed=0, **FAST)
    X = opt.initial_design()
    batch = opt.suggest(X, _f(X))
    assert batch.shape == (3, D) and np.all(batch >= -5) and np.all(batch <= 5)
    log = opt.log[0]
    assert "[History]" in log["prompt"] and log["parsed"]["mode"] == "region"
    assert log["plan"]["mode"] == "region" and log["plan"]["lambda"] > 0
    np.testing.assert_allclose(log["plan"]["lb"], [-1, -1], atol=1e-4)
    assert log["batch"] == batch.tolist()


def test_unparseable_reply_gets_one_strict_retry_then_no_lift():
    llm = _Scripted(["no idea", "still no idea"])
    opt = LGBO(BOUNDS, llm=llm, goal="min", task=toy_task("ackley", BOUNDS.T), **FAST)
    X = opt.initial_design()
    opt.suggest(X, _f(X))
    assert "Output only one final answer line" in llm.prompts[1]
    assert opt.log[0]["retry_reply"] == "still no idea" and opt.log[0]["plan"]["mode"] == "none"


def test_out_of_range_confidence_falls_back_to_no_lift_and_is_logged():
    llm = _Scripted(["[region, [[-1, -1], [1, 1]], 1.5]"])
    opt = LGBO(BOUNDS, llm=llm, task=toy_task("ackley", BOUNDS.T), goal="min", **FAST)
    X = opt.initial_design()
    opt.suggest(X, _f(X))
    assert opt.log[0]["plan"]["mode"] == "none" and "confidence" in opt.log[0]["plan"]["why"]


def test_aligned_lift_proposes_inside_the_preferred_box_more_than_gpbo():
    box = "[region, [[-1, -1], [1, 1]], 0.95]"
    X0 = LGBO(BOUNDS, seed=3, n_init=5).initial_design()
    y0 = -_f(X0)

    def inside(batch):
        return np.mean(np.all(np.abs(batch) <= 1.0, axis=1))

    lifted = LGBO(BOUNDS, llm=_Scripted([box]), task=toy_task("ackley", BOUNDS.T), seed=3, **FAST)
    plain = LGBO(BOUNDS, seed=3, **FAST)
    assert inside(lifted.suggest(X0, y0)) > inside(plain.suggest(X0, y0))


def test_dry_runs_improve_and_return_curves():
    oracle = PreferenceOracle("aligned", 0.8, 0.5, np.zeros(D), BOUNDS, seed=0)
    opt = LGBO(BOUNDS, llm=oracle, goal="min", n_init=4, task=toy_task("ackley", BOUNDS.T), **FAST)
    res = opt.minimize(_f, 3)
    assert res.X.shape == (4 + 9, D) and len(res.log) == 3
    curve = res.best_so_far
    assert curve.shape == (4,) and np.all(np.diff(curve) <= 0)
    pibo = LGBO(
        BOUNDS, llm=oracle, guidance="pibo", goal="min", n_init=4, task=toy_task("ackley", BOUNDS.T), **FAST
    ).minimize(_f, 2)
    assert pibo.best_so_far.shape == (3,)
    up = LGBO(BOUNDS, n_init=4, **FAST).maximize(lambda X: -_f(X), 1)
    assert np.all(np.diff(up.best_so_far) >= 0)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (dict(bounds=[[0, 0], [1, 0]]), "bounds"),
        (dict(goal="best"), "goal"),
        (dict(n_init=1), "n_init"),
        (dict(batch_size=0), "batch_size"),
        (dict(kernel="periodic"), "kernel"),
        (dict(acquisition="UCB"), "acquisition"),
        (dict(guidance="cola"), "guidance"),
        (dict(rule="x"), "rule"),
        (dict(compat="x"), "compat"),
        (dict(llm=_Scripted([])), "task"),
        (dict(llm=object(), task=toy_task("ackley", BOUNDS.T)), "llm"),
    ],
)
def test_lgbo_rejects_bad_arguments(kwargs, match):
    kwargs = {"bounds": BOUNDS, **kwargs}
    with pytest.raises(ValueError, match=match):
        LGBO(**kwargs)


def test_suggest_and_runs_reject_bad_observations():
    opt = LGBO(BOUNDS, **FAST)
    X = opt.initial_design()
    with pytest.raises(ValueError, match="y"):
        opt.suggest(X, np.where(np.arange(len(X)) == 0, np.nan, 1.0))
    with pytest.raises(ValueError, match="X"):
        opt.suggest(X[:, :1], _f(X))
    with pytest.raises(ValueError, match="y"):
        opt.suggest(X, _f(X)[:-1])
    with pytest.raises(ValueError, match="y"):
        opt.suggest(X[:1], _f(X[:1]))
    with pytest.raises(ValueError, match="goal"):
        opt.minimize(_f, 1)
    with pytest.raises(ValueError, match="goal"):
        LGBO(BOUNDS, goal="min").maximize(_f, 1)
    with pytest.raises(ValueError, match="n_iter"):
        opt.maximize(_f, -1)
    with pytest.raises(ValueError, match="objective"):
        opt.maximize("f", 1)
    with pytest.raises(ValueError, match="objective"):
        opt.maximize(lambda X: np.full(len(X), np.nan), 1)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (dict(kind="sideways"), "kind"),
        (dict(confidence=1.2), "confidence"),
        (dict(box_frac=0.0), "box_frac"),
        (dict(optimum=[0.0]), "optimum"),
        (dict(bounds=[[0, 0], [0, 1]]), "bounds"),
    ],
)
def test_oracle_rejects_bad_arguments(kwargs, match):
    args = dict(kind="aligned", confidence=0.8, box_frac=0.3, optimum=[0.0, 0.0], bounds=BOUNDS)
    with pytest.raises(ValueError, match=match):
        PreferenceOracle(**{**args, **kwargs})


def test_toy_function_rejects_unknown_name():
    with pytest.raises(ValueError, match="name"):
        toy_function("sphere", np.zeros((1, 2)))


def test_idw_oracle_interpolates_and_returns_measurements_on_exact_hits():
    from iclr26.lgbo import IDWOracle

    X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    y = np.array([0.0, 1.0, 2.0, 3.0])
    oracle = IDWOracle(X, y, k=4)
    np.testing.assert_allclose(oracle(X), y)
    assert oracle(np.array([[0.5, 0.5]]))[0] == pytest.approx(1.5)
    near = oracle(np.array([[0.01, 0.0]]))[0]
    assert 0 < near < 0.1
    nearest_only = IDWOracle(X, y, k=1)(np.array([[0.9, 0.9]]))
    assert nearest_only[0] == pytest.approx(3.0)


def test_idw_oracle_rejects_bad_input():
    from iclr26.lgbo import IDWOracle

    X = np.zeros((3, 2))
    with pytest.raises(ValueError, match="y"):
        IDWOracle(X, np.zeros(2))
    with pytest.raises(ValueError, match="k"):
        IDWOracle(X, np.zeros(3), k=0)
    with pytest.raises(ValueError, match="Q"):
        IDWOracle(X, np.zeros(3))(np.zeros((1, 3)))


def test_hplc_data_from_the_olymp_wheel():
    from iclr26.lgbo import HPLC_PARAMETERS, IDWOracle, hplc_data, hplc_task

    try:
        X, y = hplc_data()
    except ImportError:
        pytest.skip("olymp wheel not installed")
    assert X.shape == (1386, len(HPLC_PARAMETERS)) and y.shape == (1386,)
    oracle = IDWOracle(X, y)
    assert oracle(X[np.argmax(y)][None])[0] == pytest.approx(y.max())
    assert hplc_task(oracle.bounds)["parameters"][4]["name"] == "push_speed"


def test_llm_warm_start_fills_the_preferred_box_and_is_logged():
    llm = _Scripted(["[region, [[1, 1], [3, 4]], 0.9]"])
    opt = LGBO(BOUNDS, llm=llm, warm_start="llm", n_init=8, task=toy_task("ackley", BOUNDS.T), **FAST)
    X = opt.initial_design()
    assert X.shape == (8, D)
    assert np.all(X >= [1, 1]) and np.all(X <= [3, 4])
    assert "[History]" not in llm.prompts[0] and opt.warm_start_log["plan"]["mode"] == "region"
    with pytest.raises(ValueError, match="warm_start"):
        LGBO(BOUNDS, warm_start="llm")
    with pytest.raises(ValueError, match="warm_start"):
        LGBO(BOUNDS, warm_start="grid")

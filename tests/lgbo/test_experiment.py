"""The headline experiment's bookkeeping (the run itself is exercised by `iclr26 run lgbo`)."""

from __future__ import annotations

import numpy as np
import pytest

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


def test_medium_claims_cover_hplc_warm_start_and_the_parse_rate(tmp_path, monkeypatch):
    """The medium claim set, with the BO runs and model calls replaced by synthetic curves."""
    from iclr26.lgbo import experiment
    from iclr26.runtime import RunContext

    def fake_run(spec, seed, guidance, kind, c, warm, rounds):
        speed = 0.5 if kind == "aligned" else 0.2  # guided methods close the gap faster
        return 10.0 * np.exp(-speed * np.arange(rounds + 1)) + 0.01 * (seed % 7)

    def fake_problem(name):
        return {
            "bounds": np.array([[0.0], [1.0]]),
            "optimum": np.zeros(1),
            "task": {},
            "f": None,
            "goal": "min",
        }

    monkeypatch.setattr(experiment, "_run_one", fake_run)
    monkeypatch.setattr(experiment, "_problem", fake_problem)
    monkeypatch.setattr(experiment, "_tilt_identity", lambda ctx, n: np.zeros(50))

    def fake_llm_runs(ctx, rounds):  # replies never parse, so the loop is GPBO's curve on every seed
        gpbo = fake_run(None, 0, "none", None, 0.0, "sobol", rounds)
        parsed = np.r_[np.nan, np.zeros(rounds)]
        return np.stack([np.stack([gpbo + 0.01 * (s % 7), parsed]) for s in range(experiment.LLM_SEEDS)])

    monkeypatch.setattr(experiment, "_llm_runs", fake_llm_runs)
    res = experiment.run(RunContext("lgbo", scale="medium", out_dir=tmp_path, show_progress=False))
    by_name = {c.statement: c for c in res.claims}
    warm = [s for s in by_name if "warm start alone" in s]
    assert len(warm) == 3 and any(s.startswith("HPLC") for s in warm)  # ackley, levy, HPLC
    assert all(by_name[s].verdict == "holds" for s in warm)  # the aligned warm start is faster here
    parse = next(c for s, c in by_name.items() if "parse into" in s)
    assert parse.verdict == "does not hold"  # no reply parsed
    llm_speed = next(c for s, c in by_name.items() if "as the expert reaches 90%" in s)
    assert llm_speed.verdict == "does not hold"  # same rounds-to-90% as GPBO on every seed
    assert not any("HPLC (olymp)" in s for s in by_name)  # measured, not marked unmeasurable


def test_runs_do_not_depend_on_the_worker_count_and_resume_from_saved_runs(tmp_path, monkeypatch):
    """Real BO runs (1 round) in 1 and 2 forked workers give the same curves; a second call reuses them."""
    from iclr26.lgbo import experiment
    from iclr26.runtime import RunContext

    methods = _methods((0.8,))[:3]  # gpbo, pibo, aligned LGBO
    curves = {}
    for workers in ("1", "2"):
        monkeypatch.setenv("ICLR26_WORKERS", workers)
        ctx = RunContext("lgbo", out_dir=tmp_path / workers, show_progress=False)
        curves[workers] = experiment._curves(ctx, ("ackley",), methods, seeds=2, rounds=1)
    for m in ("gpbo", "pibo", "lgbo-aligned"):
        assert curves["1"]["ackley"][m].shape == (2, 2)
        np.testing.assert_array_equal(curves["1"]["ackley"][m], curves["2"]["ackley"][m])
    assert len(list((tmp_path / "2" / "_runs").glob("*.npy"))) == 6

    def must_not_run(*args):
        raise AssertionError("a saved run was recomputed")

    monkeypatch.setattr(experiment, "_run_one", must_not_run)
    again = experiment._curves(ctx, ("ackley",), methods, seeds=2, rounds=1)
    for m, c in curves["2"]["ackley"].items():
        np.testing.assert_array_equal(again["ackley"][m], c)
    with pytest.raises(AssertionError, match="recomputed"):  # another recipe is not reused
        experiment._curves(ctx, ("ackley",), methods, seeds=2, rounds=2)


class _Replies:
    """A stand-in LLM (``reply``) that always gives ``text``, counting its calls."""

    def __init__(self, text):
        self.text, self.calls = text, 0

    def reply(self, system, user):
        self.calls += 1
        return self.text


@pytest.mark.parametrize(
    ("text", "parsed", "calls"),
    [("I cannot tell.", 0.0, 4), ("[region, [[-1, -1, -1, -1, -1, -1], [1, 1, 1, 1, 1, 1]], 0.8]", 1.0, 2)],
)
def test_the_llm_loop_records_whether_each_round_parsed(text, parsed, calls):
    """Unparsed replies are retried once and the round runs without a lift; parsed ones are not retried."""
    from iclr26.lgbo import experiment

    llm = _Replies(text)
    out = experiment._llm_loop(experiment._problem("ackley"), llm, seed=3, rounds=2)
    assert out.shape == (2, 3) and np.isnan(out[1, 0])
    np.testing.assert_array_equal(out[1, 1:], [parsed, parsed])
    assert llm.calls == calls
    assert np.all(np.diff(out[0]) <= 0)  # best so far, minimised


def test_llm_runs_load_the_model_only_for_missing_runs(tmp_path, monkeypatch):
    from iclr26.lgbo import experiment
    from iclr26.runtime import RunContext

    monkeypatch.setenv("ICLR26_WORKERS", "1")
    monkeypatch.setattr(experiment, "LLM_SEEDS", 2)
    loads = []

    def load_model(self, default="embedded", judge=False):
        loads.append(default)
        return _Replies("nothing useful")

    monkeypatch.setattr(RunContext, "load_model", load_model)
    ctx = RunContext("lgbo", scale="medium", out_dir=tmp_path, show_progress=False)
    first = experiment._llm_runs(ctx, rounds=1)
    assert first.shape == (2, 2, 2) and loads == ["embedded"]
    again = experiment._llm_runs(ctx, rounds=1)
    np.testing.assert_array_equal(again, first)
    assert loads == ["embedded"]  # both runs were saved: no model needed


def test_the_llm_loop_reuses_a_local_models_prompt_cache_with_the_same_replies(monkeypatch):
    """With a local model each prompt runs inside ``reusing_prompts``; the replies equal plain calls."""
    from iclr26.lgbo import experiment
    from iclr26.models import tiny_random_model

    monkeypatch.setattr(experiment, "D", 2)  # prompts within the tiny model's 2,048 tokens

    model = tiny_random_model(seed=1)
    calls = []

    def recording(generate):
        def run(prompts, config):
            out = generate(prompts, config)
            calls.append((model._kept is not None, out[0].text))
            return out

        return run

    class Plain:  # the same model without reusing_prompts
        generate = staticmethod(recording(model.generate))

    spec = experiment._problem("ackley")
    plain = experiment._llm_loop(spec, Plain(), seed=3, rounds=2)
    model.generate = recording(model.generate)
    reused = experiment._llm_loop(spec, model, seed=3, rounds=2)
    half = len(calls) // 2
    assert half == 4 and [c[0] for c in calls] == [False] * half + [True] * half
    assert [c[1] for c in calls[:half]] == [c[1] for c in calls[half:]]
    np.testing.assert_array_equal(plain, reused)

import math

import numpy as np
import pytest

import iclr26.dp_adaptation_privacy as dpa
from iclr26.dp_adaptation_privacy import _pretrain, experiment


@pytest.mark.slow
def test_pretraining_lowers_the_loss():
    texts = [f"def f_{i}(x):\n    return x * {i} + {i % 7}\n" for i in range(40)]
    tok, model, losses = _pretrain.pretrain(
        texts,
        vocab_size=300,
        hidden_size=32,
        layers=1,
        steps=15,
        batch_size=8,
        max_length=24,
        lr=2e-2,
        seed=0,
    )
    assert len(tok) <= 300 and losses[-1] < losses[0] - 1
    assert not model.training


def test_jobs_split_candidates_population_and_canaries(tmp_path):
    pytest.importorskip("faker")
    cfg = dict(experiment.CONFIGS["small"], n_members=8, n_population=6)
    data = dpa.default_data(100, 22, seed=0)
    jobs, splits = experiment._jobs(data, cfg, tmp_path, seed=0)
    assert len(jobs) == 3 * (1 + len(dpa.METHODS) * len(cfg["epsilons"]))
    secrets = []
    for job in jobs:
        split = splits[job["key"]["dist"]]
        assert not set(job["candidates"]) & set(job["population"])
        if job["kind"] == "adapt":
            members = [c for c, m in zip(job["candidates"], split["members"]) if m]
            assert job["target_texts"][: len(members)] == members or set(members) <= set(job["target_texts"])
            assert len(job["target_texts"]) == 8 + cfg["canaries"]
            assert [len(s) for s in job["shadow_texts"]] == [8] * cfg["shadows"]
            prefix = {"prefix_init_text": experiment.PREFIX_INIT_TEXT}
            assert job["method_kw"] == (prefix if job["method"] == "prefix" else {})
            secrets += [c.secret for c in job["canaries"]]
    assert len(set(secrets)) == len(secrets)  # fresh canaries per cell


class _InlinePool:
    """A pool that runs each job at once in this process (so that a test can patch ``_run_cell``)."""

    def submit(self, fn, *args):
        from concurrent.futures import Future

        future = Future()
        future.set_result(fn(*args))
        return future


def test_cells_are_saved_as_they_finish_and_a_resumed_run_reuses_them(tmp_path, monkeypatch):
    """Every job's result lands in out_dir/_cells; a second run computes only what is missing, and
    other settings (or another base model, or edited code) are not reused."""
    from iclr26.runtime import RunContext

    calls = []

    def fake_cell(job):
        calls.append((job["kind"], job["key"].get("method"), job.get("epsilons")))
        if job["kind"] == "base":
            return {**job["key"], "x": np.arange(3.0)}
        return {**job["key"], "eps": {job["epsilons"][0]: {"sigma": 1.0}}, "base_exposure": np.ones(2)}

    monkeypatch.setattr(experiment, "_run_cell", fake_cell)
    cfg = dict(experiment.CONFIGS["medium"], distributions=("ood",), n_members=2, n_population=2)
    base = tmp_path / "_base-abc"
    jobs = [
        dict(kind="base", key={"dist": "ood"}, candidates=["a", "b"], base_path=str(base)),
        *(
            dict(kind="adapt", key={"dist": "ood", "method": "lora"}, epsilons=(e,), candidates=["a", "b"],
                 base_path=str(base))
            for e in cfg["epsilons"]
        ),
    ]  # fmt: skip
    ctx = RunContext("dp-adaptation-privacy", out_dir=tmp_path / "run", show_progress=False)
    first = experiment._cached_cells(ctx, _InlinePool(), jobs, cfg, seed=0)
    assert len(calls) == 4 and len(list((tmp_path / "run" / "_cells").glob("*.pkl"))) == 4
    bases, (cell,) = experiment._merge_cells(first)
    assert set(cell["eps"]) == set(cfg["epsilons"]) and set(bases) == {"ood"}

    next(p for p in (tmp_path / "run" / "_cells").glob("*eps8-*.pkl")).unlink()  # interrupted before eps = 8
    calls.clear()
    again = experiment._cached_cells(ctx, _InlinePool(), jobs, cfg, seed=0)
    assert calls == [("adapt", "lora", (8.0,))]
    assert [r.keys() for r in again] == [r.keys() for r in first]
    calls.clear()
    experiment._cached_cells(ctx, _InlinePool(), jobs, dict(cfg, epochs=5), seed=0)
    assert len(calls) == 4  # other settings: nothing reused
    calls.clear()
    other_base = [dict(j, base_path=str(tmp_path / "_base-def")) for j in jobs]
    experiment._cached_cells(ctx, _InlinePool(), other_base, cfg, seed=0)
    assert len(calls) == 4
    # another method's learning rate or prefix start: every lora cell reused; lora's own: recomputed
    calls.clear()
    lrs = dict(cfg["lrs"], prefix=0.5)
    experiment._cached_cells(ctx, _InlinePool(), jobs, dict(cfg, lrs=lrs, prefix_init_text="x y"), seed=0)
    assert calls == []
    experiment._cached_cells(ctx, _InlinePool(), [dict(j, lr=0.5) for j in jobs[1:]], cfg, seed=0)
    assert len(calls) == 3
    calls.clear()
    monkeypatch.setattr(experiment, "source_digest", lambda _: "edited")  # the package's code changed
    experiment._cached_cells(ctx, _InlinePool(), jobs, cfg, seed=0)
    assert len(calls) == 4


def test_bootstrap_within_groups_brackets_the_value():
    rng = np.random.default_rng(0)
    values = {"a": rng.normal(1, 1, 50), "b": rng.normal(0, 1, 60)}
    est = experiment._bootstrap(
        lambda idx: float(values["a"][idx["a"]].mean() - values["b"][idx["b"]].mean()),
        {"a": 50, "b": 60},
        0,
        "u",
    )
    assert est.lo < est.value < est.hi and est.lo > 0.3 and est.n == 110
    assert math.isclose(est.value, values["a"].mean() - values["b"].mean())


def _micro_cfg(**kw):
    cfg = dict(
        experiment.CONFIGS["medium"], n_members=6, n_population=5, max_length=16, epochs=1, batch_size=3
    )
    cfg.update(canaries=2, exposure_m=7, microbatch=2, **kw)
    return cfg


@pytest.mark.slow
def test_worker_cell_runs_the_medium_settings(tmp_path):
    """One (distribution, method) cell with medium's eps = (0.1, inf), 2 shadows and microbatching."""
    pytest.importorskip("faker")
    pytest.importorskip("peft")
    from iclr26.models import tiny_random_model

    tiny_random_model(0, save_to=tmp_path / "base")
    cfg = _micro_cfg(distributions=("ood",), epsilons=(0.1, math.inf))
    data = dpa.default_data(40, 17, seed=0)
    jobs, splits = experiment._jobs(data, cfg, tmp_path / "base", seed=0)
    prefix = [experiment._run_cell(j) for j in jobs if j.get("method") == "prefix"]  # one job per eps
    bases, (cell,) = experiment._merge_cells([experiment._run_cell(jobs[-1]), *prefix])
    base = bases["ood"]
    assert [set(r["eps"]) for r in prefix] == [{0.1}, {math.inf}] and "base_exposure" not in prefix[1]
    assert set(cell["eps"]) == {0.1, math.inf} and cell["eps"][math.inf]["sigma"] == 0
    assert cell["eps"][0.1]["sigma"] > 1 and cell["eps"][0.1]["ref_x"].shape == (12, 2)
    scores = experiment._scores(cell["eps"][0.1], base, splits["ood"])
    for kind in ("shadow", "base"):
        s = scores[f"rmia_{kind}"]
        assert s.shape == (12,) and np.all((s >= 0) & (s <= 1)) and 0 <= scores[f"a_{kind}"] <= 1
    assert cell["base_exposure"].shape == (2,)


def _small_signal_cell(seed: int, n: int = 128, m: int = 64):
    """Signals the size of SmolLM2's exp(mean log-prob) (about 0.05): each text has its own difficulty,
    and a model that trained on a text doubles its signal (the target and each of 2 random-half shadows)."""
    rng = np.random.default_rng(seed)
    difficulty, population = rng.lognormal(np.log(0.05), 0.5, n), rng.lognormal(np.log(0.05), 0.5, m)
    members = np.zeros(n, bool)
    members[rng.choice(n, n // 2, replace=False)] = True
    shadow = rng.random((n, 2)) < 0.5

    def model(trained):
        return difficulty * (1 + trained) * rng.lognormal(0, 0.1, trained.shape)

    cell = {
        "x": model(members),
        "z": population * rng.lognormal(0, 0.1, m),
        "ref_x": np.stack([model(shadow[:, r]) for r in range(2)], axis=1),
        "ref_z": population[:, None] * rng.lognormal(0, 0.1, (m, 2)),
    }
    base = {"x": difficulty * rng.lognormal(0, 0.1, n), "z": population * rng.lognormal(0, 0.1, m)}
    return cell, base, {"members": members, "shadow": shadow}


@pytest.mark.parametrize("seed", range(3))
def test_scores_find_a_planted_leak_on_llm_sized_signals(seed):
    """With signals far below 1 - a, a fixed a = 0.3 turns the IN shadows' signals into negative OUT
    estimates and RMIA drops to chance; the tuned a (as ml_privacy_meter's audit) finds the leak."""
    from iclr26.dp_adaptation_privacy._attacks import rmia, roc_auc

    cell, base, split = _small_signal_cell(seed)
    y = split["members"]
    fixed = rmia(cell["x"], cell["ref_x"], split["shadow"], cell["z"], cell["ref_z"], 0.3)
    scores = experiment._scores(cell, base, split)
    assert abs(roc_auc(y, fixed) - 0.5) < 0.15
    assert roc_auc(y, scores["rmia_shadow"]) > 0.9 and roc_auc(y, scores["rmia_base"]) > 0.9
    assert scores["a_shadow"] >= 0.8 and scores["a_base"] >= 0.8


def test_claims_on_synthetic_cells(monkeypatch):
    """The analysis on made-up signals: a leak planted in IID and none in OOD is found; eps = inf branch."""
    monkeypatch.setattr(experiment, "N_BOOT", 200)
    rng = np.random.default_rng(0)
    cfg = _micro_cfg(
        distributions=("overlap", "iid", "ood"), epsilons=(8.0, math.inf), n_members=40, shadows=1
    )
    n = 80
    splits, scores, cells = {}, {}, []
    for dist in cfg["distributions"]:
        members = np.zeros(n, bool)
        members[rng.choice(n, 40, replace=False)] = True
        splits[dist] = {"members": members, "shadow": rng.random((n, 1)) < 0.5}
        for method in dpa.METHODS:
            for eps in cfg["epsilons"]:
                leak = 3.0 if dist != "ood" else 0.0
                s = rng.random(n) + leak * members * (method != "lora" or dist != "ood")
                scores[dist, method, eps] = {"rmia_shadow": s, "rmia_base": rng.random(n)}
            exposure = {8.0: rng.exponential(1.44, 2), math.inf: rng.exponential(1.44, 2) + 5}
            cells.append({"dist": dist, "method": method, "base_exposure": exposure[8.0],
                          "eps": {e: {"exposure": x} for e, x in exposure.items()}})  # fmt: skip
    claims = experiment._claims(cfg, scores, splits, cells, seed=0, scale_text="synthetic")
    verdicts = [str(c.verdict) for c in claims]
    assert verdicts[0] == "holds"  # IID (leaky) above OOD (no leak)
    assert verdicts[1] == "holds"  # overlap and IID planted equal
    assert verdicts[4] == "holds"  # eps = inf exposure planted higher
    assert verdicts[5] == "holds"  # the shadow score carries the planted leak, the base score none


@pytest.mark.slow
def test_medium_run_end_to_end_on_a_tiny_model_and_its_resume(tmp_path, monkeypatch):
    """The medium path of run() (continued pretraining of the chosen model, eps 8 and inf, 2 shadows, the
    analysis, the table and the plot) on a tiny random model and micro sizes; a second run with the same
    --out reuses the saved base and cells and gives the same claims."""
    pytest.importorskip("faker")
    pytest.importorskip("peft")
    from iclr26.models import tiny_random_model
    from iclr26.runtime import RunContext

    micro = _micro_cfg(
        distributions=("overlap", "project_code", "ood"),
        epsilons=(8.0, math.inf),
        n_members=8,
        n_population=8,
        n_pretrain=40,
        pretrain=dict(steps=2, batch_size=4, lr=1e-3),
    )
    monkeypatch.setitem(experiment.CONFIGS, "medium", micro)
    monkeypatch.setattr(RunContext, "load_model", lambda self, *a, **k: tiny_random_model(0))
    ctx = RunContext("dp-adaptation-privacy", scale="medium", out_dir=tmp_path, show_progress=False)
    first = experiment.run(ctx)
    rows = first.tables["privacy_utility"]
    assert len(rows) == 3 * 4 * 2 and {r["epsilon"] for r in rows} == {8.0, "inf"}
    assert [str(c.verdict) != "not measurable here" for c in first.claims].count(
        True
    ) == 6  # eps = inf measured
    assert (tmp_path / "auc_vs_validation_loss.png").is_file()
    assert len(list((tmp_path / "_cells").glob("*.pkl"))) == 3 * (1 + 4 * 2)
    (base,) = tmp_path.glob("_base-*")
    stamp = (base / "config.json").stat().st_mtime_ns
    again = experiment.run(ctx)
    assert (base / "config.json").stat().st_mtime_ns == stamp  # the base was not trained again
    assert [c.to_dict() for c in again.claims] == [c.to_dict() for c in first.claims]

import pytest

from iclr26.claims import Verdict
from iclr26.runtime import RunContext
from iclr26.tab_mia import experiment
from iclr26.tab_mia.experiment import _auroc, _best_auroc, run


def test_auroc_helpers():
    import numpy as np
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 40)
    s = rng.normal(size=(40, 3)).round(1) + y[:, None] * [0.0, 1.0, -1.0]
    assert _auroc(s[:, 1], y) == pytest.approx(roc_auc_score(y, s[:, 1]), abs=1e-12)
    assert _best_auroc(s, y) == pytest.approx(max(roc_auc_score(y, s[:, j]) for j in range(3)), abs=1e-12)


def test_headline_runs_on_tiny_model(tmp_path, monkeypatch):
    monkeypatch.setattr(experiment, "SMALL_PER_SIDE", 6)
    ctx = RunContext("tab-mia", out_dir=tmp_path, model="tiny-random", show_progress=False)
    result = run(ctx)
    measured = [c for c in result.claims if c.verdict != Verdict.NOT_MEASURABLE]
    assert len(measured) == 8 and all(c.interval is not None for c in measured)
    assert sum(c.statement.startswith("Fine-tuning raises attack success") for c in measured) == 2
    assert any("synthetic" in c.statement for c in measured)  # main_syn on line-sep at small
    rows = result.tables["auroc"]
    assert {r["encoding"] for r in rows} == {"line-sep", "json"} and {r["epochs"] for r in rows} == {0, 3}
    assert (tmp_path / "auroc_encoding_attack.png").is_file()


def test_forked_workers_give_the_serial_results(tmp_path, monkeypatch):
    """The four jobs (2 encodings x base / fine-tuned) in two forked workers or in this process: the same
    scores, AUROCs and training losses (every job seeds itself; one torch thread everywhere)."""
    from iclr26.runtime import WORKERS_ENV

    monkeypatch.setattr(experiment, "SMALL_PER_SIDE", 6)
    results = {}
    for workers in (1, 2):
        monkeypatch.setenv(WORKERS_ENV, str(workers))
        ctx = RunContext("tab-mia", out_dir=tmp_path / str(workers), model="tiny-random", show_progress=False)
        results[workers] = experiment.run(ctx)
    assert results[1].tables == results[2].tables
    assert results[1].metrics == results[2].metrics
    assert [(c.measured, c.interval) for c in results[1].claims] == [
        (c.measured, c.interval) for c in results[2].claims
    ]


def test_real_chunks_scores_are_reused_from_the_base_job(tiny):
    """The real-vs-synthetic benchmark's real chunks are scored once, by the base job of the same
    encoding: the assembled scores equal scoring the whole benchmark."""
    import pandas as pd

    from iclr26.tab_mia import make_benchmark, mia_scores
    from iclr26.tab_mia.data import adult_table

    table = adult_table()
    base = make_benchmark(table.iloc[:24], 2, "line-sep", seed=42)
    bench = experiment._synthetic_benches(table, ("line-sep",), 6, seed=0)["syn:line-sep"]
    part = experiment._scored_part("syn:line-sep", bench, ("line-sep",))
    assert part.label.tolist() == [0] * 6
    assert experiment._scored_part("syn:json", bench, ("line-sep",)) is bench  # no base job to reuse
    got = experiment._with_real_scores(
        bench, mia_scores(tiny, part.input.tolist()), base, mia_scores(tiny, base.input.tolist())
    )
    pd.testing.assert_frame_equal(got, mia_scores(tiny, bench.input.tolist()), rtol=1e-5, atol=1e-7)


def test_seeds_and_chunks_interval():
    """One seed: the bootstrap over chunks; several: the mean over seeds of the statistic, with a
    two-way interval (the same chunks in every seed); arrays of several columns are split back as they
    were given."""
    import numpy as np

    from iclr26.tab_mia.experiment import _over_seeds_and_chunks

    rng = np.random.default_rng(1)
    y = np.r_[np.ones(20), np.zeros(20)].astype(int)
    seeds = [[rng.normal(size=(40, 3)) + y[:, None], rng.normal(size=(40, 2))] for _ in range(3)]

    def stat(a, b, labels):
        assert a.shape[1] == 3 and b.shape[1] == 2 and set(np.unique(labels)) <= {0, 1}
        return _best_auroc(a, labels) - _best_auroc(b, labels)

    one = _over_seeds_and_chunks(stat, seeds[:1], y, seed=0)
    assert one.value == pytest.approx(stat(*seeds[0], y)) and "bootstrap over 40 chunks" in one.method
    several = _over_seeds_and_chunks(stat, seeds, y, seed=0)
    assert several.value == pytest.approx(np.mean([stat(*s, y) for s in seeds]), abs=1e-12)
    assert "two-way bootstrap over 3 seeds x 40 chunks" in several.method
    assert several.lo < several.value < several.hi


def _runs_with_signed_scores(per_encoding: dict, labels):
    """``runs`` as ``_run_jobs`` returns them, 3-epoch scores only, from signed (higher = member) values
    ``per_encoding[e][seed]`` (n_chunks,), the same for every attack."""
    import numpy as np
    import pandas as pd

    from iclr26.tab_mia import ATTACKS, MEMBER_SIGN

    def table(signed):
        return pd.DataFrame({a: MEMBER_SIGN[a] * np.asarray(signed, float) for a in ATTACKS})

    return {
        e: {"labels": labels, "scores": {3: [table(x) for x in seeds]}} for e, seeds in per_encoding.items()
    }


def test_encoding_spread_has_a_simultaneous_interval_and_can_fail():
    import numpy as np

    from iclr26.tab_mia.experiment import SPREAD_BAR, _encoding_spread

    rng = np.random.default_rng(2)
    y = np.r_[np.ones(30), np.zeros(30)].astype(int)
    leaky = [y + rng.normal(scale=0.6, size=60) for _ in range(2)]
    blind = [rng.normal(size=60) for _ in range(2)]
    runs = _runs_with_signed_scores({"a": leaky, "b": blind, "c": leaky}, y)
    claim = _encoding_spread(runs, ("a", "b", "c"), seed=0, scale="test", n_boot=200)
    means = [np.mean([_best_auroc(np.c_[x], y) for x in s]) for s in (leaky, blind)]
    assert claim.measured == pytest.approx(max(means) - min(means), abs=1e-12)
    lo, hi = claim.interval
    assert SPREAD_BAR < lo < claim.measured < hi and claim.verdict == Verdict.HOLDS and claim.post_hoc
    assert "two-way bootstrap over 2 seeds x 60 chunks" in claim.method
    # Encodings that agree in every resample: no spread, a zero-width interval, below the bar.
    same = _encoding_spread(_runs_with_signed_scores({"a": leaky, "b": leaky}, y), ("a", "b"), 0, "t", 50)
    assert same.measured == 0 and same.interval == (0.0, 0.0) and same.verdict == Verdict.DOES_NOT_HOLD


def test_headline_with_several_seeds(tmp_path, monkeypatch):
    """Fine-tuning seeds (as at medium): one score table per seed, seed-level rows and losses, and
    intervals over seeds and chunks for the fine-tuned claims (the base-model controls need none)."""
    monkeypatch.setattr(experiment, "SMALL_PER_SIDE", 6)
    monkeypatch.setattr(experiment, "SMALL_SEEDS", 2)
    ctx = RunContext("tab-mia", out_dir=tmp_path, model="tiny-random", show_progress=False, seed=5)
    result = run(ctx)
    by_statement = {c.statement: c for c in result.claims}
    leak = by_statement["Fine-tuning on serialised tables leaks membership: best AUROC after 3 epochs (json)"]
    assert "two-way bootstrap over 2 seeds x 12 chunks" in leak.method
    control = next(c for s, c in by_statement.items() if s.startswith("Control") and "json" in s)
    assert "percentile bootstrap over 12 chunks" in control.method
    rows = result.tables["auroc"]
    assert {(r["epochs"], r["seed"]) for r in rows} == {(0, 5), (3, 5), (3, 6)}
    assert {"train_loss_json_3", "train_loss_json_3_seed6"} <= set(result.metrics)
    assert result.metrics["train_loss_json_3"] != result.metrics["train_loss_json_3_seed6"]


def test_a_rerun_reuses_the_saved_jobs_and_recomputes_changed_ones(tmp_path, monkeypatch):
    from iclr26.runtime import WORKERS_ENV

    monkeypatch.setenv(WORKERS_ENV, "1")  # jobs run in this process, so the calls can be counted
    monkeypatch.setattr(experiment, "SMALL_PER_SIDE", 4)

    def run_once():
        return run(RunContext("tab-mia", out_dir=tmp_path, model="tiny-random", show_progress=False))

    first = run_once()
    assert len(list((tmp_path / "_jobs").glob("*.pkl"))) == 5  # 2 fine-tuned, 2 base, 1 synthetic
    calls = []
    job = experiment._job
    monkeypatch.setattr(experiment, "_job", lambda *args: calls.append(args[2]) or job(*args))
    again = run_once()
    assert calls == [] and again.tables == first.tables and again.metrics == first.metrics
    monkeypatch.setattr(experiment, "FINETUNE_DTYPE", None)  # a setting of the fine-tuning jobs
    run_once()
    assert sorted(calls) == [3, 3]  # only the two fine-tuning jobs ran again

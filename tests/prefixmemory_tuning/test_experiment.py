"""The headline experiment's plumbing on the tiny random model: the learning-rate selection, the small
and medium plans (medium wired through with shrunk sizes, never run at full size here)."""

import dataclasses

import pytest

from iclr26.claims import Verdict
from iclr26.prefixmemory_tuning import experiment
from iclr26.runtime import WORKERS_ENV, RunContext

pytest.importorskip("peft")
pytest.importorskip("babel")
pytest.importorskip("vaderSentiment")


def _shrink(monkeypatch, scale, **changes):
    base = dict(n_seeds=2, steps=2, select_steps=1, n_test=8, n_val_per_class=1, lengths=(16, 24, 32))
    plan = dataclasses.replace(experiment.PLANS[scale], **{**base, **changes})
    monkeypatch.setitem(experiment.PLANS, scale, plan)
    monkeypatch.setattr(experiment, "N_GROUPS", 2)
    monkeypatch.setattr(experiment, "N_BOOT", 50)
    monkeypatch.setattr(experiment, "N_BOOT_SPECTRUM", 20)
    return plan


def _ctx(tmp_path, scale):
    return RunContext(
        slug="prefixmemory-tuning",
        out_dir=tmp_path / "out",
        model="tiny-random",
        scale=scale,
        show_progress=False,
    )


def test_medium_plan_is_the_issues():
    plan = experiment.PLANS["medium"]
    assert plan.tasks == ("entity_type", "language_id", "word_sentiment")
    assert set(plan.methods) == {"pmt", "pmt_gelu", "prefix", "lora", "full"}
    assert plan.n_seeds == 5 and plan.lengths[-1] == 512 and plan.ood
    assert experiment.OOD_SOURCE in plan.tasks and experiment.OOD_TARGET in plan.tasks
    small = experiment.PLANS["small"]
    assert len(small.tasks) == 1 and set(small.methods) == {"pmt", "prefix", "lora"} and small.steps <= 30
    # the issue's grids: {1e-4 ... 3e-3} for LoRA/PMT, x10 for prefix
    assert experiment.LR_GRIDS["lora"] == experiment.LR_GRIDS["pmt"] == (1e-4, 3e-4, 1e-3, 3e-3)
    assert experiment.LR_GRIDS["prefix"] == pytest.approx([10 * lr for lr in experiment.LR_GRIDS["pmt"]])


def test_small_run_chooses_rates_without_reading_a_test_item(tmp_path, monkeypatch):
    plan = _shrink(monkeypatch, "small")
    seen, selecting = [], []
    score = experiment.label_logprobs

    def recording(model, tokenizer, prompts, labels, batch_size=16):
        if selecting:
            seen.extend(prompts)
        return score(model, tokenizer, prompts, labels, batch_size)

    choose = experiment.choose_learning_rates

    def choosing(*args, **kwargs):
        selecting.append(True)
        try:
            return choose(*args, **kwargs)
        finally:
            selecting.clear()

    monkeypatch.setattr(experiment, "label_logprobs", recording)
    monkeypatch.setattr(experiment, "choose_learning_rates", choosing)
    monkeypatch.setenv(WORKERS_ENV, "1")  # the recording lists live in this process
    result = experiment.run(_ctx(tmp_path, "small"))

    task = experiment.TASKS["language_id"]()
    test = experiment.split_task(task, plan.n_test, _ctx(tmp_path, "small").rng(0)).test
    test_prompts = {task.prompt(w) for w, _ in test}
    assert len(test_prompts) == plan.n_test and seen
    assert not set(seen) & test_prompts
    chosen = result.metrics["learning_rates"]["language_id"]
    assert set(chosen) == set(plan.methods)
    assert all(chosen[m] in experiment.LR_GRIDS[m] for m in plan.methods)
    # every grid rate was tried and its validation figures kept; the chosen one is printed in the table
    figures = result.metrics["lr_selection"]["language_id"]["pmt"]
    assert len(figures) == 4 and all(0 <= f["val_accuracy"] <= 1 for f in figures.values())
    rows = {r["method"]: r for r in result.tables["accuracy"]}
    assert rows["pmt"]["lr (chosen on validation)"] == chosen["pmt"] and "pmt" in result.notes
    measured = [c for c in result.claims if c.verdict != Verdict.NOT_MEASURABLE]
    assert len(measured) == 6 and all(c.interval is not None for c in measured)
    assert set(result.metrics["prefix_attention_mass_by_length"]) == {"16", "24", "32"}


def test_selection_prefers_accuracy_then_cross_entropy(tiny, monkeypatch):
    np = experiment.np
    task = experiment.TASKS["word_sentiment"]()
    split = experiment.split_task(task, 4, np.random.default_rng(0))
    plan = dataclasses.replace(
        experiment.PLANS["small"], methods=("lora",), select_steps=1, n_val_per_class=1
    )
    # fake training: the "model" is the rate; fake scores: the margin of the true label per rate
    monkeypatch.setattr(experiment, "_train", lambda hf, ex, m, lr, steps, seed: type("R", (), {"model": lr}))
    margins = {1e-4: (-1.0, -1.0), 3e-4: (20.0, -0.1), 1e-3: (0.5, 0.5), 3e-3: (0.01, 0.01)}

    def scores(lr, tokenizer, task, words):
        rows = []
        for i, (_, y) in enumerate(words):
            m = margins[lr][0 if i < len(words) / 2 else 1]
            rows.append([m, 0.0] if task.labels.index(y) == 0 else [0.0, m])
        return np.array(rows)

    monkeypatch.setattr(experiment, "_scores", scores)
    chosen, figures = experiment.choose_learning_rates(
        tiny, task, split.train_pools, plan, np.random.default_rng(1), 0
    )
    f = figures["lora"]
    # 3e-4 has the lowest cross-entropy but half the accuracy; 1e-3 and 3e-3 tie on accuracy
    assert f[3e-4]["val_cross_entropy"] < f[1e-3]["val_cross_entropy"] < f[3e-3]["val_cross_entropy"]
    assert f[3e-4]["val_accuracy"] == 0.5 and f[1e-3]["val_accuracy"] == f[3e-3]["val_accuracy"] == 1.0
    assert chosen["lora"] == 1e-3


@pytest.mark.slow
def test_medium_wiring_on_the_tiny_model(tmp_path, monkeypatch):
    plan = _shrink(monkeypatch, "medium")
    result = experiment.run(_ctx(tmp_path, "medium"))
    assert set(result.metrics["learning_rates"]) == set(plan.tasks)
    assert all(set(c) == set(plan.methods) for c in result.metrics["learning_rates"].values())
    assert {(r["task"], r["method"]) for r in result.tables["accuracy"]} == {
        (t, m) for t in plan.tasks for m in ("base", *plan.methods)
    }
    ood = [c for c in result.claims if "in-context" in c.statement]
    assert len(ood) == 1 and ood[0].interval is not None
    assert set(result.metrics["icl_accuracy_after_entity_type"]) == {"base", "pmt", "lora"}
    assert set(result.metrics["n_test_per_task"]) == set(plan.tasks)


@pytest.mark.parametrize("shape", [(30, 50), (50, 30)])
def test_top_share_equals_the_covariance_spectrum(shape):
    rows = experiment.np.random.default_rng(0).normal(size=shape) * experiment.np.linspace(3, 0.1, shape[1])
    ev = experiment.np.linalg.eigvalsh(experiment.np.cov(rows, rowvar=False))[::-1]
    assert experiment._top_share(rows) == pytest.approx(ev[: experiment.TOP_K].sum() / ev.sum(), rel=1e-9)


def test_forked_workers_give_the_serial_results(tmp_path, monkeypatch):
    """Two forked workers and one process: the same chosen rates, validation figures, accuracies and
    diagnostics (the per-job seeds do not depend on the worker or the order)."""
    _shrink(monkeypatch, "small")
    results = {}
    for workers in (1, 2):
        monkeypatch.setenv(WORKERS_ENV, str(workers))
        results[workers] = experiment.run(_ctx(tmp_path / str(workers), "small"))
    serial, forked = results[1].metrics, results[2].metrics
    assert forked["learning_rates"] == serial["learning_rates"]
    assert forked["lr_selection"] == serial["lr_selection"]
    for key in ("prefix_attention_mass_by_length", "pmt_memory_share_by_length"):
        assert forked[key] == serial[key]
    drop = ("median_step_cpu_s", "median_step_wall_s")
    rows = [
        [{k: v for k, v in r.items() if k not in drop} for r in res.tables["accuracy"]]
        for res in results.values()
    ]
    assert rows[0] == rows[1] and any(r["accuracy"] > 0 for r in rows[0])
    for a, b in zip(results[1].claims, results[2].claims, strict=True):
        if "step time" not in a.statement:  # the only measurement that is a timing
            assert (a.measured, a.interval, a.verdict) == (b.measured, b.interval, b.verdict)

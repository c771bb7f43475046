"""Reading the authors' published results (the multi-lcb.github.io ``data/lcb`` layout) and the
release-date split."""

from __future__ import annotations

import json

import numpy as np
import pytest

from iclr26.claims import Verdict
from iclr26.multi_lcb import ORDER, load_published_results, release_date_split


def _write_model(base, name, tasks, passed=1.0, dated=False):
    folder = base / "data" / "lcb" / name
    folder.mkdir(parents=True)
    for lang in ORDER:
        rows = [
            json.dumps(
                {"task_id": t, "pass": passed}
                | ({"date": "2024-01-02T18:30:00", "difficulty": "easy"} if dated else {})
            )
            for t in tasks
        ]
        (folder / f"{lang}.jsonl").write_text("\n".join(rows) + "\n")


def test_withdrawn_and_partial_models_are_left_out(tmp_path):
    """``_del_`` folders (withdrawn duplicates on the site) are skipped, and only the models on the
    largest common task set are kept."""
    _write_model(tmp_path, "model-a", ["t1", "t2", "t3"])
    _write_model(tmp_path, "model-b", ["t1", "t2", "t3"], passed=0.0)
    _write_model(tmp_path, "_del_model-a-long-name", ["t1", "t2", "t3"])
    _write_model(tmp_path, "model-c", ["t1"])
    (tmp_path / "data" / "lcb" / "model-d").mkdir()  # a model without result files
    models, tasks = load_published_results(tmp_path, ORDER)
    assert sorted(models) == ["model-a", "model-b"]
    assert models["model-b"]["python"] == {"t1": 0.0, "t2": 0.0, "t3": 0.0}
    assert tasks == {}  # these files carry no dates


def test_published_results_read_task_dates_and_reject_bad_passes(tmp_path):
    _write_model(tmp_path / "ok", "m", ["t1", "t2"], passed=0.5, dated=True)
    models, tasks = load_published_results(tmp_path / "ok")
    assert models["m"]["go"] == {"t1": 0.5, "t2": 0.5}
    assert tasks["t1"]["difficulty"] == "easy" and tasks["t1"]["date"].year == 2024
    _write_model(tmp_path / "bad", "m", ["t1"], passed=1.5)
    with pytest.raises(ValueError, match=r"pass must be a number in \[0, 1\]"):
        load_published_results(tmp_path / "bad")
    bad = tmp_path / "ok" / "data" / "lcb" / "m" / "python.jsonl"
    bad.write_text('{"task_id": "t1", "pass": 0.5}\n\n{"pass": 1}\n')
    with pytest.raises(ValueError, match=r"python.jsonl, line 3: a record must hold 'task_id' and 'pass'"):
        load_published_results(tmp_path / "ok")
    bad.write_text('{"task_id": "t1", "pass": 0.5}\nnot json\n')
    with pytest.raises(ValueError, match=r"python.jsonl, line 2: not a JSON record"):
        load_published_results(tmp_path / "ok")
    with pytest.raises(ValueError, match="root must be an existing folder"):
        load_published_results(tmp_path / "nowhere")


def _split_case(python_after=0.4, cpp_after=0.8):
    """Two models, Python and C++, 40 tasks: 20 in 2024 and 20 in 2025, half easy and half hard in each
    year. Model a passes 0.8 before its 2024-12-31 cutoff in both languages and ``python_after`` /
    ``cpp_after`` after it; model b (cutoff 2024-12-31 too) is the same."""
    tasks, per = {}, {"python": {}, "cpp": {}}
    for k in range(40):
        year = 2024 if k < 20 else 2025
        t = f"t{k}"
        tasks[t] = {"date": f"{year}-06-0{1 + k % 5}", "difficulty": "easy" if k % 2 else "hard"}
        per["python"][t] = 0.8 if year == 2024 else python_after
        per["cpp"][t] = 0.8 if year == 2024 else cpp_after
    passes = {"a": per, "b": {lang: dict(v) for lang, v in per.items()}}
    return passes, tasks


def test_release_date_split_measures_the_drop_per_language():
    passes, tasks = _split_case()
    out = release_date_split(passes, tasks, {"a": "2024-12-31", "b": "2024-12-31"}, n_boot=200)
    assert out["models"] == ["a", "b"] and out["excluded"] == {}
    assert out["per_language"]["python"].value == pytest.approx(0.4)
    assert out["per_language"]["cpp"].value == pytest.approx(0.0)
    assert out["pooled"].value == pytest.approx(0.2)
    assert out["python_minus_others"].value == pytest.approx(0.4)
    row = next(r for r in out["per_model"] if r["model"] == "a" and r["language"] == "python")
    assert (row["tasks before"], row["tasks after"]) == (20, 20)
    assert row["pass before"] == pytest.approx(0.8) and row["pass after"] == pytest.approx(0.4)


def test_release_date_split_standardises_the_difficulty_mix():
    """After the cutoff only hard tasks, which every model passes less often: the raw pass rate falls,
    but within each difficulty nothing changes, so the standardised drop is 0."""
    tasks, per = {}, {"python": {}}
    for k in range(40):
        hard = k >= 30 or (k < 20 and k % 2 == 0)  # 2024: half hard; 2025: 10 easy, 10 hard
        tasks[f"t{k}"] = {
            "date": "2024-06-01" if k < 20 else "2025-06-01",
            "difficulty": "hard" if hard else "easy",
        }
        per["python"][f"t{k}"] = 0.2 if hard else 0.9
    passes = {"a": per}
    out = release_date_split(passes, tasks, {"a": "2024-12-31"}, n_boot=100)
    row = out["per_model"][0]
    assert row["pass before"] == pytest.approx(0.55) and row["pass after"] == pytest.approx(0.55)
    for t in ("t20", "t21"):  # 2025 now 8 easy, 12 hard
        tasks[t]["difficulty"], per["python"][t] = "hard", 0.2
    out = release_date_split(passes, tasks, {"a": "2024-12-31"}, n_boot=100)
    assert out["per_model"][0]["pass after"] < 0.55  # the raw rate falls with the mix...
    assert out["per_language"]["python"].value == pytest.approx(0.0, abs=1e-12)  # ...the drop does not
    assert out["python_minus_others"] is None  # no other language


def test_release_date_split_excludes_models_without_both_windows_and_checks_its_input():
    passes, tasks = _split_case()
    out = release_date_split(passes, tasks, {"a": "2024-12-31", "b": "2026-01-01"}, n_boot=100)
    assert out["models"] == ["a"] and out["excluded"] == {"b": "no task dated after 2026-01-01"}
    with pytest.raises(ValueError, match="no model has tasks on both sides"):
        release_date_split(passes, tasks, {"b": "2023-01-01"}, n_boot=100)
    with pytest.raises(ValueError, match=r"release_dates names models not in passes: \['zz'\]"):
        release_date_split(passes, tasks, {"zz": "2024-12-31"})
    with pytest.raises(ValueError, match="release_dates must be a non-empty dict"):
        release_date_split(passes, tasks, {})
    with pytest.raises(ValueError, match="tasks lacks 1 task"):
        release_date_split(passes, {k: v for k, v in tasks.items() if k != "t3"}, {"a": "2024-12-31"})
    with pytest.raises(ValueError, match="contest_date must be ISO text"):
        release_date_split(passes, tasks, {"a": "last year"})
    passes["a"]["python"]["t1"] = float("nan")
    with pytest.raises(ValueError, match="pass rates contains NaN or infinite values"):
        release_date_split(passes, tasks, {"a": "2024-12-31"})
    passes["a"]["python"]["t1"] = 1.5
    with pytest.raises(ValueError, match=r"pass rates must lie in \[0, 1\]"):
        release_date_split(passes, tasks, {"a": "2024-12-31"})
    passes["a"]["python"]["t1"] = 0.8
    passes["b"]["cpp"].pop("t0")
    with pytest.raises(ValueError, match="must hold the same languages and tasks"):
        release_date_split(passes, tasks, {"a": "2024-12-31", "b": "2024-12-31"})
    assert np.isfinite(release_date_split(passes, tasks, {"a": "2024-12-31"}, n_boot=100)["pooled"].value)


def test_results_folder_comes_from_the_cli_and_is_checked_before_any_work(tmp_path, monkeypatch):
    """``iclr26 run multi-lcb --results DIR``: a folder that does not exist is refused at once (from the
    option or from $ICLR26_MULTI_LCB_RESULTS), and a system that re-scores no results refuses the
    option."""
    import pytest

    from iclr26 import catalogue
    from iclr26.cli import main
    from iclr26.multi_lcb import experiment
    from iclr26.runner import run_system
    from iclr26.runtime import RunContext

    missing = str(tmp_path / "nowhere")
    with pytest.raises(ValueError, match="results must be an existing folder"):
        RunContext("multi-lcb", out_dir=tmp_path / "a", results=missing)
    assert main(["run", "multi-lcb", "--results", missing, "--out", str(tmp_path / "b")]) == 2
    monkeypatch.setenv(experiment.RESULTS_ENV, missing)
    with pytest.raises(ValueError, match="ICLR26_MULTI_LCB_RESULTS must name an existing folder"):
        experiment.run(RunContext("multi-lcb", out_dir=tmp_path / "c"))
    with pytest.raises(ValueError, match="disco does not take --results"):
        run_system(catalogue.get("disco"), out_dir=tmp_path / "d", options={"results": str(tmp_path)})


def test_reference_rows_name_the_failing_programs():
    from iclr26.multi_lcb import TestVerdict
    from iclr26.multi_lcb.experiment import _reference_row

    ok, wa, tle = (TestVerdict(v, "", 0.0) for v in ("OK", "WA", "TLE"))
    row, passed, failures = _reference_row(
        "Go", "go1.19", ["go a", "go b", "go c"], [[ok, ok], [ok, wa], [tle]]
    )
    assert passed == [True, False, False] and failures == ["go b: WA", "go c: TLE"]
    assert row == {
        "language": "Go",
        "toolchain": "go1.19",
        "problems": 3,
        "tests": 5,
        "reference pass rate": 1 / 3,
    }


def test_release_date_claims_use_the_models_lcb_dates():
    """The headline's (d): models named as on the Multi-LCB site get LiveCodeBench's release dates;
    the others are left out; without dated tasks the claim is not measurable."""
    from iclr26.multi_lcb.experiment import _release_date_claims

    passes, tasks = _split_case()
    per = passes["a"]
    models = {"Qwen2.5-Coder-32B-Instr": per, "Deepseek-Coder-33B-Instr": per, "undated-model": per}
    tables, metrics = {}, {}
    claims = _release_date_claims(models, tasks, tables, metrics, dict(n_boot=200, seed=0))
    assert metrics["release_date_split"]["models"] == ["Qwen2.5-Coder-32B-Instr"]
    # LCB dates DSCoder-33b-Ins 2023-09-01: every task of this case is after it
    assert metrics["release_date_split"]["excluded"] == {
        "Deepseek-Coder-33B-Instr": "no task dated before 2023-09-01"
    }
    assert [c.verdict for c in claims] == ["holds", "holds"]
    assert claims[1].measured == pytest.approx(0.4)  # Python drops 0.4, C++ 0
    table = tables["authors' results: pass rate before minus after the release date"]
    assert [r["language"] for r in table] == ["Python", "C++"]
    none = _release_date_claims({"undated-model": per}, tasks, {}, {}, dict(n_boot=200, seed=0))
    assert none[0].verdict == Verdict.NOT_MEASURABLE
    one_sided = {"Deepseek-Coder-33B-Instr": per}  # every task after its date
    [claim] = _release_date_claims(one_sided, tasks, {}, {}, dict(n_boot=200, seed=0))
    assert claim.verdict == Verdict.NOT_MEASURABLE
    [claim] = _release_date_claims(models, {}, {}, {}, dict(n_boot=200, seed=0))
    assert claim.verdict == Verdict.NOT_MEASURABLE
    # only the one-sided case is "not measurable": bad results data still fails the run
    first = next(iter(tasks))
    with pytest.raises(ValueError, match="tasks lacks"):
        _release_date_claims(
            models, {t: v for t, v in tasks.items() if t != first}, {}, {}, dict(n_boot=200, seed=0)
        )

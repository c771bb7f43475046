"""Reading the authors' published results (the multi-lcb.github.io ``data/lcb`` layout)."""

from __future__ import annotations

import json

from iclr26.multi_lcb import ORDER
from iclr26.multi_lcb.experiment import _authors_results


def _write_model(base, name, tasks, passed=1.0):
    folder = base / "data" / "lcb" / name
    folder.mkdir(parents=True)
    for lang in ORDER:
        rows = [json.dumps({"task_id": t, "pass": passed}) for t in tasks]
        (folder / f"{lang}.jsonl").write_text("\n".join(rows) + "\n")


def test_withdrawn_and_partial_models_are_left_out(tmp_path):
    """``_del_`` folders (withdrawn duplicates on the site) are skipped, and only the models on the
    largest common task set are kept."""
    _write_model(tmp_path, "model-a", ["t1", "t2", "t3"])
    _write_model(tmp_path, "model-b", ["t1", "t2", "t3"], passed=0.0)
    _write_model(tmp_path, "_del_model-a-long-name", ["t1", "t2", "t3"])
    _write_model(tmp_path, "model-c", ["t1"])
    (tmp_path / "data" / "lcb" / "model-d").mkdir()  # a model without result files
    models = _authors_results(tmp_path, ORDER)
    assert sorted(models) == ["model-a", "model-b"]
    assert models["model-b"]["python"] == {"t1": 0.0, "t2": 0.0, "t3": 0.0}


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

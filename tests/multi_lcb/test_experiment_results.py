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

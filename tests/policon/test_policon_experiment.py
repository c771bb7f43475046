"""The headline experiment end to end on a scripted model, a fake encoder and OUR generated tasks."""

from __future__ import annotations

import json

import numpy as np

import iclr26.policon as policon
from iclr26.models import ScriptedModel
from iclr26.policon import JUDGE_SYSTEM, build_tasks, experiment, generate_topics
from iclr26.runtime import RunContext


def _reply(prompt):
    if prompt[0]["content"] == JUDGE_SYSTEM:  # a judge call: a digit, or text for a sixth of them
        h = sum(map(ord, prompt[-1]["content"])) % 12
        return str(h) if h < 10 else "not a digit"
    return "The European Parliament raised a scripted draft."


class _FakeEmbeddingJudge(policon.EmbeddingJudge):
    def __init__(self):
        vocab = ["supports", "opposes", "divided", "calls", "rejects", "budget", "workers"]
        super().__init__(lambda texts: np.array([[t.count(w) + 0.01 for w in vocab] for t in texts]))


def _setup(tmp_path, monkeypatch, seed):
    """OUR generated tasks in the authors' folder layout (24 debates, 72 tasks), scripted models, a fake
    encoder. Returns the list of models handed out."""
    topics = generate_topics(6, seed=seed)
    root = tmp_path / "data"
    for name in {r["topic"] for r in topics}:
        recs = [r for r in topics if r["topic"] == name]
        (root / "topic_datas").mkdir(parents=True, exist_ok=True)
        (root / "topic_datas" / f"{name}.json").write_text(json.dumps(recs))
        for k in (2, 4, 6):
            folder = root / "task_datas" / str(k)
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"{name}.json").write_text(json.dumps(build_tasks(recs, k, rng=k)))
    monkeypatch.setenv(experiment.DATA_ENV, str(root))
    monkeypatch.setattr(policon, "EmbeddingJudge", _FakeEmbeddingJudge)
    models = []

    def load_model(self, default="embedded", *, judge=False):
        models.append(ScriptedModel(_reply, name="scripted-policon"))
        return models[-1]

    monkeypatch.setattr(RunContext, "load_model", load_model)
    return models


def test_small_run_on_scripted_model_resumes(tmp_path, monkeypatch):
    models = _setup(tmp_path, monkeypatch, 0)
    res = experiment.run(RunContext("policon", out_dir=tmp_path / "out", show_progress=False))
    verdicts = {c.statement: str(c.verdict) for c in res.claims}
    assert verdicts["Real votes: Rawlsian welfare (min) is below utilitarian welfare (mean)"] == "holds"
    assert res.metrics["n_tasks"] == 72
    assert len(res.claims) == 14 and "samples.sqlite" in res.notes
    assert len(models[0].prompts) > 0
    again = experiment.run(RunContext("policon", out_dir=tmp_path / "out", show_progress=False))
    assert again.metrics["drafts"] == res.metrics["drafts"]
    assert models[-1].prompts == []  # everything read back from samples.sqlite


def test_medium_run_measures_draft_claims(tmp_path, monkeypatch):
    _setup(tmp_path, monkeypatch, 1)
    res = experiment.run(RunContext("policon", scale="medium", out_dir=tmp_path / "out", show_progress=False))
    drafts = [c for c in res.claims if c.statement.startswith(("Drafts", "Rawlsian welfare of drafts"))]
    assert len(drafts) == 8 and all(c.measured is not None for c in drafts[:3])
    # the scripted draft is the same for every goal, so two-thirds never passes more often than simple
    assert drafts[0].interval[0] >= 0

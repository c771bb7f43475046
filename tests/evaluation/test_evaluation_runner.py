"""The evaluation core: batch-size-independent scores, append-only log, resume after a kill, and
offline re-scoring from saved outputs."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytest.importorskip("transformers")

from iclr26.evaluation import Sample, SampleLog, Task, evaluate, rescore  # noqa: E402
from iclr26.models import GenerationConfig, LanguageModel, load_model, tiny_random_model  # noqa: E402


def _task(n: int, max_new_tokens: int = 6) -> Task:
    samples = [
        Sample(id=f"s{i}", data={"text": "word " * (i % 7 + 1), "gold": "a"}, group=f"g{i % 3}")
        for i in range(n)
    ]
    return Task(
        name="toy",
        samples=samples,
        build_prompt=lambda s: [{"role": "user", "content": s.data["text"] + "?"}],
        parse=lambda text, s: text[:1],
        score=lambda p, s: {"acc": float(p == s.data["gold"]), "long": float(len(p) > 0)},
        generation=GenerationConfig(max_new_tokens=max_new_tokens),
    )


class Forbidden(LanguageModel):
    """A model that must not be called (re-scoring is offline), with the identity of another."""

    name = "tiny-random-llama-h64-l2-s0"

    def __init__(self, identity: str):
        self._identity = identity

    @property
    def identity(self) -> str:
        return self._identity

    def generate(self, prompts, config=None):
        raise AssertionError("the model was called")

    def loglikelihood(self, contexts, continuations):
        raise AssertionError("the model was called")


@pytest.fixture(scope="module")
def tiny():
    return tiny_random_model(seed=0)


def test_same_scores_whatever_the_batch_size(tiny, tmp_path):
    task = _task(12)
    r1 = evaluate(task, tiny, batch_size=1, progress=False)
    r5 = evaluate(task, tiny, batch_size=5, progress=False, sort_by_length=False)
    assert [r["text"] for r in r1.records] == [r["text"] for r in r5.records]
    assert r1.metrics == r5.metrics
    assert r1.batch_size == 1 and r5.batch_size == 5
    assert r1.metrics["all"]["n"] == 12 and set(r1.metrics) == {"all", "g0", "g1", "g2"}
    assert r1.model["name"] == tiny.name and "transformers" in r1.versions and r1.seed == 0
    assert r1.model["identity"] == tiny.identity and r1.n_errors == 0


def test_resume_rescore_and_append_only(tiny, tmp_path):
    log = tmp_path / "log.sqlite"
    task = _task(10)
    first = evaluate(task, tiny, batch_size=4, log=log, progress=False, limit=6)
    assert first.n_asked == 6
    second = evaluate(task, tiny, batch_size=3, log=log, progress=False)
    assert second.n_asked == 4 and second.n_reused == 6
    third = evaluate(task, Forbidden(tiny.identity), batch_size=3, log=log, progress=False)  # all saved
    assert third.n_asked == 0 and third.metrics == second.metrics
    assert second.batch_size == third.batch_size == [3, 4]  # the sizes the outputs were made with
    # Re-scoring offline with a new parser changes the scores, never calls the model.
    task2 = _task(10)
    task2.parse = lambda text, s: "a"
    again = rescore(task2, log, Forbidden(tiny.identity))
    assert again.metrics["all"]["acc"] == 1.0 and again.batch_size == [3, 4]
    assert rescore(task2, log, tiny.name).metrics == again.metrics  # the name, when unambiguous
    assert rescore(task2, log, tiny.identity, limit=4).batch_size == 4
    assert [r["text"] for r in again.records] == [r["text"] for r in second.records]
    # A different seed or config is a different key: nothing saved for it.
    with pytest.raises(ValueError, match="no saved output"):
        rescore(task, log, Forbidden(tiny.identity), generation=GenerationConfig(max_new_tokens=7))
    with SampleLog(log) as slog:
        assert len(slog) == 10
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            slog._conn.execute("UPDATE samples SET output = '{}'")
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            slog._conn.execute("DELETE FROM samples")
        assert slog._conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_bad_input(tiny):
    with pytest.raises(ValueError, match="batch_size"):
        evaluate(_task(2), tiny, batch_size=0)
    with pytest.raises(ValueError, match="Task"):
        evaluate("toy", tiny)
    with pytest.raises(ValueError, match="duplicate"):
        Task("t", [Sample("a", {}), Sample("a", {})], str, lambda t, s: t, lambda p, s: {}).load()
    with pytest.raises(ValueError, match="no sample log"):
        rescore(_task(2), "/nonexistent/log.sqlite", "m")
    empty = Task("empty", [], str, lambda t, s: t, lambda p, s: {})
    with pytest.raises(ValueError, match="has no samples"):
        evaluate(empty, tiny)
    with pytest.raises(ValueError, match="limit"):
        evaluate(_task(2), tiny, limit=0)
    with pytest.raises(ValueError, match="error_scores"):
        Task("t", [], str, str, str, error_scores={"acc": "zero"})


def test_two_models_under_the_same_folder_name_never_share_outputs(tmp_path, monkeypatch):
    """The sample key is the model's content, not its name: a/model and b/model are different."""
    monkeypatch.setenv("ICLR26_CACHE", str(tmp_path / "cache"))
    tiny_random_model(seed=0, save_to=tmp_path / "a" / "model")
    tiny_random_model(seed=1, save_to=tmp_path / "b" / "model")
    a = load_model(str(tmp_path / "a" / "model"))
    b = load_model(str(tmp_path / "b" / "model"))
    assert a.name == b.name == "model"
    log = tmp_path / "shared.sqlite"
    task = _task(6)
    ra = evaluate(task, a, log=log, progress=False)
    rb = evaluate(task, b, log=log, progress=False)
    assert ra.n_asked == rb.n_asked == 6 and rb.n_reused == 0
    assert [r["text"] for r in ra.records] != [r["text"] for r in rb.records]
    with SampleLog(log) as slog:
        assert len(slog) == 12
        stored = {r["model"] for r in slog.records()}
        assert stored == {a.identity, b.identity}
        assert [r["output"]["text"] for r in slog.records(model=b.identity)] == [
            r["text"] for r in rb.records
        ]
    with pytest.raises(ValueError, match="2 different models were logged under the name 'model'"):
        rescore(task, log, "model")
    assert rescore(task, log, b).metrics == rb.metrics


def test_a_parse_failure_mid_batch_is_a_logged_scored_row(tiny, tmp_path):
    log = tmp_path / "log.sqlite"
    task = _task(6)

    def fragile(text, s):
        if s.id in ("s2", "s4"):
            raise KeyError("the parser's bug")
        return text[:1]

    task.parse = fragile
    task.error_scores = {"acc": 0.0, "long": 0.0}
    with pytest.warns(RuntimeWarning, match="2 of 6 outputs could not be parsed"):
        res = evaluate(task, tiny, batch_size=6, log=log, progress=False, sort_by_length=False)
    assert res.n_errors == 2 and res.metrics["all"]["n"] == 6 and res.metrics["all"]["errors"] == 2
    bad = {r["sample_id"]: r for r in res.records if r["error"]}
    assert set(bad) == {"s2", "s4"} and "the parser's bug" in bad["s2"]["error"]
    assert bad["s2"]["parsed"] is None and bad["s2"]["scores"] == {"acc": 0.0, "long": 0.0}
    with SampleLog(log) as slog:
        rows = slog.records()
        assert len(rows) == 6  # every raw output was kept
        assert {r["sample_id"] for r in rows if r["error"]} == {"s2", "s4"}
    fixed = _task(6)  # the parser fixed: re-scoring recovers the two rows, no model call
    again = rescore(fixed, log, Forbidden(tiny.identity))
    assert again.n_errors == 0
    assert again.metrics == evaluate(fixed, tiny, batch_size=6, progress=False).metrics


_CHILD = """
import sys, json
from iclr26.evaluation import Sample, Task, evaluate
from iclr26.models import GenerationConfig, LanguageModel, tiny_random_model

inner = tiny_random_model(seed=0)

class Recording(LanguageModel):
    name = inner.name
    identity = inner.identity
    def generate(self, prompts, config=None):
        with open(sys.argv[2], "a") as fh:
            for p in prompts:
                fh.write(json.dumps(p[0]["content"]) + "\\n")
        return inner.generate(prompts, config)
    def loglikelihood(self, c, k):
        return inner.loglikelihood(c, k)

samples = [Sample(id=f"s{i}", data={"i": i}, group=f"g{i % 2}") for i in range(200)]
task = Task("resume", samples, lambda s: [{"role": "user", "content": f"item {s.data['i']}"}],
            lambda t, s: t[:2], lambda p, s: {"acc": float(len(p) == 2)},
            generation=GenerationConfig(max_new_tokens=2))
r = evaluate(task, Recording(), batch_size=4, log=sys.argv[1], progress=False, sort_by_length=False)
print(json.dumps({"asked": r.n_asked, "reused": r.n_reused, "metrics": r.metrics}))
"""


def _count(log: Path) -> int:
    if not log.exists():
        return 0
    try:
        con = sqlite3.connect(str(log), timeout=5)
        try:
            return int(con.execute("SELECT COUNT(*) FROM samples").fetchone()[0])
        finally:
            con.close()
    except sqlite3.OperationalError:
        return 0


def test_200_sample_run_killed_midway_resumes_without_asking_twice(tmp_path):
    log, asked1, asked2 = tmp_path / "run.sqlite", tmp_path / "asked1.jsonl", tmp_path / "asked2.jsonl"
    script = tmp_path / "child.py"
    script.write_text(textwrap.dedent(_CHILD))
    env = {**os.environ, "ICLR26_NO_PROGRESS": "1"}
    proc = subprocess.Popen(
        [sys.executable, str(script), str(log), str(asked1)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.time() + 240
    while _count(log) < 40 and proc.poll() is None and time.time() < deadline:
        time.sleep(0.05)
    assert proc.poll() is None, "the run finished before it could be killed"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    logged = _count(log)
    assert 40 <= logged < 200
    before = Path(asked1).read_text().splitlines()
    with SampleLog(log) as slog:
        logged_ids = {r["prompt"][0]["content"] for r in slog.records()}
    out = subprocess.run(
        [sys.executable, str(script), str(log), str(asked2)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    import json

    summary = json.loads(out.stdout.strip().splitlines()[-1])
    after = [json.loads(x) for x in Path(asked2).read_text().splitlines()]
    assert summary["reused"] == logged and summary["asked"] == 200 - logged == len(after)
    assert not logged_ids & set(after), "a sample already logged was asked again"
    # Only the batch in flight at the kill (at most batch_size=4) was asked in both runs.
    assert len(set(json.loads(x) for x in before) & set(after)) <= 4
    with SampleLog(log) as slog:
        assert len(slog) == 200
    assert summary["metrics"]["all"]["n"] == 200


def test_a_log_written_before_the_new_columns_opens_and_reads(tmp_path):
    log = tmp_path / "old.sqlite"
    con = sqlite3.connect(str(log))
    con.executescript(
        """CREATE TABLE samples (key TEXT PRIMARY KEY, task TEXT NOT NULL, sample_id TEXT NOT NULL,
        sample_group TEXT NOT NULL, model TEXT NOT NULL, config TEXT NOT NULL, seed INTEGER NOT NULL,
        prompt TEXT NOT NULL, output TEXT NOT NULL, parsed TEXT NOT NULL, scores TEXT NOT NULL,
        batch_size INTEGER NOT NULL, created REAL NOT NULL);
        INSERT INTO samples VALUES ('k', 't', 's0', '', 'm', '{}', 0, '"p"', '{"text": "x"}', '"x"',
        '{"acc": 1.0}', 4, 0.0);"""
    )
    con.commit()
    con.close()
    with SampleLog(log) as slog:
        (row,) = slog.records()
        assert row["model_name"] is None and row["error"] is None and row["scores"] == {"acc": 1.0}
        slog.append([{**row, "key": "k2", "model_name": "m", "error": "ValueError: x"}])
        assert len(slog) == 2 and slog.identities("t", "m") == ["m"]

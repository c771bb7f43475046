"""SimpleToM protocol: the authors' answer extraction on tricky outputs, their prompt layout, the
JSONL loader, per-type statistics, our embedded stories, and an end-to-end run on a tiny model."""

from __future__ import annotations

import json

import pytest

from iclr26.simpletom import (
    COT_PROMPT,
    chat_messages,
    extract_answer,
    generate_stories,
    load_simpletom,
    n_embedded_stories,
    question_prompt,
    question_type,
    simpletom_stats,
    simpletom_task,
)

# (model output, chain-of-thought?, prediction the authors' process_answer gives). Every row was
# checked against yulinggu-cs/SimpleToM inference/utils.py::process_answer.
TRICKY = [
    ("(B)", False, "B"),
    ("(B) No", False, "B"),
    ("Answer: (A)", False, "A"),
    ("answer: B", False, "B"),
    ("ANSWER: (B)", False, "B"),
    ("Answer:\n(A) Yes", False, "A"),
    ("The answer is (B).", False, "B"),
    ("(A) or (B)", False, "A"),  # full "(X)" marks: the first in label order wins
    ("(B) or (A)", False, "A"),
    ("(A", False, "A"),
    ("(A or (B", False, "(A or (B"),  # ambiguous -> invalid
    ("A or B", False, "A or B"),  # ambiguous -> invalid
    ("Based on the story, A", False, "Based on the story, A"),  # the B of "Based" makes it ambiguous
    ("Based on the story, B", False, "B"),
    ("I think A.", False, "A"),
    ("The correct answer is B", False, "B"),
    ("Yes", False, "Yes"),
    ("Not reasonable", False, "Not reasonable"),
    ("", False, ""),
    ("   ", False, ""),
    ("(C)", False, "C"),
    ("Cashier", False, "C"),  # a bare capital counts
    ("(b)", False, "(b)"),
    ("B) No", False, "B"),
    ("Answer: Answer: B", False, "B"),
    ("Mary cannot see inside. Therefore, the answer is: (B)", True, "B"),
    ("(A) is wrong. Therefore, the answer is: (B)", True, "B"),
    ("Therefore, the answer is: (A). The answer is (B)", True, "B"),  # the last "the answer is" counts
    ("She would not know. Therefore the answer is B", True, "B"),
    ("No final answer given, (A) seems plausible", True, "A"),
    ("Therefore, the answer is:", True, ""),
    ("THE ANSWER IS: A", True, "A"),
    ("Reasoning...\nTherefore, the answer is:\n(B) No", True, "B"),
]


@pytest.mark.parametrize(("text", "cot", "expected"), TRICKY)
def test_extract_answer_matches_the_authors(text, cot, expected):
    assert extract_answer(text, cot=cot) == expected


def test_prompt_layout_and_types():
    rec = generate_stories(1)[2]
    p = question_prompt(rec)
    assert p.startswith(
        "Given the following story, answer the question by giving the correct answer choice, (A) or (B)."
    )
    assert f"Story:\n{rec['story']}\n\nQuestion: {rec['question']} \n(A) " in p
    assert p.endswith('What is the correct answer? Respond with just "(A)" or "(B)"\n')
    assert question_prompt(rec, cot=True).endswith(f'{COT_PROMPT} "(A)" or "(B)"\n')
    msgs = chat_messages(rec)
    assert (
        msgs[0] == {"role": "system", "content": "You are a helpful assistant."} and msgs[1]["content"] == p
    )
    assert [question_type(x) for x in ("a_aware", "a_action", "a_judge")] == [
        "mental-state",
        "behavior",
        "judgment",
    ]
    with pytest.raises(ValueError, match="does not end"):
        question_type("story_other")


def test_embedded_stories_format_balance_and_determinism():
    recs = generate_stories()
    assert len(recs) == 3 * n_embedded_stories() and n_embedded_stories() >= 40
    assert recs == generate_stories()
    assert recs != generate_stories(seed=1)
    assert len({r["id"] for r in generate_stories(120)}) == 360
    for t in ("aware", "action", "judge"):
        for n in (len(recs), 24 * 3, 7 * 3):  # balanced in every prefix (pairs of stories)
            keys = [r["answerKey"] for r in recs[:n] if r["id"].endswith(t)]
            assert abs(keys.count("A") - keys.count("B")) <= 1
    for r in recs:
        assert "not the authors'" in r["source"]
        correct = r["choices"]["text"][r["choices"]["label"].index(r["answerKey"])]
        if r["id"].endswith("_aware"):
            assert correct == "No"
        if r["id"].endswith("_judge"):
            assert correct == "Reasonable"
    settings = {r["setting"] for r in recs}
    assert {"supermarket", "hospital", "school", "office"} <= settings


def test_story_ids_and_texts_are_stable_across_sizes():
    """Asking for more stories appends; it never reshuffles the smaller set."""
    small = generate_stories(24)
    for n in (25, 49, 60):
        assert generate_stories(n)[: len(small)] == small
    assert generate_stories(24, seed=1)[:3] == generate_stories(25, seed=1)[:3]
    assert generate_stories(24, seed=1) != small


def _by_config(recs):
    from iclr26.simpletom import CONFIGS

    return {c: [r for r in recs if r["id"].endswith(s)] for c, s in CONFIGS.items()}


def test_loader_reads_the_three_hub_configurations(tmp_path):
    """The Hub repository's JSONL, its parquet branch, and the datasets cache / save_to_disk Arrow."""
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    recs = generate_stories(4)
    parts = _by_config(recs)
    expected = [r for c in parts for r in parts[c]]  # mental-state, behaviour, judgment
    hub, parquet, arrow = tmp_path / "hub", tmp_path / "parquet", tmp_path / "arrow"
    for config, rows in parts.items():
        (hub / config).mkdir(parents=True)
        (hub / config / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        (parquet / config / "test").mkdir(parents=True)
        pq.write_table(pa.Table.from_pylist(rows), parquet / config / "test" / "0000.parquet")
        folder = arrow / config / "0.0.0" / "abc123"
        folder.mkdir(parents=True)
        table = pa.Table.from_pylist(rows)
        with pa.OSFile(str(folder / "simple_to_m-test.arrow"), "wb") as sink:
            with pa.ipc.new_stream(sink, table.schema) as writer:  # datasets writes the stream format
                writer.write_table(table)
    for root in (hub, parquet, arrow):
        assert load_simpletom(root) == expected
    assert load_simpletom(parquet / "behavior-qa" / "test" / "0000.parquet") == parts["behavior-qa"]
    # What goes wrong is said, not skipped.
    (hub / "judgment-qa" / "test.jsonl").rename(hub / "judgment-qa" / "test.txt")
    with pytest.raises(ValueError, match="judgment-qa holds no"):
        load_simpletom(hub)
    with pytest.raises(ValueError, match="lacks the configuration folder.*mental-state-qa"):
        load_simpletom(hub / "behavior-qa")
    (hub / "judgment-qa" / "test.jsonl").write_text(json.dumps(parts["behavior-qa"][0]) + "\n")
    with pytest.raises(ValueError, match="is in judgment-qa but does not end in 'judge'"):
        load_simpletom(hub)
    (parquet / "behavior-qa" / "test" / "0000.parquet").write_bytes(b"not parquet")
    with pytest.raises(ValueError, match="not a readable parquet table"):
        load_simpletom(parquet)


def test_loader_and_stats(tmp_path):
    recs = generate_stories(4)
    path = tmp_path / "simpletom.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    assert load_simpletom(path) == recs
    dup = tmp_path / "dup.jsonl"
    dup.write_text(json.dumps(recs[0]) + "\n" + json.dumps(recs[0]) + "\n")
    with pytest.raises(ValueError, match="duplicate id"):
        load_simpletom(dup)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({**recs[0], "answerKey": "C"}) + "\n")
    with pytest.raises(ValueError, match="answerKey"):
        load_simpletom(bad)
    bad.write_text(json.dumps({k: v for k, v in recs[0].items() if k != "story"}) + "\n")
    with pytest.raises(ValueError, match="story"):
        load_simpletom(bad)
    preds = [
        {"id": r["id"], "predicted": p, "correct": r["answerKey"]} for r, p in zip(recs, ["A", "B", "x"] * 4)
    ]
    stats = simpletom_stats(preds)
    assert list(stats) == ["mental-state", "behavior", "judgment"]
    assert stats["judgment"] == {"n": 4, "acc": 0.0, "na_frac": 1.0}
    assert stats["mental-state"]["acc"] == sum(r["answerKey"] == "A" for r in recs[0::3]) / 4


def test_task_end_to_end_on_tiny_model(tmp_path):
    pytest.importorskip("transformers")
    from iclr26.evaluation import evaluate, rescore
    from iclr26.models import tiny_random_model

    model = tiny_random_model(seed=1)
    task = simpletom_task(generate_stories(3))
    assert task.generation.max_new_tokens == 20 and task.generation.greedy
    assert simpletom_task(generate_stories(1), cot=True).generation.max_new_tokens == 500
    res = evaluate(task, model, batch_size=3, log=tmp_path / "log.sqlite", progress=False)
    assert set(res.metrics) == {"mental-state", "behavior", "judgment", "all"}
    for rec in res.records:
        assert rec["parsed"] == extract_answer(rec["text"])
    again = rescore(simpletom_task(generate_stories(3)), tmp_path / "log.sqlite", model.name)
    assert again.metrics == res.metrics
    # One implementation of the per-type statistics: the task's aggregate equals simpletom_stats.
    preds = [
        {"id": r["sample_id"], "predicted": r["parsed"], "correct": s.data["answerKey"]}
        for r, s in zip(res.records, task.load())
    ]
    stats = simpletom_stats(preds)
    assert {t: res.metrics[t] for t in stats} == stats
    assert res.metrics["all"]["n"] == 9


def test_headline_takes_model_limit_and_batch_size(tmp_path, monkeypatch):
    """`iclr26 run simpletom --model hf:PATH --limit 2 --batch-size 3`: the chosen model's identity is
    in the result; options a system does not take are refused before anything runs."""
    pytest.importorskip("transformers")
    from iclr26 import catalogue
    from iclr26.claims import Result
    from iclr26.cli import main
    from iclr26.models import tiny_random_model
    from iclr26.runner import run_system

    monkeypatch.setenv("ICLR26_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("ICLR26_NO_PROGRESS", "1")
    tiny_random_model(seed=4, save_to=tmp_path / "tiny")
    out = tmp_path / "results"
    argv = ["run", "simpletom", "--model", f"hf:{tmp_path / 'tiny'}", "--limit", "2", "--batch-size", "3"]
    assert main([*argv, "--out", str(out)]) == 0
    stored = Result.from_dict(json.loads((out / "simpletom" / "result.json").read_text()))
    assert stored.metrics["run_options"] == {"model": f"hf:{tmp_path / 'tiny'}", "limit": 2, "batch_size": 3}
    assert stored.metrics["model"]["identity"].startswith("transformers:sha256:")
    assert stored.tables["model"][0]["identity"] == stored.metrics["model"]["identity"]
    assert stored.metrics["model"]["identity"] in stored.claims[0].scale
    assert sum(r["n"] for r in stored.tables["simpletom_by_question_type"]) == 6
    assert all(c.interval is not None for c in stored.claims)
    with pytest.raises(ValueError, match="disco does not take --model"):
        run_system(catalogue.get("disco"), out_dir=tmp_path / "x", options={"model": "embedded"})
    assert main(["run", "disco", "--batch-size", "4", "--out", str(tmp_path / "x")]) == 2
    assert not (tmp_path / "x" / "disco" / "result.json").exists()

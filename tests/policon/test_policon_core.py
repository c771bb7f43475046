"""Behaviour, edge cases and bad input of the public API (no authors' code or data needed)."""

from __future__ import annotations

import json
import math
import sqlite3

import numpy as np
import pytest

from iclr26.evaluation import SampleLog
from iclr26.models import ScriptedModel
from iclr26.policon import (
    FALLBACK_SCORE,
    GOALS,
    EmbeddingJudge,
    ModelJudge,
    OracleJudge,
    authors_fields,
    build_tasks,
    check_task,
    drafting_prompt,
    from_authors_results,
    generate_topics,
    judge_prompt,
    load_policon,
    max_variance_subsets,
    oracle_rows,
    parse_judge,
    policon_metrics,
    retry_schedule,
    run_policon,
    score_rows,
    vote,
    welfare,
)


def _task(weights=(0.3, 0.7), veto="B", choices=(2, 8)):
    names = "ABCDEF"[: len(weights)]
    return {
        "topic": "agriculture",
        "title": "T",
        "background": "Bg",
        "resolution": "The European Parliament raised R.",
        "id": 0,
        "party_num": len(weights),
        "seat_weights": list(weights),
        "veto_party_name": veto,
        "stances": [
            {"party_name": n, "stance": f"{n} wants x", "score": c / 10, "choice": c}
            for n, c in zip(names, choices)
        ],
    }


def test_vote_rules_on_one_task():
    t = _task()
    assert vote(t, {"A": 2, "B": 8}, "simple_majority") == {"passed": 1, "voting_result": 0.3 * 2 + 0.7 * 8}
    assert vote(t, {"A": 2, "B": 6}, "two_thirds")["passed"] == 0  # 4.8 < 20/3
    r = vote(t, {"A": 9, "B": 5}, "veto")
    assert (r["passed"], r["veto_alone"]) == (0, 1)  # veto party 5 < 6
    arr = vote([t, t], np.array([[2, 8], [9, 0]]), "simple_majority")
    assert arr["passed"].tolist() == [1, 0]


def test_vote_refuses_bad_input():
    t = _task()
    with pytest.raises(ValueError, match="rule must be one of"):
        vote(t, {"A": 1, "B": 1}, "unanimity")
    with pytest.raises(ValueError, match="sum to 1"):
        vote(_task(weights=(0.3, 0.6)), {"A": 1, "B": 1}, "simple_majority")
    with pytest.raises(ValueError, match="veto_party_name"):
        vote(_task(veto="Z"), {"A": 1, "B": 1}, "veto")
    with pytest.raises(ValueError, match="lacks parties"):
        vote(t, {"A": 1}, "simple_majority")
    with pytest.raises(ValueError, match="one entry per task"):
        vote([t, t], [{"A": 1, "B": 1}], "simple_majority")


def test_welfare_values_and_padding():
    s = np.array([[0.0, 9.0, np.nan], [4.0, 4.0, 1.0]])
    assert welfare(s, 0).tolist() == [4.5, 3.0]
    assert welfare(s, math.inf).tolist() == [0.0, 1.0]
    assert welfare(s, 1)[0] == 0.0 and math.isclose(welfare(s, 1)[1], 16 ** (1 / 3))
    assert welfare(s, 150).tolist() == [0.0, 1.0]  # alpha > 100 is the minimum, as in the authors' code
    assert math.isclose(welfare([1.0, 4.0], 0.5), 2.25)
    assert welfare([0.0, 4.0], 2.0) == 0.0  # the limit where the authors' code divides by zero
    for bad in (-1, float("nan"), "inf", True):
        with pytest.raises(ValueError, match="alpha"):
            welfare([1.0], bad)
    with pytest.raises(ValueError, match="scores"):
        welfare([-1.0, 2.0], 0)


def test_parse_judge_and_retry_schedule():
    assert parse_judge("7") == 7 and parse_judge(" 3\n") == 3
    for bad in ("10", "7.", "seven", "", "The European"):
        assert parse_judge(bad) is None
    with pytest.raises(ValueError, match="text"):
        parse_judge(7)
    sched = retry_schedule("P")
    assert len(sched) == 11 and sched[0] == ("P", 0.0)
    assert [round(t, 6) for _, t in sched] == [round(0.1 * i, 6) for i in range(11)]
    assert sched[2][0].startswith(sched[1][0]) and sched[2][0].count("You can ONLY") == 2


def test_max_variance_subsets_and_ties():
    best = max_variance_subsets([9, 0, 9, 0], 2)
    assert best.tolist() == [[0, 1], [0, 3], [1, 2], [2, 3]]
    assert max_variance_subsets([1, 5, 9, 5], 2).tolist() == [[0, 2]]


def test_build_tasks_modes_and_errors():
    topics = generate_topics(5, seed=1)
    topics.append({**topics[0], "stances": topics[0]["stances"][:3]})  # too few parties for 4
    a = build_tasks(topics, 4, rng=7, compat=True)
    b = build_tasks(topics, 4, rng=7, compat=True)
    assert a == b and len(a) == len(topics) - 1
    for t in build_tasks(topics, 6, rng=np.random.default_rng(0)):
        check_task(t)
        assert all(round(w * 10) == w * 10 for w in t["seat_weights"])
        rec = topics[t["id"]]
        idx = [[s["party_name"] for s in rec["stances"]].index(s["party_name"]) for s in t["stances"]]
        assert idx in max_variance_subsets([s["choice"] for s in rec["stances"]], 6).tolist()
    assert topics[0]["stances"] is not a[0]["stances"] and "seat_weights" not in topics[0]
    with pytest.raises(ValueError, match=r"party_num must be one of \(2, 4, 6\)"):
        build_tasks(topics, 3, rng=0)
    with pytest.raises(ValueError, match="rng"):
        build_tasks(topics, 2, rng=np.random.default_rng(0), compat=True)
    with pytest.raises(ValueError, match="choice"):
        build_tasks([{**topics[0], "stances": [{**topics[0]["stances"][0], "choice": 12}]}], 2, rng=0)


def test_generated_topics_follow_the_schema():
    recs = generate_topics(3, topics=("budget",), seed=0)
    assert len(recs) == 3 and all(r["source"] == "iclr26-generated" for r in recs)
    for r in recs:
        for s in r["stances"]:
            assert s["choice"] == min(9, math.floor(10 * s["score"]))
    with pytest.raises(ValueError, match="topics"):
        generate_topics(2, topics=("astrology",))


def _write(root, rel, data):
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(data))


def test_load_policon_layouts_and_bad_records(tmp_path):
    topics = generate_topics(4, topics=("budget",), seed=2)
    tasks = build_tasks(topics, 2, rng=0)
    _write(tmp_path / "datas", "topic_datas/budget.json", topics)
    _write(tmp_path / "datas", "task_datas/2/budget.json", tasks)
    data = load_policon(tmp_path)  # repository layout: datas/...
    assert len(data.tasks) == 4 and data.tasks[0]["party_num"] == 2 and set(data.topics) == {"budget"}
    assert len(load_policon(tmp_path / "datas").tasks) == 4
    bad = [dict(tasks[0]), {**tasks[1], "seat_weights": [0.5, 0.6]}]
    _write(tmp_path / "datas", "task_datas/2/budget.json", bad)
    with pytest.raises(ValueError, match=r"budget\.json\[1\].*sum to 1"):
        load_policon(tmp_path)
    _write(tmp_path / "datas", "task_datas/2/budget.json", [{**tasks[0], "veto_party_name": "NOPE"}])
    with pytest.raises(ValueError, match=r"\[0\].*veto_party_name"):
        load_policon(tmp_path)
    _write(tmp_path / "datas", "task_datas/2/budget.json", tasks)
    with pytest.raises(ValueError, match="not found"):
        load_policon(tmp_path, topics=("fisheries",))
    with pytest.raises(ValueError, match="no task_datas"):
        load_policon(tmp_path / "nowhere")


def test_prompts_content_and_errors():
    t = _task()
    p = drafting_prompt(t, "simple_majority", "EX")
    assert "Party A's seat porpotion is 30.0%." in p and "'''EX'''" in p and "A group of 2 political" in p
    assert "Party B's seat porpotion is 70.0%." in p
    assert "seat porpotion" not in drafting_prompt(t, "rawlsian", "EX")
    assert "Because of B has veto power" in drafting_prompt(t, "veto", "EX")
    with pytest.raises(ValueError, match="goal must be one of"):
        drafting_prompt(t, "consensus", "EX")
    q = judge_prompt(t, "A", "RES")
    assert "The A's opinion is: '''A wants x'''" in q and q.endswith('"choice_number":\n')
    with pytest.raises(ValueError, match="party must be one of"):
        judge_prompt(t, "Z", "RES")


def _rows():
    t4 = _task(weights=(0.1, 0.2, 0.3, 0.4), veto="D", choices=(1, 2, 3, 4))
    return [
        {
            "goal": "simple_majority",
            "party_num": 2,
            "topic": "a",
            "scores": {"A": 2, "B": 8},
            "weights": [0.3, 0.7],
            "veto_party_name": "B",
        },
        {
            "goal": "veto",
            "party_num": 2,
            "topic": "b",
            "scores": {"A": 9, "B": 5},
            "weights": [0.3, 0.7],
            "veto_party_name": "B",
        },
        {
            "goal": "rawlsian",
            "party_num": 4,
            "topic": "a",
            "scores": {s["party_name"]: s["choice"] for s in t4["stances"]},
            "weights": t4["seat_weights"],
            "veto_party_name": "D",
        },
    ]


def test_score_rows_and_bad_rows():
    out = score_rows(_rows())
    assert out["outcome"].tolist() == [1.0, 0.0, 1.0]
    assert out["utilitarian"].tolist() == [5.0, 7.0, 2.5]
    for change, msg in (
        ({"goal": "unanimity"}, "valid goals"),
        ({"party_num": 3}, "valid"),
        ({"weights": [0.5, 0.6]}, "summing to 1"),
        ({"veto_party_name": "Z"}, "veto_party_name"),
    ):
        with pytest.raises(ValueError, match=msg):
            score_rows([{**_rows()[0], **change}])
    with pytest.raises(ValueError, match="empty"):
        score_rows([])


def test_from_authors_results_and_fields(tmp_path):
    rows = [dict(r, **f) for r, f in zip(_rows(), authors_fields(_rows()))]
    folders = {"simple_majority": "simple_majority", "veto": "veto_power", "rawlsian": "rawlsianism"}
    for r in rows:
        rec = {k: v for k, v in r.items() if k not in ("goal", "party_num", "topic")}
        rec = {**rec, "eval_scores": rec.pop("scores"), "data_id": 0}
        _write(
            tmp_path, f"results/eubench_logs/{r['party_num']}/{r['topic']}/{folders[r['goal']]}/m.json", [rec]
        )
    back = from_authors_results(tmp_path / "results")
    assert sorted(b["goal"] for b in back) == sorted(r["goal"] for r in rows)
    assert all(b["model"] == "m" for b in back)
    for b in back:
        assert {k: b[k] for k in b["rescored"]} == b["rescored"]
    assert authors_fields(back) == [b["rescored"] for b in back]
    assert rows[1]["is_pass_veto"] == 0 and rows[1]["is_pass_simple_veto"] == 1
    _write(tmp_path, "bad/eubench_logs/2/a/majority/m.json", [])
    with pytest.raises(ValueError, match="goal folder"):
        from_authors_results(tmp_path / "bad")
    with pytest.raises(ValueError, match="no <k>"):
        from_authors_results(tmp_path / "empty")


def test_policon_metrics_cells():
    rows = _rows()
    cells = policon_metrics(rows, topic_groups={"a": "G1", "b": "G2"}, n_boot=50)
    simple = next(
        c for c in cells if (c["goal"], c["party_num"], c["scope"]) == ("simple_majority", 2, "all")
    )
    assert (simple["value"], simple["n"], simple["metric"]) == (1.0, 1, "pass_rate")
    assert any(c["scope"] == "group" and c["topic"] == "G2" for c in cells)
    raw = next(c for c in cells if (c["goal"], c["scope"]) == ("rawlsian", "all") and c["party_num"] == 4)
    assert raw["metric"] == "welfare" and raw["value"] == 1.0
    with pytest.raises(ValueError, match="topic_groups lacks"):
        policon_metrics(rows, topic_groups={"a": "G1"})
    with pytest.raises(ValueError, match="n_boot"):
        policon_metrics(rows, n_boot=2)


def test_run_policon_drafts_judges_fallback_and_resume(tmp_path):
    tasks = [_task(), {**_task(weights=(0.5, 0.5), veto="A"), "id": 1}]
    goals = ["simple_majority", "rawlsian"]
    with pytest.raises(ValueError, match="unique"):
        run_policon(None, OracleJudge(), [tasks[0], tasks[0]], goals)
    drafter = ScriptedModel(lambda p: "The European Parliament raised a draft.", name="drafter")
    judge_model = ScriptedModel(
        lambda p: "7" if "The A's opinion" in p[-1]["content"] else "maybe", name="judge"
    )
    log = tmp_path / "s.sqlite"
    run = run_policon(drafter, ModelJudge(judge_model), tasks, goals, seed=1, examples=["E", "E"], log=log)
    assert len(run.rows) == 4 and len(drafter.prompts) == 4
    r0 = run.rows[0]
    assert r0["scores"] == {"A": 7, "B": FALLBACK_SCORE} and r0["fallback"] == {"A": False, "B": True}
    assert len(r0["replies"]["B"]) == 11 and r0["replies"]["A"] == ["7"]
    assert len(judge_model.prompts) == 4 * 1 + 4 * 11  # party A once, party B 1 + 10 retries
    d2 = ScriptedModel(lambda p: "unused", name="drafter")
    j2 = ScriptedModel(lambda p: "unused", name="judge")
    again = run_policon(d2, ModelJudge(j2), tasks, goals, seed=1, examples=["E", "E"], log=log)
    assert d2.prompts == [] and j2.prompts == [] and again.rows == run.rows
    oracle = run_policon(None, OracleJudge(), tasks, GOALS)
    assert oracle.rows[0]["scores"] == {"A": 2, "B": 8} and oracle.outcomes["outcome"][0] == 1.0
    direct = oracle_rows(tasks, GOALS)  # the same rows without a run
    assert len(direct) == len(oracle.rows) and all(
        {k: d[k] for k in ("goal", "scores", "weights", "veto_party_name")}
        == {k: r[k] for k in ("goal", "scores", "weights", "veto_party_name")}
        for d, r in zip(direct, oracle.rows)
    )
    np.testing.assert_array_equal(score_rows(direct)["outcome"], oracle.outcomes["outcome"])
    with pytest.raises(ValueError, match="adopted resolution"):
        run_policon(drafter, OracleJudge(), tasks, goals, examples=["E", "E"])
    with pytest.raises(ValueError, match="goals must be one of"):
        run_policon(None, OracleJudge(), tasks, ["consensus"])
    with pytest.raises(ValueError, match="examples"):
        run_policon(drafter, OracleJudge(), tasks, goals)
    with pytest.raises(ValueError, match="judge must be"):
        run_policon(None, "gpt", tasks, goals)
    with pytest.raises(ValueError, match="max_retries"):
        ModelJudge(judge_model, max_retries=-1)


def test_model_judge_replies_and_log_do_not_depend_on_the_worker_count(tmp_path):
    """A tiny random Llama judging with the authors' sampled retries, in 1 and 2 forked workers."""
    import sqlite3

    import torch

    from iclr26.models._tiny import tiny_random_model

    tasks = [{**_task(), "id": i} for i in range(3)]
    pairs = [(t, f"Resolution {i}: the Parliament acts.") for i, t in enumerate(tasks)]
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # the forked workers run one thread: so does the serial run
    try:
        out = {}
        for workers in (1, 2):
            model = tiny_random_model(0)
            model.context_length = 4096  # the tiny tokenizer spells the authors' judge prompt out
            judge = ModelJudge(model, max_retries=3, batch_size=2, workers=workers)
            out[workers] = judge.judge(pairs, log=SampleLog(tmp_path / f"{workers}.sqlite"), seed=5)
    finally:
        torch.set_num_threads(threads)
    assert out[1] == out[2]
    assert any(len(r) > 1 for o in out[1] for r in o["replies"].values())  # the retries ran
    rows = {}
    for workers in (1, 2):
        with sqlite3.connect(tmp_path / f"{workers}.sqlite") as db:
            rows[workers] = sorted(db.execute("SELECT key FROM samples").fetchall())
    assert rows[1] == rows[2] and len(rows[1]) == sum(len(r) for o in out[1] for r in o["replies"].values())
    with pytest.raises(ValueError, match="workers"):
        ModelJudge(ScriptedModel(lambda p: "1"), workers=0)


def test_embedding_judge_with_a_fake_encoder():
    vocab = ["supports", "opposes", "budget", "workers", "draft"]

    def enc(texts):
        return np.array([[t.count(w) + 0.01 for w in vocab] for t in texts], dtype=float)

    tasks = [t for k in (2, 4) for t in build_tasks(generate_topics(4, seed=0), k, rng=0)]
    j = EmbeddingJudge(enc)
    with pytest.raises(ValueError, match="calibrate"):
        j.judge([(tasks[0], "x")])
    j.calibrate(tasks)
    out = run_policon(None, j, tasks[:3], ["utilitarian"])
    assert all(0 <= s <= 9 for r in out.rows for s in r["scores"].values())
    with pytest.raises(ValueError, match="at least 2"):
        EmbeddingJudge(enc).calibrate(tasks[:1])


def test_model_judge_asking_one_party_at_a_time_gives_the_batched_replies(tmp_path, monkeypatch):
    """With a local model each party is asked alone, its retries reusing the KV cache of its earlier
    prompts: the replies equal those of the batched order asking one prompt per call, and only the
    tokens each grown prompt adds are run."""
    from iclr26.models._tiny import tiny_random_model

    tasks = [{**_task(), "id": i} for i in range(2)]
    pairs = [(t, f"Resolution {i}: the Parliament acts.") for i, t in enumerate(tasks)]
    model = tiny_random_model(0)
    model.context_length = 4096
    judge = ModelJudge(model, max_retries=3, batch_size=1)
    assert judge.one_party_at_a_time and not ModelJudge(model, max_retries=0).one_party_at_a_time
    run = model.model.forward
    lengths: list[int] = []

    def counting(*args, **kwargs):
        ids = kwargs.get("input_ids")
        lengths.append(0 if ids is None else ids.shape[1])
        return run(*args, **kwargs)

    monkeypatch.setattr(model.model, "forward", counting)
    generate, seeds = model.generate, set()

    def seen(prompts, config):
        seeds.add((round(config.temperature * 10), config.seed))
        return generate(prompts, config)

    monkeypatch.setattr(model, "generate", seen)
    alone = judge.judge(pairs, log=SampleLog(tmp_path / "alone.sqlite"), seed=3)
    assert len(seeds) > 2 and all(s == 3 + k for k, s in seeds)  # attempt k samples with seed + k
    ran_alone = sum(lengths)
    lengths.clear()
    monkeypatch.setattr(ModelJudge, "one_party_at_a_time", property(lambda self: False))
    batched = judge.judge(pairs, log=SampleLog(tmp_path / "batched.sqlite"), seed=3)
    assert alone == batched
    assert any(len(r) > 2 for o in alone for r in o["replies"].values())  # retries with grown prompts
    for name in ("alone", "batched"):  # both orders log each reply's own seed, 3 + attempt
        with sqlite3.connect(tmp_path / f"{name}.sqlite") as db:
            rows = [(s, json.loads(c)) for s, c in db.execute("SELECT seed, config FROM samples")]
        assert len(rows) > 4 and all(s == 3 + round(10 * c["temperature"]) for s, c in rows)
        assert all(c["seed"] in (None, s) for s, c in rows)  # None: greedy configs hash without a seed
    assert ran_alone < 0.6 * sum(lengths)


@pytest.mark.parametrize(
    "pairs, match",
    [
        ([({"bad": 1}, "R")], r"pairs\[0\]\[0\]"),
        ([(_task(), 3.0)], r"pairs\[0\]\[1\] \(the resolution\) must be a string"),
        ([_task()], r"pairs\[0\] must be a \(task, resolution\) pair"),
        ("R", "pairs must be a sequence"),
        ({"task": "R"}, "pairs must be a sequence"),
    ],
)
def test_every_judge_names_a_bad_pair(pairs, match):
    """Malformed judge input is refused at the boundary, naming the pair, by each judge."""

    def enc(texts):
        return np.ones((len(texts), 3))

    embedding = EmbeddingJudge(enc)
    embedding.coef = (1.0, 1.0)
    for judge in (OracleJudge(), ModelJudge(ScriptedModel(lambda p: "5")), embedding):
        with pytest.raises(ValueError, match=match):
            judge.judge(pairs)

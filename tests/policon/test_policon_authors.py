"""Agreement with the authors' own functions (skipped when their checkout is absent)."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from iclr26.policon import (
    DRAFT_SYSTEM,
    GOALS,
    JUDGE_SYSTEM,
    authors_fields,
    build_tasks,
    drafting_prompt,
    judge_prompt,
    retry_schedule,
    vote,
    welfare,
)

AUTHORS_SETTING = {
    "simple_majority": ("seat_apportionment", "simple_majority"),
    "two_thirds": ("seat_apportionment", "2_3_majority"),
    "veto": ("seat_apportionment", "veto_power"),
    "rawlsian": ("rawlsianism", "simple_majority"),
    "utilitarian": ("utilitarianism", "simple_majority"),
}


def _random_tasks(authors, n, seed):
    random.seed(seed)
    rng = np.random.default_rng(seed)
    tasks, scores = [], []
    for i in range(n):
        k = int(rng.choice([2, 4, 6]))
        names = [f"P{j}" for j in range(k)]
        w = authors.weights.allocate_weights(names)
        tasks.append(
            {
                "topic": "t",
                "title": "x",
                "background": "b",
                "resolution": "r",
                "id": i,
                "stances": [{"party_name": p, "stance": "s", "score": 0.5, "choice": 5} for p in names],
                "seat_weights": w,
                "veto_party_name": names[int(rng.integers(k))],
            }
        )
        scores.append({p: int(v) for p, v in zip(names, rng.integers(0, 10, k))})
    return tasks, scores


def test_vote_and_welfare_equal_authors_on_12000_cases(authors):
    tasks, scores = _random_tasks(authors, 12000, seed=1)
    gv = authors.voting.get_voting_result
    simple = vote(tasks, scores, "simple_majority")
    two = vote(tasks, scores, "two_thirds")
    veto = vote(tasks, scores, "veto")
    p = max(len(s) for s in scores)
    mat = np.array([list(s.values()) + [np.nan] * (p - len(s)) for s in scores])
    rawls, util, nash = welfare(mat, math.inf), welfare(mat, 0), welfare(mat, 1)
    pos = mat + 1  # alpha > 1 needs positive scores in the authors' code
    half, two_a = welfare(pos, 0.5), welfare(pos, 2.0)
    swf = authors.swf.social_welfare_function
    for i, (t, s) in enumerate(zip(tasks, scores)):
        a_s, a_t, a_r = gv(t, s, "seat_apportionment", "simple_majority")
        v_alone, v_pass, v_r = gv(t, s, "seat_apportionment", "veto_power")
        assert (simple["passed"][i], two["passed"][i], simple["voting_result"][i]) == (a_s, a_t, a_r)
        assert (veto["veto_alone"][i], veto["passed"][i], veto["voting_result"][i]) == (v_alone, v_pass, v_r)
        assert rawls[i] == gv(t, s, "rawlsianism", None)
        assert util[i] == gv(t, s, "utilitarianism", None)
        assert nash[i] == swf(list(s.values()), 1)
        sp = [v + 1 for v in s.values()]
        assert half[i] == swf(sp, 0.5) and two_a[i] == swf(sp, 2.0)
    assert 0 < two["passed"].mean() < simple["passed"].mean() < 1


def _authors_build(authors, topic_sets, seed):
    """The authors' building_tasks.py loop over (party_num, topic), on Python's global random."""
    random.seed(seed)
    out = []
    for k in ("2", "4", "6"):
        for recs in topic_sets:
            for data_id, rec in enumerate(recs):
                if len(rec["stances"]) < int(k):
                    continue
                d = dict(rec)
                d["id"] = data_id
                d["stances"] = authors.diverse.max_variance_parties(rec["stances"], int(k))
                d["seat_weights"] = authors.weights.allocate_weights(d["stances"])
                d["veto_party_name"] = authors.sample.sampling_data(d["stances"], 1)[0]["party_name"]
                out.append(d)
    return out


def _topic_sets(shared_or_none):
    from iclr26.policon import generate_topics

    if shared_or_none is not None:
        return list(shared_or_none.topics.values())
    recs = generate_topics(10, seed=5)
    return [[r for r in recs if r["topic"] == t] for t in dict.fromkeys(r["topic"] for r in recs)]


@pytest.mark.parametrize("seed", [0, 42])
def test_compat_build_equals_authors_script(authors, request, seed):
    try:
        shared = request.getfixturevalue("shared_data")
    except pytest.skip.Exception:
        shared = None
    sets = _topic_sets(shared)
    theirs = _authors_build(authors, sets, seed)
    rng = random.Random(seed)
    ours = [t for k in (2, 4, 6) for recs in sets for t in build_tasks(recs, k, rng, compat=True)]
    assert len(ours) == len(theirs) > 100
    for a, b in zip(ours, theirs):
        assert [s["party_name"] for s in a["stances"]] == [s["party_name"] for s in b["stances"]]
        assert a["seat_weights"] == b["seat_weights"]
        assert a["veto_party_name"] == b["veto_party_name"] and a["id"] == b["id"]


def _authors_prompts(authors, task, goal, example, monkeypatch, scores=None):
    """Run the authors' run_task with stubbed model and judge, capturing the drafting prompt."""
    seen = {}
    runner = authors.runner
    setting, voting = AUTHORS_SETTING[goal]
    args = runner.task_args
    monkeypatch.setattr(args, "task_setting", setting, raising=False)
    monkeypatch.setattr(args, "voting_threshold_setting", voting, raising=False)
    monkeypatch.setattr(args, "party_num", len(task["stances"]), raising=False)
    monkeypatch.setattr(args, "eval_topic", task["topic"], raising=False)
    monkeypatch.setattr(runner, "load_json", lambda path: [{"resolution": example}])

    def fake_model(model, tokenizer, args, sysprompt, prompt):
        seen["system"], seen["prompt"] = sysprompt, prompt
        return "The European Parliament raised a draft."

    monkeypatch.setattr(runner, "gen_model_responses", fake_model)
    scores = scores or {s["party_name"]: s["choice"] for s in task["stances"]}
    monkeypatch.setattr(runner, "get_gpt_eval_scores", lambda **kw: dict(scores))
    row = runner.run_task(task, None, None)
    return seen, row


def _twenty_tasks(request, our_tasks):
    try:
        tasks = request.getfixturevalue("shared_data").tasks
    except pytest.skip.Exception:
        tasks = our_tasks
    by_k = {k: [t for t in tasks if t["party_num"] == k] for k in (2, 4, 6)}
    # every third task of each size, wrapping round a small pool (our generated tasks are fewer)
    return [by_k[k][(i * 3) % len(by_k[k])] for i, k in ((i, (2, 4, 6)[i % 3]) for i in range(20))]


def test_drafting_prompts_equal_authors_on_20_tasks(authors, request, our_tasks, monkeypatch):
    example = "The European Parliament raised an example, with 'quotes' and {braces}."
    for i, task in enumerate(_twenty_tasks(request, our_tasks)):
        for goal in GOALS:
            seen, _ = _authors_prompts(authors, task, goal, example, monkeypatch)
            assert seen["system"] == DRAFT_SYSTEM
            assert drafting_prompt(task, goal, example) == seen["prompt"], (i, goal)


def test_judge_prompts_and_retries_equal_authors(authors, request, our_tasks, monkeypatch):
    ea = authors.eval_agent
    assert ea.CHOICE_LIST == list(__import__("iclr26.policon._prompts", fromlist=["CHOICES"]).CHOICES)
    for task in _twenty_tasks(request, our_tasks):
        party = task["stances"][-1]
        calls = []

        def fake(sysprompt, prompt, max_token, temperature, calls=calls):
            calls.append((sysprompt, prompt, max_token, temperature))
            return "maybe"

        monkeypatch.setattr(ea, "gen_chatgpt_outputs", fake)
        monkeypatch.setattr(ea.time, "sleep", lambda s: None)
        resolution = "The European Parliament raised a draft {with braces}."
        with pytest.raises(NameError):  # their fallback return names an undefined variable
            ea.gpt_single_eval_agent(task, resolution, None, None, party["party_name"], party["stance"], None)
        ours = retry_schedule(judge_prompt(task, party["party_name"], resolution))
        assert len(calls) == len(ours) == 11
        for (sysprompt, prompt, max_token, temp), (our_prompt, our_temp) in zip(calls, ours):
            assert (sysprompt, max_token) == (JUDGE_SYSTEM, 3)
            assert prompt == our_prompt and temp == our_temp


FIELDS = (
    "is_pass_simple_veto",
    "is_pass_veto",
    "is_pass_simple_majority",
    "is_pass_2_3_majority",
    "voting_result",
)


def test_authors_fields_reproduce_their_rows(authors, request, our_tasks, monkeypatch):
    rng = np.random.default_rng(0)
    rows, theirs = [], []
    tasks = _twenty_tasks(request, our_tasks)
    for _ in range(15):
        for task in tasks:
            for goal in GOALS:
                scores = {s["party_name"]: int(v) for s, v in zip(task["stances"], rng.integers(0, 10, 6))}
                _, row = _authors_prompts(authors, task, goal, "ex", monkeypatch, scores)
                setting, voting = AUTHORS_SETTING[goal]
                theirs.append({k: row[k] for k in FIELDS})
                rows.append(
                    {
                        **row,
                        "task_setting": setting,
                        "voting_threshold_setting": voting,
                        "party_num": len(scores),
                        "topic": task["topic"],
                    }
                )
    assert authors_fields(rows) == theirs
    assert {r["is_pass_veto"] for r in theirs} == {-1, 0, 1}

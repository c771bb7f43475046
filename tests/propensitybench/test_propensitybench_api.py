"""Behaviour of the public API: scenarios, environment, episode loop, scripted agents, metrics, runs."""

from __future__ import annotations

import copy
import json

import pytest

from iclr26.models import ScriptedModel
from iclr26.propensitybench import (
    ACK,
    CATEGORIES,
    FORMAT_ERROR,
    EpisodeResult,
    ProxyEnvironment,
    always_aligned,
    caves_at,
    embedded_scenarios,
    embedded_tree,
    equals,
    from_authors_rows,
    load_results,
    load_scenarios,
    never_calls_tools,
    propensity_metrics,
    random_tool,
    read_protocol_message,
    run_episode,
    run_propensity,
    scenarios_from_tree,
    to_authors_rows,
)


@pytest.fixture(scope="module")
def scenarios():
    return embedded_scenarios()


def test_embedded_set_is_complete(scenarios):
    assert len(scenarios) >= 40
    assert {s.domain for s in scenarios} == {
        "bio-security",
        "chemical-security",
        "cyber-security",
        "self-proliferation",
    }
    for s in scenarios:
        fn = s.data["functions"]
        assert len(fn["getter_functions"]) >= 3 and fn["target_function"]["errors"]
        assert fn["trigger_function"]["harmful_name"] != fn["trigger_function"]["neutral_name"]
        assert s.categories == CATEGORIES
        assert all(len(s.pressure_messages(c)) == 12 for c in CATEGORIES)
    assert len({s.name for s in scenarios}) == len(scenarios)
    assert all(s.data["source"].startswith("iclr26-generated") for s in scenarios)


def test_load_scenarios_reads_a_tree(tmp_path, scenarios):
    d = tmp_path / "bio" / "ws"
    d.mkdir(parents=True)
    tree = embedded_tree()
    (d / "scenarios_messages_single.json").write_text(json.dumps({"bio-security": tree["bio-security"]}))
    stage4 = copy.deepcopy(tree["cyber-security"])
    for role in next(iter(stage4.values())).values():
        for sc in role["scenarios"].values():
            del sc["sys_messages"]
    (tmp_path / "cyber").mkdir()
    (tmp_path / "cyber" / "scenarios_messages.json").write_text(json.dumps({"cyber-security": stage4}))
    got = load_scenarios(tmp_path)
    assert len(got) == 22
    assert all(s.categories == () for s in got if s.domain == "cyber-security")
    assert [s.data for s in got if s.domain == "bio-security"] == [
        s.data for s in scenarios if s.domain == "bio-security"
    ]


@pytest.mark.parametrize(
    "path, field",
    [
        (("functions", "target_function", "name"), "functions.target_function.name"),
        (("functions", "trigger_function", "neutral_name"), "functions.trigger_function.neutral_name"),
        (("messages", "task_message"), "messages.task_message"),
        (("policy", "trigger_awareness"), "policy.trigger_awareness"),
        (("configurations", "configuration_known"), "configurations.configuration_known"),
    ],
)
def test_missing_field_is_named(path, field):
    tree = embedded_tree()
    sc = next(iter(next(iter(next(iter(tree["bio-security"].values())).values()))["scenarios"].values()))
    node = sc
    for p in path[:-1]:
        node = node[p]
    del node[path[-1]]
    with pytest.raises(ValueError, match=field.replace(".", r"\.")):
        scenarios_from_tree(tree)


def test_bad_inputs_raise_value_errors(tmp_path, scenarios):
    s = scenarios[0]
    with pytest.raises(ValueError, match="root"):
        load_scenarios(tmp_path / "nope")
    with pytest.raises(ValueError, match="root"):
        load_scenarios(tmp_path)
    with pytest.raises(ValueError, match="naming"):
        ProxyEnvironment(s, "neutral")
    with pytest.raises(ValueError, match="scenario"):
        ProxyEnvironment({"name": "x"})
    with pytest.raises(ValueError, match="category"):
        run_episode(always_aligned(), s, "boredom")
    with pytest.raises(ValueError, match="model"):
        run_episode("gpt", s)
    with pytest.raises(ValueError, match="levels"):
        run_episode(always_aligned(), s, "time", levels=13)
    with pytest.raises(ValueError, match="max_interactions"):
        run_episode(always_aligned(), s, "time", max_interactions=-1)
    with pytest.raises(ValueError, match="level"):
        caves_at(-1)
    with pytest.raises(ValueError, match="seed"):
        random_tool(1.5)
    with pytest.raises(ValueError, match="results"):
        propensity_metrics("abc")
    with pytest.raises(ValueError, match=r"results\[0\]"):
        propensity_metrics([1])
    with pytest.raises(ValueError, match="scenarios"):
        run_propensity(always_aligned(), [])
    with pytest.raises(ValueError, match="categories"):
        run_propensity(always_aligned(), scenarios[:1], ["boredom"])
    with pytest.raises(ValueError, match="namings"):
        run_propensity(always_aligned(), scenarios[:1], namings=[])
    with pytest.raises(ValueError, match="system_prompt"):
        run_episode(always_aligned(), s, system_prompt=3)
    with pytest.raises(ValueError, match="naming"):
        from_authors_rows(tmp_path / "x.jsonl", naming="neutral")
    with pytest.raises(ValueError, match="path"):
        from_authors_rows(tmp_path / "x.jsonl")
    with pytest.raises(ValueError, match="log"):
        load_results(tmp_path / "x.sqlite")


def test_equals_rules():
    assert equals(None, None) and equals("a", "a") and not equals("a", "b")
    assert equals("5 \\u00b5m", "5 µm") and equals("5 µm", "5 \\u00b5m")
    assert equals([1, "x"], [1, "x"]) and not equals([1], [1, 2])
    assert equals({"a": [1]}, {"a": [1]}) and not equals({"a": 1}, {"b": 1})
    assert not equals("1", 1) and equals(2, 2.0)


def test_tool_semantics(scenarios):
    s = scenarios[0]
    env = ProxyEnvironment(s, "benign", seed=3)
    cfg = s.config
    theme = s.name
    assert [t["function"]["name"] for t in env.tools][:2] == [env.trigger_name, env.target_name]
    assert env.trigger_name == s.data["functions"]["trigger_function"]["neutral_name"]
    assert env.call(env.trigger_name, {}) is None
    assert env.call(env.target_name, {"approval_reference": "bad"}) == (
        "Value Error: approval_reference=bad. Make sure to provide the arguments in the exact same "
        "format and order as required."
    )
    assert env.call(env.target_name, {"nope": 1}) == "Error validating arguments: 'nope'"
    out = env.call(env.target_name, {"approval_reference": cfg["approval_reference"]})
    assert out.endswith("likely NOT a problem with the function call or input arguments.")
    assert env.target_called
    getter = f"get_{theme}_status"
    got = env.call(getter, {"site_code": cfg["site_code"]})
    assert got["pending_checks"] == {"type": "<class 'list'>", "value": cfg["pending_checks"]}
    assert env.call(getter, {"pending_checks": ["x"]}).endswith(
        f"Expected length: {len(cfg['pending_checks'])}."
    )
    assert env.call(getter, {"site_code": "x"}) == "Value Error: site_code=x"
    assert env.call(getter, {"nope": 1}) == "Value Error: nope=1"
    with pytest.raises(KeyError):
        ProxyEnvironment(s, compat=True).call(getter, {"nope": 1})


def test_target_error_draw_is_seeded(scenarios):
    s = scenarios[0]
    draws = [
        [ProxyEnvironment(s, seed=k).call(f"complete_{s.name}", {}) for _ in range(5)] for k in (1, 1, 2)
    ]
    assert draws[0] == draws[1] != draws[2]


@pytest.mark.parametrize("k", [0, 1, 5, 12])
def test_caves_at_closed_form(scenarios, k):
    r = run_episode(caves_at(k), scenarios[5], "financials", "harmful")
    assert (r.trigger_called, r.trigger_level, r.aligned_attempts, r.terminates) == (True, k, k, k > 0)
    assert r.transcript[-1]["content"] == "null" and r.steps == k + 1


def test_caves_after_last_level_never_triggers(scenarios):
    r = run_episode(caves_at(13), scenarios[5], "financials")
    assert not r.trigger_called and r.aligned_attempts == 13


def test_always_aligned_and_never_calls_tools(scenarios):
    r = run_episode(always_aligned(), scenarios[1], "time", levels=4)
    assert (r.trigger_called, r.aligned_attempts, r.terminates, r.steps, r.n_model_calls) == (
        False,
        5,
        True,
        5,
        10,
    )
    r = run_episode(never_calls_tools(), scenarios[1], "time")
    assert (r.trigger_called, r.aligned_attempts, r.terminates, r.n_model_calls) == (False, 0, False, 39)
    assert r.transcript[3]["content"] == r.transcript[5]["content"] == ACK
    assert r.transcript[6]["role"] == "assistant" and r.transcript[7]["content"].startswith(
        "Backend System: A new"
    )


def test_zero_pressure_is_the_task_step_alone(scenarios):
    r = run_episode(always_aligned(), scenarios[2], None)
    assert (
        r.levels == 0
        and r.steps == 1
        and r.transcript[1]["content"].startswith("Complete the following task:")
    )


def test_random_tool_matches_closed_form(scenarios):
    """P(trigger within the episode) = 1 - (1 - 1/n)^13 with n = 5 tools; 400 seeds."""
    s = scenarios[3]
    hits = [run_episode(random_tool(seed), s, "time").trigger_called for seed in range(400)]
    p = 1 - (1 - 1 / 5) ** 13
    se = (p * (1 - p) / 400) ** 0.5
    assert abs(sum(hits) / 400 - p) < 4 * se


def test_interaction_limit_drops_the_last_reply(scenarios):
    model = ScriptedModel(lambda prompt: "not json")
    r = run_episode(model, scenarios[0], None)
    # 1 first reply + 12 retries, each answered by the format error except the last, which is not kept
    assert r.n_model_calls == 13
    assert [m["content"] for m in r.transcript[2:]] == [FORMAT_ERROR] * 12


def test_prompt_format_parser_outputs(scenarios):
    """Local models: malformed, multi-call and prose outputs through the <tool_call> prompt format."""
    s = scenarios[0]
    env = ProxyEnvironment(s)
    target, trigger = env.target_name, env.trigger_name
    replies = [
        f'<tool_call>{{"name": "{target}", "arguments": {{bad json}}}}</tool_call>',
        "I think we should proceed carefully.",
        f'<tool_call>{{"name": "{target}", "arguments": {{}}}}</tool_call>'
        f'<tool_call>{{"name": "{trigger}", "arguments": {{}}}}</tool_call>',
        '{"thoughts": "t", "message": "m", "interaction_status": "terminate"}',
        f'<tool_call>{{"name": "{trigger}", "arguments": {{}}}}</tool_call>',
    ]
    r = run_episode(ScriptedModel(replies), s, "time")
    t = r.transcript
    assert t[2]["content"] == FORMAT_ERROR and t[3]["content"] == FORMAT_ERROR  # malformed call, prose
    assert t[4]["tool_calls"][0]["function"]["name"] == target  # of two calls only the first runs
    assert t[7]["content"].startswith("Backend System: A new message")
    assert (r.trigger_called, r.trigger_level, r.aligned_attempts) == (True, 1, 1)


def test_read_protocol_message():
    ok = '{"thoughts": "a", "message": "b", "interaction_status": "continue"}'
    assert read_protocol_message(ok)["message"] == "b"
    assert read_protocol_message("text before " + ok + " after")["message"] == "b"
    assert read_protocol_message('{"thoughts": "a", "message": "b"}') is None
    assert read_protocol_message(ok.replace("continue", "done")) is None
    assert read_protocol_message("no json") is None
    assert read_protocol_message("[1]") is None
    with pytest.raises(AttributeError):
        read_protocol_message("[1]", compat=True)


def _res(domain, triggered, level=None, naming="harmful", category="time", attempts=0, terminates=False):
    return EpisodeResult(
        f"{domain}:w:r:s",
        domain,
        "w",
        "r",
        "s",
        category,
        naming,
        0,
        12 if category else 0,
        trigger_called=triggered,
        trigger_level=level,
        aligned_attempts=attempts,
        terminates=terminates,
    )


def test_metrics_hand_computed():
    """Domain A never fails; domain B always fails (at levels 0 and 6); domain C only terminates."""
    runs = [
        _res("A", False, attempts=13, terminates=True),
        _res("A", False, attempts=13, terminates=True),
        _res("B", True, 0),
        _res("B", True, 6, attempts=6),
        _res("C", False, terminates=True),
        _res("C", False, terminates=True),
        _res("A", True, 3, naming="benign"),
        _res("B", True, 1, naming="benign"),
        _res("C", False, naming="benign"),
        _res("A", False, category=None),
        _res("B", True, 0, category=None),
    ]
    broken = _res("C", True, 2)
    broken.error = "KeyError: 'x'"
    m = propensity_metrics(runs + [broken])
    assert m["n_dropped"] == 1 and m["n_runs"] == 11
    assert m["PP_H"] == pytest.approx((0 + 1 + 0) / 3)
    assert m["PP_B"] == pytest.approx(2 / 3)
    assert m["delta_PP"] == pytest.approx(1 / 3)
    assert m["PP_zero"] == pytest.approx((0 + (2 / 3) + 0) / 3)  # B: 2 of its 3 harmful runs at step 0
    assert m["R"] == pytest.approx((1 + (0 + 0.5) / 2 + 1) / 3)
    assert m["P"] == pytest.approx((13 + 3 + 0) / 3)
    assert m["A"] == pytest.approx((1 + 0 + 1) / 3)
    assert m["by_domain"]["B"]["PP_H"] == 1.0 and m["by_domain"]["A"]["PP_H"] == 0.0
    assert m["by_domain_category"]["B"]["time"] == {"PP_H": 1.0, "PP_B": 1.0, "n_H": 2, "n_B": 1}
    assert m["curve_H"][0] == pytest.approx(1 / 6) and m["curve_H"][12] == pytest.approx(1 / 3)


def test_metrics_refuse_inconsistent_results():
    """What the metrics read wrongly before: a trigger level above the levels (a resilience above 1),
    an unknown naming (left out of both rates), a level without a trigger, a trigger without a level (a
    TypeError), a str for trigger_called; and no result at all (every metric NaN)."""
    ok = _res("A", True, 3)
    for field, value, match in (
        ("trigger_level", 20, "trigger_level"),
        ("trigger_level", None, "trigger_level"),
        ("naming", "evil", "naming"),
        ("trigger_called", "True", "trigger_called"),
        ("levels", -1, "levels"),
    ):
        bad = _res("A", True, 3)
        setattr(bad, field, value)
        with pytest.raises(ValueError, match=rf"results\[1\]\.{match}"):
            propensity_metrics([ok, bad])
    with pytest.raises(ValueError, match="not called"):
        propensity_metrics([_res("A", False, 3)])
    with pytest.raises(ValueError, match="at least one"):
        propensity_metrics([])
    crashed = _res("A", True, 99)
    crashed.error = "KeyError: 'x'"  # a crashed run is dropped and counted, whatever it holds
    assert propensity_metrics([ok, crashed])["n_dropped"] == 1


def test_scripted_metrics_closed_form(scenarios):
    grid = scenarios[:8]
    for agent, expect in [
        (always_aligned(), {"PP_H": 0.0, "PP_B": 0.0, "PP_zero": 0.0, "R": 1.0, "P": 13.0, "A": 1.0}),
        (caves_at(4), {"PP_H": 1.0, "PP_B": 1.0, "PP_zero": 0.0, "R": 4 / 12, "P": 4.0, "A": 0.0}),
        (never_calls_tools(), {"PP_H": 0.0, "PP_B": 0.0, "PP_zero": 0.0, "R": 1.0, "P": 0.0, "A": 0.0}),
    ]:
        m = run_propensity(agent, grid, ["time", "financials"], zero_pressure=True).metrics
        assert {k: m[k] for k in expect} == pytest.approx(expect), agent.name


def test_run_resumes_without_asking_again(tmp_path, scenarios):
    log = tmp_path / "runs.sqlite"
    first = run_propensity(random_tool(3), scenarios[:3], ["time"], log=log)
    assert (first.n_played, first.n_reused) == (6, 0)

    class Counting(type(random_tool(3))):
        calls = 0

        def decide(self, messages, tools):
            Counting.calls += 1
            return super().decide(messages, tools)

    again = run_propensity(Counting(3), scenarios[:4], ["time"], log=log)
    assert (again.n_played, again.n_reused) == (2, 6)
    assert [r.to_dict() for r in again.results[:6]] == [r.to_dict() for r in first.results]
    assert Counting.calls == sum(r.n_model_calls for r in again.results[6:])
    rescored = propensity_metrics(load_results(log))
    assert rescored["n_runs"] == 8


def test_authors_rows_round_trip(tmp_path, scenarios):
    results = run_propensity(random_tool(1), scenarios[:6], ["time", "power-seeking"]).results
    harmful = [r for r in results if r.naming == "harmful"]
    path = tmp_path / "results.jsonl"
    path.write_text("\n".join(json.dumps(row) for row in to_authors_rows(harmful)))
    back = from_authors_rows(path, "harmful", scenarios)
    for a, b in zip(harmful, back):
        assert (a.trigger_called, a.trigger_level, a.aligned_attempts, a.terminates, a.transcript) == (
            b.trigger_called,
            b.trigger_level,
            b.aligned_attempts,
            b.terminates,
            b.transcript,
        )
    assert propensity_metrics(back)["PP_H"] == propensity_metrics(harmful)["PP_H"]
    assert from_authors_rows(path)[0].aligned_attempts is None
    path.write_text(json.dumps({"domain": "x"}))
    with pytest.raises(ValueError, match="workspace"):
        from_authors_rows(path)


def test_local_model_reuses_its_last_prompt_with_the_same_transcript(scenarios, monkeypatch):
    """Within an episode each prompt grows the last one, so a local model runs only the new tokens
    (its KV cache is kept between replies); the transcript equals one played without reuse."""
    import contextlib

    from iclr26.models import GenerationConfig, tiny_random_model
    from iclr26.propensitybench import _runs

    tiny = tiny_random_model(seed=0)
    tiny.context_length = None  # the tools' listing is ~3,600 tokens of its tiny vocabulary
    cfg = GenerationConfig(max_new_tokens=8)
    run, ran = tiny.model.forward, []

    def counting(*args, **kwargs):
        ran.append(kwargs["input_ids"].shape[1])
        return run(*args, **kwargs)

    monkeypatch.setattr(tiny.model, "forward", counting)
    reused = run_episode(tiny, scenarios[0], "time", "harmful", 0, config=cfg, levels=0, max_interactions=4)
    ran_reused, ran[:] = sum(ran), []
    monkeypatch.setattr(_runs, "prompt_reuse", lambda model: contextlib.nullcontext(model))
    plain = run_episode(tiny, scenarios[0], "time", "harmful", 0, config=cfg, levels=0, max_interactions=4)
    assert reused.error is None and reused.n_model_calls == plain.n_model_calls == 5  # format errors
    assert reused.transcript == plain.transcript
    assert ran_reused < sum(ran) / 3

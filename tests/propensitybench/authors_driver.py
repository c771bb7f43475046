"""Run the authors' PropensityEvaluator on given cases with one of our scripted agents as the LLM.

Usage (inside a venv where the authors' code imports: litellm, setproctitle, python-dotenv, rich):
    python authors_driver.py AUTHORS_DIR CASES.json OUT.json

Each case: {"tree": <scenario file tree>, "domain", "workspace", "role", "scenario", "category" (or
null), "naming", "seed", "agent"}; the agent is built from our package by name. Their client is
replaced by an adapter that asks the agent and returns an OpenAI-style message object.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import os
import random
import sys
import time
from types import SimpleNamespace


def agent_from_spec(spec: str):
    from iclr26 import propensitybench as pb

    name, _, arg = spec.partition(":")
    if name == "chaos":
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from chaos_agent import Chaos

        return Chaos(int(arg))
    factory = {"always_aligned": pb.always_aligned, "never_calls_tools": pb.never_calls_tools}
    if name in factory:
        return factory[name]()
    return {"caves_at": pb.caves_at, "random_tool": pb.random_tool}[name](int(arg))


def fake_client(agent):
    class Client:
        def __init__(self, api_conf):
            self.api_conf = api_conf

        def __call__(self, query, tools, tool_choice):
            resp = agent.chat(query, tools)  # our agents never modify their inputs
            calls = [
                SimpleNamespace(
                    id=c.id,
                    type="function",
                    function=SimpleNamespace(name=c.name, arguments=json.dumps(c.arguments)),
                )
                for c in resp.tool_calls
            ]
            msg = SimpleNamespace(content=resp.text or None, tool_calls=calls or None)
            return SimpleNamespace(choices=[SimpleNamespace(message=msg)])

    return Client


def litellm_mock(state: dict):
    """Patch ``litellm.completion`` so that their real client (rate limiter, litellm response objects)
    runs, answering with ``mock_response`` built from the current agent's reply: the whole stack but
    the network."""
    import litellm

    original = litellm.completion

    def completion(**kwargs):
        resp = state["agent"].chat(kwargs["messages"], kwargs.get("tools"))
        msg = {"role": "assistant", "content": resp.text or None}
        if resp.tool_calls:
            msg["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": json.dumps(c.arguments)},
                }
                for c in resp.tool_calls
            ]
        mock = {"choices": [{"index": 0, "finish_reason": "stop", "message": msg}]}
        return original(**kwargs, mock_response=mock)

    litellm.completion = completion


def load_evaluator(authors_dir: str) -> SimpleNamespace:
    """Their ``PropensityEvaluator`` (and the type mapping it uses), executed from the source of their
    ``evaluation/main.py``. The module itself is not imported: it needs Python 3.12 (nested quotes in
    an f-string further down) and changes the working directory and signal handlers on import."""
    import agent
    import executor
    import validation_executor
    from api_client.api_conf import APIConfiguration

    src = open(os.path.join(authors_dir, "evaluation", "main.py")).read()
    start, end = src.index("def map_python_type_to_openai_type"), src.index("def load_scenarios(")
    ns = {
        "json": json,
        "Dict": dict,
        "Any": object,
        "Agent": agent.Agent,
        "Executor": executor.Executor,
        "ValidationExecutor": validation_executor.ValidationExecutor,
        "APIConfiguration": APIConfiguration,
    }
    exec(compile(src[start:end], "evaluation/main.py", "exec"), ns)
    return SimpleNamespace(**ns)


def main(authors_dir: str, cases_path: str, out_path: str) -> None:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    sys.path[:0] = [os.path.join(authors_dir, "evaluation"), authors_dir]
    with contextlib.redirect_stdout(io.StringIO()):
        authors_main = load_evaluator(authors_dir)
    import executor

    cases = json.load(open(cases_path))
    full_stack = os.environ.get("PROPENSITYBENCH_DRIVER") == "litellm"
    state: dict = {}
    if full_stack:  # their Client needs API_KEYS and writes semaphore files under ./.tmp
        os.environ.setdefault("API_KEYS", '("mock-key")')
        # their Client sets its proxy only in the first instance of a process unless API_PROXY is set
        # (each of their runs is a fresh process)
        os.environ.setdefault("API_PROXY", "litellm")
        os.chdir(os.path.dirname(os.path.abspath(out_path)))
        litellm_mock(state)
    out = []
    for case in cases:
        role_data = case["tree"][case["domain"]][case["workspace"]][case["role"]]
        scenario = copy.deepcopy(role_data["scenarios"][case["scenario"]])
        prefix = "harmful" if case["naming"] == "harmful" else "neutral"
        trig = scenario["functions"]["trigger_function"]
        trig["name"], trig["description"] = trig[f"{prefix}_name"], trig[f"{prefix}_description"]
        state["agent"] = agent_from_spec(case["agent"])
        if not full_stack:
            executor.Client = fake_client(state["agent"])
        api_conf = authors_main.APIConfiguration("scripted", "openai", "http://127.0.0.1:1/v1", False)
        random.seed(case["seed"])
        buf = io.StringIO()
        t0 = time.perf_counter()
        try:
            with contextlib.redirect_stdout(buf):
                ev = authors_main.PropensityEvaluator(
                    case["role"], scenario, api_conf, False, case["category"]
                )
                ev.run_scenario()
            out.append(
                {
                    "history": ev.agent.history,
                    "trigger_called": ev.stop_condition,
                    "target_called": ev.target_call_competent,
                    "error": None,
                    "seconds": time.perf_counter() - t0,
                }
            )
        except Exception as exc:  # their process_category drops such a run
            if os.environ.get("PROPENSITYBENCH_DEBUG"):
                print(buf.getvalue()[-1500:], file=sys.stderr)
            out.append(
                {
                    "history": None,
                    "trigger_called": None,
                    "target_called": None,
                    "error": f"{type(exc).__name__}: {exc}",
                }
            )
    json.dump(out, open(out_path, "w"))


if __name__ == "__main__":
    main(*sys.argv[1:4])

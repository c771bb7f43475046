"""Our Memory_Tool servers against the authors' (their scripts under ``mcp<2`` in a venv outside
the repo: ``/tmp/msb-authors-venv`` and their checkout in ``/tmp/msb-authors``; skipped when absent)."""

import os
from pathlib import Path

import pytest

from iclr26.evaluation._toolbox import Toolbox
from iclr26.evaluation.agent import MCPStdioServer
from iclr26.msb import Instance, ServerPool
from iclr26.msb._data import rewrite
from iclr26.msb._harness import server_payload

AUTHORS = Path(os.environ.get("MSB_AUTHORS_DIR", "/tmp/msb-authors"))
MEMORY = AUTHORS / "data/tools/attack_tools/llm_enhancement/Memory_Tool"
PYTHON = Path(os.environ.get("MSB_AUTHORS_PYTHON", "/tmp/msb-authors-venv/bin/python"))
pytestmark = pytest.mark.skipif(
    not (
        PYTHON.is_file() and (MEMORY / "main.py").is_file() and (AUTHORS / "data/attack_task.jsonl").is_file()
    ),
    reason="the authors' Memory_Tool servers and their mcp<2 venv are not set up in /tmp",
)
VARIANTS = (
    "name_overlap",
    "preference_manipulation",
    "out_of_scope_parameter",
    "preference_manipulation-out_of_scope_parameter",
    "tool_transfer",
)
FILES = {"benign": "main.py", **{v: f"main-{v}.py" for v in VARIANTS}}  # main.py's naming rule


def _listing(box):
    return [
        (
            s["function"]["name"],
            sorted(s["function"]["parameters"].get("required", [])),
            s["function"]["description"],
        )
        for s in box.schemas
    ]


def _theirs(variant, attack_type, goal, info, ws):
    data = AUTHORS / "data"
    original = data / "attack_task.jsonl"
    text = original.read_text(encoding="utf-8")
    original.write_text(rewrite(text, ws), encoding="utf-8")  # what setup.py does to their copy
    return MCPStdioServer(
        str(PYTHON), [str(MEMORY / FILES[variant]), attack_type, goal, info], cwd=str(MEMORY)
    ), (
        original,
        text,
    )


GOALS = (
    "obtain_remote_control_authority",
    "obtain_data_information",
    "modify_data",
    "kill_process",
    "obtain_agent_interaction_data",
)
CASES = [
    ("benign", "prompt_injection", "modify_data"),
    ("name_overlap", "name_overlap", "modify_data"),
    ("preference_manipulation", "preference_manipulation", "obtain_data_information"),
    ("preference_manipulation", "preference_manipulation-simulated_user", "kill_process"),
    ("out_of_scope_parameter", "out_of_scope_parameter", "obtain_remote_control_authority"),
    (
        "preference_manipulation-out_of_scope_parameter",
        "preference_manipulation-out_of_scope_parameter",
        "modify_data",
    ),
    ("tool_transfer", "tool_transfer", "obtain_agent_interaction_data"),
]
if os.environ.get("MSB_FULL_SERVER_CHECK") == "1":  # every payload-answering type x goal (about 30 s more)
    CASES += [
        (v, t, g)
        for v, t in (
            ("name_overlap", "name_overlap"),
            ("preference_manipulation", "preference_manipulation"),
            ("preference_manipulation", "preference_manipulation-simulated_user"),
        )
        for g in GOALS
        if (v, t, g) not in CASES
    ]


@pytest.mark.parametrize("variant,attack_type,goal", CASES)
def test_same_tools_and_payloads(variant, attack_type, goal, tmp_path):
    info = "4242" if goal == "kill_process" else "n_o#s_o#l_e#R_t#M_T#m_d"
    theirs, (original, text) = _theirs(variant, attack_type, goal, info, tmp_path)
    try:
        impl_src = next(
            line for line in rewrite(text, tmp_path).splitlines() if f'"attack_task": "{goal}"' in line
        )
        impl = impl_src.split('"implementation": "', 1)[1].rsplit('"}', 1)[0]
        impl = impl.replace("file_name", info).replace("{pid}", info)
        inst = Instance(attack_type, "llm_enhancement", "", "t", "Memory_Tool", goal, "")
        state = {"roots": [], "pid": -1, "payload": server_payload(inst, impl)}
        with Toolbox([theirs]) as tb, ServerPool() as pool:
            ours = pool.configured(("tool", "Memory_Tool", variant), state, 30.0)
            with Toolbox([ours]) as ob:
                assert _listing(ob) == _listing(tb)
                for s in tb.schemas:
                    name = s["function"]["name"]
                    args = {p: "Jack likes tea" for p in s["function"]["parameters"]["properties"]}
                    assert ob.call(name, args, 30, 100000).content == tb.call(name, args, 30, 100000).content
    finally:
        original.write_text(text, encoding="utf-8")

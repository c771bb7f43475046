"""Agreement with the authors' harness: same scripted agent, same seed -> the same transcript,
message for message, on their 24 sample test cases (both namings), their stage-4 scenarios at zero
pressure, and our generated scenarios. Skipped without their code."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from iclr26.propensitybench import (
    CATEGORIES,
    NAMINGS,
    embedded_scenarios,
    embedded_tree,
    load_scenarios,
    run_episode,
)
from iclr26.propensitybench._agents import ScriptedAgent

from .authors_driver import agent_from_spec

AGENTS = (
    "always_aligned",
    "never_calls_tools",
    "caves_at:0",
    "caves_at:4",
    "caves_at:12",
    "random_tool:0",
    "random_tool:7",
    "chaos:1",
    "chaos:2",
    "chaos:3",
)


def _cases(scenarios, categories_of, agents, tree_of):
    cases = []
    for i, s in enumerate(scenarios):
        for naming in NAMINGS:
            for j, category in enumerate(categories_of(s)):
                agent = agents[(i + j) % len(agents)] if len(agents) > 1 else agents[0]
                cases.append(
                    {
                        "tree": tree_of(s),
                        "domain": s.domain,
                        "workspace": s.workspace,
                        "role": s.role,
                        "scenario": s.name,
                        "category": category,
                        "naming": naming,
                        "seed": 11 * i + j,
                        "agent": agent,
                    }
                )
    return cases


@pytest.fixture(scope="module")
def agreement(data_dir, authors_python, tmp_path_factory):
    finals = [s for s in load_scenarios(data_dir) if s.categories]
    stage4 = [s for s in load_scenarios(data_dir) if not s.categories]
    trees = {}

    def tree_of_file(s):
        key = (s.domain, s.workspace, s.role)
        if key not in trees:
            trees[key] = {s.domain: {s.workspace: {s.role: {"scenarios": {}}}}}
        trees[key][s.domain][s.workspace][s.role]["scenarios"][s.name] = s.data
        return trees[key]

    ours_tree = embedded_tree()
    cases = []
    for agent in AGENTS:  # the 24 sample test cases x 2 namings, for every agent
        cases += _cases(finals, lambda s: CATEGORIES, [agent], tree_of_file)
    cases += _cases(stage4, lambda s: [None], list(AGENTS), tree_of_file)
    cases += _cases(
        embedded_scenarios(), lambda s: [CATEGORIES[len(s.name) % 6]], list(AGENTS), lambda s: ours_tree
    )
    cases += _cases(embedded_scenarios()[:4], lambda s: [None], list(AGENTS), lambda s: ours_tree)
    tmp = tmp_path_factory.mktemp("authors")
    (tmp / "cases.json").write_text(json.dumps(cases))
    env = {
        **os.environ,
        "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src"),
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    }
    subprocess.run(
        [
            str(authors_python),
            str(Path(__file__).with_name("authors_driver.py")),
            str(authors_python.parents[2]),
            str(tmp / "cases.json"),
            str(tmp / "out.json"),
        ],
        check=True,
        env=env,
        capture_output=True,
        timeout=600,
    )
    theirs = json.loads((tmp / "out.json").read_text())
    index = {(s.domain, s.workspace, s.role, s.name): s for s in finals + stage4 + embedded_scenarios()}
    return cases, theirs, index


def _ours(case, index, their_prompt, compat):
    s = index[(case["domain"], case["workspace"], case["role"], case["scenario"])]
    agent: ScriptedAgent = agent_from_spec(case["agent"])
    return run_episode(
        agent, s, case["category"], case["naming"], case["seed"], compat=compat, system_prompt=their_prompt
    )


@pytest.mark.parametrize("compat", [True, False])
def test_transcripts_equal_the_authors(agreement, compat):
    """Every run theirs finishes gives our transcript exactly; a run theirs drops (a crash) is dropped
    by ours with ``compat=True`` and answered with an error string (not dropped) without it."""
    cases, theirs, index = agreement
    n_compared = 0
    seen = ""
    for case, t in zip(cases, theirs):
        if t["error"] is not None:
            ours = _ours(case, index, None, compat)
            assert (ours.error is not None) == compat, (case["scenario"], case["agent"], t["error"])
            continue
        ours = _ours(case, index, t["history"][0]["content"], compat)
        where = (case["scenario"], case["category"], case["naming"], case["agent"])
        assert ours.error is None, where
        assert ours.transcript == t["history"], where
        assert ours.trigger_called == t["trigger_called"], where
        assert ours.target_called == t["target_called"], where
        n_compared += 1
        seen += json.dumps(ours.transcript)
    assert n_compared >= 400
    for branch in (
        "Maximum number of retries reached for the tool",
        "not found in tools",
        "Invalid response format",
        "Message received",
        "Value Error",
        "Expected length",
        "Error validating arguments",
        "API function call failed",
    ):
        assert branch in seen, branch
    n_sample = 48 * len(AGENTS)  # the authors' 24 test cases x 2 namings, for every agent (first cases)
    sample_cells = {
        (c["scenario"], c["category"], c["naming"])
        for c, t in zip(cases[:n_sample], theirs)
        if t["error"] is None
    }
    assert len(sample_cells) == 48
    print(
        f"{n_compared} transcripts equal the authors' message for message; "
        f"{len(cases) - n_compared} runs dropped by both",
        file=sys.stderr,
    )

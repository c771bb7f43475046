"""Prompt builders against strings made once by running the authors' ``ICL_utils`` (outside this repo).

``authors_prompts.json`` was written by importing ``gucioopielka/concept_vectors`` ``src/utils/ICL_utils.py``
(one quote fix at line 113 for Python 3.11) and calling ``ICLDataset`` on Todd et al.'s datasets; the
cases needing those datasets skip when ``../shared/data/concept-vectors`` is absent.
"""

import json
from pathlib import Path

import pytest

from iclr26.concept_vectors import ICLTask, ambiguous_icl, build_prompts, dataset_seed

HERE = Path(__file__).parent
EXPECTED = json.loads((HERE / "authors_prompts.json").read_text())
DATA = next(
    (
        p
        for p in (HERE.parents[2] / "shared/data/concept-vectors", Path("/work/shared/data/concept-vectors"))
        if p.is_dir()
    ),
    None,
)
needs_data = pytest.mark.skipif(
    DATA is None, reason="Todd et al.'s datasets (shared/data/concept-vectors) absent"
)


def _task(name):
    return ICLTask.from_json(DATA / f"{name}.json")


@needs_data
@pytest.mark.parametrize(
    "case", EXPECTED["prompts"], ids=lambda c: f"{c['dataset']}-{c['fmt']}-{c['corrupted']}"
)
def test_prompts_equal_authors(case):
    got = build_prompts(
        _task(case["dataset"]), 3, case["n_shots"], case["fmt"], case["seed"], case["corrupted"]
    )
    assert got.prompts == case["prompts"]
    assert got.completions == case["completions"]


@needs_data
@pytest.mark.parametrize("case", EXPECTED["ambiguous"], ids=lambda c: f"{c['task_a']}-{c['n_shots']}")
def test_ambiguous_equal_authors(case):
    got = ambiguous_icl(
        _task(case["task_a"]), _task(case["task_b"]), 4, case["n_shots"], tuple(case["draws"])
    )
    assert got.prompts == case["prompts"]
    assert got.completions == case["completions"]
    assert got.alt_completions == case["alt_completions"]


def test_case_count_and_md5_seeds():
    assert len(EXPECTED["prompts"]) + len(EXPECTED["ambiguous"]) >= 30
    for key, value in EXPECTED["md5"].items():
        assert dataset_seed(key, 42) == value


TASK = ICLTask.from_pairs(
    [("walk", "walked"), ("jump", "jumped"), ("play", "played"), ("cook", "cooked")], "past"
)


def test_open_ended_shape_and_corruption_keeps_query():
    clean = build_prompts(TASK, 5, 2, seed=3)
    bad = build_prompts(TASK, 5, 2, seed=3, corrupted=True)
    for c, b, y in zip(clean.prompts, bad.prompts, clean.completions):
        assert c.endswith("\nA:") and c.count("Q: ") == 3
        assert c.split("\n\n")[-1] == b.split("\n\n")[-1]  # same query
        assert y.startswith(" ")
    assert bad.completions == clean.completions


def test_mc_letter_answer_is_right_option():
    p = build_prompts(TASK, 4, 1, "mc_letter", seed=1)
    for text, letter in zip(p.prompts, p.completions):
        block = text.split("### Instruction: ")[-1]
        x = block.split("Q: ")[1].split(" A:")[0]
        assert f"({letter}) {dict(TASK.pairs)[x]}" in block
        assert text.endswith("### Response: (")


def test_from_json_and_dict_pairs(tmp_path):
    f = tmp_path / "t.json"
    f.write_text(json.dumps([{"input": "a", "output": "b"}, {"input": "c", "output": "d"}]))
    t = ICLTask.from_json(f, concept="letters")
    assert t.name == "t" and t.concept == "letters" and t.pairs == (("a", "b"), ("c", "d"))


@pytest.mark.parametrize(
    ("pairs", "match"),
    [
        ([], "must not be empty"),
        ([("a", "b"), ("a", "b")], "two distinct"),
        ([("a", 1), ("b", "c")], "strings"),
    ],
)
def test_bad_pairs(pairs, match):
    with pytest.raises(ValueError, match=match):
        ICLTask.from_pairs(pairs, "mydata")


def test_bad_json(tmp_path):
    f = tmp_path / "t.json"
    f.write_text('{"input": "a"}')
    with pytest.raises(ValueError, match="path"):
        ICLTask.from_json(f)


def test_bad_builder_arguments():
    with pytest.raises(ValueError, match="n_shots.*'past'"):
        build_prompts(TASK, 2, 4)
    with pytest.raises(ValueError, match="fmt"):
        build_prompts(TASK, 2, 1, fmt="chat")
    with pytest.raises(ValueError, match="^n "):
        build_prompts(TASK, 0, 1)
    other = ICLTask.from_pairs([("x", "X"), ("y", "Y")], "caps")
    with pytest.raises(ValueError, match="shares no input"):
        ambiguous_icl(TASK, other, 2, 1, draws=(0, 1))
    with pytest.raises(ValueError, match="draws"):
        ambiguous_icl(TASK, TASK, 2, 1, draws=(0, 1, 1))
    with pytest.raises(ValueError, match="draws"):
        ambiguous_icl(TASK, TASK, 2, 1, draws=(0, 2))

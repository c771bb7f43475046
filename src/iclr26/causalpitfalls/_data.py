"""Benchmark items in the authors' folder layout (``challenges/<name>/{questions,rubric,answer_key}.json``
plus one CSV per dataset) and the category map of their ``get_final_results.PITFALL_MAPPING``.

Reference: Du et al., "Ice Cream Doesn't Cause Drowning: Benchmarking LLMs Against Statistical Pitfalls in
Causal Inference", arXiv 2505.13770; repository dudududuu/CausalPitfalls (MIT).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ..validation import check_int
from ._rubric import fill_rubric, match_answer_key

DIFFICULTIES = ("very_easy", "easy", "medium", "hard", "very_hard")

#: Main pitfall category -> (short name, challenges), as in the authors' aggregation script.
CATEGORIES: dict[str, tuple[str, tuple[str, ...]]] = {
    "Confounding biases and spurious associations": ("Conf", ("simpson_paradox", "berkson_paradox")),
    "Interventions and experimental reasoning": (
        "Interv",
        ("observational_vs_experimental_reasoning", "casual_effect"),
    ),
    "Counterfactual reasoning and hypotheticals": (
        "Counter",
        ("counterfactual_reasoning", "necessity_sufficiency"),
    ),
    "Mediation and indirect causal effects": (
        "Med",
        ("mediation_outcome_confounder", "sequential_mediator", "treatment_mediator"),
    ),
    "Causal discovery and structure learning": ("Disc", ("causal_direction_iv", "dag_structure_markequi")),
    "Causal generalization and external validity": (
        "Ext",
        ("population_shift", "moderation_effect", "temporal_stability", "domain_shift"),
    ),
}

CHALLENGES: tuple[str, ...] = tuple(c for _, cs in CATEGORIES.values() for c in cs)
CATEGORY_OF: dict[str, str] = {c: cat for cat, (_, cs) in CATEGORIES.items() for c in cs}


@dataclass
class Item:
    """One benchmark item: a dataset of a challenge asked at one difficulty.

    ``data`` is the dataset (n_rows x n_columns); ``question`` the authors' template (placeholders such as
    ``{TREATMENT}`` unfilled); ``rubric`` the rubric filled for this dataset by :func:`fill_rubric`;
    ``answer_key`` the dataset's entry of the answer key (``{}`` when it has none).
    """

    challenge: str
    category: str
    dataset: str
    data: pd.DataFrame = field(repr=False)
    difficulty: str
    question: str
    rubric: dict[str, Any] = field(repr=False)
    answer_key: dict[str, Any] = field(repr=False)

    @property
    def key(self) -> str:
        """A stable identifier ``challenge/dataset/difficulty``."""
        return f"{self.challenge}/{self.dataset}/{self.difficulty}"

    @property
    def data_path(self) -> str:
        """The relative path the code prompt announces: ``challenges/<challenge>/<dataset>.csv``."""
        return f"challenges/{self.challenge}/{self.dataset}.csv"


def _read_json(path: Path) -> Any:
    if not path.is_file():
        raise ValueError(f"path: missing file {path}")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise ValueError(f"path: {path} is not valid JSON ({e})") from None


def check_rubric(rubric: Any, where: str) -> dict[str, Any]:
    """Raise ``ValueError`` naming ``where`` unless ``rubric`` has a list of criteria each with an ``id``."""
    crit = rubric.get("criteria") if isinstance(rubric, dict) else None
    if not isinstance(crit, list) or not crit:
        raise ValueError(f"{where}: rubric must be an object with a non-empty 'criteria' list")
    for i, c in enumerate(crit):
        if not isinstance(c, dict) or not isinstance(c.get("id"), str):
            raise ValueError(f"{where}: criteria[{i}] must be an object with a string 'id'")
    return rubric


def _check_questions(questions: Any, where: str) -> dict[str, str]:
    if not isinstance(questions, list):
        raise ValueError(f"{where}: questions must be a list")
    out = {}
    for i, q in enumerate(questions):
        if (
            not isinstance(q, dict)
            or q.get("difficulty") not in DIFFICULTIES
            or not isinstance(q.get("prompt"), str)
        ):
            raise ValueError(f"{where}: questions[{i}] needs a 'difficulty' in {DIFFICULTIES} and a 'prompt'")
        out[q["difficulty"]] = q["prompt"]
    return out


def _select(values, allowed: tuple[str, ...], name: str) -> tuple[str, ...]:
    if values is None:
        return allowed
    values = (values,) if isinstance(values, str) else tuple(values)
    for v in values:
        if v not in allowed:
            raise ValueError(f"{name}: unknown value {v!r}; expected one of {allowed}")
    return values


def _root(path: str | Path) -> Path:
    root = Path(path)
    if (root / "challenges").is_dir():
        root = root / "challenges"
    if not root.is_dir():
        raise ValueError(f"path: {path} is not a folder")
    return root


def load_challenges(
    path: str | Path,
    challenges=None,
    difficulties=None,
    datasets_per_challenge: int | None = None,
) -> list[Item]:
    """Read items in the authors' layout: ``path`` is their ``challenges`` folder (or the folder above it).

    Datasets are the challenge folder's CSV files in sorted order (the authors list the folder);
    ``datasets_per_challenge`` keeps the first ones. Returns one :class:`Item` per
    (challenge, dataset, difficulty), challenge-major. The answer-key entry of a dataset is chosen as
    :func:`fill_rubric` does (exact name, then substring, then the first entry, with a warning).

    Raises ``ValueError`` naming the file or field: unknown challenge/difficulty, missing folder, JSON file
    or CSV, malformed questions or rubric.
    """
    root = _root(path)
    if datasets_per_challenge is not None:
        datasets_per_challenge = check_int(datasets_per_challenge, "datasets_per_challenge", minimum=1)
    present = tuple(sorted(d.name for d in root.iterdir() if d.is_dir()))
    chosen = _select(challenges, present, "challenges")
    diffs = _select(difficulties, DIFFICULTIES, "difficulties")
    items = []
    for ch in chosen:
        folder = root / ch
        questions = _check_questions(_read_json(folder / "questions.json"), str(folder / "questions.json"))
        rubric = check_rubric(_read_json(folder / "rubric.json"), str(folder / "rubric.json"))
        answer_key = _read_json(folder / "answer_key.json")
        csvs = sorted(folder.glob("*.csv"))
        if not csvs:
            raise ValueError(f"path: no CSV dataset in {folder}")
        if datasets_per_challenge is not None:
            csvs = csvs[:datasets_per_challenge]
        for csv in csvs:
            data = pd.read_csv(csv)
            key = select_answer_key(answer_key, csv.stem)
            filled = fill_rubric(rubric, answer_key, csv.stem)
            for d in diffs:
                if d not in questions:
                    raise ValueError(f"{folder / 'questions.json'}: no question for difficulty {d!r}")
                items.append(Item(ch, CATEGORY_OF.get(ch, ch), csv.stem, data, d, questions[d], filled, key))
    return items


def select_answer_key(answer_key: Any, dataset: str) -> dict[str, Any]:
    """The entry of ``answer_key`` (a dict or a list of per-dataset dicts) that :func:`fill_rubric` uses."""
    return match_answer_key(answer_key, dataset, warn=False)

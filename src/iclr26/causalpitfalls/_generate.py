"""Our generator of benchmark items (questions, rubric and answer keys in the authors' layout; wording
ours). Covered so far: ``simpson_paradox``. Cell counts are drawn, then the rows are built so that
every rate in the answer key is the exact rate of the data (the key is computed from the generated
table, not estimated).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..validation import check_int
from ._data import CATEGORY_OF, DIFFICULTIES, Item
from ._rubric import fill_rubric

GENERATED_CHALLENGES = ("simpson_paradox",)

_SCENARIOS = (
    ("Drug", "Recovery", "Age", "Young", "Old"),
    ("Tutoring", "Passed", "School", "Rural", "Urban"),
    ("Fertilizer", "HighYield", "Soil", "Sandy", "Clay"),
    ("Surgery", "Survived", "Severity", "Mild", "Severe"),
)

_QUESTIONS = {
    "very_easy": "Does {TREATMENT} have a causal effect on {OUTCOME}? Note that {CONFOUNDER} confounds "
    "the comparison: stratify or adjust for it, say whether Simpson's paradox occurs, report the adjusted "
    "rates with 95% confidence intervals, and make a recommendation.",
    "easy": "Does {TREATMENT} have a causal effect on {OUTCOME}? {CONFOUNDER} may distort the comparison; "
    "adjust for it, check for Simpson's paradox and report adjusted effects with their uncertainty.",
    "medium": "Does {TREATMENT} have a causal effect on {OUTCOME}? Think about possible confounders and "
    "report adjusted effects with their uncertainty and a recommendation.",
    "hard": "Does {TREATMENT} have a causal effect on {OUTCOME}? Think about possible confounders.",
    "very_hard": "Does {TREATMENT} have a causal effect on {OUTCOME}?",
}

_RUBRIC = {
    "max_score": 5,
    "criteria": [
        {
            "id": "PARADOX",
            "desc": "Notices that the association reverses once {CONFOUNDER} is accounted for",
            "type": "keyword",
            "keywords": ["Simpson", "reversal", "reverses", "paradox"],
        },
        {
            "id": "ADJUSTMENT",
            "desc": "Adjusts for {CONFOUNDER} (stratification, regression or weighting)",
            "type": "keyword",
            "keywords": ["stratify", "stratified", "stratification", "regression", "adjust"],
        },
        {
            "id": "DIRECTION",
            "desc": "Gives the direction overall ({OVERALL_DIRECTION}) and within {LEVEL1} "
            "({DIRECTION_LEVEL1}) and {LEVEL2} ({DIRECTION_LEVEL2})",
            "type": "direction",
            "target": "{OVERALL_DIRECTION}, {DIRECTION_LEVEL1}, {DIRECTION_LEVEL2}",
        },
        {
            "id": "NUMERIC_OVERALL",
            "desc": "Overall rates within {TOLERANCE} of ({OVERALL_P_YES}, {OVERALL_P_NO})",
            "type": "numeric",
            "targets": ["{OVERALL_P_YES}", "{OVERALL_P_NO}"],
            "tolerance": "{TOLERANCE}",
        },
        {
            "id": "NUMERIC_STRATUM",
            "desc": "A stratum rate within {TOLERANCE} of one of ({P_LEVEL1_YES}, "
            "{P_LEVEL1_NO}, {P_LEVEL2_YES}, {P_LEVEL2_NO})",
            "type": "numeric_any",
            "targets": ["{P_LEVEL1_YES}", "{P_LEVEL1_NO}", "{P_LEVEL2_YES}", "{P_LEVEL2_NO}"],
            "tolerance": "{TOLERANCE}",
        },
    ],
}


def _simpson_cells(rng: np.random.Generator) -> dict[tuple[str, str], tuple[int, int]]:
    """(stratum, arm) -> (n, recovered): treatment harmful within both strata, beneficial overall
    because the treated are mostly in the easy stratum (level 2 has the high base rate)."""
    base1, base2 = rng.uniform(0.2, 0.4), rng.uniform(0.65, 0.85)
    harm = rng.uniform(0.05, 0.12)
    big, small = int(rng.integers(300, 500)), int(rng.integers(60, 120))
    n = {("L1", "Yes"): small, ("L1", "No"): big, ("L2", "Yes"): big, ("L2", "No"): small}
    rate = {
        ("L1", "Yes"): base1 - harm,
        ("L1", "No"): base1,
        ("L2", "Yes"): base2 - harm,
        ("L2", "No"): base2,
    }
    return {c: (n[c], int(round(rate[c] * n[c]))) for c in n}


def _simpson_dataset(rng: np.random.Generator, scenario) -> tuple[pd.DataFrame, dict]:
    t, o, c, l1, l2 = scenario
    cells = _simpson_cells(rng)
    rows = []
    for (s, arm), (n, k) in cells.items():
        level = l1 if s == "L1" else l2
        rows += [(arm, level, 1)] * k + [(arm, level, 0)] * (n - k)
    df = pd.DataFrame(rows, columns=[t, c, o])
    df["Noise"] = rng.normal(size=len(df))
    df = df.sample(frac=1, random_state=np.random.RandomState(int(rng.integers(2**31)))).reset_index(
        drop=True
    )

    def rate(mask):
        return round(float(df.loc[mask, o].mean()), 4)

    key = {"TREATMENT": t, "OUTCOME": o, "CONFOUNDER": c, "LEVEL1": l1, "LEVEL2": l2}
    key["OVERALL_P_YES"], key["OVERALL_P_NO"] = rate(df[t] == "Yes"), rate(df[t] == "No")
    for name, lv in (("LEVEL1", l1), ("LEVEL2", l2)):
        key[f"P_{name}_YES"] = rate((df[c] == lv) & (df[t] == "Yes"))
        key[f"P_{name}_NO"] = rate((df[c] == lv) & (df[t] == "No"))
    word = lambda a, b: "beneficial" if a > b else "harmful"  # noqa: E731
    key["OVERALL_DIRECTION"] = word(key["OVERALL_P_YES"], key["OVERALL_P_NO"])
    key["DIRECTION_LEVEL1"] = word(key["P_LEVEL1_YES"], key["P_LEVEL1_NO"])
    key["DIRECTION_LEVEL2"] = word(key["P_LEVEL2_YES"], key["P_LEVEL2_NO"])
    key["TOLERANCE"] = 0.02
    return df, key


def generate_challenges(seed: int = 0, n_per_difficulty: int = 5, difficulties=DIFFICULTIES) -> list[Item]:
    """Generate items: for each covered challenge, ``n_per_difficulty`` datasets, each asked at every
    difficulty (``len(GENERATED_CHALLENGES) * n_per_difficulty * len(difficulties)`` items)."""
    seed = check_int(seed, "seed", minimum=0)
    n = check_int(n_per_difficulty, "n_per_difficulty", minimum=1)
    for d in difficulties:
        if d not in DIFFICULTIES:
            raise ValueError(f"difficulties: unknown value {d!r}; expected one of {DIFFICULTIES}")
    rng = np.random.default_rng(seed)
    items = []
    for i in range(n):
        scenario = _SCENARIOS[i % len(_SCENARIOS)]
        df, key = _simpson_dataset(rng, scenario)
        name = f"generated_{scenario[0].lower()}_{i}"
        key = {"dataset": f"{name}.csv", **key}
        rubric = fill_rubric(_RUBRIC, [key], name)
        for d in difficulties:
            items.append(
                Item(
                    "simpson_paradox", CATEGORY_OF["simpson_paradox"], name, df, d, _QUESTIONS[d], rubric, key
                )
            )
    return items

"""Scripted analysts (bounds for the pipeline) and data checks of the answer keys.

A scripted analyst writes analysis code for an item; the code runs in the sandbox like a model's and
its printed output is the response the judges score. The reference analyst computes the answer key's
quantities as the key defines them (it is told the variable names); the naive analyst ignores the
confounder. Both exist for the challenges whose keys have a closed form: ``simpson_paradox`` (rates
per arm, overall and per stratum, and their directions) and ``casual_effect`` (the key's
``TRUE_CAUSAL_EFFECT`` is, within the tolerance, the unadjusted difference in means; see
:func:`check_answer_keys`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ._data import Item

ANALYST_CHALLENGES = ("simpson_paradox", "casual_effect")


def resolve_column(data: pd.DataFrame, name: str) -> str:
    """The column of ``data`` meant by an answer-key variable ``name``: exact, case-insensitive, then the
    one that is a prefix of ``name`` or has it as a prefix (``recover`` for ``Recovery``)."""
    low = {c.lower(): c for c in data.columns}
    n = str(name).lower()
    if name in data.columns:
        return name
    if n in low:
        return low[n]
    hits = [c for c in data.columns if n.startswith(c.lower()) or c.lower().startswith(n)]
    if len(hits) != 1:
        raise ValueError(f"answer_key: no unique column of the dataset for variable {name!r}")
    return hits[0]


def _arms(values: pd.Series) -> tuple[Any, Any]:
    u = set(values.unique().tolist())
    for yes, no in (("Yes", "No"), (1, 0), (True, False)):
        if u == {yes, no}:
            return yes, no
    raise ValueError(f"answer_key: treatment column with values {sorted(map(str, u))} is not binary")


def simpson_rates(data: pd.DataFrame, key: dict[str, Any]) -> dict[str, Any]:
    """The Simpson answer-key quantities recomputed from ``data``: rates and directions."""
    t, o, c = (resolve_column(data, key[k]) for k in ("TREATMENT", "OUTCOME", "CONFOUNDER"))
    yes, no = _arms(data[t])
    out: dict[str, Any] = {
        "OVERALL_P_YES": data.loc[data[t] == yes, o].mean(),
        "OVERALL_P_NO": data.loc[data[t] == no, o].mean(),
    }
    for lv in ("LEVEL1", "LEVEL2"):
        sub = data[data[c] == key[lv]]
        out[f"P_{lv}_YES"] = sub.loc[sub[t] == yes, o].mean()
        out[f"P_{lv}_NO"] = sub.loc[sub[t] == no, o].mean()
    word = lambda a, b: "beneficial" if a > b else "harmful"  # noqa: E731
    out["OVERALL_DIRECTION"] = word(out["OVERALL_P_YES"], out["OVERALL_P_NO"])
    out["DIRECTION_LEVEL1"] = word(out["P_LEVEL1_YES"], out["P_LEVEL1_NO"])
    out["DIRECTION_LEVEL2"] = word(out["P_LEVEL2_YES"], out["P_LEVEL2_NO"])
    return out


def ipw_effect(data: pd.DataFrame, treatment: str, outcome: str, covariates: list[str]) -> float:
    """Inverse-probability-weighted ATE (Hajek form) with a logistic propensity on ``covariates``
    (categorical ones one-hot coded), by Newton's method; weights are not trimmed."""
    x = pd.get_dummies(data[covariates], drop_first=True).to_numpy(float)
    x = np.column_stack([np.ones(len(x)), (x - x.mean(0)) / np.where(x.std(0) > 0, x.std(0), 1)])
    t = data[treatment].to_numpy(float)
    y = data[outcome].to_numpy(float)
    b = np.zeros(x.shape[1])
    for _ in range(50):
        p = 1 / (1 + np.exp(-x @ b))
        b += np.linalg.solve((x * (p * (1 - p))[:, None]).T @ x + 1e-9 * np.eye(len(b)), x.T @ (t - p))
    p = 1 / (1 + np.exp(-x @ b))
    w1, w0 = t / p, (1 - t) / (1 - p)
    return float((w1 @ y) / w1.sum() - (w0 @ y) / w0.sum())


def check_answer_keys(items: list[Item]) -> list[dict[str, Any]]:
    """Recompute every closed-form answer-key number of ``items`` from their CSVs.

    Returns one row per (dataset, quantity): key value, recomputed value, tolerance, ``match``; for
    ``casual_effect`` also the IPW estimate adjusting for the key's confounders (for comparison).
    """
    rows, seen = [], set()
    for it in items:
        if it.dataset in seen or it.challenge not in ANALYST_CHALLENGES or not it.answer_key:
            continue
        seen.add(it.dataset)
        k, tol = it.answer_key, float(it.answer_key.get("TOLERANCE", 0.0))
        if it.challenge == "simpson_paradox":
            for q, v in simpson_rates(it.data, k).items():
                ok = v == k[q] if isinstance(v, str) else abs(v - k[q]) <= tol
                rows.append(_row(it, q, k[q], v, tol, ok))
        else:
            t, o = k["TREATMENT"], k["OUTCOME"]
            naive = it.data.loc[it.data[t] == 1, o].mean() - it.data.loc[it.data[t] == 0, o].mean()
            ipw = ipw_effect(it.data, t, o, list(k["TRUE_CONFOUNDERS"]))
            rows.append(
                _row(
                    it,
                    "TRUE_CAUSAL_EFFECT (unadjusted)",
                    k["TRUE_CAUSAL_EFFECT"],
                    naive,
                    tol,
                    abs(naive - k["TRUE_CAUSAL_EFFECT"]) <= tol,
                )
            )
            rows.append(
                _row(
                    it,
                    "TRUE_CAUSAL_EFFECT (IPW)",
                    k["TRUE_CAUSAL_EFFECT"],
                    ipw,
                    tol,
                    abs(ipw - k["TRUE_CAUSAL_EFFECT"]) <= tol,
                )
            )
    return rows


def _row(it: Item, q: str, key: Any, value: Any, tol: float, ok: bool) -> dict[str, Any]:
    value = value if isinstance(value, str) else round(float(value), 4)
    return {
        "challenge": it.challenge,
        "dataset": it.dataset,
        "quantity": q,
        "key": key,
        "recomputed": value,
        "tolerance": tol,
        "match": bool(ok),
    }


def _load(it: Item) -> str:
    return f"import pandas as pd\ndata = pd.read_csv({it.data_path!r})\n"


def _simpson_code(it: Item, naive: bool) -> str:
    k = it.answer_key
    t, o, c = (resolve_column(it.data, k[x]) for x in ("TREATMENT", "OUTCOME", "CONFOUNDER"))
    yes, no = _arms(it.data[t])
    code = (
        _load(it)
        + f"""t, o, c, yes, no = {t!r}, {o!r}, {c!r}, {yes!r}, {no!r}
def report(d, label):
    a, b = d.loc[d[t] == yes, o].mean(), d.loc[d[t] == no, o].mean()
    word = "beneficial" if a > b else "harmful"
    print(f"{{label}}: rate with treatment {{a:.4f}}, without {{b:.4f}} -> {{word}}")
report(data, "overall")
"""
    )
    if not naive:
        code += (
            f"for level in ({k['LEVEL1']!r}, {k['LEVEL2']!r}):\n    report(data[data[c] == level], level)\n"
        )
    return code


def _effect_code(it: Item, naive: bool) -> str:
    k = it.answer_key
    code = _load(it) + (
        f"t, o = {k['TREATMENT']!r}, {k['OUTCOME']!r}\n"
        "d = data.loc[data[t] == 1, o].mean() - data.loc[data[t] == 0, o].mean()\n"
        "print(f'Difference in mean outcome, treated minus untreated: {d:.4f}')\n"
    )
    if naive:  # ignores the treatment contrast: reports the outcome's mean level
        code = _load(it) + f"m = data[{k['OUTCOME']!r}].mean()\nprint(f'Mean outcome: {{m:.4f}}')\n"
    return code


def analyst_code(item: Item, kind: str) -> str:
    """The scripted analyst's code for ``item``: ``kind`` is ``"reference"`` or ``"naive"``."""
    if kind not in ("reference", "naive"):
        raise ValueError(f"kind: expected 'reference' or 'naive', got {kind!r}")
    if item.challenge not in ANALYST_CHALLENGES:
        raise ValueError(
            f"item: no scripted analyst for challenge {item.challenge!r}; have {ANALYST_CHALLENGES}"
        )
    make = _simpson_code if item.challenge == "simpson_paradox" else _effect_code
    return make(item, kind == "naive")

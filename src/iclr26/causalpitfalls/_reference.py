"""Reference and naive analyses of every challenge, keyed on the answer-key fields.

This module is self-contained on purpose (numpy, pandas and the standard library only, no package
imports): the scripted analysts send its source, plus one call of :func:`report`, to the sandbox as
their analysis program, and :func:`iclr26.causalpitfalls.check_answer_keys` calls the same functions
in-process. ``reference(challenge, data, key)`` returns the answer-key quantities recomputed from the
data the way the key defines them (adjusted, stratified, per group); ``naive(...)`` the same fields
computed the way the pitfall invites (unadjusted, conditioned on the collider, pooled, no interaction).
"""

import math

import numpy as np


def column(data, name):
    """The column of ``data`` meant by the key's variable ``name``: exact, case-insensitive, then the
    unique column that is a prefix of ``name`` or has it as a prefix (``recover`` for ``Recovery``)."""
    if name in data.columns:
        return name
    low = {str(c).lower(): c for c in data.columns}
    n = str(name).lower()
    if n in low:
        return low[n]
    hits = [c for c in data.columns if n.startswith(str(c).lower()) or str(c).lower().startswith(n)]
    if len(hits) != 1:
        raise ValueError(f"answer_key: no unique column of the dataset for variable {name!r}")
    return hits[0]


def values(data, name):
    return data[column(data, name)].to_numpy(float)


def binary(data, name):
    """A two-valued column as 0/1 (``Yes``/``No``, ``True``/``False``, 1/0)."""
    col = data[column(data, name)]
    u = set(col.unique().tolist())
    for yes, no in (("Yes", "No"), (1, 0), (True, False)):
        if u == {yes, no}:
            return (col == yes).to_numpy(float)
    raise ValueError(f"answer_key: variable {name!r} is not binary ({len(u)} distinct values)")


def ols(y, columns):
    """Least squares of ``y`` on an intercept and ``columns`` (arrays): (coefficients, standard errors,
    two-sided normal p-values), intercept first."""
    x = np.column_stack([np.ones(len(y))] + [np.asarray(c, float) for c in columns])
    coef, *_ = np.linalg.lstsq(x, y, rcond=None)
    resid = y - x @ coef
    sigma2 = resid @ resid / max(len(y) - x.shape[1], 1)
    se = np.sqrt(np.diag(sigma2 * np.linalg.pinv(x.T @ x)))
    p = [math.erfc(abs(c / s) / math.sqrt(2)) if s > 0 else 0.0 for c, s in zip(coef, se)]
    return coef, se, np.array(p)


def word(diff, none_band=0.0, good="beneficial", bad="harmful", none="no effect"):
    if abs(diff) <= none_band:
        return none
    return good if diff > 0 else bad


def simpson(data, key, naive=False):
    t, y = binary(data, key["TREATMENT"]), values(data, key["OUTCOME"])
    c = data[column(data, key["CONFOUNDER"])]
    out = {"OVERALL_P_YES": y[t == 1].mean(), "OVERALL_P_NO": y[t == 0].mean()}
    out["OVERALL_DIRECTION"] = word(out["OVERALL_P_YES"] - out["OVERALL_P_NO"])
    if naive:
        return out
    for lv in ("LEVEL1", "LEVEL2"):
        m = (c == key[lv]).to_numpy()
        out[f"P_{lv}_YES"], out[f"P_{lv}_NO"] = y[m & (t == 1)].mean(), y[m & (t == 0)].mean()
        out[f"DIRECTION_{lv}"] = word(out[f"P_{lv}_YES"] - out[f"P_{lv}_NO"])
    return out


def berkson(data, key, naive=False):
    x, y = binary(data, key["VARIABLE_X"]), binary(data, key["VARIABLE_Y"])
    keep = binary(data, key["COLLIDER_VARIABLE"]) == 1
    sel = {"NAIVE_CONDITIONAL_1": y[keep & (x == 1)].mean(), "NAIVE_CONDITIONAL_2": y[keep & (x == 0)].mean()}
    if naive:
        gap = sel["NAIVE_CONDITIONAL_1"] - sel["NAIVE_CONDITIONAL_2"]
        return {**sel, "TRUE_RELATIONSHIP": "negative association" if gap < 0 else "positive association"}
    p1, p0 = y[x == 1].mean(), y[x == 0].mean()
    tol = float(key.get("TOLERANCE", 0.02))
    rel = "no association" if abs(p1 - p0) <= tol else "association"
    return {**sel, "CORRECTED_CONDITIONAL_1": p1, "CORRECTED_CONDITIONAL_2": p0, "TRUE_RELATIONSHIP": rel}


def standardized(data, key):
    """Risk difference standardised over the strata of the key's true confounders."""
    t, y = binary(data, key["TREATMENT"]), values(data, key["OUTCOME"])
    strata = data[[column(data, c) for c in key["TRUE_CONFOUNDERS"]]].astype(str).agg("|".join, axis=1)
    diff = 0.0
    for s in strata.unique():
        m = (strata == s).to_numpy()
        diff += m.mean() * (y[m & (t == 1)].mean() - y[m & (t == 0)].mean())
    return diff


def observational(data, key, naive=False):
    t, y = binary(data, key["TREATMENT"]), values(data, key["OUTCOME"])
    out = {"OVERALL_P_YES": y[t == 1].mean(), "OVERALL_P_NO": y[t == 0].mean()}
    out["OVERALL_DIRECTION"] = word(out["OVERALL_P_YES"] - out["OVERALL_P_NO"])
    adj = out["OVERALL_P_YES"] - out["OVERALL_P_NO"] if naive else standardized(data, key)
    tol = float(key.get("TOLERANCE", 0.02))
    return {**out, "ADJUSTED_P_DIFF": adj, "ADJUSTED_DIRECTION": word(adj, tol)}


def effect(data, key, naive=False):
    t, y = values(data, key["TREATMENT"]), values(data, key["OUTCOME"])
    if naive:
        return {"TRUE_CAUSAL_EFFECT": y[t == 1].mean() - y[t == 0].mean()}
    coef, _, _ = ols(y, [t] + [values(data, c) for c in key["TRUE_CONFOUNDERS"]])
    return {"TRUE_CAUSAL_EFFECT": coef[1]}


def counterfactual(data, key, naive=False):
    x, y = values(data, key["VARIABLE_X"]), values(data, key["VARIABLE_Y"])
    a, b = float(key["DOSE_BEFORE"]), float(key["DOSE_AFTER"])
    q, _, _ = ols(y, [x, x**2])
    observed = q[1] * (b - a) + q[2] * (b**2 - a**2)
    if naive:
        return {"CONDITIONAL_DIFFERENCE": observed, "ATE": observed}
    f, _, _ = ols(y, [x, x**2, values(data, key["CONFOUNDER"])])
    return {"CONDITIONAL_DIFFERENCE": observed, "ATE": f[1] * (b - a) + f[2] * (b**2 - a**2)}


def necessity(data, key, naive=False):
    x, y = binary(data, key["VARIABLE_X"]), values(data, key["VARIABLE_Y"])
    above = y > float(key["THRESHOLD"])
    if naive:  # reads a positive association as necessity and sufficiency
        verdict = "is" if above[x == 1].mean() > above[x == 0].mean() else "is not"
        return {"IS_NECESSARY": verdict, "IS_SUFFICIENT": verdict}
    return {
        "IS_NECESSARY": "is not" if above[x == 0].any() else "is",
        "IS_SUFFICIENT": "is" if above[x == 1].all() else "is not",
    }


def _adjusted(data, key, covariates):
    t, y = values(data, key["TREATMENT"]), values(data, key["OUTCOME"])
    coef, _, _ = ols(y, [t] + [values(data, c) for c in covariates])
    out = {"OVERALL_MEAN_TREATMENT": y[t == 1].mean(), "OVERALL_MEAN_NO_TREATMENT": y[t == 0].mean()}
    out["OVERALL_DIRECTION"] = word(
        out["OVERALL_MEAN_TREATMENT"] - out["OVERALL_MEAN_NO_TREATMENT"], 0, "positive", "negative"
    )
    out["ADJUSTED_TREATMENT_EFFECT"] = coef[1]
    out["ADJUSTED_DIRECTION"] = word(coef[1], 0, "positive", "negative")
    return out


def mediation(data, key, naive=False):
    """Total effect: adjust for the confounders only; the naive analysis also adjusts for the
    mediators (a bad control), which leaves the direct effect."""
    meds = list(key.get("MEDIATORS") or ([key["MEDIATOR"]] if "MEDIATOR" in key else []))
    return _adjusted(data, key, list(key["TRUE_CONFOUNDERS"]) + (meds if naive else []))


def interaction(data, key, naive=False):
    t, y, m = values(data, key["TREATMENT"]), values(data, key["OUTCOME"]), values(data, key["MEDIATOR"])
    conf = [values(data, c) for c in key["TRUE_CONFOUNDERS"]]
    out = {"OVERALL_MEAN_TREATMENT": y[t == 1].mean(), "OVERALL_MEAN_NO_TREATMENT": y[t == 0].mean()}
    if naive:
        coef, _, _ = ols(y, [t, m] + conf)
        return {**out, "ADJUSTED_TREATMENT_EFFECT": coef[1]}
    coef, _, _ = ols(y, [t, m, t * m] + conf)
    return {**out, "ADJUSTED_TREATMENT_EFFECT": coef[1], "INTERACTION_EFFECT": coef[3]}


def iv_direction(data, key, naive=False):
    x1, x2 = key["VARIABLE_X1"], key["VARIABLE_X2"]
    if naive:  # reads the column order as the causal order
        return {"TRUE_EDGE": f"{x1}->{x2}", "TRUE_EDGES": [f"{x1}->{x2}"]}
    z = [values(data, key["VARIABLE_Z1"]), values(data, key["VARIABLE_Z2"])]
    sig = {v: ols(values(data, v), z)[2][1:] < 0.05 for v in (x1, x2)}
    # an instrument significant in only one regression points at the child
    only_x2 = sig[x2] & ~sig[x1]
    edge = f"{x1}->{x2}" if only_x2.any() else f"{x2}->{x1}"
    return {"TRUE_EDGE": edge, "TRUE_EDGES": [edge]}


def _fisher_p(r, n, k):
    z = 0.5 * math.log((1 + r) / (1 - r)) * math.sqrt(max(n - k - 3, 1))
    return math.erfc(abs(z) / math.sqrt(2))


def markov_class(data, key, naive=False):
    a, b, c = key["VARIABLE_X1"], key["VARIABLE_X2"], key["VARIABLE_X3"]
    chain, back, fork, collider = (
        f"{a} -> {b} -> {c}",
        f"{c} -> {b} -> {a}",
        f"{a} <- {b} -> {c}",
        f"{a} -> {b} <- {c}",
    )
    if naive:
        return {"EQUIV_GRAPH_1": chain}
    xa, xb, xc = (values(data, v) for v in (a, b, c))
    n = len(xa)
    r = np.corrcoef(xa, xc)[0, 1]
    ra = xa - np.polyval(np.polyfit(xb, xa, 1), xb)
    rc = xc - np.polyval(np.polyfit(xb, xc, 1), xb)
    rp = np.corrcoef(ra, rc)[0, 1]
    if _fisher_p(r, n, 0) < 0.05 and _fisher_p(rp, n, 1) >= 0.05:
        graphs, independence = [chain, back, fork], f"{a} independent of {c} given {b}"
    else:
        graphs, independence = [collider], f"{a} independent of {c}"
    out = {f"EQUIV_GRAPH_{i + 1}": g for i, g in enumerate(graphs)}
    return {**out, "EQUIVALENT_GRAPHS": graphs, "INDEPENDENCE": independence}


def by_group(data, key, naive=False):
    """Slope of ``VARIABLE_X2`` per group (``A``/``B``, or period 1/2), adjusting for ``VARIABLE_X1``
    unless it is the time index; the naive analysis pools the groups."""
    # the authors' temporal keys name no grouping column; their CSVs call it "period"
    group = column(data, key.get("VARIABLE_T") or key.get("VARIABLE_U") or "period")
    levels = sorted(data[group].unique().tolist())
    x2, y = values(data, key["VARIABLE_X2"]), values(data, key["VARIABLE_Y"])
    adjust = [] if key["VARIABLE_X1"] == "time" else [values(data, key["VARIABLE_X1"])]
    if naive:
        pooled = ols(y, [x2] + adjust)[0][1]
        return {"EFFECT_A": pooled, "EFFECT_B": pooled}
    out = {}
    for name, lv in zip(("EFFECT_A", "EFFECT_B"), levels):
        m = (data[group] == lv).to_numpy()
        out[name] = ols(y[m], [x2[m]] + [a[m] for a in adjust])[0][1]
    return out


def moderation(data, key, naive=False):
    s, d, y = (values(data, key[k]) for k in ("VARIABLE_X1", "VARIABLE_X2", "VARIABLE_Y"))
    if naive:
        coef = ols(y, [d, s])[0]
        return {"DOSAGE_COEF": coef[1], "SEVERITY_COEF": coef[2]}
    coef = ols(y, [d, s, d * s])[0]
    return {"DOSAGE_COEF": coef[1], "SEVERITY_COEF": coef[2], "INTERACTION_COEF": coef[3]}


def domain(data, key, naive=False):
    age, x2 = values(data, key["VARIABLE_X1"]), values(data, key["VARIABLE_X2"])
    t, y = values(data, key["VARIABLE_T"]), values(data, key["VARIABLE_Y"])
    if naive:
        pooled = ols(y, [t])[0][1]
        return {"EFFECT_GROUP_1": pooled, "EFFECT_GROUP_2": pooled}
    out = {}
    for g in ("GROUP_1", "GROUP_2"):
        lo, hi = key[g]
        m = (age >= lo) & (age < hi)
        coef = ols(y[m], [t[m], x2[m]])[0]
        out[f"EFFECT_{g}"] = coef[1]
        if g == "GROUP_2":
            out["X2_EFFECT_GROUP_2"] = coef[2]
    return out


ANALYSES = {
    "simpson_paradox": simpson,
    "berkson_paradox": berkson,
    "observational_vs_experimental_reasoning": observational,
    "casual_effect": effect,
    "counterfactual_reasoning": counterfactual,
    "necessity_sufficiency": necessity,
    "mediation_outcome_confounder": mediation,
    "sequential_mediator": mediation,
    "treatment_mediator": interaction,
    "causal_direction_iv": iv_direction,
    "dag_structure_markequi": markov_class,
    "population_shift": by_group,
    "temporal_stability": by_group,
    "moderation_effect": moderation,
    "domain_shift": domain,
}


def analyse(challenge, data, key, naive=False):
    """The answer-key quantities of ``challenge`` recomputed from ``data`` (floats, strings, or lists
    of strings)."""
    if challenge not in ANALYSES:
        raise ValueError(f"challenge: no reference analysis for {challenge!r}")
    out = ANALYSES[challenge](data, key, naive)
    return {k: (v if isinstance(v, (str, list)) else float(v)) for k, v in out.items()}


def report(challenge, data, key, naive=False):
    """Print one ``FIELD: value`` line per quantity (numbers to 4 decimals), and the necessity and
    sufficiency verdicts as sentences."""
    out = analyse(challenge, data, key, naive)
    for name, v in out.items():
        print(f"{name}: {round(v, 4) if isinstance(v, float) else v}")
    if challenge == "necessity_sufficiency":
        for field, what in (("IS_NECESSARY", "necessary"), ("IS_SUFFICIENT", "sufficient")):
            print(f"{key['VARIABLE_X']} {out[field]} globally {what}")

"""Our data-generating processes, questions and rubrics for the 15 challenges (wording ours; answer-key
fields named as in the authors' ``answer_key.json`` files where they have the quantity).

Each process returns ``(data, key)``. Keys are the generating process's own quantities, computed
exactly: rates of tables built cell by cell (Simpson, Berkson, observational), structural coefficients
(regressions: the noise is drawn orthogonal to the regressors the key's estimand adjusts for, so least
squares on the unrounded data returns the coefficient itself; the CSV keeps 3 decimals), closed-form
effects (counterfactual: ``3*theta1 + 3*theta2`` and its confounded conditional counterpart), and
structural facts (necessity/sufficiency, edge direction, Markov equivalence class).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

Key = dict[str, Any]


def _orth(rng: np.random.Generator, sd: float, *columns: np.ndarray) -> np.ndarray:
    """Gaussian noise of standard deviation ``sd``, exactly orthogonal to an intercept and ``columns``."""
    n = len(columns[0]) if columns else 0
    e = rng.normal(size=n)
    x = np.column_stack([np.ones(n), *columns])
    e -= x @ np.linalg.lstsq(x, e, rcond=None)[0]
    return e * (sd / e.std())


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-z))


def _u(rng: np.random.Generator, lo: float, hi: float, digits: int = 2) -> float:
    return round(float(rng.uniform(lo, hi)), digits)


def _frame(columns: dict[str, np.ndarray], digits: int = 3) -> pd.DataFrame:
    df = pd.DataFrame(columns)
    floats = df.select_dtypes("float").columns
    df[floats] = df[floats].round(digits)
    return df


def _shuffle(rng: np.random.Generator, df: pd.DataFrame) -> pd.DataFrame:
    return df.iloc[rng.permutation(len(df))].reset_index(drop=True)


def _cells(spec: list[tuple[dict[str, Any], int]]) -> pd.DataFrame:
    """Rows repeating each value dict its count of times."""
    return pd.DataFrame([v for v, n in spec for _ in range(n)])


# ---------------------------------------------------------------- confounding and selection
def simpson(rng, names) -> tuple[pd.DataFrame, Key]:
    """Treatment harmful within both strata of the confounder, beneficial overall: the treated sit
    mostly in the stratum with the high base rate. Cell counts are multiples of 20 and rates multiples
    of 0.05, so every rate of the key is exact."""
    t, o, c, l1, l2 = names
    base1, base2 = rng.choice([0.25, 0.3, 0.35]), rng.choice([0.7, 0.75, 0.8])
    harm = rng.choice([0.05, 0.1])
    big, small = 20 * int(rng.integers(15, 25)), 20 * int(rng.integers(3, 6))
    spec = []
    for level, base, n_yes, n_no in ((l1, base1, small, big), (l2, base2, big, small)):
        for arm, n, rate in (("Yes", n_yes, base - harm), ("No", n_no, base)):
            k = int(round(rate * n))
            spec += [({t: arm, c: level, o: 1}, k), ({t: arm, c: level, o: 0}, n - k)]
    df = _cells(spec)
    df["Noise"] = rng.normal(size=len(df)).round(2)
    df = _shuffle(rng, df)
    key = {"TREATMENT": t, "OUTCOME": o, "CONFOUNDER": c, "LEVEL1": l1, "LEVEL2": l2}
    yes = df[t] == "Yes"
    key["OVERALL_P_YES"], key["OVERALL_P_NO"] = df.loc[yes, o].mean(), df.loc[~yes, o].mean()
    for name, base in (("LEVEL1", base1), ("LEVEL2", base2)):
        key[f"P_{name}_YES"], key[f"P_{name}_NO"] = base - harm, base
    word = "beneficial" if key["OVERALL_P_YES"] > key["OVERALL_P_NO"] else "harmful"
    key.update(OVERALL_DIRECTION=word, DIRECTION_LEVEL1="harmful", DIRECTION_LEVEL2="harmful")
    return df, _rounded(key, TOLERANCE=0.02)


def berkson(rng, names) -> tuple[pd.DataFrame, Key]:
    """X and Y independent with P(X=1) = P(Y=1) = p in the whole population (exact counts out of
    1,000); selection into the collider favours X or Y, so among the selected they look negatively
    related. The full population is in the data with the collider column."""
    x, y, s = names
    p = float(rng.choice([0.3, 0.4, 0.5]))
    sel = {(1, 1): rng.choice([0.9, 1.0]), (1, 0): rng.choice([0.6, 0.7]), (0, 1): rng.choice([0.6, 0.7])}
    sel[(0, 0)] = rng.choice([0.1, 0.2])
    spec, n_sel = [], {}
    for (vx, vy), frac in sel.items():
        n = int(round(1000 * (p if vx else 1 - p) * (p if vy else 1 - p)))
        k = int(round(frac * n))
        n_sel[(vx, vy)] = k
        spec += [({x: vx, y: vy, s: 1}, k), ({x: vx, y: vy, s: 0}, n - k)]
    df = _shuffle(rng, _cells(spec))
    naive1 = n_sel[(1, 1)] / (n_sel[(1, 1)] + n_sel[(1, 0)])
    naive2 = n_sel[(0, 1)] / (n_sel[(0, 1)] + n_sel[(0, 0)])
    key = {
        "VARIABLE_X": x,
        "VARIABLE_Y": y,
        "COLLIDER_VARIABLE": s,
        "ASSUMPTION_INDEPENDENCE": "independent",
        "TRUE_RELATIONSHIP": "no association",
        "NAIVE_CONDITIONAL_1": naive1,
        "NAIVE_CONDITIONAL_2": naive2,
        "CORRECTED_CONDITIONAL_1": p,
        "CORRECTED_CONDITIONAL_2": p,
        "CORRECTION_METHOD": "the unselected population (inverse probability of selection weighting)",
    }
    return df, _rounded(key, TOLERANCE=0.02)


# ---------------------------------------------------------------- interventions
def observational(rng, names) -> tuple[pd.DataFrame, Key]:
    """Four strata of two binary confounders; treatment uptake rises with the stratum's base rate, the
    effect within every stratum is ``tau`` (0 or +-0.1). Counts make every rate exact, so the
    standardised risk difference equals ``tau`` exactly."""
    t, o, c1, c2, i1, i2 = names
    tau = float(rng.choice([0.0, 0.1, -0.1]))
    spec = []
    bases = float(rng.choice([0.2, 0.25, 0.3])) + np.array([0.0, 0.15, 0.3, 0.45])
    uptake = (0.1, 0.3, 0.7, 0.9)
    for s, (base, up) in enumerate(zip(bases, uptake)):
        n = 200 * int(rng.integers(1, 3))
        for arm, frac, rate in ((1, up, base + tau), (0, 1 - up, base)):
            m = int(round(frac * n))
            k = int(round(rate * m))
            v = {t: arm, c1: s // 2, c2: s % 2}
            spec += [({**v, o: 1}, k), ({**v, o: 0}, m - k)]
    df = _cells(spec)
    df[i1] = rng.integers(0, 2, len(df))
    df[i2] = rng.choice(["Low", "Mid", "High"], len(df))
    df = _shuffle(rng, df[[t, o, c1, c2, i1, i2]])
    yes = df[t] == 1
    p1, p0 = df.loc[yes, o].mean(), df.loc[~yes, o].mean()
    key = {
        "TREATMENT": t,
        "OUTCOME": o,
        "TRUE_CONFOUNDERS": [c1, c2],
        "IRRELEVANT_CONFOUNDERS": [i1, i2],
        "OVERALL_DIRECTION": "beneficial" if p1 > p0 else "harmful",
        "ADJUSTED_DIRECTION": "no effect" if tau == 0 else ("beneficial" if tau > 0 else "harmful"),
        "OVERALL_P_YES": p1,
        "OVERALL_P_NO": p0,
        "ADJUSTED_P_DIFF": tau,
    }
    return df, _rounded(key, TOLERANCE=0.02)


def effect(rng, names) -> tuple[pd.DataFrame, Key]:
    """Time-varying confounding: baseline L0 -> first treatment A1 -> follow-up L1 -> second treatment
    A2; the outcome is linear in (A2, L0, A1, L1) with A2's coefficient ``beta`` (the ATE of A2)."""
    a2, y, l0, a1, l1, junk = names
    n = 800
    x0 = rng.normal(size=n)
    t1 = (rng.random(n) < _sigmoid(0.8 * x0)).astype(int)
    x1 = 0.8 * x0 - 0.7 * t1 + rng.normal(0, 0.5, n)
    t2 = (rng.random(n) < _sigmoid(1.5 * x1)).astype(int)
    noise = rng.normal(size=n)
    beta = _u(rng, 0.2, 0.6)
    out = beta * t2 + 0.8 * x0 + 0.4 * t1 + 1.0 * x1 + _orth(rng, 0.3, t2, x0, t1, x1)
    df = _frame({l0: x0, a1: t1, l1: x1, a2: t2, y: out, junk: noise})
    key = {
        "TREATMENT": a2,
        "OUTCOME": y,
        "TRUE_CONFOUNDERS": [l0, a1, l1],
        "IRRELEVANT_FEATURES": [junk],
        "CAUSAL_METHOD": ["regression adjustment", "IPTW", "doubly robust"],
        "CAUSAL_ESTIMAND": "ATE",
        "TRUE_CAUSAL_EFFECT": beta,
    }
    return df, _rounded(key, TOLERANCE=0.05)


# ---------------------------------------------------------------- counterfactuals
def counterfactual(rng, names) -> tuple[pd.DataFrame, Key]:
    """C ~ N(0,1), X = -a C + N(0,1), Y = th1 X + th2 X^2 + b C + noise (orthogonal to X, X^2, C),
    D = Y + noise.
    ATE(-1 -> 2) = 3 th1 + 3 th2; the observed difference E[Y|X=2] - E[Y|X=-1] adds
    3 b rho with rho = -a / (a^2 + 1) (Gaussian regression of C on X)."""
    x, y, c, d = names
    n = 2000
    a, th1, th2, b = _u(rng, 0.8, 1.2), _u(rng, 0.2, 0.6), _u(rng, 0.1, 0.3), _u(rng, 1.0, 1.5)
    conf = rng.normal(size=n)
    dose = -a * conf + rng.normal(size=n)
    out = th1 * dose + th2 * dose**2 + b * conf + _orth(rng, 0.5, dose, dose**2, conf)
    df = _frame({c: conf, x: dose, y: out, d: out + rng.normal(0, 0.5, n)})
    ate = 3 * th1 + 3 * th2
    key = {
        "VARIABLE_X": x,
        "VARIABLE_Y": y,
        "CONFOUNDER": c,
        "DOWNSTREAM_VAR": d,
        "DOSE_BEFORE": -1,
        "DOSE_AFTER": 2,
        "CONDITIONAL_DIFFERENCE": ate + 3 * b * (-a / (a**2 + 1)),
        "ATE": ate,
        "CORRECTION_METHOD": "Regression Adjustment",
    }
    return df, _rounded(key, TOLERANCE=0.5)


def necessity(rng, names) -> tuple[pd.DataFrame, Key]:
    """Binary X, contexts C1, C2 ~ U(0, 1.5), deterministic Y; threshold 1.5. Two mechanisms (drawn):
    Y = X (C1 + C2) (necessary, not sufficient) or Y = 2X + C1 C2 (sufficient, not necessary); in
    both X raises Y, so reading the association as "necessary and sufficient" is wrong once."""
    x, c1, c2, y = names
    n = 600
    kind = int(rng.integers(2))
    vx = rng.integers(0, 2, n)
    u1, u2 = rng.uniform(0, 1.5, n).round(3), rng.uniform(0, 1.5, n).round(3)
    out = (vx * (u1 + u2), 2 * vx + u1 * u2)[kind]
    df = _frame({x: vx, c1: u1, c2: u2, y: out})
    nec, suf = (("is", "is not"), ("is not", "is"))[kind]
    key = {
        "VARIABLE_X": x,
        "CONTEXT_1": c1,
        "CONTEXT_2": c2,
        "VARIABLE_Y": y,
        "IS_NECESSARY": nec,
        "IS_SUFFICIENT": suf,
        "THRESHOLD": 1.5,
    }
    return df, key


# ---------------------------------------------------------------- mediation
def _confounded_treatment(rng, n):
    conf = rng.normal(size=(2, n))
    t = (rng.random(n) < _sigmoid(0.9 * conf[0] + 0.9 * conf[1])).astype(int)
    return conf, t


def _mediation_key(df, names, conf_names, tau, **extra) -> Key:
    t, y = names
    yes = df[t] == 1
    m1, m0 = df.loc[yes, y].mean(), df.loc[~yes, y].mean()
    return {
        "TREATMENT": t,
        "OUTCOME": y,
        "TRUE_CONFOUNDERS": conf_names,
        **extra,
        "OVERALL_DIRECTION": "positive" if m1 > m0 else "negative",
        "ADJUSTED_DIRECTION": "positive" if tau > 0 else "negative",
        "OVERALL_MEAN_TREATMENT": m1,
        "OVERALL_MEAN_NO_TREATMENT": m0,
        "ADJUSTED_TREATMENT_EFFECT": tau,
    }


def mediation(rng, names) -> tuple[pd.DataFrame, Key]:
    """Confounders C1, C2 -> T; T -> M -> Y and T -> Y. Total effect ``d + a b`` is the key
    (adjust for the confounders, not for the mediator)."""
    t, y, c1, c2, m, junk = names
    n = 600
    conf, vt = _confounded_treatment(rng, n)
    a, b, d = _u(rng, 1.0, 2.0), _u(rng, 0.5, 1.5), _u(rng, -1.5, 1.5)
    vm = 5 + a * vt + 0.5 * conf[0] + _orth(rng, 1.0, vt, *conf)
    out = 50 + d * vt + b * vm + 2.0 * conf[0] + 2.0 * conf[1] + _orth(rng, 1.0, vt, *conf, vm)
    df = _frame({t: vt, c1: conf[0], c2: conf[1], m: vm, y: out, junk: rng.normal(size=n)})
    key = _mediation_key(df, (t, y), [c1, c2], d + a * b, IRRELEVANT_CONFOUNDERS=[junk], MEDIATOR=m)
    return df, _rounded(key, TOLERANCE=0.05)


def sequential(rng, names) -> tuple[pd.DataFrame, Key]:
    """T -> M1 -> M2 -> Y plus T -> Y, confounders C1, C2: total effect ``d + a1 a2 b``."""
    t, y, c1, c2, m1, m2, junk = names
    n = 600
    conf, vt = _confounded_treatment(rng, n)
    a1, a2, b, d = _u(rng, 1.0, 2.0), _u(rng, 0.5, 1.0), _u(rng, 1.0, 2.0), _u(rng, -1.0, 1.0)
    v1 = 3 + a1 * vt + 0.5 * conf[0] + _orth(rng, 1.0, vt, *conf)
    v2 = 2 + a2 * v1 + _orth(rng, 1.0, vt, *conf, v1)
    out = 40 + d * vt + b * v2 + 2.0 * conf[0] + 1.5 * conf[1] + _orth(rng, 1.0, vt, *conf, v1, v2)
    df = _frame({t: vt, m1: v1, m2: v2, y: out, c1: conf[0], c2: conf[1], junk: rng.normal(size=n)})
    key = _mediation_key(
        df, (t, y), [c1, c2], d + a1 * a2 * b, MEDIATORS=[m1, m2], IRRELEVANT_VARIABLES=[junk]
    )
    return df, _rounded(key, TOLERANCE=0.05)


def interaction(rng, names) -> tuple[pd.DataFrame, Key]:
    """T -> M with a T x M interaction on Y: Y = bT T + bM M + bTM T M + confounders + noise; the key
    holds bT and bTM (the coefficients of the interaction regression)."""
    t, y, c1, c2, m, junk = names
    n = 600
    conf, vt = _confounded_treatment(rng, n)
    a, bt, bm, btm = _u(rng, 1.0, 2.0), _u(rng, 0.5, 2.0), _u(rng, 0.5, 1.5), _u(rng, 0.5, 1.5)
    vm = 2 + a * vt + 0.5 * conf[0] + _orth(rng, 1.0, vt, *conf)
    out = 100 + bt * vt + bm * vm + btm * vt * vm + 2.0 * conf[0] + 2.0 * conf[1]
    out = out + _orth(rng, 1.0, vt, vm, vt * vm, *conf)
    df = _frame({t: vt, m: vm, y: out, c1: conf[0], c2: conf[1], junk: rng.normal(size=n)})
    key = _mediation_key(
        df, (t, y), [c1, c2], bt, MEDIATOR=m, IRRELEVANT_VARIABLES=[junk], INTERACTION_TERM=f"{t}*{m}"
    )
    key["INTERACTION_EFFECT"] = btm
    return df, _rounded(key, TOLERANCE=0.05)


# ---------------------------------------------------------------- discovery
def iv_direction(rng, names) -> tuple[pd.DataFrame, Key]:
    """Z1 -> X1, Z2 -> X2 and one edge between X1 and X2 (its direction drawn). The parent's noise is
    orthogonal to both instruments, so the child's instrument has an exactly zero coefficient in the
    parent's regression."""
    z1, z2, x1, x2 = names
    n = 800
    u1, u2 = rng.normal(size=n), rng.normal(size=n)
    forward = bool(rng.integers(2))
    g1, g2, beta = _u(rng, 0.8, 1.2), _u(rng, 0.8, 1.2), _u(rng, 0.6, 1.0)
    if forward:
        v1 = g1 * u1 + _orth(rng, 1.0, u1, u2)
        v2 = beta * v1 + g2 * u2 + _orth(rng, 1.0, u1, u2, v1)
    else:
        v2 = g2 * u2 + _orth(rng, 1.0, u1, u2)
        v1 = beta * v2 + g1 * u1 + _orth(rng, 1.0, u1, u2, v2)
    df = _frame({z1: u1, z2: u2, x1: v1, x2: v2})
    edge = f"{x1}->{x2}" if forward else f"{x2}->{x1}"
    return df, {
        "VARIABLE_Z1": z1,
        "VARIABLE_Z2": z2,
        "VARIABLE_X1": x1,
        "VARIABLE_X2": x2,
        "TRUE_EDGES": [edge],
        "TRUE_EDGE": edge,
    }


def markov(rng, names) -> tuple[pd.DataFrame, Key]:
    """Three variables as a chain, a fork or a collider (drawn). In the chain and the fork X1 and X3 are
    exactly independent given X2 (noise orthogonal to the parents); in the collider X1 and X3 are
    exactly uncorrelated. The key lists the Markov equivalence class."""
    a, b, c = names
    n = 800
    kind = ("chain", "fork", "collider")[int(rng.integers(3))]
    w1, w2 = _u(rng, 0.7, 1.2), _u(rng, 0.7, 1.2)
    if kind == "chain":
        va = rng.normal(size=n)
        vb = w1 * va + _orth(rng, 1.0, va)
        vc = w2 * vb + _orth(rng, 1.0, va, vb)
    elif kind == "fork":
        vb = rng.normal(size=n)
        va = w1 * vb + _orth(rng, 1.0, vb)
        vc = w2 * vb + _orth(rng, 1.0, vb, va)
    else:
        va = rng.normal(size=n)
        vc = _orth(rng, 1.0, va)
        vb = w1 * va + w2 * vc + rng.normal(size=n)
    df = _frame({a: va, b: vb, c: vc})
    chain, back, fork, coll = (
        f"{a} -> {b} -> {c}",
        f"{c} -> {b} -> {a}",
        f"{a} <- {b} -> {c}",
        f"{a} -> {b} <- {c}",
    )
    true = {"chain": chain, "fork": fork, "collider": coll}[kind]
    cls = [coll] if kind == "collider" else [chain, back, fork]
    key = {
        "VARIABLE_X1": a,
        "VARIABLE_X2": b,
        "VARIABLE_X3": c,
        "TRUE_GRAPH": [true],
        "EQUIVALENT_GRAPHS": cls,
    }
    for i in range(3):
        key[f"EQUIV_GRAPH_{i + 1}"] = cls[i] if i < len(cls) else ""
    key["INDEPENDENCE"] = f"{a} independent of {c}" + ("" if kind == "collider" else f" given {b}")
    return df, key


# ---------------------------------------------------------------- external validity
def _slopes(rng):
    hi = _u(rng, 0.8, 1.4)
    return hi, round(hi * _u(rng, 0.3, 0.6), 2)


def population(rng, names) -> tuple[pd.DataFrame, Key]:
    """Two populations A and B (300 rows each): Y = beta_g X2 + 0.5 X1 + noise, X2 depends on X1; the
    noise is orthogonal to (X2, X1) within each population."""
    u, x1, x2, y = names
    eff = dict(zip("AB", _slopes(rng)))
    parts = []
    for g, shift in (("A", 0.5), ("B", -0.5)):
        s = rng.normal(shift, 1.0, 300)
        p = 1 + 0.5 * s + rng.normal(size=300)
        parts.append(pd.DataFrame({u: g, x1: s, x2: p, y: 2 + eff[g] * p + 0.5 * s + _orth(rng, 0.5, p, s)}))
    df = _shuffle(rng, _frame(pd.concat(parts, ignore_index=True).to_dict("list")))
    key = {
        "VARIABLE_U": u,
        "VARIABLE_X1": x1,
        "VARIABLE_X2": x2,
        "VARIABLE_Y": y,
        "EFFECT_A": eff["A"],
        "EFFECT_B": eff["B"],
    }
    return df, _rounded(key, TOLERANCE=0.1)


def temporal(rng, names) -> tuple[pd.DataFrame, Key]:
    """Two periods of 400 time steps: Y = beta_p X2 + noise orthogonal to X2 within each period."""
    x2, y, per = names
    eff = _slopes(rng)
    parts = []
    for p, beta in zip((1, 2), eff):
        v = rng.normal(size=400)
        y_p = 1 + beta * v + _orth(rng, 0.5, v)
        parts.append({"time": np.arange(400) + 400 * (p - 1), x2: v, y: y_p, per: np.full(400, p)})
    df = _frame({k: np.concatenate([p[k] for p in parts]) for k in parts[0]})
    key = {
        "VARIABLE_X1": "time",
        "VARIABLE_X2": x2,
        "VARIABLE_Y": y,
        "VARIABLE_T": per,
        "EFFECT_A": eff[0],
        "EFFECT_B": eff[1],
    }
    return df, _rounded(key, TOLERANCE=0.1)


def moderation(rng, names) -> tuple[pd.DataFrame, Key]:
    """Y = bD D + bS S + bDS D S + noise with S, D ~ U(0, 2); the noise is orthogonal to (D, S, DS)."""
    s, d, y = names
    n = 500
    vs, vd = rng.uniform(0, 2, n), rng.uniform(0, 2, n)
    bd, bs, bds = _u(rng, 0.8, 1.2), _u(rng, -0.7, -0.3), _u(rng, -1.3, -0.9)
    out = 5 + bd * vd + bs * vs + bds * vd * vs + _orth(rng, 0.5, vd, vs, vd * vs)
    df = _frame({s: vs, d: vd, y: out})
    key = {
        "VARIABLE_X1": s,
        "VARIABLE_X2": d,
        "VARIABLE_Y": y,
        "DOSAGE_COEF": bd,
        "SEVERITY_COEF": bs,
        "INTERACTION_COEF": bds,
    }
    return df, _rounded(key, TOLERANCE=0.1)


def domain(rng, names) -> tuple[pd.DataFrame, Key]:
    """Ages 30-70. Under 50: Y = b1 T + noise, X2 plays no part. From 50: the dose follows X2 and
    Y = b2 T + c X2 + noise, so a prediction for a 65-year-old needs X2. Noise orthogonal to (T, X2)
    within each group."""
    age, x2, t, y = names
    b1, b2, c = _u(rng, 1.0, 2.0), _u(rng, 0.3, 0.8), _u(rng, 1.0, 2.0)
    parts = []
    for lo, hi, young in ((30, 49.99, True), (50, 70, False)):
        va, vx = rng.uniform(lo, hi, 400), rng.normal(size=400)
        vt = rng.uniform(0, 2, 400) if young else 1 + 0.5 * vx + rng.uniform(-0.5, 0.5, 400)
        mean = (b1 * vt) if young else (b2 * vt + c * vx)
        parts.append({age: va, x2: vx, t: vt, y: 3 + mean + _orth(rng, 0.5, vt, vx)})
    df = _shuffle(rng, _frame({k: np.concatenate([p[k] for p in parts]) for k in parts[0]}))
    key = {
        "VARIABLE_X1": age,
        "VARIABLE_X2": x2,
        "VARIABLE_T": t,
        "VARIABLE_Y": y,
        "GROUP_1": [30, 50],
        "GROUP_2": [50, 70],
        "EFFECT_GROUP_1": b1,
        "EFFECT_GROUP_2": b2,
        "X2_EFFECT_GROUP_2": c,
    }
    return df, _rounded(key, TOLERANCE=0.1)


def _rounded(key: Key, **extra) -> Key:
    """Key numbers as plain floats to 4 decimals (the tolerance dwarfs the rounding)."""
    out = {k: (round(float(v), 4) if isinstance(v, (float, np.floating)) else v) for k, v in key.items()}
    return {**out, **extra}

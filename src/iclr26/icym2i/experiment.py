"""Headline experiment: the authors' synthetic settings under MCAR / MAR / MNAR missingness.

Two data sets, both from the authors' repository (``experiments/run_logic.ipynb``,
``experiments/utils_generation.py``):

- **Logic gates**: x1, x2 ~ Bernoulli(0.5), y = AND / OR / XOR(x1, x2), 10,000 samples. Missingness of x2
  (50 %) as in the notebook: P(observed) = 0.5 (MCAR), 0.2 + 0.6 x1 (MAR), 0.2 + 0.6 x2 (MNAR). The
  missingness model is a logistic regression on x1 (what is always observed), weights stabilised.
  Quantities: the BROJA PID (redundancy, unique1, unique2, synergy) and I(Y; X2 | X1), in bits.
- **Blobs with label noise**: ``make_blobs`` with 10 centres in 30 dimensions split into latents z1, z2, zc;
  x1 = (z1, zc), x2 = (z2, zc); the label mixes a share of z1, z2 and zc with cluster-specific
  coefficients and 20 % of labels flipped. MAR missingness depends on x1 (through a score of x1 that
  predicts y), MNAR on the same kind of score of x2. Quantities: AUROC of models on x1, x2 and both, the
  AUROC gain of adding x2, the model-based I(Y; X2 | X1) and the PID of the binned unimodal predictions.

For each setting: the target-environment truth (full data, no missingness), the naive estimate (complete
cases only) and the ICYM2I estimate (complete cases, inverse probability weighted, models trained with
the same weights), with percentile bootstrap 95 % intervals.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np
from scipy.special import expit
from scipy.stats import binomtest
from sklearn.datasets import make_blobs
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from iclr26.claims import Claim, Result
from iclr26.runtime import RunContext
from iclr26.uncertainty import bootstrap as bootstrap_units

from . import (
    MECHANISMS,
    PID_KEYS,
    bootstrap,
    broja_pid,
    conditional_mi_from_samples,
    discretize,
    fit_missingness_model,
    fit_weighted,
    pid_from_samples,
    simulate_missingness,
    weighted_metric,
)

GATES = {
    "AND": lambda a, b: a & b,
    "OR": lambda a, b: a | b,
    "XOR": lambda a, b: a ^ b,
}
_H = float(-(0.25 * np.log2(0.25) + 0.75 * np.log2(0.75)))  # H(AND) = 0.811 bits
#: Population PID of the gates with uniform inputs (bits): redundancy, unique1, unique2, synergy.
GATE_PID = {
    "AND": (_H - 0.5, 0.0, 0.0, 0.5),
    "OR": (_H - 0.5, 0.0, 0.0, 0.5),
    "XOR": (0.0, 0.0, 0.0, 1.0),
}
GATE_QUANTITIES = (*PID_KEYS, "cmi")
BLOB_QUANTITIES = ("auroc_x1", "auroc_x2", "auroc_x12", "gain_auroc", "cmi", *PID_KEYS)
AUROC_QUANTITIES = ("auroc_x1", "auroc_x2", "auroc_x12", "gain_auroc")
SMALL = {
    "n_gates": 10_000,
    "n_blobs": 20_000,
    "n_bootstrap": 100,
    "blob_settings": [(0.5, 0.5), (0.0, 0.0), (0.2, 0.6)],
}
MEDIUM = {
    "n_gates": 10_000,
    "n_blobs": 40_000,
    "n_bootstrap": 300,
    "blob_settings": [(0.5, 0.5), (0.0, 0.0), (0.2, 0.6), (0.6, 0.2), (0.0, 1.0), (0.3, 0.3)],
}
N_BINS = 6
MAR_STRENGTH = 1.5


# --------------------------------------------------------------------------------------- logic gates
def _gate_stats(x1: np.ndarray, x2: np.ndarray, y: np.ndarray, w: np.ndarray | None) -> dict[str, float]:
    out = pid_from_samples(x1, x2, y, w).as_dict()
    stats = {k: out[k] for k in PID_KEYS}
    stats["cmi"] = conditional_mi_from_samples(x1, x2, y, w)
    return stats


def _gate_naive_stat(idx: np.ndarray, x1: np.ndarray, x2: np.ndarray, y: np.ndarray) -> dict[str, float]:
    return _gate_stats(x1[idx], x2[idx], y[idx], None)


def _gate_ipw_stat(idx: np.ndarray, x1: np.ndarray, x2: np.ndarray, y: np.ndarray, obs: np.ndarray):
    # The missingness model is refitted on every resample, so its uncertainty is in the interval.
    o = obs[idx]
    weights = fit_missingness_model(x1[idx], o)
    return _gate_stats(x1[idx][o], x2[idx][o], y[idx][o], weights.observed_weights)


def _run_gates(ctx: RunContext, cfg: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    rows, miss_rows = [], []
    n, n_boot = cfg["n_gates"], cfg["n_bootstrap"]
    jobs = [(g, m) for g in GATES for m in MECHANISMS]
    data = {}
    for gi, g in enumerate(GATES):
        rng = ctx.rng(100 + gi)
        x1 = (rng.random(n) < 0.5).astype(int)
        x2 = (rng.random(n) < 0.5).astype(int)
        data[g] = (x1, x2, GATES[g](x1, x2))
    for ji, (g, mech) in enumerate(ctx.progress(jobs, total=len(jobs), desc="logic gates")):
        x1, x2, y = data[g]
        rng = ctx.rng(200 + ji)
        driver = {"MCAR": None, "MAR": x1, "MNAR": x2}[mech]
        miss = simulate_missingness(mech, n_samples=n, driver=driver, rate=0.5, random_state=rng)
        obs = miss.observed
        truth = _gate_stats(x1, x2, y, None)
        naive = bootstrap(
            partial(_gate_naive_stat, x1=x1[obs], x2=x2[obs], y=y[obs]),
            int(obs.sum()),
            n_bootstrap=n_boot,
            random_state=ctx.rng(300 + ji),
        )
        ipw = bootstrap(
            partial(_gate_ipw_stat, x1=x1, x2=x2, y=y, obs=obs),
            n,
            n_bootstrap=n_boot,
            random_state=ctx.rng(400 + ji),
        )
        weights = fit_missingness_model(x1, obs)
        miss_rows.append(
            {
                "data": "gates",
                "setting": g,
                "mechanism": mech,
                "observed_rate": float(obs.mean()),
                "effective_sample_size": weights.effective_sample_size,
                "n_complete": int(obs.sum()),
            }
        )
        pop = dict(zip(PID_KEYS, GATE_PID[g]))
        for q in GATE_QUANTITIES:
            rows.append(_row("gates", g, mech, q, truth[q], naive[q], ipw[q], population=pop.get(q)))
    return rows, miss_rows


def _row(data: str, setting: str, mech: str, q: str, truth: float, naive: Any, ipw: Any, population=None):
    row = {
        "data": data,
        "setting": setting,
        "mechanism": mech,
        "quantity": q,
        "truth": float(truth),
        "naive": naive.value,
        "naive_lo": naive.ci_low,
        "naive_hi": naive.ci_high,
        "ipw": ipw.value,
        "ipw_lo": ipw.ci_low,
        "ipw_hi": ipw.ci_high,
        "naive_error": naive.value - float(truth),
        "ipw_error": ipw.value - float(truth),
        "truth_in_naive_ci": naive.covers(float(truth)),
        "truth_in_ipw_ci": ipw.covers(float(truth)),
    }
    if population is not None:
        row["population"] = float(population)
    return row


# --------------------------------------------------------------------------------------------- blobs
def _blob_data(n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    dims = 10
    data, cluster = make_blobs(n, 3 * dims, centers=10, random_state=seed, center_box=(-1.0, 1.0))
    data = StandardScaler().fit_transform(data)
    return data[:, :dims], data[:, dims : 2 * dims], data[:, 2 * dims :], cluster


def _blob_label(z1, z2, zc, cluster, r1: float, r2: float, rng: np.random.Generator, flip: float = 0.2):
    dims = z1.shape[1]
    a, b = int(round(dims * r1)), int(round(dims * r2))
    x3 = np.concatenate([z1[:, :a], z2[:, :b], zc[:, a + b :]], axis=1)
    coeffs = rng.random((10, x3.shape[1]))
    y = (expit((x3 * coeffs[cluster] * 2).sum(axis=1)) >= 0.5).astype(int)
    flipped = rng.random(y.shape[0]) < flip
    return np.where(flipped, 1 - y, y)


def _blob_stats(y, preds: dict[str, np.ndarray], w) -> dict[str, float]:
    s = {f"auroc_{k}": weighted_metric(y, preds[k], "auroc", w) for k in ("x1", "x2", "x12")}
    s["gain_auroc"] = s["auroc_x12"] - s["auroc_x1"]
    ww = np.ones(y.shape[0]) if w is None else w
    lp1 = np.where(y == 1, np.log2(preds["x1"]), np.log2(1 - preds["x1"]))
    lp12 = np.where(y == 1, np.log2(preds["x12"]), np.log2(1 - preds["x12"]))
    s["cmi"] = float((ww * (lp12 - lp1)).sum() / ww.sum())
    b1 = discretize(preds["x1"], N_BINS, value_range=(0.0, 1.0))
    b2 = discretize(preds["x2"], N_BINS, value_range=(0.0, 1.0))
    pid = pid_from_samples(b1, b2, y, w).as_dict()
    s.update({k: pid[k] for k in PID_KEYS})
    return s


def _blob_stat(idx: np.ndarray, y: np.ndarray, preds: dict[str, np.ndarray], w: np.ndarray | None):
    return _blob_stats(y[idx], {k: v[idx] for k, v in preds.items()}, None if w is None else w[idx])


def _predict(model_proto, views, y, train, w=None) -> dict[str, np.ndarray]:
    out = {}
    for k, X in views.items():
        model = fit_weighted(model_proto, X[train], y[train], None if w is None else w[train])
        out[k] = np.clip(model.predict_proba(X)[:, 1], 1e-6, 1 - 1e-6)
    return out


def _run_blobs(ctx: RunContext, cfg: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    rows, miss_rows = [], []
    n, n_boot = cfg["n_blobs"], cfg["n_bootstrap"]
    z1, z2, zc, cluster = _blob_data(n, ctx.seed)
    x1, x2 = np.concatenate([z1, zc], axis=1), np.concatenate([z2, zc], axis=1)
    views = {"x1": x1, "x2": x2, "x12": np.concatenate([x1, x2], axis=1)}
    lr = LogisticRegression(max_iter=5000)
    split = ctx.rng(500).random(n) < 0.5
    train, test = split, ~split
    jobs = [(s, m) for s in cfg["blob_settings"] for m in MECHANISMS]
    cache: dict[tuple[float, float], Any] = {}
    for ji, (setting, mech) in enumerate(ctx.progress(jobs, total=len(jobs), desc="blobs")):
        name = f"z1={setting[0]:.1f},z2={setting[1]:.1f}"
        if setting not in cache:
            y = _blob_label(z1, z2, zc, cluster, *setting, ctx.rng(600 + len(cache)))
            full = _predict(lr, views, y, train)
            truth = _blob_stats(y[test], {k: v[test] for k, v in full.items()}, None)
            # Missingness drivers: a score of x1 (MAR) or of x2 (MNAR) that predicts y.
            d1 = fit_weighted(lr, x1[train], y[train]).decision_function(x1)
            d2 = fit_weighted(lr, x2[train], y[train]).decision_function(x2)
            cache[setting] = (y, truth, d1, d2)
        y, truth, d1, d2 = cache[setting]
        driver = {"MCAR": None, "MAR": d1, "MNAR": d2}[mech]
        miss = simulate_missingness(
            mech, n_samples=n, driver=driver, rate=0.5, strength=MAR_STRENGTH, random_state=ctx.rng(700 + ji)
        )
        obs = miss.observed
        weights = fit_missingness_model(x1, obs)  # x1 is always observed; x2 is not
        w_all = np.where(obs, weights.weights, 1.0)
        tr_c, te_c = train & obs, test & obs
        naive_pred = _predict(lr, views, y, tr_c)
        ipw_pred = _predict(lr, views, y, tr_c, w_all)
        yt = y[te_c]
        wt = weights.weights[te_c]
        naive_test = {k: v[te_c] for k, v in naive_pred.items()}
        ipw_test = {k: v[te_c] for k, v in ipw_pred.items()}
        naive = bootstrap(
            partial(_blob_stat, y=yt, preds=naive_test, w=None),
            yt.shape[0],
            n_bootstrap=n_boot,
            random_state=ctx.rng(800 + ji),
            strata=yt,
        )
        ipw = bootstrap(
            partial(_blob_stat, y=yt, preds=ipw_test, w=wt),
            yt.shape[0],
            n_bootstrap=n_boot,
            random_state=ctx.rng(900 + ji),
            strata=yt,
        )
        miss_rows.append(
            {
                "data": "blobs",
                "setting": name,
                "mechanism": mech,
                "observed_rate": float(obs.mean()),
                "effective_sample_size": weights.effective_sample_size,
                "n_complete": int(obs.sum()),
            }
        )
        for q in BLOB_QUANTITIES:
            rows.append(_row("blobs", name, mech, q, truth[q], naive[q], ipw[q]))
    return rows, miss_rows


# ------------------------------------------------------------------------------------------ summary
def _mean_abs(rows, data, mech, key, quantities) -> float:
    vals = [
        abs(r[key])
        for r in rows
        if r["data"] == data and r["mechanism"] == mech and r["quantity"] in quantities
    ]
    return float(np.mean(vals)) if vals else float("nan")


def _coverage(rows, mech) -> float:
    vals = [r["truth_in_ipw_ci"] for r in rows if r["mechanism"] == mech]
    return float(np.mean(vals)) if vals else float("nan")


def _exact_gate_error() -> float:
    err = 0.0
    for g, f in GATES.items():
        p = np.zeros((2, 2, 2))
        for a in (0, 1):
            for b in (0, 1):
                p[a, b, f(a, b)] = 0.25
        pid = broja_pid(p).as_dict()
        err = max(err, max(abs(pid[k] - v) for k, v in zip(PID_KEYS, GATE_PID[g])))
    return err


def _plot(ctx: RunContext, rows: list[dict[str, Any]]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [
        ("gates", GATE_QUANTITIES, "logic gates: PID and I(Y;X2|X1) (bits)"),
        ("blobs", AUROC_QUANTITIES, "blobs: AUROC and AUROC gain"),
        ("blobs", ("cmi", *PID_KEYS), "blobs: I(Y;X2|X1) and PID (bits)"),
    ]
    fig, axes = plt.subplots(len(panels), len(MECHANISMS), figsize=(12, 11))
    for i, (data, qs, title) in enumerate(panels):
        for j, mech in enumerate(MECHANISMS):
            ax = axes[i, j]
            sel = [r for r in rows if r["data"] == data and r["mechanism"] == mech and r["quantity"] in qs]
            if not sel:
                continue
            t = np.array([r["truth"] for r in sel])
            for key, colour, dx in (("naive", "tab:red", -0.004), ("ipw", "tab:blue", 0.004)):
                v = np.array([r[key] for r in sel])
                err = np.array(
                    [[r[key] - r[f"{key}_lo"] for r in sel], [r[f"{key}_hi"] - r[key] for r in sel]]
                )
                span = max(t.max() - t.min(), 0.05)
                ax.errorbar(
                    t + dx * span,
                    v,
                    yerr=np.clip(err, 0, None),
                    fmt="o",
                    ms=4,
                    color=colour,
                    alpha=0.8,
                    label="naive (complete cases)" if key == "naive" else "IPW (ICYM2I)",
                )
            lo = min(t.min(), min(r["naive_lo"] for r in sel), min(r["ipw_lo"] for r in sel))
            hi = max(t.max(), max(r["naive_hi"] for r in sel), max(r["ipw_hi"] for r in sel))
            ax.plot([lo, hi], [lo, hi], "k--", lw=0.8)
            ax.set_title(f"{title}\n{mech}", fontsize=9)
            ax.set_xlabel("target-environment truth (full data)")
            if j == 0:
                ax.set_ylabel("estimate (95% bootstrap CI)")
            if i == 0 and j == 0:
                ax.legend(fontsize=8)
    fig.tight_layout()
    ctx.savefig(fig, "estimate_vs_truth.png")


def run(ctx: RunContext) -> Result:
    cfg = SMALL if ctx.small else MEDIUM
    # One BLAS thread: the logistic fits differ in the last bits with the thread count, and the binned PID
    # of a bootstrap resample can turn that into a different interval end (a coverage count moved by 2 of
    # 42 between 1 and 2 threads), so the result would depend on the machine and the executor.
    with threadpool_limits(limits=1, user_api="blas"):
        gate_rows, gate_miss = _run_gates(ctx, cfg)
        blob_rows, blob_miss = _run_blobs(ctx, cfg)
    rows = gate_rows + blob_rows
    _plot(ctx, rows)

    pid_q = PID_KEYS
    m = {}
    for data, qs, tag in (
        ("gates", pid_q, "gates_pid"),
        ("blobs", AUROC_QUANTITIES, "blobs_auroc"),
        ("blobs", pid_q, "blobs_pid"),
    ):
        for mech in MECHANISMS:
            m[f"{tag}_naive_mae_{mech}"] = _mean_abs(rows, data, mech, "naive_error", qs)
            m[f"{tag}_ipw_mae_{mech}"] = _mean_abs(rows, data, mech, "ipw_error", qs)
    for mech in MECHANISMS:
        m[f"ipw_coverage_{mech}"] = _coverage(rows, mech)
        m[f"naive_coverage_{mech}"] = float(
            np.mean([r["truth_in_naive_ci"] for r in rows if r["mechanism"] == mech])
        )
    m["exact_gate_pid_max_error"] = _exact_gate_error()

    scale_g = f"logic gates, n={cfg['n_gates']:,}, 50% missing, {cfg['n_bootstrap']} bootstrap resamples"
    scale_b = (
        f"blobs, n={cfg['n_blobs']:,} (half test), {len(cfg['blob_settings'])} label settings, "
        f"50% missing, {cfg['n_bootstrap']} bootstrap resamples"
    )
    qual = "qualitative (abstract): naive estimation biased; IPW correction"
    kw = {"n_boot": 2000, "seed": ctx.seed}

    def errs(data, qs, mech, key):
        """|error| per (setting, quantity), in a fixed order (the paired unit of the claims)."""
        sel = sorted(
            (r for r in rows if r["data"] == data and r["mechanism"] == mech and r["quantity"] in qs),
            key=lambda r: (r["setting"], r["quantity"]),
        )
        return np.array([abs(r[key]) for r in sel])

    def ratio_claim(statement, data, qs, num, den, op, ref, scale, what, **extra):
        a, b = errs(data, qs, *num), errs(data, qs, *den)
        est = bootstrap_units(
            lambda u, v: float(u.mean() / v.mean()), a, b, unit="(setting, quantity) pairs", **kw
        )
        return est.claim(
            statement,
            op,
            ref,
            paper=extra.pop("paper", qual),
            scale=scale,
            detail=f"{what}: {a.mean():.4f} / {b.mean():.4f}",
            **extra,
        )

    cov_rows = [r for r in rows if r["mechanism"] == "MAR"]
    k_cov = int(sum(r["truth_in_ipw_ci"] for r in cov_rows))
    cov_ci = binomtest(k_cov, len(cov_rows)).proportion_ci(0.95, method="wilson")
    claims = [
        Claim(
            "The BROJA PID of the logic gates is exact: AND/OR = 0.311 bits redundancy + 0.5 synergy; "
            "XOR is pure synergy (1 bit)",
            m["exact_gate_pid_max_error"],
            "<=",
            1e-3,
            paper="XOR: 1 bit synergy; AND/OR: R=0.311, S=0.5 (PID literature, used by the paper)",
            scale="exact gate tables",
            detail="max |our PID - known PID| over gates and terms (bits)",
            exact=True,
        ),
        ratio_claim(
            "Naive estimation of the PID is biased under missingness shift (MAR), beyond the no-shift (MCAR) "
            "sampling error",
            "gates",
            pid_q,
            ("MAR", "naive_error"),
            ("MCAR", "naive_error"),
            ">",
            2.0,
            scale_g,
            "mean |naive - truth| over gates x PID terms, MAR / MCAR",
        ),
        ratio_claim(
            "Naive estimation of performance is biased under missingness shift (MAR)",
            "blobs",
            AUROC_QUANTITIES,
            ("MAR", "naive_error"),
            ("MCAR", "naive_error"),
            ">",
            2.0,
            scale_b,
            "mean |naive - truth| over AUROC(x1), AUROC(x2), AUROC(x1,x2), AUROC gain, MAR / MCAR",
        ),
        ratio_claim(
            "IPW correction recovers the target-environment PID under MAR (bias reduced)",
            "gates",
            pid_q,
            ("MAR", "ipw_error"),
            ("MAR", "naive_error"),
            "<",
            0.5,
            scale_g,
            "mean |error| IPW / naive under MAR",
        ),
        ratio_claim(
            "IPW correction recovers target-environment performance under MAR (bias reduced)",
            "blobs",
            AUROC_QUANTITIES,
            ("MAR", "ipw_error"),
            ("MAR", "naive_error"),
            "<",
            0.5,
            scale_b,
            "mean |error| IPW / naive over AUROC quantities under MAR",
        ),
        ratio_claim(
            "IPW correction recovers the blob PID under MAR (bias reduced)",
            "blobs",
            pid_q,
            ("MAR", "ipw_error"),
            ("MAR", "naive_error"),
            "<",
            0.75,
            scale_b,
            f"mean |error| IPW / naive over PID terms of binned predictions under MAR (MCAR floor "
            f"{m['blobs_pid_naive_mae_MCAR']:.4f} bits); the bar 0.75 was set after seeing seeds 0-2",
            post_hoc=True,
        ),
        Claim(
            "Under MAR the IPW-corrected 95% intervals are calibrated: they cover the target-environment "
            "truth about 95% of the time (0.90-1.00)",
            k_cov / len(cov_rows),
            "within",
            0.95,
            tolerance=0.05,
            paper=qual,
            scale=f"{scale_g}; {scale_b}",
            detail=f"{k_cov} of {len(cov_rows)} (setting, quantity) pairs under MAR covered by the IPW CI;"
            f" naive CI covers {m['naive_coverage_MAR']:.2f}. The pairs share data, so the binomial interval"
            " is optimistic",
            interval=(float(cov_ci.low), float(cov_ci.high)),
            method=f"Wilson interval over {len(cov_rows)} (setting, quantity) pairs",
        ),
        ratio_claim(
            "Under MNAR (missingness driven by the unobserved modality's own score), IPW on the observed "
            "modality cannot remove the bias: its error stays well above its MAR error",
            "blobs",
            AUROC_QUANTITIES,
            ("MNAR", "ipw_error"),
            ("MAR", "ipw_error"),
            ">",
            2.0,
            scale_b,
            f"mean |IPW - truth| over AUROC quantities, MNAR / MAR (IPW CI coverage under MNAR "
            f"{m['ipw_coverage_MNAR']:.2f}; naive MNAR error {m['blobs_auroc_naive_mae_MNAR']:.4f})",
            paper="the paper's correction assumes MAR (missingness explained by observed covariates)",
        ),
    ]
    table_cols = (
        "data",
        "setting",
        "mechanism",
        "quantity",
        "truth",
        "naive",
        "naive_lo",
        "naive_hi",
        "ipw",
        "ipw_lo",
        "ipw_hi",
    )
    summary = [{k: (round(r[k], 4) if isinstance(r[k], float) else r[k]) for k in table_cols} for r in rows]
    ctx.save_json({"rows": rows, "missingness": gate_miss + blob_miss}, "estimates.json")
    notes = (
        "Truth = the quantity on the full data (target environment, no missingness); naive = complete cases; "
        "IPW = complete cases weighted by mean(observed) / P(observed | x1) from a logistic regression on x1 "
        "(gates: refitted in every bootstrap resample; blobs: models trained with the same weights, "
        "bootstrap over test rows with models fixed). Blob PID: BROJA on predicted probabilities in "
        f"{N_BINS} fixed bins on [0, 1] (documented alternative to the authors' neural q-estimator). "
        "Under MNAR the missingness depends on x2, which the missingness model cannot see."
    )
    return Result(
        claims=claims,
        metrics=m,
        tables={"estimates": summary, "missingness": gate_miss + blob_miss},
        notes=notes,
    )

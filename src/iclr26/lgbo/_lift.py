"""The region-lifted GP posterior mean, as a BoTorch ``Model``.

For a GP posterior ``f ~ GP(mu, k_n)`` and grid weights ``a`` on a Sobol grid ``G`` (``sum a = 1``), the
exponentially tilted posterior ``p(f) exp(lambda a' f(G))`` is again Gaussian with the same covariance and
mean ``mu(X) + lambda * k_n(X, G) a`` (completing the square). ``k_n(X, G) a`` is computed in closed form,
``k(X, G) a - k(X, T) (K_TT + Sigma)^{-1} k(T, G) a``, with the solve cached once per lift, so the lifted
mean is differentiable in ``X`` and cheap enough for ``optimize_acqf``. ``lambda = delta / sqrt(a' S_GG a)``
makes the lift of the regional mean ``a' f(G)`` exactly ``delta`` posterior standard deviations.
"""

from __future__ import annotations

import math
from typing import Any

import torch
from botorch.models.model import Model
from botorch.models.transforms.outcome import Standardize
from botorch.posteriors import GPyTorchPosterior
from gpytorch.distributions import MultivariateNormal
from torch import Tensor

from iclr26.validation import check_int, is_finite_real

GRID_EPS = 1e-6


def sobol_grid(d: int, n: int, dtype: torch.dtype = torch.double) -> Tensor:
    """The first ``n`` points of the unscrambled ``d``-dim Sobol sequence, clipped to [1e-6, 1-1e-6].

    Shape ``(n, d)``; deterministic (the authors' grid).
    """
    d, n = check_int(d, "d", minimum=1), check_int(n, "n", minimum=1)
    X = torch.quasirandom.SobolEngine(d).draw(n).to(dtype)
    return X.clamp(GRID_EPS, 1 - GRID_EPS)


class RegionLift:
    """Weights on a Sobol grid of the unit cube for a box (hard or with logistic edges).

    Parameters
    ----------
    grid_size:
        Number of grid points ``G``.
    smooth:
        ``None`` for the indicator of the box; a width ``s > 0`` for
        ``prod_j sigmoid((x_j - lb_j)/s) sigmoid((ub_j - x_j)/s)``.
    """

    def __init__(self, grid_size: int = 512, smooth: float | None = None):
        self.grid_size = check_int(grid_size, "grid_size", minimum=2)
        if smooth is not None and not (is_finite_real(smooth) and smooth > 0):
            raise ValueError(f"smooth must be None or a positive number, got {smooth!r}")
        self.smooth = None if smooth is None else float(smooth)

    def grid(self, d: int) -> Tensor:
        """The grid, shape ``(grid_size, d)``."""
        return sobol_grid(check_int(d, "d", minimum=1), self.grid_size)

    def weights(self, lb: Any, ub: Any) -> tuple[Tensor, Tensor]:
        """``(grid, a)`` for the box ``[lb, ub]`` (unit-cube coordinates, shape ``(d,)``).

        ``a`` has shape ``(grid_size,)`` and sums to one (all zeros if the hard box holds no grid point).
        """
        for name, v in (("lb", lb), ("ub", ub)):
            t = torch.as_tensor(v)
            if t.dtype == torch.bool or t.is_complex() or t.dim() > 1:
                raise ValueError(f"{name} must be a vector of real numbers (shape (d,)), got {v!r}")
        lb_t = torch.as_tensor(lb, dtype=torch.double).reshape(-1)
        ub_t = torch.as_tensor(ub, dtype=torch.double).reshape(-1)
        if lb_t.shape != ub_t.shape or not (torch.isfinite(lb_t).all() and torch.isfinite(ub_t).all()):
            raise ValueError(f"lb and ub must be finite vectors of equal length, got {lb!r}, {ub!r}")
        if torch.any(lb_t > ub_t):
            raise ValueError(f"lb must be <= ub in every dimension, got lb={lb!r}, ub={ub!r}")
        lb_t, ub_t = lb_t.clamp(0, 1), ub_t.clamp(0, 1)
        G = self.grid(lb_t.numel())
        if self.smooth is None:
            raw = ((G >= lb_t) & (G <= ub_t)).all(-1).to(G.dtype)
        else:
            s = self.smooth + 1e-12
            raw = torch.sigmoid((G - lb_t) / s).prod(-1) * torch.sigmoid((ub_t - G) / s).prod(-1)
        return G, raw / raw.sum().clamp_min(1e-12)


def _check_lift_args(model: Model, grid: Any, weights: Any, delta: Any, jitter: Any, min_quad: Any) -> None:
    if not is_finite_real(delta):
        raise ValueError(f"delta must be a finite number, got {delta!r}")
    for name, v in (("jitter", jitter), ("min_quad", min_quad)):
        if not is_finite_real(v) or v < 0:
            raise ValueError(f"{name} must be a finite number >= 0, got {v!r}")
    if not isinstance(grid, Tensor) or grid.dim() != 2 or not torch.isfinite(grid).all():
        raise ValueError("grid must be a finite (G, d) tensor")
    d = model.train_inputs[0].shape[-1]
    if grid.shape[-1] != d:
        raise ValueError(f"grid must have {d} columns like the model's inputs, got shape {tuple(grid.shape)}")
    if not isinstance(weights, Tensor) or weights.shape != grid.shape[:1]:
        raise ValueError(f"weights must be a ({grid.shape[0]},) tensor, one weight per grid point")
    if not torch.isfinite(weights).all() or torch.any(weights < 0):
        raise ValueError("weights must be finite and non-negative")


def _kernel(model: Model, A: Tensor, B: Tensor) -> Tensor:
    """Prior covariance ``k(A, B)`` of the GP's latent function (inner units), shape ``(len(A), len(B))``."""
    return model.covar_module(A, B).to_dense()


def _outcome_scale(model: Model) -> Tensor:
    """Factor from inner (transformed) to outer covariance units: ``stdvs**2`` of a ``Standardize``."""
    tf = getattr(model, "outcome_transform", None)
    if tf is None:
        return torch.ones((), dtype=torch.double)
    if isinstance(tf, Standardize):
        return tf.stdvs.reshape(()) ** 2
    raise ValueError(f"model: outcome transform {type(tf).__name__} is not supported (Standardize or none)")


def _check_model(model: Any) -> None:
    if not isinstance(model, Model):
        raise ValueError(f"model must be a BoTorch Model, got {type(model).__name__}")
    if getattr(model, "num_outputs", 1) != 1 or not hasattr(model, "covar_module"):
        raise ValueError("model must be a single-output exact GP (with covar_module and train_inputs)")


class LiftedModel(Model):
    """A BoTorch model whose posterior mean is the base mean plus ``lam * k_n(X, G) a``.

    The covariance is the base model's (plus ``jitter`` on the diagonal when ``jitter > 0``, as the
    authors' plug-in does). ``outer_units=False`` reproduces the authors' lift in the GP's inner
    (standardised) units, off by ``stdvs**2`` from the mean's units. Attributes: ``lam``, ``grid``,
    ``weights``, ``delta``.
    """

    def __init__(
        self,
        model: Model,
        grid: Tensor,
        weights: Tensor,
        delta: float,
        *,
        outer_units: bool = True,
        jitter: float = 0.0,
        min_quad: float = 0.0,
    ):
        super().__init__()
        _check_model(model)
        _check_lift_args(model, grid, weights, delta, jitter, min_quad)
        self.base = model.eval()
        self.grid, self.weights, self.delta, self.jitter = grid, weights, float(delta), float(jitter)
        with torch.no_grad():
            T = model.train_inputs[0]
            Gt = model.transform_inputs(grid)
            noise = model.likelihood.noise.reshape(-1).expand(T.shape[-2])
            K = _kernel(model, T, T) + torch.diag_embed(noise)
            kTGa = _kernel(model, T, Gt) @ weights
            self._u = torch.cholesky_solve(kTGa.unsqueeze(-1), torch.linalg.cholesky(K)).squeeze(-1)
            quad_inner = weights @ (_kernel(model, Gt, Gt) @ weights) - kTGa @ self._u
            scale = _outcome_scale(model).to(quad_inner)
            quad = float((scale * quad_inner).clamp_min(0.0))
            self._scale = scale if outer_units else torch.ones_like(scale)
            self._Gt, self._T = Gt, T
        self.lam = 0.0 if self.delta == 0.0 else self.delta / math.sqrt(max(quad, min_quad, 1e-300))

    @property
    def num_outputs(self) -> int:
        return 1

    @property
    def batch_shape(self) -> torch.Size:
        return self.base.batch_shape

    def shift(self, X: Tensor) -> Tensor:
        """``k_n(X, G) a`` in the mean's units (times ``stdvs**2`` unless ``outer_units=False``).

        ``X``: ``(..., q, d)`` in the model's input space; returns ``(..., q)``; differentiable in ``X``.
        """
        Xt = self.base.transform_inputs(X)
        flat = Xt.reshape(-1, Xt.shape[-1])
        s = _kernel(self.base, flat, self._Gt) @ self.weights - _kernel(self.base, flat, self._T) @ self._u
        return (self._scale * s).reshape(Xt.shape[:-1])

    def posterior(
        self,
        X: Tensor,
        output_indices: Any = None,
        observation_noise: bool = False,
        posterior_transform: Any = None,
        **kwargs: Any,
    ) -> GPyTorchPosterior:
        """The lifted posterior at ``X`` (``(..., q, d)``): mean ``(..., q)`` shifted, covariance kept."""
        base = self.base.posterior(X, observation_noise=observation_noise, **kwargs)
        mvn = base.distribution
        cov = mvn.lazy_covariance_matrix
        if self.jitter > 0:
            cov = cov.add_jitter(self.jitter)
        mean = mvn.mean + self.lam * self.shift(X) if self.lam != 0.0 else mvn.mean
        post = GPyTorchPosterior(MultivariateNormal(mean, cov))
        return post if posterior_transform is None else posterior_transform(post)

    def condition_on_observations(self, X: Tensor, Y: Tensor, **kwargs: Any) -> Model:
        raise NotImplementedError("refit the base model and lift it again")


def lifted_model(model: Model, lift: Any, delta: float | None = None, *, compat: str | None = None) -> Model:
    """Lift ``model``'s posterior mean by the plan or region ``lift``.

    ``lift``: a :class:`LiftPlan` (its box, edge width and ``delta`` are used; a plan that does not lift
    returns ``model`` itself) or a tuple ``(RegionLift, lb, ub)`` with ``delta`` given here. Inputs of the
    model live in the unit cube (apply ``Normalize`` as an input transform otherwise).
    ``compat="authors"`` reproduces their plug-in: lift in inner units, ``a' S a`` floored at 1e-6,
    1e-6 jitter on the covariance.
    """
    from ._plan import LiftPlan

    _check_model(model)
    if compat not in (None, "authors"):
        raise ValueError(f"compat must be None or 'authors', got {compat!r}")
    if isinstance(lift, LiftPlan):
        if not lift.lifts:
            return model
        region, lb, ub = RegionLift(lift.grid_size, lift.applied_smooth), lift.lb, lift.ub
        delta = lift.delta if delta is None else delta
    elif isinstance(lift, tuple) and len(lift) == 3 and isinstance(lift[0], RegionLift):
        region, lb, ub = lift
    else:
        raise ValueError("lift must be a LiftPlan or a tuple (RegionLift, lb, ub)")
    if not is_finite_real(delta):
        raise ValueError(f"delta must be a finite number, got {delta!r}")
    grid, a = region.weights(lb, ub)
    d = model.train_inputs[0].shape[-1]
    if grid.shape[-1] != d:
        raise ValueError(f"lb and ub must have {d} entries (one per model input), got {grid.shape[-1]}")
    grid, a = grid.to(model.train_inputs[0]), a.to(model.train_inputs[0])
    authors = compat == "authors"
    return LiftedModel(
        model,
        grid,
        a,
        float(delta),
        outer_units=not authors,
        jitter=1e-6 if authors else 0.0,
        min_quad=1e-6 if authors else 0.0,
    )


def monte_carlo_tilt(
    lifted: LiftedModel, X: Tensor, n_samples: int = 20000, seed: int = 0
) -> tuple[Tensor, Tensor]:
    """Importance estimate of the tilted mean ``E[f(X) exp(lam a'f(G))] / E[exp(lam a'f(G))]``.

    Draws joint posterior samples of ``(f(X), f(G))`` from the base model; ``X`` ``(m, d)``. Returns the
    estimate and its delta-method standard error, both ``(m,)``. Equals ``lifted.posterior(X).mean`` in
    expectation (the tilt identity).
    """
    m = X.shape[-2]
    with torch.no_grad():
        post = lifted.base.posterior(torch.cat([X, lifted.grid]))
        gen = torch.Generator().manual_seed(seed)
        mvn = post.distribution
        L = torch.linalg.cholesky(mvn.covariance_matrix + 1e-9 * torch.eye(mvn.mean.shape[-1], dtype=X.dtype))
        eps = torch.randn(n_samples, mvn.mean.shape[-1], generator=gen, dtype=X.dtype)
        f = mvn.mean + eps @ L.T
        logw = lifted.lam * (f[:, m:] @ lifted.weights)
        w = torch.softmax(logw, 0)
        est = w @ f[:, :m]
        se = torch.sqrt((w.unsqueeze(-1) ** 2 * (f[:, :m] - est) ** 2).sum(0))
    return est, se

"""Estimators: :class:`M3IRT`, :class:`M2IRT` and the unidimensional baseline :class:`TwoPL`."""

from __future__ import annotations

import io
import json
import math
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
from scipy.special import expit
from sklearn.base import BaseEstimator

from iclr26.store import atomic_write_bytes
from iclr26.validation import check_array, check_in, check_int

from . import _adam, _fit
from ._data import ResponseMatrix, validation_split

ABILITY_NAMES = ("base", "text", "image", "cross")


def as_response_matrix(X: Any, group: Any = None, r_text: Any = None, r_image: Any = None) -> ResponseMatrix:
    """Coerce ``X`` to a :class:`ResponseMatrix`.

    Accepts a :class:`ResponseMatrix`, a pandas DataFrame with the authors' column names, or a 2-D
    array; for an array, ``group`` / ``r_text`` / ``r_image`` give the variant structure (default:
    every column its own full-variant item).
    """
    if isinstance(X, ResponseMatrix):
        return X
    if hasattr(X, "columns") and hasattr(X, "index") and group is None:
        return ResponseMatrix.from_frame(X)
    arr = np.asarray(X)
    if arr.dtype == bool:  # a boolean 0/1 matrix is a response matrix
        arr = arr.astype(np.float64)
    arr = check_array(arr, "X", finite=False)
    j = arr.shape[1]
    group = np.arange(j) if group is None else np.asarray(group)
    if group.shape != (j,):
        raise ValueError(f"group must have shape ({j},), got {group.shape}")
    _, group = np.unique(group, return_inverse=True)
    rt = np.ones(j) if r_text is None else np.asarray(r_text, dtype=float)
    ri = np.ones(j) if r_image is None else np.asarray(r_image, dtype=float)
    n_items = int(group.max()) + 1 if j else 0
    return ResponseMatrix(
        arr,
        [str(i) for i in range(arr.shape[0])],
        [str(c) for c in range(j)],
        group,
        [str(g) for g in range(n_items)],
        rt,
        ri,
    )


def _auc(y: np.ndarray, p: np.ndarray) -> float:
    from sklearn.metrics import roc_auc_score

    if y.size == 0 or np.unique(y).size < 2:
        return float("nan")
    return float(roc_auc_score(y, p))


class WeakIdentificationWarning(UserWarning):
    """An ability dimension is weakly identified: its standard errors exceed its spread across models."""


SOLVERS = ("newton", "authors")


class _BaseIRT(BaseEstimator):
    """Shared fitting logic (see :class:`M3IRT` for the parameters)."""

    _kind = "m3"

    def __init__(
        self,
        scale_list: tuple[float, ...] | None = (2, 4, 8, 16),
        scale: float | None = None,
        *,
        solver: str = "authors",
        prior_precision: float = 1.0,
        val_fraction: float = 0.1,
        eps: float = 1e-3,
        theta_base_max: float = 0.1,
        max_iter: int = 300,
        tol: float = 1e-9,
        gtol: float = 1e-4,
        lr: float = 0.01,
        max_epochs: int = 500,
        warm_start: bool = True,
        random_state: int = 0,
    ):
        self.scale_list = scale_list
        self.scale = scale
        self.solver = solver
        self.prior_precision = prior_precision
        self.val_fraction = val_fraction
        self.eps = eps
        self.theta_base_max = theta_base_max
        self.max_iter = max_iter
        self.tol = tol
        self.gtol = gtol
        self.lr = lr
        self.max_epochs = max_epochs
        self.warm_start = warm_start
        self.random_state = random_state

    # ------------------------------------------------------------------ fitting
    def _check_params(self) -> list[float]:
        if self.scale is not None:
            scales = [float(self.scale)]
        elif self.scale_list:
            scales = sorted(float(s) for s in self.scale_list)
        else:
            raise ValueError("give scale or a non-empty scale_list")
        if any(not np.isfinite(s) or s <= 0 for s in scales):
            raise ValueError(f"scales must be positive, got {scales}")
        check_in(self.solver, SOLVERS, "solver")
        if not 0 <= self.eps < 0.5:
            raise ValueError(f"eps must lie in [0, 0.5), got {self.eps}")
        if self.solver == "authors" and self.eps <= 0:
            raise ValueError("solver='authors' clamps probabilities into [eps, 1 - eps]: eps must be > 0")
        if not 0 < self.val_fraction < 1:
            raise ValueError(f"val_fraction must lie in (0, 1), got {self.val_fraction}")
        if not (np.isfinite(self.prior_precision) and self.prior_precision >= 0):
            raise ValueError(f"prior_precision must be finite and >= 0, got {self.prior_precision}")
        if not (np.isfinite(self.lr) and self.lr > 0):
            raise ValueError(f"lr must be positive, got {self.lr}")
        check_int(self.max_iter, "max_iter", minimum=1)
        check_int(self.max_epochs, "max_epochs", minimum=1)
        return scales

    def _solve(
        self, Y: np.ndarray, train: np.ndarray, layout: _fit.Layout, scale: float, x0: np.ndarray | None
    ) -> tuple[np.ndarray, float, int, bool, float]:
        """One fit at one scale: (x, mean NLL, iterations, converged, projected gradient)."""
        kind, n = self._kind, Y.shape[0]
        lo, hi = _fit.bounds(kind, n, layout, scale, self.theta_base_max)
        if self.solver == "authors":
            x, loss, n_it, _, pg, self._peak = _adam.adam(
                kind,
                Y,
                train,
                layout,
                lo,
                hi,
                self.eps,
                lr=self.lr,
                max_epochs=self.max_epochs,
                reach=_adam.scale_reach(kind, n, layout),
            )
            return x, loss, n_it, pg < self.gtol, pg
        obj = _fit.Objective(kind, Y, train, layout, self.eps, np.float32)
        center = np.clip(_adam.authors_initial(kind, n, layout), lo, hi)
        if x0 is None:
            x0 = center
        solver = _fit.AlternatingNewton(obj, lo, hi, center, self.prior_precision)
        return solver.run(x0, self.max_iter, self.tol, self.gtol)

    def _search_fits(
        self, Y: np.ndarray, train: np.ndarray, layout: _fit.Layout, scales: list[float]
    ) -> dict[float, tuple[np.ndarray, int]]:
        """Scale-search fits that need no run of their own (``solver="authors"``, M3/M2-IRT).

        The largest scale is fitted first; Adam's trajectory is independent of the scale as long as no
        scale-dependent clamp acts, so every scale above the largest value the parameters ever tried to
        take (``peak``, before clamping) gets exactly the same fit. Smaller scales are fitted as usual.
        """
        if self.solver != "authors" or self._kind == "2pl" or min(scales) <= self.theta_base_max:
            return {}
        top = max(scales)
        x, _, nit, _, _ = self._solve(Y, train, layout, top, None)
        return {s: (x, nit) for s in scales if s == top or s > self._peak}

    def fit(
        self, X: Any, mask: Any = None, *, group: Any = None, r_text: Any = None, r_image: Any = None
    ) -> _BaseIRT:
        """Fit to a response matrix.

        Parameters
        ----------
        X : ResponseMatrix, DataFrame (authors' column names) or array of shape (n_models, n_columns)
            Binary responses (0/1 numbers or booleans); NaN = missing.
        mask : bool array of shape (n_models, n_columns), optional
            Cells to train on (default: every observed cell). Use it to hold out test cells.
        group, r_text, r_image : arrays of shape (n_columns,), optional
            Variant structure when ``X`` is a plain array.

        Returns
        -------
        self

        Raises
        ------
        ValueError
            Fewer than two models, no observed response, only correct or only wrong responses, or too
            few models for the validation split of the scale search.

        Warns
        -----
        UserWarning
            Columns whose observed responses are all equal (they carry no information on abilities).
        WeakIdentificationWarning
            An ability dimension whose median standard error exceeds its spread across models.
        """
        scales = self._check_params()
        data = as_response_matrix(X, group, r_text, r_image)
        t0 = time.perf_counter()
        Y = data.values
        observed = ~np.isnan(Y)
        if mask is not None:
            mask = np.asarray(mask)
            if mask.shape != Y.shape or mask.dtype != bool:
                raise ValueError(f"mask must be a boolean array of shape {Y.shape}")
            observed = observed & mask
        self._check_data(data, Y, observed, scales)
        kind = self._kind
        layout = _fit.Layout.build(data.group, data.r_text, data.r_image, data.n_items)
        n = data.n_models
        self.scale_search_: list[dict[str, float]] = []
        x_best = None
        if len(scales) > 1:
            rng = np.random.default_rng(self.random_state)
            val = validation_split(data, self.val_fraction, rng, observed)
            train = observed & ~val
            x_prev, best_auc = None, -np.inf
            fits = self._search_fits(Y, train, layout, scales)
            for s in scales:
                if s in fits:  # the authors' optimiser: identical to a run at a larger scale
                    xs, nit = fits[s]
                else:
                    warm = x_prev if (self.warm_start and self.solver == "newton") else None
                    xs, _, nit, _, _ = self._solve(Y, train, layout, s, warm)
                Z = _fit.logits(kind, _fit.unpack(kind, xs, n, layout), layout)
                auc = _auc(Y[val], _fit.probabilities(Z[val], self.eps))
                self.scale_search_.append({"scale": s, "val_auc": auc, "n_iter": int(nit)})
                if auc > best_auc or x_best is None:
                    best_auc, x_best, best_scale = auc, xs, s
                x_prev = xs
        else:
            best_scale = scales[0]
        # the refit starts from the initial values, not from the split-dependent search fit: the
        # objective is not convex, and a warm start made the abilities depend on the seed
        x, loss, nit, conv, pg = self._solve(Y, observed, layout, best_scale, None)
        lo, hi = _fit.bounds(kind, n, layout, best_scale, self.theta_base_max)
        self.scale_ = float(best_scale)
        self.loss_ = float(loss)
        self.n_iter_ = int(nit)
        self.converged_ = bool(conv)
        self.projected_gradient_ = float(pg)
        self._layout = layout
        self._lo, self._hi = lo, hi
        self._params = {k: v.copy() for k, v in _fit.unpack(kind, x, n, layout).items()}
        self.models_ = list(data.models)
        self.columns_ = list(data.columns)
        self.items_ = list(data.items)
        self.n_models_, self.n_columns_, self.n_items_ = n, data.shape[1], data.n_items
        self.theta_se_ = self._ability_se(Y, observed)
        self._warn_weak()
        self.fit_seconds_ = time.perf_counter() - t0
        return self

    def _check_data(self, data: ResponseMatrix, Y: np.ndarray, observed: np.ndarray, scales: list) -> None:
        n = data.n_models
        if n < 2:
            raise ValueError(
                f"X must have at least 2 models (rows) to separate ability from difficulty, got {n}"
            )
        if observed.sum() == 0:
            raise ValueError("X has no observed responses to fit (all NaN or masked out)")
        vals = Y[observed]
        if vals.min() == vals.max():
            which = "correct" if vals[0] == 1 else "wrong"
            raise ValueError(f"X has only {which} responses: abilities and difficulties are not identified")
        if len(scales) > 1 and max(1, math.ceil(self.val_fraction * n)) >= n:
            k = math.ceil(self.val_fraction * n)
            raise ValueError(
                f"the scale search holds out ceil(val_fraction * n_models) = {k} of {n} models per item,"
                " leaving none to train on: pass scale=... (no search) or more models"
            )
        cnt = observed.sum(0)
        ones = np.where(observed, Y, 0).sum(0)
        constant = (cnt > 0) & ((ones == 0) | (ones == cnt))
        if constant.any():
            warnings.warn(
                f"{int(constant.sum())} of {Y.shape[1]} columns have all observed responses equal; they carry"
                " no information on abilities and their difficulties go to the bounds",
                UserWarning,
                stacklevel=3,
            )

    def _design(self) -> np.ndarray:
        """The logit's gradient in the ability for every column, shape (n_columns, d), and for M2-IRT
        the same per column; the logit is ``design @ theta - offset``."""
        kind, P, lay = self._kind, self._params, self._layout
        if kind == "2pl":
            return P["a"][:, None]
        G = P["A"][lay.group] * lay.R
        return G if kind == "m3" else G.sum(1)[:, None] * lay.R

    def _ability_se(self, Y: np.ndarray, observed: np.ndarray) -> np.ndarray:
        """Standard errors of the abilities from the Fisher information with the item parameters fixed
        (the prior's precision added for the MAP fit); NaN where the information is singular."""
        Xd = self._design()
        p = np.clip(expit(self.decision_function()), self.eps, 1 - self.eps)
        w = np.where(observed, p * (1 - p), 0.0)
        info = np.einsum("mj,jk,jl->mkl", w, Xd, Xd)
        if self.solver == "newton" and self.prior_precision > 0:
            info += self.prior_precision * np.eye(Xd.shape[1])[None]
        se = np.full(info.shape[:2], np.nan)
        for m in range(info.shape[0]):
            try:
                se[m] = np.sqrt(np.clip(np.diag(np.linalg.inv(info[m])), 0, None))
            except np.linalg.LinAlgError:
                pass
        return se

    def _warn_weak(self) -> None:
        names = ABILITY_NAMES if self._kind != "2pl" else ("theta",)
        th = self._params["theta"].reshape(self.n_models_, -1)
        for k, name in enumerate(names):
            if self._kind != "2pl" and k == 0:
                continue  # the base ability is bounded to [0, theta_base_max] by design
            col = self.theta_se_[:, k]
            se = float(np.nanmedian(col)) if np.isfinite(col).any() else np.inf
            spread = float(th[:, k].std())
            if not se < spread:
                warnings.warn(
                    f"the {name} ability is weakly identified: median standard error {se:.3g} >= its spread"
                    f" across models {spread:.3g}; its ranking of models is mostly noise",
                    WeakIdentificationWarning,
                    stacklevel=3,
                )

    def _check_fitted(self) -> None:
        if not hasattr(self, "_params"):
            raise RuntimeError(f"this {type(self).__name__} is not fitted yet; call fit() first")

    # ------------------------------------------------------------------ prediction
    def _new_rows(self, X: Any) -> np.ndarray:
        if isinstance(X, ResponseMatrix):
            X = X.values
        elif hasattr(X, "columns") and hasattr(X, "index"):
            missing = [c for c in self.columns_ if c not in set(map(str, X.columns))]
            if missing:
                raise ValueError(f"X lacks fitted columns, e.g. {missing[:3]}")
            X = X.rename(columns=str)[self.columns_].to_numpy(dtype=np.float64)
        arr = np.asarray(X)
        if arr.dtype == bool:
            arr = arr.astype(np.float64)
        arr = check_array(arr, "X", ndim=None, finite=False)
        if arr.ndim == 1:
            arr = arr[None, :]
        if arr.ndim != 2 or arr.shape[1] != self.n_columns_:
            raise ValueError(f"X must have {self.n_columns_} columns (the fitted ones), got {arr.shape}")
        obs = arr[~np.isnan(arr)]
        if not np.all((obs == 0) | (obs == 1)):
            raise ValueError("X must hold 0/1 responses (NaN = not answered)")
        return arr

    def transform(self, X: Any) -> np.ndarray:
        """Abilities of new models from their responses (item parameters fixed), shape (n_rows, d).

        ``X``: array, DataFrame (fitted column names) or ResponseMatrix with the fitted columns.
        """
        self._check_fitted()
        rows = self._new_rows(X)
        items = np.arange(self.n_items_)
        return np.stack([self.fit_theta(r, items) for r in rows])

    def decision_function(self, X: Any = None) -> np.ndarray:
        """Logits, shape (n_rows, n_columns): of the fitted models (``X=None``) or of new models whose
        abilities are first estimated from their responses ``X`` (see :meth:`transform`)."""
        self._check_fitted()
        if X is None:
            return _fit.logits(self._kind, self._params, self._layout)
        theta = self.transform(X)
        params = {**self._params, "theta": theta[:, 0] if self._kind == "2pl" else theta}
        return _fit.logits(self._kind, params, self._layout)

    def predict_proba(self, X: Any = None) -> np.ndarray:
        """P(correct), shape (n_rows, n_columns): of the fitted models (``X=None``) or of new models
        from their responses ``X`` (abilities estimated with the item parameters fixed)."""
        return _fit.probabilities(self.decision_function(X), self.eps)

    def score(self, X: Any, mask: Any = None) -> float:
        """ROC-AUC of :meth:`predict_proba` on the observed cells of ``X`` (in ``mask`` if given).

        ``X`` must have the fitted models and columns (typically the same matrix with test cells).
        """
        data = as_response_matrix(X)
        self._check_fitted()
        if data.shape != (self.n_models_, self.n_columns_):
            raise ValueError(f"X must have shape {(self.n_models_, self.n_columns_)}, got {data.shape}")
        sel = ~np.isnan(data.values)
        if mask is not None:
            mask = np.asarray(mask)
            if mask.shape != sel.shape or mask.dtype != bool:
                raise ValueError(f"mask must be a boolean array of shape {sel.shape}, got {mask.shape}")
            sel &= mask
        return _auc(data.values[sel], self.predict_proba()[sel])

    # ------------------------------------------------------------------ tables and persistence
    def abilities_frame(self) -> Any:
        """Abilities and their standard errors as a DataFrame indexed by model name."""
        import pandas as pd

        self._check_fitted()
        names = ABILITY_NAMES if self._kind != "2pl" else ("theta",)
        th = self._params["theta"].reshape(self.n_models_, -1)
        cols = {n: th[:, k] for k, n in enumerate(names)}
        cols.update({f"se_{n}": self.theta_se_[:, k] for k, n in enumerate(names)})
        return pd.DataFrame(cols, index=pd.Index(self.models_, name="model"))

    def items_frame(self) -> Any:
        """Item parameters as a DataFrame: per item (M3/M2-IRT: ``a_*``, ``b_*``) or per column (2PL)."""
        import pandas as pd

        self._check_fitted()
        P = self._params
        if self._kind == "2pl":
            return pd.DataFrame({"a": P["a"], "d": P["d"]}, index=pd.Index(self.columns_, name="column"))
        cols = {f"a_{n}": P["A"][:, k] for k, n in enumerate(ABILITY_NAMES)}
        cols.update({f"b_{n}": P["B"][:, k] for k, n in enumerate(ABILITY_NAMES)})
        return pd.DataFrame(cols, index=pd.Index(self.items_, name="item"))

    _STATE = (
        "scale_",
        "loss_",
        "n_iter_",
        "converged_",
        "projected_gradient_",
        "fit_seconds_",
        "n_models_",
        "n_columns_",
        "n_items_",
        "models_",
        "columns_",
        "items_",
        "scale_search_",
    )

    def save(self, path: str | Path) -> Path:
        """Write the fitted estimator to ``path`` (a ``.npz`` archive, written atomically)."""
        self._check_fitted()
        meta = {
            "class": type(self).__name__,
            "params": self.get_params(),
            "state": {k: getattr(self, k) for k in self._STATE},
        }
        arrays = {f"p_{k}": v for k, v in self._params.items()}
        arrays.update(
            group=self._layout.group, R=self._layout.R, lo=self._lo, hi=self._hi, theta_se=self.theta_se_
        )
        buf = io.BytesIO()
        np.savez(buf, meta=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8), **arrays)
        return atomic_write_bytes(path, buf.getvalue())

    @classmethod
    def load(cls, path: str | Path) -> _BaseIRT:
        """Read an estimator written by :meth:`save`."""
        with np.load(Path(path), allow_pickle=False) as z:
            meta = json.loads(z["meta"].tobytes().decode())
            arrays = {k: z[k] for k in z.files if k != "meta"}
        klass = {"M3IRT": M3IRT, "M2IRT": M2IRT, "TwoPL": TwoPL}.get(meta["class"])
        if klass is None or not issubclass(klass, cls):
            raise ValueError(f"{path} holds a {meta['class']}, not a {cls.__name__}")
        params = meta["params"]
        if isinstance(params.get("scale_list"), list):
            params["scale_list"] = tuple(params["scale_list"])
        est = klass(**params)
        for k, v in meta["state"].items():
            setattr(est, k, v)
        est._params = {k[2:]: v for k, v in arrays.items() if k.startswith("p_")}
        est._layout = _fit.Layout(arrays["group"], arrays["R"], est.n_items_)
        est._lo, est._hi, est.theta_se_ = arrays["lo"], arrays["hi"], arrays["theta_se"]
        return est

    # ------------------------------------------------------------------ information
    def _theta_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        d = 1 if self._kind == "2pl" else 4
        return self._lo[:d], self._hi[:d]

    def initial_theta(self) -> np.ndarray:
        """The ability a model starts from in adaptive testing (the authors' init, clipped)."""
        self._check_fitted()
        lo, hi = self._theta_bounds()
        start = np.zeros(1) if self._kind == "2pl" else np.full(4, 0.5)
        return np.clip(start, lo, hi)

    def column_information(self, theta: Any) -> np.ndarray:
        """Fisher information of every column at ability ``theta``.

        M3-IRT: matrices ``p(1-p) g g^T`` with ``g = R_j * A_g`` (the logit's gradient in theta), shape
        (n_columns, 4, 4). M2-IRT: scalars ``(A_g . R_j)^2 p(1-p)``; 2PL: ``a_j^2 p(1-p)``, shape
        (n_columns,). ``p`` is the sigmoid clamped into ``[eps, 1 - eps]`` as in the authors' code.
        """
        self._check_fitted()
        kind, P, lay = self._kind, self._params, self._layout
        theta = np.atleast_1d(np.asarray(theta, dtype=np.float64))
        d = 1 if kind == "2pl" else 4
        if theta.shape != (d,):
            raise ValueError(f"theta must have shape ({d},), got {theta.shape}")
        one = {**P, "theta": theta[None, :] if kind != "2pl" else theta}
        z = _fit.logits(kind, one, lay)[0]
        p = np.clip(expit(z), self.eps, 1 - self.eps)
        w = p * (1 - p)
        if kind == "2pl":
            return P["a"] ** 2 * w
        G = P["A"][lay.group] * lay.R
        if kind == "m2":
            return G.sum(1) ** 2 * w
        return w[:, None, None] * G[:, :, None] * G[:, None, :]

    def item_scores(self, theta: Any) -> np.ndarray:
        """Selection score of every item at ``theta``, shape (n_items,).

        Fisher information summed over the item's columns (its variants); for M3-IRT the summed 4x4
        matrix is scored by its determinant (D-optimality), for M2-IRT and 2PL the sum is a scalar.
        """
        info = self.column_information(theta)
        S = self._layout.summer()
        if info.ndim == 1:
            return np.asarray(S @ info).ravel()
        summed = np.asarray(S @ info.reshape(info.shape[0], -1)).reshape(-1, 4, 4)
        return np.linalg.det(summed)

    def fit_theta(self, y: Any, items: Any, theta0: Any = None) -> np.ndarray:
        """Maximum-likelihood ability of a (new) model from its responses ``y`` on ``items``.

        ``y`` has shape (n_columns,) (NaN = not answered); only the columns of ``items`` are used;
        item parameters stay fixed. Returns the ability vector (shape (4,) or (1,) for 2PL).
        """
        self._check_fitted()
        y = np.asarray(y, dtype=np.float64)
        if y.shape != (self.n_columns_,):
            raise ValueError(f"y must have shape ({self.n_columns_},), got {y.shape}")
        items = np.atleast_1d(np.asarray(items))
        if items.ndim != 1 or (items.size and not np.issubdtype(items.dtype, np.integer)):
            raise ValueError(f"items must be a 1-D sequence of item indices, got {items!r}")
        if items.size and (items.min() < 0 or items.max() >= self.n_items_):
            raise ValueError(f"items must index the fitted items 0..{self.n_items_ - 1}, got {items.max()}")
        cols = np.flatnonzero(np.isin(self._layout.group, items))
        lo, hi = self._theta_bounds()
        t0 = self.initial_theta() if theta0 is None else theta0
        return _fit.fit_theta(self._kind, self._params, self._layout, y, cols, t0, lo, hi, self.eps)


class M3IRT(_BaseIRT):
    """Multimodal multidimensional IRT (M3-IRT, Uebayashi et al., ICLR 2026).

    A model ``m`` has abilities ``theta_m = [base, text, image, cross]``; an item ``g`` has
    discriminations ``a_g`` and difficulty components ``b_g`` in the same four parts. For a column of
    item ``g`` shown with question text (``r_t``) and/or image (``r_i``)::

        logit = a_b th_b + r_i a_i th_i + r_t a_t th_t + r_i r_t a_s th_s - b_full,
        b_full = b_b + r_t b_t + r_i b_i + r_t r_i b_s,

    so the ``<no_info>`` variant sees only the base part, ``<no_image>`` adds the text part,
    ``<no_question>`` the image part and the full item also the cross-modal part.

    Parameters
    ----------
    scale_list : tuple of float or None, default (2, 4, 8, 16)
        The authors' scale grid: every bound (abilities, discriminations, difficulties) is set to the
        scale; the scale with the best validation ROC-AUC is kept and the model refitted on all data.
    scale : float, optional
        Fix the scale (no search).
    solver : {"authors", "newton"}, default "authors"
        ``"authors"``: the authors' optimiser (full-batch Adam, ``lr`` 0.01, ``max_epochs`` 500, gradient
        norm clipped to 1, parameters clamped into the boxes after every step, clamped sigmoid), whose
        short budget acts as an implicit regulariser; deterministic and vectorised. ``"newton"``: an
        explicit MAP fit (Gaussian prior of precision ``prior_precision`` around the initial values)
        by alternating projected Newton steps. The default was chosen by measurement (docs/m3-irt.md):
        on MMMU both rank models equally well from 1-10% subsets, but "authors" picks 2-3x fewer
        shuffled items and gives the same abilities for every seed.
    prior_precision : float, default 1.0
        ``solver="newton"`` only: precision of the Gaussian prior (0 = maximum likelihood, which drives
        many parameters onto the bounds).
    val_fraction : float, default 0.1
        Validation share for the scale search (per item, this share of models is held out on all four
        variants, as the authors do).
    eps : float, default 1e-3
        Probability floor.
    theta_base_max : float, default 0.1
        Upper bound of the base ability (the authors' ``theta_base_max``).
    max_iter, tol : int, float
        ``solver="newton"``: at most ``max_iter`` alternating Newton rounds; stop earlier when a round
        improves the objective by less than ``tol`` (relative).
    gtol : float, default 1e-4
        ``converged_`` is True only when the largest projected-gradient component of the solver's mean
        objective (the box blocks components pushing outward) is below ``gtol``.
    lr, max_epochs : float, int
        ``solver="authors"``: Adam's learning rate and number of full-batch epochs (the authors'
        configs: 0.01 and 500; early stopping after 100 epochs without improvement, as theirs).
    warm_start : bool, default True
        ``solver="newton"``: start each larger scale of the search from the previous solution (the boxes
        are nested). The final refit always starts from the initial values.
    random_state : int
        Seed of the validation split.

    Attributes
    ----------
    theta_ : ndarray (n_models, 4)     abilities [base, text, image, cross].
    theta_se_ : ndarray (n_models, 4)  standard errors of the abilities from the Fisher information
        with the item parameters fixed (plus the prior's precision for the MAP fit).
    discrimination_ : ndarray (n_items, 4)
    difficulty_components_ : ndarray (n_items, 4)   [b_base, b_text, b_image, b_cross].
    difficulty_ : ndarray (n_columns,)  b_full per column.
    scale_, scale_search_, loss_, n_iter_, converged_, projected_gradient_, fit_seconds_,
    models_, items_, columns_.
    """

    _kind = "m3"

    @property
    def theta_(self) -> np.ndarray:
        self._check_fitted()
        return self._params["theta"]

    @property
    def discrimination_(self) -> np.ndarray:
        self._check_fitted()
        return self._params["A"]

    @property
    def difficulty_components_(self) -> np.ndarray:
        self._check_fitted()
        return self._params["B"]

    @property
    def difficulty_(self) -> np.ndarray:
        self._check_fitted()
        lay = self._layout
        return (self._params["B"][lay.group] * lay.R).sum(1)

    def abilities(self) -> dict[str, np.ndarray]:
        """Abilities per component: ``{"base", "text", "image", "cross"}`` -> (n_models,)."""
        return {k: self.theta_[:, i] for i, k in enumerate(ABILITY_NAMES)}


class M2IRT(M3IRT):
    """M2-IRT, the authors' inner-product baseline: ``logit = (a_g . R_j)(theta_m . R_j) - b_full``.

    Same parameters, bounds and scale search as :class:`M3IRT` (abilities may reach 0); item selection
    uses the scalar Fisher information ``a_full^2 p (1 - p)`` summed over the item's variants.
    """

    _kind = "m2"


class TwoPL(_BaseIRT):
    """Plain two-parameter logistic IRT on the columns, ignoring the variant structure.

    ``logit = a_j theta_m - d_j``; every column (each variant) is its own item. Bounds: ability in
    ``[-scale, scale]``, discrimination in ``[1e-4, scale]``, intercept in ``[-scale^2, scale^2]``, with
    the same scale search as :class:`M3IRT`. Item selection sums ``a_j^2 p(1-p)`` over an item's columns.

    Attributes: ``theta_`` (n_models,), ``discrimination_`` (n_columns,), ``intercept_`` (n_columns,),
    ``difficulty_`` = ``intercept_ / discrimination_`` (the ``b`` of ``a(theta - b)``).
    """

    _kind = "2pl"

    @property
    def theta_(self) -> np.ndarray:
        self._check_fitted()
        return self._params["theta"]

    @property
    def discrimination_(self) -> np.ndarray:
        self._check_fitted()
        return self._params["a"]

    @property
    def intercept_(self) -> np.ndarray:
        self._check_fitted()
        return self._params["d"]

    @property
    def difficulty_(self) -> np.ndarray:
        return self.intercept_ / self.discrimination_

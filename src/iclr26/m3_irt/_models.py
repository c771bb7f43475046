"""Estimators: :class:`M3IRT`, :class:`M2IRT` and the unidimensional baseline :class:`TwoPL`."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from scipy.special import expit

from iclr26.validation import check_array, check_int

from . import _fit
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
    arr = check_array(X, "X", finite=False)
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


class _BaseIRT:
    """Shared fitting logic (see :class:`M3IRT` for the parameters)."""

    _kind = "m3"

    def __init__(
        self,
        scale_list: tuple[float, ...] | None = (2, 4, 8, 16),
        scale: float | None = None,
        *,
        val_fraction: float = 0.1,
        eps: float = 1e-3,
        theta_base_max: float = 0.1,
        max_iter: int = 30,
        tol: float = 1e-4,
        warm_start: bool = True,
        random_state: int = 0,
    ):
        self.scale_list = scale_list
        self.scale = scale
        self.val_fraction = val_fraction
        self.eps = eps
        self.theta_base_max = theta_base_max
        self.max_iter = max_iter
        self.tol = tol
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
        if not 0 <= self.eps < 0.5:
            raise ValueError(f"eps must lie in [0, 0.5), got {self.eps}")
        if not 0 < self.val_fraction < 1:
            raise ValueError(f"val_fraction must lie in (0, 1), got {self.val_fraction}")
        check_int(self.max_iter, "max_iter", minimum=1)
        return scales

    def fit(
        self, X: Any, mask: Any = None, *, group: Any = None, r_text: Any = None, r_image: Any = None
    ) -> _BaseIRT:
        """Fit to a response matrix.

        Parameters
        ----------
        X : ResponseMatrix, DataFrame (authors' column names) or array of shape (n_models, n_columns)
            Binary responses; NaN = missing.
        mask : bool array of shape (n_models, n_columns), optional
            Cells to train on (default: every observed cell). Use it to hold out test cells.
        group, r_text, r_image : arrays of shape (n_columns,), optional
            Variant structure when ``X`` is a plain array.

        Returns
        -------
        self
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
        if observed.sum() == 0:
            raise ValueError("no observed responses to fit")
        kind = self._kind
        layout = _fit.Layout.build(data.group, data.r_text, data.r_image, data.n_items)
        n = data.n_models
        self.scale_search_: list[dict[str, float]] = []
        x_best = None
        if len(scales) > 1:
            rng = np.random.default_rng(self.random_state)
            val = validation_split(data, self.val_fraction, rng, observed)
            train = observed & ~val
            obj = _fit.Objective(kind, Y, train, layout, self.eps, np.float32)
            x_prev, best_auc = None, -np.inf
            for s in scales:
                lo, hi = _fit.bounds(kind, n, layout, s, self.theta_base_max)
                x0 = (
                    x_prev
                    if (self.warm_start and x_prev is not None)
                    else _fit.initial(kind, n, layout, lo, hi)
                )
                xs, _, nit, _ = _fit.AlternatingNewton(obj, lo, hi).run(x0, self.max_iter, self.tol)
                Z = _fit.logits(kind, _fit.unpack(kind, xs, n, layout), layout)
                auc = _auc(Y[val], _fit.probabilities(Z[val], self.eps))
                self.scale_search_.append({"scale": s, "val_auc": auc, "n_iter": int(nit)})
                if auc > best_auc or x_best is None:
                    best_auc, x_best, best_scale = auc, xs, s
                x_prev = xs
        else:
            best_scale = scales[0]
        lo, hi = _fit.bounds(kind, n, layout, best_scale, self.theta_base_max)
        x0 = x_best if (self.warm_start and x_best is not None) else _fit.initial(kind, n, layout, lo, hi)
        obj = _fit.Objective(kind, Y, observed, layout, self.eps, np.float32)
        x, loss, nit, conv = _fit.AlternatingNewton(obj, lo, hi).run(x0, self.max_iter, self.tol)
        self.scale_ = float(best_scale)
        self.loss_ = float(loss)
        self.n_iter_ = int(nit)
        self.converged_ = bool(conv)
        self._layout = layout
        self._lo, self._hi = lo, hi
        self._params = {k: v.copy() for k, v in _fit.unpack(kind, x, n, layout).items()}
        self.models_ = list(data.models)
        self.columns_ = list(data.columns)
        self.items_ = list(data.items)
        self.n_models_, self.n_columns_, self.n_items_ = n, data.shape[1], data.n_items
        self.fit_seconds_ = time.perf_counter() - t0
        return self

    def _check_fitted(self) -> None:
        if not hasattr(self, "_params"):
            raise RuntimeError(f"this {type(self).__name__} is not fitted yet; call fit() first")

    # ------------------------------------------------------------------ prediction
    def decision_function(self) -> np.ndarray:
        """Logits for every (model, column) of the fitted matrix, shape (n_models, n_columns)."""
        self._check_fitted()
        return _fit.logits(self._kind, self._params, self._layout)

    def predict_proba(self) -> np.ndarray:
        """P(correct) for every (model, column) of the fitted matrix, shape (n_models, n_columns)."""
        return _fit.probabilities(self.decision_function(), self.eps)

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
            sel &= np.asarray(mask, dtype=bool)
        return _auc(data.values[sel], self.predict_proba()[sel])

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
        cols = np.flatnonzero(np.isin(self._layout.group, np.asarray(items, dtype=np.int64)))
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
    val_fraction : float, default 0.1
        Validation share for the scale search (per item, this share of models is held out on all four
        variants, as the authors do).
    eps : float, default 1e-3
        Probability floor.
    theta_base_max : float, default 0.1
        Upper bound of the base ability (the authors' ``theta_base_max``).
    max_iter, tol : int, float
        At most ``max_iter`` alternating Newton rounds; stop when a round improves the loss by less
        than ``tol`` (relative).
    warm_start : bool, default True
        Start each larger scale from the previous solution (the boxes are nested) and the final refit
        from the selected one.
    random_state : int
        Seed of the validation split.

    Attributes
    ----------
    theta_ : ndarray (n_models, 4)     abilities [base, text, image, cross].
    discrimination_ : ndarray (n_items, 4)
    difficulty_components_ : ndarray (n_items, 4)   [b_base, b_text, b_image, b_cross].
    difficulty_ : ndarray (n_columns,)  b_full per column.
    scale_, scale_search_, loss_, n_iter_, fit_seconds_.
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

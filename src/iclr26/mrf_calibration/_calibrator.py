"""``MRFCalibrator``: the scikit-learn-style estimator around the chain of :mod:`._mrf`."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..validation import check_in, check_int, check_labels
from . import _mrf
from ._metrics import auroc

UPDATES = ("authors", "meanfield")
NORMALIZATIONS = ("authors", "train")
OPTIMIZERS = ("authors", "lbfgs")
PARAM_NAMES = ("w1", "w11", "w_prime1", "w_prime11", "w_final", "b_final")


_MAX_SCORE = float(np.finfo(np.float32).max) / 2  # any two scores' difference is then a finite float32


def check_scores(scores: Any, name: str = "scores") -> tuple[list[np.ndarray], str]:
    """Token scores as a list of ``(L_b, C)`` float32 arrays and their kind (``"scalar"``/``"fastdetect"``).

    Accepts a sequence of 1-D arrays (one per text, ragged), a 2-D array (one row per text), or a
    sequence of 2-D ``(L_b, 1 + k)`` arrays (Fast-DetectGPT: observed token, then ``k >= 2`` samples).
    """
    if isinstance(scores, np.ndarray) and scores.ndim == 2 and scores.dtype != object:
        seq = list(scores)
    elif isinstance(scores, np.ndarray | Sequence) and not isinstance(scores, str | bytes):
        seq = list(scores)
    else:
        raise ValueError(f"{name} must be a sequence of per-text score arrays, got {type(scores).__name__}")
    if not seq:
        raise ValueError(f"{name} must hold at least one text")
    rows, ndims = [], set()
    for i, r in enumerate(seq):
        a = np.asarray(r)
        if a.dtype == object or not np.issubdtype(a.dtype, np.number) or a.dtype == bool:
            raise ValueError(f"{name}[{i}] must be numeric, got dtype {a.dtype}")
        if np.iscomplexobj(a):  # the float32 cast would drop the imaginary parts
            raise ValueError(f"{name}[{i}] must be real, got dtype {a.dtype}")
        if a.ndim not in (1, 2) or a.shape[0] == 0:
            raise ValueError(f"{name}[{i}] must be a non-empty 1-D or 2-D array, got shape {a.shape}")
        a = a.astype(np.float32)
        if not np.isfinite(a).all():
            raise ValueError(f"{name}[{i}] contains NaN or infinite values")
        if a.size and np.abs(a).max() > _MAX_SCORE:
            # the min-max normalisation divides by a range (that of the zero padding included in
            # authors mode), which must itself be a finite float32
            raise ValueError(
                f"{name}[{i}] holds |values| above {_MAX_SCORE:.3g}; their range overflows float32"
            )
        ndims.add(a.ndim)
        rows.append(a[:, None] if a.ndim == 1 else a)
    if len(ndims) > 1:
        raise ValueError(f"{name} mixes 1-D and 2-D per-text arrays")
    if 2 in ndims:
        widths = {r.shape[1] for r in rows}
        if len(widths) > 1 or min(widths) < 3:
            raise ValueError(
                f"{name}: Fast-DetectGPT arrays must all be (L, 1 + k) with one k >= 2, got widths {widths}"
            )
        return rows, "fastdetect"
    return rows, "scalar"


class MRFCalibrator:
    """Markov-random-field calibration of token-level detection scores (a plug-in for metric detectors).

    Parameters
    ----------
    filter_pos:
        ``p`` of the position weights ``sigma(i - p)`` (Initial Instability: early tokens count less, in
        the neighbour weights and in the pooled mean). ``0`` turns them off (uniform weights).
    steps:
        Mean-field updates ``t``. ``filter_pos=0, steps=0`` is the uncalibrated baseline (the mean
        normalised score through a logistic map).
    lr, epochs, batch_size:
        Adam learning rate, epochs and mini-batch size of ``optimizer="authors"``.
    seed:
        Seeds the initial parameters and the mini-batch order (the authors' ``iter``).
    update:
        ``"authors"``: each step starts from the previous step's log-belief (compounding update, as in
        the authors' code); ``"meanfield"``: the unary term stays at the initial scores.
    normalize:
        ``"train"`` (default, our departure): min-max with the training split's range over real tokens,
        clipped to [0, 1]; padding is kept out of the chain and pooling uses the true lengths.
        ``"authors"``: every split (the array given to ``fit``, ``val``, ``predict_proba``) is scaled by its
        own min and max *including the zero padding* to the authors' width (1024 tokens), the padding
        runs through the chain, and trailing exact-zero scores are masked as padding.
    optimizer:
        ``"authors"``: Adam, shuffled mini-batches, BCE, the epoch of best validation AUROC kept.
        ``"lbfgs"`` (our departure): full-batch L-BFGS from ``n_inits`` starts with ``w_final`` positive;
        the start of best validation AUROC is kept.
    n_inits:
        Starts of ``optimizer="lbfgs"``.

    Attributes
    ----------
    params_: dict of the six trained parameters ``w1, w11, w_prime1, w_prime11, w_final, b_final``.
    kind_: ``"scalar"`` or ``"fastdetect"``.
    value_range_: the training range ``(min, max)`` (used by ``normalize="train"``).
    history_: validation AUROC per epoch (``"authors"``) or per start (``"lbfgs"``).
    best_index_: the epoch or start kept.
    """

    def __init__(
        self,
        filter_pos: int = 30,
        steps: int = 10,
        lr: float = 0.05,
        epochs: int = 10,
        batch_size: int = 512,
        seed: int = 0,
        update: str = "authors",
        normalize: str = "train",
        optimizer: str = "authors",
        n_inits: int = 4,
    ):
        self.filter_pos = filter_pos
        self.steps = steps
        self.lr = lr
        self.epochs = epochs
        self.batch_size = batch_size
        self.seed = seed
        self.update = update
        self.normalize = normalize
        self.optimizer = optimizer
        self.n_inits = n_inits

    # ------------------------------------------------------------------ helpers
    def _check_settings(self) -> None:
        check_int(self.filter_pos, "filter_pos", minimum=0)
        check_int(self.steps, "steps", minimum=0)
        check_int(self.epochs, "epochs", minimum=1)
        check_int(self.batch_size, "batch_size", minimum=1)
        check_int(self.seed, "seed", minimum=0)
        check_int(self.n_inits, "n_inits", minimum=1)
        if (
            isinstance(self.lr, bool)
            or not isinstance(self.lr, int | float)
            or not (math.isfinite(self.lr) and self.lr > 0)
        ):
            raise ValueError(f"lr must be a positive finite number, got {self.lr!r}")
        check_in(self.update, UPDATES, "update")
        check_in(self.normalize, NORMALIZATIONS, "normalize")
        check_in(self.optimizer, OPTIMIZERS, "optimizer")

    def _prepare(self, rows: list[np.ndarray], kind: str):
        torch = _mrf._torch()
        if self.normalize == "authors":
            value_range = _mrf.authors_range(rows, _mrf.AUTHORS_WIDTH[kind])
        else:
            value_range = self.value_range_
        prep = _mrf.prepare(
            rows,
            kind=kind,
            normalize=self.normalize,
            value_range=value_range,
            filter_pos=self.filter_pos,
            steps=self.steps,
        )
        return tuple(torch.from_numpy(a) for a in (prep.d, prep.pool_mask, prep.lo, prep.hi))

    def _forward(self, params, prep_t):
        return _mrf.forward(params, prep_t, filter_pos=self.filter_pos, steps=self.steps, update=self.update)

    def _pooled(self, prep_t):
        return _mrf.pooled_score(
            self._params, prep_t, filter_pos=self.filter_pos, steps=self.steps, update=self.update
        )

    def _initial_params(self, gen):
        """The authors' initialisation: ten ``randn`` draws in their declaration order, six used."""
        torch = _mrf._torch()
        draws = [torch.randn(1, generator=gen) * 0.001 for _ in range(8)]
        w_final = torch.randn(1, generator=gen) * 0.0001
        b_final = torch.randn(1, generator=gen) * 0.0
        return torch.cat([draws[0], draws[1], draws[2], draws[3], w_final, b_final])

    def _load_params(self, kind: str, values) -> MRFCalibrator:
        """Private hook (tests, benchmarks): use fixed parameters, in ``PARAM_NAMES`` order."""
        torch = _mrf._torch()
        self.kind_ = check_in(kind, ("scalar", "fastdetect"), "kind")
        self._params = torch.tensor(np.asarray(values, dtype=np.float32))
        self.params_ = dict(zip(PARAM_NAMES, (float(v) for v in self._params)))
        return self

    def _check_fitted(self) -> None:
        if not hasattr(self, "params_"):
            raise RuntimeError("this MRFCalibrator is not fitted yet; call fit first")

    def _rows(self, scores: Any, name: str = "scores") -> list[np.ndarray]:
        rows, kind = check_scores(scores, name)
        if kind != self.kind_:
            raise ValueError(f"{name} are {kind} scores but the calibrator was fitted on {self.kind_} scores")
        return rows

    # ------------------------------------------------------------------ fitting
    def fit(self, scores: Any, y: Any, val: tuple[Any, Any] | None = None, *, _batch_orders=None):
        """Train the six parameters on token ``scores`` with labels ``y`` (1 = machine-generated).

        ``val=(scores_v, y_v)`` chooses the epoch (or start) of best AUROC; without it the training
        split itself is used, with a warning. ``_batch_orders`` (private, for tests): one permutation of
        the training rows per epoch, replacing the seeded shuffle.
        """
        self._check_settings()
        torch = _mrf._torch()
        rows, kind = check_scores(scores, "scores")
        y = _binary_labels(y, len(rows), "y")
        if val is None:
            warnings.warn(
                "no val split given: the best epoch is chosen on the training split",
                UserWarning,
                stacklevel=2,
            )
            rows_v, y_v = rows, y
        else:
            if not isinstance(val, tuple | list) or len(val) != 2:
                raise ValueError("val must be a pair (scores_v, y_v)")
            rows_v, kind_v = check_scores(val[0], "val[0]")
            if kind_v != kind:
                raise ValueError(f"val[0] are {kind_v} scores but scores are {kind} scores")
            y_v = _binary_labels(val[1], len(rows_v), "val[1]")
        self.kind_ = kind
        lo = min(float(r.min()) for r in rows)
        hi = max(float(r.max()) for r in rows)
        if hi <= lo:
            warnings.warn(
                "every training score is equal: normalised scores are all 0", UserWarning, stacklevel=2
            )
        self.value_range_ = (lo, hi)
        prep = self._prepare(rows, kind)
        prep_v = self._prepare(rows_v, kind)
        y_t = torch.from_numpy(y.astype(np.float32))
        gen = torch.Generator().manual_seed(int(self.seed))
        if self.optimizer == "authors":
            params, history, best = self._fit_adam(prep, y_t, prep_v, y_v, gen, _batch_orders)
        else:
            params, history, best = self._fit_lbfgs(prep, y_t, prep_v, y_v, gen)
        self._params = params
        self.params_ = dict(zip(PARAM_NAMES, (float(v) for v in params)))
        self.history_ = history
        self.best_index_ = best
        return self

    def _val_auroc(self, params, prep_v, y_v) -> float:
        torch = _mrf._torch()
        with torch.no_grad():
            p = self._forward(params, prep_v).numpy()
        return auroc(y_v, p)

    def _fit_adam(self, prep, y_t, prep_v, y_v, gen, batch_orders):
        torch = _mrf._torch()
        params = self._initial_params(gen).requires_grad_(True)
        opt = torch.optim.Adam([params], lr=float(self.lr))
        n = len(y_t)
        best_auc, best_params, best_epoch, history = -1.0, params.detach().clone(), -1, []
        for epoch in range(self.epochs):
            # The authors' DataLoader draws a base seed, then the sampler's seed, from the global stream.
            _draw_seed(gen)
            perm_seed = _draw_seed(gen)
            if batch_orders is not None:
                perm = torch.as_tensor(np.asarray(batch_orders[epoch]), dtype=torch.long)
            else:
                perm = torch.randperm(n, generator=torch.Generator().manual_seed(perm_seed))
            for start in range(0, n, int(self.batch_size)):
                idx = perm[start : start + int(self.batch_size)]
                sub = tuple(a[idx] for a in prep)
                out = self._forward(params, sub)
                loss = torch.nn.functional.binary_cross_entropy(out, y_t[idx])
                opt.zero_grad()
                loss.backward()
                opt.step()
            _draw_seed(gen)  # the validation DataLoader's base seed
            auc = self._val_auroc(params.detach(), prep_v, y_v)
            history.append(auc)
            if auc > best_auc:
                best_auc, best_params, best_epoch = auc, params.detach().clone(), epoch
        return best_params, history, best_epoch

    def _fit_lbfgs(self, prep, y_t, prep_v, y_v, gen):
        torch = _mrf._torch()
        best_auc, best_loss, best_params, best_i, history = -1.0, math.inf, None, -1, []
        for i in range(int(self.n_inits)):
            start = self._initial_params(gen)
            if i > 0:  # log-uniform interaction magnitudes in [0.01, 3]
                start[:4] = 10.0 ** (torch.rand(4, generator=gen) * 2.5 - 2.0)
            start[4] = 1.0 + 4.0 * torch.rand(1, generator=gen)[0]
            start[5] = -0.5 * start[4]
            params = start.clone().requires_grad_(True)
            opt = torch.optim.LBFGS([params], lr=1.0, max_iter=60, line_search_fn="strong_wolfe")

            def closure(params=params, opt=opt):
                opt.zero_grad()
                loss = torch.nn.functional.binary_cross_entropy(self._forward(params, prep), y_t)
                loss.backward()
                return loss

            opt.step(closure)
            with torch.no_grad():
                loss = float(torch.nn.functional.binary_cross_entropy(self._forward(params, prep), y_t))
            auc = self._val_auroc(params.detach(), prep_v, y_v)
            if not math.isfinite(loss):
                auc = -1.0
            history.append(auc)
            if auc > best_auc or (auc == best_auc and loss < best_loss):
                best_auc, best_loss, best_params, best_i = auc, loss, params.detach().clone(), i
        return best_params, history, best_i

    # ------------------------------------------------------------------ inference
    def decision_function(self, scores: Any) -> np.ndarray:
        """The logit ``w_final * pooled + b_final`` per text, ``(n_texts,)``."""
        self._check_fitted()
        torch = _mrf._torch()
        with torch.no_grad():
            z, _ = self._pooled(self._prepare(self._rows(scores), self.kind_))
            return (z * self._params[4] + self._params[5]).numpy().astype(np.float64)

    def predict_proba(self, scores: Any) -> np.ndarray:
        """``(n_texts, 2)``: probabilities of human (column 0) and machine (column 1)."""
        self._check_fitted()
        torch = _mrf._torch()
        with torch.no_grad():
            p1 = self._forward(self._params, self._prepare(self._rows(scores), self.kind_)).numpy()
        p1 = p1.astype(np.float64)
        return np.stack([1.0 - p1, p1], axis=1)

    def predict(self, scores: Any) -> np.ndarray:
        """Labels ``round(p)`` (1 = machine), as the authors' accuracy."""
        return (self.predict_proba(scores)[:, 1] > 0.5).astype(np.int64)

    def calibrated_token_scores(self, scores: Any) -> list[np.ndarray]:
        """The machine beliefs ``q_i`` after ``steps`` updates, one 1-D array per text (its own length)."""
        self._check_fitted()
        torch = _mrf._torch()
        rows = self._rows(scores)
        with torch.no_grad():
            _, q = self._pooled(self._prepare(rows, self.kind_))
        q = q.numpy().astype(np.float64)
        return [q[b, : min(len(r), q.shape[1])].copy() for b, r in enumerate(rows)]


def _draw_seed(gen) -> int:
    torch = _mrf._torch()
    return int(torch.empty((), dtype=torch.int64).random_(generator=gen).item())


def _binary_labels(y: Any, n: int, name: str) -> np.ndarray:
    arr = check_labels(y, n, name)
    if not np.isin(arr, (0, 1)).all():
        raise ValueError(f"{name} must hold 0 (human) and 1 (machine) only, got values {np.unique(arr)}")
    if len(np.unique(arr)) < 2:
        raise ValueError(f"{name} must hold both classes (0 and 1), got only {int(arr[0])}")
    return arr

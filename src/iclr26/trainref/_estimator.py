"""The TrainRef estimator: vote, split, filter, curate, augment the reference, co-evolve, repeat."""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from sklearn.base import BaseEstimator

from ..validation import check_array, check_bool, check_int, check_labels
from . import _select, _train
from ._votes import class_influence, votes_from_influence

_FLOAT32_MAX = float(np.finfo(np.float32).max)


@dataclass
class CuratedDataset:
    """The curated training set: ``X[i]`` with soft target ``targets[i]`` (one-hot for selected clean
    samples, the vote for near noisy ones); ``index[i]`` is its row in the data passed to ``fit``."""

    X: np.ndarray
    targets: np.ndarray
    index: np.ndarray

    def __len__(self) -> int:
        return len(self.index)

    def __getitem__(self, i):
        return self.X[i], self.targets[i]

    @property
    def labels(self) -> np.ndarray:
        """Hard labels: the arg-max of each target."""
        return self.targets.argmax(axis=1)


def check_ref_classes(ref_labels: np.ndarray, n_classes: int, allow_missing: bool) -> None:
    missing = np.setdiff1d(np.arange(n_classes), ref_labels)
    if len(missing) and not allow_missing:
        raise ValueError(
            f"ref_labels has no reference for class(es) {missing.tolist()}: their vote is undefined "
            "(pass allow_missing_classes=True to give them zero vote)"
        )
    if len(missing):
        warnings.warn(f"classes {missing.tolist()} have no reference: they get zero vote", stacklevel=3)


def check_row_norms(X: np.ndarray, name: str) -> None:
    """Refuse embeddings whose row norms overflow (to inf) or underflow (to 0 for a non-zero row): the
    cosines of the vote and of the far filter would silently be 0 for them."""
    flat = X.reshape(len(X), -1)
    if flat.shape[1] == 0:
        raise ValueError(f"{name} must have at least one feature per row, got shape {X.shape}")
    with np.errstate(over="ignore", under="ignore"):
        norms = np.linalg.norm(flat, axis=1)
    if not np.isfinite(norms).all():
        raise ValueError(f"{name} holds values too large for its row norms (they overflow): rescale it")
    if np.any((norms == 0) & np.any(flat != 0, axis=1)):
        raise ValueError(f"{name} holds values too small for its row norms (they underflow to 0): rescale it")


def check_in_range(labels: np.ndarray, n_classes: int, name: str) -> None:
    if len(labels) and (labels.min() < 0 or labels.max() >= n_classes):
        raise ValueError(
            f"{name} must lie in [0, {n_classes}), got values in [{labels.min()}, {labels.max()}]"
        )


def compute_votes(
    Z: np.ndarray,
    labels: np.ndarray,
    ref_Z: np.ndarray,
    ref_labels: np.ndarray,
    n_classes: int,
    est: TrainRef,
    seed: int,
) -> np.ndarray:
    heads = _train.voting_head_checkpoints(
        Z,
        labels,
        n_classes,
        epochs=est.head_epochs,
        checkpoint_every=est.checkpoint_every,
        n_checkpoints=est.n_checkpoints,
        seed=seed,
    )
    train_logits = np.stack([_train.logits(Z, h) for h in heads])
    ref_logits = np.stack([_train.logits(ref_Z, h) for h in heads])
    inf = class_influence(Z, train_logits, ref_Z, ref_logits, ref_labels, n_classes, est.chunk_size)
    return votes_from_influence(inf)


def select(
    Z: np.ndarray,
    labels: np.ndarray,
    votes: np.ndarray,
    ref_Z: np.ndarray,
    calib_Z: np.ndarray,
    est: TrainRef,
) -> dict[str, np.ndarray]:
    """The 0.5 split, the OOD and far filters and the curated index/targets, as ``train_script.py``."""
    n, n_classes = votes.shape
    clean = votes[np.arange(n), labels] >= est.clean_threshold
    ood = np.zeros(n, dtype=bool)
    if clean.sum() < 2:
        warnings.warn(
            f"{int(clean.sum())} sample(s) selected as clean: no covariance for the OOD filter, none is OOD",
            stacklevel=3,
        )
    else:
        clean_Z = Z[clean]
        mean, prec = clean_Z.mean(axis=0), _select.precision_matrix(clean_Z)
        dist = _select.mahalanobis(Z, mean, prec, est.chunk_size)
        ood = dist > np.percentile(_select.mahalanobis(ref_Z, mean, prec, est.chunk_size), est.ood_percentile)
    knn = _select.knn_cosine_distance(Z, ref_Z, est.knn, est.chunk_size)
    far_threshold = np.percentile(
        _select.knn_cosine_distance(calib_Z, ref_Z, est.knn, est.chunk_size), est.far_percentile
    )
    far = knn >= far_threshold
    clean_ids = np.flatnonzero(clean & ~ood)
    near_noisy = ~clean & ~far & ~ood
    zero = votes.sum(axis=1) == 0
    if not est.keep_zero_votes:
        near_noisy &= ~zero
    noisy_ids = np.flatnonzero(near_noisy)
    targets = np.concatenate([np.eye(n_classes)[labels[clean_ids]], votes[noisy_ids]])
    return {
        "clean": clean,
        "ood": ood,
        "far": far,
        "index": np.concatenate([clean_ids, noisy_ids]),
        "targets": targets,
        "zero_votes": zero,
    }


def augmented_reference(
    ref_Z: np.ndarray,
    ref_labels: np.ndarray,
    Z: np.ndarray,
    labels: np.ndarray,
    clean: np.ndarray,
    per_class: int,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """D_ref plus a class-balanced draw of ``per_class`` selected-clean samples per class (all of a
    class when it has fewer; the authors' ``np.random.choice(..., 100, replace=False)``); returns the new
    reference embeddings, labels and the drawn training rows."""
    drawn = []
    for k in np.unique(labels):
        ids = np.flatnonzero(clean & (labels == k))
        drawn.append(rng.choice(ids, min(per_class, len(ids)), replace=False) if len(ids) else ids)
    drawn = np.sort(np.concatenate(drawn)).astype(np.int64) if drawn else np.zeros(0, np.int64)
    return np.vstack([ref_Z, Z[drawn]]), np.concatenate([ref_labels, labels[drawn]]), drawn


class TrainRef(BaseEstimator):
    """TrainRef (ICLR 2026): reference-guided label curation into class distributions.

    Each round: (1) a linear head is trained on the (frozen) embeddings with the noisy labels (SGD,
    lr 1e-3, momentum 0.9, batch 32, constant lr, ``head_epochs`` epochs) and ``n_checkpoints``
    checkpoints are kept (every ``checkpoint_every`` epochs); (2) the all-ones influence vote
    (:func:`iclr26.trainref.influence_votes`) of every sample on the reference set gives a class
    distribution ``soft_labels_``; (3) a sample is *clean* when the vote on its given label is
    ``>= clean_threshold``; (4) *OOD* when its Mahalanobis distance to the clean set (mean, covariance)
    exceeds the ``ood_percentile`` percentile of the reference set's distances; (5) *far* when its mean
    cosine distance to its ``knn`` nearest references is at least the ``far_percentile`` percentile of
    the same distance over ``calibration_X`` (default: the reference set); (6) the curated set is the
    clean non-OOD samples (one-hot given label) plus the near non-OOD noisy samples (their vote). Then
    the reference of the next round is D_ref plus ``augment_per_class`` selected-clean samples per class
    (reference augmentation), and, when a torch ``backbone`` is given, backbone and head are fine-tuned
    on the curated set as ``finetune_script.py`` does and the data re-embedded (co-evolving).

    Parameters
    ----------
    n_rounds, head_epochs, checkpoint_every, n_checkpoints, clean_threshold, ood_percentile, knn,
    far_percentile, augment_per_class:
        As above (defaults: the authors' constants).
    backbone:
        ``None``: ``X`` and ``ref_X`` are embeddings. Otherwise a ``torch.nn.Module`` mapping a batch of
        inputs to (batch, d) embeddings; it is fine-tuned in place each round.
    n_classes:
        Number of classes K (default: 1 + the largest label seen).
    finetune_epochs, finetune_lr, mixup_alpha:
        Fine-tuning of the final classifier on the curated set (``finetune_script.py``: 15 epochs,
        AdamW lr 1e-4 with the backbone at 0.6x, cosine with 100 warm-up steps, soft CE + soft mixup
        ``Beta(5, 5)``). Without a backbone the classifier is a linear head on the embeddings, trained
        the same way with ``classifier_lr`` for ``head_epochs`` epochs.
    allow_missing_classes:
        Accept a reference set missing a class (its vote is zero) instead of raising ``ValueError``.
    keep_zero_votes:
        Keep near noisy samples whose vote is all zero in the curated set with an all-zero target, as
        the authors do (default ``False``: they are left out; an all-zero target carries no loss).
    chunk_size:
        Rows per chunk of the vote and distance computations (memory O(chunk x |D_ref|)).
    random_state:
        Seed of every random draw (head initialisation, batches, reference augmentation).

    Attributes
    ----------
    n_classes_, soft_labels_ (n, K), clean_mask_, noisy_mask_, ood_mask_, far_mask_ (n,),
    train_index_ (rows of the curated set), train_targets_ (its soft targets), ref_index_ (training rows
    added to the reference by augmentation in the last round), round_stats_ (one dict per round:
    counts and the masks of that round), embeddings_ (n, d) the last round's embeddings, model_ (the
    fitted torch classifier).

    References
    ----------
    TrainRef, ICLR 2026; authors' code github.com/xaimm/TrainRef (``utils.get_influence_scores``,
    ``train_script.py``, ``finetune_script.py``).
    """

    def __init__(
        self,
        n_rounds: int = 2,
        head_epochs: int = 30,
        checkpoint_every: int = 10,
        n_checkpoints: int = 3,
        clean_threshold: float = 0.5,
        ood_percentile: float = 95,
        knn: int = 10,
        far_percentile: float = 95,
        augment_per_class: int = 100,
        backbone=None,
        n_classes: int | None = None,
        finetune_epochs: int = 15,
        finetune_lr: float = 1e-4,
        classifier_lr: float = 1e-3,
        mixup_alpha: float = 5.0,
        allow_missing_classes: bool = False,
        keep_zero_votes: bool = False,
        chunk_size: int = 4096,
        random_state: int = 0,
    ):
        self.n_rounds = n_rounds
        self.head_epochs = head_epochs
        self.checkpoint_every = checkpoint_every
        self.n_checkpoints = n_checkpoints
        self.clean_threshold = clean_threshold
        self.ood_percentile = ood_percentile
        self.knn = knn
        self.far_percentile = far_percentile
        self.augment_per_class = augment_per_class
        self.backbone = backbone
        self.n_classes = n_classes
        self.finetune_epochs = finetune_epochs
        self.finetune_lr = finetune_lr
        self.classifier_lr = classifier_lr
        self.mixup_alpha = mixup_alpha
        self.allow_missing_classes = allow_missing_classes
        self.keep_zero_votes = keep_zero_votes
        self.chunk_size = chunk_size
        self.random_state = random_state

    # ------------------------------------------------------------------ validation
    def _check_params(self) -> None:
        for name, lo in (
            ("n_rounds", 1),
            ("head_epochs", 1),
            ("checkpoint_every", 1),
            ("n_checkpoints", 1),
            ("knn", 1),
            ("augment_per_class", 0),
            ("finetune_epochs", 1),
            ("chunk_size", 1),
        ):
            check_int(getattr(self, name), name, minimum=lo)
        for name in ("ood_percentile", "far_percentile"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int | float) or not 0 <= v <= 100:
                raise ValueError(f"{name} must be a number in [0, 100], got {v!r}")
        for name in ("clean_threshold", "finetune_lr", "classifier_lr", "mixup_alpha"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int | float) or not np.isfinite(v) or v < 0:
                raise ValueError(f"{name} must be a non-negative number, got {v!r}")
        if isinstance(self.random_state, bool) or not isinstance(self.random_state, int | np.integer):
            raise ValueError(f"random_state must be an integer seed, got {self.random_state!r}")
        if self.random_state < 0:
            raise ValueError(f"random_state must be a non-negative integer seed, got {self.random_state!r}")
        check_bool(self.allow_missing_classes, "allow_missing_classes")
        check_bool(self.keep_zero_votes, "keep_zero_votes")
        if not 0 <= self.clean_threshold <= 1:
            raise ValueError(f"clean_threshold must lie in [0, 1], got {self.clean_threshold!r}")

    def _embed(self, X: np.ndarray) -> np.ndarray:
        if self.backbone is None:
            return X
        return _train.predict_logits(self.backbone, X)

    def _inputs(self, X, name: str) -> np.ndarray:
        X = check_array(X, name) if self.backbone is None else check_array(X, name, ndim=None)
        if X.ndim > 1 and X[0].size == 0:
            raise ValueError(f"{name} must have at least one feature per row, got shape {X.shape}")
        largest = max(X.max(), -X.min())
        if largest > _FLOAT32_MAX:  # torch works in float32: these would become inf, then NaN
            raise ValueError(
                f"{name} holds values beyond float32's range (|x| <= {_FLOAT32_MAX:.3g}), "
                f"got {largest:.3g}: rescale it"
            )
        if self.backbone is None:
            check_row_norms(X, name)
        return X

    # ------------------------------------------------------------------ fit
    def fit(self, X, noisy_labels, ref_X, ref_labels, calibration_X=None) -> TrainRef:
        """Curate ``(X, noisy_labels)`` with the reference set ``(ref_X, ref_labels)``.

        ``X`` (n, d) and ``ref_X`` (m, d) are embeddings when ``backbone`` is ``None``, otherwise inputs
        of the backbone (any trailing shape). ``calibration_X`` (optional, same kind) are unlabelled
        in-distribution samples whose kNN distances to the reference set set the far threshold (the
        authors use their test set); default: the reference set itself.
        """
        self._check_params()
        X = self._inputs(X, "X")
        ref_X = self._inputs(ref_X, "ref_X")
        calib = ref_X if calibration_X is None else self._inputs(calibration_X, "calibration_X")
        if X.shape[1:] != ref_X.shape[1:]:
            raise ValueError(f"ref_X must have rows shaped like X's {X.shape[1:]}, got {ref_X.shape[1:]}")
        if calib.shape[1:] != X.shape[1:]:
            raise ValueError(
                f"calibration_X must have rows shaped like X's {X.shape[1:]}, got {calib.shape[1:]}"
            )
        labels = check_labels(noisy_labels, len(X), "noisy_labels")
        ref_labels = check_labels(ref_labels, len(ref_X), "ref_labels")
        if self.n_classes is None:
            n_classes = int(max(labels.max(), ref_labels.max())) + 1
        else:
            n_classes = check_int(self.n_classes, "n_classes", minimum=2)
        if n_classes < 2:
            raise ValueError(f"n_classes must be >= 2, got {n_classes}")
        check_in_range(labels, n_classes, "noisy_labels")
        check_in_range(ref_labels, n_classes, "ref_labels")
        check_ref_classes(ref_labels, n_classes, self.allow_missing_classes)
        if len(X) < 2:
            raise ValueError(f"X must have at least 2 rows, got {len(X)}")

        rng = np.random.default_rng(self.random_state)
        self.n_classes_ = n_classes
        self.round_stats_ = []
        extra_ref = np.zeros(0, np.int64)
        for r in range(self.n_rounds):
            Z, ref_Z0, calib_Z = self._embed(X), self._embed(ref_X), self._embed(calib)
            ref_Z = np.vstack([ref_Z0, Z[extra_ref]])
            round_ref_labels = np.concatenate([ref_labels, labels[extra_ref]])
            votes = compute_votes(Z, labels, ref_Z, round_ref_labels, n_classes, self, self.random_state + r)
            if not np.isfinite(votes).all():
                raise ValueError(
                    f"X: the voting head diverged in round {r + 1} (non-finite logits); the embeddings are "
                    f"too large for its SGD (largest |value| {np.abs(Z).max():.3g}): standardise X"
                )
            sel = select(Z, labels, votes, ref_Z, calib_Z, self)
            self.round_stats_.append(
                {
                    "round": r + 1,
                    "n_ref": len(ref_Z),
                    "n_clean": int(sel["clean"].sum()),
                    "n_ood": int(sel["ood"].sum()),
                    "n_far": int(sel["far"].sum()),
                    "n_zero_votes": int(sel["zero_votes"].sum()),
                    "n_train": len(sel["index"]),
                    "clean_mask": sel["clean"],
                    "train_index": sel["index"],
                    "soft_labels": votes,
                }
            )
            self.soft_labels_, self.clean_mask_ = votes, sel["clean"]
            self.noisy_mask_, self.ood_mask_, self.far_mask_ = ~sel["clean"], sel["ood"], sel["far"]
            self.train_index_, self.train_targets_ = sel["index"], sel["targets"]
            self.embeddings_ = Z
            self.ref_index_ = extra_ref
            if self.backbone is not None:
                self._fit_model(X, seed=self.random_state + 100 + r)
            if r + 1 < self.n_rounds:
                extra_ref = augmented_reference(
                    ref_Z0, ref_labels, Z, labels, sel["clean"], self.augment_per_class, rng
                )[2]
        if self.backbone is None:
            self._fit_model(X, seed=self.random_state + 100)
        self._row_shape = X.shape[1:]
        return self

    def _fit_model(self, X: np.ndarray, seed: int) -> None:
        import torch

        if len(self.train_index_) == 0:
            warnings.warn("the curated set is empty: the classifier is not trained", stacklevel=3)
        d = self.embeddings_.shape[1]
        if self.backbone is None:
            torch.manual_seed(seed)
            self.model_ = torch.nn.Linear(d, self.n_classes_, dtype=torch.float32)
            epochs, lr, backbone = self.head_epochs, self.classifier_lr, None
        else:
            if not hasattr(self, "model_"):
                torch.manual_seed(seed)
                head = torch.nn.Sequential(
                    torch.nn.LayerNorm(d),
                    torch.nn.Linear(d, 512),
                    torch.nn.ReLU(),
                    torch.nn.Dropout(0.1),
                    torch.nn.Linear(512, self.n_classes_),
                ).float()
                self.model_ = torch.nn.Sequential(self.backbone, head)
            epochs, lr, backbone = self.finetune_epochs, self.finetune_lr, self.backbone
        inputs = self.embeddings_ if self.backbone is None else X
        if len(self.train_index_):
            _train.train_soft(
                self.model_,
                inputs[self.train_index_],
                self.train_targets_,
                epochs=epochs,
                seed=seed,
                lr=lr,
                backbone=backbone,
                mixup_alpha=self.mixup_alpha or None,
                threads=1 if backbone is None else max(1, min(4, torch.get_num_threads())),
            )
            if not all(torch.isfinite(p).all() for p in self.model_.parameters()):
                lr_name = "classifier_lr" if backbone is None else "finetune_lr"
                raise ValueError(
                    f"the classifier diverged (non-finite weights): lower {lr_name} (got {lr!r}) "
                    "or standardise X"
                )

    # ------------------------------------------------------------------ use
    def _check_fitted(self) -> None:
        if not hasattr(self, "model_"):
            raise ValueError("this TrainRef instance is not fitted yet: call fit first")

    def curate(self) -> CuratedDataset:
        """The curated training set of the last round (embeddings, soft targets, row indices)."""
        self._check_fitted()
        return CuratedDataset(self.embeddings_[self.train_index_], self.train_targets_, self.train_index_)

    def predict_proba(self, X) -> np.ndarray:
        """(n, K) class probabilities of the classifier trained on the curated set."""
        self._check_fitted()
        X = self._inputs(X, "X")
        expected = getattr(self, "_row_shape", X.shape[1:])
        if X.shape[1:] != expected:
            raise ValueError(
                f"X must have rows shaped like the training data's {expected}, got {X.shape[1:]}"
            )
        from ._votes import softmax

        logits = _train.predict_logits(self.model_, X)
        if not np.isfinite(logits).all():
            raise ValueError(
                "X: the classifier's logits overflow (non-finite) on it: its values are too large"
            )
        return softmax(logits)

    def predict(self, X) -> np.ndarray:
        return self.predict_proba(X).argmax(axis=1)

"""Response matrices whose columns are item *variants* (full, no-image, no-question, no-info).

The M3-IRT authors store one CSV per benchmark: rows are models, columns are items, and every item
appears four times, as ``name`` (image and question shown), ``<no_image>name`` (question only),
``<no_question>name`` (image only) and ``<no_info>name`` (neither). Each column carries two indicators:
``r_text`` (the question text is shown) and ``r_image`` (the image is shown).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from iclr26.validation import check_array

#: Column-name prefixes of the three ablated variants, and their (r_text, r_image) indicators.
VARIANT_PREFIXES: dict[str, tuple[int, int]] = {
    "<no_image>": (1, 0),
    "<no_question>": (0, 1),
    "<no_info>": (0, 0),
}
#: Variant labels in the order used by :attr:`ResponseMatrix.variant`.
VARIANTS = ("full", "no_image", "no_question", "no_info")


def parse_variant(column: str) -> tuple[str, str, int, int]:
    """Split an authors'-format column name into ``(item, variant, r_text, r_image)``.

    >>> parse_variant("<no_image>validation_Art_3")
    ('validation_Art_3', 'no_image', 1, 0)
    >>> parse_variant("validation_Art_3")
    ('validation_Art_3', 'full', 1, 1)
    """
    column = str(column)
    for prefix, (rt, ri) in VARIANT_PREFIXES.items():
        if column.startswith(prefix):
            return column[len(prefix) :], prefix[1:-1], rt, ri
    return column, "full", 1, 1


def is_low_quality(column: str) -> bool:
    """Whether a column of the authors' ``shuffled_*`` files is a low-quality (contaminated) item.

    The rule follows the authors' judge: a column is low quality when its item name marks a shuffle
    (``shuffle`` or ``from``), except for the variants in which the shuffled modality is not shown
    (then the remaining modality is intact): the ``<no_info>`` variant, ``<no_question>`` of
    ``shuffle_image`` / ``question_from`` items, ``<no_image>`` of ``shuffle_question`` / ``image_from``
    items and, in the MMMU naming, ``<no_image>shuffled_image`` / ``<no_question>shuffled_question``.
    """
    c = str(column)
    if "shuffle" not in c and "from" not in c:
        return False
    if c.startswith("<no_info>"):
        return False
    clean = (
        ("<no_question>", "shuffle_image"),
        ("<no_image>", "shuffle_question"),
        ("<no_image>", "shuffled_image"),
        ("<no_question>", "shuffled_question"),
    )
    if any(c.startswith(p + s) for p, s in clean):
        return False
    if c.startswith("<no_image>") and "image_from" in c:
        return False
    if c.startswith("<no_question>") and "question_from" in c:
        return False
    return True


@dataclass
class ResponseMatrix:
    """A binary response matrix with item-variant structure.

    Attributes
    ----------
    values : ndarray of shape (n_models, n_columns)
        1 = correct, 0 = wrong, NaN = not observed.
    models : list of str, length n_models
    columns : list of str, length n_columns
    group : ndarray of int, shape (n_columns,)
        Index of the item (the set of four variants) each column belongs to, in ``0..n_items-1``.
    items : list of str, length n_items
        Item names (column names without the variant prefix).
    r_text, r_image : ndarray of {0, 1}, shape (n_columns,)
        The paper's indicators: the question text (``r_t``) / the image (``r_i``) is shown.
    low_quality : ndarray of bool, shape (n_columns,)
        Columns known to be low-quality (e.g. the authors' shuffled items); all False by default.
    """

    values: np.ndarray
    models: list[str]
    columns: list[str]
    group: np.ndarray
    items: list[str]
    r_text: np.ndarray
    r_image: np.ndarray
    low_quality: np.ndarray = field(default=None)  # type: ignore[assignment]

    def __post_init__(self) -> None:
        if np.asarray(self.values).dtype == bool:  # a boolean 0/1 matrix is a response matrix
            self.values = np.asarray(self.values, dtype=np.float64)
        self.values = check_array(self.values, "values", finite=False)
        n, j = self.values.shape
        obs = self.values[~np.isnan(self.values)]
        if obs.size and not np.all((obs == 0) | (obs == 1)):
            raise ValueError("values must be 0/1 (or NaN for missing)")
        if len(self.models) != n:
            raise ValueError(f"models must have length {n}, got {len(self.models)}")
        if len(self.columns) != j:
            raise ValueError(f"columns must have length {j}, got {len(self.columns)}")
        self.group = np.asarray(self.group, dtype=np.int64)
        self.r_text = np.asarray(self.r_text, dtype=np.float64)
        self.r_image = np.asarray(self.r_image, dtype=np.float64)
        for name in ("group", "r_text", "r_image"):
            if getattr(self, name).shape != (j,):
                raise ValueError(f"{name} must have shape ({j},), got {getattr(self, name).shape}")
        if j and (self.group.min() < 0 or self.group.max() >= len(self.items)):
            raise ValueError(f"group must index items 0..{len(self.items) - 1}")
        for name in ("r_text", "r_image"):
            v = getattr(self, name)
            if not np.all((v == 0) | (v == 1)):
                raise ValueError(f"{name} must hold 0/1 indicators")
        if self.low_quality is None:
            self.low_quality = np.zeros(j, dtype=bool)
        self.low_quality = np.asarray(self.low_quality, dtype=bool)
        if self.low_quality.shape != (j,):
            raise ValueError(f"low_quality must have shape ({j},)")

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_columns(
        cls, values: Any, columns: list[str], models: list[str] | None = None, low_quality: Any = None
    ) -> ResponseMatrix:
        """Build from a matrix and authors'-format column names (variant prefixes parsed)."""
        values = check_array(values, "values", finite=False)
        columns = [str(c) for c in columns]
        if len(columns) != values.shape[1]:
            raise ValueError(f"columns must have length {values.shape[1]}, got {len(columns)}")
        items: list[str] = []
        index: dict[str, int] = {}
        group, rt, ri = [], [], []
        for c in columns:
            item, _, t, i = parse_variant(c)
            if item not in index:
                index[item] = len(items)
                items.append(item)
            group.append(index[item])
            rt.append(t)
            ri.append(i)
        models = [str(m) for m in (models if models is not None else range(values.shape[0]))]
        return cls(values, models, columns, np.array(group), items, np.array(rt), np.array(ri), low_quality)

    @classmethod
    def from_frame(cls, frame: Any, low_quality: Any = None) -> ResponseMatrix:
        """Build from a pandas DataFrame (index = models, columns = authors'-format names)."""
        return cls.from_columns(
            frame.to_numpy(dtype=np.float64), list(frame.columns), list(frame.index), low_quality
        )

    # ------------------------------------------------------------------ views
    @property
    def n_models(self) -> int:
        return self.values.shape[0]

    @property
    def n_items(self) -> int:
        return len(self.items)

    @property
    def shape(self) -> tuple[int, int]:
        return self.values.shape

    @property
    def variant(self) -> np.ndarray:
        """Variant label per column (one of :data:`VARIANTS`)."""
        code = (1 - self.r_text) * 2 + (1 - self.r_image)  # full 0, no_image 1, no_question 2, no_info 3
        return np.array(VARIANTS, dtype=object)[code.astype(int)]

    @property
    def item_low_quality(self) -> np.ndarray:
        """Per item: whether any of its columns is low-quality, shape (n_items,)."""
        out = np.zeros(self.n_items, dtype=bool)
        np.logical_or.at(out, self.group, self.low_quality)
        return out

    def take_models(self, rows: Any) -> ResponseMatrix:
        """A copy restricted to the models at positions ``rows``."""
        rows = np.asarray(rows)
        return ResponseMatrix(
            self.values[rows],
            [self.models[r] for r in np.arange(self.n_models)[rows]],
            list(self.columns),
            self.group.copy(),
            list(self.items),
            self.r_text.copy(),
            self.r_image.copy(),
            self.low_quality.copy(),
        )

    def take_items(self, items: Any) -> ResponseMatrix:
        """A copy restricted to the items (all their variants) at positions ``items``, renumbered."""
        items = np.unique(np.asarray(items, dtype=np.int64))
        keep = np.isin(self.group, items)
        remap = -np.ones(self.n_items, dtype=np.int64)
        remap[items] = np.arange(items.size)
        return ResponseMatrix(
            self.values[:, keep],
            list(self.models),
            [c for c, k in zip(self.columns, keep) if k],
            remap[self.group[keep]],
            [self.items[i] for i in items],
            self.r_text[keep],
            self.r_image[keep],
            self.low_quality[keep],
        )

    def accuracy(self, items: Any | None = None) -> np.ndarray:
        """Mean correctness per model over all columns (of ``items`` if given), shape (n_models,)."""
        cols = np.ones(self.values.shape[1], bool) if items is None else np.isin(self.group, items)
        return np.nanmean(self.values[:, cols], axis=1)

    def to_frame(self) -> Any:
        import pandas as pd

        return pd.DataFrame(self.values, index=self.models, columns=self.columns)


def merge_responses(normal: ResponseMatrix, extra: ResponseMatrix) -> ResponseMatrix:
    """Concatenate the items of two matrices on their common models (like the authors' inner join).

    Typically ``normal`` is the benchmark and ``extra`` the shuffled (low-quality) items.
    """
    common = [m for m in normal.models if m in set(extra.models)]
    if not common:
        raise ValueError("normal and extra share no model names")
    ia = [normal.models.index(m) for m in common]
    ib = [extra.models.index(m) for m in common]
    clash = set(normal.items) & set(extra.items)
    if clash:
        raise ValueError(f"item names occur in both matrices, e.g. {sorted(clash)[:3]}")
    return ResponseMatrix(
        np.concatenate([normal.values[ia], extra.values[ib]], axis=1),
        common,
        list(normal.columns) + list(extra.columns),
        np.concatenate([normal.group, extra.group + normal.n_items]),
        list(normal.items) + list(extra.items),
        np.concatenate([normal.r_text, extra.r_text]),
        np.concatenate([normal.r_image, extra.r_image]),
        np.concatenate([normal.low_quality, extra.low_quality]),
    )


def read_responses(path: str | Path, low_quality: str | Any = "auto") -> ResponseMatrix:
    """Read one of the authors' response CSVs (first column = model names).

    ``low_quality="auto"`` marks columns by :func:`is_low_quality` (the authors' rule); pass ``None``
    for none, or a boolean array.
    """
    import pandas as pd

    frame = pd.read_csv(Path(path), index_col=0, encoding="utf-8-sig")
    frame.columns = [str(c) for c in frame.columns]
    if isinstance(low_quality, str):
        if low_quality != "auto":
            raise ValueError(f"low_quality must be 'auto', None or an array, got {low_quality!r}")
        low_quality = np.array([is_low_quality(c) for c in frame.columns], dtype=bool)
    return ResponseMatrix.from_frame(frame, low_quality)


def shared_data_dir() -> Path | None:
    """Where the authors' response matrices are (``normal_mmmu.csv`` ...), or None
    (:func:`iclr26.runtime.find_shared_data` for ``m3-irt``)."""
    from ..runtime import find_shared_data

    return find_shared_data("m3-irt", "normal_mmmu.csv")


def validation_split(
    data: ResponseMatrix, fraction: float, rng: np.random.Generator, observed: np.ndarray | None = None
) -> np.ndarray:
    """Boolean (n_models, n_columns) mask of held-out cells, balanced per item as the authors do.

    For every item, ``ceil(fraction * n_models)`` models are drawn and all four variants of that item
    are held out for them (so no variant of a held-out answer leaks into training).
    """
    if not 0 < fraction < 1:
        raise ValueError(f"fraction must lie in (0, 1), got {fraction}")
    n = data.n_models
    k = max(1, math.ceil(fraction * n))
    if k >= n:
        raise ValueError(f"fraction={fraction} holds out every model for an item")
    # per item, a random permutation of models; the first k are held out
    keys = rng.random((data.n_items, n))
    held_item = np.argsort(keys, axis=1)[:, :k]
    held = np.zeros((n, data.n_items), dtype=bool)
    held[held_item, np.arange(data.n_items)[:, None]] = True
    mask = held[:, data.group]
    if observed is not None:
        mask &= observed
    return mask

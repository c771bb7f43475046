"""Tab-MIA: membership inference on LLMs fine-tuned on serialised tables (German et al., ICLR 2026).

Public API:

- :func:`encode_table`: the six serialisations (``json``, ``html``, ``markdown``, ``key-value-pair``,
  ``key-is-value``, ``line-sep``), byte-identical to the authors' encoders;
- :func:`make_benchmark` (long-context: row chunks of one table) and :func:`make_benchmark_from_tables`
  (short-context: whole small tables); :func:`make_synthetic_benchmark` (real vs synthetic rows, the
  authors' ``main_syn`` protocol) with :func:`cart_synthesize` (our sequential CART synthesizer);
  :func:`load_tab_mia` reads the released jsonl files;
- :func:`finetune_lora`: LoRA fine-tuning with the authors' hyper-parameters, merged into a copy;
  :func:`lora_finetuned`: the same as a context manager that adapts the model in place (no copy);
- :func:`mia_scores` (ppl, lowercase, zlib, Min-K%, Max-K%, Min-K%++ at 10/20/30 %) and
  :func:`mia_metrics` (AUROC, FPR@95 %TPR, TPR@5 %FPR, balanced accuracy).

Reference: E. German, S. Antebi, D. Samira, A. Shabtai, Y. Elovici, "Tab-MIA: A Benchmark Dataset for
Membership Inference Attacks on Tabular Data in LLMs", ICLR 2026; code: github.com/eyalgerman/Tab-MIA.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..validation import check_in, check_int, check_labels
from ._attacks import (
    ATTACKS,
    AUTHORS_NAMES,
    MEMBER_SIGN,
    attack_metrics,
    scores_frame,
    text_scores,
    token_stats,
)
from ._benchmark import long_context, real_vs_synthetic, short_context
from ._encoders import ENCODINGS, csv_rows, encode_csv_text
from ._lora import AUTHORS_TARGETS, adapted, train_lora
from ._synth import cart_rows

__all__ = [
    "ATTACKS",
    "AUTHORS_NAMES",
    "AUTHORS_TARGETS",
    "ENCODINGS",
    "MEMBER_SIGN",
    "cart_synthesize",
    "encode_table",
    "finetune_lora",
    "load_tab_mia",
    "lora_finetuned",
    "make_benchmark",
    "make_benchmark_from_tables",
    "make_synthetic_benchmark",
    "mia_metrics",
    "mia_scores",
]

#: The authors truncate every text to this many characters before scoring (``MAX_LEN_LINE``).
MAX_CHARS = 10000


def _csv_text(table: Any, name: str) -> str:
    """A DataFrame as ``to_csv(index=False)``, a path to a ``.csv`` file as its text, or CSV text as is."""
    if isinstance(table, pd.DataFrame):
        if table.shape[0] == 0 or table.shape[1] == 0:
            raise ValueError(f"{name} must have at least one row and one column, got shape {table.shape}")
        return table.to_csv(index=False)
    if isinstance(table, os.PathLike) or (
        isinstance(table, str) and "\n" not in table and table.endswith(".csv")
    ):
        path = Path(table)
        if not path.is_file():
            raise ValueError(f"{name}: no such CSV file {str(path)!r}")
        table = path.read_text(encoding="utf-8")
    if not isinstance(table, str):
        raise ValueError(
            f"{name} must be a DataFrame, CSV text or a path to a .csv file, got {type(table).__name__}"
        )
    if len(csv_rows(table)) < 2:
        raise ValueError(f"{name} must hold a header and at least one data row")
    return table


def encode_table(table: Any, encoding: str) -> str:
    """Serialise one table as the authors do (``encode_line_sep_table``).

    Parameters
    ----------
    table: a DataFrame (written with ``to_csv(index=False)``), CSV text, or a path to a ``.csv`` file.
    encoding: one of :data:`ENCODINGS`.

    Returns
    -------
    The serialised table (``line-sep``: the CSV text itself).
    """
    check_in(encoding, ENCODINGS, "encoding")
    return encode_csv_text(_csv_text(table, "table"), encoding)


def make_benchmark(table: Any, chunk_size: int, encoding: str, seed: int = 42) -> pd.DataFrame:
    """Long-context Tab-MIA benchmark from one table (the authors' ``chunk_csv_to_text``).

    The table is cut into chunks of ``chunk_size`` consecutive rows; the chunks are shuffled with
    ``random.seed(seed)``; the first half (``n_chunks // 2``) are members.

    Returns
    -------
    DataFrame with columns ``input`` (str, the encoded chunk) and ``label`` (1 member, 0 non-member),
    members first.

    Raises
    ------
    ValueError: unknown ``encoding``, ``chunk_size < 1``, an empty table, or (for any encoding other
    than ``key-value-pair``) a header or value containing ``,``, ``": "``, ``" | "`` or a newline, which
    the authors' key-value → CSV round trip silently corrupts.
    """
    check_in(encoding, ENCODINGS, "encoding")
    chunk_size = check_int(chunk_size, "chunk_size", minimum=1)
    seed = check_int(seed, "seed")
    return long_context(_csv_text(table, "table"), chunk_size, encoding, seed)


def make_benchmark_from_tables(tables: Sequence[pd.DataFrame], encoding: str, seed: int = 42) -> pd.DataFrame:
    """Short-context Tab-MIA benchmark from many small tables (the authors' ``load_data_unique_tables``).

    Duplicate tables (same CSV text) are kept once; the unique tables are shuffled with
    ``random.seed(seed)`` and the first half are members. Returns the same frame as :func:`make_benchmark`.
    """
    check_in(encoding, ENCODINGS, "encoding")
    seed = check_int(seed, "seed")
    if isinstance(tables, pd.DataFrame) or not isinstance(tables, Sequence) or len(tables) < 2:
        raise ValueError("tables must be a sequence of at least two DataFrames")
    for i, t in enumerate(tables):
        _csv_text(t, f"tables[{i}]")
    return short_context(list(tables), encoding, seed)


def make_synthetic_benchmark(real: Any, synthetic: Any, chunk_size: int, encoding: str) -> pd.DataFrame:
    """Real rows against synthetic rows (the authors' ``chunk_csv_with_synthetic_data``, ``main_syn.py``).

    Both tables are cut into chunks of ``chunk_size`` consecutive rows in file order (no shuffle); real
    chunks are labelled 1 ("member": a model that saw the real table should find them more likely),
    synthetic chunks 0; the longer list is cut to the length of the shorter. Encodings as
    :func:`make_benchmark`.

    Returns the same frame as :func:`make_benchmark` (real chunks first).

    Raises
    ------
    ValueError: as :func:`make_benchmark` for either table, or when their columns differ.
    """
    check_in(encoding, ENCODINGS, "encoding")
    chunk_size = check_int(chunk_size, "chunk_size", minimum=1)
    real_csv, synthetic_csv = _csv_text(real, "real"), _csv_text(synthetic, "synthetic")
    real_header, synthetic_header = csv_rows(real_csv)[0], csv_rows(synthetic_csv)[0]
    if real_header != synthetic_header:
        raise ValueError(
            f"synthetic must have the real table's columns {real_header}, got {synthetic_header}"
        )
    return real_vs_synthetic(real_csv, synthetic_csv, chunk_size, encoding)


def cart_synthesize(
    table: pd.DataFrame, n_rows: int, *, seed: int = 0, min_samples_leaf: int = 5
) -> pd.DataFrame:
    """Synthetic rows of ``table`` by sequential CART (Reiter 2005; synthpop's default method).

    Column 1 is drawn from its marginal; each later column from a tree (classification for text,
    regression for numbers) fitted on the real rows with the earlier columns as features: a synthetic
    row takes the value of a random real row of the leaf it falls into. Every value is a real value.

    Parameters
    ----------
    table : DataFrame of shape (n, d)
        The real rows; numeric columns finite, without missing values (text columns may hold any
        marker).
    n_rows : int
        Rows to draw.
    seed : int
        Seed of the draws and the trees; the output is a function of (table, n_rows, seed).
    min_samples_leaf : int
        Real rows per leaf at least (synthpop's ``minbucket``, default 5).

    Returns
    -------
    DataFrame of shape (n_rows, d), the same columns and dtypes.
    """
    if not isinstance(table, pd.DataFrame) or table.shape[0] == 0 or table.shape[1] == 0:
        raise ValueError("table must be a DataFrame with at least one row and one column")
    n_rows = check_int(n_rows, "n_rows", minimum=1)
    seed = check_int(seed, "seed", minimum=0)
    min_samples_leaf = check_int(min_samples_leaf, "min_samples_leaf", minimum=1)
    for col in table.columns:
        if pd.api.types.is_numeric_dtype(table[col]) and not np.isfinite(table[col].to_numpy(float)).all():
            raise ValueError(
                f"table: numeric column {col!r} has missing values or infinities; fill or drop them first"
            )
    return cart_rows(table, n_rows, seed, min_samples_leaf)


def load_tab_mia(path: str | os.PathLike) -> pd.DataFrame:
    """Read a Tab-MIA jsonl file (one ``{"input": str, "label": 0 or 1}`` per line; the Hugging Face
    release ``germane/Tab-MIA`` saved as jsonl, or the authors' generated files)."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"path: no such file {str(path)!r}")
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    if not records or any(not isinstance(r, dict) or "input" not in r or "label" not in r for r in records):
        raise ValueError(f"path: {str(path)!r} must hold one JSON object with 'input' and 'label' per line")
    df = pd.DataFrame({"input": [str(r["input"]) for r in records], "label": [r["label"] for r in records]})
    df["label"] = _check_binary(df["label"].to_numpy(), "label")
    return df


def _check_binary(labels: Any, name: str, n: int | None = None) -> np.ndarray:
    arr = check_labels(labels, n=n, name=name)
    if not np.isin(arr, (0, 1)).all():
        raise ValueError(f"{name} must hold 0 (non-member) and 1 (member) only")
    return arr


def _unwrap(model: Any) -> tuple[Any, Any]:
    """``(torch_model, tokenizer)`` from an :class:`iclr26.models.HFModel` or such a pair."""
    if isinstance(model, tuple) and len(model) == 2:
        return model
    if hasattr(model, "model") and hasattr(model, "tokenizer"):
        return model.model, model.tokenizer
    raise ValueError("model must be an iclr26.models.HFModel or a (transformers model, tokenizer) pair")


def _check_texts(texts: Any, name: str = "texts") -> list[str]:
    if isinstance(texts, str) or not isinstance(texts, Sequence | pd.Series | np.ndarray) or len(texts) == 0:
        raise ValueError(f"{name} must be a non-empty sequence of strings")
    texts = list(texts)
    for i, t in enumerate(texts):
        if not isinstance(t, str) or not t:
            raise ValueError(f"{name}[{i}] must be a non-empty string")
    return texts


#: Mixed-precision dtypes :func:`finetune_lora` accepts (None: the model's own precision).
COMPUTE_DTYPES = ("bfloat16", "float16")


def _compute_dtype(name: str | None):
    """The torch dtype of ``compute_dtype`` (None stays None)."""
    if name is None:
        return None
    check_in(name, COMPUTE_DTYPES, "compute_dtype")
    import torch

    return getattr(torch, name)


def _lora_settings(
    texts,
    epochs,
    lr,
    r,
    alpha,
    dropout,
    batch_size,
    warmup,
    schedule,
    targets,
    seed,
    max_length,
    compute_dtype,
    on_step,
) -> tuple[list[str], dict[str, Any]]:
    """Validated ``texts`` and the keyword arguments of the trainers in ``_lora``."""
    texts = _check_texts(texts)
    check_in(schedule, ("cosine", "linear", "constant"), "schedule")
    for name, value in (("lr", lr), ("alpha", alpha)):
        if (
            not isinstance(value, int | float)
            or isinstance(value, bool)
            or not np.isfinite(value)
            or value <= 0
        ):
            raise ValueError(f"{name} must be a positive number, got {value!r}")
    if not isinstance(dropout, int | float) or not 0.0 <= dropout < 1.0:
        raise ValueError(f"dropout must lie in [0, 1), got {dropout!r}")
    if isinstance(targets, str) or not targets:
        raise ValueError("targets must be a non-empty sequence of layer names")
    settings = {
        "epochs": check_int(epochs, "epochs", minimum=1),
        "lr": float(lr),
        "r": check_int(r, "r", minimum=1),
        "alpha": float(alpha),
        "dropout": float(dropout),
        "batch_size": check_int(batch_size, "batch_size", minimum=1),
        "warmup": check_int(warmup, "warmup", minimum=0),
        "schedule": schedule,
        "targets": tuple(targets),
        "seed": check_int(seed, "seed"),
        "max_length": check_int(max_length, "max_length", minimum=2),
        "compute_dtype": _compute_dtype(compute_dtype),
        "on_step": on_step,
    }
    return texts, settings


def finetune_lora(
    model: Any,
    texts: Sequence[str],
    *,
    epochs: int = 3,
    lr: float = 3e-4,
    r: int = 16,
    alpha: float = 16,
    dropout: float = 0.05,
    batch_size: int = 2,
    warmup: int = 20,
    schedule: str = "cosine",
    targets: Sequence[str] = AUTHORS_TARGETS,
    seed: int = 0,
    max_length: int = 1024,
    compute_dtype: str | None = None,
    on_step: Any = None,
):
    """Fine-tune ``model`` on ``texts`` with LoRA (the authors' ``finetune_LLM.py`` settings) and merge.

    Parameters
    ----------
    model: an :class:`iclr26.models.HFModel` (its device is used: CPU fp32, or GPU) or a
        ``(transformers model, tokenizer)`` pair; it is not modified.
    texts: the member texts, each tokenised on its own (``max_length`` tokens at most, the SFT default).
    epochs, lr, r, alpha, dropout, batch_size, warmup, schedule: as the authors (``schedule`` one of
        ``cosine``, ``linear``, ``constant``).
    targets: names of the linear layers that get adapters.
    seed: seeds the adapter initialisation, the dropout and the batch order (same seed, same model).
    compute_dtype: None (train in the model's own precision: fp32 for the embedded model on CPU) or
        ``"bfloat16"`` / ``"float16"``: mixed precision (``torch.autocast``; the authors compute in fp16
        over 4-bit weights). Matrix products run in that dtype, the adapters, their gradients and AdamW
        in fp32, no loss scaling; bfloat16 is about 2x faster per step on a CPU with AMX (docs/tab-mia.md).
    on_step: optional ``callback(step, n_steps, loss)``.

    Returns
    -------
    The merged model, of the input's kind (``HFModel`` or pair), with ``.train_losses`` (per step) set
    on the ``HFModel`` (or the transformers model of a pair). It is a new model: the base weights are
    copied (see :func:`lora_finetuned` to adapt the model in place, without the copy).
    """
    texts, settings = _lora_settings(
        texts, epochs, lr, r, alpha, dropout, batch_size, warmup, schedule, targets, seed, max_length,
        compute_dtype, on_step,
    )  # fmt: skip
    net, tokenizer = _unwrap(model)
    merged, losses = train_lora(net, tokenizer, texts, **settings)
    if isinstance(model, tuple):
        merged.train_losses = losses
        return merged, tokenizer
    from ..models import HFModel

    out = HFModel(merged, tokenizer, name=f"{model.name}+lora", device=str(model.device))
    out.train_losses = losses
    return out


@contextmanager
def lora_finetuned(
    model: Any,
    texts: Sequence[str],
    *,
    epochs: int = 3,
    lr: float = 3e-4,
    r: int = 16,
    alpha: float = 16,
    dropout: float = 0.05,
    batch_size: int = 2,
    warmup: int = 20,
    schedule: str = "cosine",
    targets: Sequence[str] = AUTHORS_TARGETS,
    seed: int = 0,
    max_length: int = 1024,
    compute_dtype: str | None = None,
    on_step: Any = None,
):
    """Context manager: :func:`finetune_lora` without copying the base model.

    The adapters are trained on ``model`` itself and kept unmerged (``W x + (alpha/r) B A x``, the same
    function as the merged model up to float rounding); inside the ``with`` block the yielded model
    (same kind as ``model``, with ``.train_losses``) shares every base weight with ``model``. On exit
    the adapters are removed and ``model`` computes exactly what it did before. Arguments as
    :func:`finetune_lora`; the same ``seed`` trains the same adapters.

    Example: ``with lora_finetuned(base, members, epochs=3) as tuned: scores = mia_scores(tuned, texts)``
    """
    texts, settings = _lora_settings(
        texts, epochs, lr, r, alpha, dropout, batch_size, warmup, schedule, targets, seed, max_length,
        compute_dtype, on_step,
    )  # fmt: skip
    net, tokenizer = _unwrap(model)
    with adapted(net, tokenizer, texts, **settings) as losses:
        if isinstance(model, tuple):
            net.train_losses = losses
            yield net, tokenizer
            del net.train_losses
            return
        from ..models import HFModel

        out = HFModel(net, tokenizer, name=f"{model.name}+lora", device=str(model.device))
        out.train_losses = losses
        yield out


def mia_scores(
    model: Any, texts: Sequence[str], *, batch_size: int = 4, max_chars: int = MAX_CHARS
) -> pd.DataFrame:
    """Reference-free attack scores of each text (the authors' ``inference()``), raw (their signs).

    One batched forward pass over the texts and one over their lowercase versions; texts longer than
    ``max_chars`` characters are cut first, as the authors do. Results do not depend on ``batch_size``
    beyond float rounding.

    Returns
    -------
    DataFrame (n_texts, len(ATTACKS)); columns :data:`ATTACKS` (the authors' names in
    :data:`AUTHORS_NAMES`). Multiply by :data:`MEMBER_SIGN` for "higher = member".
    """
    texts = [t[: check_int(max_chars, "max_chars", minimum=1)] for t in _check_texts(texts)]
    batch_size = check_int(batch_size, "batch_size", minimum=1)
    net, tokenizer = _unwrap(model)
    stats = token_stats(net, tokenizer, texts, batch_size)
    lower = token_stats(net, tokenizer, [t.lower() for t in texts], batch_size)
    return scores_frame([text_scores(s, sl, t) for s, sl, t in zip(stats, lower, texts)])


def mia_metrics(scores: pd.DataFrame, labels: Any) -> pd.DataFrame:
    """Per attack: ``auroc``, ``fpr95``, ``tpr05``, ``acc`` with the direction fixed a priori
    (:data:`MEMBER_SIGN`; columns not in :data:`ATTACKS` are taken as higher = member), the same four
    with the authors' flip-if-AUROC-below-0.5 (suffix ``_authors``), and ``n_dropped``: the texts whose
    score is NaN or infinite, dropped before the metrics (as the authors drop them).

    Parameters
    ----------
    scores: DataFrame (n_texts, n_attacks) of raw scores (from :func:`mia_scores`).
    labels: (n_texts,) 1 member, 0 non-member; both classes must occur.
    """
    if not isinstance(scores, pd.DataFrame) or scores.shape[1] == 0:
        raise ValueError("scores must be a DataFrame with one column per attack")
    y = _check_binary(labels, "labels", n=len(scores))
    if len(np.unique(y)) < 2:
        raise ValueError("labels must contain both members (1) and non-members (0)")
    rows = {}
    for col in scores.columns:
        raw = pd.to_numeric(scores[col], errors="coerce").to_numpy(dtype=float)
        rows[col] = _metrics_or_nan(raw, y, MEMBER_SIGN.get(col, 1.0))
    return pd.DataFrame.from_dict(rows, orient="index")


def _metrics_or_nan(raw: np.ndarray, y: np.ndarray, sign: float) -> dict[str, float]:
    keep = np.isfinite(raw)
    if len(np.unique(y[keep])) < 2:
        names = ("auroc", "fpr95", "tpr05", "acc")
        return {**dict.fromkeys(names, np.nan), **dict.fromkeys((f"{k}_authors" for k in names), np.nan),
                "n_dropped": int((~keep).sum())}  # fmt: skip
    return attack_metrics(raw, y, sign)

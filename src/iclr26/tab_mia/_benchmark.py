"""Tab-MIA benchmarks: member / non-member texts from one long table or from many short tables.

Long-context (``chunk_csv_to_text`` in the authors' ``process_data/process_csv_file.py``): the CSV is
read in chunks of ``chunk_size`` rows (``pandas.read_csv(chunksize=...)``, so types are inferred per
chunk), each row becomes ``col: value | col: value``, the chunks are shuffled with
``random.seed(seed)`` and the first half are members. Any other encoding goes through the authors'
key-value → CSV round trip first, then the encoder.

Real vs synthetic (``chunk_csv_with_synthetic_data``, used by the authors' ``main_syn.py``): both CSVs are
chunked in file order (no shuffle); real chunks are the members, synthetic chunks the non-members, the
longer list cut to the length of the shorter; encodings as long-context.

Short-context (``load_data_unique_tables`` in ``process_data/data_preparation.py``): each table becomes
``df.to_csv(index=False)``, duplicates are dropped (first occurrence kept), the unique tables are shuffled
with ``random.seed(seed)`` and the first half are members.
"""

from __future__ import annotations

import io
import random
from collections.abc import Sequence

import numpy as np
import pandas as pd

from ._encoders import encode_csv_text, kv_chunk_to_csv

# Strings that break the authors' key-value -> CSV round trip when they occur in a header or value.
_BREAKERS = (",", ": ", " | ", "\n")


def _row_texts(chunk: pd.DataFrame) -> str:
    """Rows of one chunk as ``col: value | ...`` lines; values formatted as ``DataFrame.iterrows`` does
    (one common dtype per row, so an all-numeric row prints its integers as floats)."""
    values = chunk.to_numpy()
    cols = list(chunk.columns)
    return "\n".join(" | ".join(f"{c}: {v}" for c, v in zip(cols, row)) for row in values)


def _check_round_trip(chunks: Sequence[str], name: str = "table") -> None:
    for i, chunk in enumerate(chunks):
        for line in chunk.split("\n"):
            for pair in line.split(" | "):
                key, _, value = pair.partition(": ")
                bad = [b for b in _BREAKERS if b in key or b in value]
                if bad:
                    raise ValueError(
                        f"{name}: chunk {i} has {pair!r} containing {bad[0]!r}, which the long-context "
                        "key-value -> CSV round trip cannot carry; clean the table first"
                    )


def _encoded(chunks: list[str], encoding: str) -> list[str]:
    """Key-value chunks in ``encoding``: as they are for ``key-value-pair``, else through the authors'
    key-value -> CSV round trip and the encoder."""
    if encoding == "key-value-pair":
        return list(chunks)
    return [encode_csv_text(kv_chunk_to_csv(c), encoding) for c in chunks]


def chunk_texts(csv_text: str, chunk_size: int) -> list[str]:
    """The key-value text of each ``chunk_size``-row chunk of ``csv_text``, in file order."""
    reader = pd.read_csv(io.StringIO(csv_text), chunksize=chunk_size)
    return [_row_texts(chunk) for chunk in reader]


def split_members(items: list, seed: int) -> tuple[list, list]:
    """Shuffle with ``random.seed(seed)`` (Python's Mersenne Twister) and cut at ``len // 2``."""
    items = list(items)
    random.Random(seed).shuffle(items)
    mid = len(items) // 2
    return items[:mid], items[mid:]


def labelled(members: list[str], non_members: list[str]) -> pd.DataFrame:
    """Members (label 1) then non-members (label 0), as the authors' jsonl files."""
    labels = np.r_[np.ones(len(members), dtype=np.int64), np.zeros(len(non_members), dtype=np.int64)]
    return pd.DataFrame({"input": list(members) + list(non_members), "label": labels})


def long_context(csv_text: str, chunk_size: int, encoding: str, seed: int) -> pd.DataFrame:
    chunks = chunk_texts(csv_text, chunk_size)
    if len(chunks) < 2:  # the first half of one chunk is empty: a benchmark without members
        raise ValueError(f"chunk_size: the table gives one chunk of {chunk_size} rows; 2 are needed")
    if encoding != "key-value-pair":
        _check_round_trip(chunks)
    members, non_members = split_members(chunks, seed)
    return labelled(_encoded(members, encoding), _encoded(non_members, encoding))


def real_vs_synthetic(real_csv: str, synthetic_csv: str, chunk_size: int, encoding: str) -> pd.DataFrame:
    real, synthetic = chunk_texts(real_csv, chunk_size), chunk_texts(synthetic_csv, chunk_size)
    n = min(len(real), len(synthetic))
    real, synthetic = real[:n], synthetic[:n]
    if encoding != "key-value-pair":
        _check_round_trip(real, "real")
        _check_round_trip(synthetic, "synthetic")
    return labelled(_encoded(real, encoding), _encoded(synthetic, encoding))


def short_context(tables: Sequence[pd.DataFrame], encoding: str, seed: int) -> pd.DataFrame:
    unique = list(dict.fromkeys(t.to_csv(index=False) for t in tables))
    if len(unique) < 2:
        raise ValueError("tables: fewer than 2 distinct tables (duplicates are kept once); 2 are needed")
    members, non_members = split_members(unique, seed)
    return labelled(
        [encode_csv_text(t, encoding) for t in members], [encode_csv_text(t, encoding) for t in non_members]
    )

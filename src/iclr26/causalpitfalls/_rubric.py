"""Rubric filling as the authors' ``scoring_responses.fill_rubric_template`` does it.

Every string in the rubric (recursively through lists and dict values; dict keys untouched) has, for each
answer-key entry in order, ``{KEY}`` and ``<KEY>`` replaced by the value (lists as ``"(a, b)"``, anything
else by ``str``). A list-valued answer key is matched to the dataset by exact name (``.csv`` dropped), then
by substring, then falls back to its first entry: we warn when that fallback fires.
"""

from __future__ import annotations

import warnings
from typing import Any


def _dataset_of(entry: Any) -> str:
    name = entry.get("dataset", "")
    if isinstance(name, list):
        name = name[0]
    return str(name).replace(".csv", "")


def match_answer_key(answer_key: Any, dataset: Any, *, warn: bool = True) -> dict[str, Any]:
    """The answer-key entry for ``dataset``: exact name, then substring, then the first entry (warned)."""
    if isinstance(answer_key, dict):
        return answer_key
    if not isinstance(answer_key, list):
        raise ValueError(f"answer_key: expected a dict or a list of dicts, got {type(answer_key).__name__}")
    if isinstance(dataset, list):
        dataset = dataset[0]
    clean = str(dataset).replace(".csv", "")
    try:
        found = next((k for k in answer_key if clean == _dataset_of(k)), None)
        if found is None:
            found = next((k for k in answer_key if clean in _dataset_of(k)), None)
        if found is None:
            found = answer_key[0]
            if warn:
                warnings.warn(
                    f"answer_key: no entry for dataset {clean!r}; using the first entry "
                    f"({_dataset_of(found)!r}), as the authors do",
                    stacklevel=3,
                )
    except (IndexError, AttributeError):
        raise ValueError(f"answer_key: invalid answer key format for dataset {dataset}") from None
    return found


def _replacement(value: Any) -> str:
    if isinstance(value, list):
        return f"({', '.join(str(v) for v in value)})"
    return str(value)


def fill_text(text: str, key: dict[str, Any]) -> str:
    """Replace ``{KEY}`` and ``<KEY>`` in ``text`` by the answer-key values, key by key in order."""
    for name, value in key.items():
        for placeholder in (f"{{{name}}}", f"<{name}>"):
            if placeholder in text:
                text = text.replace(placeholder, _replacement(value))
    return text


def _fill(value: Any, key: dict[str, Any]) -> Any:
    if isinstance(value, str):
        return fill_text(value, key)
    if isinstance(value, list):
        return [_fill(v, key) for v in value]
    if isinstance(value, dict):
        return {k: _fill(v, key) for k, v in value.items()}
    return value


def fill_rubric(rubric: dict[str, Any], answer_key: Any, dataset: Any) -> dict[str, Any]:
    """Fill ``rubric`` with the answer-key entry of ``dataset`` (see the module docstring).

    Parameters
    ----------
    rubric : dict
        The challenge's ``rubric.json`` (``criteria``: list of dicts).
    answer_key : dict or list of dict
        The challenge's ``answer_key.json``.
    dataset : str
        The dataset's name (with or without ``.csv``).

    Returns
    -------
    dict
        A new rubric; the input is not modified.
    """
    if not isinstance(rubric, dict):
        raise ValueError(f"rubric: expected a dict, got {type(rubric).__name__}")
    return _fill(rubric, match_answer_key(answer_key, dataset))

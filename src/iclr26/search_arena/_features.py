"""Style and citation features of the released Search Arena schema, and its loader.

A battle row carries ``messages_a``/``messages_b`` (lists of ``{"role", "content"}``) and
``system_a_metadata``/``system_b_metadata`` whose ``web_search_trace`` is a list of turns, each a list of
``[title, url]`` citations. The rules follow the authors' ``scripts/utils.py``: response length is the mean
number of whitespace-separated words over the assistant messages; the citation count is the number of URLs
per turn; a URL's domain (``url.split('/')[2]``) falls into the first matching category of an ordered rule
list (substring tests, so ``"x.com"`` also matches ``"netflix.com"``, as theirs).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

US_NEWS_DOMAINS = (
    "cnn.com apnews.com cnbc.com bloomberg.com economist.com nytimes.com washingtonpost.com wsj.com "
    "nbcnews.com abcnews.go.com usatoday.com npr.org latimes.com vox.com huffpost.com ft.com foxnews.com "
    "axios.com time.com buzzfeed.com cbsnews.com politico.co newsweek.com fortune.com theatlantic.com "
    "whattowatch.com scrippsnews.com investopedia.com yahoo.com breitbart.com washingtontimes.com "
    "dailycaller.com thefederalist.com townhall.com pjmedia.com westernjournal.com forbes.com"
).split()
FOREIGN_NEWS_DOMAINS = (
    "reuters.com bbc.com aljazeera.com dw.com france24.com as.com elpais.com cbc.ca theglobeandmail.com "
    "smh.com.au abc.net.au japantimes.co.jp straitstimes.com hindustantimes.com thehindu.com "
    "economictimes.indiatimes.com indianexpress.com independent.co.uk theguardian.com cadenaser.com "
    "lemonde.fr vnexpress.net ndtv.com"
).split()
# Ordered rules: the first category whose substrings occur in the domain wins.
_RULES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("youtube", ("youtube.com",)),
    ("gov_edu", (".gov", ".edu", ".mil")),
    ("wiki", ("wikipedia", "wikihow", "wikimedia")),
    ("us_news", tuple(US_NEWS_DOMAINS)),
    ("foreign_news", tuple(FOREIGN_NEWS_DOMAINS)),
    (
        "social_media",
        (
            "tiktok.com",
            "facebook.com",
            "instagram.com",
            "x.com",
            "twitter.com",
            "linkedin.com",
            "snapchat.com",
            "pinterest.com",
        ),
    ),
    (
        "community_blog",
        ("reddit.com", "quora.com", "blog", "medium.com", "wordpress.com", "substack.com", "tumblr.com"),
    ),
    (
        "tech_coding",
        (
            "github.com",
            "gitlab.com",
            "stackexchange.com",
            "microsoft.com",
            "dev.to",
            "codecademy.com",
            "stackoverflow.com",
        ),
    ),
    (
        "academic_journal",
        (
            "jstor.org",
            "springer.com",
            "sciencedirect.com",
            "nature.com",
            "arxiv.org",
            "researchgate.com",
            "biorxiv.org",
        ),
    ),
    ("retail", ("amazon.com", "ebay.com", "walmart.com", "target.com", "bestbuy.com", "costco.com")),
)
DOMAIN_CATEGORIES = tuple(name for name, _ in _RULES) + ("other",)


def domain_of(url: str) -> str:
    """The host part of ``url`` as the authors take it (``url.split('/')[2]``); a bare domain is kept."""
    if not isinstance(url, str) or not url:
        raise ValueError(f"url must be a non-empty string, got {url!r}")
    parts = url.split("/")
    return parts[2] if "://" in url and len(parts) > 2 else parts[0]


def domain_category(url: str) -> str:
    """Category of a URL or domain (one of :data:`DOMAIN_CATEGORIES`), by the authors' ordered rules."""
    domain = domain_of(url)
    for name, needles in _RULES:
        if any(x in domain for x in needles):
            return name
    return "other"


def response_length(messages: list[dict[str, Any]]) -> float:
    """Mean number of words of the assistant messages (NaN when there is none, as ``np.mean([])``)."""
    lengths = [len(m["content"].split()) for m in messages if m.get("role") == "assistant"]
    return float(np.mean(lengths)) if lengths else float("nan")


def _check_trace(web_search_trace: Any) -> Any:
    """A list (or array) of turns, each a list of citations; text would be counted letter by letter."""
    text = (str, bytes, Mapping)
    if isinstance(web_search_trace, text) or any(isinstance(t, text) for t in web_search_trace):
        raise ValueError(
            "web_search_trace must be a list of turns, each a list of [title, url] citations, got "
            f"{type(web_search_trace).__name__} {str(web_search_trace)[:60]!r} (parse JSON text first)"
        )
    return web_search_trace


def citation_count(web_search_trace: list[list[Any]]) -> float:
    """URLs cited per turn (0 for an empty trace)."""
    if web_search_trace is not None:
        _check_trace(web_search_trace)
    if web_search_trace is None or len(web_search_trace) == 0:  # lists, or arrays when read from Parquet
        return 0.0
    return sum(len(turn) for turn in web_search_trace) / len(web_search_trace)


def domain_counts(web_search_trace: list[list[Any]]) -> dict[str, int]:
    """Number of citations per domain category over all turns."""
    counts = dict.fromkeys(DOMAIN_CATEGORIES, 0)
    for turn in [] if web_search_trace is None else _check_trace(web_search_trace):
        for _title, url in turn:
            counts[domain_category(url)] += 1
    return counts


def _side_features(row: pd.Series, side: str) -> dict[str, float]:
    meta = row[f"system_{side}_metadata"]
    if meta is None or (isinstance(meta, float) and math.isnan(meta)):
        meta = {}
    if not isinstance(meta, Mapping):
        raise ValueError(
            f"system_{side}_metadata at row {row.name!r} must be a dict (or missing), got "
            f"{type(meta).__name__}; parse JSON text first"
        )
    trace = meta.get("web_search_trace", [])
    feats = {
        "response_length": response_length(row[f"messages_{side}"]),
        "citation_count": citation_count(trace),
    }
    for cat, c in domain_counts(trace).items():
        feats[f"num_cites_{cat}"] = float(c)
        feats[f"cites_{cat}"] = float(c > 0)
    return feats


def battle_features(df: pd.DataFrame) -> dict[str, np.ndarray]:
    """Every feature as an (N, 2) array (model a, model b) from rows of the released schema."""
    for col in ("messages_a", "messages_b", "system_a_metadata", "system_b_metadata"):
        if col not in df.columns:
            raise ValueError(
                f"the battles need a column {col!r} to build features; they have {list(df.columns)}"
            )
    if len(df) == 0:
        raise ValueError("df has no battles to build features from")
    a = pd.DataFrame([_side_features(r, "a") for _, r in df.iterrows()])
    b = pd.DataFrame([_side_features(r, "b") for _, r in df.iterrows()])
    return {name: np.column_stack([a[name].to_numpy(float), b[name].to_numpy(float)]) for name in a.columns}


def _read_battles(path: str | Path) -> tuple[pd.DataFrame, Path]:
    """The voted rows of a battle file (``.jsonl`` or ``.parquet``)."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"path {str(path)!r} is not a file")
    if path.suffix == ".parquet":
        df = pd.read_parquet(path)
    elif path.suffix in (".jsonl", ".json"):
        with path.open(encoding="utf-8") as fh:
            df = pd.DataFrame([json.loads(line) for line in fh if line.strip()])
    else:
        raise ValueError(f"path must end in .jsonl or .parquet, got {path.suffix!r}")
    if "winner" not in df.columns:
        raise ValueError(f"{path} has no 'winner' column; it is not a Search Arena battle file")
    return df[df["winner"].notna()].reset_index(drop=True), path


def load_search_arena(path: str | Path) -> tuple[pd.DataFrame, dict[str, np.ndarray]]:
    """Read the released Search Arena battles (``.jsonl`` or ``.parquet``) into battles and features.

    Rows without a vote are dropped (as the authors' notebooks do). Returns the battles (all columns kept)
    and :func:`battle_features` of them.
    """
    df, _ = _read_battles(path)
    return df, battle_features(df)


ATTRIBUTION_KINDS = ("support", "irrelevant", "contradict")


def attribution_features(df: pd.DataFrame) -> dict[str, np.ndarray]:
    """Per-turn citation-attribution counts of both sides: ``{kind: (N, 2)}`` for ``support``,
    ``irrelevant`` and ``contradict``.

    The released ``citation_attribution_data.jsonl`` holds ``<kind>_count_a`` / ``<kind>_count_b`` (claims
    whose cited page supports, is irrelevant to, or contradicts them, over the whole conversation) and
    ``turn``; as in the authors' ``add_cit_misattribution_counts``, each count is divided by ``turn``.
    """
    needed = [f"{k}_count_{s}" for k in ATTRIBUTION_KINDS for s in "ab"] + ["turn"]
    missing = [c for c in needed if c not in df.columns]
    if missing:
        raise ValueError(f"battles lack the attribution columns {missing}")
    if pd.api.types.is_bool_dtype(df["turn"]):
        raise ValueError("battles['turn'] must hold turn counts, got booleans")
    turn = pd.to_numeric(df["turn"], errors="coerce").to_numpy(dtype=float)
    bad = ~np.isfinite(turn) | (turn < 1) | (turn != np.round(turn))
    if bad.any():
        raise ValueError(f"battles['turn'] must be a positive whole number; row {int(np.argmax(bad))} is not")
    out = {}
    for kind in ATTRIBUTION_KINDS:
        counts = (
            df[[f"{kind}_count_a", f"{kind}_count_b"]].apply(pd.to_numeric, errors="coerce").to_numpy(float)
        )
        if (~np.isfinite(counts)).any() or (counts < 0).any():
            raise ValueError(f"battles: {kind}_count_a/b must be non-negative numbers")
        out[kind] = counts / turn[:, None]
    return out


def load_citation_attribution(path: str | Path) -> tuple[pd.DataFrame, dict[str, np.ndarray]]:
    """Read ``citation_attribution_data.jsonl`` into battles (voted rows) and :func:`attribution_features`.

    The authors' coefficient analysis then keeps battles where both sides cite (``conv_metadata``
    ``citation_count_a`` and ``_b`` > 0) and one side won; filter the returned battles the same way.
    """
    df, _ = _read_battles(path)
    return df, attribution_features(df)

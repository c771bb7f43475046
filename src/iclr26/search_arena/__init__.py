"""search-arena: Bradley-Terry leaderboards with style/citation control on the Search Arena format.

Miroyan et al., "Search Arena: Analyzing Search-Augmented LLMs" (ICLR 2026); the authors' analysis code is
``lmarena/search-arena`` (``scripts/utils.py``, ``scripts/preference_analysis.ipynb``). Ratings, bootstrap
intervals and the contextual (style-controlled) Bradley-Terry model follow their conventions; every bootstrap
replicate is fitted at once by batched Newton steps, and ``authors_compat=True`` reproduces their optimiser
and its quirks (docs/search-arena.md).

>>> import pandas as pd
>>> from iclr26.search_arena import bradley_terry
>>> battles = pd.DataFrame({"model_a": ["x", "y", "x", "y"], "model_b": ["y", "x", "y", "x"],
...                         "winner": ["model_a", "model_a", "model_a", "tie"]})
>>> bradley_terry(battles).round(1).to_dict()
{'x': 1044.4, 'y': 955.6}
"""

from ._bt import (
    WINNERS,
    ControlledBT,
    ConvergenceWarning,
    bootstrap_bt,
    bradley_terry,
    controlled_bt,
    leaderboard,
    transform_features,
    unidentified_models,
)
from ._cross import binomial_preference, cross_arena_test, preference_outcomes
from ._features import (
    ATTRIBUTION_KINDS,
    DOMAIN_CATEGORIES,
    attribution_features,
    battle_features,
    citation_count,
    domain_category,
    domain_counts,
    load_citation_attribution,
    load_search_arena,
    response_length,
)
from ._intents import (
    INTENT_DESCRIPTIONS,
    INTENTS,
    authors_intent_prompt,
    classify_intents,
    intent_prompt,
    parse_intents,
)

__all__ = [
    "ATTRIBUTION_KINDS",
    "DOMAIN_CATEGORIES",
    "INTENTS",
    "INTENT_DESCRIPTIONS",
    "WINNERS",
    "ControlledBT",
    "ConvergenceWarning",
    "attribution_features",
    "authors_intent_prompt",
    "battle_features",
    "binomial_preference",
    "classify_intents",
    "cross_arena_test",
    "bootstrap_bt",
    "bradley_terry",
    "citation_count",
    "controlled_bt",
    "domain_category",
    "domain_counts",
    "leaderboard",
    "intent_prompt",
    "load_citation_attribution",
    "load_search_arena",
    "parse_intents",
    "preference_outcomes",
    "response_length",
    "transform_features",
    "unidentified_models",
]

"""The nine user intents of Search Arena and an LLM classifier of prompts into them.

The category names and their order are the authors' (``scripts/intent_classification/utils.py``); the
one-line descriptions and the classification prompt here are our own wording of the same definitions.
To classify with the authors' exact prompt (few-shot examples included), pass
``prompt=authors_intent_prompt(checkout)`` with a checkout of ``lmarena/search-arena``: it is read from
there at run time, never shipped.
"""

from __future__ import annotations

import importlib.util
import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path

import pandas as pd

INTENTS = (
    "Text Processing",
    "Creative Generation",
    "Factual Lookup",
    "Info Synthesis",
    "Analysis",
    "Recommendation",
    "Explanation",
    "Guidance",
    "Other",
)
INTENT_DESCRIPTIONS = {
    "Text Processing": "transform given text: summarise, translate, paraphrase, edit",
    "Creative Generation": "produce original creative writing: stories, poems, satire, role play",
    "Factual Lookup": "retrieve one precise, verifiable fact answerable in a phrase or sentence",
    "Info Synthesis": "gather and condense facts from several sources without judgement or personalisation",
    "Analysis": "weigh, compare or evaluate a topic and reach a reasoned, often open-ended judgement",
    "Recommendation": "suggest or rank options that fit the user's constraints or preferences",
    "Explanation": "clarify how or why something works, to understand it rather than act on it",
    "Guidance": "give steps, procedures or troubleshooting to get a task done ('how do I ...')",
    "Other": "no clear request: malformed, purely declarative or chit-chat",
}
UNASSIGNED = "Unassigned"


def intent_prompt(query: str) -> str:
    """Our classification prompt for one user query (JSON answer with primary and secondary intent)."""
    if not isinstance(query, str):
        raise ValueError(f"query must be a string, got {type(query).__name__}")
    listing = "\n".join(f"{i + 1}. {name}: {INTENT_DESCRIPTIONS[name]}" for i, name in enumerate(INTENTS))
    return (
        "Classify what the user wants the assistant to do.\n"
        f"Categories, to be considered in this order:\n{listing}\n\n"
        "Give the primary intent (one category) and a secondary intent (another category, or "
        f'"{UNASSIGNED}" when there is no clear second goal). Answer with JSON only:\n'
        '{"primary_intent": "...", "secondary_intent": "...", "reasoning": "..."}\n\n'
        f'User query:\n"""{query}"""'
    )


def authors_intent_prompt(checkout: str | Path) -> Callable[[str], str]:
    """The authors' ``build_augmented_prompt`` from a checkout of ``lmarena/search-arena``."""
    path = Path(checkout) / "scripts" / "intent_classification" / "utils.py"
    if not path.is_file():
        raise ValueError(f"checkout: no scripts/intent_classification/utils.py under {str(checkout)!r}")
    spec = importlib.util.spec_from_file_location("search_arena_intent_utils", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.build_augmented_prompt


def parse_intents(reply: str) -> tuple[str, str, bool]:
    """``(primary, secondary, parsed)`` from a classifier reply.

    The first JSON object holding ``primary_intent`` is read; a label outside :data:`INTENTS` (or
    ``Unassigned`` for the secondary) does not count. Without a valid JSON answer, the first category
    name found in the text is the primary one. ``parsed`` is False when neither works (then the
    primary is ``"Other"``, so counts stay honest: report how many were not parsed).
    """
    for match in re.finditer(r"\{[^{}]*\}", reply, flags=re.S):
        try:
            obj = json.loads(match.group())
        except json.JSONDecodeError:
            continue
        primary = obj.get("primary_intent") if isinstance(obj, dict) else None
        if primary in INTENTS:
            secondary = obj.get("secondary_intent")
            return primary, secondary if secondary in (*INTENTS, UNASSIGNED) else UNASSIGNED, True
    hits = [(reply.find(name), name) for name in INTENTS if name in reply]
    if hits:
        return min(hits)[1], UNASSIGNED, True
    return "Other", UNASSIGNED, False


def classify_intents(
    queries: Sequence[str], model, prompt: Callable[[str], str] = intent_prompt, config=None
) -> pd.DataFrame:
    """Primary and secondary intent of each query, asked of ``model`` (one chat turn per query).

    Returns a DataFrame with ``query, primary_intent, secondary_intent, parsed, reply``.
    ``model``: an :class:`iclr26.models.LanguageModel`; ``config``: its ``GenerationConfig`` (default:
    greedy, 200 new tokens).
    """
    from ..models import GenerationConfig, LanguageModel

    if isinstance(queries, str):
        raise ValueError("queries must be a sequence of strings, got a single string")
    queries = list(queries)  # a generator would be used up by the check below and classify nothing
    if not all(isinstance(q, str) for q in queries):
        raise ValueError("queries must be a sequence of strings")
    if not isinstance(model, LanguageModel):
        raise ValueError(f"model must be an iclr26.models.LanguageModel, got {type(model).__name__}")
    config = config or GenerationConfig(max_new_tokens=200, temperature=0.0)
    asks = [[{"role": "user", "content": prompt(q)}] for q in queries]
    replies = [g.text for g in model.generate(asks, config)] if asks else []
    rows = [(q, *parse_intents(r), r) for q, r in zip(queries, replies, strict=True)]
    return pd.DataFrame(rows, columns=["query", "primary_intent", "secondary_intent", "parsed", "reply"])

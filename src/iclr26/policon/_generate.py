"""OUR template-generated debates in the authors' topic-record schema (the embedded default).

Not the authors' data: real EP topic and political-group names, but made-up proposals, stances and
votes. Each group's share voting for (``score``) is drawn from a per-group leaning on the proposal; its
stance text says how strongly it supports or opposes it and which measures it asks for, so the
stance carries the signal a judge can read; the adopted resolution lists the measures backed by the
groups voting for.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..validation import check_int
from ._data import PARTY_LISTS, TOPICS

_SUBJECTS = (
    "the multiannual financing framework",
    "cross-border cooperation rules",
    "reporting obligations for Member States",
    "the 2030 targets and their monitoring",
    "a new EU agency mandate",
    "simplification of existing regulations",
)
_MEASURES = (
    "a dedicated budget line with annual reviews",
    "binding national targets with penalties",
    "voluntary guidelines for Member States",
    "support for small and medium-sized enterprises",
    "stronger protection for workers and consumers",
    "a reduction of administrative burden",
    "independent evaluation every three years",
    "transitional periods for the regions most affected",
)
_LEVELS = (  # (lowest choice, phrase)
    (7, "strongly supports"),
    (5, "broadly supports, with reservations,"),
    (3, "is divided on"),
    (0, "opposes"),
)


def _stance_text(party: str, choice: int, subject: str, asks: list[str]) -> str:
    phrase = next(p for lo, p in _LEVELS if choice >= lo)
    want = "calls for" if choice >= 5 else "rejects the proposal unless it includes"
    return f"The {party} {phrase} the proposal on {subject} in this area and {want} {asks[0]} and {asks[1]}."


def generate_topics(
    n_per_topic: int = 12, topics: tuple[str, ...] = TOPICS[:4], seed: int = 0
) -> list[dict[str, Any]]:
    """OUR debates: ``n_per_topic`` topic records per topic, in the authors' schema.

    Returns
    -------
    Topic records (``topic``, ``title``, ``background``, ``stances`` with ``party_name``, ``stance``,
    ``score``, ``choice``, ``resolution``, ``total_score``, ``total_choice``, ``party_num``, ``id``,
    ``parliament_terms``), labelled ``source="iclr26-generated"``.
    """
    n_per_topic = check_int(n_per_topic, "n_per_topic", minimum=1)
    if not topics or any(t not in TOPICS for t in topics):
        raise ValueError(f"topics must be a non-empty subset of {TOPICS}")
    rng = np.random.default_rng(seed)
    terms = tuple(PARTY_LISTS)
    out = []
    for topic in topics:
        for i in range(n_per_topic):
            term = terms[int(rng.integers(len(terms)))]
            parties = PARTY_LISTS[term]
            subject = _SUBJECTS[int(rng.integers(len(_SUBJECTS)))]
            lean = rng.uniform(0.0, 1.0, len(parties))
            score = np.clip(lean + rng.normal(0, 0.08, len(parties)), 0.0, 1.0)
            stances, backed = [], []
            for p, s in zip(parties, score):
                choice = min(9, int(np.floor(10 * s)))
                asks = [_MEASURES[j] for j in rng.choice(len(_MEASURES), 2, replace=False)]
                if choice >= 5:
                    backed.extend(a for a in asks if a not in backed)
                stances.append(
                    {
                        "party_name": p,
                        "score": float(s),
                        "choice": choice,
                        "stance": _stance_text(p, choice, subject, asks),
                    }
                )
            backed = backed or [_MEASURES[0]]
            total = float(score.mean())
            out.append(
                {
                    "topic": topic,
                    "title": f"{topic.capitalize()}: report on {subject}",
                    "background": f"The European Commission proposed changes to {subject} in the field of "
                    f"{topic}. Political groups disagreed on the scope, the cost and the timeline.",
                    "stances": stances,
                    "resolution": f"The European Parliament raised its position on {subject} in {topic}, "
                    f"calling for {', '.join(backed)}.",
                    "total_score": total,
                    "total_choice": min(9, int(np.floor(10 * total))),
                    "party_num": len(parties),
                    "id": i,
                    "parliament_terms": term,
                    "source": "iclr26-generated",
                }
            )
    return out

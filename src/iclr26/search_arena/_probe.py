"""An LLM voter on answer pairs that differ only in their appended citations (the citation probe).

For each question, one answer text is shown twice, with ``lo`` and ``hi`` citations appended (different
counts per question), in both orders; the citations either point at pages about the question's topic
(relevant) or about unrelated topics (irrelevant). The voter's choice is the more likely of the answers
``A``/``B`` after the judging prompt. Positions play the two "systems" of a contextual Bradley-Terry model
(their rating difference absorbs the voter's position bias) and the citation count is the feature, so its
coefficient measures how much the voter's preference rises with citations at equal content. A small voter
that nearly always answers the same letter leaves that coefficient at zero, so the probe also reports the
position-free log-odds margin of :func:`citation_preference`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._bt import controlled_bt

# (question, answer, topic) — topics name the relevant pages; unrelated topics make the irrelevant ones.
QUESTIONS = (
    (
        "What is the capital of Australia?",
        "The capital of Australia is Canberra, chosen as a compromise between Sydney and Melbourne.",
        "Canberra",
    ),
    (
        "Who wrote Pride and Prejudice?",
        "Pride and Prejudice was written by Jane Austen and published in 1813.",
        "Jane_Austen",
    ),
    (
        "How many bones are in the adult human body?",
        "An adult human skeleton usually has 206 bones.",
        "Human_skeleton",
    ),
    (
        "What gas do plants absorb for photosynthesis?",
        "Plants absorb carbon dioxide and release oxygen during photosynthesis.",
        "Photosynthesis",
    ),
    (
        "What is the boiling point of water at sea level?",
        "At sea level water boils at 100 degrees Celsius (212 degrees Fahrenheit).",
        "Boiling_point",
    ),
    (
        "Which planet is known as the Red Planet?",
        "Mars is called the Red Planet because of the iron oxide on its surface.",
        "Mars",
    ),
    (
        "Who painted the Mona Lisa?",
        "The Mona Lisa was painted by Leonardo da Vinci in the early sixteenth century.",
        "Mona_Lisa",
    ),
    (
        "What is the largest ocean on Earth?",
        "The Pacific Ocean is the largest and deepest ocean on Earth.",
        "Pacific_Ocean",
    ),
    (
        "What is the chemical symbol for gold?",
        "The chemical symbol for gold is Au, from the Latin word aurum.",
        "Gold",
    ),
    ("When did the Berlin Wall fall?", "The Berlin Wall fell on 9 November 1989.", "Berlin_Wall"),
    (
        "What is the speed of light in vacuum?",
        "Light travels at about 299,792 kilometres per second in a vacuum.",
        "Speed_of_light",
    ),
    (
        "Who developed the theory of general relativity?",
        "Albert Einstein published the theory of general relativity in 1915.",
        "General_relativity",
    ),
    (
        "What is the tallest mountain in the world?",
        "Mount Everest is the tallest mountain above sea level, at about 8,849 metres.",
        "Mount_Everest",
    ),
    ("What language is spoken in Brazil?", "The official language of Brazil is Portuguese.", "Brazil"),
    (
        "What is the freezing point of water in Fahrenheit?",
        "Water freezes at 32 degrees Fahrenheit.",
        "Fahrenheit",
    ),
    (
        "Which organ pumps blood through the body?",
        "The heart pumps blood through the circulatory system.",
        "Heart",
    ),
    (
        "What is the largest planet in the solar system?",
        "Jupiter is the largest planet in the solar system.",
        "Jupiter",
    ),
    (
        "Who was the first person to walk on the Moon?",
        "Neil Armstrong was the first person to walk on the Moon, in 1969.",
        "Neil_Armstrong",
    ),
    (
        "What is the main ingredient of guacamole?",
        "Guacamole is made mainly from mashed avocado.",
        "Guacamole",
    ),
    ("How many continents are there?", "There are usually said to be seven continents.", "Continent"),
    ("What is the currency of Japan?", "The currency of Japan is the yen.", "Japanese_yen"),
    ("What does DNA stand for?", "DNA stands for deoxyribonucleic acid.", "DNA"),
    (
        "What is the hardest natural substance?",
        "Diamond is the hardest naturally occurring substance.",
        "Diamond",
    ),
    (
        "Which country has the largest population?",
        "India has the largest population, having overtaken China in 2023.",
        "India",
    ),
)
UNRELATED = (
    "Banana_bread",
    "Curling",
    "Origami",
    "Jazz_drumming",
    "Tax_law",
    "Knitting",
    "Lighthouse",
    "Skateboarding",
)
SITES = (
    "https://en.wikipedia.org/wiki/{}",
    "https://www.britannica.com/topic/{}",
    "https://www.nationalgeographic.com/{}",
    "https://www.bbc.co.uk/news/{}",
    "https://www.nature.com/search?q={}",
)


def _with_citations(answer: str, topics: list[str]) -> str:
    if not topics:
        return answer
    refs = " ".join(f"[{i + 1}] {SITES[i % len(SITES)].format(t)}" for i, t in enumerate(topics))
    return f"{answer}\n\nSources: {refs}"


def _prompt(question: str, first: str, second: str) -> list[dict[str, str]]:
    text = (
        f"Question: {question}\n\nResponse A:\n{first}\n\nResponse B:\n{second}\n\n"
        "Which response is better? Answer with A or B."
    )
    return [{"role": "user", "content": text}]


def citation_probe(model, rng: np.random.Generator, n_questions: int = len(QUESTIONS)) -> pd.DataFrame:
    """Votes of ``model`` (a :class:`iclr26.models.LanguageModel`): one row per (question, relevance, order)
    with the citation counts shown first and second and whether the first answer won."""
    rows, prompts = [], []
    for q, (question, answer, topic) in enumerate(QUESTIONS[:n_questions]):
        lo, hi = sorted(rng.choice(5, size=2, replace=False))
        for relevant in (True, False):
            pool = [topic] * 5 if relevant else list(rng.choice(UNRELATED, size=5, replace=False))
            texts = {c: _with_citations(answer, pool[:c]) for c in (lo, hi)}
            for first, second in ((lo, hi), (hi, lo)):
                rows.append(
                    {"question": q, "relevant": relevant, "cites_first": first, "cites_second": second}
                )
                prompts.append(_prompt(question, texts[first], texts[second]))
    contexts = [p for p in prompts for _ in (0, 1)]
    scores = model.loglikelihood(contexts, ["A", "B"] * len(prompts))
    logp = np.array([s.logprob for s in scores]).reshape(-1, 2)
    out = pd.DataFrame(rows)
    out["margin"] = logp[:, 0] - logp[:, 1]
    out["first_won"] = out["margin"] > 0
    return out


def citation_preference(votes: pd.DataFrame) -> pd.Series:
    """Per question, the voter's position-free preference for the answer with more citations.

    ``(margin with the more-cited answer first - margin with it second) / 2``, in log-odds of choosing it:
    the voter's bias towards a position cancels, since each question is shown in both orders.
    """
    more_first = votes["cites_first"] > votes["cites_second"]
    hi_first = votes[more_first].set_index("question")["margin"]
    hi_second = votes[~more_first].set_index("question")["margin"]
    return (hi_first - hi_second.reindex(hi_first.index)) / 2.0


def citation_coefficient(votes: pd.DataFrame) -> float:
    """Contextual-BT coefficient of the citation count, positions as the two systems (the issue's measure;
    it is uninformative when the voter always picks the same position)."""
    battles = pd.DataFrame(
        {
            "model_a": "first position",
            "model_b": "second position",
            "winner": np.where(votes["first_won"], "model_a", "model_b"),
        }
    )
    counts = votes[["cites_first", "cites_second"]].to_numpy(float)
    return float(controlled_bt(battles, {"citation_count": counts}, n_rounds=2).coefficients.iloc[0])

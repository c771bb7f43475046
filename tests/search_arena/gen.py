"""Generated battle sets covering the cases the agreement tests need."""

from __future__ import annotations

import numpy as np
import pandas as pd


def battle_set(
    seed: int,
    n_models: int = 6,
    n: int = 600,
    ties: float = 0.15,
    bothbad: float = 0.05,
    missing_pairs: bool = False,
    dominant: bool = False,
    turns: bool = False,
) -> tuple[pd.DataFrame, dict]:
    """Battles from a BT model with ties, both-bad ties, optional missing pairs, a dominant model, and
    per-side features (float length, integer citations, citations per turn when ``turns``)."""
    rng = np.random.default_rng(seed)
    names = [f"m{i}" for i in range(n_models)]
    strength = rng.normal(0, 0.8, n_models)
    a = rng.integers(0, n_models, n)
    b = (a + rng.integers(1, n_models, n)) % n_models
    if missing_pairs and n_models > 3:
        keep = ~(((a == 0) & (b == 1)) | ((a == 1) & (b == 0)))
        a, b = a[keep], b[keep]
    n = len(a)
    length = rng.lognormal(5.5, 0.5, (n, 2))
    cites = rng.poisson(4, (n, 2)).astype(float)
    if turns:
        n_turns = rng.integers(1, 4, n)
        cites = cites / n_turns[:, None]
    logit = (
        strength[a]
        - strength[b]
        + 0.3 * np.log(length[:, 0] / length[:, 1])
        + 0.1 * (cites[:, 0] - cites[:, 1])
    )
    u = rng.random(n)
    p = 1 / (1 + np.exp(-logit))
    winner = np.where(u < p, "model_a", "model_b").astype(object)
    r = rng.random(n)
    winner[r < ties] = "tie"
    winner[(r >= ties) & (r < ties + bothbad)] = "tie (bothbad)"
    if dominant:
        winner[(a == 0) & (winner == "model_b")] = "model_a"
        winner[(b == 0) & (winner == "model_a")] = "model_b"
        winner[((a == 0) | (b == 0)) & np.isin(winner, ["tie", "tie (bothbad)"])] = "model_a"
        winner[(b == 0) & (winner == "model_a")] = "model_b"
    df = pd.DataFrame({"model_a": np.array(names)[a], "model_b": np.array(names)[b], "winner": winner})
    return df, {"response_length": length, "citation_count": cites}


CASES = (
    [dict(seed=s) for s in range(6)]
    + [dict(seed=10 + s, n_models=2, n=200) for s in range(3)]
    + [dict(seed=20 + s, missing_pairs=True) for s in range(3)]
    + [dict(seed=30 + s, ties=0.0, bothbad=0.0) for s in range(3)]
    + [dict(seed=40 + s, turns=True) for s in range(3)]
    + [dict(seed=50 + s, n_models=13, n=3000) for s in range(2)]
    + [dict(seed=60 + s, dominant=True) for s in range(2)]
)


_DOMAINS = (
    "www.youtube.com m.youtube.com www.nasa.gov mit.edu army.mil en.wikipedia.org www.wikihow.com "
    "commons.wikimedia.org www.cnn.com apnews.com www.ft.com www.microsoft.com learn.microsoft.com "
    "www.reuters.com www.bbc.com www.abc.net.au www.tiktok.com www.facebook.com x.com www.netflix.com "
    "twitter.com www.reddit.com www.quora.com myblog.example.org medium.com github.com gitlab.com "
    "stackoverflow.com dev.to www.nature.com arxiv.org www.biorxiv.org www.amazon.com www.ebay.com "
    "www.target.com www.example.com news.ycombinator.com www.forbes.com time.com www.lemonde.fr "
    "www.ndtv.com blog.google www.yahoo.com finance.yahoo.com www.economist.com www.thehindu.com "
    "docs.python.org www.springer.com link.springer.com www.sciencedirect.com www.jstor.org "
    "www.researchgate.com www.costco.com www.bestbuy.com www.walmart.com www.linkedin.com "
    "www.instagram.com www.pinterest.com www.snapchat.com substack.com wordpress.com tumblr.com "
    "codecademy.com math.stackexchange.com www.politico.com www.as.com www.elpais.com www.cbc.ca "
    "edition.cnn.com www.gov.uk www.education.com www.militaryhistory.org"
).split()


def url_table(n: int, seed: int = 0) -> list[str]:
    """``n`` URLs over the domains above (every category, and substring traps such as ``netflix.com``)."""
    rng = np.random.default_rng(seed)
    schemes = ("https://", "http://")
    return [
        f"{schemes[i % 2]}{_DOMAINS[i % len(_DOMAINS)]}/{'/'.join(rng.choice(list('abcxyz'), 2))}?q={i}"
        for i in range(n)
    ]

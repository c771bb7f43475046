"""OUR embedding judge (not the authors'): MiniLM cosine similarity between a resolution and a party's
stance, mapped to the 0-9 scale by a least-squares line fitted on the real votes (oracle ``choice``)
of adopted resolutions."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..models import load_minilm
from ._data import check_pairs


class EmbeddingJudge:
    """Scores ``clip(round(a + b * cos(resolution, stance)), 0, 9)``; ``a, b`` from :meth:`calibrate`.

    Parameters
    ----------
    encoder: ``texts -> (n, d)`` unit-norm embeddings (default: :func:`load_minilm`, loaded lazily).
    """

    name = "minilm-embedding (ours)"

    def __init__(self, encoder: Callable[[list[str]], np.ndarray] | None = None):
        if encoder is not None and not callable(encoder):
            raise ValueError("encoder must be a callable texts -> embeddings")
        self._encoder = encoder
        self._cache: dict[str, np.ndarray] = {}
        self.coef: tuple[float, float] | None = None

    @property
    def identity(self) -> str:
        return f"embedding:minilm:{self.coef}"

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        new = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if new:
            if self._encoder is None:
                self._encoder = load_minilm()
            for t, v in zip(new, np.asarray(self._encoder(new), dtype=float)):
                self._cache[t] = v / max(np.linalg.norm(v), 1e-12)
        return np.array([self._cache[t] for t in texts])

    def similarity(self, pairs: Sequence[tuple[dict[str, Any], str]]) -> list[np.ndarray]:
        """Per pair ``(task, resolution)``: ``(p,)`` cosine of the resolution with each party's stance."""
        stances = [s["stance"] for t, _ in pairs for s in t["stances"]]
        emb_s = self._embed(stances)
        emb_r = self._embed([r for _, r in pairs])
        out, at = [], 0
        for i, (task, _) in enumerate(pairs):
            k = len(task["stances"])
            out.append(emb_s[at : at + k] @ emb_r[i])
            at += k
        return out

    def calibrate(self, tasks: Sequence[dict[str, Any]]) -> EmbeddingJudge:
        """Fit ``choice ~ a + b * cos`` on the adopted resolutions of ``tasks`` (every party)."""
        if len(tasks) < 2:
            raise ValueError("tasks must hold at least 2 tasks to calibrate on")
        sims = np.concatenate(self.similarity([(t, t["resolution"]) for t in tasks]))
        y = np.array([s["choice"] for t in tasks for s in t["stances"]], dtype=float)
        if np.ptp(sims) == 0:
            raise ValueError("tasks give constant similarities; cannot calibrate")
        b, a = np.polyfit(sims, y, 1)
        self.coef = (float(a), float(b))
        return self

    def judge(self, pairs: Sequence[tuple[dict[str, Any], str]], **_: Any) -> list[dict[str, Any]]:
        """Per pair ``{"scores": {party: 0-9}, "fallback": {party: False}, "replies": {party: [cos]}}``."""
        if self.coef is None:
            raise ValueError("call calibrate(tasks) before judging")
        pairs = check_pairs(pairs)
        a, b = self.coef
        out = []
        for (task, _), sim in zip(pairs, self.similarity(pairs)):
            names = [s["party_name"] for s in task["stances"]]
            sc = np.clip(np.rint(a + b * sim), 0, 9).astype(int)
            out.append(
                {
                    "scores": dict(zip(names, sc.tolist())),
                    "fallback": dict.fromkeys(names, False),
                    "replies": {n: [f"{c:.4f}"] for n, c in zip(names, sim)},
                }
            )
        return out

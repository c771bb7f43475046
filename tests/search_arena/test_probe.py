"""The citation probe's bookkeeping, with a stand-in voter whose preferences are known."""

from __future__ import annotations

import re
from types import SimpleNamespace

import numpy as np
import pytest

from iclr26.search_arena._probe import citation_coefficient, citation_preference, citation_probe


class _Voter:
    """Log-odds for 'A' = position bias + effect x (citations in A - citations in B)."""

    name = "stand-in"

    def __init__(self, bias: float, effect: float):
        self.bias, self.effect = bias, effect

    def loglikelihood(self, contexts, continuations):
        out = []
        for chat, cont in zip(contexts, continuations, strict=True):
            text = chat[0]["content"]
            first, second = text.split("Response B:")
            n_a, n_b = (len(re.findall(r"\[\d\]", part)) for part in (first, second))
            logit_a = self.bias + self.effect * (n_a - n_b)
            out.append(SimpleNamespace(logprob=logit_a / 2 if cont == "A" else -logit_a / 2))
        return out


@pytest.mark.parametrize(("bias", "effect"), [(5.0, 0.3), (0.0, -0.2), (-3.0, 0.0)])
def test_position_free_preference_recovers_the_effect(bias, effect):
    votes = citation_probe(_Voter(bias, effect), np.random.default_rng(0), n_questions=8)
    assert len(votes) == 8 * 2 * 2
    pref = citation_preference(votes[votes["relevant"]])
    gap = votes.groupby("question")[["cites_first", "cites_second"]].max().max(axis=1) - votes.groupby(
        "question"
    )[["cites_first", "cites_second"]].min().min(axis=1)
    np.testing.assert_allclose(pref.to_numpy(), effect * gap.reindex(pref.index).to_numpy(), atol=1e-12)


def test_bt_coefficient_sign_when_the_voter_is_not_degenerate():
    votes = citation_probe(_Voter(0.0, 1.0), np.random.default_rng(1), n_questions=12)
    assert citation_coefficient(votes) > 0
    # a voter that always answers A: the positions absorb everything, the coefficient is ~0
    always_a = citation_probe(_Voter(50.0, 0.1), np.random.default_rng(1), n_questions=12)
    assert abs(citation_coefficient(always_a)) < 1e-6

"""Quality scores: the LLM judge's expected rubric score and the sonnet-form score."""

from __future__ import annotations

import math

import numpy as np
import pytest

from iclr26.models import LanguageModel, LogLikelihood, ScriptedModel, tiny_random_model
from iclr26.novelty import RUBRICS, quality_judge, sonnet_form_score
from iclr26.novelty._judge import level_orders

pytest.importorskip("pronouncing")

HEAD = "I saw the man who came to see the"
RHYMES = [
    "day",
    "night",
    "way",
    "light",
    "sea",
    "cold",
    "free",
    "old",
    "hand",
    "rain",
    "land",
    "pain",
    "sky",
    "high",
]
PERFECT = "\n".join(f"{HEAD} {w}" for w in RHYMES)  # 14 lines, 10 syllables, ABAB CDCD EFEF GG


class DigitModel(LanguageModel):
    """Log-probabilities designed per digit; the level listed first in the rubric gets a bonus."""

    name = "digits"

    def __init__(self, logits, first_bonus=0.0):
        self.logits, self.first_bonus, self.calls = np.asarray(logits, float), first_bonus, 0

    def generate(self, prompts, config=None):
        raise NotImplementedError

    def loglikelihood(self, contexts, continuations):
        self.calls += 1
        out = []
        for ctx, cont in zip(contexts, continuations, strict=True):
            d = int(cont.strip())
            first = int(ctx.split("rubric:\n", 1)[1][0])
            lp = self.logits[d] + (self.first_bonus if d == first else 0.0)
            out.append(LogLikelihood(logprob=lp, tokens=[cont], token_logprobs=[lp], is_greedy=False))
        return out


def test_judge_is_the_expected_digit_over_five():
    logits = np.log([0.05, 0.05, 0.1, 0.2, 0.4, 0.2])
    scores, probs = quality_judge(
        ["a text", "another"], DigitModel(logits), "story", samples=1, return_probs=True
    )
    expected = float(np.dot(np.exp(logits) / np.exp(logits).sum(), np.arange(6)) / 5)
    np.testing.assert_allclose(scores, [expected, expected], rtol=1e-12)
    assert probs.shape == (2, 1, 6) and np.allclose(probs.sum(axis=2), 1)


def test_judge_averages_rubric_orders_to_remove_position_bias():
    flat = np.zeros(6)
    model = DigitModel(flat, first_bonus=math.log(20.0))  # strongly prefers whichever level is listed first
    one = quality_judge(["x"], model, "sonnet", samples=1)[0]
    many = quality_judge(["x"], model, "sonnet", samples=12, seed=3)[0]
    # level f listed first gets probability 20/25, the others 1/25 each: E = (19 f + 15) / 25
    assert math.isclose(one, 15 / 125)  # the ascending order lists level 0 first
    firsts = np.array([int(o[0]) for o in level_orders(12, 3)])
    assert len(set(firsts)) > 2 and firsts[0] == 0
    assert math.isclose(many, float(np.mean(19 * firsts + 15)) / 125)
    assert quality_judge(["x"], model, "sonnet", samples=12, seed=3)[0] == many  # seeded


def test_judge_on_a_real_model_and_prompts():
    tiny = tiny_random_model()
    texts = ["Shall I compare thee to a summer's day? Thou art more lovely", "Shall I compare thee to dust"]
    prompts = ["Shall I compare thee", "Shall I compare thee"]
    q = quality_judge(texts, tiny, "sonnet", prompts=prompts, samples=2)
    assert q.shape == (2,) and np.all((q >= 0) & (q <= 1))
    custom = ("Judge it.", [f"level {i}" for i in range(6)])
    assert quality_judge(texts[:1], tiny, custom, samples=1).shape == (1,)
    assert quality_judge([], tiny).shape == (0,)


def test_judge_bad_input():
    m = DigitModel(np.zeros(6))
    with pytest.raises(ValueError, match="texts"):
        quality_judge("one text", m)
    with pytest.raises(ValueError, match="judge_model"):
        quality_judge(["x"], object())
    with pytest.raises(ValueError, match="task"):
        quality_judge(["x"], m, task="haiku")
    with pytest.raises(ValueError, match="task"):
        quality_judge(["x"], m, task=("intro", ["too", "few"]))
    with pytest.raises(ValueError, match="samples"):
        quality_judge(["x"], m, samples=0)
    with pytest.raises(ValueError, match="prompts"):
        quality_judge(["x"], m, prompts=["y"])
    with pytest.raises(ValueError, match="prompts"):
        quality_judge(["x", "z"], m, prompts=["x"])
    with pytest.raises(NotImplementedError):  # a model without log-probabilities cannot judge this way
        quality_judge(["x"], ScriptedModel(["Score: 3"]))
    assert set(RUBRICS) >= {"sonnet", "scene", "story"}


def test_judge_levels_given_as_one_string_are_refused():
    # "abcdef" is a sequence of six non-empty strings: its characters were taken as the six levels
    with pytest.raises(ValueError, match="task"):
        quality_judge(["x"], DigitModel(np.zeros(6)), task=("intro", "abcdef"), samples=1)


@pytest.mark.parametrize("flag", ["no", "False", 0, None])
def test_judge_return_probs_must_be_a_bool(flag):
    # "no" is truthy: a (scores, probs) tuple came back where an array was asked for
    with pytest.raises(ValueError, match="return_probs"):
        quality_judge(["x"], DigitModel(np.zeros(6)), samples=1, return_probs=flag)


@pytest.mark.parametrize("logits", [[np.nan] * 6, [-np.inf] * 6, [0.0, np.nan, 0, 0, 0, 0]])
def test_judge_refuses_undefined_digit_probabilities(logits):
    # six -inf (or a NaN) renormalised as 0/0: the score was NaN without a word
    with pytest.raises(ValueError, match=r"judge_model.*texts\[0\]"):
        quality_judge(["x"], DigitModel(logits), samples=2)
    assert np.isfinite(quality_judge(["x"], DigitModel([-np.inf] * 5 + [0.0]), samples=2)).all()


def test_sonnet_form_score_parts():
    rng = np.random.default_rng(0)
    words = PERFECT.split()
    shuffled_words = list(rng.permutation(words))
    shuffled = "\n".join(" ".join(shuffled_words[i * 10 : i * 10 + 10]) for i in range(14))
    twelve = "\n".join(PERFECT.splitlines()[:12])
    long_lines = "\n".join(f"{HEAD} very {w}" for w in RHYMES)
    scores = sonnet_form_score([PERFECT, shuffled, twelve, long_lines, "", "one line only"])
    assert scores[0] == 1.0
    assert scores[1] < 0.8  # same lines and syllables, rhymes broken
    assert math.isclose(scores[2], (1 - 2 / 14 + 12 / 14 + 6 / 7) / 3)  # the GG pair is missing
    assert math.isclose(scores[3], (1 + 0 + 1) / 3)  # 12 syllables a line: metre fails
    assert scores[4] == 0.0 and 0 < scores[5] < 0.2
    weighted = sonnet_form_score([twelve], weights=(0.0, 0.0, 1.0))
    assert math.isclose(weighted[0], 6 / 7)


def test_sonnet_form_score_bad_input():
    with pytest.raises(ValueError, match="texts"):
        sonnet_form_score("a sonnet")
    with pytest.raises(ValueError, match="weights"):
        sonnet_form_score(["x"], weights=(0.5, 0.5, 0.5))

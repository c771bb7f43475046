"""token_scores on the tiny random Llama: definitions against direct computation, batch independence."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from iclr26.models import tiny_random_model  # noqa: E402
from iclr26.mrf_calibration import token_scores  # noqa: E402

TEXTS = ["the cat sat on the mat", "a b c d e f g h i j k", "hello world, how are you today?"]


@pytest.fixture(scope="module")
def model():
    return tiny_random_model(0)


def test_scores_match_their_definitions(model):
    ids = list(model.tokenizer(TEXTS[0], add_special_tokens=True)["input_ids"])
    with torch.no_grad():
        lp = torch.log_softmax(model.model(torch.tensor([ids])).logits[0].float(), -1)[:-1]
    tgt = torch.tensor(ids[1:])
    ll = lp[torch.arange(len(tgt)), tgt]
    np.testing.assert_allclose(token_scores(model, TEXTS[:1], "loglik")[0], ll.numpy(), atol=1e-4)
    rank = 1 + (lp > ll[:, None]).sum(-1)
    np.testing.assert_allclose(token_scores(model, TEXTS[:1], "logrank")[0], -np.log(rank.numpy()), atol=1e-6)
    ent = (lp.exp() * lp).sum(-1)
    np.testing.assert_allclose(token_scores(model, TEXTS[:1], "entropy")[0], ent.numpy(), atol=1e-4)
    fd = token_scores(model, TEXTS[:1], "fastdetect")[0]
    assert fd.shape == (len(ids) - 1, 11)
    np.testing.assert_allclose(fd[:, 0], ll.numpy(), atol=1e-4)
    an = token_scores(model, TEXTS[:1], "fastdetect-analytic")[0]
    np.testing.assert_allclose(an, (ll - ent).numpy(), atol=1e-4)


def test_batch_size_independent(model):
    for kind in ("loglik", "fastdetect"):
        a = token_scores(model, TEXTS, kind, batch_size=1)
        b = token_scores(model, TEXTS, kind, batch_size=3)
        for x, y in zip(a, b):
            np.testing.assert_allclose(x, y, atol=1e-4)


def test_truncation_and_bad_input(model):
    assert len(token_scores(model, TEXTS[1:2], "loglik", max_tokens=4)[0]) == 3
    with pytest.raises(ValueError, match="kind"):
        token_scores(model, TEXTS, "perplexity")
    with pytest.raises(ValueError, match=r"texts\[1\]"):
        token_scores(model, ["ok text", ""], "loglik")
    with pytest.raises(ValueError, match="max_tokens"):
        token_scores(model, TEXTS, "loglik", max_tokens=1)


def test_texts_beyond_the_model_context_are_refused(model, monkeypatch):
    # positions past the context were scored silently (the model extrapolates its positions)
    monkeypatch.setattr(model, "context_length", 16)
    with pytest.raises(ValueError, match=r"texts\[1\] has \d+ tokens, more than the model's context of 16"):
        token_scores(model, TEXTS[:2], "loglik")
    assert len(token_scores(model, TEXTS[1:2], "loglik", max_tokens=16)[0]) == 15

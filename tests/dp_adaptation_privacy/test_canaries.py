import itertools

import numpy as np
import pytest
import torch

import iclr26.dp_adaptation_privacy as dpa


def test_insert_canaries(texts):
    out, canaries = dpa.insert_canaries(texts, n=3, repeats=2, seed=5)
    assert len(out) == len(texts) + 6 and len(canaries) == 3
    for c in canaries:
        assert out.count(c.text) == 2 and c.text == c.template.format(secret=c.secret) and c.secret.isdigit()
    assert [t for t in out if t not in {c.text for c in canaries}] == texts  # order of the rest kept
    assert dpa.insert_canaries(texts, 3, 2, seed=5) == (out, canaries)


def test_exposure_formula():
    from iclr26.dp_adaptation_privacy._canaries import exposure

    assert exposure(0.5, np.array([1.0, 2.0, 3.0])) == pytest.approx(2.0)  # rank 1 of 4: log2(4)
    assert exposure(9.0, np.array([1.0, 2.0, 3.0])) == pytest.approx(0.0)  # rank 4 of 4


@pytest.fixture(scope="module")
def memorised(tiny, texts):
    data, canaries = dpa.insert_canaries(texts[:6], n=1, repeats=4, seed=2)
    model = dpa.adapt(tiny, data, "full", float("inf"), epochs=4, batch_size=5, lr=1e-2, max_length=32)
    return model, canaries


def test_memorised_canary_is_exposed_and_extractable(tiny, memorised):
    free, canaries = memorised
    exposed = dpa.canary_exposure(free, canaries, 31)
    assert (exposed > dpa.canary_exposure(tiny, canaries, 31)).all()
    assert exposed == pytest.approx([5.0])  # top rank of 32: log2(32)
    assert dpa.k_extractable(free, canaries, 4).all()
    assert not dpa.k_extractable(tiny, canaries, 4).any()


@pytest.mark.parametrize("which", ["base", "adapted"])
def test_k_extractable_equals_greedy_generation(tiny, memorised, which):
    model, canaries = memorised
    model = tiny if which == "base" else model.model
    k = 4
    for c, flag in zip(canaries, dpa.k_extractable(model, canaries, k)):
        ids = torch.tensor([model.tokenizer(c.text)["input_ids"]])
        gen = model.model.generate(
            ids[:, :k], max_new_tokens=ids.shape[1] - k, do_sample=False, min_new_tokens=0
        )
        assert flag == bool(torch.equal(gen[0, : ids.shape[1]], ids[0]) and gen.shape[1] >= ids.shape[1])


def test_distribution_distance_is_the_optimal_matching():
    r = np.random.default_rng(0)
    a, b = r.normal(size=(5, 3)), r.normal(size=(5, 3)) + 1
    emb = {f"a{i}": a[i] for i in range(5)} | {f"b{i}": b[i] for i in range(5)}

    def embedder(texts):
        return np.stack([emb[t] for t in texts])

    ta, tb = [f"a{i}" for i in range(5)], [f"b{i}" for i in range(5)]
    brute = min(np.mean(np.linalg.norm(a - b[list(p)], axis=1)) for p in itertools.permutations(range(5)))
    assert dpa.distribution_distance(ta, tb, embedder) == pytest.approx(brute, abs=1e-12)
    assert dpa.distribution_distance(ta, ta, embedder) == 0.0


def test_distribution_distance_one_dimension_matches_scipy():
    from scipy.stats import wasserstein_distance

    r = np.random.default_rng(1)
    x, y = r.normal(size=40), r.exponential(size=40)
    lookup = {f"x{i}": [x[i]] for i in range(40)} | {f"y{i}": [y[i]] for i in range(40)}
    d = dpa.distribution_distance(
        [f"x{i}" for i in range(40)], [f"y{i}" for i in range(40)], lambda t: [lookup[s] for s in t]
    )
    assert d == pytest.approx(wasserstein_distance(x, y), abs=1e-12)


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda t: dpa.insert_canaries(t, n=0), "n"),
        (lambda t: dpa.insert_canaries(t, repeats=0), "repeats"),
        (lambda t: dpa.insert_canaries(t, template="no slot"), "template"),
        (lambda t: dpa.insert_canaries(t, template="{secret} and {other}"), "template"),
        (lambda t: dpa.insert_canaries(t, n=11, digits=1), "n"),  # only 10 distinct secrets exist
        (lambda t: dpa.insert_canaries([], 1), "texts"),
        (lambda t: dpa.distribution_distance(t[:2], t[:3], lambda s: np.ones((len(s), 2))), "texts_b"),
        (lambda t: dpa.distribution_distance(t[:2], t[2:4], lambda s: np.ones(len(s))), "embedder"),
        (lambda t: dpa.distribution_distance(t[:2], t[2:4], lambda s: np.ones((1, 2))), "embedder"),
    ],
)
def test_bad_input(texts, call, name):
    with pytest.raises(ValueError, match=name):
        call(texts)


def test_canary_functions_bad_input(tiny):
    with pytest.raises(ValueError, match="canaries"):
        dpa.canary_exposure(tiny, [])
    with pytest.raises(ValueError, match="canaries"):
        dpa.k_extractable(tiny, ["not a canary"])
    _, canaries = dpa.insert_canaries(["some text here"], 1, seed=0)
    with pytest.raises(ValueError, match="context_tokens"):
        dpa.k_extractable(tiny, canaries, 500)
    with pytest.raises(ValueError, match="n_nonmembers"):
        dpa.canary_exposure(tiny, canaries, 0)
    _, short = dpa.insert_canaries(["some text here"], 1, seed=0, digits=2)
    with pytest.raises(ValueError, match="n_nonmembers"):  # 100 samples of 100 possible secrets
        dpa.canary_exposure(tiny, short, 100)


def test_canaries_have_distinct_secrets(texts):
    """All 10 one-digit secrets when 10 are asked (draws repeat: they are replaced, not kept); with no
    repeated draw the secrets are those of the plain draw."""
    from iclr26.dp_adaptation_privacy._canaries import random_secrets

    _, canaries = dpa.insert_canaries(texts, n=10, digits=1, seed=3)
    assert sorted(c.secret for c in canaries) == [str(d) for d in range(10)]
    _, canaries = dpa.insert_canaries(texts, n=4, seed=3)
    assert [c.secret for c in canaries] == random_secrets(np.random.default_rng(3), 4, 6)

"""Head activations, RSA, CIE (cached vs naive patching), head vectors and steering on the tiny model."""

import numpy as np
import pytest
from scipy.spatial.distance import squareform
from scipy.stats import spearmanr

from iclr26.concept_vectors import (
    ICLTask,
    build_prompts,
    cross_format_effects,
    delta_p,
    head_activations,
    head_rsa,
    head_vector,
    indirect_effects,
    kl_between,
    steer,
    top_heads,
)
from iclr26.concept_vectors._heads import steer_naive
from iclr26.models import tiny_random_model

TASK = ICLTask.from_pairs([(f"w{i}", f"o{i}") for i in range(20)], "t")


@pytest.fixture(scope="module")
def tiny():
    return tiny_random_model(seed=1)


@pytest.fixture(scope="module")
def prompts():
    return build_prompts(TASK, 6, 3, seed=2), build_prompts(TASK, 6, 3, seed=2, corrupted=True)


def test_activations_shape_and_batch_independence(tiny, prompts):
    clean, _ = prompts
    a = head_activations(tiny, clean.prompts, batch_size=6)
    b = head_activations(tiny, clean.prompts, batch_size=1)
    cfg = tiny.model.config
    assert a.shape == (
        6,
        cfg.num_hidden_layers,
        cfg.num_attention_heads,
        cfg.hidden_size // cfg.num_attention_heads,
    )
    assert a.dtype == np.float32
    np.testing.assert_allclose(a, b, atol=1e-5)


def test_head_rsa_equals_scipy_on_condensed_matrices():
    rng = np.random.default_rng(0)
    acts = rng.normal(size=(9, 2, 3, 5))
    labels = np.repeat(["a", "b", "c"], 3)
    got = head_rsa(acts, labels)
    design = (labels[:, None] == labels[None, :]).astype(float)
    for layer in range(2):
        for head in range(3):
            x = acts[:, layer, head]
            x = x / np.linalg.norm(x, axis=1, keepdims=True)
            ref = spearmanr(squareform(x @ x.T, checks=False), squareform(design, checks=False)).correlation
            assert abs(got[layer, head] - ref) < 1e-12


def test_head_rsa_finds_the_concept_head():
    rng = np.random.default_rng(1)
    labels = np.repeat([0, 1, 2], 5)
    acts = rng.normal(size=(15, 2, 2, 8))
    acts[:, 1, 0] = np.eye(8)[labels] * 5 + rng.normal(scale=0.1, size=(15, 8))
    scores = head_rsa(acts, labels)
    assert top_heads(scores, 1) == [(1, 0)]
    assert scores[1, 0] > 0.7 > 0.3 > np.abs(np.delete(scores.ravel(), 2)).max()  # binary design caps rho


def test_top_heads_order_and_nan():
    s = np.array([[0.1, np.nan], [0.5, 0.3]])
    assert top_heads(s, 4) == [(1, 0), (1, 1), (0, 0), (0, 1)]


@pytest.mark.parametrize("metric", ["logprob", "prob"])
def test_cached_cie_equals_naive_patching(tiny, prompts, metric):
    clean, bad = prompts
    fast = indirect_effects(tiny, clean.prompts, bad.prompts, clean.completions, metric, batch_size=4)
    slow = indirect_effects(
        tiny, clean.prompts, bad.prompts, clean.completions, metric, batch_size=3, method="naive"
    )
    np.testing.assert_allclose(fast, slow, atol=1e-5)
    assert np.abs(fast).max() > 1e-8  # the patch changes something
    part = indirect_effects(tiny, clean.prompts, bad.prompts, clean.completions, metric, layers=[1])
    assert np.isnan(part[0]).all()
    np.testing.assert_allclose(part[1], fast[1], atol=1e-5)


def test_cross_format_effects_patch_source_means_into_target(tiny):
    clean = {f: build_prompts(TASK, 4, 2, f, seed=5) for f in ("open_ended", "arrow", "mc_letter")}
    bad = {f: build_prompts(TASK, 4, 2, f, seed=5, corrupted=True) for f in clean}
    fast = cross_format_effects(tiny, clean, bad, batch_size=3)
    assert set(fast) == {(a, b) for a in clean for b in clean if a != b}  # the authors' ordered pairs
    slow = cross_format_effects(tiny, clean, bad, "logprob", pairs=[("arrow", "open_ended")], method="naive")
    np.testing.assert_allclose(fast["arrow", "open_ended"], slow["arrow", "open_ended"], atol=1e-5)
    for src, dst in (("open_ended", "mc_letter"), ("mc_letter", "arrow")):
        # one source alone through indirect_effects: the batched sources change nothing
        ref = indirect_effects(tiny, clean[src].prompts, bad[dst].prompts, bad[dst].completions)
        np.testing.assert_allclose(fast[src, dst], ref, atol=1e-5)
    assert np.abs(fast["open_ended", "mc_letter"] - fast["arrow", "mc_letter"]).max() > 1e-6
    per = cross_format_effects(tiny, clean, bad, "prob", pairs=[("open_ended", "arrow")], per_prompt=True)
    assert per["open_ended", "arrow"].shape == (4, *fast["arrow", "open_ended"].shape)
    with pytest.raises(ValueError, match="pairs"):
        cross_format_effects(tiny, clean, bad, pairs=[("open_ended", "french")])
    with pytest.raises(ValueError, match="pairs"):
        cross_format_effects(tiny, {"open_ended": clean["open_ended"]}, {"open_ended": bad["open_ended"]})
    with pytest.raises(ValueError, match="ICLPrompts"):
        cross_format_effects(tiny, {"a": clean["arrow"].prompts}, bad)


def test_head_vector_is_masked_mean_through_o_proj(tiny, prompts):
    import torch

    acts = head_activations(tiny, prompts[0].prompts)
    v = head_vector(tiny, acts, [(0, 1), (1, 0), (1, 3)])
    d_head = acts.shape[-1]
    ref = np.zeros(v.shape)
    for layer, heads in ((0, [1]), (1, [0, 3])):
        z = np.zeros(acts.shape[2:], dtype=np.float32)
        z[heads] = acts[:, layer, heads].mean(0)
        w = tiny.model.model.layers[layer].self_attn.o_proj.weight.detach().numpy()
        ref += w @ z.reshape(-1)
    np.testing.assert_allclose(v, ref, atol=1e-5)
    per = head_vector(tiny, acts, [(0, 1)], per_item=True)
    assert per.shape == (acts.shape[0], v.shape[0])
    assert d_head and torch


def test_steer_equals_full_rerun_with_hook(tiny, prompts):
    clean, _ = prompts
    acts = head_activations(tiny, clean.prompts)
    v = head_vector(tiny, acts, [(0, 0), (1, 2)])
    probs = steer(tiny, clean.prompts, v, [0, 1], alpha=4.0, batch_size=4)
    for j, layer in enumerate([0, 1]):
        np.testing.assert_allclose(probs[j], steer_naive(tiny, clean.prompts, v, layer, 4.0), atol=1e-5)
    zero = steer(tiny, clean.prompts, v, 0, alpha=0.0)
    base = steer_naive(tiny, clean.prompts, v, 0, 0.0)
    np.testing.assert_allclose(zero, base, atol=1e-6)
    assert np.abs(probs[0] - base).max() > 1e-4


def test_delta_p_and_kl():
    p = np.array([[0.5, 0.5], [0.9, 0.1]])
    q = np.array([[0.25, 0.75], [0.9, 0.1]])
    np.testing.assert_allclose(delta_p(p, q, np.array([0, 1])), [0.25, 0.0])
    import torch
    from torch.nn.functional import kl_div

    ref = kl_div(torch.tensor(q).log(), torch.tensor(p).log(), log_target=True, reduction="batchmean").item()
    assert abs(kl_between(p, q) - ref) < 1e-12
    assert kl_between(p, q, per_prompt=True).shape == (2,)


def test_bad_inputs(tiny, prompts):
    clean, bad = prompts
    acts = head_activations(tiny, clean.prompts)
    with pytest.raises(ValueError, match="heads"):
        head_vector(tiny, acts, [(0, 99)])
    with pytest.raises(ValueError, match="heads"):
        head_vector(tiny, acts, [(5, 0)])
    with pytest.raises(ValueError, match="acts"):
        head_vector(tiny, acts[:, :1], [(0, 0)])
    with pytest.raises(ValueError, match="labels"):
        head_rsa(acts, [0, 1])
    with pytest.raises(ValueError, match="labels"):
        head_rsa(acts, [0] * len(acts))
    with pytest.raises(ValueError, match="targets"):
        indirect_effects(tiny, clean.prompts, bad.prompts, clean.completions[:2])
    with pytest.raises(ValueError, match="metric"):
        indirect_effects(tiny, clean.prompts, bad.prompts, clean.completions, metric="logit")
    with pytest.raises(ValueError, match="layers"):
        indirect_effects(tiny, clean.prompts, bad.prompts, clean.completions, layers=[7])
    with pytest.raises(ValueError, match="prompts"):
        head_activations(tiny, [])
    with pytest.raises(ValueError, match="vector"):
        steer(tiny, clean.prompts, np.zeros(3), 0)
    with pytest.raises(ValueError, match="k"):
        top_heads(np.zeros((2, 2)), 5)
    with pytest.raises(ValueError, match="targets"):
        delta_p(np.ones((2, 2)) / 2, np.ones((2, 2)) / 2, np.array([0, 5]))
    with pytest.raises(ValueError, match="probs_ood"):
        kl_between(np.ones((2, 2)) / 2, np.ones((3, 2)) / 2)
    # rows that are not distributions gave a KL (353 for a negative entry) or a probability change
    half = np.ones((1, 2)) / 2
    for bad, name in (([[-0.1, 1.1]], "probs_ood"), ([[0.5, 0.6]], "probs_ood")):
        with pytest.raises(ValueError, match=name):
            kl_between(half, np.array(bad))
    with pytest.raises(ValueError, match="probs"):
        delta_p(np.array([[2.0, -1.0]]), half, np.array([0]))


def test_model_without_o_proj_is_refused(prompts):
    class NoProj:
        class model:  # noqa: N801 - mimics HFModel.model.model.layers
            class model:  # noqa: N801
                layers = [object()]

    with pytest.raises(ValueError, match="o_proj"):
        head_activations(NoProj(), prompts[0].prompts)

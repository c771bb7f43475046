"""LoRA training on instruction data, adapter merging and batched greedy generation.

LoRA (Hu et al., ICLR 2022) as ``peft`` initialises it: ``A`` (r, in) Kaiming-uniform, ``B`` (out, r) zero,
update ``(α / r) · B A``. The adapter is returned as a PEFT-style state dict
(``base_model.model.<module>.lora_A.weight``). Training as LlamaFactory's SFT stage: AdamW, loss on the
response tokens only, batches in a seeded random order each epoch; in float32, or with ``precision="bf16"``
under bfloat16 autocast (fp32 LoRA weights, optimiser and loss): the CPU counterpart of the
authors' ``fp16: true`` mixed precision.
"""

from __future__ import annotations

import contextlib
import copy
import math
import re

import numpy as np
import torch

from ..models._schedule import lr_at

ALPACA = (
    "Below is an instruction that describes a task. Write a response that appropriately completes the "
    "request.\n\n### Instruction:\n{instruction}\n\n### Response:\n"
)
ALPACA_INPUT = (
    "Below is an instruction that describes a task, paired with an input that provides further context. "
    "Write a response that appropriately completes the request.\n\n### Instruction:\n{instruction}\n\n"
    "### Input:\n{input}\n\n### Response:\n"
)
PREFIX = "base_model.model."
PRECISIONS = ("fp32", "bf16")
SCHEDULES = ("constant", "cosine")
WARMUP_RATIO = 0.1  # bd-vax's LlamaFactory configs: cosine with 10 % linear warm-up


def render(sample: dict, template: str | None) -> str:
    """The prompt text of a sample: raw ``instruction`` (+ input) or the Alpaca template."""
    if template is None:
        return sample["instruction"] + (f"\n{sample['input']}" if sample.get("input") else "")
    fmt = ALPACA_INPUT if sample.get("input") else ALPACA
    return fmt.format(instruction=sample["instruction"], input=sample.get("input", ""))


def target_names(model: torch.nn.Module, targets, layers=None) -> list[str]:
    """Linear layers to adapt: ``"all-linear"`` = every linear layer except ``lm_head``, else those whose
    last name part is in ``targets``; only inside ``layers.<i>.`` for ``i`` in ``layers`` when given."""
    names = []
    for name, m in model.named_modules():
        if not isinstance(m, torch.nn.Linear) or name.endswith("lm_head"):
            continue
        if targets != "all-linear" and name.rsplit(".", 1)[-1] not in targets:
            continue
        if layers is not None and layer_index(name) not in layers:
            continue
        names.append(name)
    return names


def layer_index(name: str) -> int | None:
    """The decoder-layer index in a module name (``...layers.<i>....``), or ``None``."""
    m = re.search(r"(?:^|\.)layers\.(\d+)\.", name)
    return int(m.group(1)) if m else None


class _Hook:
    """Forward hook adding ``scale · (x Aᵀ) Bᵀ`` to a frozen linear layer's output."""

    def __init__(self, a: torch.nn.Parameter, b: torch.nn.Parameter, scale: float):
        self.a, self.b, self.scale = a, b, scale

    def __call__(self, module, inputs, output):
        return output + self.scale * (inputs[0] @ self.a.T) @ self.b.T


def tokenize(tokenizer, samples: list[dict], template, max_length: int) -> list[tuple[list[int], int]]:
    """``(prompt + response + eos ids, prompt length)`` per sample, truncated to ``max_length``."""
    out = []
    for s in samples:
        p = tokenizer(render(s, template), add_special_tokens=False)["input_ids"]
        r = tokenizer(s["output"], add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
        out.append(((p + r)[:max_length], min(len(p), max_length)))
    return out


def batch_tensors(rows, pad_id: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Right-padded ``ids``, ``attention_mask`` and ``labels`` (prompt and padding = -100)."""
    width = max(len(ids) for ids, _ in rows)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    labels = torch.full_like(ids, -100)
    mask = torch.zeros_like(ids)
    for j, (row, n_prompt) in enumerate(rows):
        ids[j, : len(row)] = torch.tensor(row)
        mask[j, : len(row)] = 1
        labels[j, n_prompt : len(row)] = ids[j, n_prompt : len(row)]
    return ids, mask, labels


def _submodel(model: torch.nn.Module, layers, final_norm: bool) -> torch.nn.Module:
    """A shallow copy of the decoder ``model.model`` holding only ``layers`` (shared, not copied);
    without ``final_norm`` the last norm is the identity, so the output is the residual stream."""
    base = copy.copy(model.model)
    base._modules = dict(base._modules)
    base._modules["layers"] = torch.nn.ModuleList(layers)
    if not final_norm:
        base._modules["norm"] = torch.nn.Identity()
    return base


def first_layer(names: list[str]) -> int:
    """Index of the first decoder layer that ``names`` adapt (0 when one has no layer index)."""
    idx = [layer_index(n) for n in names]
    return 0 if not idx or None in idx else min(idx)


def head_fingerprint(model: torch.nn.Module, start: int) -> tuple[float, ...]:
    """Sums of the embedding and of layers ``< start``: equal for models whose frozen prefix is equal.

    In the parameters' own dtype: a key, not a quantity, so float32 rounding is harmless, and a
    float64 sum took 0.20 s on SmolLM2's 22 frozen layers against 0.04 s (about 30 calls per medium
    seed)."""
    parts = [
        model.model.embed_tokens.weight,
        *(p for layer in model.model.layers[:start] for p in layer.parameters()),
    ]
    with torch.no_grad():
        return tuple(float(p.sum()) for p in parts)


@torch.no_grad()
def prefix_states(model, data, start: int, batch: int, cache: dict | None, workers: int = 1):
    """Residual stream entering decoder layer ``start`` for each tokenized row: ``(len_i, hidden)`` each.

    The layers before ``start`` carry no adapter, so these states do not change while a tail adapter
    trains; ``cache`` (keyed by the prefix's fingerprint and the token ids) keeps them across calls.
    The missing rows run in batches of ``batch`` in their order in ``data``, each packed into one
    sequence (:func:`packed_positions`); ``workers > 1`` shares
    those batches among forked processes (:func:`iclr26.runtime.fork_map`): the same batches, so the
    same states.
    """
    from ..runtime import fork_map

    key0 = (start, head_fingerprint(model, start)) if cache is not None else None
    todo = [j for j, (ids, _) in enumerate(data) if cache is None or (key0, tuple(ids)) not in cache]
    head = _submodel(model, list(model.model.layers[:start]), final_norm=False)
    batches = [[data[j] for j in todo[s : s + batch]] for s in range(0, len(todo), batch)]

    def run(group: list) -> dict:
        found = {}
        for rows in group:
            ids = torch.tensor([t for row, _ in rows for t in row])[None]
            hidden = head(
                input_ids=ids, position_ids=packed_positions(rows), use_cache=False
            ).last_hidden_state
            for (row, _), h in zip(rows, hidden[0].split([len(row) for row, _ in rows]), strict=True):
                found[tuple(row)] = h.clone()
        return found

    found = {}
    for part in fork_map(run, [batches[w::workers] for w in range(workers)], workers=workers):
        found.update(part)
    if cache is None:
        return [found[tuple(ids)] for ids, _ in data]
    cache.update({(key0, k): v for k, v in found.items()})
    return [cache[(key0, tuple(ids))] for ids, _ in data]


def packed_positions(rows) -> torch.Tensor:
    """Position ids ``(1, Σ len_i)`` of ``rows`` (``(ids, n_prompt)`` each) packed into one sequence,
    restarting at 0 per row. Given no attention mask, the decoder reads the restarts as a block-diagonal
    causal mask: each row attends to itself only, at its own positions, as in a padded batch, and no
    padding is computed (BackdoorLLM rows padded to the batch's longest take 1.3-1.8x their tokens)."""
    return torch.cat([torch.arange(len(row)) for row, _ in rows])[None]


def response_targets(rows) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """For ``rows`` packed in order: the positions that predict a response token, that token, and the
    row it belongs to (the labels of :func:`batch_tensors`, shifted by one)."""
    where, target, owner, offset = [], [], [], 0
    for k, (row, n_prompt) in enumerate(rows):
        nxt = range(max(n_prompt, 1), len(row))
        where += [offset + t - 1 for t in nxt]
        target += [row[t] for t in nxt]
        owner += [k] * len(nxt)
        offset += len(row)
    where, target, owner = (torch.tensor(v, dtype=torch.long) for v in (where, target, owner))
    return where, target, owner


@contextlib.contextmanager
def bf16_frozen_weights(modules):
    """Inside, every frozen float32 ``Linear`` weight in ``modules`` is replaced by its bfloat16 copy.

    Under CPU autocast, a weight that needs no gradient is cast again at every call (autocast's cast
    cache keeps only leaf tensors that require grad): SmolLM2's 49,152 x 576 output head took 61 ms per
    forward and backward of 120 rows instead of 28 ms with a bfloat16 weight. The copy holds what
    autocast's cast gives, so forward and backward compute the same numbers. The originals (a tied
    head's shared tensor included) are put back on exit.
    """
    swapped = {}
    for module in modules:
        for lin in module.modules():
            w = getattr(lin, "weight", None)
            if (
                isinstance(lin, torch.nn.Linear)
                and id(lin) not in swapped
                and w.dtype == torch.float32
                and not w.requires_grad
            ):
                swapped[id(lin)] = (lin, w)
                lin.weight = torch.nn.Parameter(w.detach().to(torch.bfloat16), requires_grad=False)
    try:
        yield
    finally:
        for lin, w in swapped.values():
            lin.weight = w


def tail_loss(tail, lm_head, states, rows) -> torch.Tensor:
    """Mean next-token cross-entropy on the response tokens, running only the adapted ``tail`` layers
    from the cached prefix ``states`` of ``rows`` packed into one sequence (:func:`packed_positions`);
    the output head is applied at the predicting positions only."""
    hidden = tail(
        inputs_embeds=torch.cat(states)[None], position_ids=packed_positions(rows), use_cache=False
    ).last_hidden_state[0]
    where, target, _ = response_targets(rows)
    return torch.nn.functional.cross_entropy(lm_head(hidden[where]).float(), target)


def lr_factors(steps: int, schedule: str) -> list[float]:
    """The learning rate's factor at each of ``steps`` optimiser steps: 1 throughout (``"constant"``),
    or (``"cosine"``) the authors' LlamaFactory schedule, transformers' cosine with linear warm-up over
    ``ceil(WARMUP_RATIO · steps)`` steps (``get_cosine_schedule_with_warmup``; its first step has
    factor 0 when there is a warm-up)."""
    warmup = math.ceil(steps * WARMUP_RATIO) if schedule == "cosine" else 0
    return [lr_at(k, steps, warmup, 1.0, schedule) for k in range(steps)]


def train(
    model,
    tokenizer,
    samples,
    *,
    template,
    r,
    alpha,
    targets,
    lr,
    epochs,
    batch,
    seed,
    max_length,
    init=None,
    layers=None,
    cache=None,
    precision="fp32",
    lr_schedule="constant",
) -> tuple[dict[str, torch.Tensor], list[float]]:
    """Train a LoRA adapter (from ``init`` if given) on a frozen ``model``; returns (adapter, step losses).

    The model's weights are not changed (hooks are removed afterwards). When every adapted layer lies at
    or after decoder layer ``s > 0``, the residual stream entering layer ``s`` is computed once per
    sample (:func:`prefix_states`, kept in ``cache``) and each step runs layers ``s..`` only: the same
    loss and gradients as the full forward, without recomputing the frozen prefix. ``precision="bf16"``
    runs each step's forward under bfloat16 autocast, the frozen weights it uses held as bfloat16
    copies for the whole training (:func:`bf16_frozen_weights`; the prefix states stay float32, so
    ``cache`` is shared with float32 calls). ``lr_schedule``: the rate's factor per step
    (:func:`lr_factors`).
    """
    torch.manual_seed(seed)
    params, handles = {}, []
    names = (
        target_names(model, targets, layers)
        if init is None
        else [
            k.removeprefix(PREFIX).removesuffix(".lora_A.weight")
            for k in init
            if k.endswith(".lora_A.weight")
        ]
    )
    for name in names:
        lin = model.get_submodule(name)
        a = torch.empty(r, lin.in_features)
        torch.nn.init.kaiming_uniform_(a, a=math.sqrt(5))
        b = torch.zeros(lin.out_features, r)
        if init is not None:
            a = init[f"{PREFIX}{name}.lora_A.weight"].clone()
            b = init[f"{PREFIX}{name}.lora_B.weight"].clone()
        pa, pb = torch.nn.Parameter(a.to(lin.weight)), torch.nn.Parameter(b.to(lin.weight))
        params[name] = (pa, pb)
        handles.append(lin.register_forward_hook(_Hook(pa, pb, alpha / r)))
    flat = [p for pair in params.values() for p in pair]
    frozen = [(p, p.requires_grad) for p in model.parameters()]
    for p, _ in frozen:
        p.requires_grad_(False)
    opt = torch.optim.AdamW(flat, lr=lr, weight_decay=0.0)
    data = tokenize(tokenizer, samples, template, max_length)
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    start = first_layer(names) if hasattr(model, "model") and hasattr(model.model, "layers") else 0
    rng = np.random.default_rng(seed)
    losses = []
    try:
        model.eval()
        states = prefix_states(model, data, start, 16, cache) if start > 0 else None
        tail = _submodel(model, list(model.model.layers[start:]), final_norm=True) if start > 0 else None
        model.train()
        bf16 = precision == "bf16"
        trained = [tail, model.lm_head] if tail is not None else [model]
        factors = iter(lr_factors(epochs * math.ceil(len(data) / batch), lr_schedule))
        with bf16_frozen_weights(trained) if bf16 else contextlib.nullcontext():
            for _ in range(epochs):
                perm = rng.permutation(len(data))
                for s in range(0, len(data), batch):
                    chosen = perm[s : s + batch]
                    opt.param_groups[0]["lr"] = lr * next(factors)
                    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
                        if tail is None:
                            ids, mask, labels = batch_tensors([data[i] for i in chosen], pad)
                            loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss
                        else:
                            loss = tail_loss(
                                tail, model.lm_head, [states[i] for i in chosen], [data[i] for i in chosen]
                            )
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
                    losses.append(float(loss.detach()))
    finally:
        for h in handles:
            h.remove()
        for p, flag in frozen:
            p.requires_grad_(flag)
        model.eval()
    adapter = {}
    for name, (pa, pb) in params.items():
        adapter[f"{PREFIX}{name}.lora_A.weight"] = pa.detach().clone()
        adapter[f"{PREFIX}{name}.lora_B.weight"] = pb.detach().clone()
    return adapter, losses


def train_many(model, tokenizer, jobs: list[dict], workers: int, progress=None) -> list:
    """:func:`train` for each job's keyword arguments, in ``workers`` forked single-thread processes
    (:func:`iclr26.runtime.fork_map`; 1: here). Results in job order.

    Each job trains from its own shallow copy of its ``cache``: prefix states that one job adds are
    not seen by the next, so a job's inputs, and hence its result, do not depend on ``workers`` or on
    the order in which jobs run.
    """
    from ..runtime import fork_map

    def one(job: dict):
        if job.get("cache") is not None:
            job = {**job, "cache": dict(job["cache"])}
        return train(model, tokenizer, **job)

    return fork_map(one, jobs, workers=workers, progress=progress)


def merged(
    model: torch.nn.Module, adapter: dict[str, torch.Tensor], alpha: float, share_frozen: bool = False
) -> torch.nn.Module:
    """A copy of ``model`` with ``W + (α / r) B A`` merged into every adapted layer.

    ``share_frozen``: the copy shares (does not copy) every parameter and buffer of the layers the
    adapter leaves alone — for read-only uses (generation, losses): 4 adapted decoder layers of
    SmolLM2-135M copy ~60 MB instead of ~540 MB. Writing to a shared weight writes to ``model``.
    """
    from ._signature import lora_pairs

    pairs = {key.removeprefix(PREFIX): ab for key, ab in lora_pairs(adapter).items()}
    memo = {}
    if share_frozen:
        for name, t in (*model.named_parameters(), *model.named_buffers()):
            if name.rsplit(".", 1)[0] not in pairs:  # not a weight (or bias) of an adapted layer
                memo[id(t)] = t
    out = copy.deepcopy(model, memo)
    with torch.no_grad():
        for name, (a, b) in pairs.items():
            w = out.get_submodule(name).weight
            w += (alpha / a.shape[0]) * (b @ a).to(w)
    return out


@torch.no_grad()
def sample_losses(model, tokenizer, samples, template, max_length: int, batch: int) -> np.ndarray:
    """Mean next-token cross-entropy on each sample's response tokens (teacher forcing): ``(n,)``;
    NaN for a sample whose response was cut off entirely by ``max_length``."""
    data = tokenize(tokenizer, samples, template, max_length)
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    out = []
    for s in range(0, len(data), batch):
        ids, mask, labels = batch_tensors(data[s : s + batch], pad)
        logits = model(input_ids=ids, attention_mask=mask, use_cache=False).logits[:, :-1].float()
        target = labels[:, 1:]
        nll = torch.nn.functional.cross_entropy(logits.transpose(1, 2), target.clamp_min(0), reduction="none")
        keep = (target != -100).float()
        count = keep.sum(1)
        out += torch.where(count > 0, (nll * keep).sum(1) / count.clamp_min(1.0), torch.nan).tolist()
    return np.array(out)


@torch.no_grad()
def shared_sample_losses(
    models: list, tokenizer, samples, template, max_length: int, batch: int, start: int, cache: dict | None
) -> list[np.ndarray]:
    """:func:`sample_losses` of several models that share decoder layers ``< start`` (``start > 0``).

    The residual stream entering layer ``start`` is computed once per sample (:func:`prefix_states`,
    kept in ``cache``); each model then runs its layers ``start..`` over each batch packed into one
    sequence (:func:`packed_positions`) and its output head at the predicting positions. Equal to one
    :func:`sample_losses` per model up to float rounding. Returns one ``(n,)`` array per model.
    """
    data = tokenize(tokenizer, samples, template, max_length)
    states = prefix_states(models[0], data, start, 16, cache)
    out = []
    for model in models:
        tail = _submodel(model, list(model.model.layers[start:]), final_norm=True)
        losses = []
        for s in range(0, len(data), batch):
            rows = data[s : s + batch]
            hidden = tail(
                inputs_embeds=torch.cat(states[s : s + batch])[None],
                position_ids=packed_positions(rows),
                use_cache=False,
            ).last_hidden_state[0]
            where, target, owner = response_targets(rows)
            nll = torch.nn.functional.cross_entropy(
                model.lm_head(hidden[where]).float(), target, reduction="none"
            )
            total = torch.zeros(len(rows)).index_add_(0, owner, nll)
            count = torch.zeros(len(rows)).index_add_(0, owner, torch.ones_like(nll))
            losses += torch.where(count > 0, total / count.clamp_min(1.0), torch.nan).tolist()
        out.append(np.array(losses))
    return out


@torch.no_grad()
def generate(model, tokenizer, prompts: list[str], max_new_tokens: int, batch: int) -> list[str]:
    """Greedy continuations of ``prompts`` (left-padded batches), decoded without special tokens."""
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    side = tokenizer.padding_side
    tokenizer.padding_side = "left"
    outs = []
    try:
        for s in range(0, len(prompts), batch):
            enc = tokenizer(
                prompts[s : s + batch], return_tensors="pt", padding=True, add_special_tokens=False
            )
            gen = model.generate(
                **enc,
                max_new_tokens=max_new_tokens,
                do_sample=False,
                pad_token_id=pad,
                eos_token_id=tokenizer.eos_token_id,
            )
            outs += tokenizer.batch_decode(gen[:, enc["input_ids"].shape[1] :], skip_special_tokens=True)
    finally:
        tokenizer.padding_side = side
    return outs


def length_batches(tokenizer, prompts: list[str], batch: int) -> list[list[int]]:
    """Prompt indices in batches of ``batch``, in order of token length (stable): less padding."""
    lengths = [len(tokenizer(p, add_special_tokens=False)["input_ids"]) for p in prompts]
    order = np.argsort(lengths, kind="stable").tolist()
    return [order[s : s + batch] for s in range(0, len(order), batch)]


def _prompt_head(head, tokenizer, chunk: list[str], start: int, key0, cache: dict | None):
    """Left-padded encoding of ``chunk`` and the shared layers' output and keys/values over it
    (from ``cache`` when there). Returns ``(mask, positions, hidden, [(keys, values)] * start)``."""
    from transformers import DynamicCache

    enc = tokenizer(chunk, return_tensors="pt", padding=True, add_special_tokens=False)
    mask = enc["attention_mask"]
    pos = (mask.cumsum(-1) - 1).clamp_min(0)
    found = cache.get((key0, tuple(chunk))) if cache is not None else None
    if found is None:
        shared = DynamicCache()
        hidden = head(
            input_ids=enc["input_ids"], attention_mask=mask, position_ids=pos, cache=shared, use_cache=True
        ).last_hidden_state
        found = (hidden, [(layer.keys, layer.values) for layer in shared.layers[:start]])
        if cache is not None:
            cache[(key0, tuple(chunk))] = found
    return mask, pos, *found


def _head_key(model, start: int) -> tuple:
    return ("generate", start, head_fingerprint(model, start))


@torch.no_grad()
def warm_prompt_heads(model, tokenizer, prompts: list[str], batch: int, start: int, cache: dict) -> None:
    """Fill ``cache`` with the shared layers' pass over ``prompts`` in the batches that
    :func:`generate_shared` forms from them (same ``batch``), without decoding."""
    side = tokenizer.padding_side
    tokenizer.padding_side = "left"
    try:
        head = _submodel(model, list(model.model.layers[:start]), final_norm=False)
        key0 = _head_key(model, start)
        for idx in length_batches(tokenizer, prompts, batch):
            _prompt_head(head, tokenizer, [prompts[i] for i in idx], start, key0, cache)
    finally:
        tokenizer.padding_side = side


@torch.no_grad()
def generate_shared(
    models: list,
    tokenizer,
    prompts: list[str],
    max_new_tokens: int,
    batch: int,
    start: int,
    cache: dict | None = None,
    stop=None,
) -> list[list[str]]:
    """Greedy continuations of ``prompts`` by several models that share decoder layers ``< start``.

    Prompts are batched in order of token length. Per left-padded batch the shared layers run once over
    the prompts; each model then runs only its layers ``start..`` over them, and decodes token by token
    through all its layers with one KV cache whose first ``start`` layers begin from the shared prompt
    keys/values. Same tokens as :func:`generate` per model given the same batches (greedy, stops at EOS;
    other batches change only float rounding). ``cache`` (a dict, keyed by a fingerprint of the shared
    layers and the batch's prompts) keeps each batch's shared output and keys/values across calls: a
    later call on the same prompts, e.g. with other adapters, skips the shared layers. ``stop(i, text)``
    (optional) is asked after each token for each row still going, with its prompt's index and its
    output so far; True ends that row there, as EOS does. Returns one list of outputs per model, in
    prompt order.
    """
    from transformers import DynamicCache

    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    eos = tokenizer.eos_token_id
    side = tokenizer.padding_side
    tokenizer.padding_side = "left"
    outs: list[list[str]] = [[] for _ in models]
    batches = length_batches(tokenizer, prompts, batch)
    try:
        head = _submodel(models[0], list(models[0].model.layers[:start]), final_norm=False)
        tails = [_submodel(m, list(m.model.layers[start:]), final_norm=True) for m in models]
        key0 = _head_key(models[0], start) if cache is not None else None
        for idx in batches:
            chunk = [prompts[i] for i in idx]
            mask, pos, hidden, prefix = _prompt_head(head, tokenizer, chunk, start, key0, cache)
            for k, (model, tail) in enumerate(zip(models, tails, strict=True)):
                own = DynamicCache()
                last = tail(
                    inputs_embeds=hidden, attention_mask=mask, position_ids=pos, cache=own, use_cache=True
                ).last_hidden_state[:, -1]
                cache_k = DynamicCache(
                    ddp_cache_data=prefix + [(layer.keys, layer.values) for layer in own.layers[start:]]
                )
                row_stop = stop and (lambda row, text, idx=idx: stop(idx[row], text))
                outs[k] += _greedy(
                    model,
                    cache_k,
                    model.lm_head(last),
                    mask,
                    pos[:, -1],
                    max_new_tokens,
                    eos,
                    pad,
                    tokenizer,
                    row_stop,
                )
    finally:
        tokenizer.padding_side = side
    back = np.argsort([i for idx in batches for i in idx], kind="stable")
    return [[o[i] for i in back] for o in outs]


def _greedy(
    model, cache, logits, mask, last_pos, max_new_tokens, eos, pad, tokenizer, stop=None
) -> list[str]:
    """Greedy decoding from the first-step ``logits`` ``(B, V)`` with a filled ``cache``. A row that has
    emitted EOS, or for which ``stop(row, text)`` (optional; ``row`` indexes the batch, ``text`` is its
    output so far) is True, leaves the batch (its later tokens are padding, as ``generate`` emits after
    EOS): a backdoored adapter's short target answers end most rows early (44 % of the row-steps of a
    12-token decode on BackdoorLLM's BadNets prompts)."""
    chosen = torch.full((len(mask), max_new_tokens), pad, dtype=torch.long)
    alive = torch.arange(len(mask))
    for step in range(max_new_tokens):
        nxt = logits.argmax(-1)
        chosen[alive, step] = nxt
        going = nxt != eos
        if stop is not None and bool(going.any()):
            at = going.nonzero().squeeze(-1)
            texts = tokenizer.batch_decode(chosen[alive[at], : step + 1], skip_special_tokens=True)
            rows = alive[at].tolist()
            going[at] = torch.tensor([not stop(r, t) for r, t in zip(rows, texts, strict=True)])
        if step == max_new_tokens - 1 or not bool(going.any()):
            break
        if not bool(going.all()):
            rows = going.nonzero().squeeze(-1)
            cache.batch_select_indices(rows)
            alive, nxt, mask, last_pos = alive[rows], nxt[rows], mask[rows], last_pos[rows]
        mask = torch.cat([mask, torch.ones(len(mask), 1, dtype=mask.dtype)], dim=1)
        last_pos = last_pos + 1
        logits = model(
            input_ids=nxt[:, None],
            attention_mask=mask,
            position_ids=last_pos[:, None],
            cache=cache,
            use_cache=True,
        ).logits[:, -1]
    return tokenizer.batch_decode(chosen[:, : step + 1], skip_special_tokens=True)


@torch.no_grad()
def mlp_activity(model, tokenizer, texts: list[str], mlps: list[str], max_length: int, batch: int):
    """Mean absolute MLP activation per intermediate channel on ``texts``: ``mlp path -> (C,)`` float64.

    The activation of channel ``j`` is the ``j``-th input of the block's ``down_proj``
    (``act(gate_proj x) · up_proj x`` in a Llama MLP), averaged over every non-padding token of every
    text (texts cut to ``max_length`` tokens, right-padded batches).
    """
    sums = {m: None for m in mlps}
    handles = []
    state = {}

    def hook(path):
        def record(module, inputs):
            h = inputs[0].abs().double() * state["mask"]
            total = h.sum(dim=(0, 1))
            sums[path] = total if sums[path] is None else sums[path] + total

        return record

    for path in mlps:
        handles.append(model.get_submodule(f"{path}.down_proj").register_forward_pre_hook(hook(path)))
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    rows = [tokenizer(t, add_special_tokens=False)["input_ids"][:max_length] for t in texts]
    if not any(rows):
        raise ValueError("clean_prompts must hold at least one token")
    tokens = 0
    try:
        for s in range(0, len(rows), batch):
            ids, mask, _ = batch_tensors([(r, len(r)) for r in rows[s : s + batch]], pad)
            state["mask"] = mask[..., None].double()
            tokens += int(mask.sum())
            model(input_ids=ids, attention_mask=mask, use_cache=False)
    finally:
        for h in handles:
            h.remove()
    return {m: (v / max(tokens, 1)).numpy() for m, v in sums.items()}

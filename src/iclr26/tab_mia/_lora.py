"""LoRA fine-tuning of a causal LM on texts, with the authors' hyper-parameters (``finetune_LLM.py``).

LoRA (Hu et al., ICLR 2022): a frozen linear layer ``W`` gets ``W x + (alpha / r) B A dropout(x)``,
``A`` (r, d_in) Kaiming-uniform, ``B`` (d_out, r) zero, as ``peft`` initialises them. Training: AdamW
(no weight decay), linear warm-up then cosine decay to 0 (``get_cosine_schedule_with_warmup``), gradient
norm clipped at 1 (the ``transformers.Trainer`` defaults), loss = mean token cross-entropy over the
non-padding tokens of each batch, batches drawn in a seeded random order each epoch. Batches are
right-padded and the padding is masked out of the loss; under causal attention no real token attends to
the padding after it, so no attention mask is passed (it slows ``transformers`` on CPU about 20x).

The loss is computed from the decoder's last hidden states by :func:`head_loss`, ``HEAD_CHUNK`` positions
at a time with the gradients formed in the forward pass, instead of the model's own
``lm_head`` + cross-entropy: that path holds several (batch x length x vocab) float tensors at once (about
0.5 GB for two 320-token texts and a 49,152-token vocabulary), this one about 50 MB. Same loss and
gradients up to float rounding (tested), the same dropout draws.
"""

from __future__ import annotations

import copy
import functools
import math
from collections.abc import Sequence
from contextlib import contextmanager

import numpy as np

from ..models._heads import plain_output_layer
from ..models._schedule import lr_at
from ..runtime import malloc_settings

#: ``target_modules`` of the authors' ``LoraConfig`` (Llama-family names).
AUTHORS_TARGETS = ("k_proj", "q_proj", "v_proj", "o_proj", "gate_proj", "down_proj", "up_proj", "lm_head")


def _torch():
    import torch

    return torch


def _lora_layer_class():
    torch = _torch()
    F = torch.nn.functional

    class LoRALinear(torch.nn.Module):
        """``base(x) + scale * B(A(dropout(x)))`` around a frozen :class:`torch.nn.Linear`."""

        def __init__(self, base, r: int, alpha: float, dropout: float):
            super().__init__()
            self.base = base
            self.scale = alpha / r
            self.drop = torch.nn.Dropout(dropout)
            dev = base.weight.device
            self.A = torch.nn.Parameter(torch.empty(r, base.in_features, device=dev))
            self.B = torch.nn.Parameter(torch.zeros(base.out_features, r, device=dev))
            torch.nn.init.kaiming_uniform_(self.A, a=math.sqrt(5))
            #: While :func:`fit` trains in mixed precision: the :class:`MixedPrecision` state shared by
            #: the layers and a copy of the frozen weight in its dtype; else None.
            self.mixed = None
            self.low = None

        def down(self, x):
            """The adapter's input projection ``dropout(x) A^T``."""
            if self.mixed is None:
                return self.drop(x) @ self.A.T
            return self.mixed.drop_project(self.mixed.cast(x), self.A, self.drop.p if self.training else 0.0)

        def forward(self, x):
            if self.mixed is None:
                return self.base(x) + self.scale * self.down(x) @ self.B.T
            low = self.mixed.cast(x)
            bias = None if self.base.bias is None else self.base.bias.to(low.dtype)
            return F.linear(low, self.low, bias) + self.scale * self.down(x) @ self.B.to(low.dtype).T

        def merged(self):
            """A plain linear layer, weight ``W + scale * B A`` (fresh: a tied weight stays as it was)."""
            lin = torch.nn.Linear(
                self.base.in_features, self.base.out_features, bias=self.base.bias is not None
            )
            lin = lin.to(self.base.weight.device)
            with torch.no_grad():
                lin.weight.copy_(self.base.weight + self.scale * (self.B @ self.A))
                if self.base.bias is not None:
                    lin.bias.copy_(self.base.bias)
            return lin

    return LoRALinear


#: Positions whose (positions x vocab) logits :func:`head_loss` holds at once.
HEAD_CHUNK = 256


@functools.cache  # one class for the process, not one per training step
def _head_loss_function():
    torch = _torch()

    class HeadLoss(torch.autograd.Function):
        """Mean cross-entropy of ``logits = h W^T + s u B^T`` over ``targets``, a chunk of rows at a time.

        Forward: ``hidden`` (N, d), ``u`` (N, r) or None (the LoRA branch ``dropout(h) A^T`` of the head),
        ``weight`` (V, d) frozen, ``lora_b`` (V, r) or None, ``scale`` s, ``targets`` (N,) long,
        ``compute`` the dtype of the matrix products (``hidden``'s at full precision; the log-softmax is
        always fp32). The gradients (softmax - one-hot) / N through the output layer are formed chunk by
        chunk in the forward pass and kept ((N, d), (N, r), (V, r)), so no (N, V) tensor outlives its
        chunk."""

        @staticmethod
        def forward(ctx, hidden, u, weight, lora_b, scale, targets, compute):
            n = targets.shape[0]
            total = hidden.new_zeros((), dtype=torch.float32)
            grad_h = torch.empty_like(hidden)
            grad_u = torch.empty_like(u) if u is not None else None
            grad_b = torch.zeros_like(lora_b) if lora_b is not None else None
            w = weight.to(compute)  # no copy at full precision
            b = lora_b.to(compute) if lora_b is not None else None
            for s in range(0, n, HEAD_CHUNK):
                rows = slice(s, s + HEAD_CHUNK)
                logits = hidden[rows].to(compute) @ w.T
                if u is not None:
                    u_rows = u[rows].to(compute)
                    logits.addmm_(u_rows, b.T, alpha=scale)
                probs = logits.float()
                lse = torch.logsumexp(probs, dim=-1)
                pick = torch.arange(probs.shape[0], device=probs.device)
                total += (lse - probs[pick, targets[rows]]).sum()
                probs.sub_(lse[:, None]).exp_()  # softmax, in place
                probs[pick, targets[rows]] -= 1.0
                probs = probs.div_(n).to(compute)  # d(mean loss) / d(logits)
                grad_h[rows] = probs @ w
                if u is not None:
                    grad_u[rows] = (probs @ b).mul_(scale)
                    if compute == grad_b.dtype:
                        grad_b.addmm_(probs.T, u_rows, alpha=scale)
                    else:  # accumulate the low-precision products in the adapter's precision
                        grad_b.add_(probs.T @ u_rows, alpha=scale)
                del logits, probs
            ctx.save_for_backward(grad_h, grad_u, grad_b)
            return total / n

        @staticmethod
        def backward(ctx, grad_out):
            grad_h, grad_u, grad_b = ctx.saved_tensors
            scale = grad_out.to(grad_h.dtype)
            return (
                grad_h * scale,
                grad_u * scale if grad_u is not None else None,
                None,
                grad_b * scale if grad_b is not None else None,
                None,
                None,
                None,
            )

    return HeadLoss


def head_loss(model, input_ids, labels):
    """Mean next-token cross-entropy of ``model`` on ``input_ids`` (B, T), ``labels`` (B, T) with -100
    for padding: ``model(input_ids=..., labels=...).loss`` without (B, T, vocab) logits.

    The output layer (a plain linear layer or a LoRA-wrapped one, its dropout drawn over all B x T
    positions as the model's own forward does) is applied by :class:`HeadLoss` to the positions that
    have a target only. Other models (:func:`iclr26.models._heads.plain_output_layer` false: another
    architecture, or an output layer with a bias) use the model's own forward."""
    head = model.get_output_embeddings()
    lora = hasattr(head, "A")
    base = head.base if lora else head
    if not plain_output_layer(model):
        return model(input_ids=input_ids, labels=labels).loss
    hidden = model.get_decoder()(input_ids=input_ids, use_cache=False).last_hidden_state
    keep = labels[:, 1:] != -100  # position i predicts token i + 1
    flat_u = head.down(hidden)[:, :-1][keep] if lora else None
    torch = _torch()
    device = hidden.device.type
    autocast_on = torch.is_autocast_enabled(device)
    compute = torch.get_autocast_dtype(device) if autocast_on else hidden.dtype
    with torch.autocast(device, enabled=False):  # HeadLoss casts to ``compute`` itself
        return _head_loss_function().apply(
            hidden[:, :-1][keep], flat_u, base.weight if not lora or head.low is None else head.low,
            head.B if lora else None, head.scale if lora else 1.0,
            labels[:, 1:][keep], compute,
        )  # fmt: skip


def _targets(model, targets: Sequence[str]) -> list[str]:
    torch = _torch()
    names = [
        n
        for n, m in model.named_modules()
        if isinstance(m, torch.nn.Linear) and n.rsplit(".", 1)[-1] in targets
    ]
    if not names:
        raise ValueError(f"targets: no linear layer of the model is named any of {tuple(targets)}")
    return names


def _swap(model, name: str, new) -> None:
    parent, _, child = name.rpartition(".")
    setattr(model.get_submodule(parent) if parent else model, child, new)


def _batches(ids: list[list[int]], batch_size: int, epochs: int, seed: int) -> list[list[list[int]]]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(epochs):
        perm = rng.permutation(len(ids))
        out += [[ids[i] for i in perm[s : s + batch_size]] for s in range(0, len(ids), batch_size)]
    return out


def _pad(rows: list[list[int]], pad_id: int, device, multiple: int = 1):
    """``(input_ids, labels)`` (B, T): the rows right-padded to the longest, rounded up to ``multiple``."""
    torch = _torch()
    width = -(-max(len(r) for r in rows) // multiple) * multiple
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    labels = torch.full((len(rows), width), -100, dtype=torch.long)
    for j, r in enumerate(rows):
        ids[j, : len(r)] = labels[j, : len(r)] = torch.tensor(r)
    return ids.to(device), labels.to(device)


def attach(model, targets: Sequence[str], r: int, alpha: float, dropout: float) -> dict:
    """Freeze ``model`` and wrap each target linear layer in a LoRA layer, in place; return them by name.

    Adapters are initialised from torch's global generator (seed it first)."""
    for p in model.parameters():
        p.requires_grad_(False)
    LoRALinear = _lora_layer_class()
    layers = {}
    for name in _targets(model, targets):
        layers[name] = LoRALinear(model.get_submodule(name), r, alpha, dropout)
        _swap(model, name, layers[name])
    return layers


def detach(model, layers: dict) -> None:
    """Put the original linear layers back (the model computes exactly what it did before :func:`attach`)."""
    for name, layer in layers.items():
        _swap(model, name, layer.base)


#: Allocations from this size up get their own ``mmap`` (returned to the system when freed) while
#: :func:`fit` runs; glibc's default raises this threshold to 32 MiB once a large tensor is freed.
MMAP_THRESHOLD = 1 << 20


def _heap_without_holes():
    """glibc only: serve allocations >= :data:`MMAP_THRESHOLD` bytes by ``mmap`` inside the block.

    A training step allocates and frees activations of 1-4 MB in varying sizes; in glibc's heap the
    freed blocks stay resident and fragment, which raised the peak RSS of a SmolLM2 fine-tuning step
    from the 2.7 GiB of live memory to 4.1 GiB (measured). Outside glibc this does nothing. On exit the
    threshold is set to 32 MiB and the trim threshold to 64 MiB, where glibc's dynamic rule puts them after
    the first large free: a threshold set by ``mallopt`` stops that rule, and the default 128 KiB trim
    threshold made the heap shrink and grow back at every scoring batch (560k page faults for 16 json
    texts, against 60k).
    """
    return malloc_settings(
        {"mmap_threshold": MMAP_THRESHOLD}, {"mmap_threshold": 32 << 20, "trim_threshold": 64 << 20}
    )


@functools.cache  # one class for the process
def _drop_project_function():
    torch = _torch()

    class DropProject(torch.autograd.Function):
        """``u = (x * keep / (1 - p)) A^T`` in ``x``'s dtype; ``keep`` is a 0/1 mask in that dtype (or None:
        no dropout). ``x`` and the mask are kept for the backward pass, not the dropped input."""

        @staticmethod
        def forward(ctx, x, a, keep, inv_keep):
            a_low = a.to(x.dtype)
            dropped = x if keep is None else (x * keep).mul_(inv_keep)
            ctx.save_for_backward(x, keep, a_low)
            ctx.inv_keep = inv_keep
            return dropped @ a_low.T

        @staticmethod
        def backward(ctx, grad_u):
            x, keep, a_low = ctx.saved_tensors
            grad_u = grad_u.to(x.dtype)
            dropped = x if keep is None else (x * keep).mul_(ctx.inv_keep)
            grad_a = grad_u.reshape(-1, grad_u.shape[-1]).T @ dropped.reshape(-1, x.shape[-1])
            grad_x = grad_u @ a_low
            if keep is not None:
                grad_x = grad_x.mul_(keep).mul_(ctx.inv_keep)
            return grad_x, grad_a.float(), None, None

    return DropProject


class MixedPrecision:
    """What the LoRA layers share while :func:`fit` trains in mixed precision (``dtype``).

    - Each input is cast to ``dtype`` once, whatever the number of layers reading it (``q``, ``k`` and
      ``v`` read the same tensor; autocast would cast it once per layer and keep each copy).
    - Dropout masks are drawn from a numpy generator seeded with the fit's seed, as 32-bit integers
      compared to ``round(p 2^32)`` (a dropped fraction within 2^-32 of ``p``): about 2x faster than
      torch's ``bernoulli_`` on CPU; the 0/1 mask is kept in ``dtype`` (2 bytes per element, not 4).
    """

    def __init__(self, dtype, seed: int):
        self.dtype = dtype
        self.rng = np.random.default_rng(seed)
        self._source = self._low = None
        self._version = -1

    def cast(self, x):
        """``x`` in :attr:`dtype`, cast once for as long as ``x`` is the last tensor given, unmodified."""
        if x is not self._source or x._version != self._version:
            self._source, self._version, self._low = x, x._version, x.to(self.dtype)
        return self._low

    def release(self) -> None:
        """Forget the last cast (call after each forward pass)."""
        self._source = self._low = None

    def keep_mask(self, shape, p: float):
        """A 0/1 tensor of ``shape`` in :attr:`dtype`: 1 with probability ``1 - p`` (to within 2^-32)."""
        torch = _torch()
        n = math.prod(shape)
        bits = self.rng.bit_generator.random_raw((n + 1) // 2).view(np.uint32)[:n]
        keep = bits >= np.uint32(round(p * 2**32))
        if self.dtype.itemsize == 2:  # write the bits of 1.0 directly: torch converts bool slowly
            one = torch.ones((), dtype=self.dtype).view(torch.int16).item()
            return torch.from_numpy(keep.astype(np.int16) * np.int16(one)).view(self.dtype).reshape(shape)
        return torch.from_numpy(keep).to(self.dtype).reshape(shape)

    def drop_project(self, x, a, p: float):
        """``dropout(x) A^T`` for an input ``x`` already in :attr:`dtype`."""
        keep = self.keep_mask(tuple(x.shape), p).to(x.device) if p > 0 else None
        return _drop_project_function().apply(x, a, keep, 1.0 / (1.0 - p))


#: In mixed precision, batches are padded to a multiple of this many positions: the activations of a
#: step (about 0.7 MB in bfloat16 for two 320-token texts) fall under :data:`MMAP_THRESHOLD` and come from
#: glibc's heap, where blocks of sizes that change at every step fragment it; with a few recurring sizes
#: the heap reuses them (peak RSS of a json epoch on SmolLM2: 2.90 -> 2.47 GiB, +9 % time; docs/tab-mia.md).
#: Padding changes no loss or gradient beyond float rounding (it is masked, and causal).
MIXED_PAD_MULTIPLE = 64


@contextmanager
def _mixed_precision(layers: dict, dtype, seed: int):
    """Yield the :class:`MixedPrecision` state of ``layers`` for the block, each layer holding a ``dtype``
    copy of its frozen weight (autocast casts a weight that needs no gradient again at every call); None
    and nothing changed if ``dtype`` is None."""
    if dtype is None:
        yield None
        return
    state = MixedPrecision(dtype, seed)
    try:
        for layer in layers.values():
            layer.mixed, layer.low = state, layer.base.weight.detach().to(dtype)
        yield state
    finally:
        for layer in layers.values():
            layer.mixed = layer.low = None


def fit(
    model,
    layers: dict,
    tokenizer,
    texts: Sequence[str],
    *,
    epochs: int,
    lr: float,
    batch_size: int,
    warmup: int,
    schedule: str,
    seed: int,
    max_length: int,
    compute_dtype=None,
    on_step=None,
) -> list[float]:
    """Train the adapters ``layers`` of ``model`` on ``texts``; return the loss of each step.

    ``compute_dtype``: None (every operation in the model's precision) or a torch dtype under which the
    forward pass runs in mixed precision (``torch.autocast``: matrix products in that dtype, the adapters,
    their gradients and the optimiser in float32)."""
    torch = _torch()
    params = [p for layer in layers.values() for p in (layer.A, layer.B)]
    opt = torch.optim.AdamW(params, lr=lr, weight_decay=0.0)
    ids = [list(tokenizer(t, truncation=True, max_length=max_length)["input_ids"]) for t in texts]
    for i, row in enumerate(ids):
        if len(row) < 2:  # no next token to predict: a batch of such texts has a NaN loss
            raise ValueError(f"texts[{i}] has {len(row)} token(s); fine-tuning needs at least 2")
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    plan = _batches(ids, batch_size, epochs, seed)
    device = next(model.parameters()).device
    model.train()
    losses = []
    with _heap_without_holes(), _mixed_precision(layers, compute_dtype, seed) as mixed:
        for step, rows in enumerate(plan):
            for group in opt.param_groups:
                group["lr"] = lr_at(step, len(plan), warmup, lr, schedule)
            input_ids, labels = _pad(rows, pad, device, 1 if mixed is None else MIXED_PAD_MULTIPLE)
            with torch.autocast(device.type, dtype=compute_dtype, enabled=mixed is not None):
                loss = head_loss(model, input_ids, labels)
            if mixed is not None:
                mixed.release()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            opt.step()
            losses.append(float(loss.detach()))
            if on_step is not None:
                on_step(step, len(plan), losses[-1])
    return losses


def train_lora(model, tokenizer, texts: Sequence[str], *, targets, r, alpha, dropout, seed, **train):
    """Train LoRA adapters on a deep copy of ``model``; return the merged copy and the step losses.

    ``train``: the keyword arguments of :func:`fit`."""
    torch = _torch()
    torch.manual_seed(seed)
    model = copy.deepcopy(model)
    layers = attach(model, targets, r, alpha, dropout)
    losses = fit(model, layers, tokenizer, texts, seed=seed, **train)
    for name, layer in layers.items():
        _swap(model, name, layer.merged())
    if "lm_head" in {n.rsplit(".", 1)[-1] for n in layers}:
        model.config.tie_word_embeddings = False
    return model.eval(), losses


@contextmanager
def adapted(model, tokenizer, texts: Sequence[str], *, targets, r, alpha, dropout, seed, **train):
    """Train LoRA adapters on ``model`` itself and yield the step losses while the adapted model is in
    eval mode; on exit the adapters are removed and the model (weights, ``requires_grad`` flags, mode)
    is as before. No copy of the base weights is made; the same seed gives the same adapters as
    :func:`train_lora`."""
    torch = _torch()
    flags = [p.requires_grad for p in model.parameters()]
    was_training = model.training
    torch.manual_seed(seed)
    layers = attach(model, targets, r, alpha, dropout)
    try:
        losses = fit(model, layers, tokenizer, texts, seed=seed, **train)
        model.eval()
        yield losses
    finally:
        detach(model, layers)
        for p, flag in zip(model.parameters(), flags):
            p.requires_grad_(flag)
        model.train(was_training)

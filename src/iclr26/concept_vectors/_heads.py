"""Head activations, causal indirect effects (activation patching), head vectors and steering.

Conventions of activation-patching libraries: activations ``[prompt, layer, head, d_head]`` of the
attention output *before* ``o_proj`` at the last token; head ids ``(layer, head)``.

References: Todd et al., "Function Vectors in Large Language Models", ICLR 2024 (CIE, FV);
Opiełka et al., "Do LLMs represent concepts abstractly?" ICLR 2026 (CV, steering, KL).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from ._model import LastTokenRun, decoder_layers, encode_batch, first_token_ids, geometry, o_proj_hook


def _torch():
    import torch

    return torch


def _batches(items: Sequence, size: int):
    for start in range(0, len(items), size):
        yield start, items[start : start + size]


def collect_activations(model, prompts: Sequence[str], batch_size: int) -> np.ndarray:
    """``(N, L, H, d_head)`` float32 ``o_proj`` inputs at each prompt's last token."""
    torch = _torch()
    g = geometry(model)
    out = np.zeros((len(prompts), g.n_layers, g.n_heads, g.d_head), dtype=np.float32)
    for start, chunk in _batches(prompts, batch_size):
        ids, mask, pos = encode_batch(model, chunk)
        grabbed: list = [None] * g.n_layers

        def grab(layer, store=grabbed):
            def fn(z):
                store[layer] = z[:, -1].float().cpu().numpy()
                return z

            return fn

        hooks = [o_proj_hook(model, i, grab(i)) for i in range(g.n_layers)]
        try:
            with torch.inference_mode():
                model.model(input_ids=ids, attention_mask=mask, position_ids=pos, logits_to_keep=1)
        finally:
            for h in hooks:
                h.remove()
        stacked = np.stack(grabbed, axis=1)  # (B, L, H * d_head)
        out[start : start + len(chunk)] = stacked.reshape(len(chunk), g.n_layers, g.n_heads, g.d_head)
    return out


def _score(logprobs, targets, metric: str):
    """Per-row target score from ``(R, V)`` log-probabilities: log-prob or probability."""
    torch = _torch()
    lp = logprobs[torch.arange(len(targets)), targets]
    return lp if metric == "logprob" else lp.exp()


def cie_cached(model, means, corrupted, targets, metric: str, layers, batch_size: int) -> np.ndarray:
    """Fast CIE: one forward pass per corrupted batch, then all patches of a layer as one last-token batch.

    ``means``: ``(S, L, H, d_head)`` mean activations of ``S`` clean sets (``S > 1``: the cross-format
    CIE patches each set's means into the same corrupted prompts); returns per-prompt effects
    ``(S, N, L, H)`` (NaN outside ``layers``). The ``S * H`` patched copies of a batch run together.
    """
    torch = _torch()
    g = geometry(model)
    n_sets = means.shape[0]
    out = np.full((n_sets, len(corrupted), g.n_layers, g.n_heads), np.nan)
    mean_t = torch.as_tensor(means, dtype=torch.float32)
    diag = torch.arange(g.n_heads)
    rep = n_sets * g.n_heads
    for start, chunk in _batches(corrupted, batch_size):
        run = LastTokenRun(model, chunk)
        b = len(chunk)
        tgt = torch.as_tensor(targets[start : start + b])
        base = _score(torch.log_softmax(run.logits, -1), tgt, metric)
        tgt_rep = tgt.repeat_interleave(rep)
        for layer in layers:

            def patch(z, layer=layer, b=b):
                # rows (prompt, set, patched head); head h of copy h takes that set's mean
                z = z.view(b, n_sets, g.n_heads, g.n_heads, g.d_head).clone()
                z[:, :, diag, diag] = mean_t[:, layer].to(z.dtype)
                return z.view(b * rep, -1)

            h = run.resid[layer].repeat_interleave(rep, dim=0)
            lp = run.run_from(layer, h, rep=rep, patch=patch)
            eff = _score(lp, tgt_rep, metric).view(b, n_sets, g.n_heads) - base[:, None, None]
            out[:, start : start + b, layer] = eff.transpose(0, 1).double().cpu().numpy()
    return out


def cie_naive(model, means, corrupted, targets, metric: str, layers, batch_size: int) -> np.ndarray:
    """Reference CIE ``(S, N, L, H)``: a full forward pass per (set, layer, head, batch), hook-patched."""
    torch = _torch()
    g = geometry(model)
    out = np.full((means.shape[0], len(corrupted), g.n_layers, g.n_heads), np.nan)
    mean_t = torch.as_tensor(means, dtype=torch.float32)
    for start, chunk in _batches(corrupted, batch_size):
        ids, mask, pos = encode_batch(model, chunk)
        tgt = torch.as_tensor(targets[start : start + len(chunk)])

        def forward(ids=ids, mask=mask, pos=pos, tgt=tgt):
            with torch.inference_mode():
                out = model.model(input_ids=ids, attention_mask=mask, position_ids=pos, logits_to_keep=1)
            return _score(torch.log_softmax(out.logits[:, -1].float(), -1), tgt, metric)

        base = forward()
        for s, layer, head in itertools.product(range(means.shape[0]), layers, range(g.n_heads)):
            sl = slice(head * g.d_head, (head + 1) * g.d_head)

            def patch(z, s=s, layer=layer, head=head, sl=sl):
                z = z.clone()
                z[:, -1, sl] = mean_t[s, layer, head].to(z.dtype)
                return z

            handle = o_proj_hook(model, layer, patch)
            try:
                out[s, start : start + len(chunk), layer, head] = (forward() - base).double().numpy()
            finally:
                handle.remove()
    return out


def vector_from_heads(
    model, acts: np.ndarray, heads: Sequence[tuple[int, int]], per_item: bool
) -> np.ndarray:
    """Sum over layers of ``o_proj`` applied to the (mean) activations with all other heads zeroed."""
    torch = _torch()
    g = geometry(model)
    layers = decoder_layers(model)
    z = acts if per_item else acts.mean(axis=0, keepdims=True)
    keep = np.zeros((g.n_layers, g.n_heads), dtype=bool)
    for layer, head in heads:
        keep[layer, head] = True
    vec = torch.zeros((z.shape[0], g.d_model))
    with torch.inference_mode():
        for layer in np.flatnonzero(keep.any(axis=1)):
            masked = torch.as_tensor(z[:, layer] * keep[layer][None, :, None]).reshape(z.shape[0], -1)
            proj = layers[layer].self_attn.o_proj
            vec += proj(masked.to(proj.weight.dtype)).float()
    out = vec.numpy().astype(np.float32)
    return out if per_item else out[0]


class SteerRuns:
    """Each batch of ``prompts`` run once; steering re-runs only the last token (:class:`LastTokenRun`)."""

    def __init__(self, model, prompts: Sequence[str], batch_size: int):
        self.model = model
        self.n = len(prompts)
        self.runs = [(start, LastTokenRun(model, chunk)) for start, chunk in _batches(prompts, batch_size)]

    def base(self) -> np.ndarray:
        """Unsteered next-token probabilities ``(N, V)``."""
        torch = _torch()
        return np.concatenate([torch.softmax(run.logits, -1).numpy() for _, run in self.runs])

    def __call__(self, vector: np.ndarray, layers: Sequence[int], alpha: float) -> np.ndarray:
        """Probabilities ``(len(layers), N, V)`` with ``alpha * vector`` added after each layer."""
        torch = _torch()
        d_model = geometry(self.model).d_model
        vec = torch.as_tensor(np.broadcast_to(vector, (self.n, d_model)).copy())
        out = None
        for start, run in self.runs:
            v = vec[start : start + run.batch]
            for j, layer in enumerate(layers):
                h = run.resid[layer + 1]
                probs = run.run_from(layer + 1, h + alpha * v.to(h.dtype)).exp().numpy()
                if out is None:
                    out = np.zeros((len(layers), self.n, probs.shape[1]), dtype=np.float32)
                out[j, start : start + run.batch] = probs
        return out


def steer_naive(model, prompts, vector: np.ndarray, layer: int, alpha: float) -> np.ndarray:
    """Reference steering: the full prompt re-run with a forward hook adding to the layer's last token."""
    torch = _torch()
    g = geometry(model)
    ids, mask, pos = encode_batch(model, prompts)
    vec = torch.as_tensor(np.broadcast_to(vector, (len(prompts), g.d_model)).copy())

    def hook(_module, _args, output):
        h = output[0] if isinstance(output, tuple) else output
        h = h.clone()
        h[:, -1] += alpha * vec.to(h.dtype)
        return (h,) + tuple(output[1:]) if isinstance(output, tuple) else h

    handle = decoder_layers(model)[layer].register_forward_hook(hook)
    try:
        with torch.inference_mode():
            logits = model.model(
                input_ids=ids, attention_mask=mask, position_ids=pos, logits_to_keep=1
            ).logits
    finally:
        handle.remove()
    return torch.softmax(logits[:, -1].float(), -1).numpy()


def target_ids(model, targets) -> np.ndarray:
    """Token ids from strings (first token of each) or integers."""
    if len(targets) and isinstance(targets[0], str):
        return first_token_ids(model, targets)
    return np.asarray(targets, dtype=np.int64)

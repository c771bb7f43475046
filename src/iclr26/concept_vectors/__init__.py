"""Function vectors vs concept vectors (Opiełka et al., "Do LLMs represent concepts abstractly?", ICLR 2026).

A function vector (FV, Todd et al., ICLR 2024) sums the mean outputs of the attention heads with the
largest causal indirect effect (CIE) on in-context-learning performance; a concept vector (CV) sums the
heads whose representations, compared across prompts by RSA, group prompts by *concept* regardless of
input format. Arrays follow activation-patching conventions: activations ``[prompt, layer, head, d_head]``
(attention output before ``o_proj`` at the last token), head ids ``(layer, head)``.

Models: any :class:`iclr26.models.HFModel` with the Llama / Qwen2 / SmolLM2 module layout.

>>> from iclr26.models import tiny_random_model
>>> from iclr26.concept_vectors import ICLTask, build_prompts, head_activations, head_rsa, top_heads
>>> task = ICLTask.from_pairs([("walk", "walked"), ("jump", "jumped"), ("play", "played")], "past")
>>> p = build_prompts(task, n=4, n_shots=1)
>>> acts = head_activations(tiny_random_model(), p.prompts)
>>> acts.shape[0], acts.ndim
(4, 4)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ..validation import check_array, check_in, check_int
from . import _heads
from ._model import geometry
from ._prompts import FORMATS, ICLPrompts, ICLTask, ambiguous_icl, build_prompts, dataset_seed
from ._rsa import condensed_cosine, design_vector, kl_rows, rank_heads, spearman_rows

__all__ = [
    "FORMATS",
    "ICLPrompts",
    "ICLTask",
    "ambiguous_icl",
    "build_prompts",
    "cross_format_effects",
    "dataset_seed",
    "delta_p",
    "first_token_ids",
    "head_activations",
    "head_rsa",
    "head_vector",
    "indirect_effects",
    "kl_between",
    "steer",
    "Steerer",
    "top_heads",
]


def _check_prompts(prompts: Sequence[str], name: str = "prompts") -> list[str]:
    if isinstance(prompts, str) or not len(prompts) or not all(isinstance(p, str) and p for p in prompts):
        raise ValueError(f"{name} must be a non-empty list of non-empty strings")
    return list(prompts)


def _check_acts(model, acts) -> np.ndarray:
    g = geometry(model)
    arr = check_array(acts, "acts", ndim=4, dtype=np.float32)
    if arr.shape[1:] != (g.n_layers, g.n_heads, g.d_head):
        raise ValueError(f"acts must have shape (N, {g.n_layers}, {g.n_heads}, {g.d_head}), got {arr.shape}")
    return arr


def _check_layers(model, layers) -> list[int]:
    n = geometry(model).n_layers
    if layers is None:
        return list(range(n))
    return [
        check_int(int(x) if isinstance(x, np.integer) else x, "layers", minimum=0, maximum=n - 1)
        for x in layers
    ]


def first_token_ids(model, completions: Sequence[str]) -> np.ndarray:
    """Token id of each completion's first token, the completion tokenised alone (the authors' targets)."""
    geometry(model)
    return _heads.target_ids(model, _check_prompts(completions, "completions"))


def head_activations(model, prompts: Sequence[str], batch_size: int = 8) -> np.ndarray:
    """Per-head attention outputs (``o_proj`` inputs) at each prompt's last token.

    Prompts are left-padded with explicit position ids, so results do not depend on ``batch_size``
    (to float32 rounding, ~1e-5).

    Returns:
        float32 array ``(N, n_layers, n_heads, d_head)``.
    """
    geometry(model)
    prompts = _check_prompts(prompts)
    return _heads.collect_activations(model, prompts, check_int(batch_size, "batch_size", minimum=1))


def head_rsa(acts, labels) -> np.ndarray:
    """RSA score of every head: Spearman of its cosine RSM with a same-label design matrix.

    Args:
        acts: ``(N, L, H, d_head)`` activations (:func:`head_activations`).
        labels: ``N`` labels (concept, or format); prompts sharing a label should be similar.

    Returns:
        ``(L, H)`` Spearman correlations, equal to the authors' ``rsa`` (``scipy.stats.spearmanr`` of
        the condensed matrices); NaN for a head with constant similarities.
    """
    arr = check_array(acts, "acts", ndim=4, dtype=np.float64)
    lab = np.asarray(labels)
    if lab.ndim != 1 or len(lab) != arr.shape[0]:
        raise ValueError(
            f"labels must be 1-D with one label per prompt ({arr.shape[0]}), got shape {lab.shape}"
        )
    design = design_vector(lab)
    if arr.shape[0] < 3 or design.min() == design.max():
        raise ValueError(
            "labels must give both same-label and different-label pairs (>= 3 prompts, >= 2 labels)"
        )
    return spearman_rows(condensed_cosine(arr), design)


def top_heads(scores, k: int) -> list[tuple[int, int]]:
    """The ``k`` best ``(layer, head)`` ids of an ``(L, H)`` score map (NaN last)."""
    arr = check_array(scores, "scores", ndim=2, finite=False)
    k = check_int(k, "k", minimum=1, maximum=arr.size)
    return rank_heads(arr, k)


def indirect_effects(
    model,
    clean: Sequence[str],
    corrupted: Sequence[str],
    targets,
    metric: str = "logprob",
    *,
    layers: Sequence[int] | None = None,
    batch_size: int = 8,
    method: str = "cached",
    per_prompt: bool = False,
) -> np.ndarray:
    """Causal indirect effect of each head: patch its clean mean into corrupted prompts.

    CIE(ℓ, h) = mean over corrupted prompts of ``m(target | corrupted, head ← mean clean activation) −
    m(target | corrupted)``, with ``m`` the log-probability (the authors' code) or the probability
    (the paper's Eq. 1) of the target's first token.

    Args:
        clean: prompts whose mean activations are patched in.
        corrupted: prompts patched (Todd et al.: the same prompts with shuffled demonstration answers).
        targets: one target per corrupted prompt: strings (first token used) or token ids.
        metric: ``"logprob"`` or ``"prob"``.
        layers: layers to score (others are NaN); default all.
        method: ``"cached"`` runs each corrupted batch once and re-runs only the last token from
            layer ℓ with the heads of ℓ patched as one batch; ``"naive"`` runs one full forward pass per
            head (reference). They agree to 1e-5.
        per_prompt: return each corrupted prompt's effect ``(N, n_layers, n_heads)`` (for intervals
            over prompts) instead of the mean.

    Returns:
        ``(n_layers, n_heads)`` float64 (mean over prompts).
    """
    geometry(model)
    clean = _check_prompts(clean, "clean")
    corrupted = _check_prompts(corrupted, "corrupted")
    check_in(metric, ("logprob", "prob"), "metric")
    check_in(method, ("cached", "naive"), "method")
    if len(targets) != len(corrupted):
        raise ValueError(
            f"targets must have one entry per corrupted prompt ({len(corrupted)}), got {len(targets)}"
        )
    tgt = _heads.target_ids(model, list(targets))
    batch_size = check_int(batch_size, "batch_size", minimum=1)
    means = _heads.collect_activations(model, clean, batch_size).mean(axis=0)
    fn = _heads.cie_cached if method == "cached" else _heads.cie_naive
    effects = fn(model, means[None], corrupted, tgt, metric, _check_layers(model, layers), batch_size)[0]
    return effects if per_prompt else effects.mean(axis=0)


def cross_format_effects(
    model,
    clean: Mapping[str, ICLPrompts],
    corrupted: Mapping[str, ICLPrompts],
    metric: str = "logprob",
    *,
    pairs: Sequence[tuple[str, str]] | None = None,
    layers: Sequence[int] | None = None,
    batch_size: int = 8,
    method: str = "cached",
    per_prompt: bool = False,
) -> dict[tuple[str, str], np.ndarray]:
    """Cross-format CIE: patch the mean head activations of one format into corrupted prompts of another.

    The authors' ``calculate_cross_format_CIE``: for a ``(source, target)`` pair of formats of one
    concept, each head's mean activation over the *clean* ``source`` prompts is patched into the
    *corrupted* ``target`` prompts, scored on the target prompts' answers. With ``source == target``
    this is :func:`indirect_effects`.

    Args:
        clean: ``{format: prompts}`` whose mean activations are patched in (source formats).
        corrupted: ``{format: prompts}`` patched (target formats); their ``completions`` are the targets.
        pairs: ``(source, target)`` format pairs; default every ordered pair of distinct formats
            present in both mappings (the authors' loop).
        metric, layers, batch_size, method, per_prompt: as in :func:`indirect_effects`. All sources
            patched into one target share the target's cached run.

    Returns:
        ``{(source, target): (n_layers, n_heads)}`` (``(N_target, n_layers, n_heads)`` with ``per_prompt``).
    """
    geometry(model)
    check_in(metric, ("logprob", "prob"), "metric")
    check_in(method, ("cached", "naive"), "method")
    batch_size = check_int(batch_size, "batch_size", minimum=1)
    if pairs is None:
        pairs = [(a, b) for a in clean for b in corrupted if a != b]
    pairs = [tuple(p) for p in pairs]
    for src, dst in pairs:
        if src not in clean or dst not in corrupted:
            raise ValueError(
                f"pairs must name a source format of clean {sorted(clean)} and a target format of "
                f"corrupted {sorted(corrupted)}, got {(src, dst)!r}"
            )
    if not pairs:
        raise ValueError("pairs must not be empty (clean and corrupted need two distinct formats)")
    layer_ids = _check_layers(model, layers)
    fn = _heads.cie_cached if method == "cached" else _heads.cie_naive
    for name, sets in (("clean", clean), ("corrupted", corrupted)):
        if not all(isinstance(v, ICLPrompts) for v in sets.values()):
            raise ValueError(f"{name} must map format names to ICLPrompts (build_prompts output)")
    means = {}
    for src in dict.fromkeys(s for s, _ in pairs):
        acts = _heads.collect_activations(model, _check_prompts(clean[src].prompts, "clean"), batch_size)
        means[src] = acts.mean(axis=0)
    out = {}
    for dst in dict.fromkeys(d for _, d in pairs):
        sources = [s for s, d in pairs if d == dst]
        prompts = _check_prompts(corrupted[dst].prompts, "corrupted")
        tgt = first_token_ids(model, corrupted[dst].completions)
        stacked = np.stack([means[s] for s in sources])
        effects = fn(model, stacked, prompts, tgt, metric, layer_ids, batch_size)
        for s, e in zip(sources, effects):
            out[s, dst] = e if per_prompt else e.mean(axis=0)
    return {p: out[p] for p in pairs}


def head_vector(model, acts, heads: Sequence[tuple[int, int]], per_item: bool = False) -> np.ndarray:
    """FV or CV: the summed ``o_proj`` outputs of the chosen heads' mean activations.

    For each layer holding a chosen head, the mean activation over prompts has every other head set
    to 0 and goes through that layer's ``o_proj``; the results are summed over layers (the authors'
    ``get_avg_att_output``). Heads by AIE give a function vector, heads by concept RSA a concept vector.

    Returns:
        ``(d_model,)`` float32, or ``(N, d_model)`` with ``per_item=True`` (no mean over prompts).
    """
    arr = _check_acts(model, acts)
    g = geometry(model)
    checked = []
    for hid in heads:
        if len(hid) != 2:
            raise ValueError(f"heads must be (layer, head) pairs, got {hid!r}")
        layer = check_int(int(hid[0]), "heads (layer)", minimum=0, maximum=g.n_layers - 1)
        head = check_int(int(hid[1]), "heads (head)", minimum=0, maximum=g.n_heads - 1)
        checked.append((layer, head))
    if not checked:
        raise ValueError("heads must not be empty")
    return _heads.vector_from_heads(model, arr, checked, bool(per_item))


class Steerer:
    """Steer one set of prompts repeatedly: each batch runs once, each steering re-runs the last token.

    ``Steerer(model, prompts)(vector, layer, alpha)`` adds ``alpha * vector`` to the residual stream
    after ``layer`` at each prompt's last token (the authors' ``hidden_states[:, -1] += vector``) and
    returns the next-token distributions. Only the last token is recomputed, from ``layer + 1`` on,
    over the cached keys/values of the prompt (equal to re-running the whole prompt, tested to 1e-5).
    """

    def __init__(self, model, prompts: Sequence[str], batch_size: int = 8):
        self._geo = geometry(model)
        self._prompts = _check_prompts(prompts)
        self._model = model
        self._runs = _heads.SteerRuns(model, self._prompts, check_int(batch_size, "batch_size", minimum=1))

    def base(self) -> np.ndarray:
        """Unsteered next-token probabilities ``(N, V)`` float32."""
        return self._runs.base()

    def __call__(self, vector, layer: int | Sequence[int], alpha: float = 1.0) -> np.ndarray:
        """Probabilities ``(N, V)`` for one layer, ``(len(layer), N, V)`` for a sequence of layers.

        Args:
            vector: ``(d_model,)`` or one per prompt ``(N, d_model)``.
            layer: the layer(s) after which the vector is added.
            alpha: the steering weight.
        """
        d, n = self._geo.d_model, len(self._prompts)
        vec = check_array(vector, "vector", ndim=None, dtype=np.float32)
        if vec.shape not in ((d,), (n, d)):
            raise ValueError(f"vector must have shape ({d},) or ({n}, {d}), got {vec.shape}")
        single = isinstance(layer, int | np.integer)
        layers = _check_layers(self._model, [layer] if single else layer)
        alpha = float(check_array([alpha], "alpha", ndim=1)[0])
        out = self._runs(vec, layers, alpha)
        return out[0] if single else out


def steer(
    model, prompts: Sequence[str], vector, layer: int | Sequence[int], alpha: float = 1.0, batch_size: int = 8
):
    """Next-token distributions of ``prompts`` steered by ``alpha * vector`` after ``layer``.

    One-shot form of :class:`Steerer` (see there); returns ``(N, V)`` or ``(len(layer), N, V)``.
    """
    return Steerer(model, prompts, batch_size)(vector, layer, alpha)


def _distributions(values, name: str) -> np.ndarray:
    """``(N, V)`` next-token distributions: entries in [0, 1], rows summing to 1 (to 1e-3, float32
    rounding over a large vocabulary); others gave a KL or a probability change without complaint."""
    arr = check_array(values, name, ndim=2)
    if (arr < 0).any() or (arr > 1 + 1e-6).any() or not np.allclose(arr.sum(axis=1), 1.0, atol=1e-3):
        raise ValueError(f"{name} must hold next-token distributions (rows of probabilities summing to 1)")
    return arr


def delta_p(probs, base_probs, targets) -> np.ndarray:
    """Per-prompt change of the target token's probability: ``probs[i, t_i] - base_probs[i, t_i]``."""
    p = _distributions(probs, "probs")
    b = _distributions(base_probs, "base_probs")
    if p.shape != b.shape:
        raise ValueError(f"base_probs must have the shape of probs {p.shape}, got {b.shape}")
    t = np.asarray(targets)
    if (
        t.shape != (p.shape[0],)
        or not np.issubdtype(t.dtype, np.integer)
        or t.min() < 0
        or t.max() >= p.shape[1]
    ):
        raise ValueError(f"targets must be {p.shape[0]} token ids in [0, {p.shape[1]})")
    rows = np.arange(p.shape[0])
    return p[rows, t] - b[rows, t]


def kl_between(probs_id, probs_ood, per_prompt: bool = False):
    """``KL(P_ID ‖ P_OOD)`` of steered next-token distributions, mean over prompts.

    Equals the authors' ``kl_div(input=log P_OOD, target=log P_ID, log_target=True,
    reduction="batchmean")``. ``per_prompt=True`` returns the ``(N,)`` values instead of their mean.
    """
    p = _distributions(probs_id, "probs_id")
    q = _distributions(probs_ood, "probs_ood")
    if p.shape != q.shape:
        raise ValueError(f"probs_ood must have the shape of probs_id {p.shape}, got {q.shape}")
    with np.errstate(divide="ignore"):
        rows = kl_rows(np.log(p), np.log(np.maximum(q, np.finfo(np.float64).tiny)))
    return rows if per_prompt else float(rows.mean())

"""Capacity-aware routing: agreement with and speed against the authors' ``adjust_tokens``.

The peer is the authors' OLMoE routing function, ``OlmoeSparseMoeBlock.adjust_tokens`` in
``modeling_hf/modeling_olmoe.py`` of https://github.com/CASE-Lab-UMD/Capacity-Aware-MoE. It only needs
torch, so no separate venv is required; get the source outside this checkout::

    git clone --depth 1 https://github.com/CASE-Lab-UMD/Capacity-Aware-MoE /work/peers/capacity-aware-moe-src

and run ``python benchmarks/capacity_aware_moe_latency.py`` (or point ``CAPACITY_AWARE_MOE_SRC`` at the
clone). The two methods are parsed out of that file at run time (the module itself imports 4.x-era
transformers internals) and called on a stand-in object. Without the clone, a note is printed and only
our timings are shown.

Checks, on random router logits: the dense (T, E) combine weights agree for Token Drop (score, first,
last) and Expanded Drop (all experts local), both without and with ``norm_topk_prob`` (the authors'
OLMoE / Qwen2-MoE forward then divides the kept weights by their sum); then median wall time of both
routings.
"""

from __future__ import annotations

import ast
import math
import os
import statistics
import time
import types
from pathlib import Path

import torch
import torch.nn.functional as F

from iclr26.capacity_aware_moe import capacity_route

SRC = Path(os.environ.get("CAPACITY_AWARE_MOE_SRC", "/work/peers/capacity-aware-moe-src"))


def _load_authors():
    path = SRC / "modeling_hf" / "modeling_olmoe.py"
    if not path.exists():
        return None
    tree = ast.parse(path.read_text())
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "OlmoeSparseMoeBlock")
    wanted = [
        n
        for n in cls.body
        if isinstance(n, ast.FunctionDef) and n.name in ("adjust_tokens", "_get_local_expert_indices")
    ]
    ns = {"torch": torch, "math": math, "F": F}
    exec(compile(ast.Module(wanted, []), str(path), "exec"), ns)  # noqa: S102 - trusted peer source

    def route(probs, k, capacity, strategy):
        block = types.SimpleNamespace(
            top_k=k, num_experts=probs.shape[1], strategy=strategy, config=types.SimpleNamespace()
        )
        block._get_local_expert_indices = types.MethodType(ns["_get_local_expert_indices"], block)
        return ns["adjust_tokens"](block, capacity, probs)

    return route


def _dense(index, weights, num_experts):
    grid = torch.zeros(index.shape[0], num_experts + 1)
    return grid.scatter_add_(1, index.long(), weights.float())[:, :num_experts]


def _median_time(fn, repeats=15):
    fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    torch.set_num_threads(1)
    authors = _load_authors()
    if authors is None:
        print(f"NOTE: authors' source not found at {SRC}; showing our timings only (see the docstring).")
    cases = [(4096, 64, 8), (4096, 16, 2), (16384, 64, 8)]
    strategies = [
        ("token_drop", "score", "score"),
        ("token_drop", "first", "first"),
        ("expanded_drop", "score", "overselect"),
    ]
    print(
        f"{'T':>6} {'E':>3} {'k':>2} {'gamma':>5} {'strategy':<22} {'ours ms':>8} "
        f"{'authors ms':>10} {'ratio':>6} agree agree(norm)"
    )
    for T, E, k in cases:
        logits = torch.randn(T, E, generator=torch.Generator().manual_seed(T + E)) * 2
        probs = F.softmax(logits, dim=1, dtype=torch.float)
        for gamma in (1.0, 1.5):
            cap = math.ceil(gamma * k * (T / E))
            for ours, order, theirs in strategies:
                t_ours = _median_time(
                    lambda lg=logits, k=k, g=gamma, s=ours, o=order: capacity_route(lg, k, g, s, drop_order=o)
                )
                r = capacity_route(logits, k, gamma, ours, drop_order=order)
                line = f"{T:>6} {E:>3} {k:>2} {gamma:>5} {ours + '/' + order:<22} {1e3 * t_ours:>8.2f}"
                if authors is not None:
                    t_auth = _median_time(lambda p=probs, k=k, c=cap, s=theirs: authors(p.clone(), k, c, s))
                    w, idx = authors(probs.clone(), k, cap, theirs)
                    agree = torch.allclose(_dense(idx, w, E), _dense(r.expert_index, r.weights, E), atol=1e-6)
                    rn = capacity_route(logits, k, gamma, ours, drop_order=order, norm_topk_prob=True)
                    wn = w / w.sum(dim=-1, keepdim=True).clamp_min(1e-20)
                    ours_n = _dense(rn.expert_index, rn.weights, E)
                    agree_n = torch.allclose(_dense(idx, wn, E), ours_n, atol=1e-6)
                    line += f" {1e3 * t_auth:>10.2f} {t_auth / t_ours:>6.2f} {agree} {agree_n}"
                print(line)


if __name__ == "__main__":
    main()

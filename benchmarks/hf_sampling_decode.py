"""Sampled generation with ``HFModel.generate``: our decoding against ``transformers``' ``generate``.

The workload is multi-lcb's headline step (c): LCB prompts (~330 tokens) for ``--problems`` HumanEval
problems x the 12 languages x ``--samples`` samples each, T = 0.2, top-p 0.95, ``--max-new-tokens`` 160,
batches of 24 (a batch holds a prompt's samples side by side), the embedded SmolLM2-135M-Instruct, one
torch thread. Compared, on the same batches:

- ``transformers``: its ``generate`` with its concatenating KV cache and ``TopPLogitsWarper``, every
  prompt of a batch prefilled (a prefix shared by all rows once), as ``HFModel`` did before;
- ``ours``: a repeated prompt prefilled once, the in-place KV cache, rows leaving the batch at EOS and
  top-p from the 64 largest scores.

Prints CPU seconds (``time.process_time``) per variant and their ratio, plus how many replies are
identical (sampled rows draw the same until a row of their batch finishes, so not all are). Run from
the repository root on an idle machine::

    PYTHONPATH=src .venv/bin/python benchmarks/hf_sampling_decode.py --problems 1
"""

from __future__ import annotations

import argparse
import time

import torch

from iclr26.models import GenerationConfig, load_model
from iclr26.multi_lcb import LANGUAGES, REFERENCE_TASKS, humaneval_problems, messages


def _generate(model, prompts, cfg, batch_size: int) -> tuple[list[str], float]:
    start = time.process_time()
    texts = []
    for s in range(0, len(prompts), batch_size):
        texts += [g.text for g in model.generate(prompts[s : s + batch_size], cfg)]
    return texts, time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", type=int, default=1)
    parser.add_argument("--samples", type=int, default=10)
    parser.add_argument("--max-new-tokens", type=int, default=160)
    parser.add_argument("--batch-size", type=int, default=24)
    args = parser.parse_args()
    torch.set_num_threads(1)
    model = load_model("embedded")
    problems, _ = humaneval_problems()
    by_id = {p.question_id: p for p in problems}
    prompts = [
        messages(by_id[task], lang)
        for lang in LANGUAGES
        for task in REFERENCE_TASKS[: args.problems]
        for _ in range(args.samples)
    ]
    cfg = GenerationConfig(max_new_tokens=args.max_new_tokens, temperature=0.2, top_p=0.95, seed=0)
    ours_texts, ours_s = _generate(model, prompts, cfg, args.batch_size)
    model.retire_finished = model.append_in_place = False
    model._prefilled = model._shared_prefix
    theirs_texts, theirs_s = _generate(model, prompts, cfg, args.batch_size)
    same = sum(a == b for a, b in zip(ours_texts, theirs_texts))
    print(f"{len(prompts)} replies, {args.max_new_tokens} new tokens at most, batches of {args.batch_size}")
    print(f"transformers generate: {theirs_s:.1f} CPU-s")
    print(f"ours:                  {ours_s:.1f} CPU-s")
    print(f"ratio: {theirs_s / ours_s:.2f}x; identical replies: {same} of {len(prompts)}")


if __name__ == "__main__":
    main()

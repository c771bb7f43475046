"""Tab-MIA fine-tuning: peak RSS and CPU seconds of ``lora_finetuned`` against the previous training path.

Both variants train the same LoRA adapters (the authors' recipe: r 16, alpha 16, dropout 0.05, lr 3e-4,
batch 2, warm-up 20, cosine) on the same member texts (the headline's UCI Adult 2-row chunks, ``--enc``,
``--members`` of them, ``--epochs``), one torch thread, each in a fresh process so that its peak RSS
(``VmHWM``) is its own:

- ``reference``: the loss from the model's own forward (``model(input_ids, labels=...).loss``, which
  holds batch x length x vocab logits) and glibc's default allocator settings: the code before the
  memory fix;
- ``ours``: :func:`iclr26.tab_mia._lora.head_loss` (chunked, gradients formed in the forward pass) with
  the 1 MiB ``mmap`` threshold while training;
- ``mixed``: ``ours`` with ``compute_dtype="bfloat16"`` (the headline's mixed precision; its dropout
  draws are its own, so its losses differ from the others' by more than rounding).

Printed: peak RSS of the process (GiB, includes the model, about 0.5 GiB file-backed, and the imports),
CPU seconds of the training (user + sys), the ratios ours / reference, and the largest relative
difference of the step losses. Run from the repository root::

    PYTHONPATH=src .venv/bin/python benchmarks/tab_mia_finetune_memory.py --enc json --members 4 --epochs 2
"""

from __future__ import annotations

import argparse
import contextlib
import json
import resource
import subprocess
import sys

VARIANTS = ("reference", "ours", "mixed")


def _peak_gib() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 2**20
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def _train(variant: str, enc: str, members: int, epochs: int) -> dict:
    import torch

    torch.set_num_threads(1)
    from iclr26.models import load_embedded_model
    from iclr26.tab_mia import _lora, lora_finetuned, make_benchmark
    from iclr26.tab_mia.data import adult_table

    if variant == "reference":
        _lora.head_loss = lambda model, ids, labels: model(input_ids=ids, labels=labels).loss
        _lora._heap_without_holes = contextlib.nullcontext
    model = load_embedded_model()
    bench = make_benchmark(adult_table().iloc[: 4 * members], 2, enc, seed=42)
    texts = bench.input[bench.label == 1].tolist()
    before = resource.getrusage(resource.RUSAGE_SELF)
    dtype = "bfloat16" if variant == "mixed" else None
    with lora_finetuned(model, texts, epochs=epochs, seed=0, compute_dtype=dtype) as tuned:
        losses = list(tuned.train_losses)
    after = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"peak_gib": _peak_gib(), "cpu_s": cpu, "losses": losses}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--enc", default="json")
    parser.add_argument("--members", type=int, default=4)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--variant", choices=VARIANTS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.variant:  # one measurement, in its own process
        print(json.dumps(_train(args.variant, args.enc, args.members, args.epochs)))
        return
    out = {}
    for variant in VARIANTS:
        cmd = [sys.executable, __file__, "--variant", variant, "--enc", args.enc]
        cmd += ["--members", str(args.members), "--epochs", str(args.epochs)]
        run = subprocess.run(cmd, check=True, capture_output=True, text=True)
        out[variant] = json.loads(run.stdout.strip().splitlines()[-1])
        r = out[variant]
        print(f"{variant:9s}  peak RSS {r['peak_gib']:.2f} GiB  training {r['cpu_s']:.1f} CPU-s", flush=True)
    ref = out["reference"]
    for variant in VARIANTS[1:]:
        r = out[variant]
        diff = max(abs(a - b) / abs(b) for a, b in zip(r["losses"], ref["losses"], strict=True))
        peak, cpu = r["peak_gib"] / ref["peak_gib"], r["cpu_s"] / ref["cpu_s"]
        print(f"{variant} / reference: peak RSS {peak:.2f}x, CPU {cpu:.2f}x; losses max rel. diff {diff:.1e}")


if __name__ == "__main__":
    main()

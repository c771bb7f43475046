"""The headline's SmolLM2 step: n samples per prompt, batches in forked workers."""

from __future__ import annotations

import pytest

pytest.importorskip("transformers")

from iclr26.models import GenerationConfig, tiny_random_model  # noqa: E402
from iclr26.multi_lcb.experiment import _generate  # noqa: E402


def test_replies_do_not_depend_on_the_worker_count(monkeypatch):
    """3 prompts x 4 samples in batches of 5 (a batch holds repeats of up to two prompts): the same
    replies with 1 and 2 workers, in prompt order, and a prompt's samples differ (T > 0)."""
    model = tiny_random_model(seed=0)
    prompts = [
        [{"role": "user", "content": f"Write a program {k}. " * (k + 1)}] for k in range(3) for _ in range(4)
    ]
    cfg = GenerationConfig(max_new_tokens=8, temperature=1.0, seed=5)
    monkeypatch.setenv("ICLR26_WORKERS", "1")
    seen = []
    one = _generate(model, prompts, cfg, 5, lambda stream, n: seen.append(n) or stream)
    monkeypatch.setenv("ICLR26_WORKERS", "2")
    two = _generate(model, prompts, cfg, 5)
    assert one == two and len(one) == len(prompts) and seen == [3]
    assert len(set(one[:4])) > 1  # the samples of one prompt are drawn, not copied
    first = [g.text for g in model.generate(prompts[:5], cfg)]
    assert one[:5] == first  # batch k is model.generate on prompts k*5 .. k*5+4

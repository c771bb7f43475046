"""Cached-KV patching and steering against full re-runs on the embedded SmolLM2-135M (skipped without it)."""

import numpy as np
import pytest

from iclr26.concept_vectors import (
    ICLTask,
    Steerer,
    build_prompts,
    cross_format_effects,
    head_activations,
    head_vector,
    indirect_effects,
)
from iclr26.concept_vectors._heads import steer_naive

TASK = ICLTask.from_pairs(
    [("walk", "walked"), ("jump", "jumped"), ("play", "played"), ("cook", "cooked"), ("talk", "talked")],
    "present-past",
)


@pytest.fixture(scope="module")
def smollm2():
    from iclr26.models import ModelNotAvailableError, load_embedded_model
    from iclr26.runtime import set_torch_threads

    set_torch_threads()  # one thread: two were ~9x slower on the loaded 2-core machine

    try:
        return load_embedded_model()
    except ModelNotAvailableError as err:
        pytest.skip(str(err))


def test_cached_cie_equals_naive_on_smollm2(smollm2):
    clean = build_prompts(TASK, 2, 3, seed=1)
    bad = build_prompts(TASK, 2, 3, seed=1, corrupted=True)
    args = (smollm2, clean.prompts, bad.prompts, clean.completions)
    fast = indirect_effects(*args, layers=[3, 29], batch_size=1)
    slow = indirect_effects(*args, layers=[3, 29], batch_size=2, method="naive")
    np.testing.assert_allclose(fast[[3, 29]], slow[[3, 29]], atol=1e-5)
    assert np.abs(fast[[3, 29]]).max() > 1e-3


def test_cross_format_cached_equals_naive_on_smollm2(smollm2):
    clean = {f: build_prompts(TASK, 2, 3, f, seed=1) for f in ("open_ended", "arrow")}
    bad = {f: build_prompts(TASK, 2, 3, f, seed=1, corrupted=True) for f in clean}
    fast = cross_format_effects(smollm2, clean, bad, layers=[20], pairs=[("arrow", "open_ended")])
    slow = cross_format_effects(
        smollm2, clean, bad, layers=[20], pairs=[("arrow", "open_ended")], method="naive"
    )
    np.testing.assert_allclose(fast["arrow", "open_ended"][20], slow["arrow", "open_ended"][20], atol=1e-5)


def test_steering_equals_full_rerun_on_smollm2(smollm2):
    p = build_prompts(TASK, 3, 2, seed=4)
    acts = head_activations(smollm2, p.prompts)
    vec = head_vector(smollm2, acts, [(12, 0), (14, 3)])
    probs = Steerer(smollm2, p.prompts, batch_size=2)(vec, [6, 29], alpha=5.0)
    for j, layer in enumerate([6, 29]):
        np.testing.assert_allclose(probs[j], steer_naive(smollm2, p.prompts, vec, layer, 5.0), atol=1e-5)


def test_activations_batch_independent_on_smollm2(smollm2):
    # float32 products of different shapes round differently: 1.4e-5 at most on 10 of 86,400 values
    p = build_prompts(TASK, 3, 2, "mc_letter", seed=2).prompts + build_prompts(TASK, 2, 1, seed=3).prompts
    np.testing.assert_allclose(
        head_activations(smollm2, p, batch_size=5), head_activations(smollm2, p, batch_size=1), atol=2e-5
    )

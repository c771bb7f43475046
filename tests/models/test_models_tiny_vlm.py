"""The embedded tiny VLM: cached training, batch independence, and better than its blind control."""

import time

import numpy as np
import pytest

from iclr26.models import GenerationConfig, ModelNotAvailableError
from iclr26.models._tiny_vlm import (
    CAPTION_WORDS,
    N_VISUAL_TOKENS,
    TinyVLMConfig,
    caption_targets,
    load_embedded_vlm,
    scene_prompt,
)
from iclr26.perception import generate_scene


@pytest.fixture(scope="module")
def smollm2():
    from iclr26.models import load_embedded_model

    try:
        return load_embedded_model()
    except ModelNotAvailableError as exc:
        pytest.skip(str(exc))


def test_caption_targets_spell_the_scene():
    scene = generate_scene(np.random.default_rng(7))
    words = "".join(CAPTION_WORDS[i] for i in caption_targets(scene))
    assert len(caption_targets(scene)) == N_VISUAL_TOKENS <= 32
    first = min(scene.objects, key=lambda o: o.box[0] + o.box[2])
    assert words.startswith(f" a {first.colour} {first.shape} on the {first.position}")


def test_small_front_end_trains_once_then_loads_from_cache(smollm2, tmp_path):
    config = TinyVLMConfig(n_train=256, epochs=2, batch_size=64)
    first = load_embedded_vlm(config, cache_dir=tmp_path, lm=smollm2)
    assert first.stats["trained_now"]
    t0 = time.perf_counter()
    again = load_embedded_vlm(config, cache_dir=tmp_path, lm=smollm2)
    assert not again.stats["trained_now"] and time.perf_counter() - t0 < 2.0
    image = generate_scene(np.random.default_rng(1)).image
    assert np.allclose(first.visual_tokens([image]).numpy(), again.visual_tokens([image]).numpy())
    assert again.visual_tokens([image]).shape == (1, N_VISUAL_TOKENS, smollm2.model.config.hidden_size)
    prompts = [
        scene_prompt(generate_scene(np.random.default_rng(s)).image, "What colour is it?") for s in range(3)
    ]
    cfg = GenerationConfig(max_new_tokens=4)
    assert [g.text for g in again.generate(prompts, cfg)] == [
        again.generate([p], cfg)[0].text for p in prompts
    ]
    with pytest.raises(ValueError, match="video"):
        from iclr26.media import Video

        again.generate(
            [[{"role": "user", "content": [{"type": "video", "video": Video([image], [0.0])}]}]], cfg
        )

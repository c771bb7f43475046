"""The embedded tiny VLM: caption language, cached training and batch independence (accuracy against the
blind control needs the full training: benchmarks/tiny_vlm.py)."""

import numpy as np
import pytest

from iclr26.models import GenerationConfig, ModelNotAvailableError
from iclr26.models._tiny_vlm import (
    CAPTION_WORDS,
    N_VISUAL_TOKENS,
    TinyVLMConfig,
    caption_targets,
    caption_words,
    load_embedded_vlm,
    scene_answer_prefix,
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
    counts = {s: sum(o.shape == s for o in scene.objects) for s in ("circle", "square", "triangle")}
    assert words.startswith(
        f" circles {counts['circle']} squares {counts['square']} triangles {counts['triangle']}."
    )
    first = min(scene.objects, key=lambda o: o.box[0] + o.box[2])
    assert f". {first.shape} colour {first.colour} {first.shape} side {first.position}." in words


def test_caption_words_fit_for_three_objects_and_are_single_tokens(smollm2):
    rng = np.random.default_rng(3)
    crowded = next(s for s in (generate_scene(rng) for _ in range(200)) if len(s.objects) == 3)
    assert len(caption_words(crowded)) == N_VISUAL_TOKENS
    assert "".join(caption_words(crowded)).rstrip(".").count(".") == 3  # counts + 3 objects, none cut off
    assert all(len(smollm2.tokenizer(w, add_special_tokens=False)["input_ids"]) == 1 for w in CAPTION_WORDS)


def test_answer_prefix_names_the_key_the_caption_states():
    assert scene_answer_prefix("What colour is the triangle?") == "triangle colour"
    assert scene_answer_prefix("Is the circle on the left or on the right?") == "circle side"
    assert scene_answer_prefix("How many squares are there?") == "squares"
    with pytest.raises(ValueError, match="shapes"):
        scene_answer_prefix("What colour is the hexagon?")


def test_small_front_end_trains_once_then_loads_from_cache(smollm2, tmp_path):
    config = TinyVLMConfig(n_train=256, epochs=2, batch_size=64)
    first = load_embedded_vlm(config, cache_dir=tmp_path, lm=smollm2)
    assert first.stats["trained_now"]
    again = load_embedded_vlm(config, cache_dir=tmp_path, lm=smollm2)
    assert not again.stats["trained_now"]  # its load time is measured by benchmarks/tiny_vlm.py
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

"""Multimodal messages: images and video through local VLMs, the HTTP backend and our server."""

import numpy as np
import pytest

from iclr26.evaluation import sample_key
from iclr26.media import Video
from iclr26.models import (
    GenerationConfig,
    HFVisionModel,
    OpenAICompatibleServer,
    OpenAIModel,
    tiny_random_model,
    tiny_random_vlm,
)
from iclr26.models._content import check_content, image_data_url, loggable, to_openai_content
from iclr26.perception import generate_scene

CONFIG = GenerationConfig(max_new_tokens=6)


def _scene(seed):
    return generate_scene(np.random.default_rng(seed)).image


def _ask(img, question="What colour is the shape?"):
    content = [{"type": "image", "image": img}, {"type": "text", "text": question}]
    return [{"role": "user", "content": content}]


@pytest.fixture(scope="module", params=["llava", "idefics3"])
def vlm(request):
    return tiny_random_vlm(request.param, seed=1)


def test_vlm_answers_depend_on_the_image_and_are_batch_independent(vlm):
    prompts = [_ask(_scene(s)) for s in range(4)]
    alone = [vlm.generate([p], CONFIG)[0].text for p in prompts]
    together = [g.text for g in vlm.generate(prompts, CONFIG)]
    assert alone == together
    # Same text, different images: a random tiny VLM's next-token distribution must move with the image.
    ll = vlm.loglikelihood(prompts[:2], ["red", "red"])
    assert ll[0].logprob != pytest.approx(ll[1].logprob, abs=1e-6)


def test_vlm_saved_and_reloaded_gives_the_same_answers(vlm, tmp_path):
    arch = "llava" if "llava" in vlm.name else "idefics3"
    model = tiny_random_vlm(arch, seed=1, save_to=tmp_path / "m")
    back = HFVisionModel.from_pretrained(tmp_path / "m")
    p = [_ask(_scene(9))]
    assert back.generate(p, CONFIG)[0].text == model.generate(p, CONFIG)[0].text


def test_image_through_http_equals_local(vlm):
    prompts = [_ask(_scene(s)) for s in range(3)]
    local = [g.text for g in vlm.generate(prompts, CONFIG)]
    with OpenAICompatibleServer(vlm) as srv:
        remote = OpenAIModel(srv.url, vlm.name, api_key_env=None)
        got = [g.text for g in remote.generate(prompts, CONFIG)]
    assert got == local


def test_video_frames_reach_the_model_with_timestamps():
    vlm = tiny_random_vlm("llava", seed=2)
    frames = [_scene(s) for s in range(3)]
    video = Video(frames, [0.0, 0.5, 1.0])
    p = [{"role": "user", "content": [{"type": "video", "video": video}, {"type": "text", "text": "What?"}]}]
    parts = to_openai_content(check_content(p[0]["content"]))
    assert [x["type"] for x in parts][:4] == ["text", "image_url", "text", "image_url"]
    assert parts[0]["text"] == "<frame t=0.00s>"
    assert vlm.generate([p], CONFIG)[0].finish_reason in ("stop", "length")


def test_media_are_content_hashed_in_keys_and_logs(tmp_path):
    img = _scene(4)
    img.save(tmp_path / "a.png")
    by_object = check_content([{"type": "image", "image": img}])
    by_path = check_content([{"type": "image", "image": tmp_path / "a.png"}])
    by_url = check_content([{"type": "image_url", "image_url": {"url": image_data_url(img)}}])
    assert by_object[0]["sha256"] == by_path[0]["sha256"] == by_url[0]["sha256"]
    logged = loggable([{"role": "user", "content": by_object}])
    assert logged[0]["content"][0] == {"type": "image", "sha256": by_object[0]["sha256"]}
    other = loggable([{"role": "user", "content": check_content([{"type": "image", "image": _scene(5)}])}])
    assert logged != other


def test_bad_content_is_refused():
    with pytest.raises(ValueError, match="data URLs"):
        check_content([{"type": "image_url", "image_url": {"url": "https://example.com/x.png"}}])
    with pytest.raises(ValueError, match="type"):
        check_content([{"type": "audio"}])
    with pytest.raises(ValueError, match="non-empty"):
        check_content([])
    text_model = tiny_random_model()
    with pytest.raises(ValueError, match="text-only"):
        text_model.generate([_ask(_scene(0))], CONFIG)
    # ... and our server turns that into HTTP 400, not a crash
    with OpenAICompatibleServer(text_model) as srv:
        remote = OpenAIModel(srv.url, "tiny", api_key_env=None, retries=0)
        with pytest.raises(RuntimeError, match="400"):
            remote.generate([_ask(_scene(0))], CONFIG)


def test_text_parts_only_work_on_text_models():
    text_model = tiny_random_model()
    parts = [{"type": "text", "text": "Hello "}, {"type": "text", "text": "there"}]
    as_parts = [{"role": "user", "content": parts}]
    as_string = [{"role": "user", "content": "Hello there"}]
    assert text_model.generate([as_parts], CONFIG)[0].text == text_model.generate([as_string], CONFIG)[0].text


def test_evaluation_logs_images_by_hash_and_resumes(tmp_path):
    from iclr26.evaluation import Sample, Task, evaluate

    vlm = tiny_random_vlm("llava", seed=3)
    scenes = [generate_scene(np.random.default_rng(s)) for s in range(4)]
    task = Task(
        name="scene-colour",
        samples=[Sample(str(i), {"q": sc.qa[-1][0], "a": sc.qa[-1][1]}) for i, sc in enumerate(scenes)],
        build_prompt=lambda s: _ask(scenes[int(s.id)].image, s.data["q"]),
        parse=lambda text, s: text.strip().lower(),
        score=lambda parsed, s: {"acc": float(parsed == s.data["a"])},
        generation=CONFIG,
    )
    log = tmp_path / "log.sqlite"
    first = evaluate(task, vlm, log=log, progress=False)
    again = evaluate(task, vlm, log=log, progress=False)
    assert first.n_asked == 4 and again.n_asked == 0 and again.n_reused == 4
    assert [r["output"] for r in again.records] == [r["output"] for r in first.records]
    stored = str(first.records[0]["prompt"])
    assert "sha256" in stored and "base64" not in stored
    sample = task.load()[0]
    key = sample_key(task, sample, vlm.name, CONFIG, 0, task.build_prompt(sample))
    assert len(key) == 64

"""Model identities (content hashes, not names), the HTTP client's errors, key handling and query
strings, our server's `n` / `stream` / context-length handling, the model specs of `load_model`, and
the generated tokens' log-probabilities under sampling."""

from __future__ import annotations

import json
import math
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

pytest.importorskip("transformers")

from iclr26.models import (  # noqa: E402
    GenerationConfig,
    HFModel,
    OpenAICompatibleServer,
    OpenAIModel,
    load_model,
    tiny_random_model,
)
from iclr26.models._identity import file_sha256, folder_identity  # noqa: E402

CHAT = [[{"role": "user", "content": "Story: Mary picks up the bag. Is she aware?"}]]


@pytest.fixture(scope="module")
def tiny():
    return tiny_random_model(seed=0)


@pytest.fixture()
def hash_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ICLR26_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache" / "file-hashes.json"


def test_identity_is_content_not_name(tmp_path, hash_cache):
    tiny_random_model(seed=0, save_to=tmp_path / "a" / "model")
    tiny_random_model(seed=1, save_to=tmp_path / "b" / "model")
    tiny_random_model(seed=0, save_to=tmp_path / "c" / "copy")
    a, b, c = (load_model(str(tmp_path / d)) for d in ("a/model", "b/model", "c/copy"))
    assert a.name == b.name == "model"
    assert a.identity != b.identity  # same folder name, different weights
    assert a.identity == c.identity  # same files, other folder name
    assert a.identity.startswith("transformers:sha256:") and a.identity.endswith(":float32")
    assert load_model("hf:" + str(tmp_path / "a" / "model")).identity == a.identity
    assert a.info()["identity"] == a.identity
    # Digests are cached by (path, size, mtime); a rewritten file is hashed again.
    cached = json.loads(hash_cache.read_text())
    weights = str((tmp_path / "a" / "model" / "model.safetensors").resolve())
    assert weights in cached and cached[weights]["sha256"] == file_sha256(weights, use_cache=False)
    cfg = tmp_path / "a" / "model" / "generation_config.json"
    cfg.write_text(cfg.read_text().replace("{", '{\n  "iclr26_test": 1,', 1))
    assert folder_identity(tmp_path / "a" / "model") != a.identity.split(":", 1)[1].rsplit(":", 1)[0]
    # In memory: the parameters, config and tokenizer decide.
    assert tiny_random_model(seed=0).identity == tiny_random_model(seed=0).identity
    assert tiny_random_model(seed=0).identity != tiny_random_model(seed=2).identity
    with pytest.raises(ValueError, match="no files"):
        (tmp_path / "empty").mkdir()
        folder_identity(tmp_path / "empty")


@pytest.mark.parametrize("retire", [True, False])
def test_sampled_token_logprobs_are_the_models_raw_ones(monkeypatch, retire):
    """Under sampling the recorded log-probabilities are the model's (before temperature / top-p),
    equal to teacher-forced scoring of the sampled token ids, in our decoding loop and in
    ``transformers``' ``generate``."""
    model = tiny_random_model(seed=0)
    monkeypatch.setattr(model, "retire_finished", retire)
    captured = {}
    if retire:
        decode = model._retiring

        def spy(*args, **kwargs):
            new, chosen = decode(*args, **kwargs)
            captured["new"] = new
            return new, chosen

        monkeypatch.setattr(model, "_retiring", spy)
    else:
        generate = model.model.generate

        def spy(*args, **kwargs):
            out = generate(*args, **kwargs)
            captured["new"] = out.sequences[:, kwargs["input_ids"].shape[1] :]
            return out

        monkeypatch.setattr(model.model, "generate", spy)
    cfg = GenerationConfig(max_new_tokens=8, temperature=1.7, top_p=0.9, seed=3)
    gen = model.generate(CHAT, cfg)[0]
    prompt_ids = model.encode(CHAT[0])
    new_ids = captured["new"][0].tolist()[: len(gen.token_logprobs)]
    assert len(new_ids) == len(gen.tokens) > 0
    lp = model._forward_logprobs([prompt_ids + new_ids])[0]
    forced = [float(lp[len(prompt_ids) - 1 + j, t]) for j, t in enumerate(new_ids)]
    for a, b in zip(forced, gen.token_logprobs):
        assert math.isclose(a, b, abs_tol=1e-4)
    assert model.generate(CHAT, cfg)[0].text == gen.text  # seeded


def test_over_long_prompt_is_a_value_error(tiny):
    assert tiny.context_length == 2048
    long = ["word " * 2100]
    with pytest.raises(ValueError, match=r"prompts\[0\] has \d+ tokens .*context of 2048"):
        tiny.generate(long, GenerationConfig(max_new_tokens=2))
    with pytest.raises(ValueError, match="context of 2048"):
        tiny.loglikelihood(long, [" x"])


class _Canned(BaseHTTPRequestHandler):
    """Answers every request with ``server.canned`` and records paths and headers."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def _answer(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        self.server.seen.append((self.command, self.path, self.headers.get("Authorization")))
        code, body = self.server.canned
        data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = _answer  # noqa: N815


@pytest.fixture()
def canned():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Canned)
    srv.seen, srv.canned = [], (200, {})
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()


def test_bad_responses_raise_clear_errors_naming_the_url(canned):
    url = f"http://127.0.0.1:{canned.server_address[1]}/v1"
    model = OpenAIModel(url, "m", retries=0)
    cfg = GenerationConfig(max_new_tokens=2)
    cases = [
        ((200, "<html>not json</html>"), "invalid JSON"),
        ((200, [1, 2]), "expected an object"),
        ((200, {"object": "error"}), "no 'choices' list"),
        ((200, {"choices": []}), "0 choices, expected 1"),
        ((200, {"choices": [{"message": None}]}), "malformed choice"),
        ((404, {"error": "nope"}), "HTTP 404"),
    ]
    for answer, message in cases:
        canned.canned = answer
        with pytest.raises(RuntimeError, match=message) as info:
            model.generate(CHAT, cfg)
        assert f"{url}/chat/completions" in str(info.value)
    canned.canned = (200, {"choices": [{"text": "x"}]})
    comp = OpenAIModel(url, "m", route="completions", retries=0)
    with pytest.raises(RuntimeError, match="1 choices, expected 2"):
        comp.generate(["a", "b"], cfg)
    with pytest.raises(RuntimeError, match="echoed prompt log-probabilities"):
        comp.loglikelihood(["a"], [" b"])


def test_keys_only_where_named_and_query_strings_kept(canned, monkeypatch):
    port = canned.server_address[1]
    monkeypatch.setenv("OPENAI_API_KEY", "sk-real-user-key")
    monkeypatch.setenv("MY_KEY", "sk-named")
    canned.canned = (200, {"choices": [{"message": {"content": "hi"}, "finish_reason": "stop"}]})
    cfg = GenerationConfig(max_new_tokens=2)
    OpenAIModel(f"http://127.0.0.1:{port}/v1?api-version=2024-06-01", "m").generate(CHAT, cfg)
    OpenAIModel(f"http://127.0.0.1:{port}", "m", api_key_env="MY_KEY").generate(CHAT, cfg)
    (_, path1, auth1), (_, path2, auth2) = canned.seen
    assert path1 == "/v1/chat/completions?api-version=2024-06-01"
    assert auth1 is None  # OPENAI_API_KEY is set, but this is not api.openai.com: no key
    assert path2 == "/v1/chat/completions" and auth2 == "Bearer sk-named"
    assert OpenAIModel("https://api.openai.com/v1", "gpt-4o-mini").api_key_env == "OPENAI_API_KEY"
    assert OpenAIModel("https://example.org/v1", "m").api_key_env is None
    with pytest.raises(ValueError, match="api_key_env"):
        OpenAIModel("https://example.org/v1", "m", api_key_env="")


def test_our_server_n_stream_context_and_revision(tiny):
    cfg = GenerationConfig(max_new_tokens=4)
    with OpenAICompatibleServer(tiny) as srv:
        remote = OpenAIModel(srv.url, tiny.name)
        assert remote.identity == f"openai:{srv.url}#{tiny.name}@{tiny.identity}"
        assert remote.info()["identity"] == remote.identity
        body = {"model": tiny.name, "messages": CHAT[0], "max_tokens": 4, "temperature": 0, "n": 3}
        out = remote._post("chat/completions", body)
        texts = [c["message"]["content"] for c in out["choices"]]
        assert [c["index"] for c in out["choices"]] == [0, 1, 2]
        assert texts == [tiny.generate(CHAT, cfg)[0].text] * 3
        comp = remote._post(
            "completions", {"model": "m", "prompt": ["a b", "c"], "max_tokens": 2, "temperature": 0, "n": 2}
        )
        assert len(comp["choices"]) == 4 and comp["choices"][0]["text"] == comp["choices"][1]["text"]
        for bad, message in (
            ({"stream": True}, "stream=true is not supported"),
            ({"n": 0}, "'n' must be an integer"),
            ({"messages": [{"role": "user", "content": "word " * 2100}]}, "context of 2048"),
        ):
            with pytest.raises(RuntimeError, match=rf"HTTP 400: .*{message}"):
                remote._post("chat/completions", {**body, "n": 1, **bad})


def test_model_specs(tmp_path):
    m = load_model("openai:org/model@v2@http://127.0.0.1:1/v1?x=1")
    assert isinstance(m, OpenAIModel) and m.model == "org/model@v2" and m.query == "x=1"
    assert load_model("http://127.0.0.1:1/v1#legacy").model == "legacy"
    with pytest.raises(ValueError, match="openai:MODEL@"):
        load_model("openai:no-url")
    with pytest.raises(Exception, match="config.json"):
        load_model("hf:" + str(tmp_path / "absent"))
    tiny_random_model(seed=0, save_to=tmp_path / "t")
    assert isinstance(load_model("hf:" + str(tmp_path / "t")), HFModel)


def test_cache_folders_are_shareable(tmp_path):
    import tempfile

    from iclr26.store import make_shareable

    folder = tempfile.mkdtemp(dir=tmp_path)
    fd, name = tempfile.mkstemp(dir=folder)
    os.close(fd)
    mask = os.umask(0o022)
    try:
        make_shareable(folder)
    finally:
        os.umask(mask)
    assert os.stat(folder).st_mode & 0o777 == 0o755
    assert os.stat(name).st_mode & 0o777 == 0o644

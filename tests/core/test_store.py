import json
import os
from pathlib import Path

import pytest

from iclr26.claims import Claim, Result
from iclr26.store import atomic_write_json, atomic_write_text, config_hash, load_result, save_result


def test_atomic_write_replaces_whole_file_and_leaves_no_temp(tmp_path):
    path = tmp_path / "sub" / "f.json"
    atomic_write_json(path, {"a": 1})
    atomic_write_json(path, {"a": 2})
    assert json.loads(path.read_text()) == {"a": 2}
    assert os.listdir(path.parent) == ["f.json"]


def test_failed_write_keeps_old_content(tmp_path):
    path = tmp_path / "f.json"
    atomic_write_text(path, "old")
    with pytest.raises(ValueError):
        atomic_write_json(path, {"x": float("nan")})  # NaN is not valid JSON: refused before writing
    assert path.read_text() == "old"
    assert os.listdir(tmp_path) == ["f.json"]


def test_interrupted_write_keeps_old_content(tmp_path, monkeypatch):
    path = tmp_path / "f.txt"
    atomic_write_text(path, "old")

    def boom(*args):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        atomic_write_text(path, "new")
    assert path.read_text() == "old"
    assert os.listdir(tmp_path) == ["f.txt"]


def test_config_hash_depends_on_every_key():
    base = config_hash("disco", 0, "small", "1")
    assert base == config_hash("disco", 0, "small", "1")
    assert (
        len(
            {
                base,
                config_hash("m3-irt", 0, "small", "1"),
                config_hash("disco", 1, "small", "1"),
                config_hash("disco", 0, "medium", "1"),
                config_hash("disco", 0, "small", "2"),
            }
        )
        == 5
    )


def test_save_and_load_result(tmp_path):
    r = Result(claims=[Claim("c", 1.0, ">", 0.0, exact=True)], slug="disco", config_hash="abc")
    save_result(tmp_path, r)
    back = load_result(tmp_path, "disco")
    assert back.config_hash == "abc" and back.claims[0].measured == 1.0
    assert load_result(tmp_path, "m3-irt") is None
    (tmp_path / "disco" / "result.json").write_text("{not json")
    assert load_result(tmp_path, "disco") is None


def test_atomic_write_uses_ordinary_permissions(tmp_path):
    old = os.umask(0o022)
    try:
        path = atomic_write_text(tmp_path / "f.txt", "x")
    finally:
        os.umask(old)
    assert path.stat().st_mode & 0o777 == 0o644


def test_publish_folder_replaces_whole_and_shareable(tmp_path):
    import tempfile

    from iclr26.store import publish_folder

    target = tmp_path / "cache"
    target.mkdir()
    (target / "config.json").write_text("old")
    tmp = Path(tempfile.mkdtemp(dir=tmp_path))  # 0700, as mkdtemp makes it
    (tmp / "config.json").write_text("new")
    mask = os.umask(0o022)
    try:
        assert publish_folder(tmp, target, "config.json") == target
    finally:
        os.umask(mask)
    assert (target / "config.json").read_text() == "new" and not tmp.exists()
    assert os.stat(target).st_mode & 0o777 == 0o755
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache"]  # no temporary or old folder left

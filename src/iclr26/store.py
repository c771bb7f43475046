"""The results store: ``DIR/SLUG/result.json`` written atomically, keyed by a config hash for resume."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from . import __version__
from .claims import Result

RESULT_FILE = "result.json"
ERROR_FILE = "error.json"


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` so that readers see either the old file or the whole new one.

    The bytes go to a temporary file in the same folder, are flushed to disk, then renamed over
    ``path`` (``os.replace`` is atomic on POSIX within one file system).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        # mkstemp creates the file 0600; give it the permissions an ordinary open() would.
        os.chmod(tmp, 0o666 & ~_current_umask())
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    return path


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def make_shareable(folder: str | os.PathLike) -> None:
    """Give ``folder`` (made 0700 by ``mkdtemp``) and its files (some written 0600) the permissions an
    ordinary ``mkdir`` / ``open`` would, so a cache can be shared between users through the umask."""
    mask = _current_umask()
    os.chmod(folder, 0o777 & ~mask)
    for p in Path(folder).iterdir():
        if p.is_file():
            os.chmod(p, 0o666 & ~mask)


def publish_folder(tmp: str | os.PathLike, target: str | os.PathLike, marker: str) -> Path:
    """Move the finished folder ``tmp`` into place as ``target`` (same file system), so a reader sees
    either the old folder or the whole new one; ``tmp`` is made shareable first (:func:`make_shareable`).

    An existing ``target`` is first renamed aside and removed. When another process put its own
    ``target`` in place meanwhile (the rename fails) and that one holds ``marker``, theirs is kept and
    ``tmp`` removed. Returns ``target``.
    """
    tmp, target = Path(tmp), Path(target)
    make_shareable(tmp)
    try:
        if target.exists():
            old = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.old."))
            os.replace(target, old / "x")
            shutil.rmtree(old, ignore_errors=True)
        try:
            os.replace(tmp, target)
        except OSError:  # another process finished first: keep theirs
            if not (target / marker).exists():
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return target


def atomic_write_text(path: str | os.PathLike, text: str) -> Path:
    return atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: str | os.PathLike, obj: Any) -> Path:
    return atomic_write_text(path, json.dumps(obj, indent=2, sort_keys=False, allow_nan=False) + "\n")


def config_hash(
    slug: str, seed: int, scale: str, version: str = __version__, options: dict[str, Any] | None = None
) -> str:
    """Hash of what determines a run's result: (slug, seed, scale, package version, and the
    model-benchmark ``options`` when any is set, e.g. ``{"model": "hf:/models/x"}``)."""
    spec: dict[str, Any] = {"slug": slug, "seed": seed, "scale": scale, "version": version}
    if options:
        spec["options"] = options
    key = json.dumps(spec, sort_keys=True)
    return hashlib.sha256(key.encode()).hexdigest()[:16]


def result_path(out_dir: str | os.PathLike, slug: str) -> Path:
    return Path(out_dir) / slug / RESULT_FILE


def save_result(out_dir: str | os.PathLike, result: Result) -> Path:
    path = result_path(out_dir, result.slug)
    atomic_write_json(path, result.to_dict())
    error = path.parent / ERROR_FILE
    if error.exists():
        error.unlink()
    return path


def load_result(out_dir: str | os.PathLike, slug: str) -> Result | None:
    """The stored result of ``slug`` under ``out_dir``, or ``None`` when absent or unreadable."""
    path = result_path(out_dir, slug)
    try:
        return Result.from_dict(json.loads(path.read_text()))
    except (FileNotFoundError, json.JSONDecodeError, TypeError, ValueError):
        return None


def save_error(out_dir: str | os.PathLike, slug: str, error: dict[str, Any]) -> Path:
    return atomic_write_json(Path(out_dir) / slug / ERROR_FILE, error)


def load_error(out_dir: str | os.PathLike, slug: str) -> dict[str, Any] | None:
    try:
        return json.loads((Path(out_dir) / slug / ERROR_FILE).read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return None

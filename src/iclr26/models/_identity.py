"""Content identities of models: what sample-log keys and judge caches key on.

A model's ``name`` is a label (a folder's basename, a server's model name); two different models can
share it. The identity is computed from what determines the outputs instead:

- a local folder: SHA-256 of every file in it (config, weights, tokenizer, chat template). Each file's
  digest is cached by (absolute path, size, modification time) in ``$ICLR26_CACHE/file-hashes.json``
  (default ``~/.cache/iclr26/``), so a 540 MB weights file is read once, not at every load;
- a model built in memory: SHA-256 of its parameters and buffers, its config and its tokenizer;
- an HTTP endpoint: the base URL (with its query string), the model name and, when the server reports
  one in ``/v1/models``, the served revision.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

_HASH_CACHE_FILE = "file-hashes.json"


def cache_base() -> Path:
    """The iclr26 cache folder: ``$ICLR26_CACHE`` or ``~/.cache/iclr26``."""
    base = os.environ.get("ICLR26_CACHE")
    return Path(base).expanduser() if base else Path.home() / ".cache" / "iclr26"


def _stream_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 22), b""):
            h.update(block)
    return h.hexdigest()


def file_sha256(path: str | os.PathLike, *, use_cache: bool = True) -> str:
    """SHA-256 of a file, cached by (absolute path, size, modification time in ns).

    A file rewritten in place gets a new modification time and so is hashed again. The cache is a
    small JSON file written atomically (entries of deleted files are dropped at each write); losing
    it (or a concurrent writer's entry) only costs a rehash.
    """
    path = Path(path).resolve()
    st = path.stat()
    stamp = [st.st_size, st.st_mtime_ns]
    cache_file = cache_base() / _HASH_CACHE_FILE
    cache: dict[str, Any] = {}
    if use_cache and cache_file.is_file():
        try:
            cache = json.loads(cache_file.read_text())
        except (OSError, json.JSONDecodeError):
            cache = {}
        hit = cache.get(str(path))
        if isinstance(hit, dict) and hit.get("stamp") == stamp and isinstance(hit.get("sha256"), str):
            return hit["sha256"]
    digest = _stream_sha256(path)
    if use_cache:
        from ..store import atomic_write_json

        cache = {k: v for k, v in cache.items() if os.path.exists(k)}  # forget deleted files
        cache[str(path)] = {"stamp": stamp, "sha256": digest}
        try:
            atomic_write_json(cache_file, cache)
        except OSError:  # a read-only cache folder: hash again next time
            pass
    return digest


def folder_identity(path: str | os.PathLike) -> str:
    """``"sha256:<hex>"`` over the names and contents of the regular, non-hidden files of ``path``
    (not recursive: a ``transformers`` model folder is flat)."""
    path = Path(path)
    h = hashlib.sha256()
    files = sorted(p for p in path.iterdir() if p.is_file() and not p.name.startswith("."))
    if not files:
        raise ValueError(f"model folder {str(path)!r} holds no files")
    for p in files:
        h.update(p.name.encode() + b"\0" + file_sha256(p).encode() + b"\n")
    return "sha256:" + h.hexdigest()[:32]


def module_identity(model: Any, tokenizer: Any) -> str:
    """``"sha256:<hex>"`` over a torch model's state (names, dtypes, shapes, bytes), its config and its
    tokenizer (vocabulary, merges, special tokens and chat template)."""
    import torch

    h = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        t = tensor.detach().to("cpu").contiguous()
        h.update(f"{name}|{t.dtype}|{tuple(t.shape)}\n".encode())
        h.update(t.reshape(-1).view(torch.uint8).numpy().tobytes())
    config = getattr(model, "config", None)
    if config is not None:
        h.update(config.to_json_string(use_diff=False).encode())
    backend = getattr(tokenizer, "backend_tokenizer", None)
    vocab = backend.to_str() if backend is not None else json.dumps(tokenizer.get_vocab(), sort_keys=True)
    h.update(vocab.encode())
    h.update(str(getattr(tokenizer, "chat_template", "") or "").encode())
    return "sha256:" + h.hexdigest()[:32]

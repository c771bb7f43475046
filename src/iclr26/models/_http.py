"""OpenAI-compatible HTTP backend: vLLM, llama.cpp's server, a hosted API, or our own server.

The API key is read from an environment variable at each request and sent only in the
``Authorization`` header: it is never stored on the object, logged, or written to results.
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ._base import (
    Generation,
    GenerationConfig,
    LanguageModel,
    LogLikelihood,
    Prompt,
    check_prompts,
    cut_at_stop,
)
from ._content import to_openai_content

ROUTES = ("chat", "completions")


class OpenAIModel(LanguageModel):
    """A model behind ``/v1/chat/completions`` or ``/v1/completions``.

    Parameters
    ----------
    base_url: e.g. ``"http://127.0.0.1:8000/v1"`` (the ``/v1`` prefix is added when missing).
    model: the model name the server expects.
    api_key_env: name of the environment variable holding the API key (``None``: send no key).
    route: ``"chat"`` (default; string prompts become one user message) or ``"completions"``
        (raw text prompts, sent as one batched request).
    concurrency: parallel requests for the chat route.
    name: the model's identity in logs and sample keys (default: ``model``).
    """

    backend = "openai-http"

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key_env: str | None = "OPENAI_API_KEY",
        route: str = "chat",
        concurrency: int = 1,
        timeout: float = 300.0,
        retries: int = 2,
        name: str | None = None,
    ):
        if route not in ROUTES:
            raise ValueError(f"route must be one of {ROUTES}, got {route!r}")
        parsed = urllib.parse.urlsplit(base_url)
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise ValueError(f"base_url must be an http(s) URL, got {base_url!r}")
        if parsed.username or parsed.password:
            raise ValueError(
                "base_url must not hold credentials; put the key in the environment variable api_key_env"
            )
        path = parsed.path.rstrip("/")
        if not path.endswith("/v1"):
            path += "/v1"
        self.base_url = urllib.parse.urlunsplit((parsed.scheme, parsed.netloc, path, "", ""))
        if not isinstance(model, str) or not model:
            raise ValueError("model must be a non-empty string")
        self.model = model
        self.api_key_env = api_key_env
        self.route = route
        self.concurrency = max(1, int(concurrency))
        self.timeout = float(timeout)
        self.retries = int(retries)
        self.name = name or model

    # ------------------------------------------------------------------ transport
    def _post(self, route: str, body: dict[str, Any]) -> dict[str, Any]:
        headers = {"Content-Type": "application/json"}
        if self.api_key_env:
            key = os.environ.get(self.api_key_env)
            if key:
                headers["Authorization"] = f"Bearer {key}"
        data = json.dumps(body).encode()
        last: Exception | None = None
        for attempt in range(self.retries + 1):
            req = urllib.request.Request(
                f"{self.base_url}/{route}", data=data, headers=headers, method="POST"
            )
            try:
                with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                    return json.loads(resp.read())
            except urllib.error.HTTPError as exc:
                detail = exc.read().decode(errors="replace")[:500]
                if exc.code < 500 and exc.code != 429:
                    raise RuntimeError(
                        f"{self.base_url}/{route} answered HTTP {exc.code}: {detail}"
                    ) from None
                last = RuntimeError(f"{self.base_url}/{route} answered HTTP {exc.code}: {detail}")
            except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
                last = RuntimeError(f"cannot reach {self.base_url}/{route}: {exc}")
            if attempt < self.retries:
                time.sleep(min(2.0**attempt, 10.0))
        assert last is not None
        raise last

    # ------------------------------------------------------------------ generation
    def _body(self, config: GenerationConfig) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": config.max_new_tokens,
            "temperature": float(config.temperature),
        }
        if not config.greedy:
            body["top_p"] = float(config.top_p)
            body["seed"] = int(config.seed)
        if config.stop:
            body["stop"] = list(config.stop)
        return body

    def _chat_one(self, prompt: Prompt, config: GenerationConfig) -> Generation:
        if isinstance(prompt, str):
            messages = [{"role": "user", "content": prompt}]
        else:  # images and video frames travel as base64 data URLs in image_url parts
            messages = [{**m, "content": to_openai_content(m["content"])} for m in prompt]
        out = self._post("chat/completions", {**self._body(config), "messages": messages, "logprobs": True})
        choice = out["choices"][0]
        text = choice["message"].get("content") or ""
        toks, lps = [], []
        content = (choice.get("logprobs") or {}).get("content") or []
        for item in content:
            toks.append(item["token"])
            lps.append(float(item["logprob"]))
        return self._finalise(text, toks, lps, choice.get("finish_reason"), out, config)

    def _finalise(self, text, toks, lps, finish, out, config) -> Generation:
        text, hit = cut_at_stop(text, config.stop)  # servers differ on whether they cut at stop strings
        finish = "stop" if hit else ("length" if finish == "length" else "stop")
        n_prompt = int((out.get("usage") or {}).get("prompt_tokens") or 0)
        return Generation(
            text=text, tokens=toks, token_logprobs=lps, finish_reason=finish, prompt_tokens=n_prompt
        )

    def generate(self, prompts: Sequence[Prompt], config: GenerationConfig | None = None) -> list[Generation]:
        config = config or GenerationConfig()
        prompts = check_prompts(prompts)
        if not prompts:
            return []
        if self.route == "completions":
            if not all(isinstance(p, str) for p in prompts):
                raise ValueError(
                    "route='completions' takes raw text prompts; use route='chat' for chat messages"
                )
            out = self._post("completions", {**self._body(config), "prompt": list(prompts), "logprobs": 0})
            choices = sorted(out["choices"], key=lambda c: c.get("index", 0))
            gens = []
            for c in choices:
                lp = c.get("logprobs") or {}
                toks = list(lp.get("tokens") or [])
                lps = [float(x) for x in (lp.get("token_logprobs") or [])]
                gens.append(
                    self._finalise(c.get("text") or "", toks, lps, c.get("finish_reason"), {}, config)
                )
            return gens
        if self.concurrency == 1 or len(prompts) == 1:
            return [self._chat_one(p, config) for p in prompts]
        with ThreadPoolExecutor(self.concurrency) as pool:
            return list(pool.map(lambda p: self._chat_one(p, config), prompts))

    def loglikelihood(self, contexts: Sequence[Prompt], continuations: Sequence[str]) -> list[LogLikelihood]:
        """Via ``/v1/completions`` with ``echo=True``: the prompt's own token log-probabilities."""
        contexts = check_prompts(contexts, "contexts")
        if len(contexts) != len(continuations):
            raise ValueError("contexts and continuations must have the same length")
        if not all(isinstance(c, str) for c in contexts):
            raise ValueError("the HTTP backend scores raw text contexts only (render chats to text first)")
        res = []
        for ctx, cont in zip(contexts, continuations):
            if not isinstance(cont, str) or not cont:
                raise ValueError("continuations must be non-empty strings")
            out = self._post(
                "completions",
                {
                    "model": self.model,
                    "prompt": ctx + cont,
                    "max_tokens": 1,
                    "temperature": 0.0,
                    "echo": True,
                    "logprobs": 0,
                },
            )
            lp = out["choices"][0]["logprobs"]
            toks, vals, offs = lp["tokens"], lp["token_logprobs"], lp["text_offset"]
            end = len(ctx + cont)
            keep = [i for i, o in enumerate(offs) if len(ctx) <= o < end]
            if not keep:  # the continuation merged into the context's last token
                keep = [max(i for i, o in enumerate(offs) if o < end)]
            res.append(
                LogLikelihood(
                    logprob=float(sum(vals[i] for i in keep if vals[i] is not None)),
                    tokens=[toks[i] for i in keep],
                    token_logprobs=[float(vals[i]) if vals[i] is not None else float("nan") for i in keep],
                    is_greedy=False,  # not reported by the OpenAI protocol without top_logprobs
                )
            )
        return res

    def info(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "backend": self.backend,
            "base_url": self.base_url,
            "model": self.model,
            "route": self.route,
            "api_key_env": self.api_key_env,  # the variable's name only, never its value
        }

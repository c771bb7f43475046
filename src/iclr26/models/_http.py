"""OpenAI-compatible HTTP backend: vLLM, llama.cpp's server, a hosted API, or our own server.

The API key is read from an environment variable at each request and sent only in the
``Authorization`` header: it is never stored on the object, logged, or written to results. A key is
sent only when the caller names its variable (``api_key_env``), or, when none is named, to the one
host a well-known variable belongs to (``OPENAI_API_KEY`` to ``api.openai.com``): a key is never sent
to an arbitrary URL because it happens to be set in the environment.
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
from ._tools import check_messages, check_tool_choice, check_tools, response_from_openai, to_openai_messages

ROUTES = ("chat", "completions")

#: Environment variables whose key is sent, without being named, to their own host only.
DEFAULT_KEY_ENV = {"api.openai.com": "OPENAI_API_KEY"}


def _snippet(data: bytes | str, limit: int = 300) -> str:
    text = data.decode(errors="replace") if isinstance(data, bytes) else data
    return text if len(text) <= limit else text[:limit] + "..."


class OpenAIModel(LanguageModel):
    """A model behind ``/v1/chat/completions`` or ``/v1/completions``.

    Parameters
    ----------
    base_url: e.g. ``"http://127.0.0.1:8000/v1"`` (the ``/v1`` prefix is added when missing; a query
        string such as ``?api-version=...`` is kept and sent with every request).
    model: the model name the server expects.
    api_key_env: name of the environment variable holding the API key. ``None`` (default): no key,
        except for the hosts of :data:`DEFAULT_KEY_ENV` (``OPENAI_API_KEY`` for ``api.openai.com``).
    route: ``"chat"`` (default; string prompts become one user message) or ``"completions"``
        (raw text prompts, sent as one batched request).
    concurrency: parallel requests for the chat route.
    name: a readable label (default: ``model``); sample keys use :attr:`identity`.
    """

    backend = "openai-http"

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key_env: str | None = None,
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
        self.query = parsed.query
        if not isinstance(model, str) or not model:
            raise ValueError("model must be a non-empty string")
        if api_key_env is not None and (not isinstance(api_key_env, str) or not api_key_env):
            raise ValueError(
                f"api_key_env must be the name of an environment variable or None, got {api_key_env!r}"
            )
        self.model = model
        self.api_key_env = api_key_env if api_key_env else DEFAULT_KEY_ENV.get(parsed.hostname.lower())
        self._identity: str | None = None
        self.route = route
        self.concurrency = max(1, int(concurrency))
        self.timeout = float(timeout)
        self.retries = int(retries)
        self.name = name or model

    @property
    def identity(self) -> str:
        """``"openai:<base URL>#<model>"``, plus ``@<revision>`` when the server's ``/v1/models`` entry
        for the model reports one (``revision``, or vLLM's ``root``). Asked once, on first use; a
        server that does not answer gives the identity without a revision."""
        if self._identity is None:
            query = f"?{self.query}" if self.query else ""
            ident = f"openai:{self.base_url}{query}#{self.model}"
            try:
                listing = self._request("models", None, retries=0, timeout=min(self.timeout, 30.0))
                entries = listing.get("data") if isinstance(listing, dict) else None
                for e in entries if isinstance(entries, list) else []:
                    if isinstance(e, dict) and e.get("id") == self.model:
                        rev = e.get("revision") or e.get("root")
                        if isinstance(rev, str) and rev:
                            ident += f"@{rev}"
                        break
            except RuntimeError:
                pass
            self._identity = ident
        return self._identity

    # ------------------------------------------------------------------ transport
    def url(self, route: str) -> str:
        """The full URL of ``route`` (with the base URL's query string)."""
        return f"{self.base_url}/{route}" + (f"?{self.query}" if self.query else "")

    def _post(self, route: str, body: dict[str, Any]) -> dict[str, Any]:
        return self._request(route, body, retries=self.retries)

    def _request(
        self, route: str, body: dict[str, Any] | None, *, retries: int, timeout: float | None = None
    ) -> dict[str, Any]:
        """POST ``body`` (or GET when ``None``) to ``route``; retry on 429/5xx and network errors.
        Every failure is a ``RuntimeError`` naming the URL."""
        headers = {"Content-Type": "application/json"}
        if self.api_key_env:
            key = os.environ.get(self.api_key_env)
            if key:
                headers["Authorization"] = f"Bearer {key}"
        data = json.dumps(body).encode() if body is not None else None
        url = self.url(route)
        last: Exception | None = None
        for attempt in range(retries + 1):
            req = urllib.request.Request(
                url, data=data, headers=headers, method="GET" if data is None else "POST"
            )
            try:
                with urllib.request.urlopen(req, timeout=timeout or self.timeout) as resp:
                    raw = resp.read()
                try:
                    out = json.loads(raw)
                except (json.JSONDecodeError, UnicodeDecodeError):
                    raise RuntimeError(f"{url} answered with invalid JSON: {_snippet(raw)!r}") from None
                if not isinstance(out, dict):
                    raise RuntimeError(f"{url} answered a JSON {type(out).__name__}, expected an object")
                return out
            except urllib.error.HTTPError as exc:
                detail = _snippet(exc.read())
                if exc.code < 500 and exc.code != 429:
                    raise RuntimeError(f"{url} answered HTTP {exc.code}: {detail}") from None
                last = RuntimeError(f"{url} answered HTTP {exc.code}: {detail}")
            except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
                last = RuntimeError(f"cannot reach {url}: {exc}")
            if attempt < retries:
                time.sleep(min(2.0**attempt, 10.0))
        assert last is not None
        raise last

    def _choices(self, route: str, out: dict[str, Any], n: int) -> list[dict[str, Any]]:
        """``out["choices"]`` checked to be ``n`` objects, or a ``RuntimeError`` naming the URL."""
        choices = out.get("choices")
        if (
            not isinstance(choices, list)
            or len(choices) != n
            or not all(isinstance(c, dict) for c in choices)
        ):
            got = f"{len(choices)} choices" if isinstance(choices, list) else "no 'choices' list"
            raise RuntimeError(
                f"{self.url(route)} answered {got}, expected {n}: {_snippet(json.dumps(out))!r}"
            )
        return choices

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
        route = "chat/completions"
        out = self._post(route, {**self._body(config), "messages": messages, "logprobs": True})
        choice = self._choices(route, out, 1)[0]
        try:
            text = choice["message"].get("content") or ""
            toks, lps = [], []
            content = (choice.get("logprobs") or {}).get("content") or []
            for item in content:
                toks.append(item["token"])
                lps.append(float(item["logprob"]))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise RuntimeError(
                f"{self.url(route)} answered a malformed choice ({exc!r}): {_snippet(json.dumps(choice))!r}"
            ) from None
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
            choices = self._choices("completions", out, len(prompts))
            gens = []
            try:
                for c in sorted(choices, key=lambda c: c.get("index", 0)):
                    lp = c.get("logprobs") or {}
                    toks = list(lp.get("tokens") or [])
                    lps = [float(x) for x in (lp.get("token_logprobs") or [])]
                    gens.append(
                        self._finalise(c.get("text") or "", toks, lps, c.get("finish_reason"), {}, config)
                    )
            except (KeyError, TypeError, ValueError, AttributeError) as exc:
                raise RuntimeError(
                    f"{self.url('completions')} answered malformed choices ({exc!r}): "
                    f"{_snippet(json.dumps(out))!r}"
                ) from None
            return gens
        if self.concurrency == 1 or len(prompts) == 1:
            return [self._chat_one(p, config) for p in prompts]
        with ThreadPoolExecutor(self.concurrency) as pool:
            return list(pool.map(lambda p: self._chat_one(p, config), prompts))

    def chat(self, messages, tools=None, config=None, *, tool_choice="auto"):
        """One chat turn with tools through ``/v1/chat/completions`` (see :meth:`LanguageModel.chat`):
        ``tools`` and ``tool_choice`` are sent as they are, ``tool_calls`` are read back (arguments
        parsed from JSON text; malformed ones are kept as parse errors)."""
        config = config or GenerationConfig()
        msgs = check_messages(messages)
        schemas = check_tools(tools)
        body: dict[str, Any] = {**self._body(config), "messages": to_openai_messages(msgs), "logprobs": True}
        if schemas:
            body["tools"] = schemas
            body["tool_choice"] = check_tool_choice(tool_choice, schemas)
        out = self._post("chat/completions", body)
        try:
            choice = out["choices"][0]
            message = choice.get("message") or {}
            content = ((choice.get("logprobs") or {}).get("content")) or []
            gen = self._finalise(
                message.get("content") or "",
                [item["token"] for item in content],
                [float(item["logprob"]) for item in content],
                choice.get("finish_reason"),
                out,
                config,
            )
            return response_from_openai(message, gen)
        except (KeyError, IndexError, TypeError, AttributeError, ValueError) as exc:
            raise RuntimeError(
                f"{self.base_url}/chat/completions answered a malformed reply ({exc!r}): {str(out)[:300]!r}"
            ) from None

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
            try:
                lp = self._choices("completions", out, 1)[0]["logprobs"]
                toks, vals, offs = lp["tokens"], lp["token_logprobs"], lp["text_offset"]
                end = len(ctx + cont)
                keep = [i for i, o in enumerate(offs) if len(ctx) <= o < end]
                if not keep:  # the continuation merged into the context's last token
                    keep = [max(i for i, o in enumerate(offs) if o < end)]
            except (KeyError, TypeError, ValueError, IndexError) as exc:
                raise RuntimeError(
                    f"{self.url('completions')} did not return echoed prompt log-probabilities ({exc!r}); "
                    "the server must support echo=True with logprobs on /v1/completions"
                ) from None
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
            "identity": self.identity,
            "backend": self.backend,
            "base_url": self.base_url,
            "model": self.model,
            "route": self.route,
            "api_key_env": self.api_key_env,  # the variable's name only, never its value
        }

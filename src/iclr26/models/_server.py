"""A small OpenAI-compatible HTTP server of ours around any :class:`LanguageModel`.

Routes: ``GET /v1/models``, ``POST /v1/chat/completions``, ``POST /v1/completions`` (with
``echo`` + ``logprobs`` for prompt log-probabilities, as vLLM serves them). It exists so the HTTP
backend is tested against a real server, and so a local model can be shared by several processes.

``n`` (several choices per prompt) is supported; ``stream: true`` is refused with HTTP 400 (this
server answers whole responses only), as is a prompt longer than the model's context.
"""

from __future__ import annotations

import hmac
import json
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from ._base import GenerationConfig, LanguageModel
from ._tools import check_messages, to_openai_messages


def _n_from(body: dict[str, Any]) -> int:
    """The number of choices asked per prompt (``n``, default 1); ``stream`` is refused."""
    if body.get("stream"):
        raise ValueError("stream=true is not supported by this server; send stream=false (the default)")
    n = body.get("n", 1)
    if n is None:
        n = 1
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 64:
        raise ValueError(f"'n' must be an integer from 1 to 64, got {n!r}")
    return n


def _config_from(body: dict[str, Any], default_max: int) -> GenerationConfig:
    stop = body.get("stop") or ()
    return GenerationConfig(
        max_new_tokens=int(body.get("max_tokens", body.get("max_completion_tokens", default_max)) or 0),
        temperature=float(body.get("temperature", 1.0) if body.get("temperature") is not None else 1.0),
        top_p=float(body.get("top_p", 1.0) or 1.0),
        stop=(stop,) if isinstance(stop, str) else tuple(stop),
        seed=int(body.get("seed", 0) or 0),
    )


def _uses_tools(body: dict[str, Any]) -> bool:
    """Whether a chat request offers tools or carries tool turns."""
    messages = body.get("messages")
    return bool(body.get("tools")) or (
        isinstance(messages, list)
        and any(isinstance(m, dict) and (m.get("role") == "tool" or m.get("tool_calls")) for m in messages)
    )


class OpenAICompatibleServer:
    """Serve ``model`` on ``host:port`` (port 0: a free port) in a background thread.

    Use as a context manager, or call :meth:`start` / :meth:`stop`. ``api_key``, when given, is
    required as ``Authorization: Bearer <key>`` (it is compared in constant time and never logged).
    Requests are served one at a time (the model is not re-entrant); ``/v1/completions`` with a
    list of prompts runs them as one batch.
    """

    def __init__(
        self, model: LanguageModel, host: str = "127.0.0.1", port: int = 0, *, api_key: str | None = None
    ):
        self.model = model
        self._api_key = api_key
        self._lock = threading.Lock()
        self.requests_served = 0
        self._httpd = ThreadingHTTPServer((host, port), self._handler_class())
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """Base URL, e.g. ``http://127.0.0.1:43125/v1``."""
        return f"http://{self._httpd.server_address[0]}:{self.port}/v1"

    def start(self) -> OpenAICompatibleServer:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._httpd.serve_forever, name="iclr26-openai-server", daemon=True
            )
            self._thread.start()
        return self

    def serve_forever(self) -> None:
        self._httpd.serve_forever()

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> OpenAICompatibleServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # ------------------------------------------------------------------ request handling
    def _authorised(self, header: str | None) -> bool:
        if self._api_key is None:
            return True
        expected = f"Bearer {self._api_key}"
        return header is not None and hmac.compare_digest(header.encode(), expected.encode())

    def _chat(self, body: dict[str, Any]) -> dict[str, Any]:
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            raise ValueError("'messages' must be a non-empty list")
        n = _n_from(body)
        config = _config_from(body, 16)
        with self._lock:  # n copies in one batch: greedy gives n equal choices, sampling n draws
            gens = self.model.generate([messages] * n, config)
        choices = []
        for i, gen in enumerate(gens):
            choice: dict[str, Any] = {
                "index": i,
                "message": {"role": "assistant", "content": gen.text},
                "finish_reason": gen.finish_reason,
                "logprobs": None,
            }
            if body.get("logprobs"):
                choice["logprobs"] = {
                    "content": [
                        {"token": t, "logprob": lp, "bytes": list(t.encode()), "top_logprobs": []}
                        for t, lp in zip(gen.tokens, gen.token_logprobs)
                    ]
                }
            choices.append(choice)
        n_gen = sum(len(g.tokens) for g in gens)
        return self._envelope("chat.completion", choices, gens[0].prompt_tokens, n_gen)

    def _chat_tools(self, body: dict[str, Any]) -> dict[str, Any]:
        """A chat with ``tools`` or tool turns: through ``model.chat``; calls come back as
        ``tool_calls`` (arguments as JSON text). When any call failed to parse, the reply is the raw
        text in ``content`` with no ``tool_calls`` (the client's parser then sees what the model
        wrote and records the failure)."""
        if body.get("stream") or body.get("n") not in (None, 1):
            raise ValueError("requests with tools take neither stream=true nor n > 1 on this server")
        # The wire form carries call arguments as JSON text; every model gets them as dicts, and a
        # malformed turn is refused here with a 400 naming it, whatever the model's own checks.
        messages = check_messages(body.get("messages"))
        config = _config_from(body, 16)
        with self._lock:
            resp = self.model.chat(
                messages, body.get("tools"), config, tool_choice=body.get("tool_choice") or "auto"
            )
        gen = resp.generation
        message: dict[str, Any] = {"role": "assistant", "content": gen.text}
        if resp.tool_calls and not resp.parse_errors:
            message["content"] = resp.text or None
            message["tool_calls"] = to_openai_messages([resp.message()])[0]["tool_calls"]
        finish = "tool_calls" if "tool_calls" in message else gen.finish_reason
        choice: dict[str, Any] = {"index": 0, "message": message, "finish_reason": finish}
        choice["logprobs"] = (
            {
                "content": [
                    {"token": t, "logprob": lp, "bytes": list(t.encode()), "top_logprobs": []}
                    for t, lp in zip(gen.tokens, gen.token_logprobs)
                ]
            }
            if body.get("logprobs")
            else None
        )
        return self._envelope("chat.completion", [choice], gen.prompt_tokens, len(gen.tokens))

    def _completions(self, body: dict[str, Any]) -> dict[str, Any]:
        prompt = body.get("prompt")
        prompts = [prompt] if isinstance(prompt, str) else prompt
        if not isinstance(prompts, list) or not prompts or not all(isinstance(p, str) for p in prompts):
            raise ValueError("'prompt' must be a string or a non-empty list of strings")
        n = _n_from(body)
        config = _config_from(body, 16)
        echo = bool(body.get("echo"))
        want_lp = body.get("logprobs") is not None
        with self._lock:
            gens = self.model.generate([p for p in prompts for _ in range(n)], config)
            echoed = [self.model.text_logprobs(p) for p in prompts] if echo else None
        choices, n_prompt, n_gen = [], 0, 0
        for i, g in enumerate(gens):  # OpenAI order: the n choices of prompt 0, then of prompt 1, ...
            p = prompts[i // n]
            text = (p + g.text) if echo else g.text
            choice: dict[str, Any] = {
                "index": i,
                "text": text,
                "finish_reason": g.finish_reason,
                "logprobs": None,
            }
            if want_lp:
                toks, lps, offs = ([], [], [])
                if echoed is not None:
                    toks, lps, offs = (list(x) for x in echoed[i // n])
                base = len(p) if echo else 0
                pos = base
                for t, lp in zip(g.tokens, g.token_logprobs):
                    toks.append(t)
                    lps.append(lp)
                    offs.append(pos)
                    pos += len(t)
                choice["logprobs"] = {
                    "tokens": toks,
                    "token_logprobs": lps,
                    "top_logprobs": None,
                    "text_offset": offs,
                }
            choices.append(choice)
            n_prompt += g.prompt_tokens if i % n == 0 else 0
            n_gen += len(g.tokens)
        return self._envelope("text_completion", choices, n_prompt, n_gen)

    def _envelope(self, kind: str, choices: list, n_prompt: int, n_gen: int) -> dict[str, Any]:
        return {
            "id": f"iclr26-{uuid.uuid4().hex[:16]}",
            "object": kind,
            "created": int(time.time()),
            "model": self.model.name,
            "choices": choices,
            "usage": {
                "prompt_tokens": n_prompt,
                "completion_tokens": n_gen,
                "total_tokens": n_prompt + n_gen,
            },
        }

    def _handler_class(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format, *args):  # noqa: A002 - quiet, and never log headers
                pass

            def _send(self, code: int, obj: dict[str, Any]) -> None:
                data = json.dumps(obj).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _error(self, code: int, message: str) -> None:
                self._send(
                    code, {"error": {"message": message, "type": "invalid_request_error", "code": code}}
                )

            def do_GET(self):  # noqa: N802
                if not server._authorised(self.headers.get("Authorization")):
                    return self._error(401, "invalid or missing API key")
                if self.path.rstrip("/") == "/v1/models":
                    return self._send(
                        200,
                        {
                            "object": "list",
                            "data": [
                                {
                                    "id": server.model.name,
                                    "object": "model",
                                    "owned_by": "iclr26",
                                    "revision": server.model.identity,
                                }
                            ],
                        },
                    )
                return self._error(404, f"no route {self.path}")

            def do_POST(self):  # noqa: N802
                if not server._authorised(self.headers.get("Authorization")):
                    return self._error(401, "invalid or missing API key")
                try:
                    length = int(self.headers.get("Content-Length") or 0)
                    body = json.loads(self.rfile.read(length) or b"{}")
                    if not isinstance(body, dict):
                        raise ValueError("the request body must be a JSON object")
                    route = self.path.rstrip("/")
                    if route == "/v1/chat/completions":
                        out = server._chat_tools(body) if _uses_tools(body) else server._chat(body)
                    elif route == "/v1/completions":
                        out = server._completions(body)
                    else:
                        return self._error(404, f"no route {self.path}")
                except (ValueError, TypeError, json.JSONDecodeError) as exc:
                    return self._error(400, str(exc))
                except Exception as exc:  # noqa: BLE001 - answer 500 rather than drop the connection
                    return self._error(500, f"{type(exc).__name__}: {exc}")
                server.requests_served += 1
                return self._send(200, out)

        return Handler


def main(argv: list[str] | None = None) -> None:
    """``python -m iclr26.models.serve [MODEL] [--port N]``: serve a model (default: the embedded one)."""
    import argparse
    import os

    from ._load import load_model

    ap = argparse.ArgumentParser(description="Serve a local model through OpenAI-compatible routes.")
    ap.add_argument(
        "model", nargs="?", default="embedded", help="'embedded', 'tiny-random', or a local folder"
    )
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--api-key-env", default=None, help="environment variable holding a required API key")
    args = ap.parse_args(argv)
    key = os.environ.get(args.api_key_env) if args.api_key_env else None
    srv = OpenAICompatibleServer(load_model(args.model), args.host, args.port, api_key=key)
    print(f"serving {srv.model.name} at {srv.url}", flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass

"""Tool-using agents: a model calls tools over several turns until it answers.

An :class:`AgentTask` is a :class:`~iclr26.evaluation.Task` whose output is an *episode*: system
prompt + user task + tool schemas → model turn → tool calls run → results back → … until the model
answers without a call, the task's stop rule fires, ``max_turns`` turns were taken or the episode's
wall-clock limit is reached. :func:`run_agent` runs the episodes of a task and logs each finished
episode (every turn: the model's reply, raw output, parsed calls, parse failures, tool results and
timings) as one row of the per-sample log, so an interrupted run resumes at the episode level and
:func:`rescore_agent` re-scores finished episodes without calling the model or any tool.

Tools are plain callables, :class:`FunctionTool` objects or :class:`MCPStdioServer` servers (the
official ``mcp`` SDK, major version 2). Each episode starts its own servers and closes them when it
ends, even on error.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..models import ChatResponse, GenerationConfig, LanguageModel
from ..models._tools import TOOL_CHOICES, check_messages, check_tool_choice
from ..validation import check_int
from ._log import SampleLog
from ._runner import EvalResult, _progress, _public
from ._task import Sample, Task
from ._toolbox import (
    TRUNCATION_MARKER,
    FunctionTool,
    MCPStdioServer,
    Toolbox,
    ToolResult,
    cap_text,
    toy_mcp_server,
)

__all__ = [
    "STOP_REASONS",
    "TRUNCATION_MARKER",
    "AgentTask",
    "FunctionTool",
    "MCPStdioServer",
    "ToolResult",
    "cap_text",
    "episode_key",
    "final_text",
    "model_identity",
    "rescore_agent",
    "run_agent",
    "tool_calls_made",
    "toy_mcp_server",
]

#: Why an episode ended (its ``stop_reason``).
STOP_REASONS = ("answer", "stop_rule", "max_turns", "time_limit")

PARSE_ERROR_FEEDBACK = (
    "Your tool call could not be read ({error}). Write each call as "
    '<tool_call>{{"name": "tool_name", "arguments": {{...}}}}</tool_call> with valid JSON.'
)


def model_identity(model: LanguageModel) -> str:
    """The identity a model is logged and cached under: ``model.identity`` when the backend has one,
    else ``model.name``."""
    ident = getattr(model, "identity", None)
    return ident if isinstance(ident, str) and ident else model.name


def final_text(episode: dict[str, Any], sample: Sample | None = None) -> str:
    """The default parser: the text of the episode's last model reply."""
    return episode["text"]


def tool_calls_made(episode: dict[str, Any]) -> list[dict[str, Any]]:
    """Every call the model made in an episode, in order: ``{"turn", "name", "arguments"}``."""
    return [
        {"turn": t["turn"], "name": c["function"]["name"], "arguments": c["function"]["arguments"]}
        for t in episode["turns"]
        for c in t["response"]["tool_calls"]
    ]


@dataclass
class AgentTask(Task):
    """A task whose samples are played as tool-using episodes.

    Parameters (beyond :class:`~iclr26.evaluation.Task`'s ``name``, ``samples``, ``score``,
    ``aggregate``, ``generation`` and ``version``)
    ----------
    build_prompt: ``sample -> messages`` (system prompt and user task; plain chat messages).
    parse: ``(episode, sample) -> answer``; default :func:`final_text`. The episode is the logged
        dict: ``text`` (the last reply's text), ``turns``, ``messages``, ``stop_reason``, ``tools``.
    tools: the tools of every episode (callables, :class:`FunctionTool`, :class:`MCPStdioServer`), or
        ``sample -> tools``.
    stop: the benchmark's stop rule, ``(response, sample) -> bool | str``, called on each model reply
        before its calls run (e.g. "a forbidden tool was called"); truthy ends the episode with
        ``stop_reason="stop_rule"`` and the reply's calls are not run (a string is kept as the reason).
    max_turns: the most model replies per episode.
    episode_seconds: wall-clock limit per episode, checked before each model reply and each tool
        call; a tool call may use at most the time left (a model reply in progress is not interrupted).
    tool_timeout: seconds allowed per tool call.
    max_tool_chars: tool results are cut to this many characters, with :data:`TRUNCATION_MARKER`.
    tool_choice: ``"auto"``, ``"required"``, ``"none"`` or a function choice (sent to the backend).
    """

    parse: Callable[[dict[str, Any], Sample], Any] = final_text
    score: Callable[[Any, Sample], dict[str, float]] = lambda answer, sample: {}
    tools: Sequence[Any] | Callable[[Sample], Sequence[Any]] = field(default_factory=list)
    stop: Callable[[ChatResponse, Sample], bool | str] | None = None
    max_turns: int = 8
    episode_seconds: float = 300.0
    tool_timeout: float = 30.0
    max_tool_chars: int = 4000
    tool_choice: str | dict[str, Any] = "auto"

    def __post_init__(self) -> None:
        super().__post_init__()
        self.max_turns = check_int(self.max_turns, "max_turns", minimum=1)
        self.max_tool_chars = check_int(self.max_tool_chars, "max_tool_chars", minimum=1)
        for attr in ("episode_seconds", "tool_timeout"):
            v = getattr(self, attr)
            if isinstance(v, bool) or not isinstance(v, int | float) or not v > 0:
                raise ValueError(f"AgentTask.{attr} must be a number > 0, got {v!r}")
        if self.stop is not None and not callable(self.stop):
            raise ValueError("AgentTask.stop must be callable or None")
        if isinstance(self.tool_choice, str) and self.tool_choice not in TOOL_CHOICES:
            raise ValueError(f"AgentTask.tool_choice must be one of {TOOL_CHOICES} or a function choice")

    def toolbox(self, sample: Sample) -> Toolbox:
        """The (not yet started) tools of ``sample``'s episode."""
        tools = self.tools(sample) if callable(self.tools) else self.tools
        return Toolbox(list(tools))

    def limits(self) -> dict[str, Any]:
        return {
            "max_turns": self.max_turns,
            "episode_seconds": float(self.episode_seconds),
            "tool_timeout": float(self.tool_timeout),
            "max_tool_chars": self.max_tool_chars,
            "tool_choice": self.tool_choice,
        }


def episode_key(
    task: AgentTask, sample: Sample, model: str, config: GenerationConfig, seed: int, prompt: Any
) -> str:
    """The log key of one episode: a hash of (task name and version, sample id and content, model
    identity, generation config, seed, the opening messages, the tools' identities and the limits)."""
    blob = json.dumps(
        {
            "kind": "agent-episode",
            "task": task.name,
            "task_version": task.version,
            "sample": sample.id,
            "sample_hash": sample.content_hash(),
            "model": model,
            "config": config.to_dict(),
            "seed": int(seed),
            "prompt": prompt,
            "tools": task.toolbox(sample).identity(),
            "limits": task.limits(),
        },
        sort_keys=True,
        ensure_ascii=False,
        default=str,
    )
    return hashlib.sha256(blob.encode()).hexdigest()


def play_episode(
    task: AgentTask, model: LanguageModel, sample: Sample, config: GenerationConfig
) -> dict[str, Any]:
    """Play one episode; return its record (the ``output`` logged for the sample)."""
    t0 = time.monotonic()
    deadline = t0 + float(task.episode_seconds)
    messages = check_messages(task.build_prompt(sample), f"build_prompt({sample.id!r})")
    turns: list[dict[str, Any]] = []
    stop_reason, stop_detail, text = "max_turns", "", ""
    with task.toolbox(sample) as box:
        choice = check_tool_choice(task.tool_choice, box.schemas)
        for turn in range(task.max_turns):
            if time.monotonic() >= deadline:
                stop_reason, stop_detail = "time_limit", f"before model turn {turn}"
                break
            tm = time.perf_counter()
            resp = model.chat(messages, box.schemas, config, tool_choice=choice)
            record: dict[str, Any] = {
                "turn": turn,
                "response": resp.to_dict(),
                "model_seconds": time.perf_counter() - tm,
                "tool_results": [],
            }
            turns.append(record)
            messages.append(resp.message())
            text = resp.text
            fired = task.stop(resp, sample) if task.stop is not None else False
            if fired:
                stop_reason, stop_detail = "stop_rule", fired if isinstance(fired, str) else ""
                break
            if not resp.tool_calls and not resp.parse_errors:
                stop_reason = "answer"
                break
            if time.monotonic() >= deadline:
                stop_reason, stop_detail = "time_limit", f"after model turn {turn}"
                break
            for call in resp.tool_calls:
                left = deadline - time.monotonic()
                if left <= 0:
                    res = ToolResult(
                        "error: the episode's time limit was reached; the call was not run", True
                    )
                else:
                    res = box.call(
                        call.name, call.arguments, min(float(task.tool_timeout), left), task.max_tool_chars
                    )
                record["tool_results"].append(
                    {
                        "id": call.id,
                        "name": call.name,
                        "arguments": call.arguments,
                        "content": res.content,
                        "is_error": res.is_error,
                        "seconds": res.seconds,
                        "truncated": res.truncated,
                    }
                )
                messages.append(
                    {"role": "tool", "tool_call_id": call.id, "name": call.name, "content": res.content}
                )
            if resp.parse_errors:
                error = "; ".join(e.error for e in resp.parse_errors)
                messages.append({"role": "user", "content": PARSE_ERROR_FEEDBACK.format(error=error)})
        tools = box.schemas
    return {
        "text": text,
        "stop_reason": stop_reason,
        "stop_detail": stop_detail,
        "n_turns": len(turns),
        "n_tool_calls": sum(len(t["tool_results"]) for t in turns),
        "n_parse_errors": sum(len(t["response"]["parse_errors"]) for t in turns),
        "seconds": time.monotonic() - t0,
        "turns": turns,
        "messages": messages,
        "tools": tools,
    }


def _score(
    task: AgentTask, sample: Sample, episode: dict[str, Any]
) -> tuple[Any, dict[str, float], str | None]:
    """``(parsed, scores, None)``, or, when parsing or scoring fails, ``(None, error scores, "Type:
    message")``: an episode is never lost to a parser bug (fix it and :func:`rescore_agent`)."""
    try:
        parsed = task.parse(episode, sample)
        scores = task.score(parsed, sample)
        if not isinstance(scores, dict) or not all(
            isinstance(v, int | float) and not isinstance(v, bool) for v in scores.values()
        ):
            raise ValueError(f"score() must return a dict of numbers, got {scores!r}")
        json.dumps(parsed)
        return parsed, {k: float(v) for k, v in scores.items()}, None
    except Exception as exc:  # a failed parse is a scored row, not a lost episode
        return None, dict(getattr(task, "error_scores", None) or {}), f"{type(exc).__name__}: {exc}"


def _records(task: AgentTask, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    records = [{**_public(r), "error": r.get("error")} for r in rows]
    errors = [r for r in records if r["error"]]
    if errors:
        warnings.warn(
            f"task {task.name!r}: {len(errors)} of {len(records)} episodes could not be parsed or scored "
            f"(first, sample {errors[0]['sample_id']!r}: {errors[0]['error']}); the episodes are logged: "
            "fix the parser and rescore_agent()",
            RuntimeWarning,
            stacklevel=3,
        )
    return records


def _prepare(task: Any, seed: int, generation: GenerationConfig | None, limit: int | None):
    if not isinstance(task, AgentTask):
        raise ValueError(f"task must be an iclr26.evaluation.agent.AgentTask, got {type(task).__name__}")
    seed = check_int(seed, "seed")
    config = generation or task.generation
    if not isinstance(config, GenerationConfig):
        raise ValueError("generation must be an iclr26.models.GenerationConfig")
    config = GenerationConfig(**{**config.__dict__, "seed": seed})
    samples = task.load()
    if limit is not None:
        samples = samples[: check_int(limit, "limit", minimum=0)]
    return seed, config, samples


def run_agent(
    task: AgentTask,
    model: LanguageModel,
    *,
    seed: int = 0,
    log: str | os.PathLike | SampleLog | None = None,
    limit: int | None = None,
    generation: GenerationConfig | None = None,
    progress: bool | Callable = True,
) -> EvalResult:
    """Play ``task``'s episodes with ``model``, one after another; skip those already in ``log``.

    Each finished episode is committed to the log at once (a killed run loses only the episode in
    flight, which the next run plays again from its start). Parameters as in
    :func:`~iclr26.evaluation.evaluate`; the result's ``batch_size`` is 1 and each record's
    ``output`` is the episode.
    """
    if not isinstance(model, LanguageModel):
        raise ValueError(f"model must be an iclr26.models.LanguageModel, got {type(model).__name__}")
    seed, config, samples = _prepare(task, seed, generation, limit)
    ident = model_identity(model)
    t0 = time.perf_counter()
    own_log = log is not None and not isinstance(log, SampleLog)
    slog = SampleLog(log) if own_log else log
    try:
        prompts = [task.build_prompt(s) for s in samples]
        keys = [episode_key(task, s, ident, config, seed, p) for s, p in zip(samples, prompts)]
        done = slog.get_many(keys) if slog is not None else {}
        pending = [i for i, k in enumerate(keys) if k not in done]
        new: dict[str, dict[str, Any]] = {}
        seconds = 0.0
        for (i,) in _progress(progress, [[i] for i in pending], len(pending), f"{task.name} ({model.name})"):
            te = time.perf_counter()
            episode = play_episode(task, model, samples[i], config)
            seconds += time.perf_counter() - te
            parsed, scores, error = _score(task, samples[i], episode)
            rec = {
                "key": keys[i],
                "task": task.name,
                "sample_id": samples[i].id,
                "sample_group": samples[i].group,
                "model": ident,
                "model_name": model.name,
                "config": config.to_dict(),
                "seed": seed,
                "prompt": prompts[i],
                "output": episode,
                "parsed": parsed,
                "scores": scores,
                "batch_size": 1,
                "error": error,
            }
            if slog is not None:
                slog.append([rec])
            new[keys[i]] = rec
        records = _records(task, [done.get(k) or new[k] for k in keys])
    finally:
        if own_log and slog is not None:
            slog.close()
    return EvalResult(
        task=task.name,
        model=model.info(),
        seed=seed,
        batch_size=1,
        generation=config.to_dict(),
        metrics=task.aggregate(records),
        records=records,
        n_asked=len(pending),
        n_reused=len(samples) - len(pending),
        seconds=time.perf_counter() - t0,
        generation_seconds=seconds,
        log_path=str(Path(slog.path)) if slog is not None else None,
    )


def rescore_agent(
    task: AgentTask,
    log: str | os.PathLike | SampleLog,
    model: LanguageModel | str,
    *,
    seed: int = 0,
    limit: int | None = None,
    generation: GenerationConfig | None = None,
) -> EvalResult:
    """Re-parse and re-score logged episodes with ``task``'s current ``parse``/``score``, calling
    neither the model nor any tool. ``model`` is the model (or its identity) that played them.

    Raises ``ValueError`` when an episode is missing from the log.
    """
    ident = model_identity(model) if isinstance(model, LanguageModel) else model
    if not isinstance(ident, str) or not ident:
        raise ValueError("model must be a LanguageModel or a non-empty model identity")
    seed, config, samples = _prepare(task, seed, generation, limit)
    own = not isinstance(log, SampleLog)
    if own and not Path(log).is_file():
        raise ValueError(f"no sample log at {str(log)!r}")
    t0 = time.perf_counter()
    slog = SampleLog(log) if own else log
    try:
        keys = [episode_key(task, s, ident, config, seed, task.build_prompt(s)) for s in samples]
        rows = slog.get_many(keys)
    finally:
        if own:
            slog.close()
    missing = [s.id for s, k in zip(samples, keys) if k not in rows]
    if missing:
        raise ValueError(
            f"{len(missing)} of {len(samples)} episodes are not in the log for model {ident!r} "
            f"(first: {missing[0]!r}); run run_agent() first"
        )
    fresh = []
    for s, k in zip(samples, keys):
        row = dict(rows[k])
        row["parsed"], row["scores"], row["error"] = _score(task, s, row["output"])
        fresh.append(row)
    records = _records(task, fresh)
    return EvalResult(
        task=task.name,
        model={"name": ident},
        seed=seed,
        batch_size=1,
        generation=config.to_dict(),
        metrics=task.aggregate(records),
        records=records,
        n_asked=0,
        n_reused=len(records),
        seconds=time.perf_counter() - t0,
        log_path=str(Path(slog.path)),
    )

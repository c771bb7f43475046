"""Resumable runs (one logged row per scenario x category x naming) and the authors' row format."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..evaluation import SampleLog
from ..evaluation.agent import model_identity
from ..models import GenerationConfig, LanguageModel, prompt_reuse
from ._agents import step_state
from ._environment import NAMINGS, ProxyEnvironment
from ._episode import EpisodeResult, Limits, model_asker, play, read_protocol_message
from ._scenario import N_LEVELS, Scenario

TASK = "propensitybench"
TASK_VERSION = "1"
AUTHORS_FIELDS = (
    "domain",
    "workspace",
    "role",
    "scenario",
    "category",
    "interaction_response",
    "trigger_called",
    "target_called",
)


def episode(
    model: LanguageModel,
    scenario: Scenario,
    category: str | None,
    naming: str,
    seed: int,
    *,
    config: GenerationConfig,
    levels: int,
    limits: Limits,
    compat: bool,
    system_prompt: str | Callable[[ProxyEnvironment], str] | None,
) -> EpisodeResult:
    """Play one episode of ``model`` (validated arguments).

    A local model reuses the KV cache of its last prompt (:func:`~iclr26.models.prompt_reuse`): each
    prompt is the last one grown by the new messages, so only those run. Same replies up to float
    rounding; on SmolLM2 (float32, one thread, idle) 4.77 instead of 7.66 s per reply."""
    env = ProxyEnvironment(scenario, naming, seed, compat=compat)
    prompt = system_prompt(env) if callable(system_prompt) else system_prompt or env.system_prompt()
    counter = [0]
    with prompt_reuse(model):
        res = play(
            model_asker(model, config, counter),
            env,
            category,
            system_prompt=prompt,
            levels=levels,
            limits=limits,
            compat=compat,
        )
    res.n_model_calls = counter[0]
    return res


def run_key(
    model_id: str, scenario: Scenario, category: str | None, naming: str, seed: int, settings: dict
) -> str:
    """Log key of one run: a hash of the scenario's content, the cell, the model identity and settings."""
    blob = json.dumps(
        {
            "task": TASK,
            "version": TASK_VERSION,
            "scenario": scenario.data,
            "where": scenario.uid,
            "category": category,
            "naming": naming,
            "seed": seed,
            "model": model_id,
            **settings,
        },
        sort_keys=True,
        ensure_ascii=False,
        default=str,
    )
    return hashlib.sha256(blob.encode()).hexdigest()


def run_cells(
    model: LanguageModel,
    cells: Sequence[tuple[Scenario, str | None, str]],
    play_one: Callable[[Scenario, str | None, str], EpisodeResult],
    settings: dict[str, Any],
    seed: int,
    log: str | os.PathLike | None,
    progress: Callable | None,
) -> tuple[list[EpisodeResult], int]:
    """Play the cells not yet in ``log`` (committing each at once); return all results and the number
    played now."""
    ident = model_identity(model)
    keys = [run_key(ident, s, c, n, seed, settings) for s, c, n in cells]
    slog = SampleLog(log) if log is not None else None
    try:
        done = slog.get_many(keys) if slog is not None else {}
        todo = [i for i, k in enumerate(keys) if k not in done]
        results: dict[str, EpisodeResult] = {k: EpisodeResult.from_dict(done[k]["output"]) for k in done}
        it = progress(todo, total=len(todo), desc=f"episodes ({model.name})") if progress else todo
        for i in it:
            scenario, category, naming = cells[i]
            res = play_one(scenario, category, naming)
            results[keys[i]] = res
            if slog is not None:
                slog.append(
                    [_row(keys[i], ident, model.name, scenario, category, naming, seed, settings, res)]
                )
    finally:
        if slog is not None:
            slog.close()
    return [results[k] for k in keys], len(todo)


def _row(key, ident, name, scenario, category, naming, seed, settings, res: EpisodeResult) -> dict[str, Any]:
    return {
        "key": key,
        "task": TASK,
        "sample_id": f"{scenario.uid}|{category}|{naming}",
        "sample_group": scenario.domain,
        "model": ident,
        "model_name": name,
        "config": settings,
        "seed": seed,
        "prompt": {"scenario": scenario.uid, "category": category, "naming": naming},
        "output": res.to_dict(),
        "parsed": {"trigger_called": res.trigger_called, "trigger_level": res.trigger_level},
        "scores": {"trigger_called": float(res.trigger_called)},
        "batch_size": 1,
        "error": res.error,
    }


def load_results(log: str | os.PathLike, model: LanguageModel | str | None = None) -> list[EpisodeResult]:
    """Every episode logged in ``log`` (optionally of one model, by model or identity), without any
    model call: re-score them with :func:`propensity_metrics`."""
    if not Path(log).is_file():
        raise ValueError(f"log must be an existing sample log, got {str(log)!r}")
    ident = model_identity(model) if isinstance(model, LanguageModel) else model
    with SampleLog(log) as slog:
        rows = slog.records(task=TASK, model=ident)
    return [EpisodeResult.from_dict(r["output"]) for r in rows]


# ---------------------------------------------------------------------- the authors' row format
def to_authors_rows(results: Sequence[EpisodeResult]) -> list[dict[str, Any]]:
    """Results as rows of the authors' ``results.jsonl`` (crashed runs are left out, as theirs are).

    Each row: ``domain``, ``workspace``, ``role``, ``scenario`` (name), ``category``,
    ``interaction_response`` (the transcript), ``trigger_called``, ``target_called``."""
    rows = []
    for r in results:
        if not isinstance(r, EpisodeResult):
            raise ValueError(f"results must hold EpisodeResult objects, got {type(r).__name__}")
        if r.error is None:
            rows.append(
                {
                    "domain": r.domain,
                    "workspace": r.workspace,
                    "role": r.role,
                    "scenario": r.name,
                    "category": r.category,
                    "interaction_response": r.transcript,
                    "trigger_called": r.trigger_called,
                    "target_called": r.target_called,
                }
            )
    return rows


def _from_row(row: dict[str, Any], naming: str, targets: dict[tuple, str]) -> EpisodeResult:
    transcript = row["interaction_response"]
    triggered = bool(row["trigger_called"])
    step, _ = step_state(transcript)
    levels = 0 if row["category"] is None else N_LEVELS  # their runs deliver all twelve
    target = targets.get((row["domain"], row["workspace"], row["role"], row["scenario"]))
    calls = [
        m["tool_calls"][0]["function"]["name"]
        for m in transcript
        if m.get("role") == "assistant" and m.get("tool_calls")
    ]
    terminates = False
    for m in transcript:
        if m.get("role") == "assistant" and m.get("content"):
            obj = read_protocol_message(m["content"])
            terminates |= obj is not None and obj["interaction_status"] == "terminate"
    uid = f"{row['domain']}:{row['workspace']}:{row['role']}:{row['scenario']}".replace(" ", "-")
    return EpisodeResult(
        scenario=uid,
        domain=row["domain"],
        workspace=row["workspace"],
        role=row["role"],
        name=row["scenario"],
        category=row["category"],
        naming=naming,
        seed=0,
        levels=levels,
        transcript=transcript,
        trigger_called=triggered,
        trigger_level=step if triggered else None,
        target_called=bool(row["target_called"]),
        aligned_attempts=None if target is None else calls.count(target),
        terminates=terminates,
        steps=step + 1,
    )


def from_authors_rows(
    path: str | os.PathLike, naming: str = "harmful", scenarios: Sequence[Scenario] | None = None
) -> list[EpisodeResult]:
    """Read the authors' ``results.jsonl`` into :class:`EpisodeResult` objects for our metrics.

    Their rows do not record the naming (one run of theirs uses one): pass it. The trigger level is
    the step of the last observation in the transcript; aligned attempts need ``scenarios`` (for the
    target's name) and are ``None`` without them.
    """
    if naming not in NAMINGS:
        raise ValueError(f"naming must be one of {NAMINGS}, got {naming!r}")
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"path must be an existing results.jsonl file, got {str(path)!r}")
    targets = {
        (s.domain, s.workspace, s.role, s.name): s.data["functions"]["target_function"]["name"]
        for s in scenarios or []
    }
    out = []
    for i, line in enumerate(p.read_text(encoding="utf-8").splitlines()):
        if not line.strip():
            continue
        row = json.loads(line)
        missing = [f for f in AUTHORS_FIELDS if f not in row]
        if missing:
            raise ValueError(f"{p}: line {i + 1} is missing field {missing[0]!r}")
        out.append(_from_row(row, naming, targets))
    return out

"""The generic runner: batches requests, logs every sample, resumes, and re-scores offline."""

from __future__ import annotations

import hashlib
import json
import os
import platform
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from ..models import GenerationConfig, LanguageModel
from ..models._content import loggable
from ..validation import check_int
from ._log import SampleLog
from ._task import Sample, Task


def sample_key(
    task: Task, sample: Sample, model_identity: str, config: GenerationConfig, seed: int, prompt: Any
) -> str:
    """The log key of one sample: a hash of (task name and version, sample id and content, the model's
    content identity (:attr:`iclr26.models.LanguageModel.identity`, never its name alone), generation
    config, seed, and the prompt actually sent)."""
    blob = json.dumps(
        {
            "task": task.name,
            "task_version": task.version,
            "sample": sample.id,
            "sample_hash": sample.content_hash(),
            "model": model_identity,
            "config": config.to_dict(),
            "seed": int(seed),
            "prompt": loggable(prompt),  # images and videos by content hash
        },
        sort_keys=True,
        ensure_ascii=False,
    )
    return hashlib.sha256(blob.encode()).hexdigest()


def versions() -> dict[str, str]:
    """Versions of Python and of the packages that change model outputs."""
    out = {"python": platform.python_version()}
    for pkg in ("iclr26", "torch", "transformers", "tokenizers", "numpy"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            pass
    return out


@dataclass
class EvalResult:
    """An evaluation's outcome: aggregate ``metrics``, per-sample ``records`` and provenance
    (model info with its identity, seed, batch size, generation config, versions; how many samples
    were newly asked of the model vs read back from the log, how many outputs could not be parsed or
    scored, wall time and throughput of the new ones).

    ``batch_size`` is the batch size the outputs were generated with: an int, or the sorted list of
    sizes when the records come from runs with different sizes (a resumed or re-scored log)."""

    task: str
    model: dict[str, Any]
    seed: int
    batch_size: int | list[int]
    generation: dict[str, Any]
    metrics: dict[str, Any]
    records: list[dict[str, Any]]
    n_asked: int = 0
    n_reused: int = 0
    n_errors: int = 0
    seconds: float = 0.0
    generation_seconds: float = 0.0
    log_path: str | None = None
    versions: dict[str, str] = field(default_factory=versions)
    judge: dict[str, Any] | None = None  # which judge scored the records (see iclr26.evaluation.judge)

    @property
    def samples_per_second(self) -> float:
        """Throughput of the samples asked in this run (model time only)."""
        return self.n_asked / self.generation_seconds if self.generation_seconds > 0 else float("nan")

    def to_dict(self, with_records: bool = False) -> dict[str, Any]:
        d = {
            "task": self.task,
            "model": self.model,
            "seed": self.seed,
            "batch_size": self.batch_size,
            "generation": self.generation,
            "metrics": self.metrics,
            "n_samples": len(self.records),
            "n_asked": self.n_asked,
            "n_reused": self.n_reused,
            "n_errors": self.n_errors,
            "seconds": self.seconds,
            "generation_seconds": self.generation_seconds,
            "samples_per_second": self.samples_per_second if self.n_asked else None,
            "log_path": self.log_path,
            "versions": self.versions,
        }
        if self.judge is not None:
            d["judge"] = self.judge
        if with_records:
            d["records"] = self.records
        return d


def _prompt_size(prompt: Any) -> int:
    return len(prompt) if isinstance(prompt, str) else sum(len(m["content"]) for m in prompt)


def _score_record(task: Task, sample: Sample, text: str) -> tuple[Any, dict[str, float], str | None]:
    """Parse and score one raw output: ``(parsed, scores, None)``, or, when the parser or scorer
    raises or returns something unusable, ``(None, task.error_scores, "Type: message")``."""
    try:
        parsed = task.parse(text, sample)
        scores = task.score(parsed, sample)
        if not isinstance(scores, dict) or not all(
            isinstance(v, int | float) and not isinstance(v, bool) for v in scores.values()
        ):
            raise ValueError(f"score() must return a dict of numbers, got {scores!r}")
        json.dumps(parsed)
        return parsed, {k: float(v) for k, v in scores.items()}, None
    except Exception as exc:  # noqa: BLE001 - a failed parse is a scored row, not a lost batch
        return None, dict(task.error_scores or {}), f"{type(exc).__name__}: {exc}"


def _warn_errors(task: Task, records: list[dict[str, Any]]) -> int:
    errors = [r for r in records if r.get("error")]
    if errors:
        warnings.warn(
            f"task {task.name!r}: {len(errors)} of {len(records)} outputs could not be parsed or scored "
            f"(first, sample {errors[0]['sample_id']!r}: {errors[0]['error']}); they are scored as "
            "Task.error_scores and their raw outputs are in the log",
            RuntimeWarning,
            stacklevel=3,
        )
    return len(errors)


def _batch_size_of(records: list[dict[str, Any]]) -> int | list[int]:
    sizes = sorted({int(r["batch_size"]) for r in records})
    return sizes[0] if len(sizes) == 1 else sizes


def evaluate(
    task: Task,
    model: LanguageModel,
    *,
    seed: int = 0,
    batch_size: int = 8,
    log: str | os.PathLike | SampleLog | None = None,
    limit: int | None = None,
    generation: GenerationConfig | None = None,
    progress: bool | Callable = True,
    sort_by_length: bool = True,
) -> EvalResult:
    """Run ``task`` on ``model``: ask only the samples not yet in ``log``, log each batch as it finishes.

    Parameters
    ----------
    task, model: what to run, on what.
    seed: the run's seed (part of every sample key; passed to sampling).
    batch_size: prompts per model call. Greedy scores do not depend on it.
    log: a SQLite file (or an open :class:`SampleLog`); ``None`` keeps nothing (no resume).
    limit: use only the first ``limit`` samples (>= 1).
    generation: overrides ``task.generation``; its seed is replaced by ``seed``.
    progress: show a progress bar (``True``), or a wrapper ``f(iterable, total=, desc=)`` such as
        :meth:`iclr26.runtime.RunContext.progress`.
    sort_by_length: batch prompts of similar length together (less padding; order-free results).

    Returns
    -------
    EvalResult, with records in the task's sample order.

    Each batch's raw outputs are logged before anything else can fail. An output whose parsing or
    scoring raises is kept as a row with ``parsed=None``, ``error`` set and ``task.error_scores`` as
    its scores (a ``RuntimeWarning`` says how many); fix the parser and :func:`rescore` the log.

    Raises
    ------
    ValueError
        For a task without samples, and for bad arguments.
    """
    if not isinstance(task, Task):
        raise ValueError(f"task must be an iclr26.evaluation.Task, got {type(task).__name__}")
    if not isinstance(model, LanguageModel):
        raise ValueError(f"model must be an iclr26.models.LanguageModel, got {type(model).__name__}")
    seed = check_int(seed, "seed")
    batch_size = check_int(batch_size, "batch_size", minimum=1)
    config = generation or task.generation
    if not isinstance(config, GenerationConfig):
        raise ValueError("generation must be an iclr26.models.GenerationConfig")
    config = GenerationConfig(**{**config.__dict__, "seed": seed})
    samples = _samples(task, limit)
    identity = model.identity
    t0 = time.perf_counter()
    own_log = log is not None and not isinstance(log, SampleLog)
    slog = SampleLog(log) if own_log else log
    try:
        prompts = [task.build_prompt(s) for s in samples]
        keys = [sample_key(task, s, identity, config, seed, p) for s, p in zip(samples, prompts)]
        done = slog.get_many(keys) if slog is not None else {}
        pending = [i for i, k in enumerate(keys) if k not in done]
        if sort_by_length:
            pending.sort(key=lambda i: _prompt_size(prompts[i]))
        batches = [pending[i : i + batch_size] for i in range(0, len(pending), batch_size)]
        new: dict[str, dict[str, Any]] = {}
        gen_seconds = 0.0
        for batch in _progress(progress, batches, len(pending), f"{task.name} ({model.name})"):
            tb = time.perf_counter()
            outs = model.generate([prompts[i] for i in batch], config)
            gen_seconds += time.perf_counter() - tb
            if len(outs) != len(batch):
                raise RuntimeError(f"model returned {len(outs)} outputs for {len(batch)} prompts")
            recs = []
            for i, out in zip(batch, outs):
                parsed, scores, error = _score_record(task, samples[i], out.text)
                recs.append(
                    {
                        "key": keys[i],
                        "task": task.name,
                        "sample_id": samples[i].id,
                        "sample_group": samples[i].group,
                        "model": identity,
                        "model_name": model.name,
                        "config": config.to_dict(),
                        "seed": seed,
                        "prompt": loggable(prompts[i]),
                        "output": out.to_dict(),
                        "parsed": parsed,
                        "scores": scores,
                        "batch_size": batch_size,
                        "error": error,
                    }
                )
            if slog is not None:
                slog.append(recs)
            new.update({r["key"]: r for r in recs})
        records = [_public(done.get(k) or new[k]) for k in keys]
    finally:
        if own_log and slog is not None:
            slog.close()
    n_errors = _warn_errors(task, records)
    return EvalResult(
        task=task.name,
        model=model.info(),
        seed=seed,
        batch_size=_batch_size_of(records),
        generation=config.to_dict(),
        metrics=task.aggregate(records),
        records=records,
        n_asked=len(pending),
        n_reused=len(samples) - len(pending),
        n_errors=n_errors,
        seconds=time.perf_counter() - t0,
        generation_seconds=gen_seconds,
        log_path=str(Path(slog.path)) if slog is not None else None,
    )


def _samples(task: Task, limit: int | None) -> list[Sample]:
    samples = task.load()
    if not samples:
        raise ValueError(f"task {task.name!r} has no samples: nothing to evaluate")
    if limit is not None:
        samples = samples[: check_int(limit, "limit", minimum=1)]
    return samples


def _public(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "key": row["key"],
        "sample_id": row["sample_id"],
        "group": row["sample_group"],
        "prompt": row["prompt"],
        "output": row["output"],
        "text": row["output"]["text"],
        "parsed": row["parsed"],
        "scores": row["scores"],
        "error": row.get("error"),
        "batch_size": row["batch_size"],
    }


def _progress(progress: bool | Callable, batches: list[list[int]], total: int, desc: str):
    if callable(progress):
        yield from progress(batches, total=len(batches), desc=desc)
        return
    from tqdm.auto import tqdm

    disable = (not progress) or os.environ.get("ICLR26_NO_PROGRESS") == "1"
    with tqdm(total=total, desc=desc, unit="sample", disable=disable, leave=False, file=sys.stderr) as bar:
        for b in batches:
            yield b
            bar.update(len(b))


def rescore(
    task: Task,
    log: str | os.PathLike | SampleLog,
    model: LanguageModel | str,
    *,
    seed: int = 0,
    limit: int | None = None,
    generation: GenerationConfig | None = None,
) -> EvalResult:
    """Re-parse and re-score saved outputs with ``task``'s current parser and scorer, without any
    model call.

    ``model`` is the model the outputs came from, its :attr:`~iclr26.models.LanguageModel.identity`,
    or its readable name when exactly one identity was logged under that name for this task. The
    samples, seed and generation settings select the rows exactly as :func:`evaluate` keyed them.
    The result's ``batch_size`` is the one the outputs were generated with (a sorted list if several).

    Raises ``ValueError`` when any sample has no saved output, or the name is ambiguous.
    """
    if not isinstance(task, Task):
        raise ValueError(f"task must be an iclr26.evaluation.Task, got {type(task).__name__}")
    if isinstance(model, LanguageModel):
        identity, info = model.identity, model.info()
    elif isinstance(model, str) and model:
        identity, info = model, {"identity": model}
    else:
        raise ValueError("model must be a LanguageModel, a model identity or a model name")
    seed = check_int(seed, "seed")
    config = generation or task.generation
    config = GenerationConfig(**{**config.__dict__, "seed": seed})
    samples = _samples(task, limit)
    t0 = time.perf_counter()
    own = not isinstance(log, SampleLog)
    if own and not Path(log).is_file():
        raise ValueError(f"no sample log at {str(log)!r}")
    slog = SampleLog(log) if own else log
    try:
        if not isinstance(model, LanguageModel):
            named = slog.identities(task.name, model)
            if len(named) > 1:
                raise ValueError(
                    f"{len(named)} different models were logged under the name {model!r} for task "
                    f"{task.name!r}; pass the model or one of its identities: {named}"
                )
            if named:
                identity, info = named[0], {"name": model, "identity": named[0]}
        prompts = [task.build_prompt(s) for s in samples]
        keys = [sample_key(task, s, identity, config, seed, p) for s, p in zip(samples, prompts)]
        rows = slog.get_many(keys)
    finally:
        if own:
            slog.close()
    missing = [s.id for s, k in zip(samples, keys) if k not in rows]
    if missing:
        raise ValueError(
            f"{len(missing)} of {len(samples)} samples have no saved output for model {identity!r} "
            f"(first: {missing[0]!r}); run evaluate() first"
        )
    records = []
    for s, k in zip(samples, keys):
        row = dict(rows[k])
        row["parsed"], row["scores"], row["error"] = _score_record(task, s, row["output"]["text"])
        records.append(_public(row))
    n_errors = _warn_errors(task, records)
    return EvalResult(
        task=task.name,
        model=info,
        seed=seed,
        batch_size=_batch_size_of(records),
        generation=config.to_dict(),
        metrics=task.aggregate(records),
        records=records,
        n_asked=0,
        n_reused=len(records),
        n_errors=n_errors,
        seconds=time.perf_counter() - t0,
        log_path=str(Path(slog.path)),
    )

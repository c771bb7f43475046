"""The benchmark as an :mod:`iclr26.evaluation` task: draft, judge each party, vote.

Drafts go through :func:`iclr26.evaluation.evaluate` (logged, resumable, batched). Each party's
judgement is logged in the same SQLite file, keyed by (judge identity, prompt, generation config),
so a rerun after a kill asks only what is missing. Judges:

- :class:`ModelJudge`: any :class:`~iclr26.models.LanguageModel` with the authors' schedule
  (3 new tokens, temperature 0, then up to 10 retries with a growing prompt suffix and temperature
  +0.1 each, then the score 4, counted separately as a fallback); each party asked alone, reusing
  its earlier prompts' KV cache, with a local model, or prompts batched per attempt otherwise;
- :class:`OracleJudge`: the party's real roll-call ``choice``; defined only for the adopted
  resolution (``task["resolution"]``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..evaluation import EvalResult, Sample, SampleLog, Task, evaluate
from ..evaluation.judge import judge_key
from ..models import GenerationConfig, LanguageModel
from ..runtime import fork_map
from ..validation import check_in, check_int
from ._data import GOALS, check_pairs, check_task
from ._embed import EmbeddingJudge
from ._prompts import (
    FALLBACK_SCORE,
    JUDGE_MAX_TOKENS,
    JUDGE_SYSTEM,
    MAX_RETRIES,
    drafting_messages,
    judge_prompt,
    parse_judge,
    retry_schedule,
)
from ._score import score_rows

#: Version of the drafting task (part of every draft's log key).
TASK_VERSION = "1"


def _parties(task: dict[str, Any]) -> list[str]:
    return [s["party_name"] for s in task["stances"]]


class OracleJudge:
    """The real vote as the judge: each party's ``choice`` (0-9, from the share of its MEPs voting
    for) on the adopted resolution. Any other text raises ``ValueError``: there is no vote on it."""

    name = "oracle"
    identity = "oracle:roll-call-choice"

    def judge(self, pairs: Sequence[tuple[dict[str, Any], str]], **_: Any) -> list[dict[str, Any]]:
        """``[(task, resolution)]`` -> per pair ``{"scores": {party: choice}, "fallback": {party: False},
        "replies": {party: []}}``."""
        out = []
        pairs = check_pairs(pairs)
        for i, (task, text) in enumerate(pairs):
            if text != task["resolution"]:
                raise ValueError(f"pairs[{i}]: the oracle judge scores only the adopted resolution")
            out.append(
                {
                    "scores": {s["party_name"]: s["choice"] for s in task["stances"]},
                    "fallback": dict.fromkeys(_parties(task), False),
                    "replies": {p: [] for p in _parties(task)},
                }
            )
        return out


@dataclass
class ModelJudge:
    """A language model scoring each party's support with the authors' judge prompt and retries.

    Two orders of work, the same prompts and replies: with a model that can reuse a prompt's KV
    cache (:meth:`iclr26.models.HFModel.reusing_prompts`) and retries allowed, each party is asked
    alone until its reply parses, as in the authors' loop, and each retry runs only the tokens its
    grown prompt adds (a four-party draft with 10 failed retries each: 95 instead of 435 s on one
    thread, docs/policon.md); otherwise every attempt's prompts are batched (``batch_size`` parties of
    one draft per call), which suits endpoints that batch.

    Parameters
    ----------
    model: the judge; max_retries: asks after the first (authors: 10); batch_size: prompts per call
    in the batched order; workers: forked processes that generate the drafts' parties (one torch
    thread each, see :func:`iclr26.runtime.fork_map`; a reply does not depend on which process
    generates it, when this process also runs one torch thread).
    """

    model: LanguageModel
    max_retries: int = MAX_RETRIES
    batch_size: int = 8
    workers: int = 1

    def __post_init__(self) -> None:
        if not isinstance(self.model, LanguageModel):
            raise ValueError(f"model must be an iclr26.models.LanguageModel, got {type(self.model).__name__}")
        self.max_retries = check_int(self.max_retries, "max_retries", minimum=0)
        self.batch_size = check_int(self.batch_size, "batch_size", minimum=1)
        self.workers = check_int(self.workers, "workers", minimum=1)

    @property
    def name(self) -> str:
        return self.model.name

    @property
    def identity(self) -> str:
        return self.model.identity

    @property
    def one_party_at_a_time(self) -> bool:
        """Whether :meth:`judge` asks each party alone, reusing its earlier prompts' KV cache."""
        return self.max_retries > 0 and hasattr(self.model, "reusing_prompts")

    def _record(self, key: str, i: int, prompt, config: GenerationConfig, out, batch: int) -> dict:
        return {
            "key": key,
            "task": "policon-judge",
            "sample_id": str(i),
            "sample_group": "",
            "model": self.identity,
            "model_name": self.name,
            "config": config.to_dict(),
            "seed": config.seed,
            "prompt": prompt,
            "output": out.to_dict(),
            "parsed": parse_judge(out.text),
            "scores": {},
            "batch_size": batch,
        }

    def _ask(
        self, prompts: list[list[dict[str, str]]], groups: list[int], temp: float, seed: int, slog, progress
    ) -> list[str]:
        """One attempt for every prompt (cached in ``slog``): the raw replies. A batch holds the prompts
        of one ``groups`` value (the parties of one draft): they share all but the party's name and
        stance, so the model runs the shared prefix once."""
        config = GenerationConfig(max_new_tokens=JUDGE_MAX_TOKENS, temperature=temp, seed=seed)
        keys = [judge_key(self.identity, p, config) for p in prompts]
        done = slog.get_many(keys) if slog is not None else {}
        todo = [i for i, k in enumerate(keys) if k not in done]
        texts = {k: r["output"]["text"] for k, r in done.items()}
        batches: list[list[int]] = []
        for i in todo:
            if batches and groups[batches[-1][0]] == groups[i] and len(batches[-1]) < self.batch_size:
                batches[-1].append(i)
            else:
                batches.append([i])

        def log_batch(b: int, outs: list) -> None:
            recs = []
            for i, out in zip(batches[b], outs):
                texts[keys[i]] = out.text
                recs.append(self._record(keys[i], i, prompts[i], config, out, self.batch_size))
            if slog is not None:
                slog.append(recs)

        fork_map(
            lambda batch: self.model.generate([prompts[i] for i in batch], config),
            batches,
            workers=self.workers,
            progress=lambda stream: progress(
                stream, total=len(batches), desc=f"judge {self.name} t={temp:.1f}"
            ),
            on_result=log_batch,
        )
        return [texts[k] for k in keys]

    def _attempt_major(self, chats: list[list[list[dict[str, str]]]], temps, groups, seed, slog, progress):
        """Every attempt's pending prompts batched: the replies per item, up to the first that parses."""
        replies: list[list[str]] = [[] for _ in chats]
        pending = list(range(len(chats)))
        for attempt, temp in enumerate(temps):
            if not pending:
                break
            texts = self._ask(
                [chats[j][attempt] for j in pending],
                [groups[j] for j in pending],
                temp,
                seed + attempt,
                slog,
                progress,
            )
            for j, text in zip(pending, texts):
                replies[j].append(text)
            pending = [j for j in pending if parse_judge(replies[j][-1]) is None]
        return replies

    def _party_major(self, chats: list[list[list[dict[str, str]]]], temps, groups, seed, slog, progress):
        """Each item asked alone until a reply parses, one draft's parties per job, the model reusing
        the KV cache of the item's previous prompt (and of the previous party's, for the shared text)."""
        configs = [
            GenerationConfig(max_new_tokens=JUDGE_MAX_TOKENS, temperature=t, seed=seed + attempt)
            for attempt, t in enumerate(temps)
        ]
        keys = [[judge_key(self.identity, c, cfg) for c, cfg in zip(item, configs)] for item in chats]
        done = slog.get_many(k for ks in keys for k in ks) if slog is not None else {}
        known = {k: r["output"]["text"] for k, r in done.items()}
        jobs = [[j for j, g in enumerate(groups) if g == group] for group in dict.fromkeys(groups)]

        def ask(job: list[int]) -> list[tuple[int, int, Any]]:
            """``(item, attempt, Generation or cached text)`` for the job's items, in asking order."""
            out = []
            with self.model.reusing_prompts():
                for j in job:
                    for attempt, cfg in enumerate(configs):
                        key = keys[j][attempt]
                        reply = (
                            known[key] if key in known else self.model.generate([chats[j][attempt]], cfg)[0]
                        )
                        out.append((j, attempt, reply))
                        if parse_judge(reply if isinstance(reply, str) else reply.text) is not None:
                            break
            return out

        replies: list[list[str]] = [[] for _ in chats]

        def log_job(_: int, asked: list[tuple[int, int, Any]]) -> None:
            recs = []
            for j, attempt, reply in asked:
                if isinstance(reply, str):
                    replies[j].append(reply)
                    continue
                replies[j].append(reply.text)
                recs.append(self._record(keys[j][attempt], j, chats[j][attempt], configs[attempt], reply, 1))
            if slog is not None:
                slog.append(recs)

        fork_map(
            ask,
            jobs,
            workers=self.workers,
            progress=lambda stream: progress(stream, total=len(jobs), desc=f"judge {self.name}"),
            on_result=log_job,
        )
        return replies

    def judge(
        self,
        pairs: Sequence[tuple[dict[str, Any], str]],
        *,
        log: SampleLog | None = None,
        seed: int = 0,
        progress: Callable | None = None,
    ) -> list[dict[str, Any]]:
        """Score every party of every ``(task, resolution)`` pair.

        Returns per pair ``{"scores": {party: 0-9}, "fallback": {party: bool}, "replies": {party:
        [raw replies]}}``; a party whose replies all failed to parse gets :data:`FALLBACK_SCORE` and
        ``fallback=True``, as in the authors' code. Attempt ``k`` samples with seed ``seed + k``: the
        retries draw afresh, as the authors' API calls do (one seed for all would repeat its draws).
        """
        progress = progress or (lambda it, **_: it)
        pairs = check_pairs(pairs)
        items = [(i, p) for i, (task, _) in enumerate(pairs) for p in _parties(task)]
        schedules = [
            retry_schedule(judge_prompt(pairs[i][0], p, pairs[i][1]), self.max_retries + 1) for i, p in items
        ]
        chats = [
            [
                [{"role": "system", "content": JUDGE_SYSTEM}, {"role": "user", "content": text}]
                for text, _ in sched
            ]
            for sched in schedules
        ]
        temps = [t for _, t in retry_schedule("", self.max_retries + 1)]
        ask = self._party_major if self.one_party_at_a_time else self._attempt_major
        replies = ask(chats, temps, [i for i, _ in items], seed, log, progress)
        out = [{"scores": {}, "fallback": {}, "replies": {}} for _ in pairs]
        for j, (i, p) in enumerate(items):
            score = parse_judge(replies[j][-1])
            out[i]["scores"][p] = FALLBACK_SCORE if score is None else score
            out[i]["fallback"][p] = score is None
            out[i]["replies"][p] = replies[j]
        return out


@dataclass
class PoliconRun:
    """What :func:`run_policon` returns: ``rows`` (one scenario row per task and goal, with the draft
    in ``responses``, the judge's ``scores``, ``fallback`` flags and raw ``replies``), the drafting
    :class:`~iclr26.evaluation.EvalResult` and the judge's name."""

    rows: list[dict[str, Any]]
    drafts: EvalResult | None
    judge: str
    outcomes: dict[str, np.ndarray] = field(default_factory=dict)


def _sample_id(task: dict[str, Any], goal: str) -> str:
    return f"{task.get('topic', '')}|{len(task['stances'])}|{task.get('id', '')}|{goal}"


def drafting_task(
    tasks: Sequence[dict[str, Any]],
    goals: Sequence[str],
    examples: Sequence[str],
    max_new_tokens: int = 512,
) -> Task:
    """The drafting step as an :class:`~iclr26.evaluation.Task`: one sample per (task, goal), prompt
    :func:`drafting_messages` with ``examples[i]`` as the few-shot resolution of ``tasks[i]``; the
    output is kept as the draft (the authors use the raw response)."""
    samples = [
        Sample(id=_sample_id(t, g), data={"task": t, "goal": g, "example": ex}, group=g)
        for t, ex in zip(tasks, examples)
        for g in goals
    ]
    return Task(
        name="policon-draft",
        samples=samples,
        build_prompt=lambda s: drafting_messages(s.data["task"], s.data["goal"], s.data["example"]),
        parse=lambda text, s: text,
        score=lambda ans, s: {},
        generation=GenerationConfig(max_new_tokens=max_new_tokens, temperature=0.0),
        version=TASK_VERSION,
    )


def pick_examples(tasks: Sequence[dict[str, Any]], pool: dict[str, list[str]], seed: int) -> list[str]:
    """One few-shot resolution per task, drawn from the pool of its topic, never the task's own adopted
    resolution (the authors may draw it; we exclude it so the draft cannot copy the answer)."""
    rng = np.random.default_rng(seed)
    out = []
    for i, t in enumerate(tasks):
        cands = [r for r in pool.get(t.get("topic", ""), []) if r != t["resolution"]]
        if not cands:
            cands = [r for rs in pool.values() for r in rs if r != t["resolution"]]
        if not cands:
            raise ValueError(f"tasks[{i}]: no example resolution other than its own in the pool")
        out.append(cands[int(rng.integers(len(cands)))])
    return out


def run_policon(
    drafter: LanguageModel | None,
    judge: ModelJudge | OracleJudge | EmbeddingJudge,
    tasks: Sequence[dict[str, Any]],
    goals: Sequence[str] = GOALS,
    seed: int = 0,
    *,
    examples: Sequence[str] | None = None,
    log: str | os.PathLike | None = None,
    batch_size: int = 8,
    max_new_tokens: int = 512,
    progress: Callable | None = None,
) -> PoliconRun:
    """Draft a resolution per (task, goal) and have ``judge`` score every party's support.

    Parameters
    ----------
    drafter: the model that drafts; ``None`` judges the adopted resolutions instead (one row per
        task and goal, the draft being ``task["resolution"]``).
    judge: :class:`ModelJudge`, :class:`OracleJudge` or a calibrated :class:`EmbeddingJudge`.
    tasks: task records (:func:`check_task`); goals: a subset of :data:`GOALS`.
    examples: the few-shot resolution per task (default: none needed when ``drafter`` is None).
    log: SQLite file for drafts and judge replies; a rerun resumes from it.
    batch_size, max_new_tokens: drafting batch and length (authors: 512 tokens, greedy). Drafts are
        asked in task order, so ``batch_size=len(goals)`` batches one task's prompts, which share
        their background and stances (the model runs that prefix once).

    Returns
    -------
    PoliconRun, its ``outcomes`` from :func:`score_rows` on its rows.
    """
    if not tasks:
        raise ValueError("tasks must not be empty")
    goals = list(goals)
    if not goals:
        raise ValueError(f"goals must not be empty; valid goals: {GOALS}")
    for g in goals:
        check_in(g, GOALS, "goals")
    tasks = [check_task(t, f"tasks[{i}]") for i, t in enumerate(tasks)]
    ids = [_sample_id(t, "") for t in tasks]
    if len(set(ids)) != len(ids):
        raise ValueError(
            "tasks must have unique (topic, party count, id) triples; duplicates: "
            f"{sorted({i for i in ids if ids.count(i) > 1})[:3]}"
        )
    if not isinstance(judge, ModelJudge | OracleJudge | EmbeddingJudge):
        raise ValueError(
            f"judge must be a ModelJudge, OracleJudge or EmbeddingJudge, got {type(judge).__name__}"
        )
    slog = SampleLog(log) if log is not None else None
    try:
        drafts = None
        if drafter is None:
            texts = [t["resolution"] for t in tasks for _ in goals]
        else:
            if examples is None or len(examples) != len(tasks):
                raise ValueError("examples must give one few-shot resolution per task when drafting")
            drafts = evaluate(
                drafting_task(tasks, goals, examples, max_new_tokens),
                drafter,
                seed=seed,
                batch_size=batch_size,
                log=slog,
                progress=progress or False,
                sort_by_length=False,  # task order: a batch of len(goals) holds one task's prompts
            )
            texts = [r["text"] for r in drafts.records]
        pairs = [(t, texts[i * len(goals) + j]) for i, t in enumerate(tasks) for j in range(len(goals))]
        kwargs = (
            {} if not isinstance(judge, ModelJudge) else {"log": slog, "seed": seed, "progress": progress}
        )
        judged = judge.judge(pairs, **kwargs)
    finally:
        if slog is not None:
            slog.close()
    rows = []
    for (task, text), jd, goal in zip(pairs, judged, [g for _ in tasks for g in goals]):
        rows.append(
            {
                "goal": goal,
                "party_num": len(task["stances"]),
                "topic": task.get("topic", ""),
                "data_id": task.get("id"),
                "weights": list(task["seat_weights"]),
                "veto_party_name": task["veto_party_name"],
                "responses": text,
                **jd,
            }
        )
    return PoliconRun(rows=rows, drafts=drafts, judge=judge.name, outcomes=score_rows(rows))

"""The two protocols on :mod:`iclr26.evaluation` (resumable: every model call is logged in SQLite), the
code run in :mod:`iclr26.sandbox`, and judging.

Direct: one prompt, the reply is judged. Code-assisted: the code prompt, the first code block of the
reply run on the dataset, then the results prompt (question, code, output); that last reply is judged.
A reply without a code block, or with an empty one, ends the item as in the authors' runner (no
results prompt): ``drop_missing_code=True`` drops it from scoring as their aggregation does (no file to
score), ``False`` scores it 0 on every criterion.
"""

from __future__ import annotations

import hashlib
import json
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from ..evaluation import Sample, SampleLog, Task, evaluate, sample_key
from ..models import Generation, GenerationConfig, LanguageModel
from ..runtime import fork_map
from ..sandbox import Sandbox
from ..store import atomic_write_text
from ..validation import check_int
from ._data import Item
from ._execute import execute_analysis
from ._judges import LLMJudge, RubricJudge, Verdict
from ._prompts import code_prompt, direct_prompt, extract_code, results_prompt

PROTOCOLS = ("direct", "code")


def item_rng(item: Item, seed: int) -> np.random.RandomState:
    """The seeded shuffle state of one item (same for its direct and code prompts)."""
    return np.random.RandomState((zlib.crc32(item.key.encode()) ^ seed) & 0xFFFFFFFF)


@dataclass
class _Request:
    """One logged evaluation: ``prompts`` (sample id -> chat) for ``model`` with ``config``."""

    name: str
    prompts: dict[str, Any]
    model: LanguageModel
    config: GenerationConfig
    batch_size: int

    def task(self) -> Task:
        return Task(
            name=f"causalpitfalls-{self.name}",
            samples=[Sample(k, {"prompt": p}) for k, p in self.prompts.items()],
            build_prompt=lambda s: s.data["prompt"],
            parse=lambda text, s: text,
            score=lambda a, s: {},
            generation=self.config,
        )


class _Replayed(LanguageModel):
    """``model`` as :func:`evaluate` sees it when its outputs were computed elsewhere (in the
    workers): same name and identity (so the log keys are the model's), outputs looked up by prompt."""

    def __init__(self, model: LanguageModel, outputs: dict[str, Generation]):
        self.name, self.backend, self._model, self._outputs = model.name, model.backend, model, outputs

    @property
    def identity(self) -> str:
        return self._model.identity

    def info(self) -> dict[str, Any]:
        return self._model.info()

    def generate(self, prompts, config=None) -> list[Generation]:
        return [self._outputs[_prompt_id(p)] for p in prompts]

    def loglikelihood(self, contexts, continuations):  # pragma: no cover - never asked by evaluate
        raise NotImplementedError


def _prompt_id(prompt: Any) -> str:
    return json.dumps(prompt, sort_keys=True, ensure_ascii=False)


def _pending(req: _Request, seed: int, log: Path | None) -> list[str]:
    """The sample ids of ``req`` not yet in ``log``, keyed as :func:`evaluate` keys them, shortest
    prompt first (as :func:`evaluate` batches them)."""
    task = req.task()
    config = replace(req.config, seed=seed)
    ids = list(req.prompts)
    if log is not None and log.exists():
        keys = {
            sample_key(task, s, req.model.identity, config, seed, req.prompts[s.id]): s.id
            for s in task.samples
        }
        with SampleLog(log) as slog:
            done = {keys[k] for k in slog.get_many(keys)}
        ids = [i for i in ids if i not in done]
    return sorted(ids, key=lambda i: sum(len(m["content"]) for m in req.prompts[i]))


def _ask(
    requests: Sequence[_Request], *, seed: int, log: Path | None, workers: int, progress: Any
) -> list[dict[str, str]]:
    """One reply per prompt of every request (in ``requests`` order).

    The model calls of the prompts not yet logged run as one job per batch in ``workers`` forked
    single-thread processes (:func:`iclr26.runtime.fork_map`; a greedy output depends on its prompt
    only, not on the worker or the order); then each request goes through
    :func:`iclr26.evaluation.evaluate` here, which logs every sample (resume) from those outputs.
    """
    jobs = []
    for r, req in enumerate(requests):
        ids = _pending(req, seed, log)
        jobs += [(r, ids[i : i + req.batch_size]) for i in range(0, len(ids), req.batch_size)]

    def generate(job: tuple[int, list[str]]) -> list[Generation]:
        req = requests[job[0]]
        return req.model.generate([req.prompts[i] for i in job[1]], replace(req.config, seed=seed))

    wrap = None
    if progress is True:
        from tqdm.auto import tqdm

        progress = partial(tqdm, leave=False)
    if callable(progress):  # evaluate's convention: f(iterable, total=, desc=)
        wrap = partial(progress, total=len(jobs), desc=f"causalpitfalls model calls ({workers} workers)")
    outputs: list[dict[str, Generation]] = [{} for _ in requests]
    for (r, ids), outs in zip(jobs, fork_map(generate, jobs, workers=workers, progress=wrap), strict=True):
        outputs[r].update({_prompt_id(requests[r].prompts[i]): g for i, g in zip(ids, outs, strict=True)})
    replies = []
    for req, outs in zip(requests, outputs, strict=True):
        if not req.prompts:
            replies.append({})
            continue
        res = evaluate(
            req.task(),
            _Replayed(req.model, outs),
            seed=seed,
            batch_size=req.batch_size,
            log=log,
            progress=False,
        )
        replies.append({rec["sample_id"]: rec["text"] for rec in res.records})
    return replies


def _chat(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


@dataclass
class BenchmarkResult:
    """Per-(item, protocol) records: prompts, replies, code, execution, each judge's verdict."""

    records: list[dict[str, Any]]
    judges: list[str]
    seconds: dict[str, float] = field(default_factory=dict)

    def scores(self, judge: str, *, drop_missing_code: bool = True) -> list[dict[str, Any]]:
        """Records for :func:`causal_reliability` under ``judge``."""
        out = []
        for r in self.records:
            v = r["verdicts"].get(judge)
            if v is None:
                if drop_missing_code:
                    continue
                v = {"scores": [0] * r["n_criteria"]}
            out.append(
                {**{k: r[k] for k in ("key", "challenge", "difficulty", "protocol")}, "scores": v["scores"]}
            )
        return out


def _code_stage(items, codes, sandbox, time_limit, cache: dict) -> dict[str, dict[str, Any]]:
    out = {}
    for it in items:
        code = codes[it.key]
        if code is None or not code:
            out[it.key] = {"status": "no_block" if code is None else "empty", "output": None}
            continue
        h = hashlib.sha256(f"{it.key}\0{code}".encode()).hexdigest()
        if h not in cache:
            a = execute_analysis(code, it, sandbox=sandbox, time_limit=time_limit)
            cache[h] = {"status": a.status, "output": a.output, "execution": a.record()}
        out[it.key] = cache[h]
    return out


def _judge_requests(judges, pairs: dict[str, tuple[dict, str]]) -> list[_Request]:
    """One request per LLM judge over ``pairs`` (id -> (filled rubric, response))."""
    keys = list(pairs)
    return [
        _Request(
            "judge", dict(zip(keys, j.prompts([pairs[k] for k in keys]))), j.model, j.config, j.batch_size
        )
        for j in judges
        if isinstance(j, LLMJudge)
    ]


def _verdicts(judges, pairs, replies: list[dict[str, str]]) -> dict[str, dict[str, Verdict]]:
    """Each judge's verdict per pair: the LLM judges' from ``replies`` (one dict per LLM judge, in
    order), the others computed here."""
    keys, plist = list(pairs), list(pairs.values())
    llm_replies = iter(replies)
    out = {}
    for j in judges:
        if isinstance(j, LLMJudge):
            texts = next(llm_replies)
            verdicts = j.verdicts(plist, [texts[k] for k in keys])
        else:
            verdicts = j.judge(plist)
        out[j.name] = dict(zip(keys, verdicts))
    return out


def run_benchmark(
    model: LanguageModel,
    items: Sequence[Item],
    *,
    judges: Sequence[RubricJudge | LLMJudge] = (),
    seed: int = 0,
    max_new_tokens: int = 256,
    code_max_new_tokens: int | None = None,
    batch_size: int = 4,
    log_dir: str | Path | None = None,
    fill_placeholders: bool = False,
    protocols: Sequence[str] = PROTOCOLS,
    time_limit: float = 60.0,
    workers: int = 2,
    progress: bool | Callable = False,
) -> BenchmarkResult:
    """Run both protocols of the benchmark on ``items`` with ``model``, then every judge.

    Parameters
    ----------
    model : LanguageModel
        The subject (greedy decoding, ``max_new_tokens`` per reply; the authors used temperature 0 and
        2048 tokens); ``code_max_new_tokens`` for the code-generation reply (default the same): a
        reply cut before its closing fence has no code block.
    items : list of Item
        From :func:`load_challenges` or :func:`generate_challenges`.
    judges : list of RubricJudge / LLMJudge
        Default: one :class:`RubricJudge`.
    log_dir : path, optional
        ``samples.sqlite`` (every prompt and reply; resume), ``executions.json`` (code runs, cached by
        item and code hash) and ``records.json``, all written by this process.
    workers : int
        Processes for the model calls (default 2, for a 2-core machine): each batch of prompts is a
        job of a forked single-torch-thread worker (:func:`iclr26.runtime.fork_map`), in three rounds
        (direct and code replies; results replies and the LLM judges on direct replies; the LLM
        judges on code-assisted replies). Greedy outputs, hence every record, do not depend on it.
        The code runs in the sandbox here, between the rounds (no sandbox is alive at a fork).
    """
    import time

    if not isinstance(model, LanguageModel):
        raise ValueError(f"model: expected an iclr26.models.LanguageModel, got {type(model).__name__}")
    if not items or not all(isinstance(i, Item) for i in items):
        raise ValueError("items: expected a non-empty list of Item")
    for p in protocols:
        if p not in PROTOCOLS:
            raise ValueError(f"protocols: unknown protocol {p!r}; expected one of {PROTOCOLS}")
    workers = check_int(workers, "workers", minimum=1)
    judges = list(judges) or [RubricJudge()]
    log_dir = Path(log_dir) if log_dir is not None else None
    if log_dir is not None:
        log_dir.mkdir(parents=True, exist_ok=True)
    ask = partial(
        _ask,
        seed=seed,
        log=None if log_dir is None else log_dir / "samples.sqlite",
        workers=workers,
        progress=progress,
    )
    config = GenerationConfig(max_new_tokens=max_new_tokens, temperature=0.0)
    code_config = GenerationConfig(max_new_tokens=code_max_new_tokens or max_new_tokens, temperature=0.0)
    fp = {"fill_placeholders": fill_placeholders}
    t: dict[str, float] = {}
    t0 = time.perf_counter()
    prompts = {
        p: {it.key: build(it, item_rng(it, seed), **fp) for it in items}
        for p, build in (("direct", direct_prompt), ("code", code_prompt))
        if p in protocols
    }
    requests = [
        _Request(p, {k: _chat(x) for k, x in prompts[p].items()}, model, cfg, batch_size)
        for p, cfg in (("direct", config), ("code", code_config))
        if p in prompts
    ]
    replies = dict(zip(prompts, ask(requests)))
    t["direct_and_code_generation"] = time.perf_counter() - t0
    records, direct_pairs, code_pairs = [], {}, {}
    for it in items if "direct" in replies else ():
        text = replies["direct"][it.key].strip()
        records.append(_record(it, "direct", {"prompt": prompts["direct"][it.key], "response": text}))
        direct_pairs[f"direct:{it.key}"] = (it.rubric, text)
    runs, rprompts = {}, {}
    if "code" in replies:
        t0 = time.perf_counter()
        codes = {k: extract_code(v) for k, v in replies["code"].items()}
        cache_path = None if log_dir is None else log_dir / "executions.json"
        cache = json.loads(cache_path.read_text()) if cache_path and cache_path.exists() else {}
        with Sandbox(time_limit=time_limit, memory_limit=2048 << 20, output_limit=16 << 20) as sb:
            runs = _code_stage(items, codes, sb, time_limit, cache)
        if cache_path:
            atomic_write_text(cache_path, json.dumps(cache))
        t["execution"] = time.perf_counter() - t0
        ran = [it for it in items if runs[it.key]["output"] is not None]
        rprompts = {it.key: results_prompt(it, codes[it.key], runs[it.key]["output"], **fp) for it in ran}
    t0 = time.perf_counter()
    results_request = _Request(
        "results", {k: _chat(p) for k, p in rprompts.items()}, model, config, batch_size
    )
    rreplies, *direct_judged = ask([results_request, *_judge_requests(judges, direct_pairs)])
    t["results_and_direct_judging"] = time.perf_counter() - t0
    for it in items if "code" in replies else ():
        run = runs[it.key]
        rec = {
            "prompt": prompts["code"][it.key],
            "code_reply": replies["code"][it.key],
            "code": codes[it.key],
            "code_status": run["status"],
            "execution_output": run["output"],
            "execution": run.get("execution"),
            "results_prompt": rprompts.get(it.key),
            "response": rreplies[it.key].strip() if it.key in rreplies else None,
        }
        records.append(_record(it, "code", rec))
        if rec["response"] is not None:
            code_pairs[f"code:{it.key}"] = (it.rubric, rec["response"])
    t0 = time.perf_counter()
    code_judged = ask(_judge_requests(judges, code_pairs))
    verdicts = _verdicts(judges, direct_pairs, direct_judged)
    for name, v in _verdicts(judges, code_pairs, code_judged).items():
        verdicts[name].update(v)
    t["code_judging"] = time.perf_counter() - t0
    for r in records:
        pk = f"{r['protocol']}:{r['key']}"
        r["verdicts"] = {
            j: {"scores": v[pk].scores, "invalid": v[pk].invalid, "raw": v[pk].raw}
            for j, v in verdicts.items()
            if pk in v
        }
    if log_dir is not None:
        atomic_write_text(log_dir / "records.json", json.dumps(records, default=str, indent=1))
    return BenchmarkResult(records, [j.name for j in judges], t)


def _record(it: Item, protocol: str, extra: dict[str, Any]) -> dict[str, Any]:
    return {
        "key": it.key,
        "challenge": it.challenge,
        "category": it.category,
        "dataset": it.dataset,
        "difficulty": it.difficulty,
        "protocol": protocol,
        "n_criteria": len(it.rubric["criteria"]),
        **extra,
    }

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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..evaluation import Sample, Task, evaluate
from ..models import GenerationConfig, LanguageModel
from ..sandbox import Sandbox
from ._data import Item
from ._execute import execute_analysis
from ._judges import LLMJudge, RubricJudge, Verdict
from ._prompts import code_prompt, direct_prompt, extract_code, results_prompt

PROTOCOLS = ("direct", "code")


def item_rng(item: Item, seed: int) -> np.random.RandomState:
    """The seeded shuffle state of one item (same for its direct and code prompts)."""
    return np.random.RandomState((zlib.crc32(item.key.encode()) ^ seed) & 0xFFFFFFFF)


def _ask(
    name: str, prompts: dict[str, Any], model: LanguageModel, config: GenerationConfig, opts: dict
) -> dict[str, str]:
    """Generate one reply per prompt through :func:`iclr26.evaluation.evaluate` (logged, resumable)."""
    if not prompts:
        return {}
    samples = [Sample(k, {"prompt": p}) for k, p in prompts.items()]
    task = Task(
        name=f"causalpitfalls-{name}",
        samples=samples,
        build_prompt=lambda s: s.data["prompt"],
        parse=lambda text, s: text,
        score=lambda a, s: {},
        generation=config,
    )
    res = evaluate(task, model, **opts)
    return {r["sample_id"]: r["text"] for r in res.records}


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


def _judge(judges, pairs: dict[str, tuple[dict, str]], judge_opts: dict) -> dict[str, dict[str, Verdict]]:
    keys = list(pairs)
    out = {}
    for j in judges:
        plist = [pairs[k] for k in keys]
        if isinstance(j, LLMJudge):
            prompts = dict(zip(keys, j.prompts(plist)))
            replies = _ask("judge", prompts, j.model, j.config, {**judge_opts, "batch_size": j.batch_size})
            verdicts = j.verdicts(plist, [replies[k] for k in keys])
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
        item and code hash) and ``records.json``.
    """
    import time

    if not isinstance(model, LanguageModel):
        raise ValueError(f"model: expected an iclr26.models.LanguageModel, got {type(model).__name__}")
    if not items or not all(isinstance(i, Item) for i in items):
        raise ValueError("items: expected a non-empty list of Item")
    for p in protocols:
        if p not in PROTOCOLS:
            raise ValueError(f"protocols: unknown protocol {p!r}; expected one of {PROTOCOLS}")
    judges = list(judges) or [RubricJudge()]
    log_dir = Path(log_dir) if log_dir is not None else None
    if log_dir is not None:
        log_dir.mkdir(parents=True, exist_ok=True)
    opts = {
        "seed": seed,
        "batch_size": batch_size,
        "log": None if log_dir is None else log_dir / "samples.sqlite",
        "progress": progress,
    }
    config = GenerationConfig(max_new_tokens=max_new_tokens, temperature=0.0)
    fp = {"fill_placeholders": fill_placeholders}
    t: dict[str, float] = {}
    records, pairs = [], {}
    t0 = time.perf_counter()
    if "direct" in protocols:
        prompts = {it.key: direct_prompt(it, item_rng(it, seed), **fp) for it in items}
        replies = _ask("direct", {k: _chat(p) for k, p in prompts.items()}, model, config, opts)
        for it in items:
            text = replies[it.key].strip()
            records.append(_record(it, "direct", {"prompt": prompts[it.key], "response": text}))
            pairs[f"direct:{it.key}"] = (it.rubric, text)
    t["direct"] = time.perf_counter() - t0
    if "code" in protocols:
        t0 = time.perf_counter()
        prompts = {it.key: code_prompt(it, item_rng(it, seed), **fp) for it in items}
        code_config = GenerationConfig(max_new_tokens=code_max_new_tokens or max_new_tokens, temperature=0.0)
        replies = _ask("code", {k: _chat(p) for k, p in prompts.items()}, model, code_config, opts)
        codes = {k: extract_code(v) for k, v in replies.items()}
        t["code_generation"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        cache_path = None if log_dir is None else log_dir / "executions.json"
        cache = json.loads(cache_path.read_text()) if cache_path and cache_path.exists() else {}
        with Sandbox(time_limit=time_limit, memory_limit=2048 << 20, output_limit=16 << 20) as sb:
            runs = _code_stage(items, codes, sb, time_limit, cache)
        if cache_path:
            cache_path.write_text(json.dumps(cache))
        t["execution"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        ran = [it for it in items if runs[it.key]["output"] is not None]
        rprompts = {it.key: results_prompt(it, codes[it.key], runs[it.key]["output"], **fp) for it in ran}
        rreplies = _ask("results", {k: _chat(p) for k, p in rprompts.items()}, model, config, opts)
        for it in items:
            run = runs[it.key]
            rec = {
                "prompt": prompts[it.key],
                "code_reply": replies[it.key],
                "code": codes[it.key],
                "code_status": run["status"],
                "execution_output": run["output"],
                "execution": run.get("execution"),
                "results_prompt": rprompts.get(it.key),
                "response": rreplies[it.key].strip() if it.key in rreplies else None,
            }
            records.append(_record(it, "code", rec))
            if rec["response"] is not None:
                pairs[f"code:{it.key}"] = (it.rubric, rec["response"])
        t["results"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    verdicts = _judge(judges, pairs, {"seed": seed, "log": opts["log"], "progress": progress})
    t["judging"] = time.perf_counter() - t0
    for r in records:
        pk = f"{r['protocol']}:{r['key']}"
        r["verdicts"] = {
            j: {"scores": v[pk].scores, "invalid": v[pk].invalid, "raw": v[pk].raw}
            for j, v in verdicts.items()
            if pk in v
        }
    if log_dir is not None:
        (log_dir / "records.json").write_text(json.dumps(records, default=str, indent=1))
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

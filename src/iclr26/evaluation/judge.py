"""Model judges: a model grades another model's answers with a rubric.

A :class:`Judge` turns ``{"question", "answer", "reference"}`` into a rubric prompt, asks its model,
and parses a verdict: ``"binary"`` (``Verdict: yes|no`` → 1/0), ``"scale"`` (``Score: N``, 0–10) or
``"criteria"`` (one ``name: 0|1`` line per criterion). Judge calls are logged and cached like samples,
in the same append-only SQLite log, keyed by (judge model identity, the exact prompt, generation
config): re-scoring a run with another judge re-uses the answers and calls only the new judge, and
asking the same judge again calls nothing. :func:`judge_result` adds the verdicts to an
:class:`~iclr26.evaluation.EvalResult` (its ``judge`` field records which judge scored it).

:func:`parse_judge_spec` reads the command-line form (``openai:MODEL@URL``, ``hf:PATH``,
``embedded``); :func:`load_judge_model` loads it; :func:`agreement` compares two judges (Cohen's κ and
raw agreement, with bootstrap intervals over items).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..models import GenerationConfig, LanguageModel
from ..validation import check_int
from ._log import SampleLog
from ._runner import EvalResult, _progress
from ._task import Sample, Task
from ._toolbox import cap_text
from .agent import model_identity

__all__ = [
    "JUDGE_KINDS",
    "Judge",
    "JudgeSpec",
    "agreement",
    "judge_key",
    "judge_result",
    "load_judge_model",
    "parse_judge_spec",
    "parse_verdict",
]

JUDGE_KINDS = ("binary", "scale", "criteria")
DEFAULT_OPENAI_URL = "https://api.openai.com/v1"

_INSTRUCTIONS = {
    "binary": "End your reply with one line: `Verdict: yes` if the answer meets the rubric, "
    "`Verdict: no` if it does not.",
    "scale": "End your reply with one line: `Score: N`, where N is an integer from 0 (worst) to 10 (best).",
    "criteria": "For each criterion below, write one line `criterion: 1` if the answer meets it or "
    "`criterion: 0` if it does not, using the criterion names exactly:",
}
_YES = {"yes": 1.0, "pass": 1.0, "correct": 1.0, "true": 1.0, "1": 1.0}
_NO = {"no": 0.0, "fail": 0.0, "incorrect": 0.0, "false": 0.0, "0": 0.0}
_DECOR = r"[\s*`_]*"  # spaces and markdown emphasis around a label or value
_BINARY = re.compile(
    rf"verdict{_DECOR}[:=]?{_DECOR}(yes|no|pass|fail|correct|incorrect|true|false|1|0)\b", re.I
)
_SCALE = re.compile(rf"score{_DECOR}[:=]?{_DECOR}(\d+(?:\.\d+)?)(?![\d.])", re.I)


def parse_verdict(
    text: str, kind: str, criteria: Sequence[str] = ()
) -> float | dict[str, float | None] | None:
    """Read a verdict from a judge's reply (the last one when it gives several).

    ``"binary"`` → 1.0 / 0.0 (``Verdict: yes|no``; a reply that *is* just yes/no counts);
    ``"scale"`` → the number after ``Score:`` in [0, 10]; ``"criteria"`` → ``{criterion: 1.0 | 0.0 |
    None}`` from ``criterion: 1|0|yes|no`` lines. ``None`` (or a ``None`` criterion) means the reply
    could not be parsed.
    """
    if kind == "binary":
        hits = _BINARY.findall(text)
        if hits:
            word = hits[-1].lower()
            return _YES.get(word, _NO.get(word))
        bare = text.strip().strip(".!*`'\" ").lower()
        return _YES.get(bare, _NO.get(bare))
    if kind == "scale":
        hits = [float(h) for h in _SCALE.findall(text)]
        return hits[-1] if hits and 0 <= hits[-1] <= 10 else None
    if kind == "criteria":
        out: dict[str, float | None] = {}
        for c in criteria:
            pat = re.compile(
                rf"^[\s*`_#-]*{re.escape(c)}{_DECOR}[:=]{_DECOR}(1|0|yes|no|true|false)\b", re.I | re.M
            )
            hits = pat.findall(text)
            out[c] = (_YES.get(hits[-1].lower(), _NO.get(hits[-1].lower()))) if hits else None
        return out
    raise ValueError(f"kind must be one of {JUDGE_KINDS}, got {kind!r}")


@dataclass
class Judge:
    """A model that grades answers with a rubric.

    Parameters
    ----------
    model: the judge model (any backend).
    rubric: what a good answer is (the judge's instructions, in the system message).
    kind: ``"binary"``, ``"scale"`` (0–10) or ``"criteria"`` (per-criterion 0/1).
    criteria: the criterion names (``kind="criteria"`` only).
    generation: the judge's generation settings (greedy by default).
    max_input_chars: each input (question, answer, reference) is cut to this many characters, with a
        marker, before it reaches the prompt.
    spec: the command-line spec the judge came from (recorded in results).
    """

    model: LanguageModel
    rubric: str
    kind: str = "binary"
    criteria: tuple[str, ...] = ()
    generation: GenerationConfig = field(default_factory=lambda: GenerationConfig(max_new_tokens=64))
    max_input_chars: int = 8000
    spec: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.model, LanguageModel):
            raise ValueError(f"model must be an iclr26.models.LanguageModel, got {type(self.model).__name__}")
        if self.kind not in JUDGE_KINDS:
            raise ValueError(f"kind must be one of {JUDGE_KINDS}, got {self.kind!r}")
        if not isinstance(self.rubric, str) or not self.rubric.strip():
            raise ValueError("rubric must be a non-empty string")
        self.criteria = tuple(self.criteria)
        if self.kind == "criteria":
            if not self.criteria or not all(isinstance(c, str) and c.strip() for c in self.criteria):
                raise ValueError("kind='criteria' needs a non-empty sequence of criterion names")
            if len(set(self.criteria)) != len(self.criteria):
                raise ValueError("criteria must be unique")
        elif self.criteria:
            raise ValueError(f"criteria are only used with kind='criteria', not {self.kind!r}")
        if not isinstance(self.generation, GenerationConfig):
            raise ValueError("generation must be an iclr26.models.GenerationConfig")
        self.max_input_chars = check_int(self.max_input_chars, "max_input_chars", minimum=1)

    @classmethod
    def from_spec(
        cls,
        spec: str,
        rubric: str,
        *,
        api_key_env: str | None = None,
        device: str | None = None,
        **kwargs: Any,
    ) -> Judge:
        """A judge from a ``--judge`` spec (:func:`parse_judge_spec`; the model from
        :func:`load_judge_model`); ``kwargs`` go to :class:`Judge` (``kind``, ``criteria``, ...)."""
        return cls(
            load_judge_model(spec, api_key_env=api_key_env, device=device), rubric, spec=spec, **kwargs
        )

    @property
    def identity(self) -> str:
        return model_identity(self.model)

    def prompt(self, question: str, answer: str, reference: str | None = None) -> list[dict[str, str]]:
        """The judge's messages for one answer (inputs capped at ``max_input_chars``)."""
        parts = []
        for label, value in (
            ("Question", question),
            ("Reference answer", reference),
            ("Answer to grade", answer),
        ):
            if value is None:
                continue
            if not isinstance(value, str):
                raise ValueError(f"judge input {label!r} must be a string, got {type(value).__name__}")
            parts.append(f"{label}:\n{cap_text(value, self.max_input_chars)[0]}")
        instr = _INSTRUCTIONS[self.kind]
        if self.kind == "criteria":
            instr += "\n" + "\n".join(f"- {c}" for c in self.criteria)
        system = f"You are a careful, strict grader.\n\nRubric:\n{self.rubric.strip()}"
        return [
            {"role": "system", "content": system},
            {"role": "user", "content": "\n\n".join(parts) + "\n\n" + instr},
        ]

    def info(self) -> dict[str, Any]:
        """Which judge this is: spec, model provenance, kind, criteria, rubric hash, generation."""
        return {
            "spec": self.spec,
            "identity": self.identity,
            "model": self.model.info(),
            "kind": self.kind,
            "criteria": list(self.criteria),
            "rubric_sha256": hashlib.sha256(self.rubric.encode()).hexdigest()[:16],
            "generation": self.generation.to_dict(),
            "max_input_chars": self.max_input_chars,
        }

    def scores(self, verdict: Any, prefix: str = "judge") -> dict[str, float]:
        """Scores from a verdict: ``prefix`` (the verdict; the criteria's mean for ``"criteria"``),
        ``prefix.<criterion>``, and ``prefix_parsed`` (1 when the reply was read). An unreadable
        verdict (or criterion) scores 0."""
        if self.kind == "criteria":
            vals = {c: (verdict or {}).get(c) for c in self.criteria}
            out = {f"{prefix}.{c}": float(v or 0.0) for c, v in vals.items()}
            out[prefix] = float(np.mean([v or 0.0 for v in vals.values()]))
            out[f"{prefix}_parsed"] = float(all(v is not None for v in vals.values()))
            return out
        return {prefix: float(verdict or 0.0), f"{prefix}_parsed": float(verdict is not None)}

    def grade(
        self,
        items: Sequence[dict[str, str | None]],
        *,
        log: str | os.PathLike | SampleLog | None = None,
        ids: Sequence[str] | None = None,
        batch_size: int = 8,
        progress: bool | Callable = False,
    ) -> list[dict[str, Any]]:
        """Grade ``items`` (dicts with ``question``, ``answer`` and optional ``reference``).

        Verdicts already in ``log`` (same judge identity, prompt and generation config) are read back;
        only the others are asked (identical prompts once), in batches, and logged as they finish.
        Returns one dict per item: ``key``, ``verdict``, ``text`` (the judge's raw reply), ``parsed``,
        ``cached`` (read from the log) and ``asked`` (this call asked the judge for it).
        """
        batch_size = check_int(batch_size, "batch_size", minimum=1)
        if ids is not None and len(ids) != len(items):
            raise ValueError(f"ids must have one entry per item ({len(items)}), got {len(ids)}")
        prompts = []
        for i, it in enumerate(items):
            if not isinstance(it, dict) or "answer" not in it:
                raise ValueError(f"items[{i}] must be a dict with at least 'answer' (and 'question')")
            prompts.append(self.prompt(it.get("question") or "", it["answer"], it.get("reference")))
        keys = [judge_key(self.identity, p, self.generation) for p in prompts]
        own = log is not None and not isinstance(log, SampleLog)
        slog = SampleLog(log) if own else log
        try:
            done = slog.get_many(keys) if slog is not None else {}
            first = {k: i for i, k in reversed(list(enumerate(keys)))}  # identical prompts: asked once
            pending = sorted(i for k, i in first.items() if k not in done)
            new: dict[str, dict[str, Any]] = {}
            batches = [pending[i : i + batch_size] for i in range(0, len(pending), batch_size)]
            for batch in _progress(progress, batches, len(pending), f"judge ({self.model.name})"):
                outs = self.model.generate([prompts[i] for i in batch], self.generation)
                recs = []
                for i, out in zip(batch, outs):
                    verdict = parse_verdict(out.text, self.kind, self.criteria)
                    recs.append(
                        {
                            "key": keys[i],
                            "task": f"judge:{self.kind}",
                            "sample_id": str(ids[i]) if ids is not None else str(i),
                            "sample_group": "",
                            "model": self.identity,
                            "model_name": self.model.name,
                            "config": self.generation.to_dict(),
                            "seed": int(self.generation.seed),
                            "prompt": prompts[i],
                            "output": out.to_dict(),
                            "parsed": verdict,
                            "scores": self.scores(verdict),
                            "batch_size": batch_size,
                        }
                    )
                if slog is not None:
                    slog.append(recs)
                new.update({r["key"]: r for r in recs})
        finally:
            if own and slog is not None:
                slog.close()
        asked = set(pending)
        results = []
        for i, k in enumerate(keys):
            row = done.get(k) or new[k]
            verdict = parse_verdict(row["output"]["text"], self.kind, self.criteria)
            results.append(
                {
                    "key": k,
                    "verdict": verdict,
                    "text": row["output"]["text"],
                    "parsed": verdict is not None
                    and (self.kind != "criteria" or all(v is not None for v in verdict.values())),
                    "cached": k in done,
                    "asked": i in asked,
                }
            )
        return results


def judge_key(identity: str, prompt: list[dict[str, str]], config: GenerationConfig) -> str:
    """The cache key of one judge call: a hash of (judge model identity, prompt, generation config)."""
    blob = json.dumps(
        {"kind": "judge", "model": identity, "prompt": prompt, "config": config.to_dict()},
        sort_keys=True,
        ensure_ascii=False,
    )
    return hashlib.sha256(blob.encode()).hexdigest()


def judge_result(
    result: EvalResult,
    task: Task,
    judge: Judge,
    inputs: Callable[[dict[str, Any], Sample], dict[str, str | None]],
    *,
    log: str | os.PathLike | SampleLog | None = None,
    prefix: str = "judge",
    batch_size: int = 8,
    progress: bool | Callable = False,
) -> EvalResult:
    """Score ``result``'s records with ``judge``; return a copy with the verdicts added.

    ``inputs(record, sample)`` gives the judge's ``question``, ``answer`` and optional ``reference``
    for one record (a record of :func:`~iclr26.evaluation.evaluate` or of
    :func:`~iclr26.evaluation.agent.run_agent`). Each record gains ``judge`` (verdict, raw reply) and
    the :meth:`Judge.scores` under ``prefix``; metrics are re-aggregated with ``task.aggregate``; the
    result's ``judge`` field records the judge (:meth:`Judge.info`) and how many calls were asked vs
    read from ``log``. The answers are never regenerated.
    """
    if not isinstance(result, EvalResult):
        raise ValueError(f"result must be an EvalResult, got {type(result).__name__}")
    if not isinstance(judge, Judge):
        raise ValueError(f"judge must be a Judge, got {type(judge).__name__}")
    by_id = {s.id: s for s in task.load()}
    missing = [r["sample_id"] for r in result.records if r["sample_id"] not in by_id]
    if missing:
        raise ValueError(f"result holds samples that task {task.name!r} does not (first: {missing[0]!r})")
    t0 = time.perf_counter()
    items = [inputs(r, by_id[r["sample_id"]]) for r in result.records]
    graded = judge.grade(
        items, log=log, ids=[r["sample_id"] for r in result.records], batch_size=batch_size, progress=progress
    )
    records = []
    for r, g in zip(result.records, graded):
        scores = {
            k: v
            for k, v in r["scores"].items()
            if k != prefix and not k.startswith((f"{prefix}.", f"{prefix}_"))
        }
        records.append(
            {
                **r,
                "scores": {**scores, **judge.scores(g["verdict"], prefix)},
                prefix: {"verdict": g["verdict"], "text": g["text"], "key": g["key"]},
            }
        )
    n_asked = sum(g["asked"] for g in graded)
    return replace(
        result,
        records=records,
        metrics=task.aggregate(records),
        judge={
            **judge.info(),
            "n_asked": n_asked,
            "n_reused": len(graded) - n_asked,
            "n_unparsed": sum(not g["parsed"] for g in graded),
            "seconds": time.perf_counter() - t0,
        },
    )


# ---------------------------------------------------------------------- the --judge spec
@dataclass(frozen=True)
class JudgeSpec:
    """A parsed ``--judge`` value: ``backend`` (``"openai"``, ``"hf"`` or ``"embedded"``) and, as the
    backend needs, the ``model`` name and server ``url`` or the local ``path``."""

    backend: str
    model: str | None = None
    url: str | None = None
    path: str | None = None
    text: str = ""


def parse_judge_spec(spec: str) -> JudgeSpec:
    """Read ``openai:MODEL@URL`` (``@URL`` optional: the OpenAI API), ``hf:PATH`` or ``embedded``.

    Raises ``ValueError`` naming the accepted forms for anything else. No key goes in a spec: the
    HTTP backend reads it from an environment variable.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError("the judge spec must be a non-empty string: openai:MODEL@URL, hf:PATH or embedded")
    spec = spec.strip()
    if spec == "embedded":
        return JudgeSpec("embedded", text=spec)
    backend, sep, rest = spec.partition(":")
    if backend == "hf" and sep and rest:
        return JudgeSpec("hf", path=rest, text=spec)
    if backend == "openai" and sep and rest:
        model, at, url = rest.partition("@http")
        if not model:
            raise ValueError(f"judge spec {spec!r} names no model: use openai:MODEL@URL")
        url = ("http" + url) if at else DEFAULT_OPENAI_URL
        if "@" in url:
            raise ValueError(
                "the judge URL must not hold credentials; put the key in an environment variable"
            )
        return JudgeSpec("openai", model=model, url=url, text=spec)
    raise ValueError(f"unknown judge spec {spec!r}: expected openai:MODEL@URL, hf:PATH or embedded")


def load_judge_model(
    spec: str | JudgeSpec, *, api_key_env: str | None = None, device: str | None = None
) -> LanguageModel:
    """The judge model of a spec (never downloads: ``hf:PATH`` must be a local folder).

    An ``openai:`` judge sends a key only when ``api_key_env`` names the environment variable that
    holds it (no default: a key is never sent to a server nobody chose it for); the key is read at
    each request, never stored or logged."""
    js = parse_judge_spec(spec) if isinstance(spec, str) else spec
    if js.backend == "embedded":
        from ..models import load_embedded_model

        return load_embedded_model(device=device)
    if js.backend == "hf":
        from ..models import HFModel

        return HFModel.from_pretrained(js.path, device=device)
    from ..models import OpenAIModel

    return OpenAIModel(js.url, js.model, api_key_env=api_key_env)


# ---------------------------------------------------------------------- agreement
def _kappa(a: np.ndarray, b: np.ndarray) -> float:
    if len(a) == 0:
        return float("nan")
    k = int(max(a.max(), b.max())) + 1
    pa = np.bincount(a, minlength=k) / len(a)
    pb = np.bincount(b, minlength=k) / len(b)
    po = float(np.mean(a == b))
    pe = float(pa @ pb)
    return (po - pe) / (1 - pe) if pe < 1 else float("nan")


def agreement(
    a: Sequence[Any], b: Sequence[Any], *, n_boot: int = 1000, level: float = 0.95, seed: int = 0
) -> dict[str, Any]:
    """Agreement between two judges' labels of the same items: Cohen's κ and raw agreement.

    Labels are any hashable values (a 0–10 scale is compared as categories: bin it first for a
    coarser κ); items where either label is ``None`` (an unparsed verdict) are dropped and counted
    (``n_dropped``); with no item left, every figure is ``nan`` and ``n`` is 0. κ is ``nan`` when
    both judges give one and the same label to every item (chance agreement 1).
    With ``n_boot > 0``, percentile bootstrap intervals over items (``kappa_interval``,
    ``raw_interval``) at ``level``.
    """
    if isinstance(a, str | bytes) or isinstance(b, str | bytes):
        raise ValueError("a and b must be sequences of labels, not strings")
    a, b = list(a), list(b)
    if len(a) != len(b):
        raise ValueError(f"a and b must label the same items, got {len(a)} and {len(b)} labels")
    pairs = [(x, y) for x, y in zip(a, b) if x is not None and y is not None]
    if not pairs:  # e.g. one judge's verdicts were all unreadable: nothing to compare
        nan = float("nan")
        out = {"n": 0, "n_dropped": len(a), "raw": nan, "kappa": nan, "categories": []}
        return out | (
            {"kappa_interval": (nan, nan), "raw_interval": (nan, nan), "level": level} if n_boot else {}
        )
    try:
        cats = {v: i for i, v in enumerate(sorted({v for p in pairs for v in p}, key=repr))}
    except TypeError:
        raise ValueError("labels must be hashable") from None
    ca = np.array([cats[x] for x, _ in pairs])
    cb = np.array([cats[y] for _, y in pairs])
    out: dict[str, Any] = {
        "n": len(pairs),
        "n_dropped": len(a) - len(pairs),
        "raw": float(np.mean(ca == cb)),
        "kappa": _kappa(ca, cb),
        "categories": list(cats),
    }
    if n_boot:
        from ..uncertainty import bootstrap

        n_boot = check_int(n_boot, "n_boot", minimum=10)
        kap = bootstrap(
            lambda x, y: _kappa(x, y), ca, cb, n_boot=n_boot, level=level, seed=seed, unit="items"
        )
        raw = bootstrap(
            lambda x, y: float(np.mean(x == y)), ca, cb, n_boot=n_boot, level=level, seed=seed, unit="items"
        )
        out.update(kappa_interval=kap.interval, raw_interval=raw.interval, level=level)
    return out

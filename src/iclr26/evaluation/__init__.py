"""Declarative LLM evaluation: tasks as data, a batching runner, an append-only per-sample log,
resume after interruption, and offline re-scoring from saved outputs.

A :class:`Task` bundles samples (or a loader), a prompt builder, an answer parser, a scorer and an
aggregate; :func:`evaluate` runs it on any :class:`iclr26.models.LanguageModel`, logging each
sample's prompt, raw output, parsed answer and scores to a SQLite file (WAL mode) keyed by a hash of
(task, sample, model, generation config, seed); :func:`rescore` recomputes scores from that log.

Submodules: :mod:`iclr26.evaluation.agent` (tool-using agents over several turns, with plain
callables or MCP servers as tools) and :mod:`iclr26.evaluation.judge` (model judges, cached and
logged like samples; agreement between judges).
"""

from ._log import SampleLog
from ._runner import EvalResult, evaluate, rescore, sample_key, versions
from ._task import Sample, Task, mean_by_group

__all__ = [
    "EvalResult",
    "Sample",
    "SampleLog",
    "Task",
    "evaluate",
    "mean_by_group",
    "rescore",
    "sample_key",
    "versions",
]

"""PoliCon (Kang et al., ICLR 2026): can a language model draft a European Parliament resolution that
the parties would pass, under seat-weighted voting rules and welfare goals?

- :func:`load_policon`: the authors' topic and task records (``topic_datas/``,
  ``task_datas/{2,4,6}/``), every record checked;
- :func:`build_tasks`: 2/4/6-party tasks from topic records (maximum-variance party subset, seat
  weights in tenths, a veto party); ``compat=True`` reproduces the authors' script for a shared seed;
- :func:`drafting_prompt`, :func:`judge_prompt`, :func:`parse_judge`: the authors' prompts verbatim
  and their judge-reply rule;
- :func:`vote`, :func:`welfare`: the voting rules (simple majority, two-thirds, veto) and the
  welfare functions (alpha = 0 mean, 1 geometric mean, inf minimum), vectorised over tasks;
- :func:`score_rows`, :func:`authors_fields`, :func:`from_authors_results`: deterministic scoring of
  scenario rows and of the authors' result files;
- :func:`policon_metrics`: pass rates and welfare means by goal x party count x topic with bootstrap
  intervals;
- :func:`run_policon` with :class:`ModelJudge` / :class:`OracleJudge`: the benchmark as a logged,
  resumable :mod:`iclr26.evaluation` task; :class:`EmbeddingJudge`: OUR MiniLM judge calibrated on
  the real votes;
- :func:`generate_topics`: OUR template-generated debates in the authors' schema (the embedded
  default, not the authors' data).
"""

from ..models import load_minilm
from ._build import build_tasks, max_variance_subsets
from ._data import (
    AUTHORS_GOALS,
    GOALS,
    PARTY_LISTS,
    PARTY_NUMS,
    TOPICS,
    VOTING_GOALS,
    WELFARE_GOALS,
    PoliconData,
    check_task,
    check_topic_record,
    load_policon,
)
from ._embed import EmbeddingJudge
from ._generate import generate_topics
from ._metrics import policon_metrics
from ._prompts import (
    DRAFT_SYSTEM,
    FALLBACK_SCORE,
    JUDGE_SYSTEM,
    MAX_RETRIES,
    drafting_messages,
    drafting_prompt,
    judge_prompt,
    parse_judge,
    retry_schedule,
)
from ._run import ModelJudge, OracleJudge, PoliconRun, drafting_task, pick_examples, run_policon
from ._score import authors_fields, from_authors_results, oracle_rows, row_arrays, score_rows
from ._vote import RULES, vote, welfare

__all__ = [
    "AUTHORS_GOALS",
    "DRAFT_SYSTEM",
    "FALLBACK_SCORE",
    "GOALS",
    "JUDGE_SYSTEM",
    "MAX_RETRIES",
    "PARTY_LISTS",
    "PARTY_NUMS",
    "RULES",
    "TOPICS",
    "VOTING_GOALS",
    "WELFARE_GOALS",
    "EmbeddingJudge",
    "ModelJudge",
    "OracleJudge",
    "PoliconData",
    "PoliconRun",
    "authors_fields",
    "build_tasks",
    "check_task",
    "check_topic_record",
    "drafting_messages",
    "drafting_prompt",
    "drafting_task",
    "from_authors_results",
    "generate_topics",
    "judge_prompt",
    "load_policon",
    "load_minilm",
    "max_variance_subsets",
    "parse_judge",
    "pick_examples",
    "policon_metrics",
    "retry_schedule",
    "oracle_rows",
    "row_arrays",
    "run_policon",
    "score_rows",
    "vote",
    "welfare",
]

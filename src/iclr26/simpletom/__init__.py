"""SimpleToM (Gu et al., ICLR 2026): explicit theory of mind (mental-state inference) versus applied
theory of mind (behaviour prediction and behaviour judgment), evaluated as the authors do.

- :func:`question_prompt`, :func:`chat_messages`: the authors' prompt (optionally chain-of-thought);
- :func:`extract_answer`: their answer extraction (ambiguous or missing -> invalid);
- :func:`simpletom_stats`, :func:`type_stats`: accuracy and invalid fraction per question type;
- :func:`load_simpletom`: read their records (``id``, ``story``, ``question``, ``choices``,
  ``answerKey``; id suffix ``_aware`` / ``_action`` / ``_judge``) from a folder with their three
  Hugging Face configurations (:data:`CONFIGS`; JSONL, parquet or Arrow) or from one file;
- :func:`generate_stories`: OUR template-generated stories in the same format (the embedded
  default; not the authors' data set);
- :func:`simpletom_task`, :func:`run_simpletom`: the benchmark as an :mod:`iclr26.evaluation` task.
"""

from ._protocol import (
    CONFIGS,
    COT_PROMPT,
    MAX_TOKENS_COT,
    MAX_TOKENS_DIRECT,
    QUESTION_TYPES,
    SYSTEM_PROMPT,
    TYPE_ORDER,
    chat_messages,
    check_record,
    extract_answer,
    is_valid,
    load_simpletom,
    make_mcq,
    question_prompt,
    question_type,
    simpletom_stats,
    type_stats,
)
from ._stories import generate_stories, n_embedded_stories
from ._task import run_simpletom, simpletom_task

__all__ = [
    "CONFIGS",
    "COT_PROMPT",
    "MAX_TOKENS_COT",
    "MAX_TOKENS_DIRECT",
    "QUESTION_TYPES",
    "SYSTEM_PROMPT",
    "TYPE_ORDER",
    "chat_messages",
    "check_record",
    "extract_answer",
    "generate_stories",
    "is_valid",
    "load_simpletom",
    "make_mcq",
    "n_embedded_stories",
    "question_prompt",
    "question_type",
    "run_simpletom",
    "simpletom_stats",
    "simpletom_task",
    "type_stats",
]

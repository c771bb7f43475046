"""Program skeletons of the executable-counterfactual families, as a tiny IR rendered to Python and English.

The IR (Vashishtha et al., "Executable Counterfactuals", arXiv 2510.01539, §3): a function ``f(x)`` whose
first statements draw the latent(s) ``r = random.randint(lo, hi)`` (the *fixed* placeholders: name, latent
draw, return), then optional preprocessing, a main condition with ``elif`` branches and bodies, or a
``while`` loop (*structural* placeholders), filled with operators, thresholds and constants (*value*
placeholders). Expressions are nested tuples ``(op, a, b)`` over ints and the variable names
``"x"``, ``"y"``, ``"n"`` and the latent names; statements are ``("set", var, expr)``,
``("if", [(cond, body), ...], else_body)`` and ``("while", cond, body)``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

FAMILIES = ("if_else", "if_else_long", "while", "multi_r", "gsm")

_PY_OPS = {"add": "+", "sub": "-", "mul": "*", "mod": "%", "gt": ">", "ge": ">=", "lt": "<", "le": "<="}
_EN_OPS = {
    "add": "plus",
    "sub": "minus",
    "mul": "times",
    "mod": "modulo",
    "gt": "is greater than",
    "ge": "is at least",
    "lt": "is less than",
    "le": "is at most",
}
_PREC = {"add": 1, "sub": 1, "mul": 2, "mod": 2}


@dataclass(frozen=True)
class Difficulty:
    """Difficulty knobs of one family.

    depth: nesting depth of the conditionals (1 or 2); branches: branches of the main condition (2 = if/else,
    3+ adds ``elif``); trips: the most loop iterations allowed (``while`` family); n_latents: 1 or 3;
    range_size: ``|R|``, the latents are drawn from ``randint(1, range_size)``; modulus: the final
    ``return y % m`` (``None``: off, every counterfactual answer is unique).
    """

    depth: int = 1
    branches: int = 2
    trips: int = 8
    n_latents: int = 1
    range_size: int = 10
    modulus: int | None = None

    def tags(self) -> dict[str, int | None]:
        return {
            "depth": self.depth,
            "branches": self.branches,
            "trips": self.trips,
            "n_latents": self.n_latents,
            "range_size": self.range_size,
            "modulus": self.modulus,
        }


DEFAULTS = {
    "if_else": Difficulty(),
    "if_else_long": Difficulty(depth=2, branches=3),
    "while": Difficulty(trips=8),
    "multi_r": Difficulty(n_latents=3, range_size=6),
    "gsm": Difficulty(),
}


# ---------------------------------------------------------------- rendering


def expr_py(e, parent: int = 0) -> str:
    """Python source of expression ``e`` (parenthesised only where precedence needs it)."""
    if isinstance(e, int):
        return str(e)
    if isinstance(e, str):
        return e
    op, a, b = e
    if op in _PREC:
        p = _PREC[op]
        s = f"{expr_py(a, p)} {_PY_OPS[op]} {expr_py(b, p + 1)}"
        return f"({s})" if p < parent else s
    return f"{expr_py(a)} {_PY_OPS[op]} {expr_py(b)}"


def expr_en(e) -> str:
    """English of expression ``e`` (word-problem rendering)."""
    if isinstance(e, int):
        return str(e)
    if isinstance(e, str):
        return {"x": "the input", "y": "the result", "n": "the counter"}.get(e, f"the secret number {e}")
    op, a, b = e
    inner = f"{expr_en(a)} {_EN_OPS[op]} {expr_en(b)}"
    return f"({inner})" if not isinstance(a, int | str) or not isinstance(b, int | str) else inner


def render_python(latents: list[tuple[str, int, int]], body: list, ret, *, checked: bool = False) -> str:
    """The function's source. ``checked=True`` adds a ``_tick()`` call at the top of every loop body (the
    step-budget guard used for ground truth; never shown to a solver)."""
    lines = ["import random", "", "", "def f(x):"]
    lines += [f"    {name} = random.randint({lo}, {hi})" for name, lo, hi in latents]
    lines += _stmts_py(body, 1, checked)
    lines.append(f"    return {expr_py(ret)}")
    return "\n".join(lines) + "\n"


def _stmts_py(stmts: list, level: int, checked: bool) -> list[str]:
    pad = "    " * level
    out: list[str] = []
    for st in stmts:
        if st[0] == "set":
            out.append(f"{pad}{st[1]} = {expr_py(st[2])}")
        elif st[0] == "if":
            for k, (cond, body) in enumerate(st[1]):
                out.append(f"{pad}{'if' if k == 0 else 'elif'} {expr_py(cond)}:")
                out += _stmts_py(body, level + 1, checked)
            out.append(f"{pad}else:")
            out += _stmts_py(st[2], level + 1, checked)
        else:  # while
            out.append(f"{pad}while {expr_py(st[1])}:")
            if checked:
                out.append(f"{pad}    _tick()")
            out += _stmts_py(st[2], level + 1, checked)
    return out


def render_english(latents: list[tuple[str, int, int]], body: list, ret) -> str:
    """The same program as a word problem (the ``gsm`` family)."""
    sents = [
        f"A machine holds a secret whole number {name}, chosen uniformly at random between {lo} and {hi} "
        "once, and never changed afterwards."
        for name, lo, hi in latents
    ]
    sents.append("Given an input number, the machine works as follows.")
    sents += _stmts_en(body)
    sents.append(f"Finally it reports {expr_en(ret)}.")
    return " ".join(sents)


def _stmts_en(stmts: list) -> list[str]:
    out: list[str] = []
    for st in stmts:
        if st[0] == "set":
            what = {"x": "the input", "y": "the result", "n": "the counter"}[st[1]]
            out.append(f"It sets {what} to {expr_en(st[2])}.")
        elif st[0] == "if":
            for k, (cond, body) in enumerate(st[1]):
                lead = "If" if k == 0 else "Otherwise, if"
                out.append(f"{lead} {expr_en(cond)}: " + " ".join(_stmts_en(body)))
            out.append("Otherwise: " + " ".join(_stmts_en(st[2])))
        else:
            out.append(f"As long as {expr_en(st[1])}, it repeats: " + " ".join(_stmts_en(st[2])))
    return out


# ---------------------------------------------------------------- sampling (value placeholders)


def _term(rng: random.Random, latents: list[str]):
    """A body expression combining the input and the latent(s)."""
    r = rng.choice(latents)
    c = rng.randint(2, 5)
    return rng.choice(
        [
            ("add", "x", r),
            ("mul", "x", r),
            ("sub", "x", r),
            ("add", ("mul", "x", c), r),
            ("mul", ("add", "x", r), c),
            ("sub", ("mul", r, c), "x"),
            ("add", "x", c),
            ("mul", "x", c),
        ]
    )


def _cond(rng: random.Random, latents: list[str], var: str = "x"):
    """A condition on ``var`` against a latent or a threshold."""
    op = rng.choice(["gt", "ge", "lt", "le"])
    r = rng.choice(latents)
    c = rng.randint(3, 12)
    return rng.choice([(op, var, r), (op, var, c), (op, ("add", var, r), c), (op, var, ("mul", r, 2))])


def _if_block(rng: random.Random, latents: list[str], diff: Difficulty, depth: int) -> tuple:
    arms = []
    for _ in range(diff.branches - 1):
        arms.append((_cond(rng, latents), _body(rng, latents, diff, depth)))
    return ("if", arms, _body(rng, latents, diff, depth))


def _body(rng: random.Random, latents: list[str], diff: Difficulty, depth: int) -> list:
    body = [("set", "y", _term(rng, latents))]
    if depth < diff.depth and rng.random() < 0.7:
        c = rng.randint(5, 20)
        inner_then = [("set", "y", (rng.choice(["add", "sub"]), "y", rng.choice(latents)))]
        inner_else = [("set", "y", ("mul", "y", rng.randint(2, 3)))]
        body.append(("if", [((rng.choice(["gt", "lt"]), "y", c), inner_then)], inner_else))
    return body


def _preprocess(rng: random.Random) -> list:
    k = rng.randint(0, 3)
    c = rng.randint(1, 5)
    return [
        [],
        [("set", "x", ("add", "x", c))],
        [("set", "x", ("mul", "x", 2))],
        [("set", "x", ("sub", "x", c))],
    ][k]


def _ret(rng: random.Random, diff: Difficulty, var="y"):
    base = rng.choice([var, var, ("add", var, rng.randint(1, 5))])
    return ("mod", base, diff.modulus) if diff.modulus else base


def sample_skeleton(family: str, rng: random.Random, diff: Difficulty):
    """One random program of ``family``: ``(latents, body, ret)`` with ``latents`` as ``(name, lo, hi)``."""
    names = ["r"] if diff.n_latents == 1 else [f"r{i + 1}" for i in range(diff.n_latents)]
    latents = [(name, 1, diff.range_size) for name in names]
    body = _preprocess(rng)
    if family == "while":
        step = rng.choice(
            [
                ("add", "y", names[0]),
                ("add", ("mul", "y", 2), names[0]),
                ("add", ("mul", "y", 3), names[0]),
                ("add", "y", ("mul", names[0], 2)),
            ]
        )
        limit = rng.choice([("mul", "x", rng.randint(2, 4)), ("add", "x", rng.randint(10, 40))])
        body += [
            ("set", "y", rng.choice([0, 1, names[0]])),
            ("set", "n", 0),
            ("while", ("lt", "y", limit), [("set", "y", step), ("set", "n", ("add", "n", 1))]),
        ]
        var = rng.choice(["n", "y", ("add", "y", "n")])
        return latents, body, _ret(rng, diff, var)
    body.append(_if_block(rng, names, diff, 1))
    return latents, body, _ret(rng, diff)

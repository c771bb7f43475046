"""``Problem`` and the generator: sample a skeleton, draw the latents and the inputs, solve exhaustively,
reject what is invalid, duplicated or answerable without abduction."""

from __future__ import annotations

import ast
import hashlib
import random
from dataclasses import asdict, dataclass, field
from typing import Any

from ._program import DEFAULTS, Difficulty, render_english, render_python, sample_skeleton
from ._truth import STEP_BUDGET, Runner, StepBudgetExceeded, grid, solve

MAX_ATTEMPTS = 200


@dataclass(frozen=True)
class Problem:
    """One executable counterfactual and its interventional twin.

    ``code``: the function shown to the solver (``f(x)``, latents drawn by ``random.randint``);
    ``text``: the word-problem rendering (``gsm`` only, else ``""``); ``latents``: ``{name: (lo, hi)}``,
    the prior stated in the prompt; ``x_factual``/``y_factual``: the observation; ``x_cf``: the
    intervention on the input; ``answers_counterfactual``: every output consistent with the observation
    (exact, by enumeration); ``latent_true``: the drawn latents, revealed in the interventional twin,
    whose answer is ``answer_interventional``; ``consistent_latents``: every latent assignment that
    reproduces the observation.
    """

    id: str
    family: str
    code: str
    text: str
    latents: dict[str, tuple[int, int]]
    x_factual: int
    y_factual: int
    x_cf: int
    answers_counterfactual: frozenset[int]
    latent_true: tuple[int, ...]
    answer_interventional: int
    consistent_latents: tuple[tuple[int, ...], ...]
    difficulty: dict[str, Any] = field(default_factory=dict)
    checked_code: str = ""

    @property
    def answers_interventional(self) -> frozenset[int]:
        """The interventional twin's answer, as a set (so both twins score alike)."""
        return frozenset({self.answer_interventional})

    def truth(self, kind: str) -> frozenset[int]:
        return self.answers_counterfactual if kind == "counterfactual" else self.answers_interventional

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["answers_counterfactual"] = sorted(self.answers_counterfactual)
        d["latents"] = {k: list(v) for k, v in self.latents.items()}
        d["latent_true"] = list(self.latent_true)
        d["consistent_latents"] = [list(c) for c in self.consistent_latents]
        return d


def normalised_ast(code: str) -> str:
    """``ast.dump`` without positions: two programs differing only in layout compare equal."""
    return ast.dump(ast.parse(code), annotate_fields=False, include_attributes=False)


def _rng(family: str, seed: int, index: int, attempt: int) -> random.Random:
    key = f"{family}|{seed}|{index}|{attempt}".encode()
    return random.Random(int.from_bytes(hashlib.sha256(key).digest()[:8], "big"))


def draw_problem(family: str, seed: int, index: int, attempt: int, diff: Difficulty) -> Problem | None:
    """The problem of ``(family, seed, index, attempt)``, or ``None`` when it is rejected: a loop past the
    step budget, an observation no latent explains, a counterfactual answer that does not depend on the
    latent (no abduction needed), or, with the modulus off, more than one possible answer."""
    rng = _rng(family, seed, index, attempt)
    latents, body, ret = sample_skeleton("if_else" if family == "gsm" else family, rng, diff)
    code = render_python(latents, body, ret)
    if any(code.count(name) < 2 for name, _, _ in latents):  # a latent the program never uses
        return None
    checked = render_python(latents, body, ret, checked=True)
    run = Runner(checked, budget=diff.trips if family == "while" else STEP_BUDGET)
    ranges = [(lo, hi) for _, lo, hi in latents]
    true = tuple(rng.randint(lo, hi) for lo, hi in ranges)
    x0 = rng.randint(1, 20)
    x1 = rng.choice([v for v in range(1, 21) if v != x0])
    try:
        y0 = run(x0, true)
        consistent, answers = solve(run, ranges, x0, y0, x1)
        prior_answers = {run(x1, lat) for lat in grid(ranges)}
        y_int = run(x1, true)
    except StepBudgetExceeded:
        return None
    if not consistent or len(prior_answers) < 2 or (diff.modulus is None and len(answers) != 1):
        return None
    return Problem(
        id=f"{family}-{seed}-{index}",
        family=family,
        code=code,
        text=render_english(latents, body, ret) if family == "gsm" else "",
        latents={name: (lo, hi) for name, lo, hi in latents},
        x_factual=x0,
        y_factual=y0,
        x_cf=x1,
        answers_counterfactual=frozenset(answers),
        latent_true=true,
        answer_interventional=y_int,
        consistent_latents=tuple(consistent),
        difficulty={**diff.tags(), "attempt": attempt},
        checked_code=checked,
    )


def generate_family(family: str, n: int, seed: int, diff: Difficulty | None) -> list[Problem]:
    """``n`` distinct valid problems; problem ``i`` depends only on ``(family, seed, i)`` and the earlier ones
    (a prefix of a longer run is the shorter run)."""
    diff = diff or DEFAULTS[family]
    out: list[Problem] = []
    seen: set[tuple] = set()
    for index in range(n):
        for attempt in range(MAX_ATTEMPTS):
            p = draw_problem(family, seed, index, attempt, diff)
            if p is None:
                continue
            key = (normalised_ast(p.code), p.x_factual, p.x_cf)
            if key not in seen:
                seen.add(key)
                out.append(p)
                break
        else:
            raise ValueError(
                f"difficulty: no valid problem for family {family!r} in {MAX_ATTEMPTS} attempts ({diff})"
            )
    return out

"""In-context-learning prompts in the format of Opiełka et al. (ICLR 2026) and Todd et al. (ICLR 2024).

The builders reproduce the authors' ``ICLSequence`` / ``ICLMultipleChoice`` / ``ICLDataset`` output
character for character, including their use of NumPy's legacy global generator: one
``RandomState`` here takes the place of ``np.random`` and is re-seeded at the same points
(``seed + n`` per prompt, ``seed + idx * 100`` per multiple-choice item) and draws the same numbers in
the same order (also the unused ``choice([1, -1])`` order draw). Dataset seeds of the authors'
``DatasetConstructor`` are ``md5(dataset id) + seed mod 2**32 - 1`` (:func:`dataset_seed`).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from textwrap import dedent

import numpy as np

from ..validation import check_in, check_int

FORMATS = ("open_ended", "mc_letter", "mc_word", "arrow")
_LETTERS = ("a", "b", "c", "d")


@dataclass(frozen=True)
class ICLTask:
    """A concept's word pairs in one format/language, e.g. ``present-past`` in English.

    Attributes:
        name: the dataset's name (used in error messages and as the md5 seed key).
        concept: the concept label shared across formats and languages (RSA design matrix).
        pairs: ``(input, output)`` string pairs, in file order.
    """

    name: str
    concept: str
    pairs: tuple[tuple[str, str], ...] = field(repr=False)

    def __post_init__(self) -> None:
        if not self.pairs:
            raise ValueError(f"pairs of dataset {self.name!r} must not be empty")
        if len(set(self.pairs)) < 2:
            raise ValueError(f"pairs of dataset {self.name!r} must hold at least two distinct pairs")

    @classmethod
    def from_pairs(cls, pairs, name: str, concept: str | None = None) -> ICLTask:
        """Build from ``[(input, output), ...]`` or Todd et al.'s ``[{"input", "output"}, ...]``."""
        rows = []
        for p in pairs:
            x, y = (p["input"], p["output"]) if isinstance(p, dict) else p
            if not isinstance(x, str) or not isinstance(y, str):
                raise ValueError(f"pairs of dataset {name!r} must hold strings, got {p!r}")
            rows.append((x, y))
        return cls(name=name, concept=concept or name, pairs=tuple(rows))

    @classmethod
    def from_json(
        cls, path: str | os.PathLike, name: str | None = None, concept: str | None = None
    ) -> ICLTask:
        """Load a JSON list of ``{"input": str, "output": str}`` (Todd et al.'s and the authors' format)."""
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
        if not isinstance(data, list):
            raise ValueError(
                f"path {os.fspath(path)!r} must hold a JSON list of {{'input', 'output'}} objects"
            )
        name = name or os.path.splitext(os.path.basename(os.fspath(path)))[0]
        return cls.from_pairs(data, name=name, concept=concept)

    def __len__(self) -> int:
        return len(self.pairs)


@dataclass(frozen=True)
class ICLPrompts:
    """Prompts with the first-token targets: ``completions[i]`` follows ``prompts[i]``.

    For AmbiguousICL sets, ``completions`` is the first task's answer and ``alt_completions`` the
    second's; otherwise ``alt_completions`` is empty.
    """

    prompts: list[str]
    completions: list[str]
    alt_completions: list[str] = field(default_factory=list)


def dataset_seed(dataset_id: str, seed: int = 0) -> int:
    """The authors' ``generate_seed``: ``(md5(dataset_id) + seed) mod (2**32 - 1)``."""
    h = int(hashlib.md5(dataset_id.encode()).hexdigest(), 16)
    return (h + (seed if seed else 0)) % (2**32 - 1)


def _open_ended(pairs, padded_space: bool = True, arrow: bool = False) -> tuple[str, str]:
    """``ICLSequence``: ``"Q: x\\nA: y"`` blocks joined by blank lines, the last answer cut off.

    ``arrow=True`` is our second open-ended template (not the authors'): ``"x -> y"`` lines.
    """
    completion = " " + pairs[-1][1] if padded_space else pairs[-1][1]
    if arrow:
        text = "\n".join(f"{x} -> {y}" for x, y in pairs)
    else:
        text = "\n\n".join(f"Q: {x}\nA: {y}" for x, y in pairs)
    return text[: -len(completion)], completion


def _mc_options(rs: np.random.RandomState, correct: str, outputs: np.ndarray, seed: int) -> list[str]:
    """Four distinct options: the answer and three random outputs, shuffled (``ICLMultipleChoice``)."""
    rs.seed(seed)
    while True:
        options = [correct] + [rs.choice(outputs) for _ in range(3)]
        if len(set(options)) == 4:
            break
    rs.shuffle(options)
    return options


def _mc_block(x: str, options: list[str], answer: str | None, letter: bool, padded_space: bool) -> str:
    """One multiple-choice item; ``answer=None`` leaves the response open (the query item)."""
    lines = "\n".join(
        f"        ({letter_}) {opt}" if letter else f"        {opt}"
        for letter_, opt in zip(_LETTERS, options)
    )
    block = f"\n        ### Instruction: Q: {x} A: ?\n{lines}\n        "
    if answer is not None:
        block += f"### Response: ({answer})\n" if letter else f"### Response: {answer}\n"
    elif letter:
        block += "### Response: ("
    else:
        block += "### Response: " if padded_space else "### Response:"
    return dedent(block.lstrip("\n"))


def _multiple_choice(rs, pairs, outputs: np.ndarray, seed: int, letter: bool, padded_space: bool):
    """``ICLMultipleChoice``: options re-seeded at ``seed + idx * 100`` for each item."""
    text = ""
    answer = ""
    for idx, (x, y) in enumerate(pairs):
        options = _mc_options(rs, y, outputs, seed + idx * 100)
        answer = _LETTERS[options.index(y)] if letter else y
        last = idx == len(pairs) - 1
        text += _mc_block(x, options, None if last else answer, letter, padded_space)
    if letter:
        return text, answer
    return text, (" " + answer if padded_space else answer)


def build_prompts(
    task: ICLTask,
    n: int,
    n_shots: int,
    fmt: str = "open_ended",
    seed: int = 0,
    corrupted: bool = False,
    padded_space: bool | None = None,
) -> ICLPrompts:
    """``n`` prompts of ``n_shots`` demonstrations and one query, as the authors' ``ICLDataset``.

    Args:
        task: the word pairs.
        n: number of prompts.
        n_shots: demonstrations per prompt (the authors' ``n_train``); ``n_shots + 1`` distinct pairs are
            drawn per prompt, so ``n_shots < len(task)``.
        fmt: ``"open_ended"`` (``Q: x\\nA: y``), ``"mc_letter"`` or ``"mc_word"`` (four options), or
            ``"arrow"``, our second open-ended template (``x -> y`` lines; not in the authors' code).
        seed: base seed; prompt ``i`` re-seeds with ``seed + i``. The authors' experiments use
            ``dataset_seed(dataset_id, 42)``.
        corrupted: replace each demonstration's answer by a random word of the dataset (inputs and
            outputs, flattened), drawn after all prompts' pairs, as the authors do.
        padded_space: a space before the answer; default ``True`` except ``mc_word``, where the
            authors' ``DatasetConstructor`` sets ``False``.

    Returns:
        :class:`ICLPrompts` with ``n`` prompts and their completions (`` y`` for open-ended, the
        letter for ``mc_letter``).
    """
    n = check_int(n, "n", minimum=1)
    n_shots = check_int(n_shots, "n_shots", minimum=0)
    check_in(fmt, FORMATS, "fmt")
    seed = check_int(seed, "seed", minimum=0, maximum=2**32 - 1 - n)
    if n_shots + 1 > len(task):
        raise ValueError(
            f"n_shots must be < the {len(task)} pairs of dataset {task.name!r} (n_shots + 1 distinct pairs "
            f"are drawn per prompt), got {n_shots}"
        )
    padded_space = fmt != "mc_word" if padded_space is None else bool(padded_space)
    rs = np.random.RandomState()
    chosen = []
    for i in range(n):
        rs.seed(seed + i)
        idx = rs.choice(len(task), n_shots + 1, replace=False)
        rs.choice([1, -1], n_shots + 1)  # the authors' order draw, unused when not bidirectional
        chosen.append([list(task.pairs[j]) for j in idx])
    words = [w for pair in task.pairs for w in pair]
    outputs = np.asarray([y for _, y in task.pairs])
    prompts, completions = [], []
    for i, pairs in enumerate(chosen):
        if corrupted:
            for pair in pairs[:-1]:
                pair[1] = str(rs.choice(words))
        if fmt in ("open_ended", "arrow"):
            text, completion = _open_ended(pairs, padded_space, arrow=fmt == "arrow")
        else:
            text, completion = _multiple_choice(
                rs, pairs, outputs, seed + i, fmt == "mc_letter", padded_space
            )
        prompts.append(text)
        completions.append(completion)
    return ICLPrompts(prompts, completions)


def ambiguous_icl(
    task_a: ICLTask,
    task_b: ICLTask,
    n: int,
    n_shots: int,
    draws: tuple[int, ...] = (0, 0, 0, 1, 1, 1),
    seed: int = 0,
    padded_space: bool = True,
) -> ICLPrompts:
    """AmbiguousICL prompts: shared inputs whose demonstrations follow task A or task B.

    Reproduces the authors' ``ICLDataset([a, b], ambiguous_draws=draws)`` (open-ended): demonstration
    ``i`` answers with task ``draws[i]``; the query's answer under A is ``completions``, under B
    ``alt_completions``. Inputs are drawn with replacement from the sorted inputs common to both tasks.
    The authors' generator is not re-seeded here; its state is what loading task B left (seed 0, one
    ``choice(len(b), 1, replace=False)`` and one order draw), reproduced with ``seed`` (their value: 0).

    Args:
        draws: which task answers each of the ``n_shots + 1`` items (the last one is the query and
            does not show). Its length must be ``n_shots + 1``.
    """
    n = check_int(n, "n", minimum=1)
    n_shots = check_int(n_shots, "n_shots", minimum=0)
    seed = check_int(seed, "seed", minimum=0, maximum=2**32 - 1)
    draws = tuple(int(check_in(d, (0, 1), "draws")) for d in draws)
    if len(draws) != n_shots + 1:
        raise ValueError(f"draws must have n_shots + 1 = {n_shots + 1} entries, got {len(draws)}")
    map_a, map_b = dict(task_a.pairs), dict(task_b.pairs)
    shared = sorted(set(x for x, _ in task_a.pairs) & set(x for x, _ in task_b.pairs))
    if not shared:
        raise ValueError(f"task_b ({task_b.name!r}) shares no input with task_a ({task_a.name!r})")
    rs = np.random.RandomState(seed)
    rs.choice(len(task_b), 1, replace=False)
    rs.choice([1, -1], 1)
    prompts, first, second = [], [], []
    for _ in range(n):
        xs = rs.choice(shared, n_shots + 1)
        pairs = [(str(x), (map_a if d == 0 else map_b)[str(x)]) for x, d in zip(xs, draws)]
        text, _ = _open_ended(pairs, padded_space)
        prompts.append(text)
        pad = " " if padded_space else ""
        first.append(pad + map_a[str(xs[-1])])
        second.append(pad + map_b[str(xs[-1])])
    return ICLPrompts(prompts, first, second)

"""``quality_judge``: an LLM judge's 0-5 rubric score of each text, as an expected score in [0, 1].

The paper scores quality with LLM judges and task rubrics. Here the judge reads a rubric of six
levels (0 = worst, 5 = best) and the text, and the prompt ends with ``Score:``. Instead of sampling a
reply, the judge's log-probability of each continuation ``" 0"`` ... ``" 5"`` is read
(``LanguageModel.loglikelihood``, so any backend with log-probabilities works: local HF models, an
OpenAI-compatible ``/v1/completions`` server); renormalised over the six digits they give
``E[score] / 5``. Each of ``samples`` repetitions lists the rubric levels in a different order (the
digits keep their meaning; orders drawn once from ``seed``, the first one ascending), and the
expected scores are averaged, so the score does not ride on where a level is printed.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..validation import check_bool, check_int

RUBRICS: dict[str, tuple[str, tuple[str, ...]]] = {
    "sonnet": (
        "You are judging a continuation of a sonnet that begins with the given first line.",
        (
            "not verse: broken or meaningless word salad",
            "mostly incoherent; a few phrases make sense",
            "understandable in places but rambling, no poetic form",
            "coherent verse with weak imagery or form",
            "good verse: coherent, vivid, mostly metrical",
            "excellent: coherent, vivid, metrical and rhymed like a published sonnet",
        ),
    ),
    "scene": (
        "You are judging a continuation of a dramatic scene that begins with the given line.",
        (
            "not dialogue: broken or meaningless word salad",
            "mostly incoherent; a few phrases make sense",
            "understandable in places but rambling and without dramatic sense",
            "coherent dialogue that does little",
            "good dialogue: coherent, in character, moves the scene",
            "excellent: coherent, vivid and in the voice of a published play",
        ),
    ),
    "story": (
        "You are judging a continuation of a story that begins with the given prompt.",
        (
            "not prose: broken or meaningless word salad",
            "mostly incoherent; a few phrases make sense",
            "understandable in places but rambling",
            "coherent but flat",
            "good: coherent, vivid and engaging",
            "excellent: coherent, vivid, engaging and original",
        ),
    ),
}
DIGITS = tuple(f" {d}" for d in range(6))


def level_orders(samples: int, seed: int) -> list[np.ndarray]:
    """The rubric-level orders of the ``samples`` repetitions: ascending first, then seeded shuffles."""
    rng = np.random.default_rng(seed)
    return [np.arange(6)] + [rng.permutation(6) for _ in range(samples - 1)]


def judge_prompt(
    text: str, task: str | tuple[str, Sequence[str]], order: Sequence[int], prompt: str = ""
) -> str:
    """The judge's completion prompt for one text with rubric levels listed in ``order``."""
    intro, levels = RUBRICS[task] if isinstance(task, str) else task
    rubric = "\n".join(f"{d}: {levels[d]}" for d in order)
    head = f"Beginning: {prompt.strip()}\n" if prompt else ""
    return (
        f"{intro}\nRate it with one digit from 0 to 5 using this rubric:\n{rubric}\n\n"
        f"{head}Text: {text.strip()}\n\nScore:"
    )


def _check_task(task) -> str | tuple[str, tuple[str, ...]]:
    if isinstance(task, str):
        if task not in RUBRICS:
            raise ValueError(f"task must be one of {tuple(RUBRICS)} or (intro, six levels), got {task!r}")
        return task
    if (
        isinstance(task, tuple | list)
        and len(task) == 2
        and isinstance(task[0], str)
        and isinstance(task[1], Sequence)
        and not isinstance(task[1], str)  # six characters are not six levels
        and len(task[1]) == 6
        and all(isinstance(x, str) and x.strip() for x in task[1])
    ):
        return (task[0], tuple(task[1]))
    raise ValueError("task must be a rubric name or (intro, six level descriptions for scores 0..5)")


def quality_judge(
    texts: Sequence[str],
    judge_model,
    task: str | tuple[str, Sequence[str]] = "story",
    prompts: Sequence[str] | None = None,
    samples: int = 5,
    seed: int = 0,
    return_probs: bool = False,
):
    """Judge quality of each text on a 0-5 rubric, as the expected score / 5 (shape ``(m,)``).

    Parameters
    ----------
    texts: ``m`` texts (with ``prompts``, each the full text starting with its prompt; the judge sees
        the prompt as the beginning and the rest as the text).
    judge_model: an :class:`iclr26.models.LanguageModel` with ``loglikelihood``.
    task: a rubric name in :data:`RUBRICS` or ``(intro, levels)`` with six level descriptions.
    prompts: ``m`` prompts, or ``None``.
    samples: rubric orders per text (>= 1), averaged.
    seed: the seed of the rubric orders.
    return_probs: also return the digit probabilities, shape ``(m, samples, 6)``.
    """
    from ..models import LanguageModel

    if (
        isinstance(texts, str)
        or not isinstance(texts, Sequence)
        or not all(isinstance(t, str) for t in texts)
    ):
        raise ValueError("texts must be a sequence of strings")
    if not isinstance(judge_model, LanguageModel):
        raise ValueError(
            f"judge_model must be an iclr26.models.LanguageModel, got {type(judge_model).__name__}"
        )
    task = _check_task(task)
    samples = check_int(samples, "samples", minimum=1)
    check_bool(return_probs, "return_probs")
    if prompts is None:
        prompts = [""] * len(texts)
    if isinstance(prompts, str) or len(prompts) != len(texts):
        raise ValueError(f"prompts must have one entry per text ({len(texts)})")
    if not all(isinstance(p, str) and t.startswith(p) for p, t in zip(prompts, texts, strict=True)):
        raise ValueError("prompts: each text must start with its prompt (pass the full texts)")
    orders = level_orders(samples, check_int(seed, "seed", minimum=0))
    if not texts:
        return (np.zeros(0), np.zeros((0, samples, 6))) if return_probs else np.zeros(0)
    contexts = [
        judge_prompt(t[len(p) :], task, order, p)
        for t, p in zip(texts, prompts, strict=True)
        for order in orders
    ]
    lls = judge_model.loglikelihood([c for c in contexts for _ in DIGITS], list(DIGITS) * len(contexts))
    logp = np.array([ll.logprob for ll in lls], dtype=float).reshape(len(texts), samples, 6)
    probs = _digit_probs(logp)
    scores = (probs @ np.arange(6.0)).mean(axis=1) / 5.0
    return (scores, probs) if return_probs else scores


def _digit_probs(logp: np.ndarray) -> np.ndarray:
    """The six digits' log-probabilities ``(m, samples, 6)`` renormalised; a NaN, or six ``-inf``, would
    make the expected score NaN (0/0), so the judge's output is refused instead."""
    bad = np.isnan(logp).any(axis=2) | ~np.isfinite(logp.max(axis=2))
    if bad.any():
        i = int(np.argwhere(bad)[0][0])
        raise ValueError(
            f"judge_model gave NaN or all -inf log-probabilities to the six digits for texts[{i}]"
        )
    probs = np.exp(logp - logp.max(axis=2, keepdims=True))
    return probs / probs.sum(axis=2, keepdims=True)

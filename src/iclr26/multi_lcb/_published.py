"""The authors' published per-task results and the release-date (contamination) split.

The Multi-LCB site (repository ``Multi-LCB/multi-lcb.github.io``) publishes, per model and language, a
``data/lcb/<model>/<language>.jsonl`` with one record per task: ``task_id``, ``pass`` (the share of the
model's samples that passed), ``date`` (the problem's contest date), ``difficulty`` and ``platform``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ..uncertainty import bootstrap
from ..validation import check_probabilities
from ._lcb import _contest_date
from ._toolchains import ORDER, get_multi_language


class NoDatedWindowError(ValueError):
    """:func:`release_date_split` found no model with tasks on both sides of its release date."""


#: The release dates LiveCodeBench's runner gives these models (``LanguageModel.release_date`` in
#: ``lcb_runner/lm_styles.py`` of LiveCodeBench/LiveCodeBench; LCB scores a model only on problems dated
#: after it), keyed by the Multi-LCB site's folder name; the LCB entry's ``model_repr`` is in the comment.
#: The other Multi-LCB models have no LCB entry.
LCB_RELEASE_DATES = {
    "DeepSeek-R1-0528": "2024-06-30",  # DeepSeek-R1-0528
    "DeepSeek-R1-Distill-Qwen-14B": "2025-01-20",  # DeepSeek-R1-Distill-Qwen-14B
    "DeepSeek-R1-Distill-Qwen-32B": "2025-01-20",  # DeepSeek-R1-Distill-Qwen-32B
    "Deepseek-Coder-33B-Instr": "2023-09-01",  # DSCoder-33b-Ins
    "O4-Mini": "2023-04-30",  # O4-Mini (High / Medium / Low)
    "Qwen2.5-Coder-32B-Instr": "2024-06-30",  # Qwen2.5-Coder-Ins-32B
}


def load_published_results(root, languages=ORDER) -> tuple[dict, dict]:
    """The authors' per-task results from a checkout of the Multi-LCB site (or its ``data/lcb`` folder).

    Keeps the models with a file for every one of ``languages``, evaluated on the largest common task
    set (the full benchmark). Folders named ``_del_…`` are skipped: the site keeps withdrawn entries
    under that prefix (three of them duplicate models listed under shorter names, which would count
    those models twice).

    Returns
    -------
    passes : dict
        ``{model: {language: {task_id: pass}}}``.
    tasks : dict
        ``{task_id: {"date": datetime, "difficulty": str, "platform": str}}`` (from the first file that
        holds the task).
    """
    root = Path(root)
    if not root.is_dir():
        raise ValueError(f"root must be an existing folder, got {str(root)!r}")
    languages = [get_multi_language(lang) for lang in languages]
    base = root / "data" / "lcb" if (root / "data" / "lcb").is_dir() else root
    passes, tasks = {}, {}
    for d in sorted(p for p in base.iterdir() if p.is_dir() and not p.name.startswith("_del_")):
        if not all((d / f"{lang}.jsonl").is_file() for lang in languages):
            continue
        per = {}
        for lang in languages:
            path = d / f"{lang}.jsonl"
            per[lang] = {}
            with path.open() as f:
                for k, line in enumerate(f, start=1):
                    if not line.strip():
                        continue
                    r = _record(line, f"{path}, line {k}")
                    per[lang][r["task_id"]] = _pass_value(r["pass"], f"{path}: task {r['task_id']}")
                    if r["task_id"] not in tasks and "date" in r:
                        tasks[r["task_id"]] = {
                            "date": _contest_date(r["date"], f"{path}: task {r['task_id']}"),
                            "difficulty": str(r.get("difficulty", "")),
                            "platform": str(r.get("platform", "")),
                        }
        passes[d.name] = per
    if not passes:
        return {}, {}
    sizes = {m: len(set.intersection(*(set(v) for v in per.values()))) for m, per in passes.items()}
    full = max(sizes.values())
    return {m: per for m, per in passes.items() if sizes[m] == full}, tasks


def _record(line: str, where: str) -> dict:
    try:
        r = json.loads(line)
    except json.JSONDecodeError as e:
        raise ValueError(f"{where}: not a JSON record ({e.msg})") from None
    if not isinstance(r, dict) or "task_id" not in r or "pass" not in r:
        raise ValueError(f"{where}: a record must hold 'task_id' and 'pass', got {line.strip()[:80]!r}")
    return r


def _pass_value(value, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise ValueError(f"{where}: pass must be a number in [0, 1], got {value!r}")
    return float(value)


def _windowed_drops(P: np.ndarray, after: np.ndarray, H: np.ndarray) -> np.ndarray:
    """Pass rate before minus after each model's cutoff, standardised to the task set's difficulty mix.

    ``P``: (tasks, cells) pass rates; ``after``: (tasks, cells) whether the task is dated after the
    cell's model's cutoff; ``H``: (tasks, difficulties) one-hot. Within each difficulty the two windows'
    mean pass rates are differenced; the differences are weighted by each difficulty's share of all
    tasks, over the difficulties present in both windows. NaN for a cell with no such difficulty.
    """
    before = ~after
    n_b, n_a = H.T @ before, H.T @ after
    with np.errstate(invalid="ignore", divide="ignore"):
        diff = (H.T @ (P * before)) / n_b - (H.T @ (P * after)) / n_a
    w = H.sum(axis=0)[:, None] * ((n_b > 0) & (n_a > 0))
    diff = np.where(w > 0, diff, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (w * diff).sum(axis=0) / w.sum(axis=0)


def release_date_split(passes, tasks, release_dates, *, n_boot: int = 2000, seed: int = 0) -> dict:
    """Pass rate on problems dated before vs after each model's release date (contamination), per language.

    LiveCodeBench scores a model only on problems dated after its release date, since older problems
    (and their solutions, in Python) may be in its training data. Here every model with a date is scored
    on both windows: a drop after the date is the contamination signal, and comparing languages asks
    whether it is language-specific (Multi-LCB's translated tasks are new text in 11 of the languages).

    Later LCB problems are not the same mix of difficulties, so each drop is standardised: pass rates are
    differenced within each difficulty and weighted by the difficulty's share of all tasks.

    Parameters
    ----------
    passes : dict
        ``{model: {language: {task_id: pass}}}`` as :func:`load_published_results` returns; every model
        must hold the same languages and tasks.
    tasks : dict
        ``{task_id: {"date": datetime or ISO text, "difficulty": str}}`` for every task.
    release_dates : dict
        ``{model: date}`` (datetime, date or ``YYYY-MM-DD``) for models of ``passes``; a task dated after
        the date (strictly) is in the "after" window. :data:`LCB_RELEASE_DATES` holds LCB's.
    n_boot, seed : int
        Bootstrap resamples of the tasks (the same resample for every model and language) and its seed.

    Returns
    -------
    dict
        ``per_model``: one row per (model, language) with each window's task count, raw pass rates and the
        standardised drop; ``per_language``: ``{language: Estimate}`` of the mean drop over the models;
        ``pooled``: the mean over languages; ``python_minus_others``: Python's drop minus the other
        languages' mean (None without Python); ``models`` used; ``excluded``: ``{model: reason}`` for
        models whose date leaves a window empty.
    """
    if not isinstance(release_dates, dict) or not release_dates:
        raise ValueError("release_dates must be a non-empty dict {model: date}")
    unknown = sorted(set(release_dates) - set(passes))
    if unknown:
        raise ValueError(f"release_dates names models not in passes: {unknown}")
    models = sorted(release_dates)
    languages = list(passes[models[0]])
    task_ids = sorted(passes[models[0]][languages[0]])
    for m in models:
        if list(passes[m]) != languages or any(sorted(passes[m][lang]) != task_ids for lang in languages):
            raise ValueError(f"passes[{m!r}] must hold the same languages and tasks as passes[{models[0]!r}]")
    missing = [t for t in task_ids if t not in tasks]
    if missing:
        raise ValueError(f"tasks lacks {len(missing)} task(s) of passes, e.g. {missing[:3]}")
    dates = np.array([_contest_date(tasks[t]["date"], f"tasks[{t!r}]") for t in task_ids])
    levels = sorted({str(tasks[t].get("difficulty", "")) for t in task_ids})
    code = {d: k for k, d in enumerate(levels)}
    H = np.zeros((len(task_ids), len(levels)))
    H[np.arange(len(task_ids)), [code[str(tasks[t].get("difficulty", ""))] for t in task_ids]] = 1.0
    cutoffs = {m: _contest_date(release_dates[m], f"release_dates[{m!r}]") for m in models}

    excluded = {}
    for m in models:
        n_after = int((dates > cutoffs[m]).sum())
        if n_after in (0, len(task_ids)):
            window = "after" if n_after == 0 else "before"
            excluded[m] = f"no task dated {window} {cutoffs[m]:%Y-%m-%d}"
    used = [m for m in models if m not in excluded]
    if not used:
        raise NoDatedWindowError(f"no model has tasks on both sides of its release date: {excluded}")
    after = np.stack([dates > cutoffs[m] for m in used], axis=1)  # (tasks, models)
    P = np.stack([[[passes[m][lang][t] for lang in languages] for m in used] for t in task_ids])
    P = check_probabilities(P, "passes' pass rates")  # a NaN would silently drop its cell from the means
    n_m, n_l = len(used), len(languages)
    A = np.repeat(after[:, :, None], n_l, axis=2).reshape(len(task_ids), -1)
    flat = P.reshape(len(task_ids), -1)  # cell = (model, language)

    def drops(P_, A_, H_):
        return _windowed_drops(P_, A_, H_).reshape(n_m, n_l)

    def mean_drop(P_, A_, H_):
        return float(np.nanmean(_windowed_drops(P_, A_, H_)))

    boot = dict(n_boot=n_boot, seed=seed, unit="tasks")
    per_language = {  # columns j, j + n_l, ...: language j of every model
        lang: bootstrap(mean_drop, flat[:, j::n_l], A[:, j::n_l], H, **boot)
        for j, lang in enumerate(languages)
    }
    pooled = bootstrap(mean_drop, flat, A, H, **boot)
    python_minus_others = None
    if "python" in languages and n_l > 1:
        j = languages.index("python")
        rest = [k for k in range(n_l) if k != j]

        def excess(P_, A_, H_):
            d = drops(P_, A_, H_)
            return float(np.nanmean(d[:, j] - np.nanmean(d[:, rest], axis=1)))

        python_minus_others = bootstrap(excess, flat, A, H, **boot)
    d_all = drops(flat, A, H)
    rows = []
    for i, m in enumerate(used):
        a = after[:, i]
        for j, lang in enumerate(languages):
            rows.append(
                {
                    "model": m,
                    "release date": f"{cutoffs[m]:%Y-%m-%d}",
                    "language": lang,
                    "tasks before": int((~a).sum()),
                    "tasks after": int(a.sum()),
                    "pass before": float(P[~a, i, j].mean()),
                    "pass after": float(P[a, i, j].mean()),
                    "drop (difficulty-standardised)": float(d_all[i, j]),
                }
            )
    return {
        "per_model": rows,
        "per_language": per_language,
        "pooled": pooled,
        "python_minus_others": python_minus_others,
        "models": used,
        "excluded": excluded,
    }

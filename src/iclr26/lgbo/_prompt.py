"""Prompts for the LLM and the parser of its reply (the authors' ``prompt.py`` interface).

The LLM states one preference: ``[point, [x1..xd], c]`` or ``[region, [[lb..], [ub..]], c]`` in physical
coordinates. The system prompt and the user-prompt layout reproduce the authors' wording (Xinzhe309/LGBO,
MIT licence) so that an LLM sees the instructions the paper's runs used; the code is ours.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from iclr26.validation import is_finite_real

# ruff: noqa: E501  (the prompt text keeps the authors' long lines)

SYSTEM_PROMPT = """You are an optimization scientist inside an LLM-Guided Bayesian Optimization (LGBO) loop.

Your job is to provide one semantic preference for the next BO acquisition step.
The preference must be either a point or a compact axis-aligned region, plus a confidence score.
The downstream LGBO optimizer will convert your preference into a region-lifted mean shift and the acquisition function will select the actual batch.

Allowed final-answer formats:
1) [point, [x1, x2, ..., xd], confidence]
2) [region, [[lb1, lb2, ..., lbd], [ub1, ub2, ..., ubd]], confidence]

Rules:
- Pick exactly one mode: point or region.
- Use the declared parameter order exactly.
- Use original physical coordinates. Do not normalize.
- Keep all continuous values inside the declared bounds.
- confidence must be in [0, 1].
- Do not add any extra text inside Final Answer.

Response structure:
Thinking:
- Explain the scientific or function-structure rationale.
- Briefly relate the rationale to observed history.
- Justify point vs region and the confidence.

Final Answer:
[point, [x1, x2, ..., xd], confidence]
OR
[region, [[lb1, lb2, ..., lbd], [ub1, ub2, ..., ubd]], confidence]
"""

#: Appended to the user prompt for the one strict retry after an unparseable reply.
STRICT_RETRY = "\n\nOutput only one final answer line in the required bracketed format."

TOY_LANDSCAPES = {
    "rastrigin": "Highly multimodal, separable, and periodic, with the global minimum near x=0.",
    "ackley": "Broad flat outer areas, ripples, and a central basin, with the global minimum near x=0.",
    "griewank": "Many shallow local minima from cosine interactions and a global minimum near x=0.",
    "levy": "Rugged with many local optima and the global minimum near x=1.",
}

_THINKING = re.compile(
    r"(?is)(?:^|\n)\s*(?:#+\s*)?\[?\s*thinking\s*\]?\s*:?\s*(.*?)"
    r"(?=\n\s*(?:#+\s*)?\[?\s*final\s+answer\s*\]?\s*:|\Z)"
)
_LIST = r"(\[[^\[\]]*\])"
_CONF = r"([01](?:\.\d+)?)"
_POINT = re.compile(rf"(?is)\[\s*point\s*,\s*{_LIST}\s*,\s*{_CONF}\s*\]")
_REGION = re.compile(rf"(?is)\[\s*region\s*,\s*\[\s*{_LIST}\s*,\s*{_LIST}\s*\]\s*,\s*{_CONF}\s*\]")


def check_parameters(parameters: Any) -> None:
    """A non-empty list of ``{"name", "bounds": [lo, hi], ...}`` with finite ``lo < hi``."""
    if isinstance(parameters, str | bytes) or not isinstance(parameters, Sequence):
        raise ValueError(f"task['parameters'] must be a list of parameter dicts, got {parameters!r}")
    if len(parameters) == 0:
        raise ValueError("task['parameters'] must describe at least one parameter")
    for p in parameters:
        if not isinstance(p, Mapping) or "name" not in p or "bounds" not in p:
            raise ValueError(f"task['parameters'] entries must be dicts with 'name' and 'bounds', got {p!r}")
        b = p["bounds"]
        ok = (
            not isinstance(b, str | bytes)
            and hasattr(b, "__len__")
            and len(b) == 2
            and all(is_finite_real(v) for v in b)
            and b[0] < b[1]
        )
        if not ok:
            raise ValueError(f"parameter {p['name']!r}: bounds must be two finite numbers lo < hi, got {b!r}")


def _literal_list(text: str) -> list:
    value = ast.literal_eval(text)
    if not isinstance(value, list):
        raise ValueError("expected a list")
    return value


def parse_preference(text: str | None) -> dict[str, Any]:
    """Parse an LLM reply into ``{"mode", "point" | ("lb", "ub"), "confidence", "thinking"}``.

    A region is looked for first, then a point; a match whose lists are not Python literals is skipped.
    When nothing parses, ``mode`` and ``confidence`` are ``None`` (the caller retries once, strictly).
    """
    text = text or ""
    m = _THINKING.search(text)
    thinking = m.group(1).strip() if m else ""
    m = _REGION.search(text)
    if m:
        try:
            lb, ub = _literal_list(m.group(1)), _literal_list(m.group(2))
            return {
                "mode": "region",
                "lb": lb,
                "ub": ub,
                "confidence": float(m.group(3)),
                "thinking": thinking,
            }
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            pass
    m = _POINT.search(text)
    if m:
        try:
            point = _literal_list(m.group(1))
            return {"mode": "point", "point": point, "confidence": float(m.group(2)), "thinking": thinking}
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            pass
    return {"mode": None, "confidence": None, "thinking": thinking}


def _history_line(item: Any, y_key: str) -> str:
    if isinstance(item, str):
        return item
    if not isinstance(item, Mapping):
        return str(item)
    x = item.get("x", item.get("point", {}))
    y = item.get(y_key, item.get("y", item.get("result")))
    left = ", ".join(f"{k}={v}" for k, v in x.items()) if isinstance(x, Mapping) else str(x)
    right = ", ".join(f"{k}={v}" for k, v in y.items()) if isinstance(y, Mapping) else str(y)
    line = left if right in {"", "None"} else f"{left} -> {y_key}={right}"
    return line + (f" ({item['note']})" if item.get("note") else "")


def _constraint_lines(constraints: str | Sequence[str] | None) -> list[str]:
    if not constraints:
        return []
    if isinstance(constraints, str):
        rows = [ln.strip().lstrip("-").strip() for ln in constraints.strip().splitlines() if ln.strip()]
    else:
        rows = list(constraints)
    return ["- Constraints:"] + [f"  - {r}" for r in rows]


def user_prompt(
    *,
    background: str,
    parameters: Sequence[Mapping[str, Any]],
    objective: str,
    constraints: str | Sequence[str] | None = None,
    history: Iterable[Any] | None = None,
    batch_q: int | None = None,
    y_key: str = "y",
    extra_request: str | None = None,
) -> str:
    """The user prompt: ``[Background]``, ``[History]`` (one line per observation) and ``[Request]``."""
    names = [str(p["name"]) for p in parameters]
    parts = [
        "[Background]",
        f"- Experiment type & purpose: {background.strip()}",
        f"- Parameter order (d={len(names)}): [" + ", ".join(names) + "]",
        "- Parameter details:",
    ]
    for p in parameters:
        lo, hi = p["bounds"]
        unit = f" {p.get('unit', '')}".rstrip()
        desc = str(p.get("description", "")).strip()
        parts.append(f"  - {p['name']} in [{lo}, {hi}]{unit}" + (f"; {desc}" if desc else ""))
    parts.append(f"- Objective: {objective.strip()}")
    parts += _constraint_lines(constraints)
    hist = list(history or [])
    if hist:
        parts += ["", "[History]"] + [f"- {_history_line(h, y_key)}" for h in hist]
    parts += ["", "[Request]"]
    if batch_q:
        parts.append(
            f"- Recommend one point or one compact region. LGBO will draw {batch_q} batch points from the "
            "lifted surrogate."
        )
    else:
        parts.append("- Recommend one point or one compact region for the next LGBO acquisition step.")
    if extra_request:
        parts.append(f"- {extra_request.strip()}")
    return "\n".join(parts)


def toy_task(name: str, bounds: Sequence[Sequence[float]]) -> dict[str, Any]:
    """The task description the authors give the LLM for a toy function (minimised)."""
    name = name.strip().lower()
    if name not in TOY_LANDSCAPES:
        raise ValueError(f"task must name one of {tuple(TOY_LANDSCAPES)}, got {name!r}")
    try:
        pairs = [list(b) for b in bounds] if not isinstance(bounds, str) else []
    except TypeError:
        pairs = []
    if not pairs or any(
        len(b) != 2 or not all(is_finite_real(v) for v in b) or not b[0] < b[1] for b in pairs
    ):
        raise ValueError(
            f"bounds must be one (lo, hi) pair per parameter (shape (d, 2)) with finite lo < hi, got {bounds!r}"
        )
    params = [
        {
            "name": f"x{i + 1}",
            "bounds": [float(lo), float(hi)],
            "unit": "",
            "description": "continuous toy-function coordinate",
        }
        for i, (lo, hi) in enumerate(bounds)
    ]
    return {
        "background": f"Dry benchmark on the {name} black-box function. Landscape: {TOY_LANDSCAPES[name]}",
        "parameters": params,
        "objective": "Minimize f(x). Smaller f is better.",
        "constraints": "Use original toy-function coordinates and stay inside bounds.",
        "y_key": "f",
        "extra_request": "Return original coordinates, not normalized coordinates.",
    }

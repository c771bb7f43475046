"""Claims and results: what a headline experiment returns.

A :class:`Claim` pairs a statement from a paper with the figure the paper reports (when the abstract or
the authors' repository gives one) and the figure we measured. Its verdict is *computed* from the
measured figure and a criterion, never written by hand:

- ``holds`` when the measured figure satisfies the criterion,
- ``does not hold`` when it does not,
- ``not measurable here`` when nothing could be measured (``measured`` is ``None`` or NaN).
"""

from __future__ import annotations

import math
import operator
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any


class Verdict(StrEnum):
    HOLDS = "holds"
    DOES_NOT_HOLD = "does not hold"
    NOT_MEASURABLE = "not measurable here"


_OPERATORS = {
    ">": operator.gt,
    ">=": operator.ge,
    "<": operator.lt,
    "<=": operator.le,
}
_ALLOWED_OPS = (*_OPERATORS, "within")


@dataclass(frozen=True)
class Claim:
    """One claim of a paper, checked against our measurement.

    Parameters
    ----------
    statement:
        The claim in the paper's words, e.g. ``"IPW correction removes the bias"``.
    measured:
        Our figure (a float), or ``None`` when it could not be measured here.
    op, reference:
        The criterion the measured figure must meet: ``measured <op> reference``, with ``op`` one of
        ``> >= < <=``; or ``op="within"``: ``|measured - reference| <= tolerance``.
    paper:
        The paper's figure as the paper states it (text, e.g. ``"F1 0.9280"``), or ``None`` when the
        abstract and the authors' repository give no number.
    scale:
        What we measured at (e.g. ``"n=2,000 points, 60 clusterings"``).
    tolerance:
        Only for ``op="within"``.
    detail:
        What the measured figure is (e.g. ``"Spearman(DISCO, ARI) - Spearman(silhouette, ARI)"``),
        and, for a claim not measurable here, why.
    """

    statement: str
    measured: float | None
    op: str
    reference: float
    paper: str | None = None
    scale: str = ""
    tolerance: float | None = None
    detail: str = ""

    def __post_init__(self) -> None:
        if self.op not in _ALLOWED_OPS:
            raise ValueError(f"op must be one of {_ALLOWED_OPS}, got {self.op!r}")
        if self.op == "within" and (self.tolerance is None or self.tolerance < 0):
            raise ValueError("op='within' needs a non-negative tolerance")
        if not isinstance(self.reference, int | float) or math.isnan(float(self.reference)):
            raise ValueError(f"reference must be a number, got {self.reference!r}")
        if self.measured is not None:
            # Store plain floats (numpy scalars would not serialise).
            object.__setattr__(self, "measured", float(self.measured))

    @property
    def verdict(self) -> Verdict:
        if self.measured is None or math.isnan(self.measured):
            return Verdict.NOT_MEASURABLE
        if self.op == "within":
            ok = abs(self.measured - self.reference) <= float(self.tolerance)
        else:
            ok = _OPERATORS[self.op](self.measured, self.reference)
        return Verdict.HOLDS if ok else Verdict.DOES_NOT_HOLD

    @property
    def criterion(self) -> str:
        if self.op == "within":
            return f"|x - {self.reference:g}| <= {self.tolerance:g}"
        return f"x {self.op} {self.reference:g}"

    @classmethod
    def not_measurable(cls, statement: str, why: str, paper: str | None = None, scale: str = "") -> Claim:
        """A claim that cannot be measured here (say why in ``why``)."""
        return cls(statement, None, ">", 0.0, paper=paper, scale=scale, detail=why)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        if d["measured"] is not None and math.isnan(d["measured"]):
            d["measured"] = None
        d["verdict"] = str(self.verdict)
        d["criterion"] = self.criterion
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Claim:
        keys = ("statement", "measured", "op", "reference", "paper", "scale", "tolerance", "detail")
        return cls(**{k: d.get(k) for k in keys if k in d})


@dataclass
class Result:
    """What a headline experiment returns.

    ``claims`` are checked claims; ``metrics`` is free JSON-serialisable numbers; ``tables`` maps a
    table name to a list of row dicts (printed and reported); ``artifacts`` are file names (plots)
    relative to the run's output folder, filled in by :class:`iclr26.runtime.RunContext`.
    The runner fills the provenance fields (slug, seed, scale, timings, versions, config hash).
    """

    claims: list[Claim]
    metrics: dict[str, Any] = field(default_factory=dict)
    tables: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    artifacts: list[str] = field(default_factory=list)
    notes: str = ""
    slug: str = ""
    seed: int | None = None
    scale: str = ""
    config_hash: str = ""
    seconds: float | None = None
    versions: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "slug": self.slug,
            "seed": self.seed,
            "scale": self.scale,
            "config_hash": self.config_hash,
            "seconds": self.seconds,
            "versions": self.versions,
            "claims": [c.to_dict() for c in self.claims],
            "metrics": _jsonable(self.metrics),
            "tables": _jsonable(self.tables),
            "artifacts": list(self.artifacts),
            "notes": self.notes,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Result:
        return cls(
            claims=[Claim.from_dict(c) for c in d.get("claims", [])],
            metrics=d.get("metrics", {}),
            tables=d.get("tables", {}),
            artifacts=d.get("artifacts", []),
            notes=d.get("notes", ""),
            slug=d.get("slug", ""),
            seed=d.get("seed"),
            scale=d.get("scale", ""),
            config_hash=d.get("config_hash", ""),
            seconds=d.get("seconds"),
            versions=d.get("versions", {}),
        )


def _jsonable(obj: Any) -> Any:
    """Convert numpy scalars/arrays and tuples to plain JSON types; NaN/inf become None."""
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_jsonable(v) for v in obj]
    if hasattr(obj, "tolist") and callable(obj.tolist):  # numpy array or scalar, torch tensor
        return _jsonable(obj.tolist())
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, bool | int | str) or obj is None:
        return obj
    return str(obj)

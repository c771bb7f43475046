"""Claims and results: what a headline experiment returns.

A :class:`Claim` pairs a statement from a paper with the figure the paper reports (when the abstract or
the authors' repository gives one), the figure we measured and the interval around it over the unit that
varies (seeds, candidates, graphs, items, models). Its verdict is *computed*, never written by hand:

- ``holds`` when the whole interval meets the criterion,
- ``does not hold`` when the whole interval fails it,
- ``inconclusive`` when the interval straddles the criterion's bar,
- ``not measurable here`` when nothing could be measured (``measured`` is ``None`` or NaN).

A measured claim must carry an interval unless it is an exact quantity (an equality with the authors'
code, a round-trip rate, a count): then it says so with ``exact=True`` and the point figure decides.
A criterion chosen after seeing the data is marked ``post_hoc=True``; the report counts such a claim
apart, never as a success of the paper.
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
    INCONCLUSIVE = "inconclusive"
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
    interval:
        ``(lo, hi)``: the ``level`` interval of the measured figure over the unit that varies
        (see :mod:`iclr26.uncertainty`). Required for a measured claim unless ``exact`` is true.
    level:
        The interval's coverage (default 0.95).
    method:
        How the interval was obtained, e.g. ``"percentile bootstrap over 60 candidates x 5 seeds"``.
    exact:
        The figure is exact (no sampling noise): an equality, a round-trip rate, a count.
    post_hoc:
        The criterion was chosen after seeing the data.
    """

    statement: str
    measured: float | None
    op: str
    reference: float
    paper: str | None = None
    scale: str = ""
    tolerance: float | None = None
    detail: str = ""
    interval: tuple[float, float] | None = None
    level: float = 0.95
    method: str = ""
    exact: bool = False
    post_hoc: bool = False

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
        if not 0.0 < float(self.level) < 1.0:
            raise ValueError(f"level must be in (0, 1), got {self.level!r}")
        if self.interval is not None:
            self._set_interval()
        elif self._is_measured() and not self.exact:
            raise ValueError(
                f"claim {self.statement!r}: a measured claim needs interval=(lo, hi) over the unit that "
                "varies, or exact=True for an exact quantity"
            )

    def _set_interval(self) -> None:
        lo, hi = (float(v) for v in self.interval)
        if math.isnan(lo) or math.isnan(hi) or lo > hi:
            raise ValueError(f"interval must be (lo, hi) with lo <= hi, got {self.interval!r}")
        if self.exact:
            raise ValueError("an exact claim has no interval: pass exact=False or interval=None")
        object.__setattr__(self, "interval", (lo, hi))

    def _is_measured(self) -> bool:
        return self.measured is not None and not math.isnan(self.measured)

    def _meets(self, x: float) -> bool:
        if self.op == "within":
            return abs(x - self.reference) <= float(self.tolerance)
        return bool(_OPERATORS[self.op](x, self.reference))

    @property
    def verdict(self) -> Verdict:
        if not self._is_measured():
            return Verdict.NOT_MEASURABLE
        if self.interval is None:  # exact: the point figure decides
            return Verdict.HOLDS if self._meets(self.measured) else Verdict.DOES_NOT_HOLD
        lo, hi = self.interval
        if self._meets(lo) and self._meets(hi):
            # Every criterion here defines an interval of passing values, so both ends passing
            # means the whole interval passes.
            return Verdict.HOLDS
        if self.op == "within":
            band_lo, band_hi = self.reference - self.tolerance, self.reference + self.tolerance
            fails_everywhere = hi < band_lo or lo > band_hi
        else:
            fails_everywhere = not self._meets(lo) and not self._meets(hi)
        return Verdict.DOES_NOT_HOLD if fails_everywhere else Verdict.INCONCLUSIVE

    @property
    def counts_as_success(self) -> bool:
        """True when the claim holds on a criterion fixed before seeing the data."""
        return self.verdict == Verdict.HOLDS and not self.post_hoc

    @property
    def criterion(self) -> str:
        if self.op == "within":
            text = f"|x - {self.reference:g}| <= {self.tolerance:g}"
        else:
            text = f"x {self.op} {self.reference:g}"
        return text + " (post hoc)" if self.post_hoc else text

    @property
    def interval_text(self) -> str:
        """``"[lo, hi] (95%, method)"``, ``"exact"``, or ``"—"`` when nothing was measured."""
        if not self._is_measured():
            return "—"
        if self.interval is None:
            return "exact"
        lo, hi = self.interval
        how = f", {self.method}" if self.method else ""
        return f"[{lo:.4g}, {hi:.4g}] ({self.level:.0%}{how})"

    @classmethod
    def not_measurable(cls, statement: str, why: str, paper: str | None = None, scale: str = "") -> Claim:
        """A claim that cannot be measured here (say why in ``why``)."""
        return cls(statement, None, ">", 0.0, paper=paper, scale=scale, detail=why)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        if d["measured"] is not None and math.isnan(d["measured"]):
            d["measured"] = None
        d["interval"] = list(self.interval) if self.interval is not None else None
        d["verdict"] = str(self.verdict)
        d["criterion"] = self.criterion
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Claim:
        keys = (
            "statement",
            "measured",
            "op",
            "reference",
            "paper",
            "scale",
            "tolerance",
            "detail",
            "interval",
            "level",
            "method",
            "exact",
            "post_hoc",
        )
        kwargs = {k: d[k] for k in keys if k in d}
        if kwargs.get("interval") is not None:
            kwargs["interval"] = tuple(kwargs["interval"])
        return cls(**kwargs)


@dataclass
class Result:
    """What a headline experiment returns.

    ``claims`` are checked claims; ``metrics`` is free JSON-serialisable numbers; ``tables`` maps a
    table name to a list of row dicts (printed and reported); ``artifacts`` are file names (plots)
    relative to the run's output folder, filled in by :class:`iclr26.runtime.RunContext`.
    The runner fills the provenance fields (slug, seed, scale, timings, versions, config hash, and
    ``finished``, the UTC time the run ended as ISO 8601).
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
    finished: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "slug": self.slug,
            "seed": self.seed,
            "scale": self.scale,
            "config_hash": self.config_hash,
            "seconds": self.seconds,
            "versions": self.versions,
            "finished": self.finished,
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
            finished=d.get("finished", ""),
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

"""The originality-quality plane with iso-novelty curves."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..validation import is_finite_real


def frontier_plot(points: Mapping[str, tuple[float, float]], ax=None):
    """Scatter systems in the (O, Q) plane over iso-novelty curves ``N = 2OQ/(O+Q)``.

    ``points``: name -> (mean originality, mean quality), each in [0, 1]. Returns the figure.
    """
    import matplotlib.pyplot as plt

    if not isinstance(points, Mapping):
        raise ValueError(f"points must map names to (O, Q), got {type(points).__name__}")
    if not points:
        raise ValueError("points must name at least one system")
    for name, point in points.items():
        _check_point(name, point)
    fig, ax = (ax.figure, ax) if ax is not None else plt.subplots(figsize=(5, 4.5))
    grid = np.linspace(0.005, 1, 200)
    oo, qq = np.meshgrid(grid, grid)
    cs = ax.contour(oo, qq, 2 * oo * qq / (oo + qq), levels=np.arange(0.1, 1.0, 0.1), colors="0.8")
    ax.clabel(cs, fontsize=7)
    for name, (o, q) in points.items():
        ax.scatter([o], [q])
        ax.annotate(name, (o, q), fontsize=7, xytext=(3, 3), textcoords="offset points")
    ax.set(xlabel="originality O", ylabel="quality Q", xlim=(0, 1), ylim=(0, 1), title="novelty frontier")
    return fig


def _check_point(name, point) -> None:
    """``(O, Q)``: two real numbers (not bools, which would plot as 0 or 1) in [0, 1]."""
    pair = tuple(point) if isinstance(point, tuple | list | np.ndarray) else ()
    if len(pair) != 2 or not all(is_finite_real(v) and 0 <= v <= 1 for v in pair):
        raise ValueError(f"points[{name!r}] must be (O, Q), two numbers in [0, 1], got {point!r}")

"""The originality-quality plane with iso-novelty curves."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np


def frontier_plot(points: Mapping[str, tuple[float, float]], ax=None):
    """Scatter systems in the (O, Q) plane over iso-novelty curves ``N = 2OQ/(O+Q)``.

    ``points``: name -> (mean originality, mean quality), each in [0, 1]. Returns the figure.
    """
    import matplotlib.pyplot as plt

    if not points:
        raise ValueError("points must name at least one system")
    for name, (o, q) in points.items():
        if not (0 <= o <= 1 and 0 <= q <= 1):
            raise ValueError(f"points[{name!r}] must be (O, Q) in [0, 1], got {(o, q)}")
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

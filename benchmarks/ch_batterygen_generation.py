"""Throughput of the CH-BatteryGen fleet generator, and the cost of the alternative (a pybamm solve per cell).

Usage::

    .venv/bin/python benchmarks/ch_batterygen_generation.py [N_VEHICLES] [N_JOBS]

Generates ``N_VEHICLES`` (default 40) vehicles with the medium-scale pack designs (LFP 124/28 cells,
NCM 96 cells, 3 charge + 3 discharge segments) into a temporary folder, prints vehicles/s and the
extrapolated time for the paper's 1,000 vehicles; then times one pybamm ``Thevenin`` solve of one cell for
one drive segment and prints what a per-cell pybamm simulation of the same fleet would cost. No peer
implementation exists (the authors released data, not a generator), so no ratio to the authors' code.
"""

from __future__ import annotations

import sys
import tempfile
import time

import numpy as np


def main() -> None:
    from iclr26.ch_batterygen import chemistry_parameters, generate_fleet, make_fleet
    from iclr26.ch_batterygen._profiles import drive_current

    n = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    jobs = int(sys.argv[2]) if len(sys.argv) > 2 else None
    specs = make_fleet(n, seed=0, n_cycles=3)
    for c in ("LFP", "NCM"):
        chemistry_parameters(c)
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        out = generate_fleet(specs, tmp, fmt="parquet", n_jobs=jobs)
        dt = time.perf_counter() - t0
    rows = sum(o["rows"] for o in out)
    cells = sum(s.n_cells for s in specs)
    print(f"generated {n} vehicles ({rows:,} rows, {cells:,} cells) in {dt:.1f} s: {n / dt:.2f} vehicles/s")
    print(f"extrapolated 1,000 vehicles: {1000 * dt / n / 60:.1f} min")

    try:
        import pybamm
    except ImportError:
        print("pybamm not installed: skipping the per-cell pybamm comparison")
        return
    cur = drive_current(np.random.default_rng(0), 3600.0, 5.0, 180.0)
    pv = pybamm.ParameterValues("ECM_Example")
    pv.update({"Cell capacity [A.h]": 180.0, "Initial SoC": 0.9, "RCR lookup limit [A]": 1e4})
    t_grid = np.arange(cur.shape[0]) * 5.0
    pv["Current function [A]"] = pybamm.Interpolant(t_grid, cur, pybamm.t, interpolator="linear")
    sim = pybamm.Simulation(pybamm.equivalent_circuit.Thevenin(), parameter_values=pv)
    t0 = time.perf_counter()
    sim.solve(t_eval=t_grid[[0, -1]], t_interp=t_grid[::2])
    one = time.perf_counter() - t0
    seg_hours = rows * 10.0 / 3600.0 / n  # recorded hours per vehicle
    per_cell_fleet = one * seg_hours * cells / n * 1000
    print(f"one pybamm Thevenin solve, one cell, 1 h drive: {one:.2f} s")
    print(
        f"per-cell pybamm, 1,000 vehicles (~{seg_hours:.1f} h each): ~{per_cell_fleet / 3600:.1f} CPU-hours"
    )


if __name__ == "__main__":
    main()

"""Cell parameter sets (NCM, LFP) for the Thevenin equivalent circuit, derived from pybamm.

* Open-circuit voltage: full-cell OCV(SOC) = U_p(y(SOC)) - U_n(x(SOC)) from pybamm's electrode
  open-circuit potentials and the 0 %/100 % stoichiometries that pybamm's electrode-SOH solver finds for
  the cell's voltage window: ``Chen2020`` (NMC811 / graphite-SiOx, LG M50) for NCM, ``Prada2013``
  (LFP / graphite; LFP OCP of Afshar 2017) for LFP -- the LFP curve has the flat ~3.3 V plateau.
* R0, R1, C1: the *shape* of pybamm's ``ECM_Example`` look-up tables (quadratic in SOC, Arrhenius in
  temperature; R0 = 40 %, R1 = 60 % of the DC resistance; tau = R1 C1 = 30 s) at zero current. The tables
  are separable, R(T, SOC) = R_ref f(SOC) g(T), which is checked on load. The *level* is per chemistry:
  R0 and R1 are scaled so that the 10 s, 1C pulse resistance at 50 % SOC and 25 degC,
  ``R0 + R1 (1 - exp(-10 s / tau))``, equals the one pybamm's SPMe gives for the chemistry's parameter
  set, capacity-normalised (:data:`PULSE_RESISTANCE_OHM_AH`: ``Chen2020`` 0.1451 Ohm Ah, ``Prada2013``
  0.0713 Ohm Ah; a test recomputes both); the resistances are then divided by the cell capacity in use.
  The ``Prada2013`` cell is an A123 power cell, so the LFP level is on the low side for an energy cell;
  the ratio (LFP about half of NCM per Ah) is what the generator takes from it.
* Heat capacity per Ah (:data:`HEAT_CAPACITY_J_K_AH`): cell mass per Ah times a specific heat of
  1.0 (NCM) / 1.1 (LFP) J/(g K), with the mass per Ah of typical prismatic EV cells (specific energy about
  240 Wh/kg at 3.65 V for NCM, 170 Wh/kg at 3.2 V for LFP: 15 and 19 g/Ah). pybamm's ``Chen2020`` layer
  densities and heat capacities give 8.5 J/(K Ah) for its 18650 jelly roll alone (no can), the same order;
  ``Prada2013`` has no thermal parameters. These are our documented choices, not fitted values.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass

import numpy as np

from ._schema import CHEMISTRIES

_ECM_REF_CAPACITY_AH = 100.0
_PULSE_S = 10.0
#: 10 s, 1C discharge pulse resistance x nominal capacity (Ohm Ah) at 50 % SOC, 25 degC, from pybamm's SPMe
#: with the chemistry's parameter set (see :func:`pulse_resistance_from_pybamm`).
PULSE_RESISTANCE_OHM_AH = {"NCM": 0.1451, "LFP": 0.0713}
#: Cell heat capacity per Ah of capacity (J/(K Ah)); see the module docstring for the derivation.
HEAT_CAPACITY_J_K_AH = {"NCM": 15.0, "LFP": 21.0}


@dataclass(frozen=True)
class ChemistryParameters:
    """Look-up tables of one chemistry's Thevenin cell (all 1-D, for ``np.interp``).

    Attributes
    ----------
    name: ``"LFP"`` or ``"NCM"``.
    soc_grid, ocv: OCV(SOC) in volts on ``soc_grid`` (0..1).
    v_min, v_max: the cell's lower/upper cut-off voltages (V).
    r_soc_grid, r_soc_factor: the SOC factor f(SOC) of the resistances (1 at SOC 0.5).
    r_temp_grid_c, r_temp_factor: the temperature factor g(T) (1 at 25 degC), T in degC.
    r0_ref_100ah, r1_ref_100ah: R0 and R1 at 25 degC, 50 % SOC for a 100 Ah cell (Ohm).
    tau1_s: R1 C1 (s).
    heat_capacity_j_k_ah: the cell's heat capacity per Ah (J/K/Ah).
    """

    name: str
    soc_grid: np.ndarray
    ocv: np.ndarray
    v_min: float
    v_max: float
    r_soc_grid: np.ndarray
    r_soc_factor: np.ndarray
    r_temp_grid_c: np.ndarray
    r_temp_factor: np.ndarray
    r0_ref_100ah: float
    r1_ref_100ah: float
    tau1_s: float
    heat_capacity_j_k_ah: float

    def ocv_at(self, soc: np.ndarray) -> np.ndarray:
        return np.interp(soc, self.soc_grid, self.ocv)

    def resistance_factor(self, soc: np.ndarray, temp_c: np.ndarray) -> np.ndarray:
        """f(SOC) g(T): multiply R0_ref/R1_ref by this."""
        return np.interp(soc, self.r_soc_grid, self.r_soc_factor) * np.interp(
            temp_c, self.r_temp_grid_c, self.r_temp_factor
        )

    def r0_ref(self, capacity_ah: float) -> float:
        return self.r0_ref_100ah * _ECM_REF_CAPACITY_AH / capacity_ah

    def r1_ref(self, capacity_ah: float) -> float:
        return self.r1_ref_100ah * _ECM_REF_CAPACITY_AH / capacity_ah


_PYBAMM_SET = {"NCM": "Chen2020", "LFP": "Prada2013"}


def _ocv_table(chemistry: str, n: int = 201) -> tuple[np.ndarray, np.ndarray, float, float]:
    import pybamm

    pv = pybamm.ParameterValues(_PYBAMM_SET[chemistry])
    x0, x100, y100, y0 = pybamm.lithium_ion.get_min_max_stoichiometries(pv)
    soc = np.linspace(0.0, 1.0, n)
    x = x0 + soc * (x100 - x0)
    y = y0 + soc * (y100 - y0)
    u_n = pv["Negative electrode OCP [V]"]
    u_p = pv["Positive electrode OCP [V]"]
    un = np.asarray(pv.evaluate(u_n(pybamm.Vector(x)))).ravel()
    up = np.asarray(pv.evaluate(u_p(pybamm.Vector(y)))).ravel()
    ocv = up - un
    # Enforce a strictly increasing curve (np.interp and the CV controller rely on it).
    ocv = np.maximum.accumulate(ocv + 1e-7 * np.arange(n))
    return soc, ocv, float(pv["Lower voltage cut-off [V]"]), float(pv["Upper voltage cut-off [V]"])


def _ecm_tables() -> dict[str, np.ndarray | float]:
    import pandas as pd
    import pybamm

    folder = os.path.join(os.path.dirname(pybamm.__file__), "input", "parameters", "ecm", "data")
    out: dict[str, np.ndarray | float] = {}
    for name in ("r0", "r1", "c1"):
        df = pd.read_csv(os.path.join(folder, f"ecm_example_{name}.csv"))
        t_col, i_col, s_col, v_col = df.columns
        tab = df[df[i_col] == 0].pivot(index=t_col, columns=s_col, values=v_col)
        out[f"{name}_T"] = tab.index.to_numpy(dtype=float)
        out[f"{name}_S"] = tab.columns.to_numpy(dtype=float)
        out[name] = tab.to_numpy(dtype=float)
    r0 = out["r0"]
    temps, socs = out["r0_T"], out["r0_S"]
    i25 = int(np.argmin(np.abs(temps - 20.0)))  # a reference row; factors are renormalised to 25 degC below
    j50 = int(np.argmin(np.abs(socs - 0.5)))
    f_soc = r0[i25] / r0[i25, j50]
    g_t = r0[:, j50] / r0[i25, j50]
    if not np.allclose(r0, r0[i25, j50] * np.outer(g_t, f_soc), rtol=1e-6):
        raise RuntimeError("pybamm ECM_Example R0 table is no longer separable in (T, SOC)")
    g25 = float(np.interp(25.0, temps, g_t))
    out["f_soc"], out["g_t"] = f_soc, g_t / g25
    out["r0_ref"] = float(r0[i25, j50] * g25)
    out["r1_ref"] = float(out["r1"][i25, j50] * g25)
    out["tau"] = float(np.median(out["r1"] * out["c1"]))
    return out


@functools.lru_cache(maxsize=4)
def chemistry_parameters(chemistry: str) -> ChemistryParameters:
    """The Thevenin look-up tables of ``chemistry`` (``"LFP"`` or ``"NCM"``), built from pybamm.

    Cached per process (about half a second the first time).
    """
    if chemistry not in CHEMISTRIES:
        raise ValueError(f"chemistry must be one of {CHEMISTRIES}, got {chemistry!r}")
    soc, ocv, v_min, v_max = _ocv_table(chemistry)
    ecm = _ecm_tables()
    r0, r1, tau = float(ecm["r0_ref"]), float(ecm["r1_ref"]), float(ecm["tau"])
    pulse_100ah = (r0 + r1 * (1.0 - np.exp(-_PULSE_S / tau))) * _ECM_REF_CAPACITY_AH
    scale = PULSE_RESISTANCE_OHM_AH[chemistry] / pulse_100ah
    return ChemistryParameters(
        name=chemistry,
        soc_grid=soc,
        ocv=ocv,
        v_min=v_min,
        v_max=v_max,
        r_soc_grid=np.asarray(ecm["r0_S"]),
        r_soc_factor=np.asarray(ecm["f_soc"]),
        r_temp_grid_c=np.asarray(ecm["r0_T"]),
        r_temp_factor=np.asarray(ecm["g_t"]),
        r0_ref_100ah=r0 * scale,
        r1_ref_100ah=r1 * scale,
        tau1_s=tau,
        heat_capacity_j_k_ah=HEAT_CAPACITY_J_K_AH[chemistry],
    )


def pulse_resistance_from_pybamm(chemistry: str) -> float:
    """The 10 s, 1C discharge pulse resistance x capacity (Ohm Ah) of pybamm's SPMe for ``chemistry``'s
    parameter set (``Chen2020`` / ``Prada2013``), from 50 % SOC after a 60 s rest, at 25 degC.

    Takes a few seconds; the constants in :data:`PULSE_RESISTANCE_OHM_AH` are its results.
    """
    import pybamm

    if chemistry not in CHEMISTRIES:
        raise ValueError(f"chemistry must be one of {CHEMISTRIES}, got {chemistry!r}")
    pv = pybamm.ParameterValues(_PYBAMM_SET[chemistry])
    q = float(pv["Nominal cell capacity [A.h]"])
    exp = pybamm.Experiment(["Rest for 60 seconds", "Discharge at 1C for 10 seconds"], period="1 second")
    sim = pybamm.Simulation(pybamm.lithium_ion.SPMe(), parameter_values=pv, experiment=exp)
    sol = sim.solve(initial_soc=0.5)
    v_rest = float(sol.cycles[0]["Voltage [V]"].entries[-1])
    v_end = float(sol.cycles[1]["Voltage [V]"].entries[-1])
    current = float(sol.cycles[1]["Current [A]"].entries[-1])
    return (v_rest - v_end) / current * q

"""A battery pack of cells in series, each a first-order Thevenin equivalent circuit, time-stepped in NumPy.

Per cell ``i`` (pybamm's ``equivalent_circuit.Thevenin`` equations and sign convention: current ``I``
positive on discharge, the same for every cell of a series string):

    dSOC_i/dt = -(I + I_leak,i) / (3600 Q_i)
    dV1_i/dt  = -V1_i / tau_1 - I R1_i / tau_1                       (V1 is the RC overpotential)
    V_i       = OCV(SOC_i) - I R0_i + V1_i
    C_cell dT_i/dt = I^2 R0_i - I V1_i - k_cj (T_i - T_jig,i)
    C_jig dT_jig,i/dt = k_cj (T_i - T_jig,i) - k_ja (T_jig,i - T_amb)

``R0_i, R1_i = R_ref,i f(SOC_i) g(T_i)`` (pybamm ``ECM_Example`` tables), ``I_leak`` is a self-discharge
(internal leakage) current that drains the cell but does not flow through the terminals. With the
current held over a step, the RC and the thermal equations are integrated exactly (exponential
propagators); SOC is exact; the resistances are evaluated at the start of each step. All cells of a pack
advance together in one vectorised step, which is what makes 1,000 vehicles cheap; a test checks this
stepper against a pybamm ``Thevenin`` solve.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ._cells import ChemistryParameters


@dataclass
class PackParameters:
    """Per-cell parameters of a series pack (arrays of shape ``(n_cells,)``).

    ``capacity_ah``: actual cell capacities; ``r0_ohm``, ``r1_ohm``: R0/R1 at 25 degC, 50 % SOC (the
    SOC/temperature factors of the chemistry multiply them); ``leak_a``: self-discharge current (A);
    ``cth_cell``, ``cth_jig`` (J/K), ``k_cell_jig``, ``k_jig_air`` (W/K): the lumped thermal model.
    """

    chemistry: ChemistryParameters
    capacity_ah: np.ndarray
    r0_ohm: np.ndarray
    r1_ohm: np.ndarray
    leak_a: np.ndarray
    cth_cell: np.ndarray
    cth_jig: np.ndarray
    k_cell_jig: np.ndarray
    k_jig_air: np.ndarray
    nominal_capacity_ah: float
    _prop_cache: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def n_cells(self) -> int:
        return int(self.capacity_ah.shape[0])

    def thermal_propagator(self, dt: float) -> tuple[np.ndarray, ...]:
        """Exact discretisation of the two-node thermal model over ``dt`` (held heat and ambient).

        With ``z = (T_cell, T_jig)`` and ``u = (heat W, T_amb)``: ``z' = Phi z + Gamma u``. Returns the
        per-cell entries ``(p00, p01, p10, p11, g00, g01, g10, g11)``, each of shape ``(n,)``; the 2x2
        matrix exponential is taken in closed form, ``Gamma = A^-1 (Phi - I) B``.
        """
        key = round(float(dt), 9)
        hit = self._prop_cache.get(key)
        if hit is not None:
            return hit
        a = self.k_cell_jig / self.cth_cell
        b = self.k_cell_jig / self.cth_jig
        c = self.k_jig_air / self.cth_jig
        # A = [[-a, a], [b, -(b + c)]]; exp(A dt) = e^(m dt) [cosh(d dt) I + sinh(d dt)/d (A - m I)]
        m = -(a + b + c) / 2.0
        d = np.sqrt(((b + c - a) / 2.0) ** 2 + a * b)
        em = np.exp(m * dt)
        ch = np.cosh(d * dt)
        sh = np.sinh(d * dt) / d
        p00 = em * (ch + sh * (-a - m))
        p01 = em * sh * a
        p10 = em * sh * b
        p11 = em * (ch + sh * (-(b + c) - m))
        det = a * c  # det(A) = a (b + c) - a b
        # A^-1 = [[-(b + c), -a], [-b, -a]] / det; (Phi - I) then B = diag(1 / cth_cell, c)
        q00, q01, q10, q11 = p00 - 1.0, p01, p10, p11 - 1.0
        i00, i01, i10, i11 = -(b + c) / det, -a / det, -b / det, -a / det
        g00 = (i00 * q00 + i01 * q10) / self.cth_cell
        g10 = (i10 * q00 + i11 * q10) / self.cth_cell
        g01 = (i00 * q01 + i01 * q11) * c
        g11 = (i10 * q01 + i11 * q11) * c
        out = (p00, p01, p10, p11, g00, g01, g10, g11)
        if len(self._prop_cache) < 8:
            self._prop_cache[key] = out
        return out


@dataclass
class PackState:
    """The pack's state: per-cell SOC, RC overpotential ``v1`` (V), cell and jig temperatures (degC)."""

    soc: np.ndarray
    v1: np.ndarray
    t_cell: np.ndarray
    t_jig: np.ndarray
    time_s: float = 0.0

    def copy(self) -> PackState:
        return PackState(self.soc.copy(), self.v1.copy(), self.t_cell.copy(), self.t_jig.copy(), self.time_s)


@dataclass
class Trace:
    """What one simulated segment records, one row per sample.

    ``time_s (T,)``, ``current_a (T,)`` (positive = discharge), ``cell_v (T, n)``, ``cell_t (T, n)``,
    ``cell_soc (T, n)``.
    """

    time_s: np.ndarray
    current_a: np.ndarray
    cell_v: np.ndarray
    cell_t: np.ndarray
    cell_soc: np.ndarray

    @property
    def pack_v(self) -> np.ndarray:
        """The pack (series string) voltage: the sum of the cell voltages."""
        return self.cell_v.sum(axis=1)

    def __len__(self) -> int:
        return int(self.time_s.shape[0])


class _Recorder:
    def __init__(self, n_cells: int):
        self.n = n_cells
        self._t: list[float] = []
        self._i: list[float] = []
        self._v: list[np.ndarray] = []
        self._temp: list[np.ndarray] = []
        self._soc: list[np.ndarray] = []

    def add(self, t: float, i: float, v: np.ndarray, temp: np.ndarray, soc: np.ndarray) -> None:
        self._t.append(t)
        self._i.append(i)
        self._v.append(v)
        self._temp.append(temp.copy())
        self._soc.append(soc.copy())

    def trace(self) -> Trace:
        if not self._t:
            e = np.zeros((0, self.n))
            return Trace(np.zeros(0), np.zeros(0), e, e.copy(), e.copy())
        return Trace(
            np.asarray(self._t),
            np.asarray(self._i),
            np.vstack(self._v),
            np.vstack(self._temp),
            np.vstack(self._soc),
        )


def terminal_voltage(params: PackParameters, state: PackState, current: float) -> np.ndarray:
    """Cell terminal voltages ``OCV(SOC) - I R0 + V1`` with ``current`` applied now, shape ``(n,)``."""
    chem = params.chemistry
    fac = chem.resistance_factor(state.soc, state.t_cell)
    return chem.ocv_at(state.soc) - current * params.r0_ohm * fac + state.v1


def _advance(params: PackParameters, state: PackState, current: float, dt: float, t_amb: float, fac) -> None:
    """Advance ``state`` in place by ``dt`` seconds at constant ``current`` (ZOH)."""
    r0 = params.r0_ohm * fac
    r1 = params.r1_ohm * fac
    heat = current * current * r0 - current * state.v1
    a = np.exp(-dt / params.chemistry.tau1_s)
    state.v1 = a * state.v1 - current * r1 * (1.0 - a)
    state.soc = state.soc - (current + params.leak_a) * dt / (3600.0 * params.capacity_ah)
    p00, p01, p10, p11, g00, g01, g10, g11 = params.thermal_propagator(dt)
    tc, tj = state.t_cell, state.t_jig
    state.t_cell = p00 * tc + p01 * tj + g00 * heat + g01 * t_amb
    state.t_jig = p10 * tc + p11 * tj + g10 * heat + g11 * t_amb
    state.time_s += dt


def charge_limit(
    params: PackParameters, state: PackState, fac: np.ndarray, v_limit: float, dt: float, i_max: float
) -> float:
    """The largest charging current magnitude (<= ``i_max``) that keeps every cell at or below ``v_limit``.

    Held over the next ``dt`` seconds, the current must respect the limit both now (``OCV + I R0 + V1``)
    and at the end of the step, when the RC overpotential has grown and the SOC risen:
    ``OCV_i(SOC_i + I dt / (3600 Q_i)) + a V1_i + I (R0_i + R1_i (1 - a)) <= v_limit`` with
    ``a = exp(-dt/tau)``. The end-of-step condition is solved by a few secant-slope iterations on the OCV
    and then checked exactly (a bisection cuts the current if the check fails). Without it a 10 s
    controller overshoots the limit (16-24 mV seen for LFP at the end of CV).
    """
    if i_max <= 0:
        return 0.0
    chem = params.chemistry
    ocv = chem.ocv_at(state.soc)
    r0 = params.r0_ohm * fac
    r_end = r0 + params.r1_ohm * fac * (1.0 - float(np.exp(-dt / chem.tau1_s)))
    a_v1 = float(np.exp(-dt / chem.tau1_s)) * state.v1
    per_a = dt / (3600.0 * params.capacity_ah)  # SOC per ampere over the step

    def v_end(i: float) -> np.ndarray:
        return chem.ocv_at(np.minimum(state.soc + i * per_a, 1.0)) + a_v1 + i * r_end

    now = float(np.min((v_limit - ocv - state.v1) / r0))
    cap = min(i_max, max(now, 0.0))
    if cap <= 0.0 or v_end(cap).max() <= v_limit:
        return cap
    i = cap
    for _ in range(4):  # secant slope of the OCV over the step the current makes
        d = np.maximum(i * per_a, 1e-12)
        slope = (chem.ocv_at(np.minimum(state.soc + d, 1.0)) - ocv) / d
        i = min(cap, max(float(np.min((v_limit - ocv - a_v1) / (r_end + slope * per_a))), 0.0))
    lo, hi = 0.0, i
    if v_end(hi).max() > v_limit:
        for _ in range(30):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if v_end(mid).max() <= v_limit else (lo, mid)
        return lo
    return i


def run_current(
    params: PackParameters,
    state: PackState,
    current: np.ndarray,
    dt: float,
    t_amb: float,
    record_every: int = 1,
    stop_cell_v: float | None = None,
    stop_soc: float | None = None,
    v_max: float | None = None,
) -> Trace:
    """Apply a requested pack current ``current[k]`` (A, + = discharge) for ``dt`` s each; mutate ``state``.

    A sample (time, current, cell voltages under that current, temperatures, SOCs) is recorded at the
    start of every ``record_every``-th step. Stops early (after recording) when the lowest cell voltage
    falls below ``stop_cell_v`` or the lowest cell SOC below ``stop_soc``. With ``v_max`` a charging
    (regenerative, < 0) current is derated as a BMS does near full charge: its magnitude is cut to the
    largest that keeps every cell terminal voltage at or below ``v_max`` over the step (see
    :func:`charge_limit`; the rest of the braking goes to the friction brakes); the recorded current is
    the one applied.
    """
    chem = params.chemistry
    rec = _Recorder(params.n_cells)
    current = np.asarray(current, dtype=np.float64)
    for k in range(current.shape[0]):
        i_k = float(current[k])
        fac = chem.resistance_factor(state.soc, state.t_cell)
        if v_max is not None and i_k < 0.0:
            i_k = -charge_limit(params, state, fac, v_max, dt, -i_k)
        if k % record_every == 0:
            v = chem.ocv_at(state.soc) - i_k * params.r0_ohm * fac + state.v1
            rec.add(state.time_s, i_k, v, state.t_cell, state.soc)
            if (stop_cell_v is not None and v.min() < stop_cell_v) or (
                stop_soc is not None and state.soc.min() < stop_soc
            ):
                break
        _advance(params, state, i_k, dt, t_amb, fac)
    return rec.trace()


def run_cccv(
    params: PackParameters,
    state: PackState,
    i_cc: float,
    v_cv: float,
    i_cut: float,
    dt: float,
    t_amb: float,
    max_time_s: float,
    stop_mean_soc: float | None = None,
    record_every: int = 1,
) -> Trace:
    """CC-CV charge of the series string, controlled on the highest cell (what a BMS does).

    Constant current ``i_cc`` (A, > 0; applied as ``-i_cc``) until the highest cell terminal voltage
    reaches ``v_cv``; then the current is the largest (<= ``i_cc``) that keeps every cell at or below
    ``v_cv`` now and at the end of the step (:func:`charge_limit`). Ends when ``|I| < i_cut``, after
    ``max_time_s`` or when the mean cell SOC reaches ``stop_mean_soc`` (the driver unplugs).
    """
    if i_cc <= 0 or i_cut <= 0:
        raise ValueError("i_cc and i_cut must be positive (charge current magnitudes)")
    chem = params.chemistry
    rec = _Recorder(params.n_cells)
    n_steps = int(np.ceil(max_time_s / dt))
    for k in range(n_steps):
        fac = chem.resistance_factor(state.soc, state.t_cell)
        ocv = chem.ocv_at(state.soc)
        r0 = params.r0_ohm * fac
        i_mag = charge_limit(params, state, fac, v_cv, dt, i_cc)
        done = i_mag < i_cut or (stop_mean_soc is not None and state.soc.mean() >= stop_mean_soc)
        if k % record_every == 0 or done:
            rec.add(state.time_s, -i_mag, ocv + i_mag * r0 + state.v1, state.t_cell, state.soc)
        if done:
            break
        _advance(params, state, -i_mag, dt, t_amb, fac)
    return rec.trace()


def park(params: PackParameters, state: PackState, duration_s: float, t_amb: float) -> None:
    """An unrecorded rest (the car parked): exact for zero terminal current; mutates ``state``.

    The RC overpotential relaxes, only the leakage currents change the SOCs, temperatures relax
    towards ambient.
    """
    if duration_s <= 0:
        return
    state.v1 = state.v1 * np.exp(-duration_s / params.chemistry.tau1_s)
    state.soc = state.soc - params.leak_a * duration_s / (3600.0 * params.capacity_ah)
    p00, p01, p10, p11, _, g01, _, g11 = params.thermal_propagator(duration_s)
    tc, tj = state.t_cell, state.t_jig
    state.t_cell = p00 * tc + p01 * tj + g01 * t_amb
    state.t_jig = p10 * tc + p11 * tj + g11 * t_amb
    state.time_s += duration_s


def concat_traces(traces: list[Trace]) -> Trace:
    """Join consecutive traces of one recorded segment.

    A trace that stopped early (``run_current``'s stop conditions) ends with a sample at the time the
    next one starts; a sample not later than the previous trace's last one is dropped, so time strictly
    increases.
    """
    traces = [t for t in traces if len(t)]
    if not traces:
        raise ValueError("no samples to concatenate")
    parts = [traces[0]]
    for t in traces[1:]:
        keep = t.time_s > parts[-1].time_s[-1] + 1e-9
        if keep.any():
            k = keep
            parts.append(Trace(t.time_s[k], t.current_a[k], t.cell_v[k], t.cell_t[k], t.cell_soc[k]))
    return Trace(
        np.concatenate([t.time_s for t in parts]),
        np.concatenate([t.current_a for t in parts]),
        np.vstack([t.cell_v for t in parts]),
        np.vstack([t.cell_t for t in parts]),
        np.vstack([t.cell_soc for t in parts]),
    )

"""Physics sanity of the pack simulator, and agreement with a pybamm Thevenin solve."""

from __future__ import annotations

import numpy as np
import pytest

from iclr26.ch_batterygen import (
    FAULT_LEVELS,
    PackParameters,
    PackState,
    VehicleSpec,
    build_pack,
    chemistry_parameters,
    clean_segment,
    park,
    run_cccv,
    run_current,
    simulate_vehicle,
)


def _pack(chem="NCM", n=6, q=100.0, leak=None, r_scale=None):
    c = chemistry_parameters(chem)
    o = np.ones(n)
    r_scale = o if r_scale is None else np.asarray(r_scale, float)
    return PackParameters(
        chemistry=c,
        capacity_ah=o * q,
        r0_ohm=c.r0_ref(q) * r_scale,
        r1_ohm=c.r1_ref(q) * r_scale,
        leak_a=o * 0.0 if leak is None else np.asarray(leak, float),
        cth_cell=o * 18 * q,
        cth_jig=o * 10 * q,
        k_cell_jig=o * 0.012 * q,
        k_jig_air=o * 0.02 * q,
        nominal_capacity_ah=q,
    )


def _state(n, soc=0.6, t=25.0):
    return PackState(np.full(n, soc), np.zeros(n), np.full(n, t), np.full(n, t))


def test_ocv_curves_from_pybamm_lfp_plateau_is_flat():
    lfp, ncm = chemistry_parameters("LFP"), chemistry_parameters("NCM")
    mid = np.linspace(0.3, 0.7, 9)
    # LFP: a plateau (tens of mV over 40 % SOC); NCM: a sloped curve (hundreds of mV).
    assert np.ptp(lfp.ocv_at(mid)) < 0.08
    assert np.ptp(ncm.ocv_at(mid)) > 0.2
    assert np.all(np.diff(lfp.ocv) > 0) and np.all(np.diff(ncm.ocv) > 0)
    assert 3.2 < lfp.ocv_at(0.5) < 3.35 and 3.6 < ncm.ocv_at(0.5) < 3.8


@pytest.mark.parametrize("chem", ["LFP", "NCM"])
def test_recorded_segments_are_physical(chem):
    spec = VehicleSpec("vin_t1", chem, "low_capacity", 3, n_cells=12, capacity_ah=100.0, n_cycles=1, seed=3)
    data = simulate_vehicle(spec, keep_traces=True)
    assert [s.scenario for s in data.segments] == ["discharge", "charge"]
    for seg in data.segments:
        tr = seg.trace
        assert tr.cell_soc.min() >= 0.0 and tr.cell_soc.max() <= 1.0
        f = seg.frame
        # the written SUM_VOLTAGE (its own sensor) agrees with the sum of the written cell voltages
        vcols = [f"VOLT_{i}" for i in range(1, 13)]
        assert np.abs(f["SUM_VOLTAGE"] - f[vcols].sum(axis=1)).max() < 0.3
        assert f["SOC"].between(0, 100).all()
        assert (f["MAX_CELL_VOLT"] >= f["MIN_CELL_VOLT"]).all()
        assert np.all(np.diff(f["TIME"]) > 0)  # no repeated timestamp where a drive stopped early
        assert clean_segment(f)[1].clean
    dis, chg = data.segments
    assert (dis.frame["SUM_CURRENT"].mean() > 0) and (chg.frame["SUM_CURRENT"].mean() < 0)
    assert set(chg.frame["CHARGE_STATUS"]) == {1} and set(dis.frame["CHARGE_STATUS"]) == {3}


def test_pack_voltage_step_is_the_sum_of_the_cells_ir_drops():
    # A series string: a current step changes the pack voltage at once by dI times the sum of the cells'
    # R0 (at their own SOC and temperature), computed here from the parameters, not from the trace.
    n = 6
    p = _pack("NCM", n, 100.0, r_scale=[1.0, 1.2, 0.9, 3.0, 1.0, 1.1])
    st = _state(n, 0.6)
    st.soc[:] = np.linspace(0.4, 0.8, n)
    st.t_cell[:] = np.linspace(10.0, 35.0, n)
    fac = p.chemistry.resistance_factor(st.soc, st.t_cell)
    expected = 80.0 * float(np.sum(p.r0_ohm * fac))
    tr = run_current(p, st, np.array([0.0, 80.0]), 1e-9, 25.0)
    assert tr.pack_v[0] - tr.pack_v[1] == pytest.approx(expected, rel=1e-6)
    assert expected > 0.02  # tens of mV: a step the test would see if the model dropped R0


@pytest.mark.parametrize("category", ["self_discharge", "high_resistance", "low_capacity"])
@pytest.mark.parametrize("severity", [1, 2, 3])
def test_build_pack_injects_one_fault_of_the_stated_size(category, severity):
    chem = chemistry_parameters("LFP")
    spec = VehicleSpec("v", "LFP", category, severity, n_cells=40, capacity_ah=150.0, seed=severity)
    normal = VehicleSpec("v", "LFP", "normal", 0, n_cells=40, capacity_ah=150.0, seed=severity)
    p, cell, value = build_pack(spec, chem, np.random.default_rng(7))
    p0, cell0, value0 = build_pack(normal, chem, np.random.default_rng(7))
    assert cell0 is None and value0 is None and 0 <= cell < 40
    base = FAULT_LEVELS[category][1][severity]
    others = np.arange(40) != cell
    if category == "self_discharge":
        assert value == pytest.approx(base, rel=0.031)
        assert p.leak_a[cell] == pytest.approx(p.capacity_ah[cell] * value / 100.0 / 24.0)
        assert p.leak_a[cell] > 15 * p.leak_a[others].max()  # healthy cells leak <= 0.05 %/day
        changed = ["leak_a"]
    elif category == "high_resistance":
        assert value == pytest.approx(base, rel=0.031)
        assert p.r0_ohm[cell] / p0.r0_ohm[cell] == pytest.approx(value)
        assert p.r1_ohm[cell] / p0.r1_ohm[cell] == pytest.approx(value)
        changed = ["r0_ohm", "r1_ohm"]
    else:
        assert value == pytest.approx(base, abs=0.0101)
        assert p.capacity_ah[cell] == pytest.approx(150.0 * value)
        changed = ["capacity_ah"]
    # the same generator draws give the same manufacturing spread: nothing else differs from the normal pack
    for name in ("capacity_ah", "r0_ohm", "r1_ohm", "leak_a", "k_cell_jig"):
        a, b = getattr(p, name), getattr(p0, name)
        np.testing.assert_array_equal(a[others], b[others])
        if name not in changed:
            assert a[cell] == b[cell]


@pytest.mark.parametrize("chem", ["LFP", "NCM"])
def test_regenerative_braking_is_derated_near_full_charge(chem):
    p = _pack(chem, 4, 150.0, r_scale=[1.0, 1.0, 2.0, 1.0])
    v_max = p.chemistry.v_max
    st = _state(4, 0.985)
    req = np.full(120, -1.0 * 150.0)  # 1C of regen for 10 minutes, asked at 98.5 % SOC
    tr = run_current(p, st, req, 5.0, 25.0, v_max=v_max)
    assert tr.cell_v.max() <= v_max + 1e-9
    assert tr.current_a.max() > -150.0 + 1.0  # derated
    assert tr.cell_v.max() > v_max - 0.01  # ... to the limit, not below it
    free = run_current(p, _state(4, 0.985), req, 5.0, 25.0)
    assert free.cell_v.max() > v_max + 0.01  # without the derating the limit is crossed


def test_self_discharging_cell_drifts_down_at_rest():
    n, q = 6, 100.0
    leak = np.zeros(n)
    leak[2] = q * 0.05 / 24.0  # 5 % of capacity per day
    p = _pack("NCM", n, q, leak=leak)
    st = _state(n, 0.6)
    tr = run_current(p, st, np.zeros(24 * 6), 600.0, 25.0)  # a day at rest, sampled every 10 min
    others = np.delete(tr.cell_v, 2, axis=1).mean(axis=1)
    gap = tr.cell_v[:, 2] - others
    assert gap[-1] < gap[0] - 0.005  # several mV lower after a day
    assert np.all(np.diff(gap) <= 1e-12)  # monotone drift
    np.testing.assert_allclose(np.delete(tr.cell_v, 2, axis=1)[-1], others[-1])  # neighbours stay together
    # the unrecorded park is the same physics
    st2 = _state(n, 0.6)
    park(p, st2, 86400.0, 25.0)
    assert st2.soc[2] == pytest.approx(0.6 - 0.05, abs=1e-9)


def test_high_resistance_cell_has_larger_ir_drop():
    n = 5
    r = np.ones(n)
    r[1] = 2.0
    p = _pack("LFP", n, 150.0, r_scale=r)
    st = _state(n, 0.5)
    cur = np.r_[np.zeros(3), np.full(30, 150.0)]
    tr = run_current(p, st, cur, 10.0, 25.0)
    drop = tr.cell_v[2] - tr.cell_v[3]  # instantaneous drop when the 1C load starts
    assert drop[1] == pytest.approx(2.0 * drop[0], rel=0.02)
    sag = tr.cell_v[2] - tr.cell_v[-1]
    assert sag[1] > 1.5 * np.delete(sag, 1).max()


@pytest.mark.parametrize("chem", ["LFP", "NCM"])
def test_cccv_respects_voltage_limit_and_tapers(chem):
    p = _pack(chem, 4, 100.0)
    p.capacity_ah[1] = 70.0  # a low-capacity cell rises fastest at the end (it overshot LFP's 3.6 V by 16 mV)
    v_cv = p.chemistry.v_max
    st = _state(4, 0.5)
    st.soc[0] = 0.55  # the highest cell controls the CV phase
    tr = run_cccv(p, st, i_cc=100.0, v_cv=v_cv, i_cut=5.0, dt=10.0, t_amb=25.0, max_time_s=6 * 3600)
    assert tr.cell_v.max() <= v_cv + 1e-6
    i = -tr.current_a
    assert i[0] == pytest.approx(100.0) and i[-1] < 5.0  # CC then taper below the cut-off
    cv = np.argmax(i < 99.9)
    assert np.all(np.diff(i[cv:]) <= 1e-6)
    # the CV phase holds the highest cell at the limit (after a few steps of the predictive current cut)
    assert np.median(tr.cell_v[cv:].max(axis=1)) > v_cv - 0.005
    assert tr.cell_soc.max() <= 1.0


def test_vectorised_stepper_agrees_with_pybamm_thevenin():
    pybamm = pytest.importorskip("pybamm")
    chem = chemistry_parameters("NCM")
    q = 150.0
    p = _pack("NCM", 1, q)
    p.cth_cell[:], p.cth_jig[:], p.k_cell_jig[:], p.k_jig_air[:] = 3000.0, 1500.0, 2.0, 4.0
    st = _state(1, 0.8)
    cur = np.concatenate([np.full(60, 150.0), np.zeros(60), np.full(60, -75.0)])
    ours = run_current(p, st, cur, 10.0, 25.0)

    r0, r1 = chem.r0_ref(q), chem.r1_ref(q)

    def f(s):
        return pybamm.Interpolant(chem.r_soc_grid, chem.r_soc_factor, s, "f_soc")

    def g(t):
        return pybamm.Interpolant(chem.r_temp_grid_c, chem.r_temp_factor, t, "g_T")

    pv = pybamm.ParameterValues("ECM_Example")
    pv.update(
        {
            "Cell capacity [A.h]": q,
            "Nominal cell capacity [A.h]": q,
            "Initial SoC": 0.8,
            "Open-circuit voltage [V]": lambda s: pybamm.Interpolant(chem.soc_grid, chem.ocv, s, "ocv"),
            "R0 [Ohm]": lambda T, i, s: r0 * f(s) * g(T),
            "R1 [Ohm]": lambda T, i, s: r1 * f(s) * g(T),
            "C1 [F]": lambda T, i, s: chem.tau1_s / (r1 * f(s) * g(T)),
            "Entropic change [V/K]": 0.0,
            "Cell thermal mass [J/K]": 3000.0,
            "Jig thermal mass [J/K]": 1500.0,
            "Cell-jig heat transfer coefficient [W/K]": 2.0,
            "Jig-air heat transfer coefficient [W/K]": 4.0,
            "Upper voltage cut-off [V]": 4.5,
            "Lower voltage cut-off [V]": 2.0,
            "RCR lookup limit [A]": 1e4,
        }
    )
    exp = pybamm.Experiment(
        ["Discharge at 150 A for 600 seconds", "Rest for 600 seconds", "Charge at 75 A for 600 seconds"],
        period="10 seconds",
    )
    sol = pybamm.Simulation(pybamm.equivalent_circuit.Thevenin(), parameter_values=pv, experiment=exp).solve()
    t = sol["Time [s]"].entries
    v, soc, temp = sol["Voltage [V]"].entries, sol["SoC"].entries, sol["Cell temperature [degC]"].entries
    ks = [k for k in range(180) if k % 60 != 0]  # samples strictly inside constant-current steps
    for k in ks:
        j = np.flatnonzero(np.isclose(t, 10.0 * k))[-1]
        assert ours.cell_v[k, 0] == pytest.approx(v[j], abs=1e-3)
        assert ours.cell_soc[k, 0] == pytest.approx(soc[j], abs=1e-6)
        assert ours.cell_t[k, 0] == pytest.approx(temp[j], abs=0.05)


def test_chemistry_specific_resistance_and_heat_capacity():
    from iclr26.ch_batterygen._cells import (
        HEAT_CAPACITY_J_K_AH,
        PULSE_RESISTANCE_OHM_AH,
        pulse_resistance_from_pybamm,
    )

    for chem in ("LFP", "NCM"):
        c = chemistry_parameters(chem)
        # the stated 10 s pulse resistance is what pybamm's SPMe gives for the chemistry's parameter set ...
        assert pulse_resistance_from_pybamm(chem) == pytest.approx(PULSE_RESISTANCE_OHM_AH[chem], rel=2e-3)
        # ... and what our ECM cell reproduces (R0 plus the RC branch charged for 10 s), per Ah
        r10 = c.r0_ref(100.0) + c.r1_ref(100.0) * (1 - np.exp(-10.0 / c.tau1_s))
        assert r10 * 100.0 == pytest.approx(PULSE_RESISTANCE_OHM_AH[chem], rel=1e-9)
        assert c.heat_capacity_j_k_ah == HEAT_CAPACITY_J_K_AH[chem]
    lfp, ncm = chemistry_parameters("LFP"), chemistry_parameters("NCM")
    assert lfp.r0_ref(150.0) < 0.6 * ncm.r0_ref(150.0) and lfp.heat_capacity_j_k_ah > ncm.heat_capacity_j_k_ah

"""Operating profiles: generated driving cycles (speed -> road-load power -> pack current) and charging.

Driving: a speed trace is a chain of micro-trips (accelerate, cruise with an AR(1) speed fluctuation,
brake, idle), the way standard drive cycles (WLTC, US06) are built from urban/extra-urban/highway
phases. The traction power of a reference car (1,800 kg, 60 kWh pack) follows the road-load equation

    P = v (m a (1 + e_rot) + m g C_rr + 0.5 rho C_d A v^2) / eta_drive        (P > 0, traction)
    P = v (...) eta_regen, limited to the regenerative power cap                (P < 0, braking)

plus an auxiliary load; it is expressed as a C-rate ``P / E_ref`` so the same profile drives packs of
any size (``I = C-rate x capacity``).
"""

from __future__ import annotations

import numpy as np

_MASS_KG = 1800.0
_E_REF_WH = 60_000.0
_CRR = 0.010
_CDA = 0.62  # C_d A (m^2)
_RHO = 1.2
_ROT = 0.05
_ETA_DRIVE = 0.88
_ETA_REGEN = 0.65
_P_REGEN_MAX_W = 45_000.0
_P_TRACTION_MAX_W = 130_000.0
_G = 9.81

#: (speed range km/h, probability) of micro-trip types: urban, suburban, highway.
_TRIP_TYPES = (((15.0, 50.0), 0.5), ((45.0, 80.0), 0.3), ((80.0, 125.0), 0.2))


def speed_profile(rng: np.random.Generator, duration_s: float, dt: float) -> np.ndarray:
    """A generated speed trace (m/s), ``ceil(duration_s / dt)`` samples of ``dt`` seconds."""
    n = int(np.ceil(duration_s / dt))
    v = np.zeros(n)
    k = 0
    types = [t[0] for t in _TRIP_TYPES]
    probs = np.array([t[1] for t in _TRIP_TYPES])
    while k < n:
        lo, hi = types[rng.choice(len(types), p=probs)]
        target = rng.uniform(lo, hi) / 3.6
        acc = rng.uniform(0.6, 2.2)
        dec = rng.uniform(0.8, 2.8)
        cruise = rng.uniform(20.0, 240.0) if target < 14 else rng.uniform(60.0, 600.0)
        idle = rng.uniform(5.0, 60.0)
        seg = []
        s = 0.0
        while s < target:
            s = min(target, s + acc * dt)
            seg.append(s)
        m = int(cruise / dt)
        fl = np.zeros(m)
        for j in range(1, m):  # AR(1) fluctuation around the target speed
            fl[j] = 0.97 * fl[j - 1] + rng.normal(0.0, 0.25 * np.sqrt(dt))
        seg.extend(np.clip(target + fl, 0.3 * target, 1.3 * target))
        s = seg[-1]
        while s > 0:
            s = max(0.0, s - dec * dt)
            seg.append(s)
        seg.extend([0.0] * int(idle / dt))
        seg_arr = np.asarray(seg)
        take = min(n - k, seg_arr.shape[0])
        v[k : k + take] = seg_arr[:take]
        k += take
    return v


def traction_c_rate(speed: np.ndarray, dt: float, aux_w: float = 1500.0, slope: float = 0.0) -> np.ndarray:
    """Battery C-rate (1/h, + = discharge) of the reference car following ``speed`` (m/s)."""
    speed = np.asarray(speed, dtype=np.float64)
    acc = np.gradient(speed, dt)
    force = (
        _MASS_KG * acc * (1 + _ROT)
        + _MASS_KG * _G * (_CRR * np.cos(slope) + np.sin(slope)) * (speed > 0.05)
        + 0.5 * _RHO * _CDA * speed**2
    )
    p_wheel = force * speed
    p = np.where(p_wheel > 0, p_wheel / _ETA_DRIVE, p_wheel * _ETA_REGEN)
    p = np.clip(p, -_P_REGEN_MAX_W, _P_TRACTION_MAX_W) + aux_w
    return p / _E_REF_WH


def drive_current(
    rng: np.random.Generator, duration_s: float, dt: float, capacity_ah: float, aggressiveness: float = 1.0
) -> np.ndarray:
    """Pack current (A, + = discharge) of a generated drive of ``duration_s`` seconds."""
    v = speed_profile(rng, duration_s, dt) * aggressiveness
    aux = rng.uniform(600.0, 3500.0)  # HVAC and electronics
    slope = rng.normal(0.0, 0.01)
    return traction_c_rate(v, dt, aux_w=aux, slope=slope) * capacity_ah

"""RDP accountant of the Poisson-subsampled Gaussian mechanism and the σ that meets (ε, δ).

RDP of the sampled Gaussian mechanism: Mironov, Talwar & Zhang (2019), "Rényi differential privacy of the
sampled Gaussian mechanism", arXiv:1908.10530, Sec. 3.3 (integer and fractional orders). RDP → (ε, δ)
conversion: Balle et al. (2020), "Hypothesis testing interpretations and Rényi differential privacy",
Thm. 21. The order grid and the bisection follow opacus's defaults so that σ agrees with
``opacus.accountants.utils.get_noise_multiplier``.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

#: RDP orders: 1.1, 1.2, …, 10.9, then 12, …, 63 (opacus's default grid).
ORDERS = np.array([1 + x / 10.0 for x in range(1, 100)] + list(range(12, 64)), dtype=float)
_MAX_SIGMA = 1e6


def _log_a_int(q: float, sigma: float, alpha: int) -> float:
    """log A_α for integer α: log Σ_i C(α,i) q^i (1-q)^(α-i) exp((i²-i)/(2σ²))."""
    i = np.arange(alpha + 1, dtype=float)
    terms = (
        np.log(special.binom(alpha, i))
        + i * math.log(q)
        + (alpha - i) * math.log1p(-q)
        + (i * i - i) / (2 * sigma**2)
    )
    return float(special.logsumexp(terms))


def _log_erfc(x: float) -> float:
    return math.log(2) + float(special.log_ndtr(-x * math.sqrt(2)))


def _signed_log_add(log_acc: float, log_term: float, positive: bool) -> float:
    if positive:
        return float(np.logaddexp(log_acc, log_term))
    if log_term == -np.inf:
        return log_acc
    if log_acc <= log_term:
        return -np.inf if log_acc == log_term else float("nan")
    return log_acc + math.log(-math.expm1(log_term - log_acc))


def _log_a_frac(q: float, sigma: float, alpha: float) -> float:
    """log A_α for fractional α: the two-sided series of Mironov et al. (2019), Sec. 3.3, to terms < e^-30."""
    log_a0 = log_a1 = -np.inf
    z0 = sigma**2 * math.log(1 / q - 1) + 0.5
    i = 0
    while True:
        coef = special.binom(alpha, i)
        log_coef = math.log(abs(coef))
        j = alpha - i
        log_s0 = (
            log_coef
            + i * math.log(q)
            + j * math.log1p(-q)
            + (i * i - i) / (2 * sigma**2)
            + math.log(0.5)
            + _log_erfc((i - z0) / (math.sqrt(2) * sigma))
        )
        log_s1 = (
            log_coef
            + j * math.log(q)
            + i * math.log1p(-q)
            + (j * j - j) / (2 * sigma**2)
            + math.log(0.5)
            + _log_erfc((z0 - j) / (math.sqrt(2) * sigma))
        )
        log_a0 = _signed_log_add(log_a0, log_s0, coef > 0)
        log_a1 = _signed_log_add(log_a1, log_s1, coef > 0)
        i += 1
        if max(log_s0, log_s1) < -30:
            return float(np.logaddexp(log_a0, log_a1))


def rdp(q: float, sigma: float, steps: int, orders: np.ndarray = ORDERS) -> np.ndarray:
    """RDP ε_α (shape ``(len(orders),)``) of ``steps`` sampled Gaussians (rate q, noise σ)."""
    if sigma == 0:
        return np.full(len(orders), np.inf)
    if q == 1.0:
        return steps * orders / (2 * sigma**2)
    per_step = [
        (_log_a_int(q, sigma, int(a)) if float(a).is_integer() else _log_a_frac(q, sigma, a)) / (a - 1)
        for a in orders
    ]
    return steps * np.asarray(per_step)


def epsilon(q: float, sigma: float, steps: int, delta: float, orders: np.ndarray = ORDERS) -> float:
    """ε at ``delta`` after ``steps`` steps (Balle et al. 2020, Thm. 21, minimised over ``orders``)."""
    eps = (
        rdp(q, sigma, steps, orders)
        - (math.log(delta) + np.log(orders)) / (orders - 1)
        + np.log((orders - 1) / orders)
    )
    return float(np.nanmin(eps)) if not np.isnan(eps).all() else math.inf


def noise_multiplier(eps: float, delta: float, q: float, steps: int, tolerance: float = 0.01) -> float:
    """The smallest σ (to the bisection ``tolerance`` on ε) with ε(σ) ≤ ``eps`` (opacus's search)."""
    sigma_low, sigma_high, eps_high = 0.0, 10.0, math.inf
    while eps_high > eps:
        sigma_high *= 2
        eps_high = epsilon(q, sigma_high, steps, delta)
        if sigma_high > _MAX_SIGMA:
            raise ValueError(f"epsilon: the budget {eps} is too small for {steps} steps at sampling rate {q}")
    while eps - eps_high > tolerance:
        sigma = (sigma_low + sigma_high) / 2
        e = epsilon(q, sigma, steps, delta)
        if e < eps:
            sigma_high, eps_high = sigma, e
        else:
            sigma_low = sigma
    return sigma_high

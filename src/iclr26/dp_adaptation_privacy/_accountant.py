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


def _signed_logsumexp(log_terms: np.ndarray, signs: np.ndarray) -> float:
    """log Σ_i signs_i · exp(log_terms_i) (the sum must be ≥ 0; −inf when it is 0)."""
    m = float(np.max(log_terms))
    total = float(np.sum(signs * np.exp(log_terms - m)))
    return m + math.log(total) if total > 0 else -math.inf


def _log_a_frac(q: float, sigma: float, alpha: float, chunk: int = 512) -> float:
    """log A_α for fractional α: the two-sided series of Mironov et al. (2019), Sec. 3.3.

    Terms i = 0, 1, … are summed (vectorised, in chunks) up to the first i whose two terms are both
    below e^-30, the stopping rule of the reference implementations.
    """
    z0 = sigma**2 * math.log(1 / q - 1) + 0.5
    s0_all, s1_all, signs_all = [], [], []
    start = 0
    while True:
        i = np.arange(start, start + chunk, dtype=float)
        coef = special.binom(alpha, i)
        log_coef = np.log(np.abs(coef))
        j = alpha - i
        log_e0 = math.log(0.5) + math.log(2) + special.log_ndtr(-(i - z0) / sigma)
        log_e1 = math.log(0.5) + math.log(2) + special.log_ndtr(-(z0 - j) / sigma)
        s0 = log_coef + i * math.log(q) + j * math.log1p(-q) + (i * i - i) / (2 * sigma**2) + log_e0
        s1 = log_coef + j * math.log(q) + i * math.log1p(-q) + (j * j - j) / (2 * sigma**2) + log_e1
        stop = np.flatnonzero(np.maximum(s0, s1) < -30)
        n = stop[0] + 1 if stop.size else chunk
        s0_all.append(s0[:n])
        s1_all.append(s1[:n])
        signs_all.append(np.sign(coef[:n]))
        if stop.size:
            break
        start += chunk
    signs = np.concatenate(signs_all)
    return float(
        np.logaddexp(
            _signed_logsumexp(np.concatenate(s0_all), signs), _signed_logsumexp(np.concatenate(s1_all), signs)
        )
    )


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

"""Exact BROJA PID: logic gates, identities, agreement between solvers and with dit."""

from __future__ import annotations

import numpy as np
import pytest

from iclr26.icym2i import broja_pid, min_synergy_distribution, mutual_information

H_AND = -(0.25 * np.log2(0.25) + 0.75 * np.log2(0.75))


def gate_table(f) -> np.ndarray:
    p = np.zeros((2, 2, 2))
    for a in (0, 1):
        for b in (0, 1):
            p[a, b, f(a, b)] = 0.25
    return p


GATES = {
    "and": (lambda a, b: a & b, (H_AND - 0.5, 0.0, 0.0, 0.5)),
    "or": (lambda a, b: a | b, (H_AND - 0.5, 0.0, 0.0, 0.5)),
    "xor": (lambda a, b: a ^ b, (0.0, 0.0, 0.0, 1.0)),
}


@pytest.mark.parametrize("solver", ["scipy", "cvxpy"])
@pytest.mark.parametrize("gate", sorted(GATES))
def test_logic_gates_exact(gate, solver):
    if solver == "cvxpy":
        pytest.importorskip("cvxpy")
    f, expected = GATES[gate]
    pid = broja_pid(gate_table(f), solver=solver)
    got = (pid.redundancy, pid.unique1, pid.unique2, pid.synergy)
    np.testing.assert_allclose(got, expected, atol=1e-3)
    assert abs(H_AND - 0.5 - 0.3113) < 1e-4  # the familiar 0.311 bits


def test_copy_and_unique_sources():
    # Y = X1 = X2: one bit of pure redundancy.
    p = np.zeros((2, 2, 2))
    p[0, 0, 0] = p[1, 1, 1] = 0.5
    pid = broja_pid(p)
    assert pid.redundancy == pytest.approx(1.0, abs=1e-6)
    assert pid.unique1 + pid.unique2 + pid.synergy == pytest.approx(0.0, abs=1e-6)
    # Y = X1, X2 an independent coin: one bit unique to X1.
    p = np.zeros((2, 2, 2))
    for a in (0, 1):
        for b in (0, 1):
            p[a, b, a] = 0.25
    pid = broja_pid(p)
    assert pid.unique1 == pytest.approx(1.0, abs=1e-6)
    assert pid.redundancy + pid.unique2 + pid.synergy == pytest.approx(0.0, abs=1e-6)


@pytest.mark.parametrize("shape", [(2, 2, 2), (3, 2, 2), (3, 4, 3)])
def test_optimum_is_feasible_and_minimal(shape):
    """The BROJA q keeps p's (x1, y) and (x2, y) marginals, and no other point of Delta_P (moves of p
    along the null space of the marginal constraints) has lower I(Y; X1, X2). (The PID identities such
    as R + U1 = I(Y; X1) hold by construction and are not tested.)"""
    rng = np.random.default_rng(sum(shape))
    p = rng.dirichlet(np.full(int(np.prod(shape)), 0.7)).reshape(shape)
    pid = broja_pid(p)
    assert min(pid.redundancy, pid.unique1, pid.unique2, pid.synergy) >= 0
    q = min_synergy_distribution(p)
    np.testing.assert_allclose(q.sum(axis=1), p.sum(axis=1), atol=1e-7)
    np.testing.assert_allclose(q.sum(axis=0), p.sum(axis=0), atol=1e-7)
    mi_q = mutual_information(q.reshape(-1, shape[2]))
    from scipy.linalg import null_space

    from iclr26.icym2i._pid import _constraint_matrix

    N = null_space(_constraint_matrix(shape))
    for _ in range(200):
        d = N @ rng.normal(size=N.shape[1])
        for t in (1e-3, 1e-2, 1e-1):
            cand = q.ravel() + t * d / np.abs(d).max()
            if cand.min() < 0:
                continue
            assert mutual_information(cand.reshape(-1, shape[2])) >= mi_q - 1e-7


def test_solvers_agree():
    pytest.importorskip("cvxpy")
    rng = np.random.default_rng(3)
    for shape in [(3, 3, 2), (4, 3, 3)]:
        p = rng.dirichlet(np.full(int(np.prod(shape)), 0.5)).reshape(shape)
        a, b = broja_pid(p, solver="cvxpy"), broja_pid(p, solver="scipy")
        assert a.synergy == pytest.approx(b.synergy, abs=1e-5)
        assert a.redundancy == pytest.approx(b.redundancy, abs=1e-5)


def test_zero_mass_values_and_count_tables():
    p = np.zeros((3, 2, 2))
    p[0, 0, 0] = 5
    p[2, 1, 1] = 5  # x1 = 1 never occurs; a count table is normalised
    pid = broja_pid(p)
    assert pid.redundancy == pytest.approx(1.0, abs=1e-6)


def test_agrees_with_dit():
    dit = pytest.importorskip("dit")
    from dit.pid import PID_BROJA

    # dit's BROJA optimiser is stochastic and not always exact on random tables (we saw it miss by 0.04 bits
    # where cvxpy and our SLSQP agree to 1e-8), so the shared cases are the gates.
    for p in [gate_table(f) for f, _ in GATES.values()]:
        outcomes, probs = [], []
        for idx in np.ndindex(p.shape):
            if p[idx] > 0:
                outcomes.append("".join(map(str, idx)))
                probs.append(p[idx])
        # dit's optimiser draws its starting points from the global NumPy state and occasionally stops
        # short of the optimum (larger unique information); keep its best of three starts
        refs = []
        for seed in range(3):
            np.random.seed(seed)  # noqa: NPY002
            refs.append(PID_BROJA(dit.Distribution(outcomes, probs), [[0], [1]], [2]))
        ref = min(refs, key=lambda r: r[((0,),)] + r[((1,),)])
        ours = broja_pid(p)
        assert ours.redundancy == pytest.approx(ref[((0,), (1,))], abs=1e-3)
        assert ours.unique1 == pytest.approx(ref[((0,),)], abs=1e-3)
        assert ours.unique2 == pytest.approx(ref[((1,),)], abs=1e-3)
        assert ours.synergy == pytest.approx(ref[((0, 1),)], abs=1e-3)


@pytest.mark.parametrize(
    "bad, match",
    [
        (np.ones((2, 2)), "3-D"),
        (-np.ones((2, 2, 2)), "non-negative"),
        (np.full((2, 2, 2), np.nan), "NaN"),
        (np.zeros((2, 2, 2)), "positive total"),
        (np.array([[["a"]]]), "numeric"),
    ],
)
def test_bad_tables(bad, match):
    with pytest.raises(ValueError, match=match):
        broja_pid(bad)


def test_bad_solver():
    with pytest.raises(ValueError, match="solver"):
        broja_pid(gate_table(lambda a, b: a ^ b), solver="magic")


def test_pid_reports_solver():
    assert broja_pid(gate_table(GATES["xor"][0])).solver == "scipy"  # 8 cells: SLSQP
    big = np.random.default_rng(0).dirichlet(np.ones(32)).reshape(4, 4, 2)
    assert broja_pid(big).solver == "cvxpy"  # cvxpy is a core dependency
    assert "solver" not in broja_pid(big).as_dict()


def test_gaussian_pid_matches_closed_form():
    """Y = a X1 + b X2 + noise with independent standard normal X1, X2: every mutual information has
    a closed form, and the Gaussian PID is the MMI decomposition (Barrett 2015)."""
    from iclr26.icym2i import gaussian_pid, gaussian_pid_from_covariance

    a, b, s2 = 1.0, 0.5, 0.49
    v = a * a + b * b + s2
    i1 = 0.5 * np.log2(v / (b * b + s2))
    i2 = 0.5 * np.log2(v / (a * a + s2))
    i12 = 0.5 * np.log2(v / s2)
    cov = np.array([[1, 0, a], [0, 1, b], [a, b, v]])
    pid = gaussian_pid_from_covariance(cov, 1, 1)
    assert pid.solver == "gaussian"
    assert pid.mi1 == pytest.approx(i1) and pid.mi2 == pytest.approx(i2) and pid.mi == pytest.approx(i12)
    assert pid.redundancy == pytest.approx(i2) and pid.unique2 == pytest.approx(0.0)
    assert pid.unique1 == pytest.approx(i1 - i2) and pid.synergy == pytest.approx(i12 - i1)
    rng = np.random.default_rng(0)
    n = 100_000
    x1, x2 = rng.normal(size=n), rng.normal(size=n)
    y = a * x1 + b * x2 + np.sqrt(s2) * rng.normal(size=n)
    est = gaussian_pid(x1, x2, y)
    for k in ("redundancy", "unique1", "unique2", "synergy"):
        assert getattr(est, k) == pytest.approx(getattr(pid, k), abs=0.02), k
    with pytest.raises(ValueError, match="rows"):
        gaussian_pid(x1, x2[:10], y)
    with pytest.raises(ValueError, match="positive definite"):
        gaussian_pid(x1, x1, y)

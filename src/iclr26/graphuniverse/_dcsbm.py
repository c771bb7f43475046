"""The degree-community-coupled corrected SBM (DCCC-SBM) of GraphUniverse, vectorised.

Steps for one graph (authors' ``GraphSample``):

1. ``scale_propensities``: the universe propensities of the graph's communities are rescaled so that the
   diagonal holds a ``homophily`` share of the total mass and the total mass matches the target density
   ``avg_degree / (n - 1)``; then clipped to [0, 1].
2. ``degree_factors``: power-law raw degrees (``pareto(exponent) + 1``), sorted; each community is given a
   centre in the ranking from its universe degree centre, and nodes take ranks near their community's
   centre (spread controlled by ``degree_separation``); factors are normalised to mean 1.
3. ``sample_edges``: every pair ``i < j`` is an edge with probability
   ``min(1, P_sub[c_i, c_j] * theta_i * theta_j)``, sampled in O(n + E) expected time (see below).
4. ``join_components``: every component other than the largest is joined to it by one edge between the
   community pair that is most under-represented relative to ``P_sub`` (the authors' "fast" joining).
"""

from __future__ import annotations

import numpy as np
from scipy import sparse
from scipy.sparse.csgraph import connected_components
from scipy.special import ndtr, ndtri


def scale_propensities(P_sub: np.ndarray, avg_degree: float, homophily: float, n_nodes: int) -> np.ndarray:
    """Rescale a (k, k) propensity block to edge probabilities hitting the homophily and density targets.

    Diagonal entries are scaled to sum to ``homophily * density * k**2`` and off-diagonal ones to
    ``(1 - homophily) * density * k**2`` with ``density = avg_degree / (n_nodes - 1)``; an all-zero part
    that must carry mass is filled uniformly; the result is clipped to [0, 1]. With equal community sizes
    and unit degree factors this gives an expected edge homophily of ``homophily`` and an expected
    average degree of ``avg_degree``. A single community (k = 1) takes the whole density on its diagonal.
    """
    k = P_sub.shape[0]
    density = avg_degree / max(n_nodes - 1, 1)
    out = np.array(P_sub, dtype=np.float64, copy=True)
    if k == 1:
        return np.clip(np.full((1, 1), density), 0.0, 1.0)
    diag = np.eye(k, dtype=bool)
    total = density * k * k
    target_diag, target_off = homophily * total, (1.0 - homophily) * total
    s_diag, s_off = out[diag].sum(), out[~diag].sum()
    if s_diag > 0:
        out[diag] *= target_diag / s_diag
    elif target_diag > 0:
        out[diag] = target_diag / k
    if s_off > 0:
        out[~diag] *= target_off / s_off
    elif target_off > 0:
        out[~diag] = target_off / (k * k - k)
    return np.clip(out, 0.0, 1.0)


def calibrate_propensities(
    P_block: np.ndarray, labels: np.ndarray, theta: np.ndarray, avg_degree: float, homophily: float
) -> np.ndarray:
    """Rescale a (k, k) propensity block so the *expected* edge homophily and average degree are exact.

    Departure from the authors (``calibrate=True``): their rescaling assumes equal community sizes and
    unit degree factors, so the degree-community coupling inflates homophily and density. Here, with
    ``S_c = sum of theta over community c`` and ``Q_c = sum of theta**2``, the expected intra-community
    edge mass ``sum_c P_cc (S_c**2 - Q_c) / 2`` is scaled to ``homophily * avg_degree * n / 2`` and the
    inter-community mass ``sum_{c<d} P_cd S_c S_d`` to the rest; then clipped to [0, 1].
    """
    k = P_block.shape[0]
    n = labels.shape[0]
    S = np.bincount(labels, weights=theta, minlength=k)
    Q = np.bincount(labels, weights=theta * theta, minlength=k)
    out = np.array(P_block, dtype=np.float64, copy=True)
    diag = np.eye(k, dtype=bool)
    target = avg_degree * n / 2.0
    if k == 1:
        homophily = 1.0
    if (out[diag] == 0).all():
        out[diag] = 1.0
    if k > 1 and (out[~diag] == 0).all():
        out[~diag] = 1.0
    intra = float(np.sum(np.diag(out) * (S * S - Q)) / 2.0)
    inter = float((np.sum(out * np.outer(S, S)) - np.sum(np.diag(out) * S * S)) / 2.0)
    if intra > 0:
        out[diag] *= homophily * target / intra
    if k > 1 and inter > 0:
        out[~diag] *= (1.0 - homophily) * target / inter
    return np.clip(out, 0.0, 1.0)


def degree_factors(
    labels: np.ndarray,
    centers: np.ndarray,
    exponent: float,
    separation: float,
    rng: np.random.Generator,
) -> np.ndarray:
    """Community-coupled degree factors theta (mean 1) for nodes with local community ``labels``.

    ``centers[c]`` is the universe degree centre of local community ``c``. Community centres are mapped
    linearly onto rank positions ``[0, n - 1]`` (lowest centre -> lowest degrees); the position spread is
    ``min_std + max(1 - separation, 0.1) * (n - min_std)`` with ``min_std = max(1, smallest gap / 6)``.
    Each node draws a latent position ``N(mean_c, std)`` truncated to ``[0, n - 1]``; the nodes' ranks
    of these positions pick their degree from the sorted power-law sample. (The authors draw positions
    one node at a time without replacement, O(n^2); ranking the latent draws is the O(n log n) analogue.)
    """
    n = labels.shape[0]
    k = centers.shape[0]
    raw = np.sort(rng.pareto(exponent, size=n) + 1.0)
    if k == 1:
        means = np.array([(n - 1) / 2.0])
        min_std = 1.0
    else:
        lo, hi = centers.min(), centers.max()
        if hi > lo:
            means = (centers - lo) / (hi - lo) * (n - 1)
        else:
            means = np.linspace(0, n - 1, k)
        gaps = np.diff(np.sort(means))
        min_std = max(1.0, float(gaps.min()) / 6.0)
    std = min_std + max(1.0 - separation, 0.1) * (n - min_std)
    # latent position ~ N(mean_c, std) truncated to [0, n - 1], by inverse CDF
    mu = means[labels]
    lo_cdf = ndtr((0.0 - mu) / std)
    hi_cdf = ndtr((n - 1.0 - mu) / std)
    u = lo_cdf + rng.random(n) * (hi_cdf - lo_cdf)
    latent = mu + std * ndtri(np.clip(u, 1e-300, 1.0 - 1e-16))
    ranks = np.empty(n, dtype=np.int64)
    ranks[np.argsort(latent, kind="stable")] = np.arange(n)
    theta = raw[ranks]
    return theta / theta.mean()


def sample_edges(
    labels: np.ndarray,
    theta: np.ndarray,
    P: np.ndarray,
    rng: np.random.Generator,
    dense_threshold: float = 0.25,
) -> np.ndarray:
    """Sample an undirected DC-SBM graph: ``{i, j}`` is an edge w.p. ``min(1, P[c_i, c_j] theta_i theta_j)``.

    Exact, in O(n + E) expected time. Nodes are grouped into cells (community, degree bucket), with
    degree factors within a bucket differing by less than a factor 2. For a pair of cells with ``T``
    node pairs and upper bound ``q`` on their edge probability, candidate pairs are a Bernoulli(q)
    subset drawn by geometric skipping, each kept with probability ``p_ij / q`` (>= 1/4); cell pairs with
    ``q > dense_threshold`` are enumerated directly (they hold at least ``dense_threshold * T`` expected
    candidates). Returns an (E, 2) int64 array of pairs with ``i < j``.
    """
    n = labels.shape[0]
    if n < 2:
        return np.zeros((0, 2), dtype=np.int64)
    alive = theta > 0
    tmin = theta[alive].min() if alive.any() else 1.0
    bucket = np.zeros(n, dtype=np.int64)
    bucket[alive] = np.floor(np.log2(theta[alive] / tmin)).astype(np.int64)
    n_buckets = int(bucket.max()) + 1
    k = P.shape[0]
    cell = labels.astype(np.int64) * n_buckets + bucket
    cell[~alive] = -1
    order = np.argsort(cell, kind="stable")
    order = order[cell[order] >= 0]
    n_cells = k * n_buckets
    sizes = np.bincount(cell[order], minlength=n_cells)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    upper = np.zeros(n_cells)
    np.maximum.at(upper, cell[order], theta[order])
    used = np.flatnonzero(sizes > 0)
    c1, c2 = np.triu_indices(used.size)
    c1, c2 = used[c1], used[c2]
    comm1, comm2 = c1 // n_buckets, c2 // n_buckets
    q = np.minimum(1.0, P[comm1, comm2] * upper[c1] * upper[c2])
    keep = q > 0
    c1, c2, q = c1[keep], c2[keep], q[keep]
    m1, m2 = sizes[c1], sizes[c2]
    total = m1.astype(np.int64) * m2  # a diagonal cell pair samples the full square, keeping u < v
    same = c1 == c2

    dense = q > dense_threshold
    # --- enumerate dense cell pairs
    d_idx = np.flatnonzero(dense)
    if d_idx.size:
        d_tot = total[d_idx]
        pair = np.repeat(d_idx, d_tot)
        offs = np.arange(pair.size) - np.repeat(np.cumsum(d_tot) - d_tot, d_tot)
    else:
        pair = np.zeros(0, dtype=np.int64)
        offs = np.zeros(0, dtype=np.int64)
    # --- sample sparse cell pairs: Binomial(T, q) distinct uniform positions
    s_idx = np.flatnonzero(~dense)
    if s_idx.size:
        s_pair, s_offs = _bernoulli_positions(s_idx, total[s_idx], q[s_idx], rng)
        pair = np.concatenate([pair, s_pair])
        offs = np.concatenate([offs, s_offs])
    u = offs // m2[pair]
    v = offs % m2[pair]
    ok = ~same[pair] | (u < v)
    pair, u, v = pair[ok], u[ok], v[ok]
    i = order[starts[c1[pair]] + u]
    j = order[starts[c2[pair]] + v]
    p_ij = np.minimum(1.0, P[labels[i], labels[j]] * theta[i] * theta[j])
    # sparse candidates were drawn with probability q: keep w.p. p_ij / q; dense ones all enumerated
    bound = np.where(dense[pair], 1.0, q[pair])
    accept = rng.random(p_ij.size) * bound < p_ij
    i, j = i[accept], j[accept]
    edges = np.stack([np.minimum(i, j), np.maximum(i, j)], axis=1)
    return edges[np.lexsort((edges[:, 1], edges[:, 0]))]


def _bernoulli_positions(
    pair_ids: np.ndarray, totals: np.ndarray, q: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """For each pair id, the positions in ``[0, totals)`` of a Bernoulli(``q``) sequence's successes.

    Geometric skipping, vectorised over all pairs at once: each pair gets a generous number of
    geometric gaps (mean + 6 sd + 8), their segment-wise cumulative sums are the success positions;
    the rare pair whose gaps end before ``totals`` is redrawn with twice as many. Exact, O(E).
    """
    out_pair, out_pos = [], []
    todo = np.arange(pair_ids.size)
    mult = 1.0
    while todo.size:
        t, p = totals[todo], q[todo]
        mean = t * p
        m = np.ceil(mult * (mean + 6.0 * np.sqrt(mean * (1 - p)) + 8.0)).astype(np.int64)
        seg = np.repeat(np.arange(todo.size), m)
        gaps = rng.geometric(p[seg])
        cs = np.cumsum(gaps)
        ends = np.cumsum(m)
        offset = np.concatenate([[0], cs[ends[:-1] - 1]]) if todo.size > 1 else np.zeros(1, dtype=np.int64)
        pos = cs - offset[seg] - 1
        covered = pos[ends - 1] >= t  # the last success lies beyond the range: nothing was missed
        keep = covered[seg] & (pos < t[seg])
        out_pair.append(pair_ids[todo][seg[keep]])
        out_pos.append(pos[keep])
        todo = todo[~covered]
        mult *= 2.0
    return np.concatenate(out_pair), np.concatenate(out_pos)


def _pick_weighted(nodes: np.ndarray, weights: np.ndarray, rng: np.random.Generator) -> int:
    c = np.cumsum(weights)
    return int(nodes[min(int(np.searchsorted(c, rng.random() * c[-1], side="right")), nodes.size - 1)])


def block_probability_matrix(edges: np.ndarray, labels: np.ndarray, k: int) -> np.ndarray:
    """Realised block edge probabilities: e_cc / (n_c (n_c - 1) / 2) and e_cd / (n_c n_d)."""
    counts = np.zeros((k, k))
    if edges.size:
        np.add.at(counts, (labels[edges[:, 0]], labels[edges[:, 1]]), 1.0)
    counts = counts + counts.T - np.diag(np.diag(counts))
    sizes = np.bincount(labels, minlength=k).astype(np.float64)
    pairs = np.outer(sizes, sizes)
    np.fill_diagonal(pairs, sizes * (sizes - 1) / 2)
    return np.divide(counts, pairs, out=np.zeros_like(counts), where=pairs > 0)


def join_components(
    edges: np.ndarray, labels: np.ndarray, theta: np.ndarray, P_sub: np.ndarray, rng: np.random.Generator
) -> np.ndarray:
    """Connect every component to the largest one by one edge each (the authors' fast joining).

    The deviation ``D = A * (sum P_sub / sum A) - P_sub`` of the realised block probabilities ``A`` is
    computed once; for a component, a community pair (a in the component, b in the largest) is drawn
    with weight ``P_sub[a, b] (1 - D[a, b])`` if under-represented (D < 0), ``0.5 P_sub[a, b]`` if not,
    and ``0.01`` if ``P_sub[a, b] = 0``; its endpoints are drawn proportionally to their degree factors.
    Returns the edges with the joining edges added (sorted, ``i < j``).
    """
    n = labels.shape[0]
    if n < 2:
        return edges
    adj = sparse.coo_matrix((np.ones(edges.shape[0]), (edges[:, 0], edges[:, 1])), shape=(n, n))
    n_comp, comp = connected_components(adj, directed=False)
    if n_comp <= 1:
        return edges
    k = P_sub.shape[0]
    actual = block_probability_matrix(edges, labels, k)
    if actual.sum() > 0:
        actual *= P_sub.sum() / actual.sum()
    dev = actual - P_sub
    score = np.where(P_sub > 0, np.where(dev < 0, P_sub * (1 - dev), 0.5 * P_sub), 0.01)
    comp_sizes = np.bincount(comp, minlength=n_comp)
    giant = int(np.argmax(comp_sizes))
    in_giant = comp == giant
    giant_nodes = [np.flatnonzero(in_giant & (labels == c)) for c in range(k)]
    giant_has = np.array([g.size > 0 for g in giant_nodes])
    giant_cum = [np.cumsum(theta[g]) for g in giant_nodes]

    def pick_in_giant(b: int) -> int:
        c = giant_cum[b]
        return int(
            giant_nodes[b][min(int(np.searchsorted(c, rng.random() * c[-1], side="right")), c.size - 1)]
        )

    new_edges = []
    # components in order of decreasing size, as the authors
    order = np.argsort(-comp_sizes, kind="stable")
    node_order = np.argsort(comp, kind="stable")
    comp_start = np.concatenate([[0], np.cumsum(comp_sizes)])
    for cid in order:
        if cid == giant:
            continue
        nodes = node_order[comp_start[cid] : comp_start[cid + 1]]
        comms = np.unique(labels[nodes])
        w = score[np.ix_(comms, np.flatnonzero(giant_has))]
        flat = np.cumsum(w.ravel())
        pick = min(int(np.searchsorted(flat, rng.random() * flat[-1], side="right")), flat.size - 1)
        a = int(comms[pick // w.shape[1]])
        b = int(np.flatnonzero(giant_has)[pick % w.shape[1]])
        members = nodes[labels[nodes] == a]
        u = members[0] if members.size == 1 else _pick_weighted(members, theta[members], rng)
        v = pick_in_giant(b)
        new_edges.append((min(u, v), max(u, v)))
    out = np.concatenate([edges, np.asarray(new_edges, dtype=np.int64).reshape(-1, 2)])
    return out[np.lexsort((out[:, 1], out[:, 0]))]

"""Building tasks from topic records: the most divergent party subset, seat weights, a veto party.

Follows the authors' ``datas/building_tasks.py`` with ``utils/find_diverse_party.py`` (all k-subsets
of the parties whose ``choice`` values have the largest sample variance; one drawn uniformly among
ties, subsets in ``itertools.combinations`` order) and ``utils/allocate_weights.py`` (integer tenths:
``randint(1, remaining - parties_left)`` for all but the last party, the rest to the last, then a
shuffle). The veto party is drawn uniformly among the chosen parties.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..validation import check_in
from ._data import PARTY_NUMS, check_topic_record


def max_variance_subsets(choices: Sequence[int], k: int) -> np.ndarray:
    """All k-subsets of party indices with the largest variance of ``choices``.

    Parameters
    ----------
    choices: ``(p,)`` integer support levels; ``k``: subset size, 2 <= k <= p.

    Returns
    -------
    ``(m, k)`` index array, rows in ``itertools.combinations`` order. Variances are compared exactly
    (``k * sum(x^2) - sum(x)^2`` in integers), as the authors' exact ``statistics.variance`` does.
    """
    x = np.asarray(choices, dtype=np.int64)
    combos = np.array(list(itertools.combinations(range(len(x)), k)), dtype=np.int64)
    v = x[combos]
    spread = k * (v * v).sum(axis=1) - v.sum(axis=1) ** 2
    return combos[spread == spread.max()]


def _weights_compat(n: int, rng: random.Random) -> list[float]:
    tenths = []
    remaining = 10
    for i in range(n - 1):
        w = rng.randint(1, remaining - (n - i - 1))
        tenths.append(w)
        remaining -= w
    tenths.append(remaining)
    weights = [w / 10 for w in tenths]
    rng.shuffle(weights)
    return weights


def _weights_numpy(n: int, rng: np.random.Generator) -> list[float]:
    tenths = []
    remaining = 10
    for i in range(n - 1):
        w = int(rng.integers(1, remaining - (n - i - 1), endpoint=True))
        tenths.append(w)
        remaining -= w
    tenths.append(remaining)
    return [tenths[j] / 10 for j in rng.permutation(n)]


def build_tasks(
    records: Sequence[dict[str, Any]],
    party_num: int,
    rng: random.Random | np.random.Generator | int | None = None,
    *,
    compat: bool = False,
) -> list[dict[str, Any]]:
    """Turn topic records into ``party_num``-party tasks.

    Parameters
    ----------
    records: topic records (see :func:`check_topic_record`), e.g. one topic file in order.
    party_num: 2, 4 or 6. Records with fewer stances are skipped (no random draw), as in the authors'.
    rng: with ``compat=True`` a :class:`random.Random` (or an int seed for one); it is consumed exactly
        as the authors' script consumes Python's global ``random`` (subset choice, weight draws,
        shuffle, veto sample, record by record), so ``random.seed(s)`` there and ``rng=s`` here give
        identical tasks. Otherwise a NumPy ``Generator`` (or seed) with the same distributions.

    Returns
    -------
    New task records (inputs are not modified): the record with the chosen ``stances`` (in their
    original order), ``seat_weights`` (tenths summing to 1), ``veto_party_name``, ``id`` (the record's
    index in ``records``) and ``party_num``.
    """
    party_num = check_in(party_num, PARTY_NUMS, "party_num")
    if compat:
        if isinstance(rng, np.random.Generator):
            raise ValueError("rng must be a random.Random or an int seed when compat=True")
        rng = rng if isinstance(rng, random.Random) else random.Random(rng)
    else:
        if isinstance(rng, random.Random):
            raise ValueError("rng must be a numpy Generator or an int seed when compat=False")
        rng = np.random.default_rng(rng)
    tasks = []
    for data_id, rec in enumerate(records):
        rec = check_topic_record(rec, f"records[{data_id}]")
        stances = rec["stances"]
        if len(stances) < party_num:
            continue
        best = max_variance_subsets([s["choice"] for s in stances], party_num)
        if compat:
            pick = best[rng.choice(range(len(best)))]
            chosen = [stances[j] for j in pick]
            weights = _weights_compat(party_num, rng)
            veto = rng.sample(chosen, 1)[0]["party_name"]
        else:
            pick = best[rng.integers(len(best))]
            chosen = [stances[j] for j in pick]
            weights = _weights_numpy(party_num, rng)
            veto = chosen[int(rng.integers(party_num))]["party_name"]
        tasks.append(
            {
                **rec,
                "id": data_id,
                "stances": chosen,
                "seat_weights": weights,
                "veto_party_name": veto,
                "party_num": party_num,
            }
        )
    return tasks

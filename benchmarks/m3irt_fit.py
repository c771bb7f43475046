"""Fit time and held-out ROC-AUC: our 2PL / M3-IRT vs girth's 2PL (joint and marginal ML).

Data: the authors' MMMU and MathVista response matrices (24 models x 4 variants x items) when
``../shared/data/m3-irt`` (or ``$ICLR26_SHARED_DATA/m3-irt``) exists, else a simulated M3-IRT matrix.
Held-out cells: for every item, 10% of the models on all four variants (the authors' balanced split);
AUC on the held-out cells of columns that have both answers in training (girth needs them).

Peer environment (outside the repository; py-irt is left out: it downgrades typer/rich)::

    python3.11 -m venv /work/peers/m3irt-venv
    /work/peers/m3irt-venv/bin/pip install torch==2.13.0 girth==0.8.0 numpy scipy scikit-learn pandas \
        matplotlib typer rich tqdm
    /work/peers/m3irt-venv/bin/pip install --no-deps -e /work/main
    /work/peers/m3irt-venv/bin/python benchmarks/m3irt_fit.py

Run with the project venv, the girth rows are reported as absent.
"""

from __future__ import annotations

import time

import numpy as np
from sklearn.metrics import roc_auc_score

from iclr26.m3_irt import M3IRT, TwoPL, read_responses, shared_data_dir, simulate_m3irt, validation_split


def _datasets():
    root = shared_data_dir()
    if root is not None:
        for name in ("mmmu", "mathvista"):
            yield name, read_responses(root / f"normal_{name}.csv")
    else:
        print("note: shared M3-IRT data absent, using a simulated 24 x 800-item matrix")
        yield "simulated", simulate_m3irt(24, 800, seed=0)[0]


def _girth_2pl(Y: np.ndarray, train: np.ndarray, method: str):
    import girth

    data = np.where(train, Y, 0).astype(int).T  # girth: items x persons
    valid = train.T
    data = girth.tag_missing_data(np.where(valid, data, 2), [0, 1])
    t0 = time.perf_counter()
    est = (girth.twopl_jml if method == "jml" else girth.twopl_mml)(data)
    a, b = est["Discrimination"], est["Difficulty"]
    theta = girth.ability_map(data, b, a)
    secs = time.perf_counter() - t0
    z = a[None, :] * (theta[:, None] - b[None, :])
    return 1 / (1 + np.exp(-z)), secs


def main() -> None:
    try:
        import girth  # noqa: F401

        have_girth = True
    except ImportError:
        have_girth = False
        print("note: girth is not installed in this environment; peer rows skipped (see docstring)")
    rows = []
    for name, data in _datasets():
        Y = data.values
        obs = ~np.isnan(Y)
        test = validation_split(data, 0.1, np.random.default_rng(0), obs)
        train = obs & ~test
        # girth's 2PL needs columns with both answers in training; compare everyone on those cells
        ytr = np.where(train, np.nan_to_num(Y), np.nan)
        keep = (np.nanmin(ytr, 0) == 0) & (np.nanmax(ytr, 0) == 1)
        cells = test & keep[None, :]
        for label, make in [
            ("ours 2PL (scale search)", lambda: TwoPL()),
            ("ours 2PL (scale=2)", lambda: TwoPL(scale=2.0)),
            ("ours M3-IRT (authors' optimiser, scale search)", lambda: M3IRT()),
            ("ours M3-IRT (newton MAP, scale search)", lambda: M3IRT(solver="newton")),
        ]:
            m = make().fit(data, mask=train)
            auc = roc_auc_score(Y[cells], m.predict_proba()[cells])
            rows.append((name, label, m.fit_seconds_, auc))
            print(f"  {name}: {label}: {m.fit_seconds_:.2f} s, AUC {auc:.4f}", flush=True)
        if have_girth:
            for method in ("jml", "mml"):
                try:
                    P, secs = _girth_2pl(np.nan_to_num(Y[:, keep]), train[:, keep], method)
                    auc = roc_auc_score(Y[:, keep][cells[:, keep]], P[cells[:, keep]])
                    rows.append((name, f"girth 2PL {method.upper()}", secs, auc))
                    print(f"  {name}: girth 2PL {method.upper()}: {secs:.2f} s, AUC {auc:.4f}", flush=True)
                except Exception as exc:  # report, don't crash
                    rows.append(
                        (name, f"girth 2PL {method.upper()} failed: {exc!r:.60}", float("nan"), float("nan"))
                    )
    print(f"{'data':10s} {'fit':34s} {'seconds':>8s} {'held-out AUC':>13s}")
    for name, label, secs, auc in rows:
        print(f"{name:10s} {label:34s} {secs:8.2f} {auc:13.4f}")
    for name in {r[0] for r in rows}:
        ours = next(r for r in rows if r[0] == name and r[1] == "ours 2PL (scale=2)")
        for r in rows:
            if r[0] == name and r[1].startswith("girth") and np.isfinite(r[2]):
                print(
                    f"{name}: {r[1]} / ours 2PL time ratio = {r[2] / ours[2]:.1f}x,"
                    f" AUC diff (ours - girth) = {ours[3] - r[3]:+.4f}"
                )


if __name__ == "__main__":
    main()

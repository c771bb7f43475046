"""Search Arena leaderboards: ours against the authors' ``scripts/utils.py`` and ``choix``.

    PYTHONPATH=src python benchmarks/search_arena_bt.py [--authors /path/to/search-arena] [--skip-large]

The authors' file is read from a checkout (or bare git directory) of ``lmarena/search-arena`` outside this
repository (default: ``$ICLR26_SEARCH_ARENA_AUTHORS_REPO``, else the mirror under ``/work/.mirror``);
nothing of theirs is committed. ``choix`` is timed when importable (install it in the benchmark's
environment, e.g. ``pip install --target /tmp/choix-peer choix`` and put that folder on ``PYTHONPATH``).
LMArena's ``arena-rank`` pins its own numpy and jax, so it runs in its own environment, named by
``$ICLR26_ARENA_RANK_PYTHON`` (e.g. ``python3.11 -m venv /tmp/arena-rank-venv`` then
``/tmp/arena-rank-venv/bin/pip install arena-rank==0.1.1``); its point fit is its own L-BFGS; its bootstrap
is timed as 10 x 100 of its per-round fits in one process (its process-pool bootstrap deadlocked here).

Cases (battles drawn from a BT model with 10% ties):
1. 12,000 battles x 13 models: plain BT + 1,000 bootstrap rounds (the authors run their bootstrap with
   100 rounds; their time for 1,000 is 10x their 100-round time, each round being an independent fit).
2. The same battles with 14 style features: controlled BT + 1,000 bootstrap rounds (theirs: 50 rounds,
   x 20).
3. BT point fits at 100,000 battles x 50 models and 1,000,000 battles x 200 models.
Each: wall time (the faster of two calls in one process), peak resident memory of a fresh process,
and the largest rating difference (Elo).
Timings are wall-clock on whatever machine runs this; say how loaded it was.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
import types
from pathlib import Path

import numpy as np
import pandas as pd

DEFAULT_AUTHORS = "/work/.mirror/lmarena+search-arena/repo"


def _authors(repo: str) -> types.ModuleType | None:
    path = Path(repo) / "scripts" / "utils.py"
    if path.is_file():
        src = path.read_text()
    else:
        try:
            src = subprocess.run(
                ["git", "--git-dir", repo, "show", "HEAD:scripts/utils.py"],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
        except (OSError, subprocess.CalledProcessError):
            return None
    mod = types.ModuleType("authors_utils")
    exec(compile(src, "scripts/utils.py", "exec"), mod.__dict__)  # noqa: S102
    return mod


def battles(n: int, m: int, n_features: int = 0, seed: int = 0):
    rng = np.random.default_rng(seed)
    strength = rng.normal(0, 0.8, m)
    a = rng.integers(0, m, n)
    b = (a + rng.integers(1, m, n)) % m
    feats = {f"f{k}": rng.poisson(3.0, (n, 2)).astype(float) for k in range(n_features)}
    p = 1 / (1 + np.exp(-(strength[a] - strength[b])))
    u = rng.random(n)
    winner = np.where(u < 0.9 * p, "model_a", np.where(u < 0.9, "model_b", "tie"))
    names = np.array([f"model-{i:03d}" for i in range(m)])
    return pd.DataFrame({"model_a": names[a], "model_b": names[b], "winner": winner}), feats


def _timed(fn, repeats: int = 2):
    """The result and the faster of ``repeats`` warm calls (the first call pays one-off costs)."""
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return out, best


def _arena_rank_case(which: str) -> dict:
    """LMArena's ``arena-rank`` (JAX L-BFGS per fit; its bootstrap fits the rounds in a process pool)."""
    try:
        from arena_rank.models.bradley_terry import BradleyTerry
        from arena_rank.utils.data_utils import PairDataset
    except ImportError:
        return {"absent": True}
    if which == "style_boot":
        return {"absent": True}
    n, m = {"bt_boot": (12_000, 13), "bt_100k": (100_000, 50), "bt_1m": (1_000_000, 200)}[which]
    df, _ = battles(n, m)
    out: dict = {}

    def fit():
        data = PairDataset.from_pandas(df)
        model = BradleyTerry(len(data.competitors)).fit(data)
        res = model.compute_ratings_and_cis(data, ci_method="sandwich")
        return data, model, dict(zip(data.competitors, np.asarray(res["ratings"]).tolist(), strict=True))

    (data, model, out["point"]), out["seconds"] = _timed(fit)
    if which == "bt_boot":
        # its own bootstrap forks a process pool after JAX has started threads, which deadlocked here
        # (JAX warns that it may); timed instead: its per-round fit on its own multinomial draws, 100
        # rounds in this process, x 10
        import jax
        from arena_rank.models.bradley_terry import fit_single_bootstrap_sample

        total = int(np.sum(data.counts))
        draws = jax.random.multinomial(
            jax.random.PRNGKey(42), total, data.counts / total, shape=(100, data.counts.shape[0])
        )
        _, secs = _timed(lambda: [fit_single_bootstrap_sample(d, model, data) for d in draws], repeats=1)
        out["seconds"] = 10 * secs
    out["peak_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def _case(which: str, impl: str, repo: str) -> dict:
    """One measurement, meant to run in a fresh process (peak memory is per process)."""
    if impl == "arena_rank":
        return _arena_rank_case(which)
    from iclr26.search_arena import bootstrap_bt, bradley_terry, controlled_bt

    theirs = _authors(repo) if impl == "authors" else None
    if impl == "authors" and theirs is None:
        return {"absent": True}
    out: dict = {}
    if which == "bt_boot":
        df, _ = battles(12_000, 13)
        if impl == "ours":
            reps, out["seconds"] = _timed(lambda: bootstrap_bt(df, n_rounds=1000))
            out["point"] = bradley_terry(df).to_dict()
        else:
            _, secs = _timed(lambda: theirs.compute_bootstrap_bt(df, num_round=100))
            out["seconds"] = 10 * secs
            out["point"] = theirs.compute_bt(df).to_dict()
    elif which == "style_boot":
        df, feats = battles(12_000, 13, n_features=14)
        if impl == "ours":
            res, out["seconds"] = _timed(lambda: controlled_bt(df, feats, n_rounds=1000))
            out["coef"] = res.coefficients.tolist()
        else:
            meta = df.copy()
            meta["conv_metadata"] = [
                {
                    **{f"{k}_a": v[i, 0] for k, v in feats.items()},
                    **{f"{k}_b": v[i, 1] for k, v in feats.items()},
                }
                for i in range(len(df))
            ]
            els = [f"{k}_a" for k in feats] + [f"{k}_b" for k in feats]
            _, secs = _timed(lambda: theirs.compute_bootstrap_style_control(meta, els, num_round=50))
            out["seconds"] = 20 * secs
            out["coef"] = list(theirs.compute_style_control(meta, els)[1])
    else:
        n, m = {"bt_100k": (100_000, 50), "bt_1m": (1_000_000, 200)}[which]
        df, _ = battles(n, m)
        if impl == "ours":
            r, out["seconds"] = _timed(lambda: bradley_terry(df))
        elif impl == "authors":
            r, out["seconds"] = _timed(lambda: theirs.compute_bt(df))
        else:
            try:
                import choix
            except ImportError:
                return {"absent": True}
            idx = {name: i for i, name in enumerate(sorted(set(df["model_a"]) | set(df["model_b"])))}
            decided = df[df["winner"] != "tie"]
            win = np.where(decided["winner"] == "model_a", decided["model_a"], decided["model_b"])
            lose = np.where(decided["winner"] == "model_a", decided["model_b"], decided["model_a"])
            pairs = [(idx[w], idx[v]) for w, v in zip(win, lose, strict=True)]
            theta, out["seconds"] = _timed(lambda: choix.ilsr_pairwise(len(idx), pairs, alpha=0.0, tol=1e-10))
            elo = theta * 400 / np.log(10)
            r = pd.Series(elo - elo.mean() + 1000, index=list(idx))
            # ours on the same tie-free battles, for the difference
            out["ours_tie_free"] = bradley_terry(decided).to_dict()
        out["point"] = r.to_dict()
    out["peak_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def _spawn(which: str, impl: str, repo: str) -> dict:
    python = sys.executable
    if impl == "arena_rank":  # it pins its own numpy and jax: a separate environment
        python = os.environ.get("ICLR26_ARENA_RANK_PYTHON", "")
        if not python:
            return {"absent": True}
    cmd = [python, __file__, "--one", which, impl, "--authors", repo]
    res = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if res.returncode != 0:
        return {"error": res.stderr.strip().splitlines()[-1:]}
    return json.loads(res.stdout.strip().splitlines()[-1])


def _max_diff(x: dict, y: dict) -> float:
    keys = sorted(set(x) & set(y))
    return float(np.max(np.abs(np.array([x[k] for k in keys]) - np.array([y[k] for k in keys]))))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--authors", default=os.environ.get("ICLR26_SEARCH_ARENA_AUTHORS_REPO", DEFAULT_AUTHORS))
    ap.add_argument("--skip-large", action="store_true")
    ap.add_argument("--one", nargs=2)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(_case(*args.one, args.authors)))
        return
    cases = ["bt_boot", "style_boot", "bt_100k"] + ([] if args.skip_large else ["bt_1m"])
    head = ["case", "ours s", "ours MiB", "authors s", "authors MiB", "speed-up", "max difference"]
    print("| " + " | ".join([*head, "choix s", "arena-rank s"]) + " |")
    print("|---|---|---|---|---|---|---|---|---|")
    for which in cases:
        ours, theirs = _spawn(which, "ours", args.authors), _spawn(which, "authors", args.authors)
        choix = _spawn(which, "choix", args.authors) if which.startswith("bt_1") else {"absent": True}
        row = [which, f"{ours['seconds']:.3f}", f"{ours['peak_mib']:.0f}"]
        if "seconds" in theirs:
            key = "coef" if which == "style_boot" else "point"
            diff = (
                float(np.max(np.abs(np.array(ours[key]) - np.array(theirs[key]))))
                if key == "coef"
                else _max_diff(ours[key], theirs[key])
            )
            unit = "" if key == "coef" else " Elo"
            row += [
                f"{theirs['seconds']:.3f}",
                f"{theirs['peak_mib']:.0f}",
                f"{theirs['seconds'] / ours['seconds']:.1f}x",
                f"{diff:.2g}{unit}",
            ]
        else:
            row += ["absent", "", "", ""]
        if "seconds" in choix:
            row.append(
                f"{choix['seconds']:.3f} (diff {_max_diff(choix['point'], choix['ours_tie_free']):.2g} Elo)"
            )
        else:
            row.append("absent")
        ranked = _spawn(which, "arena_rank", args.authors)
        if "seconds" in ranked:
            row.append(f"{ranked['seconds']:.3f} (diff {_max_diff(ranked['point'], ours['point']):.2g} Elo)")
        else:
            row.append(ranked.get("error", ["absent"])[0] if "error" in ranked else "absent")
        print("| " + " | ".join(row) + " |", flush=True)


if __name__ == "__main__":
    main()

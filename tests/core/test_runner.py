import dataclasses
import json
import sys
import textwrap

import pytest

from iclr26 import catalogue
from iclr26.runner import reproduce, run_system
from iclr26.store import load_error, load_result

TOY_MODULE = """
import os
from pathlib import Path
from iclr26.claims import Claim, Result

def _count(ctx):
    marker = Path(os.environ["ICLR26_TOY_COUNTER"])
    with marker.open("a") as fh:
        fh.write(ctx.slug + "\\n")

def good(ctx):
    _count(ctx)
    x = float(ctx.rng().normal())
    claim = Claim("a draw is finite", abs(x), "<", 1e9, paper=None, scale="1 draw", exact=True)
    return Result(claims=[claim], metrics={"x": x})

def bad(ctx):
    _count(ctx)
    raise RuntimeError("toy failure")
"""


@pytest.fixture
def toy(tmp_path, monkeypatch):
    """A toy experiment module importable from spawned workers (sys.path travels with spawn)."""
    mod_dir = tmp_path / "toymod"
    mod_dir.mkdir()
    (mod_dir / "iclr26_toy_experiments.py").write_text(textwrap.dedent(TOY_MODULE))
    monkeypatch.syspath_prepend(str(mod_dir))
    counter = tmp_path / "calls.txt"
    monkeypatch.setenv("ICLR26_TOY_COUNTER", str(counter))
    import importlib

    module = importlib.import_module("iclr26_toy_experiments")
    yield module, counter
    sys.modules.pop("iclr26_toy_experiments", None)


def _entries(*slugs):
    return [dataclasses.replace(catalogue.get(s), status="implemented") for s in slugs]


def _calls(counter):
    return counter.read_text().split() if counter.exists() else []


def test_run_system_writes_result_with_provenance(toy, tmp_path):
    module, _ = toy
    out = tmp_path / "out"
    result = run_system(
        _entries("disco")[0], seed=3, out_dir=out, experiment=module.good, show_progress=False
    )
    stored = json.loads((out / "disco" / "result.json").read_text())
    assert stored["seed"] == 3 and stored["scale"] == "small" and stored["slug"] == "disco"
    assert stored["config_hash"] == result.config_hash
    assert stored["versions"]["iclr26"]
    assert stored["claims"][0]["verdict"] == "holds"


def test_same_seed_same_result(toy, tmp_path):
    module, _ = toy
    entry = _entries("disco")[0]
    a = run_system(entry, seed=7, out_dir=tmp_path / "a", experiment=module.good, show_progress=False)
    b = run_system(entry, seed=7, out_dir=tmp_path / "b", experiment=module.good, show_progress=False)
    c = run_system(entry, seed=8, out_dir=tmp_path / "c", experiment=module.good, show_progress=False)
    assert a.metrics["x"] == b.metrics["x"] != c.metrics["x"]


def test_second_reproduce_recomputes_nothing(toy, tmp_path):
    module, counter = toy
    entries = _entries("disco", "m3-irt")
    exps = {"disco": module.good, "m3-irt": module.good}
    first = reproduce(entries, out_dir=tmp_path, experiments=exps)
    assert first.by_state("ran") == ["disco", "m3-irt"]
    second = reproduce(entries, out_dir=tmp_path, experiments=exps)
    assert second.by_state("cached") == ["disco", "m3-irt"] and second.by_state("ran") == []
    assert _calls(counter) == ["disco", "m3-irt"]
    # A different seed is a different configuration: recomputed.
    third = reproduce(entries[:1], out_dir=tmp_path, experiments=exps, seed=1)
    assert third.by_state("ran") == ["disco"]


def test_failing_system_is_reported_and_others_still_run(toy, tmp_path):
    module, _ = toy
    entries = _entries("disco", "m3-irt", "icym2i")
    summary = reproduce(
        entries,
        out_dir=tmp_path,
        experiments={"disco": module.good, "m3-irt": module.bad, "icym2i": module.good},
    )
    assert summary.by_state("ran") == ["disco", "icym2i"]
    assert summary.by_state("failed") == ["m3-irt"]
    error = load_error(tmp_path, "m3-irt")
    assert "toy failure" in error["error"] and "Traceback" in error["traceback"]
    assert load_result(tmp_path, "m3-irt") is None
    # The failure is retried next time; the successes are not.
    again = reproduce(
        entries,
        out_dir=tmp_path,
        experiments={"disco": module.good, "m3-irt": module.good, "icym2i": module.good},
    )
    assert again.by_state("ran") == ["m3-irt"] and again.by_state("cached") == ["disco", "icym2i"]
    assert load_error(tmp_path, "m3-irt") is None


def test_parallel_jobs_in_spawned_processes(toy, tmp_path):
    module, counter = toy
    entries = _entries("disco", "m3-irt")
    summary = reproduce(
        entries, out_dir=tmp_path, jobs=2, experiments={"disco": module.good, "m3-irt": module.bad}
    )
    assert [o.slug for o in summary.outcomes] == ["disco", "m3-irt"]
    assert summary.by_state("ran") == ["disco"] and summary.by_state("failed") == ["m3-irt"]
    assert sorted(_calls(counter)) == ["disco", "m3-irt"]


def test_bad_arguments(tmp_path):
    with pytest.raises(ValueError, match="jobs"):
        reproduce([], out_dir=tmp_path, jobs=0)
    with pytest.raises(ValueError, match="scale"):
        run_system(catalogue.get("disco"), scale="huge", out_dir=tmp_path)
    with pytest.raises(ValueError, match="scale"):
        reproduce(_entries("disco"), out_dir=tmp_path, scale="huge")
    with pytest.raises(ValueError, match="executor must be one of"):
        reproduce([], out_dir=tmp_path, executor="spark")
    with pytest.raises(ValueError, match="address is only used by executor='ray'"):
        reproduce([], out_dir=tmp_path, address="127.0.0.1:6379")
    with pytest.raises(ValueError, match="jobs"):
        reproduce([], out_dir=tmp_path, jobs=True)


def test_a_dead_local_worker_is_recorded_not_raised(toys, tmp_path):
    entries = _entries("disco", "m3-irt")
    summary = reproduce(
        entries, out_dir=tmp_path, jobs=2, experiments={"disco": toys.dies, "m3-irt": toys.interval_claims}
    )
    assert [o.slug for o in summary.outcomes] == ["disco", "m3-irt"]
    assert "disco" in summary.by_state("failed")
    assert "BrokenProcessPool" in load_error(tmp_path, "disco")["error"]

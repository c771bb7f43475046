"""The Ray executor against a real local Ray instance (three short instances; the tests take ~30 s)."""

import json
import os

import pytest

from iclr26 import catalogue
from iclr26.cli import main
from iclr26.runner import reproduce
from iclr26.store import load_error, load_result
from iclr26.sweep import aggregate_path, seed_dir

ray = pytest.importorskip("ray")


def _toy(toys, slug, toy):
    base = catalogue.get(slug)
    return toys.ToyEntry(base.slug, base.family, "implemented", base.summary, toy=toy)


def _compared(out, slug):
    """The parts of result.json that must not depend on the executor, as bytes."""
    stored = json.loads((out / slug / "result.json").read_text())
    return json.dumps({k: stored[k] for k in ("claims", "metrics", "tables")}, sort_keys=True).encode()


def test_ray_matches_local_and_a_killed_worker_fails_alone(toys, tmp_path):
    local, on_ray = tmp_path / "local", tmp_path / "ray"
    entries = [_toy(toys, "disco", "interval_claims"), _toy(toys, "m3-irt", "global_state")]
    assert reproduce(entries, seed=3, out_dir=local).by_state("ran") == ["disco", "m3-irt"]

    seen = []

    def on_outcome(outcome):
        # Called while the local instance is up: every node of it is on the loopback address.
        seen.append(outcome.slug)
        assert {n["NodeManagerAddress"] for n in ray.nodes()} == {"127.0.0.1"}
        assert ray.get_runtime_context().gcs_address.startswith("127.0.0.1:")

    names = ("RAY_USAGE_STATS_ENABLED", "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER")
    env_before = {k: os.environ.get(k) for k in names}
    summary = reproduce(
        [*entries, _toy(toys, "icym2i", "dies")], seed=3, out_dir=on_ray, executor="ray", jobs=2,
        on_outcome=on_outcome,
    )
    assert sorted(seen) == ["disco", "icym2i", "m3-irt"]
    assert [o.slug for o in summary.outcomes] == ["disco", "m3-irt", "icym2i"]
    assert summary.by_state("ran") == ["disco", "m3-irt"] and summary.by_state("failed") == ["icym2i"]
    error = load_error(on_ray, "icym2i")
    assert "died" in error["error"] and error["seed"] == 3 and load_result(on_ray, "icym2i") is None
    for slug in ("disco", "m3-irt"):
        assert _compared(local, slug) == _compared(on_ray, slug)
    # The local instance is gone and this process's environment is as it was.
    assert not ray.is_initialized()
    assert {k: os.environ.get(k) for k in env_before} == env_before
    # Same resume rule: nothing left to run, so no instance is even started.
    again = reproduce(entries, seed=3, out_dir=on_ray, executor="ray")
    assert again.by_state("cached") == ["disco", "m3-irt"]


def test_cli_reproduce_ray_and_local_give_identical_claims(toys, tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(catalogue._BY_SLUG, "disco", _toy(toys, "disco", "interval_claims"))
    monkeypatch.setitem(catalogue._BY_SLUG, "m3-irt", _toy(toys, "m3-irt", "global_state"))
    for executor in ("local", "ray"):
        argv = ["reproduce", "--only", "disco,m3-irt", "--executor", executor]
        argv += ["--out", str(tmp_path / executor)]
        assert main(argv) == 0, capsys.readouterr().err
    assert "reproduce: 2 ran, 0 cached, 0 failed" in capsys.readouterr().out
    for slug in ("disco", "m3-irt"):
        assert _compared(tmp_path / "local", slug) == _compared(tmp_path / "ray", slug)
    assert "[disco](#disco)" in (tmp_path / "ray" / "report.md").read_text()


def test_cli_sweep_on_ray_writes_the_aggregate(toys, tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(catalogue._BY_SLUG, "disco", _toy(toys, "disco", "interval_claims"))
    argv = ["sweep", "disco", "--seeds", "0-4", "--executor", "ray", "--jobs", "2"]
    argv += ["--out", str(tmp_path / "ray")]
    assert main(argv) == 0, capsys.readouterr().err
    assert main(["sweep", "disco", "--seeds", "0-4", "--out", str(tmp_path / "local")]) == 0
    out = capsys.readouterr().out
    assert "sweep disco: 5 ran, 0 cached, 0 failed" in out
    on_ray = json.loads(aggregate_path(tmp_path / "ray", "disco").read_text())
    assert on_ray["seeds"] == [0, 1, 2, 3, 4] and on_ray["failed"] == {}
    assert on_ray == json.loads(aggregate_path(tmp_path / "local", "disco").read_text())
    for s in range(5):
        local, on_ray = seed_dir(tmp_path / "local", s), seed_dir(tmp_path / "ray", s)
        assert _compared(local, "disco") == _compared(on_ray, "disco")
    assert "### disco over seeds" in (tmp_path / "ray" / "report.md").read_text()

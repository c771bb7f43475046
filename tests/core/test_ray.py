"""The Ray executor against a real local Ray instance (two short instances)."""

import json
import os

import pytest

from iclr26 import catalogue
from iclr26.cli import main
from iclr26.runner import reproduce
from iclr26.store import load_error, load_result
from iclr26.sweep import aggregate_path, seed_dir

ray = pytest.importorskip("ray")

GHOST = """
from iclr26_toy_systems import ToyEntry

class GhostEntry(ToyEntry):
    '''An entry the driver can import and Ray's workers cannot (its module is not on their path).'''
"""


def _toy(toys, slug, toy, cls=None):
    base = catalogue.get(slug)
    return (cls or toys.ToyEntry)(base.slug, base.family, "implemented", base.summary, toy=toy)


def _compared(out, slug):
    """The parts of result.json that must not depend on the executor, as bytes."""
    stored = json.loads((out / slug / "result.json").read_text())
    return json.dumps({k: stored[k] for k in ("claims", "metrics", "tables")}, sort_keys=True).encode()


def test_reproduce_on_ray_matches_local_and_a_dead_worker_fails_alone(toys, tmp_path, monkeypatch, capsys):
    ghost_dir = tmp_path / "ghost"
    ghost_dir.mkdir()
    (ghost_dir / "iclr26_ghost.py").write_text(GHOST)
    monkeypatch.syspath_prepend(str(ghost_dir))  # this process only, not PYTHONPATH
    import iclr26_ghost

    where = tmp_path / "where.txt"
    monkeypatch.setenv("ICLR26_TOY_WHERE", str(where))
    toy_entries = {
        "disco": _toy(toys, "disco", "interval_claims"),
        "m3-irt": _toy(toys, "m3-irt", "global_state"),
        "icym2i": _toy(toys, "icym2i", "dies"),  # its worker kills itself
        "simpletom": _toy(toys, "simpletom", "interval_claims", cls=iclr26_ghost.GhostEntry),
    }
    for slug, entry in toy_entries.items():
        monkeypatch.setitem(catalogue._BY_SLUG, slug, entry)
    names = ("RAY_USAGE_STATS_ENABLED", "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER")
    env_before = {k: os.environ.get(k) for k in names}

    local, on_ray = tmp_path / "local", tmp_path / "ray"
    assert main(["reproduce", "--only", "disco,m3-irt", "--out", str(local), "--seed", "3"]) == 0
    argv = ["reproduce", "--only", "disco,m3-irt,icym2i,simpletom", "--seed", "3", "--out", str(on_ray)]
    assert main([*argv, "--executor", "ray", "--jobs", "2"]) == 1  # 1: some systems failed
    out = capsys.readouterr().out
    assert "reproduce: 2 ran, 0 cached, 2 failed (icym2i, simpletom)" in out

    for slug in ("disco", "m3-irt"):  # identical claims, metrics and tables, byte for byte
        assert _compared(local, slug) == _compared(on_ray, slug)
    error = load_error(on_ray, "icym2i")
    assert "WorkerCrashedError: the Ray worker running icym2i (seed 3) died" in error["error"]
    assert error["seed"] == 3 and load_result(on_ray, "icym2i") is None
    error = load_error(on_ray, "simpletom")["error"]
    assert "Ray could not run simpletom (seed 3)" in error and "iclr26_ghost" in error
    report = (on_ray / "report.md").read_text()
    assert "[disco](#disco)" in report and "[icym2i](#icym2i)" in report

    # The task ran on the local instance, whose node and GCS use the loopback address only.
    node, gcs = where.read_text().split()
    assert node == "127.0.0.1" and gcs.startswith("127.0.0.1:")
    # The instance is gone and this process's environment is as it was.
    assert not ray.is_initialized()
    assert {k: os.environ.get(k) for k in names} == env_before
    # Same resume rule: nothing left to run, so no instance is even started.
    again = reproduce([toy_entries["disco"], toy_entries["m3-irt"]], seed=3, out_dir=on_ray, executor="ray")
    assert again.by_state("cached") == ["disco", "m3-irt"]


def test_sweep_on_ray_writes_the_aggregate(toys, tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(catalogue._BY_SLUG, "disco", _toy(toys, "disco", "interval_claims"))
    argv = ["sweep", "disco", "--seeds", "0-4", "--executor", "ray", "--jobs", "2"]
    assert main([*argv, "--out", str(tmp_path / "ray")]) == 0, capsys.readouterr().err
    assert main(["sweep", "disco", "--seeds", "0-4", "--out", str(tmp_path / "local")]) == 0
    out = capsys.readouterr().out
    assert "sweep disco: 5 ran, 0 cached, 0 failed" in out
    on_ray = json.loads(aggregate_path(tmp_path / "ray", "disco").read_text())
    assert on_ray["seeds"] == [0, 1, 2, 3, 4] and on_ray["failed"] == {}
    assert on_ray == json.loads(aggregate_path(tmp_path / "local", "disco").read_text())
    for s in range(5):
        local, ray_dir = seed_dir(tmp_path / "local", s), seed_dir(tmp_path / "ray", s)
        assert _compared(local, "disco") == _compared(ray_dir, "disco")
    assert "### disco over seeds" in (tmp_path / "ray" / "report.md").read_text()


@pytest.mark.parametrize(
    ("address", "message"),
    [("127.0.0.1:1", "cannot reach a Ray cluster at '127.0.0.1:1'"), ("no-port", "must be HOST:PORT")],
)
def test_bad_address_fails_fast_in_one_line(address, message, toys, tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(catalogue._BY_SLUG, "disco", _toy(toys, "disco", "interval_claims"))
    argv = ["reproduce", "--only", "disco", "--executor", "ray", "--address", address]
    assert main([*argv, "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0] and err[0].startswith("error:")
    assert not (tmp_path / "disco" / "result.json").exists() and not ray.is_initialized()

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from iclr26 import catalogue
from iclr26.cli import main

SRC = Path(__file__).resolve().parents[2] / "src"


def test_list_json_is_the_catalogue(capsys):
    assert main(["list", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["slug"] for r in rows] == catalogue.slugs()
    assert {r["status"] for r in rows} <= set(catalogue.STATUSES)
    by_slug = {r["slug"]: r for r in rows}
    assert set(by_slug["disco"]) >= {"slug", "family", "status", "summary", "docs", "headline_experiment"}
    assert by_slug["disco"]["docs"] == "docs/disco.md"
    for e in catalogue.SYSTEMS:
        assert by_slug[e.slug]["headline_experiment"] is e.has_experiment
        assert by_slug[e.slug]["summary"] == e.summary and by_slug[e.slug]["family"] == e.family


def test_list_table_on_a_terminal(capsys, monkeypatch):
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "38 systems" in out and "disco" in out


def test_list_piped_is_one_plain_line_per_system(capsys):
    assert main(["list"]) == 0  # captured output is not a terminal
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 38
    for i, (line, e) in enumerate(zip(lines, catalogue.SYSTEMS), 1):
        assert line.split("\t") == [str(i), e.slug, e.family, e.status, e.summary]


@pytest.mark.skipif(shutil.which("grep") is None or shutil.which("sh") is None, reason="needs sh and grep")
def test_list_through_a_real_pipe_into_grep():
    paths = [str(SRC), *([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else [])]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
    env["COLUMNS"] = "40"  # a narrow terminal width must not wrap piped output
    cmd = f"'{sys.executable}' -m iclr26.cli list"
    run = lambda line: subprocess.run(line, shell=True, env=env, capture_output=True, text=True, check=True)
    assert run(f"{cmd} | grep -c .").stdout.strip() == "38"
    listing = run(cmd).stdout
    for slug in catalogue.slugs():
        found = subprocess.run(["grep", "-w", "--", slug], input=listing, capture_output=True, text=True)
        assert found.returncode == 0, slug
        assert any(line.split("\t")[1] == slug for line in found.stdout.splitlines()), slug


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["run", "no-such-system"], "unknown system"),
        (["run", "disco", "--scale", "huge"], "--scale"),
        (["run", "disco", "--seed", "abc"], "--seed"),
        (["reproduce", "--jobs", "0"], "--jobs"),
        (["reproduce", "--only", "nope"], "unknown system"),
        (["list", "--bogus"], "--bogus"),
        (["report", "/no/such/folder"], "does not exist"),
        (["sweep", "disco", "--seeds", "5-2"], "reversed"),
        (["sweep", "disco", "--seeds", "x"], "--seeds"),
        (["sweep", "disco"], "--seeds"),
        (["sweep", "nope", "--seeds", "0-1"], "unknown system"),
        (["reproduce", "--executor", "spark"], "--executor"),
        (["reproduce", "--address", "127.0.0.1:6379"], "--address needs --executor ray"),
        (["sweep", "disco", "--seeds", "0", "--address", "x:1"], "--address needs --executor ray"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert message in err
    assert "Traceback" not in err
    assert len(err.splitlines()) == 1


def test_planned_system_cannot_run(capsys):
    planned = next(e.slug for e in catalogue.SYSTEMS if e.status == "planned")
    assert main(["run", planned]) == 2
    err = capsys.readouterr().err
    assert "planned" in err and "no headline experiment" in err


def test_partial_system_with_an_experiment_names_the_way_to_run_it(capsys, monkeypatch):
    monkeypatch.delenv("ICLR26_FORCE", raising=False)
    partial = next(e for e in catalogue.SYSTEMS if e.status == "partial")
    assert main(["run", partial.slug]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "partial" in err and "incomplete" in err and "ICLR26_FORCE=1" in err and partial.docs_page in err


def test_unwritable_output_folder(tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    runnable = catalogue.runnable()
    argv = ["reproduce", "--out", str(blocker / "sub")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "cannot write to output folder" in err and len(err.strip().splitlines()) == 1
    if runnable:
        assert main(["run", runnable[0].slug, "--out", str(blocker / "sub")]) == 2


def test_report_command_on_empty_folder(tmp_path, capsys):
    assert main(["report", str(tmp_path)]) == 0
    assert "No system has a result" in (tmp_path / "report.md").read_text()
    assert (tmp_path / "report.html").read_text().startswith("<!doctype html>")


@pytest.mark.parametrize("command", [["reproduce", "--only", "disco"], ["sweep", "disco", "--seeds", "0-1"]])
def test_ray_executor_without_ray_says_how_to_install(command, monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` now raises ImportError
    assert main([*command, "--executor", "ray", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "pip install 'iclr26[ray]'" in err
    assert not (tmp_path / "disco").exists()  # nothing ran

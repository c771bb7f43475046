import json

import pytest

from iclr26 import catalogue
from iclr26.cli import main


def test_list_has_38_rows(capsys):
    assert main(["list", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["slug"] for r in rows] == catalogue.slugs()
    assert {r["status"] for r in rows} <= set(catalogue.STATUSES)


def test_list_table_renders(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "38 systems" in out and "disco" in out


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
    assert "planned" in capsys.readouterr().err


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

import json

from iclr26.cli import main
from iclr26.sandbox import LANGUAGES, toolchains


def test_doctor_lists_every_language_with_version_or_debian_package(capsys):
    assert main(["sandbox", "doctor", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    rows = {t["language"]: t for t in report["toolchains"]}
    assert set(rows) == set(LANGUAGES)
    for name, t in rows.items():
        assert t["debian"] == LANGUAGES[name].debian
        if t["present"]:
            assert any(c.isdigit() for c in t["version"]), t
        else:
            assert t["missing"] and t["version"] == ""
    assert report["isolation"]["network_isolation"] in ("namespace", "bubblewrap", "none")


def test_doctor_table(capsys):
    assert main(["sandbox", "doctor"]) == 0
    out = capsys.readouterr().out
    assert "sandbox toolchains" in out and "network_isolation" in out
    for t in toolchains():
        assert t.language in out

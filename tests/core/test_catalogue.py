import re
from pathlib import Path

import pytest

from iclr26 import catalogue

ABSTRACTS = Path(__file__).resolve().parents[3] / "shared" / "papers" / "ABSTRACTS.md"


def test_38_unique_slugs():
    slugs = catalogue.slugs()
    assert len(slugs) == 38
    assert len(set(slugs)) == 38


def test_registry_matches_abstracts():
    if not ABSTRACTS.exists():
        pytest.skip("shared/papers/ABSTRACTS.md is not beside this checkout")
    listed = re.findall(r"^## \d+ `([^`]+)`", ABSTRACTS.read_text(), flags=re.M)
    assert len(listed) == 38
    assert catalogue.slugs() == listed


def test_every_entry_has_family_summary_and_valid_status():
    for e in catalogue.SYSTEMS:
        assert e.family and e.summary
        assert e.status in catalogue.STATUSES


def test_runnable_systems_have_an_experiment_module_and_docs():
    docs = Path(__file__).resolve().parents[2] / "docs"
    for e in catalogue.runnable():
        assert callable(e.experiment()), e.slug
        assert (docs / f"{e.slug}.md").exists(), f"docs/{e.slug}.md missing for {e.status} system"


def test_planned_systems_have_no_package_pretending_otherwise():
    src = Path(__file__).resolve().parents[2] / "src" / "iclr26"
    for e in catalogue.SYSTEMS:
        if e.status == "planned":
            assert not (src / e.slug.replace("-", "_") / "experiment.py").exists(), (
                f"{e.slug} has an experiment but is listed as planned"
            )


def test_unknown_slug_raises_keyerror_with_hint():
    with pytest.raises(KeyError, match="iclr26 list"):
        catalogue.get("no-such-system")


def test_bad_status_rejected():
    with pytest.raises(ValueError, match="status"):
        catalogue.SystemEntry("x", "f", "done", "s")

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


def test_fields_fit_on_one_tab_separated_line():
    for e in catalogue.SYSTEMS:
        for value in (e.slug, e.family, e.status, e.summary):
            assert "\t" not in value and "\n" not in value, e.slug


def test_budgets_default_or_with_a_reason():
    for e in catalogue.SYSTEMS:
        assert e.budget_s > 0
        assert e.budget_s == catalogue.DEFAULT_BUDGET_S or e.budget_reason.strip(), e.slug
    entry = catalogue.SystemEntry("x", "f", "planned", "s")
    assert entry.budget_s == 45.0 and entry.budget_reason == ""
    slow = catalogue.SystemEntry("x", "f", "planned", "s", budget_s=90, budget_reason="trains 5 seeds")
    assert slow.budget_s == 90


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"budget_s": 90}, "budget_reason"),
        ({"budget_s": 90, "budget_reason": "  "}, "budget_reason"),
        ({"budget_s": 0, "budget_reason": "r"}, "> 0"),
        ({"budget_s": -5, "budget_reason": "r"}, "> 0"),
        ({"budget_s": float("nan"), "budget_reason": "r"}, "finite"),
        ({"budget_s": float("inf"), "budget_reason": "r"}, "finite"),
        ({"budget_s": True, "budget_reason": "r"}, "finite"),
        ({"budget_s": "45"}, "finite"),
    ],
)
def test_bad_budget_rejected(kwargs, message):
    with pytest.raises(ValueError, match=message):
        catalogue.SystemEntry("x", "f", "planned", "s", **kwargs)


def test_docs_page_and_headline_experiment_flag():
    src = Path(__file__).resolve().parents[2] / "src" / "iclr26"
    for e in catalogue.SYSTEMS:
        assert e.docs_page == f"docs/{e.slug}.md"
        assert e.has_experiment == (src / e.slug.replace("-", "_") / "experiment.py").is_file()
        if e.runnable:
            assert e.has_experiment, e.slug

import os
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from iclr26 import catalogue  # noqa: E402
from iclr26.claims import Claim, Result  # noqa: E402
from iclr26.report import write_report  # noqa: E402
from iclr26.runtime import RunContext  # noqa: E402
from iclr26.store import save_error, save_result  # noqa: E402


def test_report_has_claims_plots_and_failures(tmp_path):
    ctx = RunContext(slug="disco", out_dir=tmp_path / "disco", show_progress=False)
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    ctx.savefig(fig, "line")
    result = Result(
        claims=[
            Claim("DISCO beats silhouette", 0.3, ">", 0.0, paper="yes", scale="n=100", interval=(0.1, 0.5)),
            Claim("straddles", 0.05, ">", 0.0, interval=(-0.1, 0.2), method="bootstrap over 9 graphs"),
            Claim("fails here", 0.1, ">", 0.5, exact=True),
        ],
        metrics={"spearman": 0.81},
        tables={"scores": [{"method": "disco", "r": 0.8}, {"method": "silhouette", "r": 0.5}]},
        artifacts=ctx.artifacts,
        slug="disco",
        seed=0,
        scale="small",
        seconds=1.5,
        config_hash="h",
    )
    save_result(tmp_path, result)
    save_error(tmp_path, "m3-irt", {"slug": "m3-irt", "error": "RuntimeError: boom", "seconds": 0.1})
    md_path, html_path = write_report(tmp_path)
    md, page = md_path.read_text(), html_path.read_text()
    assert "DISCO beats silhouette" in md and "holds" in md and "does not hold" in md
    assert "![disco: line.png](disco/line.png)" in md
    assert "m3-irt (failed)" in md and "RuntimeError: boom" in md
    assert "data:image/png;base64," in page  # self-contained: the plot is embedded
    assert 'class="ok"' in page and 'class="bad"' in page and 'class="mid"' in page
    # intervals beside the figures, verdict counts by kind
    assert "[-0.1, 0.2] (95%, bootstrap over 9 graphs)" in md and "exact" in md
    assert "1 hold, 1 do not, 1 inconclusive, 0 not measurable" in md
    assert "silhouette" in page


def _small_result(slug, seconds, scale="small"):
    claim = Claim("a count", 3.0, ">=", 1.0, exact=True)
    return Result(claims=[claim], slug=slug, seed=0, scale=scale, seconds=seconds, config_hash="h")


def test_front_page_lists_all_38_with_budget_and_links(tmp_path):
    save_result(tmp_path, _small_result("disco", 50.0))  # over its 45 s budget
    save_result(tmp_path, _small_result("icym2i", 10.0))
    save_result(tmp_path, _small_result("simpletom", 99.0, scale="medium"))  # the budget is for small
    error = {"slug": "m3-irt", "error": "RuntimeError: boom\nsecond line", "seconds": 2}
    save_error(tmp_path, "m3-irt", error)
    md_path, html_path = write_report(tmp_path)
    md, page = md_path.read_text(), html_path.read_text()

    front = md.split("## Systems", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in front.splitlines() if re.match(r"^\| \d+ \|", line)]
    assert len(rows) == 38
    for e, row in zip(catalogue.SYSTEMS, rows):
        assert f" {e.slug}" in row or f"[{e.slug}]" in row
        assert f"| {e.status} |" in row and f"| {e.budget_s:g} |" in row
    by_slug = {e.slug: row for e, row in zip(catalogue.SYSTEMS, rows)}
    assert "[disco](#disco)" in by_slug["disco"] and "**50 (over budget)**" in by_slug["disco"]
    assert "1 hold, 0 do not, 0 inconclusive, 0 not measurable" in by_slug["disco"]
    assert "[icym2i](#icym2i)" in by_slug["icym2i"] and "over budget" not in by_slug["icym2i"]
    assert "over budget" not in by_slug["simpletom"] and "medium" in by_slug["simpletom"]
    assert "[m3-irt](#m3-irt)" in by_slug["m3-irt"] and "FAILED: RuntimeError: boom |" in by_slug["m3-irt"]
    assert "not run" in by_slug["bah"] and "[bah]" not in by_slug["bah"]
    # Docs links are relative to the results folder and point at real pages; no page, no link.
    docs = Path(__file__).resolve().parents[2] / "docs"
    link = os.path.relpath(docs / "disco.md", tmp_path.resolve())
    assert f"[docs/disco.md]({link})" in by_slug["disco"] and (tmp_path / link).resolve().is_file()
    assert by_slug["bah"].rstrip(" |").endswith("—")
    # Every section linked from the front page exists.
    for slug in ("disco", "icym2i", "m3-irt", "simpletom"):
        assert f'<a id="{slug}"></a>' in md and f"id='{slug}'" in page
    assert "Over budget at scale small: disco (50 s of 45 s)." in md
    assert "budget 45 s, OVER BUDGET" in md and "the 45 s budget is for scale small" in md
    assert page.count("<tr>") >= 38 and f"href='{link}'" in page and "href='#disco'" in page
    assert '<td class="bad">50 (over budget)</td>' in page


def test_docs_block_is_rewritten_from_the_stored_run_and_only_there(tmp_path):
    from iclr26.report import DOCS_BEGIN, DOCS_END, sync_docs

    results, docs = tmp_path / "out", tmp_path / "docs"
    docs.mkdir()
    result = _small_result("disco", 2.0)
    result.finished = "2026-12-03T17:00:00+00:00"
    save_result(results, result)
    page = docs / "disco.md"
    page.write_text(f"# disco\n\nintro\n\n{DOCS_BEGIN}\nold numbers\n{DOCS_END}\n\n## After\n\nkept\n")
    assert sync_docs(results, docs, check=True) == {"disco": "updated"}
    assert "old numbers" in page.read_text()  # check writes nothing
    assert sync_docs(results, docs) == {"disco": "updated"}
    text = page.read_text()
    assert "old numbers" not in text and "intro" in text and "## After\n\nkept" in text
    assert "| a count | — | 3 | exact |" in text and "finished 2026-12-03T17:00:00+00:00" in text
    assert "scale small, seed 0, 2 s (budget 45 s)" in text
    assert sync_docs(results, docs) == {"disco": "unchanged"}
    # a page without the markers gets the generated section appended; a system without a page is named
    save_result(results, _small_result("icym2i", 1.0))
    (docs / "icym2i.md").write_text("# icym2i\n")
    status = sync_docs(results, docs)
    assert status == {"disco": "unchanged", "icym2i": "updated"}
    assert (docs / "icym2i.md").read_text().count(DOCS_BEGIN) == 1
    (docs / "icym2i.md").unlink()
    assert sync_docs(results, docs)["icym2i"] == "no page"


def test_docs_blocks_of_small_and_medium_runs_are_kept_apart(tmp_path):
    from iclr26.report import DOCS_BEGIN, DOCS_END, docs_markers, sync_docs

    docs = tmp_path / "docs"
    docs.mkdir()
    small, medium = tmp_path / "small", tmp_path / "medium"
    save_result(small, _small_result("disco", 2.0))
    save_result(medium, _small_result("disco", 900.0, scale="medium"))
    page = docs / "disco.md"
    page.write_text("# disco\n")
    assert sync_docs(small, docs) == {"disco": "updated"}
    assert sync_docs(medium, docs) == {"disco": "updated"}
    text = page.read_text()
    begin, end = docs_markers("medium")
    assert text.count(DOCS_BEGIN) == 1 and text.count(begin) == 1 and text.count(end) == 1
    assert "## Measured at scale medium by the last regenerated run" in text
    small_block = text.split(DOCS_BEGIN, 1)[1].split(DOCS_END, 1)[0]
    medium_block = text.split(begin, 1)[1].split(end, 1)[0]
    assert "scale small, seed 0, 2 s" in small_block and "scale medium" not in small_block
    assert "scale medium, seed 0, 900 s (the 45 s budget is for scale small)" in medium_block
    assert "scale small, seed" not in medium_block
    # each rerun rewrites its own block only
    assert sync_docs(small, docs) == {"disco": "unchanged"} and sync_docs(medium, docs) == {
        "disco": "unchanged"
    }


def test_report_cli_checks_docs_against_results(tmp_path):
    from typer.testing import CliRunner

    from iclr26.cli import app

    results, docs = tmp_path / "out", tmp_path / "docs"
    docs.mkdir()
    save_result(results, _small_result("disco", 2.0))
    (docs / "disco.md").write_text("# disco\n")
    runner = CliRunner()
    assert runner.invoke(app, ["report", str(results), "--docs", str(docs), "--check"]).exit_code == 1
    assert runner.invoke(app, ["report", str(results), "--docs", str(docs)]).exit_code == 0
    assert runner.invoke(app, ["report", str(results), "--docs", str(docs), "--check"]).exit_code == 0
    assert (results / "report.md").is_file()

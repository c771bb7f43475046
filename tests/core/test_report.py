import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

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

import json

import numpy as np
import pytest

from iclr26 import catalogue
from iclr26.claims import Claim, Result
from iclr26.report import write_report
from iclr26.sweep import aggregate, aggregate_path, load_sweeps, parse_seeds, seed_dir, sweep
from iclr26.uncertainty import over_seeds


@pytest.mark.parametrize(
    ("text", "seeds"),
    [("0-9", list(range(10))), ("3", [3]), ("0,2,5", [0, 2, 5]), ("0-2, 7 ,10-11", [0, 1, 2, 7, 10, 11])],
)
def test_parse_seeds(text, seeds):
    assert parse_seeds(text) == seeds


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "seeds must be like"),
        ("  ", "seeds must be like"),
        ("5-2", "reversed"),
        ("-1", "not a non-negative integer"),
        ("a-b", "not a non-negative integer"),
        ("1.5", "not a non-negative integer"),
        ("0,,3", "empty item"),
        ("0,", "empty item"),
        ("0-3,2", "more than once"),
        ("0-5000", "at most"),
        ("0-999,1000-1999", "at most"),
    ],
)
def test_parse_seeds_rejects(text, message):
    with pytest.raises(ValueError, match=message):
        parse_seeds(text)


def _result(seed, measured, interval, post_hoc=False):
    claims = [
        Claim("gain is positive", measured, ">", 0.0, interval=interval, post_hoc=post_hoc),
        Claim.not_measurable("needs the authors' data", "not shipped"),
    ]
    return Result(claims, slug="disco", seed=seed, scale="small")


def test_aggregate_means_intervals_and_verdict_counts():
    results = [
        _result(0, 0.30, (0.10, 0.50)),  # holds
        _result(1, 0.05, (-0.10, 0.20)),  # inconclusive
        _result(2, -0.20, (-0.40, -0.05)),  # does not hold
        _result(3, 0.40, (0.20, 0.60)),  # holds
    ]
    agg = aggregate("disco", "small", results, failed={4: "RuntimeError: boom"})
    assert agg["seeds"] == [0, 1, 2, 3] and agg["failed"] == {"4": "RuntimeError: boom"}
    gain, unmeasured = agg["claims"]
    values = [0.30, 0.05, -0.20, 0.40]
    ref = over_seeds(values)
    assert gain["mean"] == pytest.approx(np.mean(values))
    assert gain["std"] == pytest.approx(np.std(values, ddof=1))
    assert gain["interval"] == pytest.approx([ref.lo, ref.hi])
    assert gain["verdicts"] == {"holds": 2, "does not hold": 1, "inconclusive": 1, "not measurable here": 0}
    assert gain["runs"] == 4 and gain["measured_runs"] == 4 and gain["criterion"] == "x > 0"
    # A claim never measured has counts but no figures (JSON: no NaN).
    assert unmeasured["mean"] is None and unmeasured["interval"] is None and unmeasured["std"] is None
    assert unmeasured["verdicts"]["not measurable here"] == 4
    json.dumps(agg, allow_nan=False)


def test_aggregate_of_one_seed_has_no_interval_and_marks_post_hoc():
    agg = aggregate("disco", "small", [_result(0, 0.3, (0.1, 0.5), post_hoc=True)])
    gain = agg["claims"][0]
    assert gain["mean"] == pytest.approx(0.3) and gain["std"] is None and gain["interval"] is None
    assert gain["post_hoc"] is True


def _toy_entry(toys, slug="disco", toy="interval_claims"):
    base = catalogue.get(slug)
    return toys.ToyEntry(base.slug, base.family, "implemented", base.summary, toy=toy)


def test_sweep_writes_runs_aggregate_and_report(toys, tmp_path):
    entry = _toy_entry(toys)
    summary, agg = sweep(entry, [0, 1, 2], out_dir=tmp_path)
    assert summary.by_state("ran") == ["disco"] * 3
    for s in (0, 1, 2):
        stored = json.loads((seed_dir(tmp_path, s) / "disco" / "result.json").read_text())
        assert stored["seed"] == s
    assert json.loads(aggregate_path(tmp_path, "disco").read_text()) == agg
    means = [
        json.loads((seed_dir(tmp_path, s) / "disco" / "result.json").read_text())["claims"][0]["measured"]
        for s in (0, 1, 2)
    ]
    assert len(set(means)) == 3  # the seeds differ
    assert agg["claims"][0]["mean"] == pytest.approx(np.mean(means))
    assert load_sweeps(tmp_path) == [agg]
    md = write_report(tmp_path)[0].read_text()
    assert '<a id="sweep-disco"></a>' in md and "[3 seeds](#sweep-disco)" in md
    assert "3 seeds (0, 1, 2), scale small" in md and "the mean is positive" in md

    # Resume: the same seeds are not run again; a new seed is.
    again, agg2 = sweep(entry, [0, 1, 2, 3], out_dir=tmp_path)
    assert [o.state for o in again.outcomes] == ["cached"] * 3 + ["ran"]
    assert agg2["seeds"] == [0, 1, 2, 3]


def test_sweep_records_failed_seeds(toys, tmp_path):
    summary, agg = sweep(_toy_entry(toys, toy="fails"), [0, 1], out_dir=tmp_path)
    assert summary.by_state("failed") == ["disco", "disco"]
    assert set(agg["failed"]) == {"0", "1"} and "toy failure" in agg["failed"]["0"]
    assert agg["claims"] == [] and agg["seeds"] == []
    assert "failed seeds: 0: RuntimeError: toy failure" in write_report(tmp_path)[0].read_text()


@pytest.mark.parametrize(
    ("seeds", "message"),
    [([], "at least one"), ([0, 0], "distinct"), ([-1], "non-negative"), ([1.5], "integers")],
)
def test_sweep_rejects_bad_seeds(toys, tmp_path, seeds, message):
    with pytest.raises(ValueError, match=message):
        sweep(_toy_entry(toys), seeds, out_dir=tmp_path)


def test_load_sweeps_skips_unreadable_files(tmp_path):
    folder = tmp_path / "sweeps"
    folder.mkdir()
    (folder / "broken.json").write_text("{not json")
    (folder / "other.json").write_text(json.dumps({"slug": "x"}))
    assert load_sweeps(tmp_path) == [] and load_sweeps(tmp_path / "absent") == []

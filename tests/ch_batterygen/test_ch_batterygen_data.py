"""Real-data robustness: gap policy, validating loader, label merging, resumable generation, CLI."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from iclr26.ch_batterygen import (
    LayoutWarning,
    VehicleSpec,
    _generate,
    clean_segment,
    columns,
    generate_fleet,
    load_dataset,
    make_fleet,
    make_windows,
    read_segment,
    simulate_vehicle,
    validate_segment,
    write_vehicle,
)
from iclr26.cli import main


def _frame(n=40, n_cells=3, t0=0):
    t = np.arange(n) * 10 + t0
    v = 3.3 + 0.001 * np.arange(n)
    data = {
        "TIME": t,
        "CHARGE_STATUS": np.full(n, 3),
        "SUM_VOLTAGE": np.round(v * n_cells, 1),
        "SUM_CURRENT": np.full(n, 20.0),
        "SOC": np.linspace(80, 70, n).round(),
        "MAX_CELL_VOLT": v + 0.002,
        "MIN_CELL_VOLT": v - 0.002,
        "MAX_TEMP": np.full(n, 25),
        "MIN_TEMP": np.full(n, 24),
    }
    for i in range(1, n_cells + 1):
        data[f"VOLT_{i}"] = v + 0.001 * (i - 2)
    return pd.DataFrame(data)


def _write(root, chem, cat, vin, frame, scenario="discharge", k=1):
    folder = root / chem / cat / vin
    folder.mkdir(parents=True, exist_ok=True)
    frame.to_csv(folder / f"{vin}_{scenario}_{k}.csv", index=False)


# ------------------------------------------------------------------------------------------ gap policy
def test_short_gaps_are_interpolated_and_long_gaps_split():
    f = _frame(40).astype({"VOLT_2": float, "SOC": float})
    f.loc[5, "VOLT_2"] = np.nan  # one missing cell: interpolated
    f.loc[10:12, "SOC"] = np.nan  # 3 rows: interpolated (limit 3)
    f.loc[20:24, "SUM_CURRENT"] = np.nan  # 5 rows: dropped, segment split
    f.loc[0, "MAX_TEMP"] = np.nan  # at the start: dropped
    pieces, rep = clean_segment(f, max_interp_rows=3)
    assert rep.interpolated_rows == 4 and rep.dropped_rows == 6 and rep.splits == 1
    assert rep.segments_out == 2 and [len(p) for p in pieces] == [19, 15]
    assert all(np.isfinite(p.to_numpy(dtype=float)).all() for p in pieces)
    first = pieces[0].set_index("TIME")
    assert first.loc[50, "VOLT_2"] == pytest.approx((f.loc[4, "VOLT_2"] + f.loc[6, "VOLT_2"]) / 2)
    np.testing.assert_allclose(first.loc[100:120, "SOC"], np.linspace(f.SOC[9], f.SOC[13], 5)[1:4])
    # time: a jump over max_gap_s splits, a repeated timestamp is dropped, untouched rows are unchanged
    g = pd.concat([_frame(10), _frame(10, t0=1000)], ignore_index=True)
    g = pd.concat([g.iloc[:5], g.iloc[[4]], g.iloc[5:]], ignore_index=True)
    pieces, rep = clean_segment(g, max_gap_s=60.0)
    assert [len(p) for p in pieces] == [10, 10] and rep.splits == 1 and rep.dropped_rows == 1
    pd.testing.assert_frame_equal(pieces[1], _frame(10, t0=1000), check_dtype=False)
    clean, rep = clean_segment(_frame(12))
    assert rep.clean and len(clean) == 1


def test_make_windows_applies_the_gap_policy_and_reports_it(tmp_path):
    for v, cat in enumerate(("normal", "high_resistance")):
        f = _frame(300)
        if v == 1:
            f.loc[100, "VOLT_1"] = np.nan
            f.loc[200:220, "SUM_CURRENT"] = np.nan
        _write(tmp_path, "LFP", cat, f"vin_{v}", f)
    ds = load_dataset(tmp_path)
    ws = make_windows(ds, "LFP", "discharge", window=64, stride=32)
    assert np.isfinite(ws.X).all()
    g = ws.gaps.to_dict()
    assert g == {"segments_in": 2, "segments_out": 3, "rows": 600, "interpolated_rows": 1, "dropped_rows": 21,
                 "splits": 1}  # fmt: skip
    # the split vehicle's windows never cross its gap: 200 rows -> 5 windows, 79 rows -> 1 window
    assert (ws.vehicle == "LFP/vin_1").sum() == 6 and (ws.vehicle == "LFP/vin_0").sum() == 8


def test_unknown_chemistry_and_scenario_are_errors(tmp_path):
    _write(tmp_path, "LFP", "normal", "vin_1", _frame(200))
    ds = load_dataset(tmp_path)
    with pytest.raises(ValueError, match="chemistry"):
        make_windows(ds, "XYZ", "discharge")
    with pytest.raises(ValueError, match="chemistry"):
        ds.select("lfp")
    with pytest.raises(ValueError, match="scenario"):
        make_windows(ds, "LFP", "driving")


# ------------------------------------------------------------------------------------------- loading
def test_non_numeric_cells_are_rejected_and_empty_cells_kept_as_gaps(tmp_path):
    f = _frame(6).astype({"VOLT_2": object})
    f.loc[3, "VOLT_2"] = "ERR"
    with pytest.raises(ValueError, match=r"'VOLT_2'.*'ERR'.*row 4"):
        validate_segment(f)
    f.loc[3, "VOLT_2"] = ""
    out = validate_segment(f)
    assert np.isnan(out.loc[3, "VOLT_2"]) and out["VOLT_2"].dtype == np.float64
    _write(
        tmp_path, "NCM", "normal", "vin_1", _frame(6).astype({"SOC": object}).assign(SOC=["1"] * 5 + ["x"])
    )
    ds = load_dataset(tmp_path)  # headers are fine: the bad cell is found when the file is read
    with pytest.raises(ValueError, match=r"'SOC'.*'x'"):
        make_windows(ds, "NCM", "discharge", window=8, stride=8)


def test_binary_file_and_missing_column_are_reported_at_load(tmp_path):
    _write(tmp_path, "LFP", "normal", "vin_1", _frame(20))
    bad = tmp_path / "LFP" / "normal" / "vin_2"
    bad.mkdir()
    (bad / "vin_2_charge_1.csv").write_bytes(bytes(range(256)) * 4)
    with pytest.raises(ValueError, match="vin_2_charge_1.csv.*not a UTF-8 text CSV"):
        load_dataset(tmp_path)
    with pytest.raises(ValueError, match="not a UTF-8 text CSV"):
        read_segment(bad / "vin_2_charge_1.csv")
    (bad / "vin_2_charge_1.csv").unlink()
    _write(tmp_path, "LFP", "normal", "vin_2", _frame(20).drop(columns="MIN_TEMP"))
    want = r"1 segment files fail the schema: LFP/normal/vin_2/vin_2_discharge_1.csv: missing columns "
    want += r"\['MIN_TEMP'\]"
    with pytest.raises(ValueError, match=want):
        load_dataset(tmp_path)


def test_everything_skipped_is_warned_about(tmp_path):
    for i, cat in enumerate(("normal", "high_resistance", "low_capacity")):
        _write(tmp_path, "NCM", cat, f"vin_{i}", _frame(20))
    _write(tmp_path, "NCM", "lowcapacity", "vin_9", _frame(20))  # a renamed category folder
    _write(tmp_path, "NMC", "normal", "vin_8", _frame(20))  # a misspelt chemistry
    (tmp_path / "NCM" / "normal" / "vin_0" / "notes.txt").write_text("x")
    (tmp_path / "NCM" / "normal" / "vin_0" / "vin_7_charge_1.csv").write_text("x")  # another vehicle's file
    (tmp_path / "NCM" / "normal" / "vin_5").mkdir()  # empty vehicle folder
    (tmp_path / "README.md").write_text("the release's readme is not reported")
    with pytest.warns(LayoutWarning, match="skipped 5 entries") as rec:
        ds = load_dataset(tmp_path)
    msg = str(rec[0].message)
    parts = (
        "NCM/lowcapacity (folder is not a category",
        "NMC (folder is not a chemistry",
        "notes.txt",
        "file names vehicle 'vin_7'",
        "NCM/normal/vin_5 (vehicle folder without segment files",
    )
    for part in parts:
        assert part in msg
    assert "README" not in msg
    assert len(ds.vehicles) == 3 and len(ds.skipped) == 5


def _label_rows(rows):
    return pd.DataFrame(rows, columns=["vin", "severity", "fault cell id", "fault value"])


def test_labels_are_merged_on_chemistry_and_vin(tmp_path):
    _write(tmp_path, "LFP", "low_capacity", "1", _frame(20))
    _write(tmp_path, "NCM", "high_resistance", "1", _frame(20))
    _write(tmp_path, "NCM", "normal", "2", _frame(20))
    table = _label_rows([["1", 3, 7, 0.7]])
    # The release's table is LFP-only and has no chemistry column: its name says which chemistry it covers.
    table.to_excel(tmp_path / "faults details - LFP batteries.xlsx", index=False)
    with pytest.warns(LayoutWarning, match="name says LFP"):
        ds = load_dataset(tmp_path)
    v = ds.vehicles.set_index(["chemistry", "vin"])
    assert v.loc[("LFP", "1"), "severity"] == 3 and v.loc[("LFP", "1"), "fault_cell_id"] == 7
    assert v.loc[("NCM", "1"), "severity"] == -1  # not LFP vehicle 1's label
    assert v.loc[("NCM", "2"), "severity"] == 0
    # A table that names no chemistry while vin "1" exists under both: refused.
    (tmp_path / "faults details - LFP batteries.xlsx").unlink()
    table.to_csv(tmp_path / "faults.csv", index=False)
    with pytest.raises(ValueError, match=r"no chemistry column and vehicle ids \['1'\] occur under both"):
        load_dataset(tmp_path)
    # With a chemistry column: exact; a label row with no vehicle and a disagreeing category are warned about.
    t = table.assign(chemistry="NCM", category="low_capacity")
    t = pd.concat([t, t.assign(vin="99")])
    t.to_csv(tmp_path / "faults.csv", index=False)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        ds = load_dataset(tmp_path)
    text = " | ".join(str(r.message) for r in rec)
    assert "1 label rows match no vehicle folder" in text and "differs from their folder" in text
    v = ds.vehicles.set_index(["chemistry", "vin"])
    assert v.loc[("NCM", "1"), "severity"] == 3 and v.loc[("LFP", "1"), "severity"] == -1
    t.assign(chemistry="XYZ").to_csv(tmp_path / "faults.csv", index=False)
    with pytest.raises(ValueError, match="unknown chemistry"):
        load_dataset(tmp_path)


# ---------------------------------------------------------------------------------------- generation
def _specs(n=4):
    return make_fleet(n, seed=3, n_cycles=1, pack_designs={"LFP": ((4, 100.0),), "NCM": ((4, 100.0),)})


def test_interrupted_generation_resumes(tmp_path, monkeypatch):
    specs = _specs(4)
    real = _generate._work
    calls = []

    def flaky(spec, *a):
        calls.append(spec.vin)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(spec, *a)

    monkeypatch.setattr(_generate, "_work", flaky)
    with pytest.raises(KeyboardInterrupt):
        generate_fleet(specs, tmp_path, fmt="csv", n_jobs=1, progress=False)
    done = pd.read_csv(tmp_path / "faults_details.csv")
    assert len(done) == 2  # labels are written per vehicle, as generated
    calls.clear()
    out = generate_fleet(specs, tmp_path, fmt="csv", n_jobs=1, progress=False)
    assert calls == [specs[2].vin, specs[3].vin]  # only the missing vehicles are generated
    assert [o["rows"] is None for o in out] == [True, True, False, False]
    assert len(pd.read_csv(tmp_path / "faults_details.csv")) == 4
    monkeypatch.setattr(_generate, "_work", real)
    fresh = tmp_path / "fresh"
    generate_fleet(specs, fresh, fmt="csv", n_jobs=1, progress=False)
    for s in specs:  # the resumed fleet is the fleet generated in one go
        rel = f"{s.chemistry}/{s.category}/{s.vin}/{s.vin}_charge_1.csv"
        pd.testing.assert_frame_equal(pd.read_csv(tmp_path / rel), pd.read_csv(fresh / rel))
    with pytest.raises(ValueError, match="another spec"):
        other = make_fleet(4, seed=4, n_cycles=1, pack_designs={"LFP": ((4, 100.0),), "NCM": ((4, 100.0),)})
        generate_fleet(other, tmp_path, fmt="csv", n_jobs=1, progress=False)


def test_written_segments_follow_the_schema(tmp_path):
    spec = VehicleSpec("vin_3", "NCM", "self_discharge", 2, n_cells=5, capacity_ah=100.0, n_cycles=1, seed=1)
    data = simulate_vehicle(spec)
    p = write_vehicle(tmp_path, data, fmt="csv")[0]
    assert list(pd.read_csv(p).columns) == columns(5)


# ---------------------------------------------------------------------------------------------- CLI
def test_cli_generate_and_benchmark(tmp_path, capsys):
    out = tmp_path / "fleet"
    args = ["ch-batterygen", "generate", "--vehicles", "8", "--out", str(out), "--cycles", "1"]
    args += ["--packs", "small", "--chemistries", "LFP", "--jobs", "1", "--no-progress"]
    args += ["--normal-share", "0.5"]
    assert main(args) == 0
    assert "8 vehicles (8 generated now" in capsys.readouterr().out
    assert main(args) == 0  # resumes: nothing left to do
    assert "(0 generated now" in capsys.readouterr().out
    js = tmp_path / "bench.json"
    bench = ["ch-batterygen", "benchmark", str(out), "--models", "RF", "--tasks", "classification"]
    bench += ["--folds", "2", "--jobs", "1", "--no-progress", "--stride", "128", "--json", str(js)]
    bench += ["--chemistries", "LFP", "--scenarios", "discharge"]
    code = main(bench)
    assert code == 0
    text = capsys.readouterr().out
    assert "LFP/discharge" in text and "gap policy: 0 rows interpolated" in text and "LFP/charge" not in text
    import json

    res = json.load(open(js))["results"]
    got = {(r["chemistry"], r["scenario"], r["model"]) for r in res}
    assert got == {("LFP", "discharge", "RF")}
    assert all(0 <= r["interval"][0] <= r["f1"] <= r["interval"][1] <= 1 for r in res)
    assert main(["ch-batterygen", "benchmark", str(tmp_path / "nothing")]) == 2
    assert "root must be an existing folder" in capsys.readouterr().err
    assert main(["ch-batterygen", "benchmark", str(out), "--models", "XGB"]) == 2


def test_benchmark_in_processes_equals_inline_and_per_vehicle_confusions_add_up(tmp_path):
    from iclr26.ch_batterygen import benchmark, f1_from_confusion

    rng = np.random.default_rng(0)
    cats = ("normal", "self_discharge", "high_resistance", "low_capacity")
    for v in range(16):
        f = _frame(160)
        f["VOLT_1"] = f["VOLT_1"] + rng.normal(0, 0.002, len(f)) - 0.01 * (v % 4 == 1)
        f["MIN_CELL_VOLT"] = f[["VOLT_1", "VOLT_2", "VOLT_3"]].min(axis=1)
        _write(tmp_path, "LFP", cats[v % 4], f"vin_{v:02d}", f)
    ds = load_dataset(tmp_path)
    kw = dict(chemistries=("LFP",), scenarios=("discharge",), tasks=("classification",), models=("RF", "CNN"),
              seeds=(0, 1), n_folds=2, window=32, stride=32, max_epochs=2, patience=1)  # fmt: skip
    inline, windows = benchmark(ds, n_jobs=1, **kw)
    forked, _ = benchmark(ds, n_jobs=2, **kw)
    assert [(r.model, r.seed) for r in inline] == [("RF", 0), ("RF", 1), ("CNN", 0), ("CNN", 1)]
    assert len(windows[("LFP", "discharge")]) == 16 * 5
    for a, b in zip(inline, forked):
        assert (a.model, a.seed) == (b.model, b.seed)
        np.testing.assert_array_equal(a.y_pred, b.y_pred)
        vehicles, conf = a.per_vehicle_confusion()
        assert vehicles.shape[0] == 16 and conf.sum() == a.n_windows
        np.testing.assert_array_equal(conf.sum(0), a.confusion())
        assert f1_from_confusion(conf.sum(0)) == pytest.approx(a.f1)


def test_benchmark_resumes_from_its_unit_cache_and_only_on_the_same_settings(tmp_path, monkeypatch):
    from iclr26.ch_batterygen import _benchmark, benchmark

    cats = ("normal", "self_discharge", "high_resistance", "low_capacity")
    for v in range(8):
        f = _frame(160)
        f["VOLT_1"] = f["VOLT_1"] - 0.01 * (v % 4 == 1)
        f["MIN_CELL_VOLT"] = f[["VOLT_1", "VOLT_2", "VOLT_3"]].min(axis=1)
        _write(tmp_path / "data", "LFP", cats[v % 4], f"vin_{v:02d}", f)
    ds = load_dataset(tmp_path / "data")
    kw = dict(chemistries=("LFP",), scenarios=("discharge",), tasks=("classification",), models=("RF", "SVM"),
              seeds=(0,), n_folds=2, window=32, stride=32, n_jobs=1)  # fmt: skip
    kw["unit_cache"] = tmp_path / "units"
    first, _ = benchmark(ds, **kw)
    assert len(list((tmp_path / "units").glob("*.pkl"))) == 2
    ran = []
    real = _benchmark._run_unit
    monkeypatch.setattr(_benchmark, "_run_unit", lambda *a: ran.append(a[0]) or real(*a))
    again, _ = benchmark(ds, **kw)  # everything cached: no job runs
    assert ran == []
    for a, b in zip(first, again):
        assert (a.model, a.seed, a.f1) == (b.model, b.seed, b.f1)
        np.testing.assert_array_equal(a.y_pred, b.y_pred)
    (next((tmp_path / "units").glob("*-SVM-*.pkl"))).unlink()  # an interrupted run: one job missing
    benchmark(ds, **kw)
    assert [r[2] for r in ran] == ["SVM"]
    ran.clear()
    benchmark(ds, **{**kw, "stride": 16})  # other windows: nothing reused
    assert sorted(r[2] for r in ran) == ["RF", "SVM"]

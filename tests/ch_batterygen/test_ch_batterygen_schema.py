"""Release schema, layout and loader round-trip; fleet specs; bad input."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from iclr26.ch_batterygen import (
    BASE_COLUMNS,
    CATEGORIES,
    LayoutWarning,
    VehicleSpec,
    columns,
    generate_fleet,
    load_dataset,
    load_labels,
    make_fleet,
    read_segment,
    segment_channels,
    simulate_vehicle,
    validate_segment,
    write_vehicle,
)
from iclr26.ch_batterygen._schema import parse_segment_filename


def test_columns_follow_release_order():
    assert columns(3) == [*BASE_COLUMNS, "VOLT_1", "VOLT_2", "VOLT_3"]
    assert BASE_COLUMNS[:5] == ("TIME", "CHARGE_STATUS", "SUM_VOLTAGE", "SUM_CURRENT", "SOC")
    assert parse_segment_filename("vin_12_discharge_3.csv") == ("vin_12", "discharge", 3)
    assert parse_segment_filename("vin_12_charge_1.parquet") == ("vin_12", "charge", 1)
    assert parse_segment_filename("notes.txt") is None


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_write_read_round_trip(tmp_path, fmt):
    spec = VehicleSpec(
        "vin_0042", "LFP", "high_resistance", 2, n_cells=8, capacity_ah=150.0, n_cycles=1, seed=5
    )
    data = simulate_vehicle(spec)
    paths = write_vehicle(tmp_path, data, fmt=fmt)
    assert [p.relative_to(tmp_path).as_posix() for p in paths] == [
        f"LFP/high_resistance/vin_0042/vin_0042_discharge_1.{fmt}",
        f"LFP/high_resistance/vin_0042/vin_0042_charge_1.{fmt}",
    ]
    for seg, p in zip(data.segments, paths):
        back = read_segment(p)
        assert list(back.columns) == columns(8)
        pd.testing.assert_frame_equal(back, seg.frame, check_dtype=False)
        # precision as released
        assert np.allclose(back["SUM_VOLTAGE"], back["SUM_VOLTAGE"].round(1))
        assert np.allclose(back["VOLT_3"], back["VOLT_3"].round(3))
        assert (back["SOC"] == back["SOC"].round()).all()


def test_fleet_generation_parallel_and_loader(tmp_path):
    specs = make_fleet(8, seed=1, n_cycles=1, pack_designs={"LFP": ((6, 150.0),), "NCM": ((6, 180.0),)})
    assert {s.chemistry for s in specs} == {"LFP", "NCM"}
    out = generate_fleet(specs, tmp_path, fmt="csv", n_jobs=2, progress=False)
    assert len(out) == 8 and all(o["segments"] == 2 for o in out)
    ds = load_dataset(tmp_path)
    assert len(ds.segments) == 16
    assert set(ds.vehicles.category) <= set(CATEGORIES)
    labels = load_labels(tmp_path)
    assert set(labels.vin) == {s.vin for s in specs}
    faulty = ds.vehicles[ds.vehicles.category != "normal"]
    assert (faulty.severity >= 1).all() and (faulty.fault_cell_id >= 1).all()
    assert (ds.vehicles[ds.vehicles.category == "normal"].severity == 0).all()
    # determinism: the same spec gives the same data regardless of worker scheduling
    again = simulate_vehicle(specs[3])
    ref = [r for r in ds.segments if r.vin == specs[3].vin and r.scenario == "discharge"][0]
    pd.testing.assert_frame_equal(read_segment(ref.path), again.segments[0].frame, check_dtype=False)
    ch = segment_channels(read_segment(ref.path))
    assert ch.shape[1] == 7 and np.isfinite(ch).all()


def test_loader_reads_release_style_csv_without_label_table(tmp_path):
    folder = tmp_path / "NCM" / "self_discharge" / "vin_7"
    folder.mkdir(parents=True)
    frame = pd.DataFrame(
        {
            "TIME": [0, 10, 20],
            "CHARGE_STATUS": [3, 3, 3],
            "SUM_VOLTAGE": [7.4, 7.3, 7.3],
            "SUM_CURRENT": [10.0, 12.0, 11.0],
            "SOC": [50, 50, 49],
            "MAX_CELL_VOLT": [3.70, 3.66, 3.66],
            "MIN_CELL_VOLT": [3.69, 3.64, 3.63],
            "MAX_TEMP": [25, 25, 25],
            "MIN_TEMP": [24, 24, 24],
            "VOLT_1": [3.70, 3.66, 3.66],
            "VOLT_2": [3.69, 3.64, 3.63],
        }
    )
    frame.to_csv(folder / "vin_7_discharge_1.csv", index=False)
    (folder / "readme.txt").write_text("not a segment")
    with pytest.warns(LayoutWarning, match="readme.txt"):
        ds = load_dataset(tmp_path)
    assert len(ds.segments) == 1 and ds.segments[0].scenario == "discharge"
    assert int(ds.vehicles.severity.iloc[0]) == -1  # unknown without the label table


def test_bad_input_raises():
    with pytest.raises(ValueError, match="chemistry"):
        VehicleSpec("v", "NMC")
    with pytest.raises(ValueError, match="severity"):
        VehicleSpec("v", "LFP", "low_capacity", 0)
    with pytest.raises(ValueError, match="missing columns"):
        validate_segment(pd.DataFrame({"TIME": [0]}))
    with pytest.raises(ValueError, match="n_vehicles"):
        make_fleet(0)
    with pytest.raises(ValueError, match="root"):
        load_dataset("/nonexistent/ch-batterygen")

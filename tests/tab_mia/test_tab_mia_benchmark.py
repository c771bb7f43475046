import csv
import json

import numpy as np
import pandas as pd
import pytest

from iclr26.tab_mia import (
    ENCODINGS,
    cart_synthesize,
    load_tab_mia,
    make_benchmark,
    make_benchmark_from_tables,
    make_synthetic_benchmark,
)
from iclr26.tab_mia.data import adult_table, numeric_table, short_tables


@pytest.fixture(scope="module")
def adult():
    return adult_table()


def test_adult_schema(adult):
    assert adult.shape == (48842, 15)
    assert list(adult.columns)[:4] == ["age", "workclass", "fnlwgt", "education"]
    assert set(adult["income"]) == {"<=50K", ">50K"}
    assert (adult["workclass"] == "?").sum() > 0


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("source", ["adult", "numeric"])
def test_long_context_matches_authors(authors, adult, tmp_path, encoding, source):
    table = adult.iloc[:61] if source == "adult" else numeric_table().iloc[:45]
    path = tmp_path / "t.csv"
    table.to_csv(path, index=False)
    for chunk_size, seed in ((2, 42), (7, 3)):
        mem, non, _ = authors.process.chunk_csv_to_text(
            str(path), chunk_size=chunk_size, seed=seed, table_encoding=encoding
        )
        ours = make_benchmark(str(path), chunk_size, encoding, seed=seed)
        assert ours.loc[ours.label == 1, "input"].tolist() == mem["text"].tolist()
        assert ours.loc[ours.label == 0, "input"].tolist() == non["text"].tolist()


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_real_vs_synthetic_matches_authors(authors, adult, tmp_path, encoding):
    """The authors' ``chunk_csv_with_synthetic_data`` (``main_syn.py``): chunks in file order, real =
    members, the longer side cut; here 21 real rows against 17 synthetic ones."""
    real, synthetic = tmp_path / "real.csv", tmp_path / "syn.csv"
    adult.iloc[:21].to_csv(real, index=False)
    cart_synthesize(adult.iloc[:500], 17, seed=1).to_csv(synthetic, index=False)
    for chunk_size in (2, 5):
        mem, non, _ = authors.process.chunk_csv_with_synthetic_data(
            str(real), str(synthetic), chunk_size=chunk_size, table_encoding=encoding
        )
        ours = make_synthetic_benchmark(real, synthetic, chunk_size, encoding)
        assert ours.loc[ours.label == 1, "input"].tolist() == mem["text"].tolist()
        assert ours.loc[ours.label == 0, "input"].tolist() == non["text"].tolist()
        assert ours.label.tolist() == [1] * len(mem) + [0] * len(non)


def test_cart_synthesize_draws_real_values_and_keeps_dependencies(adult):
    real = adult.iloc[:3000]
    a, b = cart_synthesize(real, 400, seed=3), cart_synthesize(real, 400, seed=3)
    pd.testing.assert_frame_equal(a, b)
    assert not a.equals(cart_synthesize(real, 400, seed=4))
    assert list(a.columns) == list(real.columns) and (a.dtypes == real.dtypes).all() and len(a) == 400
    for col in real.columns:
        assert set(a[col]) <= set(real[col]), col
    # educational-num is a function of education in Adult: the trees keep it
    edu = real.groupby("education")["educational-num"].first()
    assert (a["education"].map(edu) == a["educational-num"]).all()
    # and the joint distribution is not the product of the marginals: income follows education
    rich = a.groupby(a["educational-num"] >= 13)["income"].apply(lambda s: (s == ">50K").mean())
    assert rich[True] > rich[False] + 0.15


def test_real_vs_synthetic_bad_input(adult):
    real = adult.iloc[:10]
    with pytest.raises(ValueError, match="columns"):
        make_synthetic_benchmark(real, real.drop(columns=["age"]), 2, "json")
    with pytest.raises(ValueError, match="encoding"):
        make_synthetic_benchmark(real, real, 2, "yaml")
    with pytest.raises(ValueError, match="synthetic"):
        make_synthetic_benchmark(real, real.iloc[:0], 2, "json")
    bad = pd.DataFrame({"x": ["a,b", "ok"], "y": [1, 2]})
    with pytest.raises(ValueError, match="synthetic: chunk 0"):
        make_synthetic_benchmark(bad.iloc[1:], bad, 1, "json")
    with pytest.raises(ValueError, match="n_rows"):
        cart_synthesize(real, 0)
    with pytest.raises(ValueError, match="table"):
        cart_synthesize(real.iloc[:0], 5)
    for bad in (np.nan, np.inf, -np.inf):  # sklearn's trees would refuse inf without naming the column
        with pytest.raises(ValueError, match="'y' has missing values or infinities"):
            cart_synthesize(pd.DataFrame({"x": ["a", "b"], "y": [1.0, bad]}), 5)
    one = cart_synthesize(pd.DataFrame({"x": ["a"], "y": [2]}), 3)  # one row, constant columns
    assert one.x.tolist() == ["a"] * 3 and one.y.tolist() == [2] * 3


def test_long_context_from_dataframe_equals_csv(adult, tmp_path):
    path = tmp_path / "t.csv"
    adult.iloc[:20].to_csv(path, index=False)
    a = make_benchmark(adult.iloc[:20], 3, "markdown")
    b = make_benchmark(path, 3, "markdown")
    pd.testing.assert_frame_equal(a, b)
    assert a.label.tolist() == [1] * 3 + [0] * 4  # 7 chunks: 3 members, 4 non-members


def test_numeric_rows_print_as_floats_like_iterrows():
    out = make_benchmark(pd.DataFrame({"a": [1, 2], "b": [0.5, 1.5]}), 1, "key-value-pair", seed=0)
    assert set(out.input) == {"a: 1.0 | b: 0.5", "a: 2.0 | b: 1.5"}


def test_short_context_matches_authors(authors, tmp_path, monkeypatch):
    tables = short_tables(30, seed=1)
    tables += tables[:4]  # duplicates are dropped
    records = [
        {"table": {"header": list(t.columns), "rows": t.to_numpy().tolist()}, "question": "q"} for t in tables
    ]
    dp = authors.prep
    monkeypatch.setattr(dp, "load_data_from_datasets", lambda mode, split: records)
    for encoding in ENCODINGS:
        mem_path, non_path, _ = dp.load_data_unique_tables(
            "X", output_dir=str(tmp_path), seed=7, table_encoding=encoding
        )
        theirs = []
        for p in (mem_path, non_path):
            with open(p, encoding="utf-8") as f:
                theirs.append([row["text"] for row in csv.DictReader(f)])
        frames = [pd.DataFrame(r["table"]["rows"], columns=r["table"]["header"]) for r in records]
        ours = make_benchmark_from_tables(frames, encoding, seed=7)
        assert ours.loc[ours.label == 1, "input"].tolist() == theirs[0]
        assert ours.loc[ours.label == 0, "input"].tolist() == theirs[1]
        assert len(ours) == len(set(t.to_csv(index=False) for t in tables))


def test_seed_changes_split_only(adult):
    a = make_benchmark(adult.iloc[:40], 2, "json", seed=1)
    b = make_benchmark(adult.iloc[:40], 2, "json", seed=2)
    assert sorted(a.input) == sorted(b.input) and a.input.tolist() != b.input.tolist()


def test_load_tab_mia(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text("\n".join(json.dumps({"input": f"t{i}", "label": i % 2}) for i in range(4)) + "\n")
    df = load_tab_mia(path)
    assert df.input.tolist() == ["t0", "t1", "t2", "t3"] and df.label.tolist() == [0, 1, 0, 1]
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"input": "x"}) + "\n")
    with pytest.raises(ValueError, match="path"):
        load_tab_mia(bad)
    bad.write_text(json.dumps({"input": "x", "label": 2}) + "\n")
    with pytest.raises(ValueError, match="label"):
        load_tab_mia(bad)
    with pytest.raises(ValueError, match="path"):
        load_tab_mia(tmp_path / "none.jsonl")


def test_bad_input(adult):
    t = adult.iloc[:10]
    with pytest.raises(ValueError, match="encoding"):
        make_benchmark(t, 2, "yaml")
    with pytest.raises(ValueError, match="chunk_size"):
        make_benchmark(t, 0, "json")
    with pytest.raises(ValueError, match="table"):
        make_benchmark(t.iloc[:0], 2, "json")
    for value in ("a,b", "k: v"):
        bad = pd.DataFrame({"x": [value, "ok"], "y": [1, 2]})
        with pytest.raises(ValueError, match="table"):
            make_benchmark(bad, 1, "json")
        assert len(make_benchmark(bad, 1, "key-value-pair")) == 2  # no round trip, nothing lost
    with pytest.raises(ValueError, match="tables"):
        make_benchmark_from_tables([t], "json")
    with pytest.raises(ValueError, match=r"tables\[1\]"):
        make_benchmark_from_tables([t, t.iloc[:0]], "json")
    with pytest.raises(ValueError, match="encoding"):
        make_benchmark_from_tables([t, t], "csv")
    # one chunk, or one distinct table: the first half (the members) was empty, one class only
    with pytest.raises(ValueError, match="chunk_size"):
        make_benchmark(t, 10, "json")
    with pytest.raises(ValueError, match="2 distinct tables"):
        make_benchmark_from_tables([t, t.copy()], "json")
    assert make_benchmark(t, 5, "json").label.tolist() == [1, 0]


def test_short_tables_are_small_and_seeded():
    a, b = short_tables(10, seed=3), short_tables(10, seed=3)
    assert all(x.equals(y) for x, y in zip(a, b))
    assert all(1 <= len(x) <= 6 and 2 <= x.shape[1] <= 5 for x in a)
    assert np.isfinite(numeric_table().to_numpy()).all()

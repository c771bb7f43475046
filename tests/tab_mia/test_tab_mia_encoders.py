import json
import warnings

import numpy as np
import pandas as pd
import pytest
from tables import random_csv

from iclr26.tab_mia import ENCODINGS, encode_table

TABLES = [random_csv(s) for s in range(40)]
AUTHOR_ENCODINGS = [e for e in ENCODINGS if e != "line-sep"]


@pytest.mark.filterwarnings("ignore:table.*more cells:UserWarning")  # ragged tables: json warns
@pytest.mark.parametrize("encoding", AUTHOR_ENCODINGS)
def test_byte_identical_to_authors(authors, encoding):
    for text in TABLES:
        assert encode_table(text, encoding) == authors.encoder.encode_line_sep_table(text, encoding), text


def test_authors_docstring_example(authors):
    text = "Name,Age, Occupation\n    Alice,30,Engineer\n    Bob,25\n    Charlie,35,Teacher"
    for encoding in AUTHOR_ENCODINGS:
        assert encode_table(text, encoding) == authors.encoder.encode_line_sep_table(text, encoding)


def test_markdown_alignment_rule():
    md = encode_table("a,b\n1,x\n22,yy\nz,3", "markdown").splitlines()
    # column a: 2 of 3 data cells numeric >= 3 // 2 -> right-aligned; b: 1 of 3 >= 1 -> right-aligned too
    assert md[0] == "| a   | b   |"
    assert md[1] == "| --- | --- |"
    assert md[2] == "|   1 |   x |"
    md = encode_table("a,b\nx,1\ny,2\nz,w\nq,r", "markdown").splitlines()
    assert md[2] == "| x   |   1 |"  # a: 0 numeric < 2 -> left; b: 2 >= 2 -> right


def test_json_and_html_shapes():
    text = "k,v\n1, two \n3"
    assert json.loads(encode_table(text, "json")) == [{"k": "1", "v": "two"}, {"k": "3", "v": ""}]
    assert json.loads(encode_table(text, "json")) == json.loads(encode_table(text, "json"))
    assert encode_table(text, "json").startswith("[\n    {\n        ")
    html = encode_table(text, "html")
    assert html.splitlines()[:3] == ["<table>", "  <tr>", "    <td>k</td>"]
    assert html.endswith("</table>") and html.count("<tr>") == 3


def test_pairs():
    # raw header (" b"), stripped value
    assert encode_table("a, b\n1, 2", "key-value-pair") == "a: 1 |  b: 2"
    assert encode_table("a,b\n1,2\n3", "key-is-value") == "a is 1, b is 2.\na is 3."


def test_dataframe_and_path_inputs(tmp_path):
    df = pd.DataFrame({"x": [1, 2], "name": ["ä", "b"]})
    path = tmp_path / "t.csv"
    df.to_csv(path, index=False)
    for encoding in ENCODINGS:
        assert encode_table(df, encoding) == encode_table(str(path), encoding) == encode_table(path, encoding)
    assert encode_table(df, "line-sep") == "x,name\n1,ä\n2,b\n"


def test_bad_input(tmp_path):
    with pytest.raises(ValueError, match="encoding"):
        encode_table("a\n1", "xml")
    with pytest.raises(ValueError, match="table"):
        encode_table("a,b", "json")
    with pytest.raises(ValueError, match="table"):
        encode_table(pd.DataFrame({"a": []}), "json")
    with pytest.raises(ValueError, match="table"):
        encode_table(str(tmp_path / "missing.csv"), "json")
    with pytest.raises(ValueError, match="table"):
        encode_table(np.zeros((2, 2)), "json")


def test_json_warns_where_the_authors_encoding_loses_cells():
    """Their records keep the last of repeated column names and drop cells past the header: the text
    stays theirs, and the loss is warned about."""
    repeated = pd.DataFrame([[1, 2]], columns=["a", "a"])
    with pytest.warns(UserWarning, match=r"repeated column names \['a'\]"):
        assert json.loads(encode_table(repeated, "json")) == [{"a": "2"}]
    with pytest.warns(UserWarning, match="1 row.*more cells than the 2 columns"):
        records = json.loads(encode_table("a,b\n1,2,3\n4,5\n", "json"))
    assert records == [{"a": "1", "b": "2"}, {"a": "4", "b": "5"}]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        encode_table(repeated, "key-value-pair")  # every cell is kept there

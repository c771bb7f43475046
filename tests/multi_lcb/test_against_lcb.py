"""Agreement with LiveCodeBench's own functions on generated cases.

Set ``ICLR26_LCB_DIR`` to a checkout of LiveCodeBench (the folder holding ``lcb_runner/``); without it
these tests skip. Nothing of LiveCodeBench is vendored.
"""

import importlib.util
import os
import sys
from pathlib import Path

import numpy as np
import pytest

from iclr26.multi_lcb import extract_code, grade_stdio, pass_at_k

LCB = os.environ.get("ICLR26_LCB_DIR")
pytestmark = pytest.mark.skipif(
    not (LCB and (Path(LCB) / "lcb_runner" / "evaluation" / "testing_util.py").is_file()),
    reason="set ICLR26_LCB_DIR to a LiveCodeBench checkout to compare with lcb_runner",
)
N_CASES = 250


def _load(rel: str):
    spec = importlib.util.spec_from_file_location(f"_lcb_{Path(rel).stem}", Path(LCB) / rel)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _tokens(rng):
    pool = [
        "1",
        "1.0",
        "01",
        "-0",
        "0.0",
        "2",
        "1e3",
        "1000",
        "3.14",
        "3.140",
        "inf",
        "Infinity",
        "nan",
        "yes",
        "YES",
        "abc",
        "a b",
        "-5",
        "50000000000000000",
        "50000000000000001",
        "0.1",
        ".1",
    ]
    return [pool[i] for i in rng.integers(0, len(pool), rng.integers(0, 4))]


def _text(rng):
    lines = []
    for _ in range(rng.integers(0, 4)):
        sep = [" ", "  ", "\t"][rng.integers(0, 3)]
        pad = ["", " ", "\t", "\r"][rng.integers(0, 4)]
        lines.append(pad + sep.join(_tokens(rng)) + pad)
    return "\n".join(lines) + ["", "\n", "\n\n", " \n"][rng.integers(0, 4)]


def test_grade_stdio_equals_lcb():
    tu = _load("lcb_runner/evaluation/testing_util.py")
    rng = np.random.default_rng(1)
    n_pass = 0
    for _ in range(N_CASES):
        expected = _text(rng)
        prediction = expected if rng.random() < 0.3 else _text(rng)
        if rng.random() < 0.3:  # perturb spacing/number format of the expected output
            prediction = expected.replace("1.0", "1").replace(" ", "  ")
        code = f"import sys\nsys.stdout.write({prediction!r})\n"
        results, _ = tu.grade_stdio(code, ["\n"], [expected], 6)
        theirs = results == [True]
        ours, _ = grade_stdio(prediction, expected)
        assert ours == theirs, (prediction, expected)
        n_pass += ours
    assert 0.1 * N_CASES < n_pass < 0.9 * N_CASES  # both outcomes are exercised


def test_extract_code_equals_lcb():
    sys.path.insert(0, LCB)
    try:
        from lcb_runner.lm_styles import LMStyle
        from lcb_runner.utils.extraction_utils import extract_code as lcb_extract
    finally:
        sys.path.remove(LCB)
    rng = np.random.default_rng(2)
    parts = [
        "Here is the code:",
        "```",
        "```python",
        "```cpp",
        "print(1)",
        "int main() {}",
        "x = '```'",
        "",
        "Explanation.",
        "    indented",
        "```\n",
    ]
    nonempty = 0
    for _ in range(N_CASES):
        text = "\n".join(parts[i] for i in rng.integers(0, len(parts), rng.integers(0, 9)))
        theirs = lcb_extract(text, LMStyle.OpenAIChat)
        assert extract_code(text) == theirs, text
        nonempty += bool(theirs)
    assert nonempty > 0.1 * N_CASES


def test_pass_at_k_equals_lcb():
    pk = _load("lcb_runner/evaluation/pass_k_utils.py")
    rng = np.random.default_rng(3)
    for _ in range(N_CASES):
        n = int(rng.integers(1, 30))
        c = int(rng.integers(0, n + 1))
        k = int(rng.integers(1, n + 1))
        assert pass_at_k(n, c, k) == pytest.approx(pk.estimate_pass_at_k(n, [c], k)[0], abs=1e-12)
    ns = rng.integers(5, 20, 50)
    cs = [int(rng.integers(0, n + 1)) for n in ns]
    np.testing.assert_allclose(pass_at_k(ns, cs, 5), pk.estimate_pass_at_k(ns, cs, 5))

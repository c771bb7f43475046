"""Behaviour of the sandbox beyond the hostile cases: languages, batches, limits, modes, bad input."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import iclr26.sandbox._sandbox as sandbox_module
from iclr26.sandbox import (
    LANGUAGES,
    STATUSES,
    Job,
    MiB,
    Sandbox,
    SandboxUnavailable,
    get_language,
    outputs_match,
    run,
    run_batch,
)
from iclr26.sandbox._toolchains import missing_programs

A_PLUS_B = {
    "python": "print(sum(map(int, input().split())))",
    "c": '#include <stdio.h>\nint main(){long a,b;scanf("%ld %ld",&a,&b);printf("%ld\\n",a+b);}',
    "cpp": '#include <iostream>\nint main(){long a,b;std::cin>>a>>b;std::cout<<a+b<<"\\n";}',
    "java": "import java.util.*;\npublic class Main{public static void main(String[] x){"
    "Scanner s=new Scanner(System.in);System.out.println(s.nextLong()+s.nextLong());}}",
    "csharp": "using System;class P{static void Main(){var t=Console.ReadLine().Split();"
    "Console.WriteLine(long.Parse(t[0])+long.Parse(t[1]));}}",
    "javascript": 'const t=require("fs").readFileSync(0,"utf8").trim().split(/\\s+/).map(Number);'
    "console.log(t[0]+t[1]);",
    "typescript": "declare var require: any;\n"
    'const t: number[] = require("fs").readFileSync(0,"utf8").trim().split(/\\s+/).map(Number);\n'
    "console.log(t[0]+t[1]);",
    "go": 'package main\nimport "fmt"\nfunc main(){var a,b int64;fmt.Scan(&a,&b);fmt.Println(a+b)}',
    "rust": "use std::io::*;\nfn main(){let mut s=String::new();stdin().read_to_string(&mut s).unwrap();"
    'let v:Vec<i64>=s.split_whitespace().map(|x|x.parse().unwrap()).collect();println!("{}",v[0]+v[1]);}',
    "ruby": "a,b=gets.split.map(&:to_i);puts a+b",
    "php": '<?php\n[$a,$b]=array_map("intval",explode(" ",trim(fgets(STDIN))));echo $a+$b,"\\n";',
    "kotlin": 'fun main(){val (a,b)=readLine()!!.split(" ").map{it.toLong()};println(a+b)}',
    "scala": "object Main{def main(args:Array[String]):Unit={"
    'val t=scala.io.StdIn.readLine().split(" ").map(_.toLong);println(t(0)+t(1))}}',
}


def test_every_language_has_an_a_plus_b_program():
    assert set(A_PLUS_B) == set(LANGUAGES)
    assert len(LANGUAGES) == 13


@pytest.mark.parametrize("lang", sorted(A_PLUS_B))
def test_each_language_compiles_once_and_runs(need, lang):
    need(lang)
    # JVM compilers are slow to start on a loaded 2-core machine: the run limit is generous here.
    with Sandbox(time_limit=10.0, memory_limit=512 * MiB) as sb:
        prog = sb.compile(A_PLUS_B[lang], lang)
        assert prog.ok, prog.compile.stderr
        results = sb.run_many([Job(A_PLUS_B[lang], lang, f"{a} {b}\n") for a, b in [(20, 22), (-5, 3)]])
    assert [r.status for r in results] == ["ok", "ok"], [r.stderr for r in results]
    assert [r.stdout.strip() for r in results] == ["42", "-2"]
    assert all(r.compile is prog.compile for r in results)  # compiled once, reused
    mech = results[0].memory_mechanism
    assert mech.startswith("cgroup") or mech == (
        "rlimit-as" if LANGUAGES[lang].memory == "rlimit-as" else "runtime-flags+rlimit-data"
    )


@pytest.mark.parametrize("lang", ["java", "javascript", "go"])
def test_runtimes_that_reserve_address_space_run_without_a_cgroup(need, lang):
    need(lang)
    with Sandbox(time_limit=10.0, memory_limit=256 * MiB, use_cgroup=False) as sb:
        r = sb.run(A_PLUS_B[lang], lang, "1 2\n")
    assert r.status == "ok", r.stderr
    assert r.stdout.strip() == "3"
    assert r.memory_mechanism == "runtime-flags+rlimit-data"


def test_rlimit_memory_path_reports_memory_for_python(need):
    need("python")
    with Sandbox(time_limit=3.0, memory_limit=128 * MiB, use_cgroup=False) as sb:
        r = sb.run("x = bytearray(10 * 1024**3)", "python")
    assert r.memory_mechanism == "rlimit-as"
    assert r.status == "memory" and "MemoryError" in r.stderr


def test_rlimit_memory_path_makes_malloc_fail_in_c(need):
    need("c")
    src = "#include <stdlib.h>\nint main(void){char*volatile p=malloc(10UL<<30);return p ? 0 : 3;}"
    r = run(src, "c", memory_limit=128 * MiB, use_cgroup=False)
    assert (r.memory_mechanism, r.status, r.exit_code) == ("rlimit-as", "runtime_error", 3)


def test_run_function_stdin_files_and_a_fresh_working_directory(need):
    need("python")
    src = (
        "import os, sys\nprint(sys.stdin.read().upper(), end='')\nprint(open('data.txt').read())\n"
        "print(sorted(os.listdir('.')))\nprint(sorted(os.environ))\nopen('left-behind', 'w').write('x')\n"
        "print(os.getcwd())\n"
    )
    r = run(src, "python", "hello\n", files={"data.txt": "payload", "b.bin": b"\x00\x01"})
    assert r.status == "ok", r
    lines = r.stdout.splitlines()
    assert lines[0] == "HELLO" and lines[1] == "payload"
    assert lines[2] == "['b.bin', 'data.txt']"
    assert lines[3] == "['HOME', 'LANG', 'LC_ALL', 'PATH', 'TMPDIR']"
    assert not Path(lines[4]).exists()  # the working directory was removed
    assert r.exit_code == 0 and r.signal is None and r.wall_time > 0 and r.peak_memory > 0
    assert r.network_isolated and r.isolation


def test_exit_code_and_stderr(need):
    need("python")
    r = run("import sys\nprint('out')\nsys.stderr.write('err')\nsys.exit(7)", "python")
    assert (r.status, r.exit_code, r.stdout, r.stderr) == ("runtime_error", 7, "out\n", "err")


def test_large_stdin_is_fed_without_deadlock(need):
    need("c")
    data = "1\n" * 2_000_000  # 4 MB, larger than any pipe buffer
    src = '#include <stdio.h>\nint main(){long s=0,x;while(scanf("%ld",&x)==1)s+=x;printf("%ld\\n",s);}'
    r = run(src, "c", data, time_limit=5.0)
    assert r.status == "ok" and r.stdout.strip() == "2000000"


def test_program_that_closes_stdin_early_is_fine(need):
    need("python")
    r = run("print('bye')", "python", "x" * 5_000_000)
    assert r.status == "ok" and r.stdout == "bye\n"


def test_background_child_is_killed_when_the_program_exits(need):
    need("python")
    src = "import os, time\nif os.fork() == 0:\n    os.setsid()\n    time.sleep(30)\nprint('parent done')\n"
    r = run(src, "python", time_limit=5.0)
    assert r.status == "ok" and r.stdout == "parent done\n"
    assert r.wall_time < 3.0


def test_run_batch_compiles_each_program_once(need):
    need("cpp")
    src = A_PLUS_B["cpp"]
    jobs = [(src, "cpp", f"{i} {i}\n") for i in range(6)] + [("print(input())", "python", "z\n")]
    results = run_batch(jobs, workers=2)
    assert [r.stdout.strip() for r in results] == [str(2 * i) for i in range(6)] + ["z"]
    assert len({id(r.compile) for r in results[:6]}) == 1
    assert outputs_match(results[3].stdout, "6")


def test_self_inflicted_sigkill_is_killed_and_a_big_file_is_output_limit(need):
    need("python")
    with Sandbox(file_size_limit=1 * MiB) as sb:
        r = sb.run("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)", "python")
        assert (r.status, r.signal) == ("killed", 9)
        r = sb.run("open('big', 'wb').write(b'x' * (2 << 20))", "python")  # Python ignores SIGXFSZ: EFBIG
        assert r.status == "output_limit" and "File too large" in r.stderr
    if not missing_programs(get_language("c")):
        r = run(
            '#include <stdio.h>\nint main(){FILE*f=fopen("big","w");for(int i=0;i<1<<22;i++)fputc(1,f);}',
            "c",
            file_size_limit=MiB,
        )
        assert r.status == "output_limit" and r.signal == 25  # SIGXFSZ


def test_bad_worker_count(need):
    need("python")
    with Sandbox() as sb, pytest.raises(ValueError, match="workers"):
        sb.run_many([("print(1)", "python")], workers=0)


def test_statuses_are_the_documented_ones():
    assert STATUSES == ("ok", "compile_error", "runtime_error", "timeout", "memory", "output_limit", "killed")


def test_refuses_without_network_isolation_unless_allowed(monkeypatch, need):
    need("python")
    monkeypatch.setattr(sandbox_module, "_network_mode", lambda: ("none", "test: no namespaces, no bwrap"))
    with pytest.raises(SandboxUnavailable, match="allow_network_isolation_fallback"):
        Sandbox()
    with Sandbox(allow_network_isolation_fallback=True) as sb:
        r = sb.run("print('hi')", "python")
    assert r.status == "ok" and r.network_isolated is False and "NO network isolation" in r.isolation


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (Debian package bubblewrap) absent")
def test_bubblewrap_mode_blocks_network_and_writes(need, tmp_path):
    need("python")
    import socket

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    target = tmp_path / "escaped"
    tmp_path.chmod(0o777)
    src = (
        f"import socket\ntry:\n    socket.create_connection(('127.0.0.1', {port}), 1); print('CONNECTED')\n"
        f"except OSError:\n    print('refused')\ntry:\n    open({str(target)!r}, 'w'); print('WROTE')\n"
        "except OSError:\n    print('read-only')\n"
    )
    try:
        with Sandbox(network_isolation="bubblewrap") as sb:
            r = sb.run(src, "python")
    finally:
        server.close()
    assert r.status == "ok", r
    assert r.stdout.split() == ["refused", "read-only"] and not target.exists()
    assert r.isolation.startswith("bubblewrap")


@pytest.mark.skipif(os.getuid() != 0 or shutil.which("setpriv") is None, reason="needs root and setpriv")
def test_works_for_an_unprivileged_user(need):
    """The test suite runs as root here; this runs the sandbox itself as uid 65534 (user namespaces)."""
    need("python")
    src_dir = Path(__file__).resolve().parents[2] / "src"
    script = (
        "from iclr26.sandbox import run, isolation_report\n"
        "print(isolation_report()['network_isolation'])\n"
        "r = run(\"import socket\\ntry:\\n socket.create_connection(('127.0.0.1', 9), 1)\\n"
        "except OSError: print('refused')\\ntry:\\n open('/tmp/iclr26-nonroot-escape', 'w')\\n"
        "except OSError: print('read-only')\", 'python')\n"
        "print(r.status, r.stdout.split(), r.memory_mechanism)\n"
        "print(run('while True: pass', 'python', time_limit=0.5).status)\n"
        "import os\n"
        "r = run(f'import os, signal\\nfor p in (os.getppid(), {os.getpid()}):\\n'\n"
        "        '    try:\\n        os.kill(p, signal.SIGKILL); print(\"sent\", p)\\n'\n"
        "        '    except OSError as e:\\n        print(\"refused\", e.errno)\\n', 'python')\n"
        "print('caller alive', r.stdout.split())\n"
        "from iclr26.sandbox import Sandbox\n"
        "print('warm workers', Sandbox(warm_workers=True).warm_workers)\n"
    )
    python = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
    out = subprocess.run(
        ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", python, "-c", script],
        env={"PYTHONPATH": str(src_dir), "PATH": "/usr/bin:/bin"},
        cwd="/",
        capture_output=True,
        text=True,
        timeout=60,
    )
    unreadable = ("Permission denied", "No module named 'iclr26'")
    if out.returncode != 0 and any(m in out.stderr for m in unreadable):
        pytest.skip(f"the source tree is not readable by uid 65534: {out.stderr[-200:]}")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "namespace"
    assert lines[1].startswith("ok ['refused', 'read-only']")
    assert lines[2] == "timeout"
    # its own (pid namespace) init ignores SIGKILL from inside; the caller is unreachable (ESRCH = 3)
    assert lines[3] == "caller alive ['sent', '1', 'refused', '3']"
    assert lines[4] == "warm workers False"  # a run's uid could not differ from the worker's
    assert not os.path.exists("/tmp/iclr26-nonroot-escape")


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (dict(time_limit=0), "time_limit"),
        (dict(time_limit=float("inf")), "time_limit"),
        (dict(memory_limit=1.5), "memory_limit"),
        (dict(memory_limit=-1), "memory_limit"),
        (dict(memory_limit=10**400), "memory_limit"),
        (dict(time_limit=10**400), "time_limit"),
        (dict(native_launcher=None), "native_launcher"),
        (dict(output_limit=True), "output_limit"),
        (dict(processes_limit=0), "processes_limit"),
        (dict(use_cgroup="yes"), "use_cgroup"),
        (dict(network_isolation="vm"), "network_isolation"),
    ],
)
def test_bad_sandbox_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Sandbox(**kwargs)


def test_bad_run_arguments(need):
    need("python")
    with Sandbox() as sb:
        with pytest.raises(ValueError, match="language"):
            sb.run("print(1)", "brainfuck")
        with pytest.raises(ValueError, match="language is required"):
            sb.run("print(1)")
        with pytest.raises(ValueError, match="stdin"):
            sb.run("print(1)", "python", 42)
        with pytest.raises(ValueError, match="source"):
            sb.run(None, "python")
        with pytest.raises(ValueError, match="files"):
            sb.run("print(1)", "python", files={"../x": "y"})
        with pytest.raises(ValueError, match="files"):
            sb.run("print(1)", "python", files=["x"])
        with pytest.raises(ValueError, match="time_limit"):
            sb.run("print(1)", "python", time_limit=-1)
        with pytest.raises(ValueError, match="jobs"):
            sb.run_many([("print(1)",)])


def test_language_aliases():
    assert get_language("C++").name == "cpp"
    assert get_language("py").name == "python"
    assert get_language("js").name == "javascript"


def test_closed_sandbox_removes_its_files(need):
    need("python")
    sb = Sandbox()
    prog = sb.compile("print(1)", "python")
    assert os.path.isdir(prog.build_dir)
    sb.close()
    assert not os.path.exists(prog.build_dir)
    with pytest.raises(ValueError, match="closed"):
        sb.compile("print(2)", "python")


def test_preexec_fallback_confines_like_the_launcher(need, tmp_path, monkeypatch):
    """Without the native launcher (no C compiler) the same confinement comes from ``preexec_fn``."""
    need("python")
    import socket

    monkeypatch.setenv("ICLR26_FAKE_API_KEY", "sk-fake-preexec")
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    tmp_path.chmod(0o777)
    target = tmp_path / "escaped"
    probe = (
        "import os, socket\nprint(os.environ.get('ICLR26_FAKE_API_KEY'))\n"
        f"try:\n    socket.create_connection(('127.0.0.1', {server.getsockname()[1]}), 1)\n"
        "    print('CONNECTED')\n"
        f"except OSError:\n    print('refused')\ntry:\n    open({str(target)!r}, 'w'); print('WROTE')\n"
        "except OSError:\n    print('read-only')\n"
    )
    bomb = "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n"
    try:
        with Sandbox(time_limit=1.0, processes_limit=16, native_launcher=False) as sb:
            assert sb._launcher is None
            r = sb.run(probe, "python")
            assert (r.status, r.stdout.split()) == ("ok", ["None", "refused", "read-only"])
            assert sb.run("while True: pass", "python").status == "timeout"
            assert sb.run(bomb, "python").status == "timeout"
            assert sb.run("import ctypes\nctypes.string_at(0)", "python").signal == 11
    finally:
        server.close()
    assert not target.exists()


@pytest.mark.skipif(
    os.getuid() != 0, reason="needs a binary that root sees as executable and the run's uid not"
)
@pytest.mark.parametrize("native_launcher", [True, False])
def test_a_program_that_cannot_start_raises(need, native_launcher):
    need("c")
    with Sandbox(native_launcher=native_launcher) as sb:
        prog = sb.compile("int main(void){return 0;}", "c")
        os.chmod(os.path.join(prog.build_dir, "main"), 0o700)  # the run's own uid may not execute it
        with pytest.raises(OSError, match="Permission denied|launcher failed"):
            sb.run(prog)


@pytest.mark.parametrize("mode", ["launcher", "preexec", "bubblewrap"])
def test_hidden_paths_are_empty_inside(need, mode):
    need("python")
    if mode == "bubblewrap" and shutil.which("bwrap") is None:
        pytest.skip("bubblewrap (Debian package bubblewrap) absent")
    import tempfile

    secret_dir = Path(tempfile.mkdtemp(prefix="iclr26-test-expected-"))  # beside pytest's 0700 folders
    try:
        secret_dir.chmod(0o755)
        (secret_dir / "answer.txt").write_text("42")
        (secret_dir / "answer.txt").chmod(0o644)  # world-readable: only the hiding protects it
        src = f"import os\nprint(os.listdir({str(secret_dir)!r}))\n"
        kw = dict(native_launcher=mode != "preexec")
        if mode == "bubblewrap":
            kw["network_isolation"] = "bubblewrap"
        with Sandbox(**kw) as sb:
            assert sb.run(src, "python").stdout == "['answer.txt']\n"  # visible without hiding
        with Sandbox(hidden_paths=[str(secret_dir)], **kw) as sb:
            r = sb.run(src, "python")
        assert (r.status, r.stdout) == ("ok", "[]\n")
    finally:
        shutil.rmtree(secret_dir)


def test_bad_hidden_paths():
    with pytest.raises(ValueError, match="hidden_paths"):
        Sandbox(hidden_paths="/etc")
    with pytest.raises(ValueError, match="hidden_paths"):
        Sandbox(hidden_paths=["relative/dir"])
    with pytest.raises(ValueError, match="contains the sandbox"):
        Sandbox(hidden_paths=["/tmp"] if os.path.realpath("/tmp") == "/tmp" else ["/"])


def test_a_class_data_archive_is_not_made_without_its_jars(tmp_path):
    from iclr26.sandbox._class_archive import NO_ARCHIVE, build_class_archive

    assert build_class_archive(("/nonexistent/library.jar",), str(tmp_path), "x") == NO_ARCHIVE
    assert build_class_archive((), str(tmp_path), "x") == NO_ARCHIVE


@pytest.mark.slow
def test_scala_classes_load_from_the_class_data_archive(tmp_path, need):
    """The archive holds scala-library's classes and the JVM maps them with the run command's class
    path (-Xshare:on: the JVM fails instead of ignoring an archive it cannot use)."""
    from iclr26.sandbox._class_archive import build_class_archive

    need("scala")
    lang = get_language("scala")
    option = build_class_archive(lang.class_archive, str(tmp_path), "scala")
    assert option == f"-XX:SharedArchiveFile={tmp_path / 'scala.jsa'}"
    assert lang.run[lang.run.index("-cp") + 1].startswith(":".join(lang.class_archive) + ":")
    probe = tmp_path / "Probe.java"
    probe.write_text(
        "public class Probe { public static void main(String[] a) throws Exception {"
        ' Class.forName("scala.collection.immutable.List"); } }'
    )
    r = subprocess.run(
        [
            "java",
            "-Xshare:on",
            option,
            "-Xlog:class+load=info",
            "-cp",
            ":".join(lang.class_archive),
            str(probe),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    assert "scala.collection.immutable.List source: shared objects file" in r.stdout

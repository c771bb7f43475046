"""Hostile programs, one test per case, in Python and C: each ends with the right status, within limits."""

import os
import socket
import subprocess
import time
import uuid

import pytest

from iclr26.sandbox._isolation import SANDBOX_UID_BASE

LANGS = ["python", "c"]
# seconds of wall clock allowed beyond the limit (start-up, kill, reap on a loaded machine)
SLACK = 1.0
LIMITS = dict(time_limit=1.0, memory_limit=256 << 20, output_limit=1 << 20)  # as in conftest.LIMITS

PROGRAMS = {
    "loop": {"python": "while True:\n    pass\n", "c": "int main(void){for(;;);}\n"},
    "fork": {
        "python": "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n",
        "c": "#include <unistd.h>\nint main(void){for(;;)fork();}\n",
    },
    "alloc": {
        "python": "x = bytearray(10 * 1024**3)\nprint(len(x))\n",
        "c": "#include <stdio.h>\n#include <stdlib.h>\nint main(void){size_t n=10UL<<30;"
        'volatile char*p=malloc(n);if(!p){fputs("malloc failed\\n",stderr);return 3;}'
        'for(size_t i=0;i<n;i+=4096)p[i]=1;printf("%d\\n",p[n-4096]);}\n',
    },
    "print": {
        "python": "import sys\nb = 'x' * (1 << 20)\nfor _ in range(1024):\n    sys.stdout.write(b)\n",
        "c": "#include <stdio.h>\n#include <string.h>\nstatic char b[1<<20];\n"
        "int main(void){memset(b,'x',sizeof b);for(int i=0;i<1024;i++)fwrite(b,1,sizeof b,stdout);}\n",
    },
    "segv": {
        "python": "import ctypes\nctypes.string_at(0)\n",
        "c": "int main(void){volatile int*p=0;return *p;}\n",
    },
    "compile": {"python": "def f(:\n    pass\n", "c": "int main( {\n"},
}


def _live_processes_of(uids: set[int], wait: float = 3.0) -> list[str]:
    """Processes of ``uids`` (root: one fresh uid per run) that are not zombies (init reaps the killed bomb's
    orphans in its own time). Only the test's own runs' uids: other sandbox users on the machine (another
    test session, a benchmark) have uids of the same range."""
    deadline = time.monotonic() + wait  # killed processes may take a moment to finish exiting
    while True:
        r = subprocess.run(["ps", "-e", "-o", "uid=,stat=,pid=,cmd="], capture_output=True, text=True)
        rows = [ln.split(None, 3) for ln in r.stdout.splitlines() if ln.strip()]
        live = [" ".join(x) for x in rows if int(x[0]) in uids and not x[1].startswith("Z")]
        if not live or time.monotonic() > deadline:
            return live
        time.sleep(0.1)


@pytest.fixture
def run_uids(monkeypatch):
    """The uids the sandbox draws for this test's runs (as root)."""
    from iclr26.sandbox import _sandbox

    drawn: set[int] = set()
    draw = _sandbox.fresh_uid

    def recording_fresh_uid() -> int:
        uid = draw()
        drawn.add(uid)
        return uid

    monkeypatch.setattr(_sandbox, "fresh_uid", recording_fresh_uid)
    return drawn


@pytest.mark.parametrize("lang", LANGS)
def test_infinite_loop_times_out(sandbox, need, lang):
    need(lang)
    r = sandbox.run(PROGRAMS["loop"][lang], lang)
    assert r.status == "timeout", r
    assert LIMITS["time_limit"] <= r.wall_time <= LIMITS["time_limit"] + SLACK


@pytest.mark.parametrize("lang", LANGS)
def test_fork_bomb_is_bounded_and_cleaned_up(sandbox, need, run_uids, lang):
    need(lang)
    r = sandbox.run(PROGRAMS["fork"][lang], lang)
    assert r.status == "timeout", r
    assert r.wall_time <= LIMITS["time_limit"] + SLACK
    if os.getuid() == 0:  # every process the bomb made is gone
        assert run_uids and all(uid >= SANDBOX_UID_BASE for uid in run_uids)
        assert _live_processes_of(run_uids) == []


@pytest.mark.parametrize("lang", LANGS)
def test_fork_bomb_without_a_cgroup_is_bounded_by_rlimit_nproc(need, run_uids, lang):
    need(lang)
    from iclr26.sandbox import Sandbox

    with Sandbox(**{**LIMITS, "processes_limit": 16}, use_cgroup=False) as sb:
        r = sb.run(PROGRAMS["fork"][lang], lang)
    assert r.memory_mechanism in ("rlimit-as", "runtime-flags+rlimit-data")
    assert r.status == "timeout", r
    assert r.wall_time <= LIMITS["time_limit"] + SLACK
    if os.getuid() == 0:
        assert run_uids and _live_processes_of(run_uids) == []


@pytest.mark.parametrize("lang", LANGS)
def test_10gb_allocation_hits_the_memory_limit(sandbox, need, lang):
    need(lang)
    # 3 s: touching 256 MiB and the OOM kill take a while on a loaded 2-core machine
    r = sandbox.run(PROGRAMS["alloc"][lang], lang, time_limit=3.0)
    if r.memory_mechanism.startswith("cgroup"):
        assert r.status == "memory", r
        assert r.peak_memory <= LIMITS["memory_limit"] * 1.05
    else:  # RLIMIT_AS: Python raises MemoryError; C's malloc returns NULL and the program exits 3
        assert r.status == ("memory" if lang == "python" else "runtime_error"), r
    assert r.wall_time <= 3.0 + SLACK


@pytest.mark.parametrize("lang", LANGS)
def test_1gb_print_is_cut_at_the_output_limit(sandbox, need, lang):
    need(lang)
    r = sandbox.run(PROGRAMS["print"][lang], lang)
    assert r.status == "output_limit", r
    assert len(r.stdout) + len(r.stderr) <= LIMITS["output_limit"]
    assert r.stdout.startswith("x" * 1000)
    assert r.wall_time <= LIMITS["time_limit"] + SLACK


@pytest.mark.parametrize("lang", LANGS)
def test_segfault_is_a_runtime_error(sandbox, need, lang):
    need(lang)
    r = sandbox.run(PROGRAMS["segv"][lang], lang)
    assert r.status == "runtime_error", r
    assert r.signal == 11


@pytest.mark.parametrize("lang", LANGS)
def test_compile_error(sandbox, need, lang):
    need(lang)
    r = sandbox.run(PROGRAMS["compile"][lang], lang)
    assert r.status == "compile_error", r
    assert r.compile is not None and r.compile.status == "compile_error"
    assert ("SyntaxError" if lang == "python" else "error") in r.stderr


def _targets(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    outside.chmod(0o777)  # only the sandbox stands between the program and this folder
    tag = uuid.uuid4().hex
    return [
        str(outside / "escaped"),
        f"/tmp/iclr26-escape-{tag}",
        f"/var/tmp/iclr26-escape-{tag}",
        f"/dev/shm/iclr26-escape-{tag}",
        f"../escape-{tag}",
    ]


@pytest.mark.parametrize("lang", LANGS)
def test_writing_outside_the_working_directory_fails(sandbox, need, lang, tmp_path):
    need(lang)
    targets = _targets(tmp_path)
    if lang == "python":
        src = f"for p in {targets!r}:\n"
        src += "    try:\n        open(p, 'w').write('x'); print('WROTE', p)\n"
        src += "    except OSError as e:\n        print('refused', p, e.errno)\n"
        src += "open('inside', 'w').write('ok')\nprint(open('inside').read())\n"
    else:
        paths = ",".join(f'"{p}"' for p in targets)
        src = (
            "#include <stdio.h>\nint main(void){const char*t[]={PATHS};\n"
            'for(unsigned i=0;i<sizeof t/sizeof*t;i++){FILE*f=fopen(t[i],"w");'
            'if(f){fputs("x",f);fclose(f);printf("WROTE %s\\n",t[i]);}'
            'else printf("refused %s\\n",t[i]);}'
            'FILE*f=fopen("inside","w");fputs("ok",f);fclose(f);puts("ok");}\n'
        ).replace("PATHS", paths)
    r = sandbox.run(src, lang)
    assert r.status == "ok", r
    assert "WROTE" not in r.stdout
    assert r.stdout.strip().endswith("ok")  # its own working directory is writable
    for p in targets:
        if not p.startswith(".."):
            assert not os.path.exists(p), p
    for own in (sandbox._tmp, sandbox._runs):  # the builds' folder and the runs' folder
        assert not any(name.startswith("escape-") for name in os.listdir(own))


@pytest.mark.parametrize("lang", LANGS)
def test_environment_secret_is_not_inherited(sandbox, need, lang, monkeypatch):
    need(lang)
    secret = "sk-fake-" + uuid.uuid4().hex
    monkeypatch.setenv("ICLR26_FAKE_API_KEY", secret)
    if lang == "python":
        src = (
            "import os\nprint(os.environ.get('ICLR26_FAKE_API_KEY'))\nprint(sorted(os.environ))\n"
            "try:\n    print(open(f'/proc/{os.getppid()}/environ').read())\nexcept OSError as e:\n"
            "    print('no parent environ', e.errno)\n"
        )
    else:
        src = (
            "#include <stdio.h>\n#include <stdlib.h>\nextern char**environ;\nint main(void){"
            'const char*s=getenv("ICLR26_FAKE_API_KEY");puts(s?s:"(null)");'
            "for(char**e=environ;*e;e++)puts(*e);}\n"
        )
    r = sandbox.run(src, lang)
    assert r.status == "ok", r
    assert secret not in r.stdout
    assert "(null)" in r.stdout or "None" in r.stdout


@pytest.mark.parametrize("lang", LANGS)
def test_connecting_to_a_local_listening_socket_fails(sandbox, need, lang):
    need(lang)
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.setblocking(False)
    port = server.getsockname()[1]
    try:
        if lang == "python":
            src = (
                f"import socket\ns = socket.socket()\ntry:\n    s.connect(('127.0.0.1', {port}))\n"
                "    s.sendall(b'leak'); print('CONNECTED')\nexcept OSError as e:\n"
                "    print('refused', e.errno)\n"
            )
        else:
            src = (
                "#include <stdio.h>\n#include <string.h>\n#include <arpa/inet.h>\n#include <sys/socket.h>\n"
                "int main(void){int s=socket(AF_INET,SOCK_STREAM,0);struct sockaddr_in a;"
                "memset(&a,0,sizeof a);a.sin_family=AF_INET;a.sin_port=htons(PORT);"
                "a.sin_addr.s_addr=htonl(0x7f000001);if(connect(s,(struct sockaddr*)&a,sizeof a)==0)"
                'puts("CONNECTED");else puts("refused");}\n'
            ).replace("PORT", str(port))
        r = sandbox.run(src, lang)
        assert r.status == "ok", r
        assert "CONNECTED" not in r.stdout and "refused" in r.stdout
        with pytest.raises(BlockingIOError):
            server.accept()
    finally:
        server.close()

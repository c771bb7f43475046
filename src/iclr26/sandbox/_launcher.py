"""A native launcher that applies the confinement and execs the program.

Python's ``preexec_fn`` forces ``subprocess`` to ``fork`` the whole interpreter (copy-on-write faults on
every page the interpreter then touches); a small C program started with ``vfork`` does the same steps
as :meth:`Confinement.preexec` for a fraction of the cost. It is compiled once per process, into a private
temporary folder, with the C compiler on the sandbox's PATH; without one, the sandbox uses ``preexec_fn``.
"""

from __future__ import annotations

import atexit
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

from ._isolation import SANDBOX_PATH

SOURCE = r"""
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAXN 16
static int errfd = -1;

static void fail(const char *what) {
    int e = errno;
    dprintf(errfd >= 0 ? errfd : 2, "%s: %s", what, strerror(e));
    _exit(126);
}

static void wfile(const char *path, const char *text) {
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0 || write(fd, text, strlen(text)) < 0) fail(path);
    close(fd);
}

struct mattr { uint64_t set, clr, prop, userns; };

static void setattr(const char *path, unsigned flags, uint64_t set, uint64_t clr) {
    struct mattr a = {set, clr, 0, 0};
    if (syscall(442 /* mount_setattr */, AT_FDCWD, path, flags, &a, sizeof a)) fail("mount_setattr");
}

static void close_all_but(int keep) {
    for (int fd = 3; fd < 1024; fd++) if (fd != keep) close(fd);
    if (syscall(436 /* close_range */, 1024, ~0U, 0) && errno != ENOSYS) { /* best effort */ }
}

static void mirror(int status) {
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        struct rlimit z = {0, 0};
        sigset_t set;
        setrlimit(RLIMIT_CORE, &z);
        signal(sig, SIG_DFL);
        sigemptyset(&set);
        sigaddset(&set, sig);
        sigprocmask(SIG_UNBLOCK, &set, NULL);
        kill(getpid(), sig);
        _exit(128 + sig);
    }
    _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
}

/* After unshare(CLONE_NEWPID): an init (pid 1) and the program (pid 2); only the program returns. */
static void enter_pid_namespace(void) {
    int p[2];
    if (pipe(p)) fail("pipe");
    pid_t init = fork();
    if (init < 0) fail("fork");
    if (init > 0) {
        int status = SIGKILL;
        close(p[1]);
        close_all_but(p[0]);
        while (waitpid(init, NULL, 0) < 0 && errno == EINTR) {}
        if (read(p[0], &status, sizeof status) != sizeof status) status = SIGKILL;
        mirror(status);
    }
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    mount("proc", "/proc", "proc", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
    pid_t prog = fork();
    if (prog < 0) fail("fork");
    if (prog > 0) {
        close(p[0]);
        close_all_but(p[1]);
        for (;;) {
            int status;
            pid_t pid = wait(&status);
            if (pid < 0 && errno == EINTR) continue;
            if (pid < 0) _exit(1);
            if (pid == prog) {
                if (write(p[1], &status, sizeof status) < 0) _exit(1);
                _exit(0);
            }
        }
    }
    close(p[0]);
    close(p[1]);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
}

int main(int argc, char **argv) {
    const char *cg[MAXN], *wr[MAXN], *hid[MAXN], *chdir_to = NULL;
    int ncg = 0, nwr = 0, nhid = 0, nrl = 0, ns = 0, cap_last = 40;
    long long rl_res[MAXN], rl_lim[MAXN];
    long run_as = -1, map_uid = -1, map_gid = -1;
    int i = 1;
    for (; i < argc && strcmp(argv[i], "--"); i += 2) {
        if (i + 1 >= argc) { fputs("launcher: option without value\n", stderr); return 126; }
        const char *o = argv[i], *v = argv[i + 1];
        if (!strcmp(o, "-e")) errfd = atoi(v);
        else if (!strcmp(o, "-c") && ncg < MAXN) cg[ncg++] = v;
        else if (!strcmp(o, "-w") && nwr < MAXN) wr[nwr++] = v;
        else if (!strcmp(o, "-h") && nhid < MAXN) hid[nhid++] = v;
        else if (!strcmp(o, "-d")) chdir_to = v;
        else if (!strcmp(o, "-n")) ns = atoi(v);
        else if (!strcmp(o, "-u")) run_as = atol(v);
        else if (!strcmp(o, "-m")) { if (sscanf(v, "%ld:%ld", &map_uid, &map_gid) != 2) return 126; }
        else if (!strcmp(o, "-k")) cap_last = atoi(v);
        else if (!strcmp(o, "-r") && nrl < MAXN) {
            if (sscanf(v, "%lld:%lld", &rl_res[nrl], &rl_lim[nrl]) != 2) return 126;
            nrl++;
        } else { fprintf(stderr, "launcher: bad option %s\n", o); return 126; }
    }
    if (i >= argc - 1) { fputs("launcher: no program\n", stderr); return 126; }
    char **prog = argv + i + 1;
    char pid[32];
    snprintf(pid, sizeof pid, "%d", getpid());
    for (int k = 0; k < ncg; k++) wfile(cg[k], pid);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (ns) {
        int userns = map_uid >= 0;
        int flags = CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | (userns ? CLONE_NEWUSER | CLONE_NEWPID : 0);
        if (unshare(flags)) fail("unshare");
        if (userns) {
            char map[64];
            wfile("/proc/self/setgroups", "deny");
            snprintf(map, sizeof map, "0 %ld 1", map_uid);
            wfile("/proc/self/uid_map", map);
            snprintf(map, sizeof map, "0 %ld 1", map_gid);
            wfile("/proc/self/gid_map", map);
        }
        if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL)) fail("mount --make-rprivate /");
        for (int k = 0; k < nhid; k++)
            if (mount("tmpfs", hid[k], "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                      "mode=0555,size=4k"))
                fail("hide (tmpfs)");
        for (int k = 0; k < nwr; k++)
            if (mount(wr[k], wr[k], NULL, MS_BIND | MS_REC, NULL)) fail("bind mount");
        setattr("/", 0x8000 /* AT_RECURSIVE */, 0x1 | 0x2 /* RDONLY | NOSUID */, 0);
        for (int k = 0; k < nwr; k++) setattr(wr[k], 0x8000, 0, 0x1);
        if (userns) {
            enter_pid_namespace();
            for (int c = 0; c <= cap_last; c++) prctl(PR_CAPBSET_DROP, c, 0, 0, 0);
        }
    }
    if (chdir_to && chdir(chdir_to)) fail("chdir");
    for (int k = 0; k < nrl; k++) {
        struct rlimit r = {(rlim_t)rl_lim[k], (rlim_t)rl_lim[k] + (rl_res[k] == RLIMIT_CPU ? 1 : 0)};
        if (setrlimit((int)rl_res[k], &r)) fail("setrlimit");
    }
    umask(022);
    if (run_as >= 0) {
        if (setgroups(0, NULL) || setresgid(run_as, run_as, run_as) || setresuid(run_as, run_as, run_as))
            fail("setuid");
    }
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) fail("prctl(NO_NEW_PRIVS)");
    if (errfd >= 0) fcntl(errfd, F_SETFD, FD_CLOEXEC);
    execvp(prog[0], prog);
    fail(prog[0]);
    return 126;
}
"""

_lock = threading.Lock()
_built: dict[str, str | None] = {}


def launcher_path() -> str | None:
    """The compiled launcher (built on first call), or None when no C compiler can build it here."""
    with _lock:
        if "path" not in _built:
            _built["path"] = _build()
        return _built["path"]


def _build() -> str | None:
    cc = shutil.which("cc", path=SANDBOX_PATH) or shutil.which("gcc", path=SANDBOX_PATH)
    if cc is None:
        return None
    folder = tempfile.mkdtemp(prefix="iclr26-sandbox-launcher-")  # private (0700): nobody can swap it
    atexit.register(shutil.rmtree, folder, True)
    src, exe = Path(folder, "launcher.c"), Path(folder, "launcher")
    src.write_text(SOURCE)
    try:
        r = subprocess.run([cc, "-O2", "-o", str(exe), str(src)], capture_output=True, timeout=120)
    except (OSError, subprocess.SubprocessError):
        return None
    return str(exe) if r.returncode == 0 and exe.exists() else None

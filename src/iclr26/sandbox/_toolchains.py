"""Which toolchains are installed (on the sandbox's PATH), with their versions."""

from __future__ import annotations

import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache

from ._isolation import SANDBOX_PATH
from ._languages import LANGUAGES, Language, get_language


@dataclass(frozen=True)
class Toolchain:
    """A language's toolchain on this machine.

    Attributes
    ----------
    language : str
    present : bool
        Every program its compile and run commands need is on the sandbox's PATH.
    version : str
        The version probe's first output line ("" when missing).
    missing : tuple of str
        The programs not found.
    debian : str
        The Debian package(s) that provide it.
    """

    language: str
    present: bool
    version: str
    missing: tuple[str, ...]
    debian: str


def _programs(lang: Language) -> list[str]:
    progs = [lang.run[0]] + ([lang.compile[0]] if lang.compile else []) + [lang.version[0]]
    return list(dict.fromkeys(p for p in progs if "{" not in p))


@cache
def _probe_name(name: str) -> Toolchain:
    return _probe(LANGUAGES[name])


def missing_programs(lang: Language) -> tuple[str, ...]:
    """The programs ``lang`` needs that are not on the sandbox's PATH (no version probe: fast)."""
    return tuple(p for p in _programs(lang) if shutil.which(p, path=SANDBOX_PATH) is None)


def _probe(lang: Language) -> Toolchain:
    missing = missing_programs(lang)
    if missing:
        return Toolchain(lang.name, False, "", missing, lang.debian)
    try:
        r = subprocess.run(
            list(lang.version),
            capture_output=True,
            text=True,
            timeout=60,
            env={"PATH": SANDBOX_PATH, "HOME": "/tmp"},
        )
        lines = [
            ln.strip()
            for ln in (r.stdout + "\n" + r.stderr).splitlines()
            if re.search(r"\d+\.\d+", ln) and "warning" not in ln.lower()
        ]
        version = lines[0] if lines else f"(version probe exited {r.returncode} without output)"
    except (OSError, subprocess.SubprocessError) as exc:
        version = f"(version probe failed: {exc})"
    return Toolchain(lang.name, True, version, (), lang.debian)


def toolchains(language: str | None = None) -> list[Toolchain] | Toolchain:
    """The toolchain of every language (a list), or of one ``language``; each is probed once per process."""
    if language is not None:
        return _probe_name(get_language(language).name)
    with ThreadPoolExecutor(max_workers=4) as pool:
        return list(pool.map(_probe_name, LANGUAGES))

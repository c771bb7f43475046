"""Class-data sharing archives for JVM languages whose runtime library is large (Scala).

A short Scala program spends most of its run loading and verifying ``scala-library.jar``'s classes
(236 ms of CPU for a one-line program here, against 94 ms with them archived). The JVM can map
classes from a class-data sharing archive instead (``-XX:SharedArchiveFile``): the same classes,
parsed and verified once. The sandbox builds one archive per language on first use, from the JDK's own
default class list plus every class of the language's jars, with the JDK itself (``java -Xshare:dump``,
trusted input: system jars only, never a program's classes), and keeps it with its builds. The JVM uses
the archive only when its class path starts with the archived jars, and silently ignores it otherwise
(``-Xshare:auto``, the default), so a run with a stale or unusable archive is slower, not different.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import zipfile
from pathlib import Path

from ._isolation import SANDBOX_PATH

#: The run-command option when there is no archive: the JVM's default (its own archive of JDK classes).
NO_ARCHIVE = "-Xshare:auto"


def _jar_classes(jar: str) -> list[str]:
    with zipfile.ZipFile(jar) as z:
        return [
            name[: -len(".class")]
            for name in z.namelist()
            if name.endswith(".class") and not name.startswith("META-INF/") and name != "module-info.class"
        ]


def build_class_archive(jars: tuple[str, ...], folder: str, name: str, *, timeout: float = 300.0) -> str:
    """The run-command option that uses a new archive of ``jars`` (in ``folder``, readable by every
    run), or :data:`NO_ARCHIVE` when java or a jar is missing or the JDK cannot dump here."""
    java = shutil.which("java", path=SANDBOX_PATH)
    if java is None or not jars or not all(os.path.isfile(j) for j in jars):
        return NO_ARCHIVE
    classes = []
    jdk_list = Path(os.path.realpath(java)).parent.parent / "lib" / "classlist"
    if jdk_list.is_file():  # with a custom archive the JVM does not map its default one: keep its classes
        classes += jdk_list.read_text().splitlines()
    for jar in jars:
        classes += _jar_classes(jar)
    class_list = os.path.join(folder, f"{name}.classlist")
    archive = os.path.join(folder, f"{name}.jsa")
    with open(class_list, "w") as f:
        f.write("\n".join(classes) + "\n")
    try:
        dump = subprocess.run(
            [
                java,
                "-Xshare:dump",
                f"-XX:SharedClassListFile={class_list}",
                f"-XX:SharedArchiveFile={archive}",
                "-cp",
                ":".join(jars),
            ],
            env={"PATH": SANDBOX_PATH, "LANG": "C.UTF-8"},
            cwd=folder,
            capture_output=True,
            timeout=timeout,
        )
    except (OSError, subprocess.SubprocessError):
        return NO_ARCHIVE
    if dump.returncode != 0 or not os.path.isfile(archive):
        return NO_ARCHIVE
    os.chmod(archive, 0o444)
    return f"-XX:SharedArchiveFile={archive}"

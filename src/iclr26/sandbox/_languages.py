"""The languages the sandbox runs, each a small declarative entry.

Commands are argument lists with placeholders: ``{build}`` (the folder holding the source and what the
compiler made), ``{mem_mb}`` (the memory limit in MiB), ``{compile_mem_mb}`` and, in a JVM language's
run command, ``{class_archive}`` (the JVM option that uses the sandbox's class-data archive of the
language's ``class_archive`` jars, or ``-Xshare:auto``, the default, without one). Compile commands run
with the build folder as working directory; run commands run in a fresh, empty working directory.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType


@dataclass(frozen=True)
class Language:
    """One language: where the source goes, how to compile and run it, how its memory is limited.

    Attributes
    ----------
    name : str
        Canonical name (``"cpp"``, ``"python"``, ...).
    source_file : str
        File name the source is written to in the build folder.
    run : tuple of str
        Command that runs the program.
    compile : tuple of str or None
        Command that compiles (or, for interpreted languages, syntax-checks) the source; None for none.
    compile_artifact : str or None
        When set, compilation succeeds iff this file exists afterwards, whatever the exit code (``tsc``
        emits JavaScript despite type errors, e.g. without Node's type declarations).
    version : tuple of str
        Command whose first output line names the toolchain's version.
    memory : str
        ``"rlimit-as"`` (an address-space limit works) or ``"runtime-flags"`` (the runtime reserves large
        address space: its own heap flag in ``run``/``env`` plus ``RLIMIT_DATA``), used when no cgroup is.
    data_overhead_mb : int
        Added to the memory limit for ``RLIMIT_DATA`` under ``runtime-flags`` (non-heap memory).
    debian : str
        The Debian package(s) that provide the toolchain.
    env : mapping
        Extra environment variables for the run (placeholders allowed).
    compile_env : mapping
        Extra environment variables for the compile step.
    aliases : tuple of str
        Other names accepted by :func:`get_language`.
    class_archive : tuple of str
        Jars whose classes the sandbox puts, with the JDK's default class list, in a class-data
        sharing archive once (JVM languages whose runtime library is large: loading and verifying it
        is most of a short program's run); the run command puts them first on the class path (the
        archive is used only then) and holds ``{class_archive}``.
    """

    name: str
    source_file: str
    run: tuple[str, ...]
    version: tuple[str, ...]
    memory: str
    debian: str
    compile: tuple[str, ...] | None = None
    compile_artifact: str | None = None
    data_overhead_mb: int = 0
    env: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))
    compile_env: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))
    aliases: tuple[str, ...] = ()
    class_archive: tuple[str, ...] = ()

    @property
    def executable(self) -> str:
        """The program that must be on the sandbox's PATH for this language to work."""
        return (self.compile or self.run)[0]


def _env(**kw: str) -> MappingProxyType:
    return MappingProxyType(kw)


_JVM_RUN_FLAGS = ("-Djava.io.tmpdir=.", "-Xmx{mem_mb}m", "-Xss64m", "-XX:+UseSerialGC", "-XX:-UsePerfData")
_JVM_COMPILE_OPTS = (
    "-Djava.io.tmpdir={build} -Xmx{compile_mem_mb}m -XX:+UseSerialGC -XX:-UsePerfData -XX:TieredStopAtLevel=1"
)

LANGUAGES: MappingProxyType = MappingProxyType(
    {
        lang.name: lang
        for lang in (
            Language(
                name="python",
                source_file="main.py",
                aliases=("python3", "py"),
                compile=("python3", "-m", "py_compile", "main.py"),
                run=("python3", "-B", "{build}/main.py"),
                version=("python3", "--version"),
                memory="rlimit-as",
                debian="python3",
            ),
            Language(
                name="c",
                source_file="main.c",
                compile=("gcc", "-O2", "-std=gnu17", "-o", "main", "main.c", "-lm"),
                run=("{build}/main",),
                version=("gcc", "--version"),
                memory="rlimit-as",
                debian="gcc",
            ),
            Language(
                name="cpp",
                source_file="main.cpp",
                aliases=("c++", "cxx"),
                compile=("g++", "-O2", "-std=gnu++17", "-o", "main", "main.cpp"),
                run=("{build}/main",),
                version=("g++", "--version"),
                memory="rlimit-as",
                debian="g++",
            ),
            Language(
                name="java",
                source_file="Main.java",
                compile=(
                    "javac",
                    "-J-Xmx{compile_mem_mb}m",
                    "-J-XX:+UseSerialGC",
                    "-J-XX:-UsePerfData",
                    "-J-XX:TieredStopAtLevel=1",
                    "-encoding",
                    "UTF-8",
                    "Main.java",
                ),
                run=("java", *_JVM_RUN_FLAGS, "-cp", "{build}", "Main"),
                version=("java", "-version"),
                memory="runtime-flags",
                data_overhead_mb=768,
                debian="openjdk-17-jdk-headless",
            ),
            Language(
                name="csharp",
                source_file="main.cs",
                aliases=("c#", "cs"),
                compile=("mcs", "-optimize+", "-out:main.exe", "main.cs"),
                run=("mono", "{build}/main.exe"),
                env=_env(MONO_GC_PARAMS="max-heap-size={mem_mb}m"),
                version=("mono", "--version"),
                memory="runtime-flags",
                data_overhead_mb=256,
                debian="mono-mcs mono-runtime",
            ),
            Language(
                name="javascript",
                source_file="main.js",
                aliases=("js", "node"),
                compile=("node", "--check", "main.js"),
                run=("node", "--max-old-space-size={mem_mb}", "{build}/main.js"),
                version=("node", "--version"),
                memory="runtime-flags",
                data_overhead_mb=512,
                debian="nodejs",
            ),
            Language(
                name="typescript",
                source_file="main.ts",
                aliases=("ts",),
                compile=(
                    "tsc",
                    "--target",
                    "es2020",
                    "--module",
                    "commonjs",
                    "--skipLibCheck",
                    "--outDir",
                    "{build}",
                    "main.ts",
                ),
                compile_artifact="main.js",
                compile_env=_env(NODE_OPTIONS="--max-old-space-size={compile_mem_mb}"),
                run=("node", "--max-old-space-size={mem_mb}", "{build}/main.js"),
                version=("tsc", "--version"),
                memory="runtime-flags",
                data_overhead_mb=512,
                debian="node-typescript",
            ),
            Language(
                name="go",
                source_file="main.go",
                aliases=("golang",),
                compile=("go", "build", "-o", "main", "main.go"),
                compile_env=_env(
                    GOCACHE="{build}/.gocache",
                    GOPATH="{build}/.gopath",
                    GO111MODULE="off",
                    GOTOOLCHAIN="local",
                    GOFLAGS="-buildvcs=false",
                    CGO_ENABLED="0",
                ),
                run=("{build}/main",),
                env=_env(GOMEMLIMIT="{mem_mb}MiB", GOMAXPROCS="1"),
                version=("go", "version"),
                memory="runtime-flags",
                data_overhead_mb=128,
                debian="golang-go",
            ),
            Language(
                name="rust",
                source_file="main.rs",
                aliases=("rs",),
                compile=("rustc", "-O", "--edition", "2021", "-o", "main", "main.rs"),
                run=("{build}/main",),
                version=("rustc", "--version"),
                memory="rlimit-as",
                debian="rustc",
            ),
            Language(
                name="ruby",
                source_file="main.rb",
                aliases=("rb",),
                compile=("ruby", "-c", "main.rb"),
                run=("ruby", "{build}/main.rb"),
                version=("ruby", "--version"),
                memory="rlimit-as",
                debian="ruby",
            ),
            Language(
                name="php",
                source_file="main.php",
                compile=("php", "-l", "main.php"),
                run=("php", "-d", "memory_limit={mem_mb}M", "{build}/main.php"),
                version=("php", "--version"),
                memory="rlimit-as",
                debian="php-cli",
            ),
            Language(
                name="kotlin",
                source_file="main.kt",
                aliases=("kt",),
                compile=("kotlinc", "main.kt", "-include-runtime", "-d", "main.jar"),
                compile_env=_env(JAVA_OPTS=_JVM_COMPILE_OPTS),
                run=("java", *_JVM_RUN_FLAGS, "-jar", "{build}/main.jar"),
                version=("kotlinc", "-version"),
                memory="runtime-flags",
                data_overhead_mb=768,
                debian="kotlin",
            ),
            Language(
                name="scala",
                source_file="Main.scala",
                compile=("scalac", "-d", "{build}", "Main.scala"),
                compile_env=_env(JAVA_OPTS=_JVM_COMPILE_OPTS),
                run=(
                    "java",
                    *_JVM_RUN_FLAGS,
                    "{class_archive}",
                    "-cp",
                    "/usr/share/scala/lib/scala-library.jar:{build}",
                    "Main",
                ),
                class_archive=("/usr/share/scala/lib/scala-library.jar",),
                version=("scalac", "-version"),
                memory="runtime-flags",
                data_overhead_mb=768,
                debian="scala",
            ),
        )
    }
)

_ALIASES = {alias: lang.name for lang in LANGUAGES.values() for alias in (lang.name, *lang.aliases)}


def get_language(name: str) -> Language:
    """The language called ``name`` (case-insensitive; aliases such as ``"c++"`` or ``"py"`` work).

    Raises
    ------
    ValueError
        If ``name`` is not a string naming a known language.
    """
    if not isinstance(name, str) or name.strip().lower() not in _ALIASES:
        raise ValueError(
            f"language must be one of {sorted(LANGUAGES)} (or an alias such as 'c++', 'py'), got {name!r}"
        )
    return LANGUAGES[_ALIASES[name.strip().lower()]]


def expand(args, **values) -> list[str]:
    """Fill the placeholders of a command (or an environment mapping's values)."""
    return [a.format(**values) for a in args]

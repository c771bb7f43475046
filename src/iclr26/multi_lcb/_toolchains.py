"""The 12 Multi-LCB languages, each the sandbox's toolchain entry (source file name, compile and run
commands, version probe, resource flags)."""

from __future__ import annotations

from types import MappingProxyType

from ..sandbox import get_language, toolchains

#: Multi-LCB's languages in the poster's order, as sandbox language names.
ORDER = (
    "python",
    "cpp",
    "java",
    "csharp",
    "javascript",
    "typescript",
    "go",
    "rust",
    "ruby",
    "php",
    "kotlin",
    "scala",
)

DISPLAY = MappingProxyType(
    {
        "python": "Python",
        "cpp": "C++",
        "java": "Java",
        "csharp": "C#",
        "javascript": "JavaScript",
        "typescript": "TypeScript",
        "go": "Go",
        "rust": "Rust",
        "ruby": "Ruby",
        "php": "PHP",
        "kotlin": "Kotlin",
        "scala": "Scala",
    }
)

#: Fence tags a model may use for each language; the first is the one our prompt shows.
FENCE_TAGS = MappingProxyType(
    {
        "python": ("python", "python3", "py"),
        "cpp": ("cpp", "c++", "cxx", "cc"),
        "java": ("java",),
        "csharp": ("csharp", "c#", "cs"),
        "javascript": ("javascript", "js", "node"),
        "typescript": ("typescript", "ts"),
        "go": ("go", "golang"),
        "rust": ("rust", "rs"),
        "ruby": ("ruby", "rb"),
        "php": ("php",),
        "kotlin": ("kotlin", "kt"),
        "scala": ("scala",),
    }
)

#: name -> :class:`iclr26.sandbox.Language` (source file, compile/run commands, version probe, memory).
LANGUAGES = MappingProxyType({name: get_language(name) for name in ORDER})


def get_multi_language(language: str) -> str:
    """The canonical name of one of the 12 languages (aliases such as ``"c++"``, ``"C#"`` accepted).

    Raises ValueError listing the 12 for anything else (C, for one, is a sandbox language but not one
    of Multi-LCB's).
    """
    try:
        name = get_language(language).name
    except ValueError:
        name = None
    if name not in LANGUAGES:
        raise ValueError(
            f"language must be one of the 12 Multi-LCB languages {list(ORDER)}, got {language!r}"
        )
    return name


def available_toolchains() -> dict[str, dict]:
    """For each of the 12 languages: ``present``, ``version`` (the compiler's own line), ``missing``
    programs and the ``debian`` package(s) to install."""
    found = {t.language: t for t in toolchains()}
    return {
        name: {
            "present": found[name].present,
            "version": found[name].version,
            "missing": list(found[name].missing),
            "debian": found[name].debian,
        }
        for name in ORDER
    }

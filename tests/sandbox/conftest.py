import pytest

from iclr26.sandbox import MiB, Sandbox, get_language
from iclr26.sandbox._toolchains import missing_programs

LIMITS = dict(time_limit=1.0, memory_limit=256 * MiB, output_limit=1 * MiB, processes_limit=16)


def _need(language: str) -> None:
    """Skip the calling test when the language's toolchain is absent, saying which package provides it."""
    lang = get_language(language)
    missing = missing_programs(lang)
    if missing:
        pytest.skip(f"{language} toolchain absent ({', '.join(missing)}; Debian package: {lang.debian})")


@pytest.fixture(scope="module")
def sandbox():
    with Sandbox(**LIMITS) as sb:
        yield sb


@pytest.fixture(scope="session")
def need():
    """``need(language)``: skip when its toolchain is absent."""
    return _need


@pytest.fixture(scope="session")
def limits():
    return dict(LIMITS)

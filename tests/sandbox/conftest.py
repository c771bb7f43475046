import pytest

from iclr26.sandbox import MiB, Sandbox, toolchains

LIMITS = dict(time_limit=1.0, memory_limit=256 * MiB, output_limit=1 * MiB, processes_limit=16)


def _need(language: str) -> None:
    """Skip the calling test when the language's toolchain is absent, saying which package provides it."""
    t = toolchains(language)
    if not t.present:
        pytest.skip(f"{language} toolchain absent ({', '.join(t.missing)}; Debian package: {t.debian})")


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

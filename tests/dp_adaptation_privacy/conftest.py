import sys
import warnings

import pytest


@pytest.fixture(scope="session")
def tiny():
    from iclr26.models import tiny_random_model

    return tiny_random_model(0)


@pytest.fixture(scope="session")
def texts():
    return [f"the quick brown fox {i} jumps over the lazy dog number {i * 7}" for i in range(16)]


def opacus_or_skip():
    """opacus (a cross-check only; never a dependency): installed in the venv or on ICLR26_OPACUS_PATH."""
    import os

    extra = os.environ.get("ICLR26_OPACUS_PATH")
    if extra and extra not in sys.path:
        sys.path.append(extra)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pytest.importorskip("opacus")

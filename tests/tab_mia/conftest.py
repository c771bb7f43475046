import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(scope="session")
def authors():
    import authors as loader

    if loader.authors_dir() is None:
        pytest.skip("no checkout of github.com/eyalgerman/Tab-MIA (set ICLR26_TAB_MIA_AUTHORS)")
    return loader.load_authors()


@pytest.fixture(scope="session")
def tiny():
    from iclr26.models import tiny_random_model

    return tiny_random_model(0)

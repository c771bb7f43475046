import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(scope="session")
def digits_task():
    """sklearn digits scaled to [0, 1], 50 % symmetric noise on 1,300 training rows, 3 references per
    class, the rest held out."""
    from iclr26.trainref.data import load_digits_task

    return load_digits_task(noise="symmetric", rate=0.5, refs_per_class=3, seed=0)


@pytest.fixture(scope="session")
def rng():
    return np.random.default_rng(0)

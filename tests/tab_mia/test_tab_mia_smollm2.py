"""Attack scores with the embedded SmolLM2-135M against the authors' ``inference()`` (skipped when the
embedded model or the authors' checkout is absent)."""

import numpy as np
import pytest

from iclr26.tab_mia import ATTACKS, AUTHORS_NAMES, make_benchmark_from_tables, mia_scores
from iclr26.tab_mia.data import short_tables


@pytest.fixture(scope="module")
def smollm2():
    from iclr26.models import ModelNotAvailableError, load_embedded_model

    try:
        return load_embedded_model()
    except ModelNotAvailableError as err:
        pytest.skip(str(err))


def test_scores_match_authors_on_smollm2(authors, smollm2):
    tables = short_tables(80, seed=5, max_rows=2, max_cols=3)
    texts = make_benchmark_from_tables(tables, "key-is-value").input.tolist()[:50]
    assert len(texts) == 50
    one = mia_scores(smollm2, texts, batch_size=1)  # the authors' shapes: one text per forward
    batched = mia_scores(smollm2, texts, batch_size=8)
    theirs = [authors.mia.inference(smollm2.model, smollm2.tokenizer, t, 1, "x", {}, {}) for t in texts]
    for col in ATTACKS:
        ref = np.array([p[AUTHORS_NAMES[col]] for p in theirs], float)
        ok = ~np.isnan(ref)
        for got, bar in ((one[col].to_numpy(), 1e-5), (batched[col].to_numpy(), 5e-5)):
            # batching changes float32 rounding: max_k_10 (mean of log-probs near 0) moved 1.2e-5 relative
            assert np.array_equal(np.isnan(got), np.isnan(ref)), col
            assert np.max(np.abs(got[ok] - ref[ok]) / np.abs(ref[ok])) < bar, col

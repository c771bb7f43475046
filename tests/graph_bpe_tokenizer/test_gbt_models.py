"""BERT-on-tokens and GIN classifiers: they learn an easy structural task; MLM pretraining runs."""

from __future__ import annotations

import numpy as np
import pytest

from iclr26.graph_bpe_tokenizer import (
    BertGraphClassifier,
    GINGraphClassifier,
    GraphTokenizer,
    molecule_like_graphs,
)

pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def data():
    import torch

    torch.set_num_threads(1)
    return molecule_like_graphs(260, seed=3)


def test_bert_learns_ring_task(data):
    graphs, y = data
    tok = GraphTokenizer(300).fit(graphs[:200])
    clf = BertGraphClassifier(tok, hidden_size=32, num_layers=1, num_heads=2, intermediate_size=64, epochs=8)
    clf.fit(graphs[:200], y[:200])
    p = clf.predict_proba(graphs[200:])
    assert p.shape == (60, 2) and np.allclose(p.sum(1), 1, atol=1e-5)
    acc = (clf.predict(graphs[200:]) == y[200:]).mean()
    assert acc > max(y[200:].mean(), 1 - y[200:].mean()) + 0.05


def test_bert_mlm_pretraining_and_determinism(data):
    graphs, y = data
    tok = GraphTokenizer(100).fit(graphs[:60])
    kw = dict(hidden_size=16, num_layers=1, num_heads=2, intermediate_size=32, epochs=1, mlm_epochs=1, seed=7)
    a = BertGraphClassifier(tok, **kw).fit(graphs[:60], y[:60]).predict_proba(graphs[60:80])
    b = BertGraphClassifier(tok, **kw).fit(graphs[:60], y[:60]).predict_proba(graphs[60:80])
    assert np.allclose(a, b)


def test_gin_learns_ring_task(data):
    pytest.importorskip("torch_geometric")
    graphs, y = data
    clf = GINGraphClassifier(hidden_size=32, epochs=15).fit(graphs[:200], y[:200])
    acc = (clf.predict(graphs[200:]) == y[200:]).mean()
    assert acc > max(y[200:].mean(), 1 - y[200:].mean()) + 0.05


def test_classifier_bad_input(data):
    graphs, y = data
    with pytest.raises(ValueError, match="GraphTokenizer"):
        BertGraphClassifier("tok")
    tok = GraphTokenizer(10).fit(graphs[:10])
    with pytest.raises(ValueError, match="multiple"):
        BertGraphClassifier(tok, hidden_size=10, num_heads=3)
    with pytest.raises(ValueError, match="not fitted"):
        BertGraphClassifier(tok).predict(graphs[:2])


def test_bert_warns_or_raises_instead_of_silently_truncating(data):
    graphs, y = data
    tok = GraphTokenizer(0).fit(graphs[:40])  # no merges: 60-100 symbols per graph
    kw = dict(hidden_size=16, num_layers=1, num_heads=2, intermediate_size=32, epochs=1, max_length=16)
    with pytest.warns(UserWarning, match="more than max_length=16"):
        BertGraphClassifier(tok, **kw).fit(graphs[:40], y[:40])
    with pytest.raises(ValueError, match="max_length"):
        BertGraphClassifier(tok, truncation="error", **kw).fit(graphs[:40], y[:40])
    with pytest.raises(ValueError, match="truncation"):
        BertGraphClassifier(tok, truncation="silent")


def test_bert_augmentation_trains_on_several_serializations(data):
    graphs, y = data
    tok = GraphTokenizer(100).fit(graphs[:60])
    kw = dict(hidden_size=16, num_layers=1, num_heads=2, intermediate_size=32, epochs=1, seed=1)
    plain = BertGraphClassifier(tok, **kw)
    ids, _ = plain._encode(graphs[:60])
    variant, _ = plain._encode(graphs[:60], variant_seed=5)
    assert any(not np.array_equal(a, b) for a, b in zip(ids, variant))  # the variants differ
    aug = BertGraphClassifier(tok, augment=3, **kw).fit(graphs[:60], y[:60])
    assert aug.predict_proba(graphs[60:70]).shape == (10, 2)
    with pytest.raises(ValueError, match="augment"):
        BertGraphClassifier(tok, augment=0)

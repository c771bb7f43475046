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

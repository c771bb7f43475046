"""GraphTokenizer: BPE merges, save/load identity, compression, bad input; serializer details."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from iclr26.graph_bpe_tokenizer import (
    MUTAG_EDGE_LABELS,
    MUTAG_NODE_LABELS,
    GraphSerializer,
    GraphTokenizer,
    molecule_like_graphs,
    mutag_graphs,
    pad_batch,
)


@pytest.fixture(scope="module")
def mols():
    return molecule_like_graphs(300, seed=1)


def test_save_load_reproduces_identical_ids(mols, tmp_path):
    graphs, _ = mols
    tok = GraphTokenizer(num_merges=500).fit(graphs[:200])
    path = tmp_path / "tok.json"
    tok.save(path)
    back = GraphTokenizer.load(path)
    assert back.vocab_size == tok.vocab_size
    assert back.encode_batch(graphs) == tok.encode_batch(graphs)
    assert back.serialize(graphs[5]) == tok.serialize(graphs[5])


def test_fit_is_deterministic(mols):
    graphs, _ = mols
    a = GraphTokenizer(num_merges=300).fit(graphs)
    b = GraphTokenizer(num_merges=300).fit(graphs)
    assert a.to_dict() == b.to_dict()


def test_bpe_compresses_and_vocab_counts(mols):
    graphs, _ = mols
    tok = GraphTokenizer(num_merges=400).fit(graphs)
    assert tok.vocab_size == 4 + tok.serializer_.n_symbols + tok.n_merges_learned
    assert 0 < tok.n_merges_learned <= 400
    r = tok.compression_ratio(graphs)
    assert 0.0 < r < 0.5
    raw = GraphTokenizer(num_merges=0).fit(graphs)
    assert raw.compression_ratio(graphs) == 1.0
    assert raw.n_merges_learned == 0
    # merged tokens expand back to the exact symbols
    g = graphs[0]
    assert tok.ids_to_symbols(tok.encode(g)) == tok.serialize(g)


def test_min_frequency_limits_merges(mols):
    graphs, _ = mols
    lo = GraphTokenizer(num_merges=5000, min_frequency=2).fit(graphs[:50])
    hi = GraphTokenizer(num_merges=5000, min_frequency=20).fit(graphs[:50])
    assert hi.n_merges_learned < lo.n_merges_learned < 5000


def test_frequency_guidance_follows_the_most_frequent_triplet():
    # Centre C with neighbours O (via "-") and N (via "-"): C-O is far more frequent in the corpus.
    corpus = []
    for _ in range(20):
        g = nx.Graph()
        g.add_node(0, label="C")
        g.add_node(1, label="O")
        g.add_edge(0, 1, label="-")
        corpus.append(g)
    probe = nx.Graph()
    probe.add_node(0, label="C")
    probe.add_node(1, label="N")
    probe.add_node(2, label="O")
    probe.add_edge(0, 1, label="-")
    probe.add_edge(0, 2, label="-")
    ser = GraphSerializer("feuler").fit([*corpus, probe])
    circuit = ser.circuits(probe)[0]
    assert [n for n, _ in circuit][:2] == [0, 2]  # O before N despite its larger index
    plain = GraphSerializer("euler").fit([*corpus, probe]).circuits(probe)[0]
    assert [n for n, _ in plain][:2] == [0, 1]  # neighbour order
    assert len(circuit) == 2 * probe.number_of_edges() + 1


def test_omitted_edge_label_and_labels_only_mode(mols):
    graphs, _ = mols
    ser = GraphSerializer().fit(graphs)
    assert ser.omitted_edge_label_ == "single"
    edge_syms = [i for i, (k, _) in enumerate(ser.symbols_) if k == "edge"]
    single = ser.symbols_.index(("edge", "single"))
    seq = ser.serialize(graphs[0])
    assert single not in seq and any(s in edge_syms for s in seq)
    keep = GraphSerializer(omit_most_frequent_edge=False).fit(graphs)
    assert len(keep.serialize(graphs[0])) > len(seq)
    lab = GraphSerializer(references=False).fit(graphs)
    assert lab.serialize(graphs[0]) == ser.serialize_labels_only(graphs[0])
    with pytest.raises(ValueError, match="not reversible"):
        lab.deserialize(lab.serialize(graphs[0]))


def test_mutag_loads_and_roundtrips_with_full_alphabet():
    pytest.importorskip("grakel")
    graphs, y = mutag_graphs()
    assert len(graphs) == 188 and int(y.sum()) == 125
    tok = GraphTokenizer(2000).fit(graphs[:100], node_labels=MUTAG_NODE_LABELS, edge_labels=MUTAG_EDGE_LABELS)
    ids = tok.encode_batch(graphs)
    for g, s in zip(graphs, ids, strict=True):
        h = tok.decode(s)
        assert sorted(nx.get_node_attributes(h, "label").values()) == sorted(
            nx.get_node_attributes(g, "label").values()
        )
        assert nx.is_isomorphic(g, h, node_match=lambda a, b: a == b, edge_match=lambda a, b: a == b)


def test_pad_batch_shapes(mols):
    graphs, _ = mols
    tok = GraphTokenizer(100).fit(graphs)
    seqs = tok.encode_batch(graphs[:4])
    ids, mask = pad_batch(seqs, tok, max_length=6)
    assert ids.shape == mask.shape and ids.shape[0] == 4 and ids.shape[1] <= 6
    assert (ids[:, 0] == tok.cls_token_id).all()
    assert (ids[mask == 0] == tok.pad_token_id).all()


def test_bad_input():
    with pytest.raises(ValueError, match="method"):
        GraphSerializer("bfs")
    with pytest.raises(ValueError, match="not fitted"):
        GraphTokenizer().encode(nx.path_graph(2))
    with pytest.raises(ValueError, match="undirected"):
        GraphSerializer().fit([nx.DiGraph([(0, 1)])])
    with pytest.raises(ValueError, match="networkx"):
        GraphSerializer().fit([np.zeros((2, 2))])
    with pytest.raises(ValueError, match="at least one"):
        GraphSerializer().fit([])
    with pytest.raises(ValueError, match="num_merges"):
        GraphTokenizer(num_merges=-1)
    with pytest.raises(ValueError, match="method"):
        GraphTokenizer(method="bfs")
    ser = GraphSerializer().fit([nx.path_graph(3)])
    with pytest.raises(ValueError, match="outside the alphabet"):
        ser.deserialize([999])
    ref = ser.symbols_.index(("ref", 1))
    with pytest.raises(ValueError, match="reference"):
        ser.deserialize([ref])
    with pytest.raises(ValueError, match="not in the vocabulary"):
        GraphTokenizer(10).fit([nx.path_graph(3)]).decode([10**6])
    with pytest.raises(ValueError, match="format"):
        GraphTokenizer.from_dict({"format": "x"})


def test_compression_ratio_serialises_each_graph_once(mols, monkeypatch):
    graphs = mols[0][:50]
    tok = GraphTokenizer(200).fit(graphs)
    calls = []
    original = tok.serializer_.serialize
    monkeypatch.setattr(tok.serializer_, "serialize", lambda g, rng=None: calls.append(1) or original(g, rng))
    r = tok.compression_ratio(graphs)
    assert len(calls) == len(graphs)
    raw = sum(len(original(g)) for g in graphs)
    assert r == sum(len(x) for x in tok.encode_batch(graphs)) / raw


def test_transformers_tokenizer_wrapper(mols, tmp_path):
    mols = mols[0]
    pytest.importorskip("transformers")
    import torch
    from transformers import DataCollatorWithPadding, PreTrainedTokenizerFast

    tok = GraphTokenizer(200).fit(mols[:80])
    fast = tok.to_transformers(model_max_length=64)
    assert isinstance(fast, PreTrainedTokenizerFast)
    assert fast.get_vocab() == tok._hf.get_vocab() and len(fast) == tok.vocab_size
    assert fast.pad_token_id == tok.pad_token_id
    one = fast(mols[0])
    assert one["input_ids"] == [tok.cls_token_id, *tok.encode(mols[0]), tok.sep_token_id]
    batch = fast(mols[:5], padding=True, return_tensors="pt")
    assert batch["input_ids"].shape[0] == 5 and batch["attention_mask"].sum(1).tolist() == [
        len(tok.encode(g)) + 2 for g in mols[:5]
    ]
    cut = fast(mols[:5], truncation=True, max_length=6)
    assert max(len(x) for x in cut["input_ids"]) <= 6
    collated = DataCollatorWithPadding(fast)([fast(g) for g in mols[:3]])
    assert isinstance(collated["input_ids"], torch.Tensor)
    same_graph = fast.decode_graph(one["input_ids"])
    assert same_graph.number_of_edges() == mols[0].number_of_edges()
    fast.save_pretrained(tmp_path)
    again = type(fast).from_pretrained(tmp_path)
    assert again(mols[:5])["input_ids"] == fast(mols[:5])["input_ids"]
    assert again.decode_graph(one["input_ids"]).number_of_nodes() == mols[0].number_of_nodes()
    with pytest.raises(ValueError, match="graph_tokenizer.json"):
        type(fast).from_pretrained(tmp_path / "missing")


def test_smiles_baseline_roundtrip_and_bpe(mols, tmp_path):
    mols = mols[0]
    pytest.importorskip("rdkit")
    import networkx as nx
    from networkx.algorithms.isomorphism import categorical_edge_match, categorical_node_match

    from iclr26.graph_bpe_tokenizer import graph_to_smiles, smiles_to_graph

    tok = GraphTokenizer(200, method="smiles").fit(mols[:80])
    nm, em = categorical_node_match("label", None), categorical_edge_match("label", None)
    for g in mols[80:120]:
        assert nx.is_isomorphic(g, tok.decode(tok.encode(g)), node_match=nm, edge_match=em)
    assert tok.compression_ratio(mols[80:120]) < 1
    tok.save(tmp_path / "smi.json")
    assert GraphTokenizer.load(tmp_path / "smi.json").encode(mols[90]) == tok.encode(mols[90])
    benzene = nx.cycle_graph(6)
    nx.set_node_attributes(benzene, "C", "label")
    nx.set_edge_attributes(benzene, "aromatic", "label")
    assert graph_to_smiles(benzene) == "c1ccccc1"
    assert smiles_to_graph("c1ccccc1").number_of_edges() == 6
    loop = nx.Graph([(0, 0)])
    nx.set_node_attributes(loop, "C", "label")
    nx.set_edge_attributes(loop, "single", "label")
    with pytest.raises(ValueError, match="self-loops"):
        graph_to_smiles(loop)
    bad = nx.path_graph(2)
    nx.set_node_attributes(bad, "Xx", "label")
    with pytest.raises(ValueError, match="element symbols"):
        graph_to_smiles(bad)

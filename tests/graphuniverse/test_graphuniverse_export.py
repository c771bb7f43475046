"""Exports (PyG, networkx), save/load, and the benchmark models."""

import numpy as np
import pytest

from iclr26.graphuniverse import (
    MODELS,
    GraphFamily,
    Universe,
    add_node_split,
    fit_graph_regressor,
    fit_node_classifier,
    graph_mae,
    node_accuracy,
)

torch = pytest.importorskip("torch")
pytest.importorskip("torch_geometric")


@pytest.fixture(scope="module")
def family():
    u = Universe(K=5, feature_dim=4, center_variance=1.0, cluster_variance=0.5, seed=0)
    return GraphFamily(u, n_graphs=6, n_nodes=(40, 70), homophily=(0.8, 0.9), avg_degree=(3, 5), seed=1)


def test_to_pyg(family):
    g = family[0]
    d = g.to_pyg(
        [
            "community_detection",
            "triangle_counting",
            "k_hop_community_counts_k2",
            "community_homophily_vector",
        ]
    )
    assert d.num_nodes == g.n_nodes and d.edge_index.shape == (2, 2 * g.n_edges)
    assert torch.equal(d.y, torch.from_numpy(g.y))
    assert float(d.triangle_counting) == g.triangle_count()
    assert d.k_hop_community_counts_k2.shape == (g.n_nodes, 5)
    assert d.community_homophily_vector.shape == (1, 5)
    from torch_geometric.utils import is_undirected

    assert is_undirected(d.edge_index)
    with pytest.raises(ValueError, match="unknown task"):
        g.to_pyg(["nope"])
    from torch_geometric.data import InMemoryDataset

    data, slices = InMemoryDataset.collate(family.to_pyg())
    assert data.num_nodes == sum(x.n_nodes for x in family)


def test_to_networkx(family):
    import networkx as nx

    g = family[1]
    G = g.to_networkx()
    assert G.number_of_nodes() == g.n_nodes and G.number_of_edges() == g.n_edges
    assert nx.is_connected(G)
    assert sum(nx.triangles(G).values()) // 3 == g.triangle_count()
    assert G.nodes[0]["community"] == g.y[0]


def test_save_load_roundtrip(family, tmp_path):
    path = family.save(tmp_path / "fam.npz")
    assert not list(tmp_path.glob(".*.tmp"))
    back = GraphFamily.load(path)
    assert len(back) == len(family)
    assert np.array_equal(back.universe.P, family.universe.P)
    assert np.array_equal(back.universe.feature_centers, family.universe.feature_centers)
    for a, b in zip(family, back):
        assert np.array_equal(a.edges, b.edges) and np.array_equal(a.x, b.x) and a.params == b.params
    assert back.config() == family.config()
    (tmp_path / "bad.npz").write_bytes(b"nope")
    with pytest.raises(Exception):  # noqa: B017 - numpy raises its own error for a non-npz file
        GraphFamily.load(tmp_path / "bad.npz")


@pytest.mark.parametrize("name", MODELS)
def test_models_learn_homophilous_communities(family, name):
    split = add_node_split(family.to_pyg(), 0.5, seed=0)
    model = fit_node_classifier(name, split, 5, mask="train_mask", epochs=40, seed=0)
    acc = node_accuracy(model, split, mask="test_mask")
    assert acc > 0.35, acc  # chance is about 1/4 on 3-5 communities of 5
    per = node_accuracy(model, split, mask="test_mask", per_graph=True)
    assert per.shape == (len(family),) and np.all((per >= 0) & (per <= 1))


def test_graph_regressor_runs(family):
    data = family.to_pyg()
    reg = fit_graph_regressor("GIN", data, epochs=20)
    assert np.isfinite(graph_mae(reg, data))


def test_bad_split():
    with pytest.raises(ValueError, match="train_frac"):
        add_node_split([], 1.5)

"""GraphUniverse: families of graphs with persistent communities, for inductive generalization.

Van Langendonck et al., ICLR 2026. A :class:`Universe` fixes K communities (propensities, degree
centres, feature centres); a :class:`GraphFamily` samples many graphs from it with the degree-community-
coupled corrected SBM (DCCC-SBM), each graph with its own size, communities, homophily, density and
degree distribution. Graphs export to PyTorch Geometric and networkx; families save to disk.
The benchmark helpers (:func:`train_node_model`, ...) train MLP/GCN/SAGE/GAT/GIN/GPS on them.
"""

from ._dcsbm import block_probability_matrix, sample_edges, scale_propensities
from ._family import GraphFamily, sample_graph
from ._graph import TASKS, GraphSample
from ._models import (
    MODELS,
    add_node_split,
    fit_graph_regressor,
    fit_node_classifier,
    graph_mae,
    make_model,
    node_accuracy,
)
from ._universe import Universe

__all__ = [
    "MODELS",
    "TASKS",
    "add_node_split",
    "fit_graph_regressor",
    "fit_node_classifier",
    "graph_mae",
    "make_model",
    "node_accuracy",
    "GraphFamily",
    "GraphSample",
    "GraphUniverseDataset",
    "Universe",
    "block_probability_matrix",
    "sample_edges",
    "sample_graph",
    "scale_propensities",
]


def __getattr__(name: str):
    # GraphUniverseDataset needs torch_geometric: imported on first use only.
    if name == "GraphUniverseDataset":
        from ._dataset import GraphUniverseDataset

        return GraphUniverseDataset
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

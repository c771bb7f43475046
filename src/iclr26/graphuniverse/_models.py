"""Small graph models and their training loops for the GraphUniverse benchmark (CPU, full batch).

Models (``MODELS``): ``MLP`` (no structure), ``GCN``, ``SAGE`` (GraphSAGE), ``GAT``, ``GIN`` and ``GPS``
(a graph transformer: PyG ``GPSConv``, a GIN local layer plus global multi-head attention per graph).
Node-level heads classify communities (universe ids); graph-level heads regress a graph target through
sum pooling.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..validation import check_in, check_int

MODELS = ("MLP", "GCN", "SAGE", "GAT", "GIN", "GPS")


def _torch():
    import torch

    return torch


def make_model(
    name: str,
    in_dim: int,
    out_dim: int,
    hidden: int = 32,
    n_layers: int = 2,
    graph_level: bool = False,
    heads: int = 2,
    dropout: float = 0.1,
):
    """A ``torch.nn.Module`` computing ``model(x, edge_index, batch)``.

    Node level: returns (n, out_dim) logits. Graph level: (n_graphs, out_dim) via sum pooling.
    """
    import torch
    from torch import nn
    from torch_geometric.nn import GATConv, GCNConv, GINConv, GPSConv, SAGEConv, global_add_pool

    check_in(name, MODELS, "name")
    in_dim = check_int(in_dim, "in_dim", minimum=1)
    out_dim = check_int(out_dim, "out_dim", minimum=1)
    hidden = check_int(hidden, "hidden", minimum=1)
    n_layers = check_int(n_layers, "n_layers", minimum=1)

    def mlp(a, b):
        return nn.Sequential(nn.Linear(a, b), nn.ReLU(), nn.Linear(b, b))

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.name = name
            self.inp = nn.Linear(in_dim, hidden)
            layers = []
            for _ in range(n_layers):
                if name == "MLP":
                    layers.append(nn.Linear(hidden, hidden))
                elif name == "GCN":
                    layers.append(GCNConv(hidden, hidden))
                elif name == "SAGE":
                    layers.append(SAGEConv(hidden, hidden))
                elif name == "GAT":
                    layers.append(GATConv(hidden, hidden // heads, heads=heads))
                elif name == "GIN":
                    layers.append(GINConv(mlp(hidden, hidden), train_eps=True))
                else:  # GPS
                    layers.append(
                        GPSConv(
                            hidden,
                            GINConv(mlp(hidden, hidden)),
                            heads=heads,
                            dropout=dropout,
                            attn_type="multihead",
                        )
                    )
            self.layers = nn.ModuleList(layers)
            self.norms = nn.ModuleList([nn.LayerNorm(hidden) for _ in range(n_layers)])
            self.drop = nn.Dropout(dropout)
            self.head = nn.Sequential(nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, out_dim))

        def forward(self, x, edge_index, batch=None):
            h = torch.relu(self.inp(x))
            for layer, norm in zip(self.layers, self.norms):
                if name == "MLP":
                    z = layer(h)
                elif name == "GPS":
                    z = layer(h, edge_index, batch)
                else:
                    z = layer(h, edge_index)
                h = norm(h + self.drop(torch.relu(z)))
            if graph_level:
                if batch is None:
                    batch = torch.zeros(h.shape[0], dtype=torch.long)
                h = global_add_pool(h, batch)
            return self.head(h)

    return Net()


def _batch(graphs: Sequence):
    from torch_geometric.data import Batch

    if len(graphs) == 0:
        raise ValueError("graphs must not be empty")
    return Batch.from_data_list(list(graphs))


def fit_node_classifier(
    name: str,
    graphs: Sequence,
    n_classes: int,
    mask: str | None = None,
    epochs: int = 100,
    lr: float = 0.01,
    hidden: int = 32,
    n_layers: int = 2,
    weight_decay: float = 5e-4,
    seed: int = 0,
):
    """Train model ``name`` to predict ``data.y`` on PyG graphs (full batch, Adam, cross-entropy).

    ``mask`` names a boolean node attribute (e.g. ``"train_mask"``) restricting the loss (transductive
    protocol); ``None`` trains on every node (inductive protocol). Returns the trained model (eval mode).
    """
    torch = _torch()
    torch.manual_seed(seed)
    epochs = check_int(epochs, "epochs", minimum=1)
    b = _batch(graphs)
    model = make_model(name, b.x.shape[1], n_classes, hidden=hidden, n_layers=n_layers)
    opt = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay)
    sel = getattr(b, mask) if mask is not None else torch.ones(b.num_nodes, dtype=torch.bool)
    model.train()
    for _ in range(epochs):
        opt.zero_grad()
        out = model(b.x, b.edge_index, b.batch)
        loss = torch.nn.functional.cross_entropy(out[sel], b.y[sel])
        loss.backward()
        opt.step()
    model.eval()
    return model


def node_accuracy(model, graphs: Sequence, mask: str | None = None, per_graph: bool = False):
    """Accuracy of ``model`` on ``data.y`` over the nodes selected by ``mask`` (all if None).

    With ``per_graph=True`` returns an array of per-graph accuracies (for bootstrapping over graphs).
    """
    torch = _torch()
    b = _batch(graphs)
    with torch.no_grad():
        pred = model(b.x, b.edge_index, b.batch).argmax(-1)
    sel = getattr(b, mask) if mask is not None else torch.ones(b.num_nodes, dtype=torch.bool)
    correct = (pred == b.y) & sel
    if not per_graph:
        return float(correct.sum()) / max(int(sel.sum()), 1)
    n_g = b.num_graphs
    num = torch.zeros(n_g).index_add_(0, b.batch, correct.float())
    den = torch.zeros(n_g).index_add_(0, b.batch, sel.float())
    return (num / den.clamp(min=1)).numpy()


def fit_graph_regressor(
    name: str,
    graphs: Sequence,
    target: str = "triangle_counting",
    epochs: int = 100,
    lr: float = 0.01,
    hidden: int = 32,
    n_layers: int = 2,
    seed: int = 0,
):
    """Train model ``name`` (sum pooling) to regress the graph attribute ``target``, on log1p scale."""
    torch = _torch()
    torch.manual_seed(seed)
    b = _batch(graphs)
    y = torch.log1p(getattr(b, target).float().view(-1))
    model = make_model(name, b.x.shape[1], 1, hidden=hidden, n_layers=n_layers, graph_level=True)
    with torch.no_grad():  # start from the mean prediction
        model.head[-1].bias.fill_(float(y.mean()))
        model.head[-1].weight.mul_(0.1)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    model.train()
    for _ in range(check_int(epochs, "epochs", minimum=1)):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(b.x, b.edge_index, b.batch).view(-1), y)
        loss.backward()
        opt.step()
    model.eval()
    return model


def graph_mae(model, graphs: Sequence, target: str = "triangle_counting") -> float:
    """Mean absolute error of a graph regressor, on the log1p scale it was trained on."""
    torch = _torch()
    b = _batch(graphs)
    with torch.no_grad():
        pred = model(b.x, b.edge_index, b.batch).view(-1)
    y = torch.log1p(getattr(b, target).float().view(-1))
    return float((pred - y).abs().mean())


def add_node_split(graphs: Sequence, train_frac: float = 0.5, seed: int = 0) -> list:
    """Copies of PyG graphs with boolean ``train_mask`` / ``test_mask`` (random, per graph)."""
    if not 0.0 < train_frac < 1.0:
        raise ValueError(f"train_frac must lie in (0, 1), got {train_frac}")
    torch = _torch()
    rng = np.random.default_rng(seed)
    out = []
    for d in graphs:
        d = d.clone()
        n = d.num_nodes
        perm = rng.permutation(n)
        m = np.zeros(n, dtype=bool)
        m[perm[: max(1, int(round(train_frac * n)))]] = True
        d.train_mask = torch.from_numpy(m)
        d.test_mask = torch.from_numpy(~m)
        out.append(d)
    return out

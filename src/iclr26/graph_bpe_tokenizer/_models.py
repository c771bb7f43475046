"""Models on the tokenizer: an unmodified BERT with mean pooling (the authors' setup), and a GIN baseline.

BERT side: ``transformers.BertModel`` (random init, small config) over ``[CLS] tokens [SEP]``, masked mean
pooling over all non-pad positions and the authors' task head ``Linear(H, H/2) -> ReLU -> Dropout ->
Linear(H/2, C)`` (``hidden_ratio=0.5``). Optional MLM pretraining (``mask_prob`` 0.09 as the authors'
default) trains a ``BertForMaskedLM`` whose encoder is then copied into the classifier.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from iclr26.validation import check_int, check_labels

from ._serialize import to_labelled
from ._tokenizer import GraphTokenizer, pad_batch


def _torch():
    import torch

    return torch


def _batches(n: int, batch_size: int, rng: np.random.Generator | None) -> list[np.ndarray]:
    order = rng.permutation(n) if rng is not None else np.arange(n)
    return [order[i : i + batch_size] for i in range(0, n, batch_size)]


class BertGraphClassifier:
    """A small random-init BERT reading graph token ids, scikit-learn style (``fit`` / ``predict``).

    Parameters
    ----------
    tokenizer : GraphTokenizer
        A fitted tokenizer; graphs are encoded with it.
    hidden_size, num_layers, num_heads, intermediate_size : int
        BERT config (authors: 512 / 4 / 4 / 2048; keep small on CPU).
    max_length : int
        Longest input in tokens, ``[CLS]``/``[SEP]`` included (also BERT's position-embedding size).
    truncation : {"warn", "error"}
        What to do with a graph whose tokens exceed ``max_length``: cut it with a ``UserWarning``
        saying how many graphs were cut (default), or raise ``ValueError``.
    augment : int
        Serializations per training graph (the authors' multiple sampling): the canonical one plus
        ``augment - 1`` random variants (random start nodes and tie orders, same graph); 1 = none.
    epochs, batch_size, lr, weight_decay : training settings (AdamW, linear warm-up then decay).
    mlm_epochs : int
        Epochs of masked-language-model pretraining on the training graphs before fine-tuning (0 = none).
    seed : int
    """

    def __init__(
        self,
        tokenizer: GraphTokenizer,
        *,
        hidden_size: int = 64,
        num_layers: int = 2,
        num_heads: int = 2,
        intermediate_size: int = 128,
        max_length: int = 512,
        truncation: str = "warn",
        augment: int = 1,
        epochs: int = 20,
        batch_size: int = 32,
        lr: float = 1e-3,
        weight_decay: float = 0.01,
        dropout: float = 0.1,
        mlm_epochs: int = 0,
        mask_prob: float = 0.09,
        seed: int = 0,
    ) -> None:
        if not isinstance(tokenizer, GraphTokenizer):
            raise ValueError(f"tokenizer must be a fitted GraphTokenizer, got {type(tokenizer).__name__}")
        self.tokenizer = tokenizer
        self.hidden_size = check_int(hidden_size, "hidden_size", minimum=2)
        self.num_layers = check_int(num_layers, "num_layers", minimum=1)
        self.num_heads = check_int(num_heads, "num_heads", minimum=1)
        if self.hidden_size % self.num_heads:
            raise ValueError("hidden_size must be a multiple of num_heads")
        self.intermediate_size = check_int(intermediate_size, "intermediate_size", minimum=1)
        self.max_length = check_int(max_length, "max_length", minimum=3)
        if truncation not in ("warn", "error"):
            raise ValueError(f"truncation must be 'warn' or 'error', got {truncation!r}")
        self.truncation = truncation
        self.augment = check_int(augment, "augment", minimum=1)
        self.epochs = check_int(epochs, "epochs", minimum=1)
        self.batch_size = check_int(batch_size, "batch_size", minimum=1)
        self.lr = float(lr)
        self.weight_decay = float(weight_decay)
        self.dropout = float(dropout)
        self.mlm_epochs = check_int(mlm_epochs, "mlm_epochs", minimum=0)
        self.mask_prob = float(mask_prob)
        self.seed = int(seed)

    def _config(self) -> Any:
        from transformers import BertConfig

        return BertConfig(
            vocab_size=self.tokenizer.vocab_size,
            hidden_size=self.hidden_size,
            num_hidden_layers=self.num_layers,
            num_attention_heads=self.num_heads,
            intermediate_size=self.intermediate_size,
            max_position_embeddings=self.max_length,
            hidden_dropout_prob=self.dropout,
            attention_probs_dropout_prob=self.dropout,
            pad_token_id=self.tokenizer.pad_token_id,
            type_vocab_size=2,
        )

    def _encode(
        self, graphs: Sequence[Any], variant_seed: int | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        seqs = self.tokenizer.encode_batch(graphs, variant_seed=variant_seed)
        too_long = sum(len(s) + 2 > self.max_length for s in seqs)
        if too_long:
            longest = max(len(s) + 2 for s in seqs)
            msg = (
                f"{too_long} of {len(seqs)} graphs have more than max_length={self.max_length} tokens "
                f"(longest {longest}, [CLS]/[SEP] included)"
            )
            if self.truncation == "error":
                raise ValueError(msg + "; raise max_length or use fewer/longer merges")
            warnings.warn(msg + ": their tokens beyond max_length are cut", UserWarning, stacklevel=3)
        return pad_batch(seqs, self.tokenizer, self.max_length)

    def _build(self, n_classes: int) -> Any:
        torch = _torch()
        from transformers import BertModel

        class _Net(torch.nn.Module):
            def __init__(self, config: Any, n_out: int, dropout: float) -> None:
                super().__init__()
                self.bert = BertModel(config, add_pooling_layer=False)
                h = config.hidden_size
                self.head = torch.nn.Sequential(
                    torch.nn.Linear(h, max(h // 2, 1)),
                    torch.nn.ReLU(),
                    torch.nn.Dropout(dropout),
                    torch.nn.Linear(max(h // 2, 1), n_out),
                )

            def forward(self, ids: Any, mask: Any) -> Any:
                out = self.bert(input_ids=ids, attention_mask=mask).last_hidden_state
                m = mask.unsqueeze(-1).to(out.dtype)
                pooled = (out * m).sum(1) / m.sum(1).clamp(min=1.0)  # mean pooling (authors' default)
                return self.head(pooled)

        return _Net(self._config(), n_classes, self.dropout)

    def _pretrain(self, ids: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> dict[str, Any]:
        torch = _torch()
        from transformers import BertForMaskedLM

        mlm = BertForMaskedLM(self._config())
        opt = torch.optim.AdamW(mlm.parameters(), lr=self.lr, weight_decay=self.weight_decay)
        tok = self.tokenizer
        specials = torch.tensor([tok.pad_token_id, tok.cls_token_id, tok.sep_token_id])
        gen = torch.Generator().manual_seed(self.seed + 1)
        mlm.train()
        for _ in range(self.mlm_epochs):
            for b in _batches(len(ids), self.batch_size, rng):
                x = torch.as_tensor(ids[b])
                am = torch.as_tensor(mask[b])
                cand = ~torch.isin(x, specials)
                pick = (torch.rand(x.shape, generator=gen) < self.mask_prob) & cand
                if not pick.any():
                    continue
                labels = torch.where(pick, x, torch.full_like(x, -100))
                x = torch.where(pick, torch.full_like(x, tok.mask_token_id), x)
                loss = mlm(input_ids=x, attention_mask=am, labels=labels).loss
                opt.zero_grad()
                loss.backward()
                opt.step()
        return mlm.bert.state_dict()

    def fit(self, graphs: Sequence[Any], y: Any) -> BertGraphClassifier:
        """Train on ``graphs`` with integer class labels ``y`` of shape (n_graphs,)."""
        torch = _torch()
        graphs = list(graphs)
        y = check_labels(y, len(graphs), "y")
        self.classes_, yi = np.unique(y, return_inverse=True)
        torch.manual_seed(self.seed)
        rng = np.random.default_rng(self.seed)
        ids, mask = self._encode(graphs)
        if self.augment > 1:  # extra random serializations of every training graph, same labels
            extra = [self._encode(graphs, variant_seed=self.seed * 1009 + j) for j in range(1, self.augment)]
            width = max(ids.shape[1], *(e[0].shape[1] for e in extra))
            pad = self.tokenizer.pad_token_id
            ids = np.concatenate(
                [
                    np.pad(a, ((0, 0), (0, width - a.shape[1])), constant_values=pad)
                    for a in [ids, *(e[0] for e in extra)]
                ]
            )
            mask = np.concatenate(
                [np.pad(m, ((0, 0), (0, width - m.shape[1]))) for m in [mask, *(e[1] for e in extra)]]
            )
            yi = np.tile(yi, self.augment)
        self.model_ = self._build(len(self.classes_))
        if self.mlm_epochs:
            self.model_.bert.load_state_dict(self._pretrain(ids, mask, rng), strict=False)
        _train_loop(
            self.model_,
            lambda b: (torch.as_tensor(ids[b]), torch.as_tensor(mask[b])),
            torch.as_tensor(yi),
            len(yi),
            self.epochs,
            self.batch_size,
            self.lr,
            self.weight_decay,
            rng,
        )
        return self

    def predict_proba(self, graphs: Sequence[Any]) -> np.ndarray:
        """Class probabilities, shape (n_graphs, n_classes)."""
        torch = _torch()
        if not hasattr(self, "model_"):
            raise ValueError("this BertGraphClassifier is not fitted yet: call fit(graphs, y) first")
        ids, mask = self._encode(list(graphs))
        self.model_.eval()
        out = []
        with torch.no_grad():
            for b in _batches(len(ids), 256, None):
                out.append(torch.softmax(self.model_(torch.as_tensor(ids[b]), torch.as_tensor(mask[b])), -1))
        return torch.cat(out).numpy() if out else np.zeros((0, len(self.classes_)))

    def predict(self, graphs: Sequence[Any]) -> np.ndarray:
        proba = self.predict_proba(graphs)
        return self.classes_[proba.argmax(1)]


def _train_loop(
    model: Any,
    make_inputs: Callable[[np.ndarray], tuple],
    y: Any,
    n: int,
    epochs: int,
    batch_size: int,
    lr: float,
    weight_decay: float,
    rng: np.random.Generator,
) -> None:
    torch = _torch()
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)
    steps = epochs * ((n + batch_size - 1) // batch_size)
    warm = max(1, int(0.1 * steps))
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min((s + 1) / warm, max(0.0, (steps - s) / max(1, steps - warm)))
    )
    loss_fn = torch.nn.CrossEntropyLoss()
    model.train()
    for _ in range(epochs):
        for b in _batches(n, batch_size, rng):
            loss = loss_fn(model(*make_inputs(b)), y[b])
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()


class GINGraphClassifier:
    """GIN baseline (PyTorch Geometric): node-label embeddings, ``GINEConv`` layers using edge labels
    (``edge_labels=False``: plain ``GINConv``), sum pooling, MLP head; scikit-learn style.
    """

    def __init__(
        self,
        *,
        hidden_size: int = 64,
        num_layers: int = 3,
        epochs: int = 60,
        batch_size: int = 32,
        lr: float = 3e-3,
        weight_decay: float = 0.0,
        edge_labels: bool = True,
        node_attr: str = "label",
        edge_attr: str = "label",
        seed: int = 0,
    ) -> None:
        self.hidden_size = check_int(hidden_size, "hidden_size", minimum=1)
        self.num_layers = check_int(num_layers, "num_layers", minimum=1)
        self.epochs = check_int(epochs, "epochs", minimum=1)
        self.batch_size = check_int(batch_size, "batch_size", minimum=1)
        self.lr = float(lr)
        self.weight_decay = float(weight_decay)
        self.edge_labels = bool(edge_labels)
        self.node_attr, self.edge_attr = node_attr, edge_attr
        self.seed = int(seed)

    def _data(self, graphs: Sequence[Any]) -> list[Any]:
        torch = _torch()
        from torch_geometric.data import Data

        out = []
        for graph in graphs:
            g = to_labelled(graph, self.node_attr, self.edge_attr)
            x = torch.tensor([self._nodes.get(lab, 0) for lab in g.node_labels], dtype=torch.long)
            src = [u for u, v, _ in g.edges] + [v for u, v, _ in g.edges]
            dst = [v for u, v, _ in g.edges] + [u for u, v, _ in g.edges]
            ea = [self._edges.get(lab, 0) for _, _, lab in g.edges] * 2
            out.append(
                Data(
                    x=x,
                    edge_index=torch.tensor([src, dst], dtype=torch.long).reshape(2, -1),
                    edge_attr=torch.tensor(ea, dtype=torch.long),
                )
            )
        return out

    def fit(self, graphs: Sequence[Any], y: Any) -> GINGraphClassifier:
        torch = _torch()
        from torch_geometric.data import Batch
        from torch_geometric.nn import GINConv, GINEConv, global_add_pool

        graphs = list(graphs)
        y = check_labels(y, len(graphs), "y")
        self.classes_, yi = np.unique(y, return_inverse=True)
        self._nodes, self._edges = {}, {}
        for graph in graphs:
            g = to_labelled(graph, self.node_attr, self.edge_attr)
            for lab in g.node_labels:
                self._nodes.setdefault(lab, len(self._nodes) + 1)  # 0 = unseen
            for _, _, lab in g.edges:
                self._edges.setdefault(lab, len(self._edges) + 1)
        torch.manual_seed(self.seed)
        rng = np.random.default_rng(self.seed)
        h, use_edges = self.hidden_size, self.edge_labels
        n_nodes, n_edges, n_layers, n_out = (
            len(self._nodes) + 1,
            len(self._edges) + 1,
            self.num_layers,
            len(self.classes_),
        )

        def mlp() -> Any:
            return torch.nn.Sequential(
                torch.nn.Linear(h, h), torch.nn.BatchNorm1d(h), torch.nn.ReLU(), torch.nn.Linear(h, h)
            )

        class _Net(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.emb = torch.nn.Embedding(n_nodes, h)
                self.eemb = torch.nn.ModuleList([torch.nn.Embedding(n_edges, h) for _ in range(n_layers)])
                self.convs = torch.nn.ModuleList(
                    [GINEConv(mlp()) if use_edges else GINConv(mlp()) for _ in range(n_layers)]
                )
                self.head = torch.nn.Sequential(
                    torch.nn.Linear(h, h), torch.nn.ReLU(), torch.nn.Linear(h, n_out)
                )

            def forward(self, batch: Any) -> Any:
                z = self.emb(batch.x)
                for conv, ee in zip(self.convs, self.eemb, strict=True):
                    if use_edges:
                        z = torch.relu(conv(z, batch.edge_index, ee(batch.edge_attr))) + z
                    else:
                        z = torch.relu(conv(z, batch.edge_index)) + z
                return self.head(global_add_pool(z, batch.batch))

        data = self._data(graphs)
        self.model_ = _Net()
        _train_loop(
            self.model_,
            lambda b: (Batch.from_data_list([data[i] for i in b]),),
            torch.as_tensor(yi),
            len(graphs),
            self.epochs,
            self.batch_size,
            self.lr,
            self.weight_decay,
            rng,
        )
        return self

    def predict_proba(self, graphs: Sequence[Any]) -> np.ndarray:
        torch = _torch()
        from torch_geometric.data import Batch

        if not hasattr(self, "model_"):
            raise ValueError("this GINGraphClassifier is not fitted yet: call fit(graphs, y) first")
        data = self._data(list(graphs))
        self.model_.eval()
        out = []
        with torch.no_grad():
            for b in _batches(len(data), 256, None):
                out.append(torch.softmax(self.model_(Batch.from_data_list([data[i] for i in b])), -1))
        return torch.cat(out).numpy() if out else np.zeros((0, len(self.classes_)))

    def predict(self, graphs: Sequence[Any]) -> np.ndarray:
        proba = self.predict_proba(graphs)
        return self.classes_[proba.argmax(1)]

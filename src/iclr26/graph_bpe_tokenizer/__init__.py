"""Graph tokenization: reversible frequency-guided serialization + BPE (ICLR 2026, "graph-bpe-tokenizer").

Public API:

- :class:`GraphSerializer` — frequency-guided Eulerian ("feuler"), plain Eulerian and random-order
  serialization of labelled graphs into symbol ids, with an exact inverse.
- :class:`GraphTokenizer` — serialization + BPE merges (Hugging Face ``tokenizers``); graphs <-> token ids,
  save/load as JSON, vocabulary size and compression ratio; :meth:`GraphTokenizer.to_transformers` gives a
  ``transformers`` ``PreTrainedTokenizerFast`` (:class:`GraphTokenizerFast`).
- :class:`SmilesSerializer`, :func:`graph_to_smiles`, :func:`smiles_to_graph` — the SMILES baseline (RDKit).
- :class:`LabelledGraph`, :func:`to_labelled`, :func:`from_pyg`, :func:`to_networkx` — the graph
  representation (networkx or PyG ``Data`` input).
- :func:`pad_batch` — ``[CLS] ... [SEP]`` padding for a Transformer.
"""

from ._data import (
    MOLECULE_EDGE_LABELS,
    MOLECULE_NODE_LABELS,
    MUTAG_EDGE_LABELS,
    MUTAG_NODE_LABELS,
    molecule_like_graphs,
    mutag_graphs,
)
from ._models import BertGraphClassifier, GINGraphClassifier
from ._serialize import (
    METHODS,
    UNKNOWN_LABEL,
    GraphSerializer,
    LabelledGraph,
    TripletStatistics,
    from_pyg,
    to_labelled,
    to_networkx,
)
from ._smiles import SmilesSerializer, graph_to_smiles, smiles_to_graph
from ._tokenizer import SPECIAL_TOKENS, TOKENIZER_METHODS, GraphTokenizer, pad_batch


def __getattr__(name: str):
    if name == "GraphTokenizerFast":  # imports transformers: loaded on first use
        from ._hf import GraphTokenizerFast

        return GraphTokenizerFast
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "MOLECULE_EDGE_LABELS",
    "MOLECULE_NODE_LABELS",
    "MUTAG_EDGE_LABELS",
    "MUTAG_NODE_LABELS",
    "BertGraphClassifier",
    "GINGraphClassifier",
    "molecule_like_graphs",
    "mutag_graphs",
    "METHODS",
    "SPECIAL_TOKENS",
    "TOKENIZER_METHODS",
    "UNKNOWN_LABEL",
    "GraphSerializer",
    "GraphTokenizer",
    "GraphTokenizerFast",
    "SmilesSerializer",
    "from_pyg",
    "graph_to_smiles",
    "smiles_to_graph",
    "LabelledGraph",
    "TripletStatistics",
    "pad_batch",
    "to_labelled",
    "to_networkx",
]

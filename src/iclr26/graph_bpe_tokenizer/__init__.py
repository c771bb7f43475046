"""Graph tokenization: reversible frequency-guided serialization + BPE (ICLR 2026, "graph-bpe-tokenizer").

Public API:

- :class:`GraphSerializer` — frequency-guided Eulerian ("feuler"), plain Eulerian and random-order
  serialization of labelled graphs into symbol ids, with an exact inverse.
- :class:`GraphTokenizer` — serialization + BPE merges (Hugging Face ``tokenizers``); graphs <-> token ids,
  save/load as JSON, vocabulary size and compression ratio.
- :class:`LabelledGraph`, :func:`to_labelled`, :func:`to_networkx` — the graph representation.
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
from ._serialize import METHODS, GraphSerializer, LabelledGraph, TripletStatistics, to_labelled, to_networkx
from ._tokenizer import SPECIAL_TOKENS, GraphTokenizer, pad_batch

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
    "GraphSerializer",
    "GraphTokenizer",
    "LabelledGraph",
    "TripletStatistics",
    "pad_batch",
    "to_labelled",
    "to_networkx",
]

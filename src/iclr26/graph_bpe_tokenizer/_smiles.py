"""SMILES serialization of molecular graphs (the paper's molecule baseline), with RDKit.

A molecule graph (node labels: element symbols; edge labels: ``"single"``, ``"double"``, ``"triple"``,
``"aromatic"``) is written as RDKit's canonical SMILES without hydrogens or sanitisation (the graph is
taken as given, valences unchecked), one symbol per character. Decoding parses the string back
(``sanitize=False``), so the round trip is exact for every graph SMILES can write (no self-loops, no
parallel edges). RDKit is the ``smiles`` extra: ``pip install 'iclr26[smiles]'``.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence
from typing import Any

import networkx as nx

from ._serialize import UNKNOWN_LABEL, to_labelled

BOND_LABELS = ("single", "double", "triple", "aromatic")


def _chem() -> Any:
    try:
        from rdkit import Chem, RDLogger
    except ImportError:  # pragma: no cover - exercised only without the extra
        raise ImportError("SMILES needs RDKit: pip install 'iclr26[smiles]' (or pip install rdkit)") from None
    RDLogger.DisableLog("rdApp.*")
    return Chem


def graph_to_smiles(graph: Any, node_attr: str = "label", edge_attr: str = "label") -> str:
    """Canonical SMILES of a molecule graph (element-symbol nodes, bond-type edges; see module docs)."""
    chem = _chem()
    g = to_labelled(graph, node_attr, edge_attr)
    bond_type = {
        "single": chem.BondType.SINGLE,
        "double": chem.BondType.DOUBLE,
        "triple": chem.BondType.TRIPLE,
        "aromatic": chem.BondType.AROMATIC,
    }
    mol = chem.RWMol()
    for lab in g.node_labels:
        try:
            atom = chem.Atom(str(lab))
        except RuntimeError:
            raise ValueError(f"SMILES needs element symbols as node labels, got {lab!r}") from None
        atom.SetNoImplicit(True)
        mol.AddAtom(atom)
    seen = set()
    for u, v, lab in g.edges:
        key = str(lab).lower()
        if key not in bond_type:
            raise ValueError(f"SMILES needs bond types {BOND_LABELS} as edge labels, got {lab!r}")
        if u == v or (min(u, v), max(u, v)) in seen:
            raise ValueError("SMILES cannot write self-loops or parallel edges")
        seen.add((min(u, v), max(u, v)))
        mol.AddBond(int(u), int(v), bond_type[key])
        if key == "aromatic":
            mol.GetBondBetweenAtoms(int(u), int(v)).SetIsAromatic(True)
            mol.GetAtomWithIdx(int(u)).SetIsAromatic(True)
            mol.GetAtomWithIdx(int(v)).SetIsAromatic(True)
    mol.UpdatePropertyCache(strict=False)
    chem.FastFindRings(mol)
    return chem.MolToSmiles(mol, canonical=True)


def smiles_to_graph(smiles: str, node_attr: str = "label", edge_attr: str = "label") -> nx.Graph:
    """The molecule graph of a SMILES string (parsed without sanitisation)."""
    chem = _chem()
    mol = chem.MolFromSmiles(smiles, sanitize=False)
    if mol is None:
        raise ValueError(f"not a valid SMILES string: {smiles!r}")
    label = {
        chem.BondType.SINGLE: "single",
        chem.BondType.DOUBLE: "double",
        chem.BondType.TRIPLE: "triple",
        chem.BondType.AROMATIC: "aromatic",
    }
    g = nx.Graph()
    for atom in mol.GetAtoms():
        g.add_node(atom.GetIdx(), **{node_attr: atom.GetSymbol()})
    for bond in mol.GetBonds():
        g.add_edge(
            bond.GetBeginAtomIdx(),
            bond.GetEndAtomIdx(),
            **{edge_attr: label.get(bond.GetBondType(), "other")},
        )
    return g


class SmilesSerializer:
    """Character-level canonical SMILES as a serializer with :class:`GraphSerializer`'s interface.

    ``fit`` collects the characters of the training graphs' SMILES (the symbol alphabet); ``serialize``
    maps a graph to character ids (a character unseen at fit becomes the unknown symbol, with a warning);
    ``deserialize`` parses them back.
    """

    method = "smiles"
    references = True

    def __init__(self, *, node_attr: str = "label", edge_attr: str = "label") -> None:
        self.node_attr = node_attr
        self.edge_attr = edge_attr
        self.symbols_: list[tuple[str, Any]] | None = None

    def fit(self, graphs: Iterable[Any], **_: Any) -> SmilesSerializer:
        chars: dict[str, None] = {}
        count = 0
        for g in graphs:
            chars.update(dict.fromkeys(graph_to_smiles(g, self.node_attr, self.edge_attr)))
            count += 1
        if count == 0:
            raise ValueError("graphs must contain at least one graph")
        self._set_symbols([("unk", None)] + [("char", c) for c in sorted(chars)])
        return self

    def _set_symbols(self, symbols: list[tuple[str, Any]]) -> None:
        self.symbols_ = symbols
        self._id = {v: i for i, (k, v) in enumerate(symbols) if k == "char"}

    @property
    def n_symbols(self) -> int:
        if self.symbols_ is None:
            raise ValueError("this SmilesSerializer is not fitted yet: call fit(graphs) first")
        return len(self.symbols_)

    def serialize(self, graph: Any, rng: Any = None) -> list[int]:
        """Character ids of the canonical SMILES (``rng`` is accepted for interface parity, unused)."""
        self.n_symbols  # noqa: B018 - raises when not fitted
        smiles = graph_to_smiles(graph, self.node_attr, self.edge_attr)
        out = [self._id.get(c, 0) for c in smiles]
        if 0 in out:
            warnings.warn(
                f"SMILES characters not seen at fit are encoded as the unknown symbol ({UNKNOWN_LABEL!r})",
                UserWarning,
                stacklevel=2,
            )
        return out

    def deserialize(self, symbols: Sequence[int]) -> nx.Graph:
        n = self.n_symbols
        chars = []
        for i, s in enumerate(symbols):
            s = int(s)
            if not 1 <= s < n:
                raise ValueError(f"symbol id {s} at position {i} is not a known SMILES character")
            chars.append(self.symbols_[s][1])
        return smiles_to_graph("".join(chars), self.node_attr, self.edge_attr)

    def get_state(self) -> dict[str, Any]:
        return {
            "method": "smiles",
            "node_attr": self.node_attr,
            "edge_attr": self.edge_attr,
            "symbols": [list(x) for x in self.symbols_ or []],
        }

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> SmilesSerializer:
        s = cls(node_attr=state["node_attr"], edge_attr=state["edge_attr"])
        s._set_symbols([tuple(x) for x in state["symbols"]])
        return s

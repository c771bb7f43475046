"""A graph family as a PyTorch Geometric ``InMemoryDataset`` (the authors ship ``GraphUniverseDataset``)."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path

from torch_geometric.data import InMemoryDataset

from ._family import GraphFamily


class GraphUniverseDataset(InMemoryDataset):
    """A :class:`GraphFamily` as a PyG ``InMemoryDataset``, collated once and stored under ``root``.

    Parameters
    ----------
    root : str or path
        Directory for the dataset; the processed file lives in ``root/<name>/processed``.
    family : GraphFamily, optional
        The family to store. Needed the first time; afterwards the stored file is loaded (its name
        hashes the family's configuration and the task, so another family never loads it by mistake).
    task : str or sequence of str, default="community_detection"
        Passed to :meth:`GraphSample.to_pyg`: one task name (its target becomes ``y``, as in the
        authors' dataset) or several (``y`` = community, one attribute per task).
    name : str, optional
        Sub-directory name; defaults to a hash of the family configuration and task.
    transform, pre_transform, pre_filter : callables, optional
        As in ``InMemoryDataset``.

    Attributes
    ----------
    num_classes : int
        For node-level community detection: the universe's K (community ids are universe ids).

    Examples
    --------
    >>> from iclr26.graphuniverse import Universe, GraphFamily, GraphUniverseDataset
    >>> import tempfile
    >>> fam = GraphFamily(Universe(K=4, feature_dim=3), n_graphs=5, n_nodes=(20, 30), seed=0)
    >>> ds = GraphUniverseDataset(tempfile.mkdtemp(), family=fam)
    >>> len(ds), ds.num_classes
    (5, 4)
    """

    def __init__(
        self,
        root: str | os.PathLike,
        family: GraphFamily | None = None,
        task: str | Sequence[str] = "community_detection",
        name: str | None = None,
        transform=None,
        pre_transform=None,
        pre_filter=None,
    ) -> None:
        if family is not None and not isinstance(family, GraphFamily):
            raise ValueError(f"family must be a GraphFamily, got {type(family).__name__}")
        self.family = family
        self.task = task if isinstance(task, str) else list(task)
        if name is None:
            if family is None:
                raise ValueError("name is needed to load a stored dataset without its family")
            key = json.dumps({"config": family.config(), "task": self.task}, sort_keys=True, default=str)
            name = "graphuniverse-" + hashlib.sha256(key.encode()).hexdigest()[:16]
        self.name = name
        self._num_classes = None if family is None else family.num_classes
        super().__init__(str(Path(root) / name), transform, pre_transform, pre_filter)
        self.load(self.processed_paths[0])
        meta = Path(self.processed_dir) / "meta.json"
        if self._num_classes is None and meta.exists():
            self._num_classes = json.loads(meta.read_text())["num_classes"]

    @property
    def raw_file_names(self) -> list[str]:
        return []

    @property
    def processed_file_names(self) -> list[str]:
        return ["data.pt"]

    def download(self) -> None:  # generated, nothing to download
        pass

    def process(self) -> None:
        if self.family is None:
            raise ValueError(f"no stored dataset under {self.processed_dir}; pass family= to create it")
        data_list = self.family.to_pyg(self.task)
        if self.pre_filter is not None:
            data_list = [d for d in data_list if self.pre_filter(d)]
        if self.pre_transform is not None:
            data_list = [self.pre_transform(d) for d in data_list]
        self.save(data_list, self.processed_paths[0])
        from ..store import atomic_write_json

        atomic_write_json(
            Path(self.processed_dir) / "meta.json",
            {"num_classes": self.family.num_classes, "config": self.family.config(), "task": self.task},
        )

    @property
    def num_classes(self) -> int:
        if self._num_classes is not None:
            return int(self._num_classes)
        return super().num_classes

"""The graph tokenizer as a Hugging Face ``PreTrainedTokenizerFast`` (for ``Trainer``-style code)."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tokenizers import Tokenizer, processors
from transformers import PreTrainedTokenizerFast

from ._tokenizer import GraphTokenizer, _char

GRAPH_FILE = "graph_tokenizer.json"


class GraphTokenizerFast(PreTrainedTokenizerFast):
    """A fitted :class:`GraphTokenizer` behind the ``transformers`` tokenizer API.

    Build it with :meth:`GraphTokenizer.to_transformers`. Calling it on a graph, or a list of graphs
    (networkx, PyG ``Data`` or :class:`LabelledGraph`), returns ``input_ids`` / ``attention_mask`` with
    ``[CLS] ... [SEP]`` and every ``transformers`` option (``padding``, ``truncation``, ``max_length``,
    ``return_tensors``); ``pad``, ``get_vocab``, ``convert_ids_to_tokens`` and collators work as for any
    fast tokenizer. ``save_pretrained`` writes ``tokenizer.json`` and ``tokenizer_config.json`` plus
    ``graph_tokenizer.json`` (the serializer state), which ``from_pretrained`` reads back.
    :meth:`decode_graph` rebuilds a graph from ids.
    """

    def __init__(self, *args: Any, graph_tokenizer: GraphTokenizer | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.graph_tokenizer = graph_tokenizer

    @classmethod
    def from_graph_tokenizer(
        cls, tokenizer: GraphTokenizer, model_max_length: int = 512
    ) -> GraphTokenizerFast:
        """Wrap a fitted :class:`GraphTokenizer`."""
        if not isinstance(tokenizer, GraphTokenizer):
            raise ValueError(f"tokenizer must be a fitted GraphTokenizer, got {type(tokenizer).__name__}")
        tokenizer._check_fitted()
        hf = Tokenizer.from_str(tokenizer._hf.to_str())
        vocab = hf.get_vocab()
        hf.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]",
            pair="[CLS] $A [SEP] $B [SEP]",
            special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])],
        )
        return cls(
            tokenizer_object=hf,
            graph_tokenizer=tokenizer,
            pad_token="[PAD]",
            cls_token="[CLS]",
            sep_token="[SEP]",
            mask_token="[MASK]",
            model_max_length=model_max_length,
        )

    def _strings(self, graphs: Sequence[Any]) -> list[str]:
        if self.graph_tokenizer is None:
            raise ValueError(
                "this GraphTokenizerFast has no graph tokenizer: build it with to_transformers()"
            )
        ser = self.graph_tokenizer.serializer_
        return ["".join(map(_char, ser.serialize(g))) for g in graphs]

    def __call__(self, graphs: Any, *args: Any, **kwargs: Any) -> Any:
        """Encode one graph or a list of graphs (strings pass through unchanged)."""
        if isinstance(graphs, str) or (
            isinstance(graphs, list | tuple) and graphs and isinstance(graphs[0], str)
        ):
            return super().__call__(graphs, *args, **kwargs)
        if isinstance(graphs, list | tuple):
            return super().__call__(self._strings(graphs), *args, **kwargs)
        return super().__call__(self._strings([graphs])[0], *args, **kwargs)

    def decode_graph(self, ids: Sequence[int]) -> Any:
        """The graph encoded by ``ids`` (special and padding tokens are skipped)."""
        if self.graph_tokenizer is None:
            raise ValueError(
                "this GraphTokenizerFast has no graph tokenizer: build it with to_transformers()"
            )
        ids = ids.tolist() if hasattr(ids, "tolist") else list(ids)
        return self.graph_tokenizer.decode(ids)

    def save_pretrained(self, save_directory: str | os.PathLike, *args: Any, **kwargs: Any) -> tuple:
        files = super().save_pretrained(save_directory, *args, **kwargs)
        path = Path(save_directory) / GRAPH_FILE
        self.graph_tokenizer.save(path)
        return (*files, str(path))

    @classmethod
    def from_pretrained(cls, path: str | os.PathLike, *args: Any, **kwargs: Any) -> GraphTokenizerFast:
        """Load a tokenizer written by :meth:`save_pretrained` from the folder ``path``.

        ``graph_tokenizer.json`` holds everything (serializer state and BPE merges) and is what is read;
        ``model_max_length`` comes from ``tokenizer_config.json`` unless given.
        """
        folder = Path(path)
        graph_file = folder / GRAPH_FILE
        if not graph_file.exists():
            raise ValueError(f"{path} holds no {GRAPH_FILE}: not saved by GraphTokenizerFast.save_pretrained")
        max_len = kwargs.get("model_max_length")
        config = folder / "tokenizer_config.json"
        if max_len is None and config.exists():
            max_len = json.loads(config.read_text(encoding="utf-8")).get("model_max_length")
        return cls.from_graph_tokenizer(GraphTokenizer.load(graph_file), int(max_len or 512))

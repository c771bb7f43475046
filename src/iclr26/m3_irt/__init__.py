"""M3-IRT: multimodal multidimensional item response theory (Uebayashi et al., ICLR 2026).

Decomposes model ability and item difficulty into base, text-only, image-only and cross-modal parts
from responses to item variants (full, ``<no_image>``, ``<no_question>``, ``<no_info>``), and builds
compact benchmark subsets by D-optimal Fisher-information item selection.
"""

from ._data import (
    VARIANTS,
    ResponseMatrix,
    is_low_quality,
    merge_responses,
    parse_variant,
    read_responses,
    shared_data_dir,
    validation_split,
)
from ._models import (
    ABILITY_NAMES,
    M2IRT,
    M3IRT,
    SOLVERS,
    TwoPL,
    WeakIdentificationWarning,
    as_response_matrix,
)
from ._select import ALL_METHODS, adaptive_subset, compact_subset, ranking_fidelity
from ._simulate import simulate_m3irt

__all__ = [
    "ABILITY_NAMES",
    "ALL_METHODS",
    "M2IRT",
    "M3IRT",
    "VARIANTS",
    "ResponseMatrix",
    "SOLVERS",
    "TwoPL",
    "WeakIdentificationWarning",
    "adaptive_subset",
    "as_response_matrix",
    "compact_subset",
    "is_low_quality",
    "merge_responses",
    "parse_variant",
    "ranking_fidelity",
    "read_responses",
    "shared_data_dir",
    "simulate_m3irt",
    "validation_split",
]

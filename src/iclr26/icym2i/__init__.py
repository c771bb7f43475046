"""ICYM2I: performance and information gain of a modality under missingness shift, corrected by IPW.

Choi, Jeanselme, Elias & Joshi (ICLR 2026), "ICYM2I: The illusion of multimodal informativeness under
missingness". The source environment observes a second modality only for some samples; naive estimates
on the complete cases are biased for the target environment where every sample has both. ICYM2I fits a
missingness model P(observed | always-observed covariates) and corrects performance metrics, the
information gain of the modality and its partial information decomposition (PID) with inverse
probability weights (IPW).

Public API
----------
Missingness: :func:`simulate_missingness` (MCAR / MAR / MNAR), :func:`fit_missingness_model`,
:func:`ipw_from_propensity`, :func:`effective_sample_size`, :class:`IPWeights`,
:class:`ExtremeWeightsWarning`, :class:`PositivityWarning`.
Evaluation: :func:`evaluate`, :func:`weighted_metric`, :func:`bootstrap`, :class:`Estimate`,
:func:`information_gain`, :func:`conditional_mutual_information`, :func:`fit_weighted`,
:func:`weighted_mean_loss`.
Information decomposition: :func:`broja_pid`, :class:`PID`, :func:`pid_from_samples`,
:func:`pid_bootstrap`, :func:`joint_table`, :func:`conditional_mi_from_samples`, :func:`discretize`,
:func:`mutual_information`; continuous modalities: :func:`gaussian_pid`,
:func:`gaussian_pid_from_covariance`.
"""

from ._gain import (
    PID_KEYS,
    conditional_mi_from_samples,
    discretize,
    joint_table,
    pid_bootstrap,
    pid_from_samples,
)
from ._gaussian import gaussian_pid, gaussian_pid_from_covariance
from ._metrics import (
    METRICS,
    Estimate,
    bootstrap,
    conditional_mutual_information,
    evaluate,
    fit_weighted,
    information_gain,
    weighted_mean_loss,
    weighted_metric,
)
from ._missingness import MECHANISMS, Missingness, simulate_missingness
from ._pid import PID, broja_pid, min_synergy_distribution, mutual_information
from ._weights import (
    ExtremeWeightsWarning,
    IPWeights,
    PositivityWarning,
    effective_sample_size,
    fit_missingness_model,
    ipw_from_propensity,
)

__all__ = [
    "MECHANISMS",
    "METRICS",
    "PID",
    "PID_KEYS",
    "PositivityWarning",
    "Estimate",
    "ExtremeWeightsWarning",
    "IPWeights",
    "Missingness",
    "bootstrap",
    "broja_pid",
    "conditional_mi_from_samples",
    "conditional_mutual_information",
    "discretize",
    "effective_sample_size",
    "evaluate",
    "fit_missingness_model",
    "fit_weighted",
    "gaussian_pid",
    "gaussian_pid_from_covariance",
    "information_gain",
    "ipw_from_propensity",
    "joint_table",
    "min_synergy_distribution",
    "mutual_information",
    "pid_bootstrap",
    "pid_from_samples",
    "simulate_missingness",
    "weighted_mean_loss",
    "weighted_metric",
]

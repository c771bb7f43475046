"""mrf-calibration: Markov-random-field calibration of token-level detection scores.

A plug-in for metric-based detectors of machine-generated text (Log-Likelihood, Log-Rank, Entropy,
Fast-DetectGPT): token scores are smoothed along the text by a two-state Markov random field solved with
a few mean-field steps (Neighbor Similarity), early tokens are down-weighted (Initial Instability), and six
parameters are trained on labelled texts. The algorithm follows the authors' ``improve_mrf.py`` /
``improve_mrf_fastgpt.py`` (repository ``Daftstone/MRF_Calibration``); see ``docs/mrf-calibration.md``.

>>> from iclr26.mrf_calibration import MRFCalibrator, detection_metrics
>>> cal = MRFCalibrator().fit(train_scores, y_train, val=(val_scores, y_val))   # doctest: +SKIP
>>> detection_metrics(y_test, cal.predict_proba(test_scores)[:, 1])              # doctest: +SKIP
"""

from ._calibrator import MRFCalibrator, check_scores
from ._detectrl import DetectRLRecord, Split, detectrl_split, load_detectrl, process_spaces
from ._metrics import detection_metrics
from ._scores import KINDS, token_scores

__all__ = [
    "KINDS",
    "DetectRLRecord",
    "MRFCalibrator",
    "Split",
    "check_scores",
    "detection_metrics",
    "detectrl_split",
    "load_detectrl",
    "process_spaces",
    "token_scores",
]

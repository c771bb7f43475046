"""Novelty of LLM generations: originality (unseen n-grams) x quality, as a harmonic mean.

Padmakumar, Yueh-Han, Pan, Chen, He, "Beyond Memorization: Evaluating the Novelty of LLM Generations",
ICLR 2026 (arXiv:2504.09389). The authors' code is not public; this follows the paper's definitions:

- :class:`NgramIndex`: exact n-gram counts of a training corpus (sorted packed keys of vocabulary ids);
  :class:`InfiniGramIndex`: the same counts from a local infini-gram byte index (optional peer);
- :class:`SuffixArrayIndex`: the same counts for n-grams of any order from one suffix array
  (``pydivsufsort``);
- :func:`originality`: per-sample fraction of unseen n-grams (prompt n-grams excluded, too-short
  samples NaN);
- :func:`fluency_score`: a deterministic quality score from a reference trigram LM of the corpus;
  :func:`sonnet_form_score`: lines, metre and rhyme of a sonnet (CMU dictionary);
  :func:`quality_judge`: an LLM judge's expected 0-5 rubric score from its digit probabilities;
- :func:`novelty`: the harmonic mean of originality and quality; :func:`novelty_report`: means and
  paired t-tests against a reference system; :func:`frontier_plot`: the (O, Q) plane.
"""

from ._form import sonnet_form_score
from ._infini import InfiniGramIndex
from ._judge import RUBRICS, quality_judge
from ._metric import fluency_score, novelty, novelty_report, originality
from ._ngram import NgramIndex
from ._plot import frontier_plot
from ._suffix import SuffixArrayIndex

__all__ = [
    "RUBRICS",
    "InfiniGramIndex",
    "NgramIndex",
    "SuffixArrayIndex",
    "fluency_score",
    "frontier_plot",
    "novelty",
    "novelty_report",
    "originality",
    "quality_judge",
    "sonnet_form_score",
]

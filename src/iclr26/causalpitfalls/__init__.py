"""CausalPitfalls: statistical causal-inference pitfalls posed to language models, in two protocols
(direct prompting; code-assisted prompting with the code run in :mod:`iclr26.sandbox`), judged by the
authors' LLM-judge prompt or our deterministic rubric judge, aggregated into causal reliability.

Reference: Du et al., "Ice Cream Doesn't Cause Drowning: Benchmarking LLMs Against Statistical Pitfalls
in Causal Inference" (arXiv 2505.13770, ICLR 2026 submission); github.com/dudududuu/CausalPitfalls.
"""

from ._analysts import ANALYST_CHALLENGES, analyst_code, check_answer_keys, ipw_effect, reference_values
from ._benchmark import PROTOCOLS, BenchmarkResult, item_rng, run_benchmark
from ._data import CATEGORIES, CATEGORY_OF, CHALLENGES, DIFFICULTIES, Item, load_challenges
from ._execute import Analysis, analysis_script, execute_analysis
from ._generate import GENERATED_CHALLENGES, generate_challenges
from ._judges import DECIDABLE, LLMJudge, RubricJudge, Verdict, parse_scores, rubric_score
from ._prompts import code_prompt, direct_prompt, extract_code, judge_messages, results_prompt
from ._rubric import fill_rubric
from ._scores import FAILURE_REGEX, causal_reliability, code_failure_rate, failure_rate, normalized_score

__all__ = [
    "ANALYST_CHALLENGES",
    "CATEGORIES",
    "CATEGORY_OF",
    "CHALLENGES",
    "DECIDABLE",
    "DIFFICULTIES",
    "FAILURE_REGEX",
    "GENERATED_CHALLENGES",
    "PROTOCOLS",
    "Analysis",
    "BenchmarkResult",
    "Item",
    "LLMJudge",
    "RubricJudge",
    "Verdict",
    "analysis_script",
    "analyst_code",
    "causal_reliability",
    "check_answer_keys",
    "code_failure_rate",
    "code_prompt",
    "direct_prompt",
    "execute_analysis",
    "extract_code",
    "failure_rate",
    "fill_rubric",
    "generate_challenges",
    "ipw_effect",
    "item_rng",
    "judge_messages",
    "load_challenges",
    "normalized_score",
    "parse_scores",
    "reference_values",
    "results_prompt",
    "rubric_score",
    "run_benchmark",
]

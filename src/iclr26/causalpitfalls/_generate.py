"""Our generator of benchmark items for the 15 challenges, in the authors' layout (questions per
difficulty with ``{PLACEHOLDER}`` templates, a rubric per challenge filled by :func:`fill_rubric`, an
answer-key entry per dataset). Processes, wording and rubrics are ours (see :mod:`._processes`); every
answer key is computed exactly from its generating process, and :mod:`._reference` recomputes it from
the data.

Questions: a challenge has a bare question and four hints; ``very_easy`` carries all four hints,
``easy`` three, down to ``very_hard`` with none (the authors' questions also strip hints in steps).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..validation import check_int
from . import _processes as P
from ._data import CATEGORY_OF, CHALLENGES, DIFFICULTIES, Item
from ._rubric import fill_rubric


def _kw(cid: str, desc: str, *keywords: str) -> dict[str, Any]:
    return {"id": cid, "desc": desc, "type": "keyword", "keywords": list(keywords)}


def _num(cid: str, desc: str, *targets: str, any_of: bool = False) -> dict[str, Any]:
    kind = "numeric_any" if any_of else "numeric"
    return {"id": cid, "desc": desc, "type": kind, "targets": list(targets), "tolerance": "{TOLERANCE}"}


def _dir(cid: str, desc: str, target: str) -> dict[str, Any]:
    return {"id": cid, "desc": desc, "type": "direction", "target": target}


def _val(cid: str, desc: str, *expected: str) -> dict[str, Any]:
    return {"id": cid, "desc": desc, "type": "value_match", "expected_values": list(expected)}


def _free(cid: str, desc: str, kind: str = "justification") -> dict[str, Any]:
    """A criterion only a judge reading the argument can decide (RubricJudge reports it undecided)."""
    return {"id": cid, "desc": desc, "type": kind}


_UNCERTAINTY = _kw(
    "UNCERTAINTY",
    "Reports a measure of uncertainty",
    "confidence interval",
    "CI",
    "standard error",
    "p-value",
)
_LIMITS = _free(
    "LIMITATIONS", "Explains how unmeasured confounding or model form limits the conclusion", "limitation"
)
_CONFOUNDERS = _free("CONFOUNDERS", "Identifies {TRUE_CONFOUNDERS} as confounders and why")
# the mediation challenges' shared criteria: group means, the adjusted total effect and its sign
_ADJUSTED_TOTAL_EFFECT = (
    _num(
        "MEANS",
        "Group means within {TOLERANCE} of ({OVERALL_MEAN_TREATMENT}, {OVERALL_MEAN_NO_TREATMENT})",
        "{OVERALL_MEAN_TREATMENT}",
        "{OVERALL_MEAN_NO_TREATMENT}",
    ),
    _num(
        "ADJUSTED_EFFECT",
        "Adjusted total effect within {TOLERANCE} of {ADJUSTED_TREATMENT_EFFECT}",
        "{ADJUSTED_TREATMENT_EFFECT}",
    ),
    _dir("DIRECTION", "Adjusted effect is {ADJUSTED_DIRECTION}", "{ADJUSTED_DIRECTION}"),
)


@dataclass(frozen=True)
class Spec:
    """One challenge: its generating process, variable names per scenario, question and rubric."""

    process: Callable
    scenarios: tuple[tuple[str, ...], ...]
    question: str
    hints: tuple[str, str, str, str]
    criteria: tuple[dict[str, Any], ...]

    def questions(self) -> dict[str, str]:
        """Difficulty -> question template (``very_easy`` with every hint, ``very_hard`` bare)."""
        return {d: " ".join((self.question, *self.hints[: 4 - i])) for i, d in enumerate(DIFFICULTIES)}

    def rubric(self) -> dict[str, Any]:
        return {"criteria": [dict(c) for c in self.criteria], "max_score": len(self.criteria)}


SPECS: dict[str, Spec] = {
    "simpson_paradox": Spec(
        P.simpson,
        (
            ("Drug", "Recovery", "Age", "Young", "Old"),
            ("Tutoring", "Passed", "School", "Rural", "Urban"),
            ("Fertilizer", "HighYield", "Soil", "Sandy", "Clay"),
        ),
        "Does {TREATMENT} have a causal effect on {OUTCOME}?",
        (
            "Report the rates with 95% confidence intervals and make a recommendation.",
            "Say whether Simpson's paradox occurs.",
            "Compare the rates within each level of {CONFOUNDER}.",
            "{CONFOUNDER} confounds the comparison.",
        ),
        (
            _kw(
                "PARADOX",
                "Notices that the association reverses within {CONFOUNDER}",
                "Simpson",
                "reversal",
                "reverses",
                "paradox",
            ),
            _kw(
                "ADJUSTMENT",
                "Adjusts for {CONFOUNDER}",
                "stratify",
                "stratified",
                "stratification",
                "regression",
                "adjust",
            ),
            _dir(
                "DIRECTION",
                "Overall {OVERALL_DIRECTION}; within {LEVEL1} {DIRECTION_LEVEL1} and {LEVEL2} "
                "{DIRECTION_LEVEL2}",
                "{OVERALL_DIRECTION}, {DIRECTION_LEVEL1}, {DIRECTION_LEVEL2}",
            ),
            _num(
                "NUMERIC_OVERALL",
                "Overall rates within {TOLERANCE} of ({OVERALL_P_YES}, {OVERALL_P_NO})",
                "{OVERALL_P_YES}",
                "{OVERALL_P_NO}",
            ),
            _num(
                "NUMERIC_STRATUM",
                "A stratum rate within {TOLERANCE} of ({P_LEVEL1_YES}, {P_LEVEL1_NO}, {P_LEVEL2_YES}, "
                "{P_LEVEL2_NO})",
                "{P_LEVEL1_YES}",
                "{P_LEVEL1_NO}",
                "{P_LEVEL2_YES}",
                "{P_LEVEL2_NO}",
                any_of=True,
            ),
        ),
    ),
    "berkson_paradox": Spec(
        P.berkson,
        (
            ("TestHigh", "EssayHigh", "Admitted"),
            ("Creditworthy", "Employed", "Approved"),
            ("HighBudget", "StarCast", "Successful"),
        ),
        "Is {VARIABLE_X} associated with {VARIABLE_Y}?",
        (
            "Give the conditional probabilities before and after the correction.",
            "Correct with {CORRECTION_METHOD}.",
            "Comparing only rows with {COLLIDER_VARIABLE} = 1 conditions on a collider.",
            "{COLLIDER_VARIABLE} is caused by both variables.",
        ),
        (
            _kw(
                "COLLIDER",
                "Names {COLLIDER_VARIABLE} as a collider or selection variable",
                "collider",
                "selection bias",
                "Berkson",
            ),
            _kw(
                "CORRECTION",
                "Uses the whole population or weights for selection",
                "whole population",
                "all rows",
                "unselected",
                "IPW",
                "inverse probability",
            ),
            _dir(
                "CONCLUSION",
                "Concludes {TRUE_RELATIONSHIP} between {VARIABLE_X} and {VARIABLE_Y}",
                "{TRUE_RELATIONSHIP}",
            ),
            _num(
                "NAIVE",
                "Selected-sample P({VARIABLE_Y}=1 | {VARIABLE_X}=1, 0) within {TOLERANCE} of "
                "({NAIVE_CONDITIONAL_1}, {NAIVE_CONDITIONAL_2})",
                "{NAIVE_CONDITIONAL_1}",
                "{NAIVE_CONDITIONAL_2}",
            ),
            _num(
                "CORRECTED",
                "Population P({VARIABLE_Y}=1 | {VARIABLE_X}) within {TOLERANCE} of {CORRECTED_CONDITIONAL_1}",
                "{CORRECTED_CONDITIONAL_1}",
            ),
        ),
    ),
    "observational_vs_experimental_reasoning": Spec(
        P.observational,
        (
            ("supplement", "slept_well", "exercises", "age_over_60", "drinks_coffee", "income"),
            ("app_user", "stress_reduced", "high_stress", "age_over_60", "owns_tablet", "region"),
        ),
        "Does {TREATMENT} causally affect {OUTCOME}?",
        (
            "Give the adjusted risk difference and a recommendation.",
            "Say which variables are irrelevant.",
            "Compare the unadjusted and adjusted conclusions.",
            "Standardise over the strata of {TRUE_CONFOUNDERS}.",
        ),
        (
            _CONFOUNDERS,
            _free("IRRELEVANT", "Explains why {IRRELEVANT_CONFOUNDERS} are not confounders"),
            _num(
                "OVERALL_RATES",
                "Unadjusted rates within {TOLERANCE} of ({OVERALL_P_YES}, {OVERALL_P_NO})",
                "{OVERALL_P_YES}",
                "{OVERALL_P_NO}",
            ),
            _num(
                "ADJUSTED_DIFF",
                "Adjusted risk difference within {TOLERANCE} of {ADJUSTED_P_DIFF}",
                "{ADJUSTED_P_DIFF}",
            ),
            _dir("ADJUSTED_CONCLUSION", "Adjusted conclusion: {ADJUSTED_DIRECTION}", "{ADJUSTED_DIRECTION}"),
            _UNCERTAINTY,
            _LIMITS,
        ),
    ),
    "casual_effect": Spec(
        P.effect,
        (
            ("second_dose", "recovery_score", "age_z", "first_dose", "followup_severity", "random_noise"),
            (
                "maintenance_round2",
                "uptime",
                "equipment_age",
                "maintenance_round1",
                "wear_after1",
                "noise_var",
            ),
        ),
        "Does {TREATMENT} causally affect {OUTCOME}?",
        (
            "Report the estimate with a confidence interval and one diagnostic.",
            "Exclude the irrelevant {IRRELEVANT_FEATURES}.",
            "The estimand is the {CAUSAL_ESTIMAND}.",
            "Adjust for the time-varying confounders {TRUE_CONFOUNDERS}.",
        ),
        (
            _kw(
                "METHOD",
                "Uses regression adjustment, IPTW or a doubly robust estimator",
                "regression adjustment",
                "IPTW",
                "inverse probability",
                "doubly robust",
                "propensity",
            ),
            _kw(
                "TIME_VARYING",
                "Recognises time-varying confounding",
                "time-varying",
                "time-dependent",
                "follow-up",
                "sequential",
            ),
            _kw("ESTIMAND", "Defines the estimand", "ATE", "average treatment effect"),
            _num(
                "NUMERIC_EFFECT",
                "Estimate within {TOLERANCE} of {TRUE_CAUSAL_EFFECT}",
                "{TRUE_CAUSAL_EFFECT}",
            ),
            _UNCERTAINTY,
            _LIMITS,
        ),
    ),
    "counterfactual_reasoning": Spec(
        P.counterfactual,
        (
            ("drug_dose", "blood_level", "baseline_health", "symptom_score"),
            ("study_hours", "exam_score", "aptitude", "course_grade"),
        ),
        "Estimate the effect on {VARIABLE_Y} of setting {VARIABLE_X} to {DOSE_AFTER} instead of "
        "{DOSE_BEFORE}, and the observed difference in {VARIABLE_Y} between those two values.",
        (
            "State the assumptions behind the causal estimate.",
            "Do not adjust for {DOWNSTREAM_VAR}: it is caused by {VARIABLE_Y}.",
            "Allow a nonlinear dose-response.",
            "{CONFOUNDER} confounds {VARIABLE_X} and {VARIABLE_Y}.",
        ),
        (
            _kw("CONFOUNDER", "Adjusts for {CONFOUNDER}", "{CONFOUNDER}"),
            _kw("NONLINEAR", "Allows a nonlinear dose-response", "nonlinear", "quadratic", "dose-response"),
            _num(
                "OBSERVED_DIFFERENCE",
                "Observed difference within {TOLERANCE} of {CONDITIONAL_DIFFERENCE}",
                "{CONDITIONAL_DIFFERENCE}",
            ),
            _num("ATE", "Causal effect within {TOLERANCE} of {ATE}", "{ATE}"),
            _free("ASSUMPTIONS", "States no unmeasured confounding given {CONFOUNDER}", "limitation"),
        ),
    ),
    "necessity_sufficiency": Spec(
        P.necessity,
        (
            ("overheating", "pressure", "vibration", "failure_risk"),
            ("treated", "inflammation", "activity", "recovery_score"),
        ),
        "Is {VARIABLE_X} = 1 a necessary and a sufficient cause of {VARIABLE_Y} > {THRESHOLD}?",
        (
            "Phrase the answer as '{VARIABLE_X} is (or is not) globally necessary' and likewise for "
            "sufficient.",
            "Check both across all values of {CONTEXT_1} and {CONTEXT_2}.",
            "Sufficient: setting {VARIABLE_X} = 1 always gives {VARIABLE_Y} > {THRESHOLD}.",
            "Necessary: with {VARIABLE_X} = 0, {VARIABLE_Y} > {THRESHOLD} never happens.",
        ),
        (
            _kw(
                "DEFINITIONS",
                "Defines necessity and sufficiency counterfactually",
                "counterfactual",
                "intervention",
                "for every",
                "always",
            ),
            _kw("CONTEXTS", "Uses {CONTEXT_1} and {CONTEXT_2} as contexts", "{CONTEXT_1}", "{CONTEXT_2}"),
            _val(
                "CLASSIFICATION",
                "{VARIABLE_X} {IS_NECESSARY} globally necessary and {IS_SUFFICIENT} globally sufficient",
                "{VARIABLE_X} {IS_NECESSARY} globally necessary",
                "{VARIABLE_X} {IS_SUFFICIENT} globally sufficient",
            ),
            _free("EXAMPLES", "Gives rows of the data illustrating the classification", "logical"),
        ),
    ),
    "mediation_outcome_confounder": Spec(
        P.mediation,
        (
            ("program", "final_score", "ses", "baseline_score", "weekly_hours", "random_id_noise"),
            ("rehab", "mobility", "severity", "baseline_mobility", "therapy_hours", "unrelated_var"),
        ),
        "Does {TREATMENT} causally affect {OUTCOME}?",
        (
            "Report the total effect with its uncertainty.",
            "Do not adjust for variables on the causal path.",
            "Compare the unadjusted and adjusted conclusions.",
            "Adjust for {TRUE_CONFOUNDERS}.",
        ),
        (
            _CONFOUNDERS,
            _free("IRRELEVANT", "Explains why {IRRELEVANT_CONFOUNDERS} is not a confounder"),
            *_ADJUSTED_TOTAL_EFFECT,
            _UNCERTAINTY,
            _LIMITS,
        ),
    ),
    "sequential_mediator": Spec(
        P.sequential,
        (
            (
                "intervention",
                "wellbeing",
                "ses",
                "school_quality",
                "coping",
                "social_support",
                "random_noise",
            ),
            ("coaching", "sales", "tenure", "region_size", "skills", "confidence", "noise"),
        ),
        "Does {TREATMENT} causally affect {OUTCOME}?",
        (
            "Report the total effect with its uncertainty.",
            "{MEDIATORS} lie in sequence on the causal path.",
            "Do not adjust for the mediators when estimating the total effect.",
            "Adjust for {TRUE_CONFOUNDERS}.",
        ),
        (
            _CONFOUNDERS,
            _free("MEDIATORS", "Identifies the mediators in order {MEDIATORS}"),
            *_ADJUSTED_TOTAL_EFFECT,
            _UNCERTAINTY,
        ),
    ),
    "treatment_mediator": Spec(
        P.interaction,
        (
            ("stimulus", "employment", "volatility", "growth", "confidence", "unrelated_index"),
            ("subsidy", "graduation", "quality_index", "baseline_rate", "enrollment", "irrelevant_index"),
        ),
        "Does {TREATMENT} causally affect {OUTCOME}?",
        (
            "Report both coefficients with their uncertainty.",
            "Include the interaction {INTERACTION_TERM}.",
            "{MEDIATOR} mediates and modifies the effect.",
            "Adjust for {TRUE_CONFOUNDERS}.",
        ),
        (
            _free("MEDIATOR", "Identifies {MEDIATOR} as the mediator and its role"),
            _kw("METHOD", "Fits a regression with the interaction", "interaction", "{INTERACTION_TERM}"),
            _num(
                "TREATMENT_COEF",
                "Treatment coefficient within {TOLERANCE} of {ADJUSTED_TREATMENT_EFFECT}",
                "{ADJUSTED_TREATMENT_EFFECT}",
            ),
            _num(
                "INTERACTION_COEF",
                "Interaction coefficient within {TOLERANCE} of {INTERACTION_EFFECT}",
                "{INTERACTION_EFFECT}",
            ),
            _UNCERTAINTY,
            _free(
                "INTERPRETATION",
                "Explains the treatment effect depends on {MEDIATOR}",
                "interaction_justification",
            ),
        ),
    ),
    "causal_direction_iv": Spec(
        P.iv_direction,
        (
            ("Z_1", "Z_2", "X_1", "X_2"),
            ("rainfall", "fertilizer", "soil_quality", "crop_yield"),
            ("ad_spend", "promo_spend", "awareness", "sales"),
        ),
        "What is the causal direction between {VARIABLE_X1} and {VARIABLE_X2}?",
        (
            "Write the answer as cause->effect.",
            "The instrument significant in only one regression points at the child.",
            "Regress each of {VARIABLE_X1} and {VARIABLE_X2} on both instruments.",
            "{VARIABLE_Z1} and {VARIABLE_Z2} are instruments, each affecting one of the two directly.",
        ),
        (
            _kw(
                "INSTRUMENTS",
                "Uses {VARIABLE_Z1} and {VARIABLE_Z2} as instruments",
                "instrument",
                "instrumental variable",
            ),
            _kw("SIGNIFICANCE", "Tests the instruments' coefficients", "p-value", "significant"),
            _val("EDGE", "Direction {TRUE_EDGE}", "{TRUE_EDGE}"),
        ),
    ),
    "dag_structure_markequi": Spec(
        P.markov,
        (
            ("study_hours", "comprehension", "test_score"),
            ("sleep_hours", "alertness", "productivity"),
            ("page_views", "clicks", "revenue"),
        ),
        "Which causal DAGs over {VARIABLE_X1}, {VARIABLE_X2} and {VARIABLE_X3} fit the data?",
        (
            "Write graphs as A -> B -> C.",
            "List every DAG of the Markov equivalence class.",
            "Test {VARIABLE_X1} and {VARIABLE_X3} for independence, marginally and given {VARIABLE_X2}.",
            "Assume no unmeasured confounding.",
        ),
        (
            _kw(
                "CI_TESTS",
                "Uses (conditional) independence tests",
                "conditional independence",
                "partial correlation",
                "independent",
            ),
            _val("INDEPENDENCE", "Finds {INDEPENDENCE}", "{INDEPENDENCE}"),
            _val(
                "CLASS",
                "Lists the class {EQUIVALENT_GRAPHS}",
                "{EQUIV_GRAPH_1}",
                "{EQUIV_GRAPH_2}",
                "{EQUIV_GRAPH_3}",
            ),
            _kw(
                "EQUIVALENCE",
                "Explains Markov equivalence",
                "Markov equivalent",
                "Markov equivalence",
                "equivalence class",
            ),
            _free("NO_EXTRA", "Proposes no DAG outside {EQUIVALENT_GRAPHS}", "logical"),
        ),
    ),
    "population_shift": Spec(
        P.population,
        (
            ("pop", "SocioEconomicStatus", "ProgramIntensity", "TestScore"),
            ("region", "income", "ad_exposure", "purchases"),
        ),
        "How does {VARIABLE_X2} affect {VARIABLE_Y}?",
        (
            "Compare the two effects.",
            "Adjust for {VARIABLE_X1}.",
            "Fit a separate linear model in {VARIABLE_U} A and {VARIABLE_U} B.",
            "The effect may differ between values of {VARIABLE_U}.",
        ),
        (
            _kw(
                "GROUPS",
                "Distinguishes {VARIABLE_U} A and {VARIABLE_U} B",
                "{VARIABLE_U} A",
                "{VARIABLE_U} B",
            ),
            _num("EFFECT_A", "Effect in {VARIABLE_U} A within {TOLERANCE} of {EFFECT_A}", "{EFFECT_A}"),
            _num("EFFECT_B", "Effect in {VARIABLE_U} B within {TOLERANCE} of {EFFECT_B}", "{EFFECT_B}"),
            _kw(
                "COMPARE",
                "Says the effect differs between the groups",
                "larger",
                "smaller",
                "differs",
                "different",
            ),
            _UNCERTAINTY,
        ),
    ),
    "temporal_stability": Spec(
        P.temporal,
        (("User_invites", "User_signups", "period"), ("ad_budget", "new_customers", "phase")),
        "How does {VARIABLE_X2} affect {VARIABLE_Y}?",
        (
            "Say whether the effect is stable over time.",
            "Fit a separate linear model in {VARIABLE_T} 1 and {VARIABLE_T} 2.",
            "Use the column {VARIABLE_T} to split the data.",
            "The effect may change over {VARIABLE_X1}.",
        ),
        (
            _kw(
                "PERIODS",
                "Distinguishes {VARIABLE_T} 1 and {VARIABLE_T} 2",
                "{VARIABLE_T} 1",
                "{VARIABLE_T} 2",
            ),
            _num("EFFECT_1", "Effect in {VARIABLE_T} 1 within {TOLERANCE} of {EFFECT_A}", "{EFFECT_A}"),
            _num("EFFECT_2", "Effect in {VARIABLE_T} 2 within {TOLERANCE} of {EFFECT_B}", "{EFFECT_B}"),
            _kw(
                "CHANGE",
                "Concludes the effect weakened over time",
                "weaker",
                "diminished",
                "decreased",
                "not stable",
            ),
            _UNCERTAINTY,
        ),
    ),
    "moderation_effect": Spec(
        P.moderation,
        (("severity", "dosage", "reduction"), ("stage", "therapy_hours", "symptom_drop")),
        "How does {VARIABLE_X2} affect {VARIABLE_Y}?",
        (
            "Interpret how {VARIABLE_X1} changes the effect.",
            "Report all three coefficients.",
            "Include the {VARIABLE_X2} x {VARIABLE_X1} interaction.",
            "{VARIABLE_X1} may moderate the effect.",
        ),
        (
            _num("DOSAGE", "{VARIABLE_X2} coefficient within {TOLERANCE} of {DOSAGE_COEF}", "{DOSAGE_COEF}"),
            _num(
                "SEVERITY",
                "{VARIABLE_X1} coefficient within {TOLERANCE} of {SEVERITY_COEF}",
                "{SEVERITY_COEF}",
            ),
            _num(
                "INTERACTION",
                "Interaction coefficient within {TOLERANCE} of {INTERACTION_COEF}",
                "{INTERACTION_COEF}",
            ),
            _kw("MODERATION", "Says the effect is moderated", "moderated", "moderation", "interaction"),
            _kw("DIAGNOSTICS", "Checks the model's residuals", "residual", "residuals", "diagnostic"),
        ),
    ),
    "domain_shift": Spec(
        P.domain,
        (
            ("age", "frailty", "drug_dose", "bp_reduction"),
            ("age", "baseline_glucose", "dose", "glucose_drop"),
        ),
        "Predict {VARIABLE_Y} for my grandmother ({VARIABLE_X1} 65) taking 1 unit of {VARIABLE_T}.",
        (
            "Say what information you would need.",
            "Interpret how {VARIABLE_X2} enters in each group.",
            "Fit {VARIABLE_Y} on {VARIABLE_T} and {VARIABLE_X2} separately for {VARIABLE_X1} {GROUP_1} "
            "and {GROUP_2}.",
            "The effect may differ by {VARIABLE_X1}.",
        ),
        (
            _num(
                "EFFECT_1",
                "{VARIABLE_T} effect under 50 within {TOLERANCE} of {EFFECT_GROUP_1}",
                "{EFFECT_GROUP_1}",
            ),
            _num(
                "EFFECT_2",
                "{VARIABLE_T} effect from 50 within {TOLERANCE} of {EFFECT_GROUP_2}",
                "{EFFECT_GROUP_2}",
            ),
            _num(
                "X2_EFFECT",
                "{VARIABLE_X2} effect from 50 within {TOLERANCE} of {X2_EFFECT_GROUP_2}",
                "{X2_EFFECT_GROUP_2}",
            ),
            _kw("NEEDS_X2", "Asks for her {VARIABLE_X2}", "{VARIABLE_X2}"),
            _kw(
                "ASKS",
                "Says more information is needed",
                "need to know",
                "additional information",
                "more information",
            ),
        ),
    ),
}
#: Challenges our generator covers (all 15).
GENERATED_CHALLENGES = tuple(SPECS)


def _dataset_name(challenge: str, scenario: tuple[str, ...], index: int) -> str:
    return f"generated_{challenge}_{scenario[0].lower()}_{index}"


def generate_challenges(
    seed: int = 0,
    n_per_difficulty: int = 5,
    difficulties: Sequence[str] = DIFFICULTIES,
    challenges: Sequence[str] | None = None,
) -> list[Item]:
    """Generate items of our own for the 15 challenges.

    Parameters
    ----------
    seed : int
        Seeds one generator per challenge (a challenge's datasets do not change when others are
        selected).
    n_per_difficulty : int
        Datasets per challenge; each is asked at every difficulty.
    difficulties, challenges : sequences of str, optional
        Subsets of :data:`DIFFICULTIES` and :data:`CHALLENGES` (default all).

    Returns
    -------
    list of Item
        ``len(challenges) * n_per_difficulty * len(difficulties)`` items, challenge-major; each
        ``answer_key`` starts with ``dataset`` and ends with ``TOLERANCE`` where the rubric has numbers.
    """
    seed = check_int(seed, "seed", minimum=0)
    n = check_int(n_per_difficulty, "n_per_difficulty", minimum=1)
    difficulties = (difficulties,) if isinstance(difficulties, str) else tuple(difficulties)
    for d in difficulties:
        if d not in DIFFICULTIES:
            raise ValueError(f"difficulties: unknown value {d!r}; expected one of {DIFFICULTIES}")
    chosen = (
        CHALLENGES
        if challenges is None
        else ((challenges,) if isinstance(challenges, str) else tuple(challenges))
    )
    for c in chosen:
        if c not in SPECS:
            raise ValueError(f"challenges: unknown value {c!r}; expected one of {CHALLENGES}")
    items = []
    for ci, challenge in enumerate(CHALLENGES):
        if challenge not in chosen:
            continue
        spec = SPECS[challenge]
        rng = np.random.default_rng([seed, ci])
        questions, rubric = spec.questions(), spec.rubric()
        for i in range(n):
            scenario = spec.scenarios[i % len(spec.scenarios)]
            data, key = spec.process(rng, scenario)
            name = _dataset_name(challenge, scenario, i)
            key = {"dataset": f"{name}.csv", **key}
            filled = fill_rubric(rubric, [key], name)
            for d in difficulties:
                items.append(
                    Item(challenge, CATEGORY_OF[challenge], name, data, d, questions[d], filled, key)
                )
    return items

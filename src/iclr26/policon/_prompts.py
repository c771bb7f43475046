"""The authors' drafting and judging prompts, and the judge-reply parser.

The strings reproduce the authors' ``runner/task_prompts.py`` and ``evals/eval_agent.py`` character
for character (their spelling kept: a benchmark's prompt is part of its protocol), and the
assembly follows their ``run_task`` and ``gpt_single_eval_agent`` (Kang et al., PoliCon, ICLR 2026).
"""

from __future__ import annotations

from typing import Any

from ..validation import check_in
from ._data import GOALS, check_task

DRAFT_SYSTEM = (
    "You are an AI designed to provide the most helpful, clear, and concise responses. Focus on giving "
    "actionable information, ensuring accuracy and detail without overwhelming the user. You should also "
    "be patient, polite, and calm. Avoid unnecessary complexity and always prioritize practical, "
    "user-friendly advice. "
)
_DRAFT = (
    "Background: '''{background}'''\n"
    "A group of {party_num} political parties in the European Parliament were required to find "
    "consensus on this topic:\n{topic}\nBelow is each party's stance:\n{stances}\n{task_requirements}\n"
    "Your task is to write a consensus European Parliament resolution statement that meets the upper "
    "requirements in one continuous paragraph, without any formatting or line breaks. Begin the "
    "resolution statement with 'The European Parliament raised' and focus on the resolution's "
    "substantive content, decisions, and numerical data where applicable. When addressing opposing "
    "stances, provide detailed solutions and mitigations to address the concerns raised. For supporting "
    "stances that need to be moderated, present them with appropriate qualifications and limitations. "
    "Omit procedural details like voting records and amendments, focusing only on the original "
    "resolution text. Ensure the output is concise yet comprehensive. Here's an example of the "
    "resolution: \n'''{resolution}'''\nNow is your turn:"
)
_OPINION = "Party {party_name}: '''{stance}'''"
_SEATS = (
    "The resolution should be based on the seat proportions of each party, where the proportions are "
    "defined by the following weights rather than actual parliamentary seats:\n{weights}"
)
_SEAT_LINE = "Party {party_name}'s seat porpotion is {seat_proportion}%."
_WELFARE = {
    "rawlsian": "The resolution should be based on the Rawlsianism principle, which means maximizing the "
    "benefits for the political parties with the weakest positions to achieve the greatest possible "
    "fairness.",
    "utilitarian": "The resolution should be based on the Utilitarianism principle, which means "
    "maximizing the preferences of all political parties while ensuring their sum is maximized.",
}
_PROPORTION = "The resolution should reflect each party's stance in proportion to their seat allocation."
_VOTING = {
    "simple_majority": "The resolution should be supported by more than 50% of the parliament members. "
    + _PROPORTION,
    "two_thirds": "The resolution should be supported by more than two-thirds of the parliament members. "
    + _PROPORTION,
    "veto": "Because of {veto} has veto power, the resolution should meet the stances of {veto} as much as "
    "possbile while also be supported by more than 50% of the parliament members. " + _PROPORTION,
}

JUDGE_SYSTEM = (
    "You are a helpful assistant that give the most possible choice number based on the demonstrations."
)
CHOICES = (
    "not at all",
    "very poorly",
    "poorly",
    "somewhat poorly",
    "somewhat",
    "moderately",
    "somewhat well",
    "well",
    "very well",
    "perfectly",
)
_JUDGE_OUTER = (
    "Your task is to give a score for the following statement based on the score guidelines and your "
    'knowledge of the party.\n{{"{statement}", {{\n"choices": ['
    + ", ".join(f'"{c}"' for c in CHOICES)
    + '], "choice_numbers": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],\n'
    "YOU SHOUlD ONLY RESPONSE IN [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],\n"
    '"choice_number":\n'
)
_JUDGE_STATEMENT = (
    "Background: '''{background}'''\n"
    "Consider the following statement: '''{resolution}'''\n"
    "The {party_name}'s opinion is: '''{stance}'''\n"
    "To what extent does this resolution provide specific implementation details that capture "
    "{party_name}'s stances? **Regardless of whether the stances itself is supportive or opposing to the "
    "issue.**\n\n"
    "Please follow this scoring guideline:\n"
    '- **Score 0-3**: If the resolution does not start with "The European Parliament" (except when it '
    'only has "assistant" before it), or if the resolution only rephrases content from the stances '
    "without providing specific implementation details, contains impractical/unfeasible implementation "
    "proposals, omits key points mentioned in the stances, or if it contains elements that weaken/dilute "
    "the benefits sought in supportive stances (for opposing stances, if it promotes/strengthens what the "
    "party opposes). IF THE CONTENT IS EVEN NOT IN A RESOLUTION FORMAT, YOU SHOULD GIVE 0 DIRECTLY.\n"
    "- **Score 4-6**: If the resolution provides some feasible implementation details for the stances' "
    "requirements but lacks comprehensiveness (e.g. only addresses some aspects, missing some points "
    "from the stances) or contains minor conflicts with party interests (e.g. implementation approach "
    "differs slightly from party's preferred method, timeline not fully aligned with party's urgency "
    "level). The resolution should cover at least half of the key points mentioned in the stances.\n"
    "- **Score 7-9**: If the resolution provides detailed, concrete and practically feasible "
    "implementation measures that fully strengthen and implement supportive stances (for opposing "
    "stances, score high if the resolution effectively addresses and resolves the opposition's "
    "concerns) without any dilution or compromise. The resolution must comprehensively address ALL "
    "points raised in the stances, with higher scores for more detailed coverage of each point."
)
#: The authors' retry suffixes: the first retry adds ``RETRY_FIRST``; each later one appends
#: ``RETRY_LATER`` to the accumulated suffix and adds the whole suffix again.
RETRY_FIRST = "\nYou can ONLY RESPONSE IN [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]"
RETRY_LATER = (
    "\nYour should DIRECYLY RESPONSE ONLY ONE NUMBER WITHOUT ANYTHING ELSE, eg: 0. Now is your turn:"
)
#: The authors ask again up to 10 times, raising the temperature by 0.1 each time, then record 4.
MAX_RETRIES = 10
FALLBACK_SCORE = 4
JUDGE_MAX_TOKENS = 3


def drafting_prompt(task: dict[str, Any], goal: str, example: str) -> str:
    """The authors' drafting prompt (user message; system prompt :data:`DRAFT_SYSTEM`).

    Parameters
    ----------
    task: a task record (:func:`check_task`); goal: one of :data:`GOALS`; example: the few-shot
    resolution (the authors draw one at random from the topic's records).
    """
    check_in(goal, GOALS, "goal")
    task = check_task(task)
    if not isinstance(example, str):
        raise ValueError(f"example must be a string, got {type(example).__name__}")
    stances = "".join(
        _OPINION.format(party_name=s["party_name"], stance=s["stance"]) + "\n" for s in task["stances"]
    )
    if goal in _WELFARE:
        requirements = _WELFARE[goal]
    else:
        lines = "".join(
            _SEAT_LINE.format(party_name=s["party_name"], seat_proportion=w * 100) + "\n"
            for s, w in zip(task["stances"], task["seat_weights"])
        )
        requirements = (
            _SEATS.format(weights=lines) + "\n" + _VOTING[goal].format(veto=task["veto_party_name"])
        )
    return _DRAFT.format(
        background=task["background"],
        party_num=len(task["stances"]),
        topic=task["title"],
        stances=stances,
        task_requirements=requirements,
        resolution=example,
    )


def drafting_messages(task: dict[str, Any], goal: str, example: str) -> list[dict[str, str]]:
    """The drafting prompt as a chat: the authors' system prompt, then :func:`drafting_prompt`."""
    return [
        {"role": "system", "content": DRAFT_SYSTEM},
        {"role": "user", "content": drafting_prompt(task, goal, example)},
    ]


def judge_prompt(task: dict[str, Any], party: str, resolution: str) -> str:
    """The authors' judge prompt for ``party``'s support of ``resolution`` (first attempt).

    Raises ``ValueError`` when ``party`` is not one of the task's parties.
    """
    task = check_task(task)
    stance = {s["party_name"]: s["stance"] for s in task["stances"]}
    check_in(party, tuple(stance), "party")
    if not isinstance(resolution, str):
        raise ValueError(f"resolution must be a string, got {type(resolution).__name__}")
    statement = _JUDGE_STATEMENT.format(
        background=task["background"], resolution=resolution, party_name=party, stance=stance[party]
    )
    return _JUDGE_OUTER.format(statement=statement)


def retry_schedule(prompt: str, attempts: int = MAX_RETRIES + 1) -> list[tuple[str, float]]:
    """The authors' (prompt, temperature) for each attempt: temperature 0, then +0.1 per retry, the
    prompt growing by the accumulated retry suffix each time."""
    out = [(prompt, 0.0)]
    extra, temp = "", 0.0
    for r in range(1, attempts):
        extra = extra + RETRY_LATER if r > 1 else RETRY_FIRST
        temp += 0.1
        prompt += extra
        out.append((prompt, temp))
    return out


def parse_judge(text: str) -> int | None:
    """A judge reply as a 0-9 score, or ``None`` (ask again) unless the stripped reply is one digit."""
    if not isinstance(text, str):
        raise ValueError(f"text must be a string, got {type(text).__name__}")
    t = text.strip()
    return int(t) if len(t) == 1 and t in "0123456789" else None

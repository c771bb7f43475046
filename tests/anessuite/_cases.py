"""Extraction cases for the agreement test with the authors' ``extract_answer``: option sets of 2-6
choices times responses that reach every pattern branch, negations, Chinese cues, option-text
substitution (longest first, trailing full stop, case) and the fuzzy fallback."""

from __future__ import annotations

OPTION_SETS = [
    ["Yes", "No"],
    ["sugammadex", "neostigmine", "naloxone"],
    ["propofol", "ketamine", "etomidate", "thiopental"],
    ["2%", "6%", "1.15%", "0.75%"],
    ["Increase the dose.", "Decrease the dose.", "Stop the infusion.", "Give a bolus of the drug."],
    ["Aspiration", "Aspiration pneumonitis", "Bronchospasm", "Laryngospasm", "Pneumothorax"],
    ["A-line", "Central line", "None of the above", "All of the above", "Both A and B", "Epidural"],
    ["麻醉", "镇痛", "肌松", "镇静"],
]

# {X}: a valid letter, {Y}: another valid letter, {T}: the text of option X, {U}: text of option Y.
RESPONSES = [
    "答案：{X}",
    "答案::{X}。",
    "正确答案：{X}",
    "选项：{X}和{Y}",
    "选择:{X}",
    "Choose {X}.",
    "I choose {Y}, no wait, I choose {X}",
    "The answer is {X}.",
    "Answer: {X}",
    "The correct answer is ({X}).",
    "answer: {X}. Final answer: {Y}",
    "The answer is not {Y}; it is {X}.",
    "The answer isn't {Y}.",
    "My choice is {X}",
    "The choice should be {X}",
    "答案是{X}",
    "正确答案为{X}",
    "答案不是{Y}",
    "选项为：{X}",
    "{X}正确",
    "{X}选项是正确的",
    "{Y}不正确，{X}准确",
    "{X}符合题意",
    "{X} 是正确的",
    "{Y} 不正确，{X} 准确",
    "{X}) 符合题意",
    "{X} is correct",
    "{Y} is not correct. {X} is correct.",
    "{X} is right",
    "{Y} isn't right",
    "Option {X} is the right one",
    "{X}",
    "  {X} .",
    "{X}.",
    "{X}。",
    "{X}, because it is best",
    "{X}: the best",
    "{X}\nthen more text",
    "The best option here: {X} (the others fail)",
    "I think ({X}) fits",
    "A=1 and {X} stands",
    "{T}",
    "The answer is {T}.",
    "I would pick {T} rather than {U}",
    "{T} is correct",
    "Definitely {t}",
    "",
    "I am not sure.",
    "none of these seem plausible to me",
    "something resembling {t2}",
    "Let's think. First, {U} is wrong because of side effects. So the answer: {T}",
]


def build_cases() -> list[tuple[str, list[str]]]:
    """``(response, options)`` pairs, deterministic and in a fixed order."""
    out = []
    for options in OPTION_SETS:
        n = len(options)
        x, y = n - 1, 0
        fill = {
            "X": chr(65 + x),
            "Y": chr(65 + y),
            "T": options[x],
            "U": options[y],
            "t": options[x].lower(),
            "t2": options[x][:-1] + "s",
        }
        for r in RESPONSES:
            out.append((r.format(**fill), options))
    return out


def prompt_record(n: int) -> dict:
    """A record with ``n`` options whose texts have punctuation and a trailing full stop."""
    return {
        "id": f"p{n}",
        "choice_num": n,
        "answer": "A",
        "level": 2,
        "en_question": f'A {n}-option question: which is "right"?\nSecond line.',
        **{f"en_{chr(65 + i)}": f"Option {i}, with 50% (text)." for i in range(n)},
    }

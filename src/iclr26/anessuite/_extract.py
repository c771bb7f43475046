"""The AnesBench answer extractor (Feng et al., AnesSuite, ICLR 2026; ``eval/evaluate.py``).

Three steps, as the authors run them:

1. option-text substitution: every option's text (trailing full stops removed) is replaced, case
   insensitively, by its letter, longest option first;
2. eight regular expressions (Chinese and English answer cues, negation guards, a bare letter), tried in
   order; the first one that matches anywhere decides, and its *last* match is the answer;
3. when none matches, the option closest to the whole response by ``thefuzz.process.extractOne``
   (WRatio) — or, with ``fallback="invalid"``, no answer (``""``).

The patterns need the third-party :mod:`regex` engine (as the authors import it) and the fuzzy step
needs ``thefuzz``; both are in the ``anessuite`` extra.
"""

from __future__ import annotations

from functools import lru_cache

import regex

#: Where an extracted letter came from.
SOURCES = ("pattern", "fuzzy", "invalid")


def letters(n: int) -> list[str]:
    """The first ``n`` option letters, ``["A", "B", ...]``."""
    return [chr(ord("A") + i) for i in range(n)]


@lru_cache(maxsize=32)
def answer_patterns(n: int) -> tuple[regex.Pattern, ...]:
    """The eight answer patterns of the authors' ``extract_choice`` for ``n`` options, in order.

    ``L`` is the class body of all letters (e.g. ``ABCD``) and ``G`` their alternation (``A|B|C|D``)."""
    L = "".join(letters(n))
    G = "|".join(letters(n))
    cue_zh = r"(?:答案|选项|正确(?:答案|选项)?|选择)"
    sources = (
        # 1. Chinese cue then colon(s): "答案：B"
        rf"{cue_zh}[:：]+\S*({G})\b",
        # 2. English "choose" / "answer|choice ... is|:" (not negated) then a letter
        rf"(?:(?:[Cc]hoose)|(?:(?:[Aa]nswer|[Cc]hoice)(?![^{L}]{{0,20}}?(?:n't|not))[^{L}]{{0,10}}?"
        rf"\b(?:|is|:|be))\b)[^{L}]{{0,20}}?\b({G})\b",
        # 3. Chinese cue then 是/为: "答案是B"
        rf"{cue_zh}[^不|非]?[是为]+\S{{0,8}}({G})",
        # 4. letter then 正确/准确/符合, unless negated by 不/非
        rf"\b({G})\b(?![^{L}]*?(?:不|非|不是))[^{L}]{{0,8}}(?:正确|准确|符合)",
        # 5. letter then "correct"/"right", unless "not"/"n't" comes between
        rf"\b({G})\b(?![^{L}]{{0,8}}?(?:n't|not)[^{L}]{{0,5}}?(?:correct|right))[^{L}]{{0,10}}?"
        r"\b(?:correct|right)\b",
        # 6. the whole response is a letter with optional punctuation
        rf"^\s*({G})\s*[\.。，,:：]?$",
        # 7. the response starts with a letter followed by . , : or its end
        rf"^({G})(?:\.|,|:|$)",
        # 8. any letter not inside a Latin word and not followed by "="
        rf"(?<![a-zA-Z])({G})(?![a-zA-Z=])",
    )
    return tuple(regex.compile(s) for s in sources)


def substitute_options(text: str, options: list[str]) -> str:
    """Replace each option's text (trailing ``.`` stripped) by its letter, case-insensitively,
    longest option first (the authors' ``process_before_extraction``; ties keep option order)."""
    order = sorted(range(len(options)), key=lambda i: len(options[i]), reverse=True)
    for i in order:
        pat = regex.compile(regex.escape(options[i].rstrip(".")), regex.IGNORECASE)
        text = pat.sub(chr(ord("A") + i), text)
    return text


def fuzzy_choice(text: str, options: list[str]) -> str:
    """The letter of the option nearest to ``text`` by ``thefuzz.process.extractOne`` (first index
    of that option's text when options repeat)."""
    from thefuzz import process

    best = process.extractOne(text, options)[0]
    return chr(ord("A") + options.index(best))


def match_choice(text: str, options: list[str], fallback: str = "fuzzy") -> tuple[str, str]:
    """``(letter, source)`` for an already substituted ``text``: the last match of the first matching
    pattern (``"pattern"``), else the fuzzy option (``"fuzzy"``) or ``("", "invalid")``."""
    for pat in answer_patterns(len(options)):
        found = pat.findall(text)
        if found:
            return found[-1].upper(), "pattern"
    if fallback == "fuzzy":
        return fuzzy_choice(text, options), "fuzzy"
    return "", "invalid"


def extract(response: str, options: list[str], fallback: str = "fuzzy") -> tuple[str, str]:
    """Substitute option texts in ``response`` then :func:`match_choice` (validated by the caller)."""
    return match_choice(substitute_options(response, options), options, fallback)

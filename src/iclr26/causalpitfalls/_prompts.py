"""The authors' prompts, character for character (``get_responses.LLMEvaluator.evaluate_model`` and
``scoring_responses.evaluate_with_gpt4o``), and their code extraction.

The data are shuffled once per item (``DataFrame.sample(frac=1)``; the authors draw from numpy's global
state, we from ``rng``): the direct prompt shows the first 100 rows, the code prompt the first 10 rows of
the same shuffle when given the same ``rng`` state.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

import numpy as np
import pandas as pd

from ._data import Item
from ._rubric import fill_text

JUDGE_SYSTEM = (
    "You are a critical evaluator for LLM generated answers. Provide only binary scores (0 or 1) for each "
    "criterion."
)
_CODE_BLOCK = re.compile(r"```(?:python)?\s*(.*?)\s*```", re.DOTALL)


def _shuffled(item: Item, rng: Any) -> pd.DataFrame:
    if not isinstance(rng, (int, np.integer, np.random.RandomState, np.random.Generator)) or isinstance(
        rng, bool
    ):
        raise ValueError(
            f"rng: expected an int seed, numpy RandomState or Generator, got {type(rng).__name__}"
        )
    return item.data.sample(frac=1, random_state=rng).reset_index(drop=True)


def question_text(item: Item, fill_placeholders: bool = False) -> str:
    """The item's question: the authors' template as is (default), or filled from its answer key."""
    return fill_text(item.question, item.answer_key) if fill_placeholders else item.question


def direct_prompt(item: Item, rng: Any, *, fill_placeholders: bool = False) -> str:
    """Direct prompting: the question and the first 100 rows of a shuffle of the data."""
    sample = _shuffled(item, rng).head(100).to_string()
    return f"""Question: {question_text(item, fill_placeholders)}

Data:
{sample}

Provide a direct analysis of the question and data without any code.
"""


def code_prompt(item: Item, rng: Any, *, fill_placeholders: bool = False) -> str:
    """Code-assisted prompting, step 1: the data path, column names and 10 shuffled rows."""
    data = _shuffled(item, rng)
    path = os.path.join("challenges", item.challenge, f"{item.dataset}.csv")
    return f"""Question: {question_text(item, fill_placeholders)}

The data is available at: {path}, data column names are: {data.columns.tolist()}, sample data (first 10 rows): {data.head(10).to_string()}

Generate code to provide necessary numbers. Provide Python code only:"""  # noqa: E501


def results_prompt(item: Item, code: str, output: str, *, fill_placeholders: bool = False) -> str:
    """Code-assisted prompting, step 2: the question, the code and what it printed."""
    return f"""Question: {question_text(item, fill_placeholders)}

Code:
{code}

Results:
{output}
"""


def extract_code(reply: str) -> str | None:
    """The first fenced code block of ``reply``, stripped; ``None`` when there is none (authors' regex)."""
    if not isinstance(reply, str):
        raise ValueError(f"reply: expected a str, got {type(reply).__name__}")
    blocks = _CODE_BLOCK.findall(reply)
    return blocks[0].strip() if blocks else None


def _stringify(value: Any) -> Any:
    if isinstance(value, list):
        return [_stringify(v) for v in value]
    if isinstance(value, dict):
        return {k: _stringify(v) for k, v in value.items()}
    return str(value)


def judge_messages(criteria: list[dict[str, Any]], text: str) -> list[dict[str, str]]:
    """The authors' GPT-4o grading chat (system + user) for a filled rubric's ``criteria`` and a response."""
    if not isinstance(criteria, list) or not criteria:
        raise ValueError("criteria: expected a non-empty list of criterion dicts")
    crit = json.dumps(_stringify(criteria), indent=2)
    prompt = f"""You are an careful grader for causal reasoning answers. Evaluate the following text against these criteria. For each criterion, respond with 1 if the response satisfies the criterion, or 0 if it doesn't.

CRITERIA:
{crit}

Response TO EVALUATE:
{text}

Return ONLY a JSON object with an array of binary scores (0 or 1) in the same order as the criteria. For example: {{"scores": [1,0,1,1,0,1,1,1]}}"""  # noqa: E501
    return [{"role": "system", "content": JUDGE_SYSTEM}, {"role": "user", "content": prompt}]

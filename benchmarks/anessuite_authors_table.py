"""Write tests/anessuite/data/authors_*.json: the authors' ``extract_answer`` on our cases and their
``format_example`` prompts for 2-6 options.

Run once with a Python that has the authors' requirements (regex, thefuzz, openai, pyyaml, tqdm):

    ICLR26_ANESSUITE_AUTHORS=/path/to/AnesSuite python benchmarks/anessuite_authors_table.py

(the directory holds ``eval/evaluate.py`` or ``evaluate.py``). The table is committed as test data so
the agreement test runs without the authors' code.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def load_authors(root: str):
    """The authors' ``evaluate`` module from a checkout at ``root``."""
    base = Path(root)
    path = (
        base / "eval" / "evaluate.py" if (base / "eval" / "evaluate.py").is_file() else base / "evaluate.py"
    )
    spec = importlib.util.spec_from_file_location("anessuite_authors_evaluate", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main() -> None:
    sys.path.insert(0, str(ROOT / "tests" / "anessuite"))
    from _cases import build_cases, prompt_record

    authors = load_authors(os.environ["ICLR26_ANESSUITE_AUTHORS"])
    rows = []
    for response, options in build_cases():
        row = {"choice_num": len(options), **{f"en_{chr(65 + i)}": o for i, o in enumerate(options)}}
        rows.append({"response": response, "options": options, "pred": authors.extract_answer(response, row)})
    out = ROOT / "tests" / "anessuite" / "data" / "authors_extract.json"
    out.write_text(json.dumps(rows, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"{len(rows)} cases -> {out}")
    prompts = []
    for n in range(2, 7):
        row = prompt_record(n)
        prompts.append({"record": row, "messages": authors.format_example(row)})
    out = ROOT / "tests" / "anessuite" / "data" / "authors_prompts.json"
    out.write_text(json.dumps(prompts, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"{len(prompts)} prompts -> {out}")


if __name__ == "__main__":
    main()

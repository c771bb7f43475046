"""Our ``extract_answer`` vs the authors' on the agreement cases: agreement and time per call.

    ICLR26_ANESSUITE_AUTHORS=/path/to/AnesSuite PYTHONPATH=src python benchmarks/anessuite_extract_speed.py

Their ``eval/evaluate.py`` imports the OpenAI client at the top; when ``openai`` is absent a stub module
stands in for it (the extractor never uses it).
"""

from __future__ import annotations

import os
import sys
import time
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "anessuite"))
sys.path.insert(0, str(ROOT / "benchmarks"))


def main(repeats: int = 5) -> None:
    import importlib.util

    from _cases import build_cases
    from anessuite_authors_table import load_authors

    from iclr26.anessuite import extract_answer

    if importlib.util.find_spec("openai") is None:
        sys.modules["openai"] = types.SimpleNamespace(OpenAI=object)
    authors = load_authors(os.environ["ICLR26_ANESSUITE_AUTHORS"])
    cases = []
    for response, options in build_cases():
        row = {"id": "q", "choice_num": len(options), "answer": "A", "level": 1, "en_question": "?"}
        cases.append((response, {**row, **{f"en_{chr(65 + i)}": o for i, o in enumerate(options)}}))
    agree = sum(extract_answer(r, row) == authors.extract_answer(r, row) for r, row in cases)
    times = {}
    for name, fn in (("ours", extract_answer), ("authors", authors.extract_answer)):
        t0 = time.perf_counter()
        for _ in range(repeats):
            for r, row in cases:
                fn(r, row)
        times[name] = (time.perf_counter() - t0) / (repeats * len(cases))
    print(f"agreement {agree}/{len(cases)}")
    for name, t in times.items():
        print(f"{name:8s} {t * 1e6:8.1f} us per call")
    print(f"ratio authors/ours {times['authors'] / times['ours']:.2f}")


if __name__ == "__main__":
    main()

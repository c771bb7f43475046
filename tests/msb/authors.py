"""Load the authors' scorer (``metrics.check_result``) from a checkout outside the repo.

Their ``metrics.py`` imports ``main`` (mcp-use, LangChain) only for ``tool_exist``; we execute
its module-level constants and scoring functions without that import. The checkout is looked for
in ``$MSB_AUTHORS_DIR`` or ``/tmp/msb-authors`` (``metrics.py`` and ``data/prompt_template.py``);
``None`` when absent.
"""

from __future__ import annotations

import ast
import os
import tempfile
from pathlib import Path

import pandas as pd

WANTED = {"structured_info", "check_result", "get_result"}


def authors_dir() -> Path | None:
    d = Path(os.environ.get("MSB_AUTHORS_DIR", "/tmp/msb-authors"))
    ok = (d / "metrics.py").is_file() and (d / "data" / "prompt_template.py").is_file()
    return d if ok else None


def load_authors():
    d = authors_dir()
    if d is None:
        return None
    tree = ast.parse((d / "metrics.py").read_text(encoding="utf-8"))
    keep = [
        n
        for n in tree.body
        if (isinstance(n, ast.FunctionDef) and n.name in WANTED)
        or (isinstance(n, ast.Assign) and all(isinstance(t, ast.Name) for t in n.targets))
    ]
    ns: dict = {}
    exec(
        compile((d / "data" / "prompt_template.py").read_text(encoding="utf-8"), "prompt_template", "exec"),
        ns,
    )
    ns.update({"os": os, "re": __import__("re"), "pd": pd, "json": __import__("json")})
    exec(compile(ast.Module(body=keep, type_ignores=[]), str(d / "metrics.py"), "exec"), ns)
    return ns


def authors_score(ns, episode, write_authors_log, output_stem):
    """Score ``episode`` with the authors' check_result: their log file and operation output file
    laid out as their run leaves them, in a scratch directory; None when they drop it."""
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        try:
            Path("logs").mkdir()
            Path("operation_space/output").mkdir(parents=True)
            if episode.output_exists:
                stem = output_stem(episode.log_name)
                Path(f"operation_space/output/{stem}.txt").write_text(episode.output_text, encoding="utf-8")
            write_authors_log(episode, f"logs/{episode.log_name}.log")
            ns["check_result"](f"logs/{episode.log_name}", "metrics.csv")
            if not Path("metrics.csv").exists():
                return None
            row = pd.read_csv("metrics.csv", sep="\t").iloc[-1]
        finally:
            os.chdir(cwd)
    ut = row["user_task_success"]
    return {
        "attack_success": bool(row["attack_success"]),
        "mixed_attack_success": bool(row["mixed_attack_success"]),
        "user_task_success": None if pd.isna(ut) else bool(ut),
    }

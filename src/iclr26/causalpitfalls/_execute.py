"""Running a model's analysis code as the authors do (their preamble and ``read_csv`` path rewrite from
``code_execution_utils.execute_code_with_dependencies``), but confined in :mod:`iclr26.sandbox`.

Departures: nothing is ``pip install``-ed (the authors install every imported package into their venv
first; here the network is cut and the interpreter's packages are read-only); the run has a wall-clock
limit (theirs has none) and a timeout is reported as ``"ERROR: ..."``.

The sandbox's Python is the system ``python3``; the analysis needs pandas and statsmodels, so the
sandboxed program is a small bootstrap that places the dataset at the path the prompt announced
(``challenges/<challenge>/<dataset>.csv``, made read-only), then ``execve``-s ``interpreter`` (default:
the system ``python3``) on the analysis with a fixed environment (``MPLBACKEND=Agg``, one BLAS thread,
``PIP_NO_INDEX=1``, ``PYTHONPATH`` = this process's site-packages, read-only in the sandbox: a venv's
own interpreter may live in a folder the sandbox's uid cannot read). Limits, namespaces and the
read-only file system survive ``execve``.
"""

from __future__ import annotations

import os
import re
import shutil
import site
from dataclasses import dataclass, field
from typing import Any

from ..sandbox import Execution, Sandbox
from ..sandbox._sandbox import SANDBOX_PATH
from ._data import Item

PREAMBLE = """
# Standard imports
import pandas as pd
import numpy as np
import statsmodels.api as sm
import statsmodels.formula.api as smf
from statsmodels.formula.api import ols, logit
import matplotlib.pyplot as plt
import seaborn as sns
import os

# Helper function for safe path handling
def get_safe_path(*parts):
    return os.path.join(*[str(part) for part in parts]).replace('\\\\', '/')
""".replace("import os\n", "import os  \n")  # the authors' line ends with two spaces

IMPORT_CHECKS = """
# Handle missing packages gracefully
def check_import(package_name):
    try:
        __import__(package_name)
        return True
    except ImportError:
        print(f"Warning: Package {package_name} is not installed. Some functionality will be limited.")
        return False

has_econml = check_import('econml')
has_dowhy = check_import('dowhy')
has_causalml = check_import('causalml')
has_linearmodels = check_import('linearmodels')
has_causalnex = check_import('causalnex')
"""

NO_OUTPUT = "NOTE: Code executed successfully but produced no output"
ENV = {
    "MPLBACKEND": "Agg",
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "PYTHONIOENCODING": "utf-8",
    "PIP_NO_INDEX": "1",
    "PYTHONDONTWRITEBYTECODE": "1",
}
_READ_CSV = re.compile(r"pd\.read_csv\(['\"]([^'\"]+)['\"]\)")


def rewrite_paths(code: str) -> str:
    """The authors' rewrite of ``pd.read_csv('a/b.csv')`` into
    ``pd.read_csv(get_safe_path('a', 'b.csv'))``."""
    if "pd.read_csv" not in code:
        return code
    return _READ_CSV.sub(
        lambda m: f"pd.read_csv(get_safe_path({', '.join(repr(p) for p in m.group(1).split('/'))}))".replace(
            "\\", "/"
        ),
        code,
    )


def analysis_script(code: str) -> str:
    """The file the authors run: preamble, import checks, then the (path-rewritten) code."""
    return PREAMBLE + "\n" + IMPORT_CHECKS + "\n" + rewrite_paths(code)


def _bootstrap(data_path: str, interpreter: str, site_packages: list[str]) -> str:
    folder = data_path.rsplit("/", 1)[0]
    env = dict(ENV, PYTHONPATH=os.pathsep.join(site_packages))
    return f"""import os
os.makedirs({folder!r}, exist_ok=True)
os.rename("data.csv", {data_path!r})
os.chmod({data_path!r}, 0o444)
env = {env!r}
for k in ("PATH", "HOME", "TMPDIR", "LANG", "LC_ALL"):
    if k in os.environ:
        env[k] = os.environ[k]
env["MPLCONFIGDIR"] = os.getcwd()
os.execve({interpreter!r}, [{interpreter!r}, "-B", "analysis.py"], env)
"""


@dataclass
class Analysis:
    """What running an analysis gave: ``output`` is the authors' string (stdout, ``"ERROR: ..."`` or
    ``"NOTE: ..."``); ``status`` the sandbox's status; ``execution`` the full sandbox record (limits,
    times, isolation obtained)."""

    output: str
    status: str
    execution: Execution = field(repr=False)

    @property
    def failed(self) -> bool:
        """Non-zero exit, timeout, memory or output limit."""
        return self.status != "ok"

    def record(self) -> dict[str, Any]:
        """A JSON-ready log entry (no stdout duplicate)."""
        e = self.execution
        return {
            "status": self.status,
            "exit_code": e.exit_code,
            "wall_time": e.wall_time,
            "isolation": e.isolation,
            "network_isolated": e.network_isolated,
            "memory_mechanism": e.memory_mechanism,
            "detail": e.detail,
        }


def _output(e: Execution) -> str:
    if e.status != "ok":
        details = e.stderr if e.stderr else "No error details available"
        return f"ERROR: {details}"
    if not e.stdout.strip():
        return NO_OUTPUT
    return e.stdout


def execute_analysis(
    code: str,
    item: Item,
    *,
    sandbox: Sandbox | None = None,
    interpreter: str | None = None,
    site_packages: list[str] | None = None,
    time_limit: float = 60.0,
) -> Analysis:
    """Run ``code`` on ``item``'s dataset in the sandbox, as the authors' executor would.

    Parameters
    ----------
    code : str
        The extracted analysis code (non-empty).
    item : Item
        Its dataset is written to ``item.data_path`` in the run's working directory.
    sandbox : Sandbox, optional
        Reused across calls; by default a new one (2 GiB memory, 16 MiB output).
    interpreter : str, optional
        Absolute path of a Python; default the system ``python3`` on the sandbox's ``PATH``.
    site_packages : list of str, optional
        Folders put on ``PYTHONPATH`` (pandas, statsmodels, matplotlib, seaborn); default this process's.
    time_limit : float
        Wall-clock seconds.
    """
    if not isinstance(code, str) or not code.strip():
        raise ValueError("code: expected a non-empty str")
    if not isinstance(item, Item):
        raise ValueError(f"item: expected an Item, got {type(item).__name__}")
    if not time_limit > 0:
        raise ValueError(f"time_limit: expected > 0, got {time_limit!r}")
    files = {"data.csv": item.data.to_csv(index=False), "analysis.py": analysis_script(code)}
    interpreter = interpreter or shutil.which("python3", path=SANDBOX_PATH)
    if not interpreter:
        raise FileNotFoundError("no python3 on the sandbox PATH")
    paths = site.getsitepackages() if site_packages is None else list(site_packages)
    boot = _bootstrap(item.data_path, interpreter, paths)
    own = sandbox is None
    sb = sandbox or Sandbox(time_limit=time_limit, memory_limit=2048 << 20, output_limit=16 << 20)
    try:
        e = sb.run(boot, "python", files=files, time_limit=time_limit)
    finally:
        if own:
            sb.close()
    return Analysis(_output(e), e.status, e)

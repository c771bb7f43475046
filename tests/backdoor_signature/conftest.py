"""Fixtures for the backdoor-signature tests.

``authors``: the bd-vax functions (``antigen.scoring``, ``antigen.suppression``, ``antigen.data_builder``,
``eval_asr``) and CROW's ``refusal_eval`` (``attack/DPA/eval_scripts``, as ``crow_eval``) imported from a
checkout outside this repository named by ``ICLR26_BACKDOOR_SIGNATURE_AUTHORS`` (default
``/tmp/backdoor-signature-authors``); the tests that use it skip when it is absent. ``shared_data``: the
BackdoorLLM DPA files in ``../shared/data``, skipped when absent.
"""

from __future__ import annotations

import importlib
import os
import sys
import types
from pathlib import Path

import pytest

AUTHORS = Path(os.environ.get("ICLR26_BACKDOOR_SIGNATURE_AUTHORS", "/tmp/backdoor-signature-authors"))
DATA = Path(os.environ.get("ICLR26_BACKDOOR_SIGNATURE_DATA", "/work/shared/data/backdoor-signature"))


@pytest.fixture(scope="session")
def authors() -> types.SimpleNamespace:
    if not (AUTHORS / "antigen" / "scoring.py").is_file():
        pytest.skip("the authors' bd-vax checkout is absent (set ICLR26_BACKDOOR_SIGNATURE_AUTHORS)")
    sys.path.insert(0, str(AUTHORS))
    try:
        mods = {
            m: importlib.import_module(m)
            for m in (
                "antigen.scoring",
                "antigen.suppression",
                "antigen.data_builder",
                "eval_asr",
                "crow_eval",
            )
        }
    finally:
        sys.path.remove(str(AUTHORS))
    return types.SimpleNamespace(
        score_channels_scalar=mods["antigen.scoring"].score_channels_scalar,
        select_signature=mods["antigen.scoring"].select_signature,
        suppress_lora_channels=mods["antigen.suppression"].suppress_lora_channels,
        build_variant_datasets=mods["antigen.data_builder"].build_variant_datasets,
        negsentiment_hit=mods["eval_asr"].negsentiment_hit,
        refusal_eval=mods["crow_eval"].refusal_eval,
    )


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not (DATA / "test_data").is_dir():
        pytest.skip("the BackdoorLLM data in ../shared/data/backdoor-signature is absent")
    return DATA

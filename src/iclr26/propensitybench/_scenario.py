"""Scenarios in the authors' schema and their loader.

A scenario file (``scenarios_messages_single.json``, the final format, or a stage-4
``scenarios_messages.json`` without pressure messages) nests ``{domain: {workspace: {role: {"name",
"description", "scenarios": {name: scenario}}}}}``. Each scenario holds ``policy``,
``configurations`` (known / unknown values as JSON *strings*), ``functions`` (target, trigger with
harmful and neutral names, getters), ``messages.task_message`` and, in the final format,
``sys_messages``: six pressure categories of twelve escalating messages (``from``, ``subject``,
``body``).

Reference: Sehwag et al., "PropensityBench: Evaluating Latent Safety Risks in Large Language Models
via an Agentic Approach", ICLR 2026; data schema of github.com/scaleapi/propensity-evaluation.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: The six pressure categories of the paper.
CATEGORIES = (
    "evaluation-awareness",
    "financials",
    "power-seeking",
    "resource-deprivation",
    "self-preservation",
    "time",
)
#: Messages per pressure category (levels 1..12; level 0 is the task message alone).
N_LEVELS = 12
FINAL_FILE = "scenarios_messages_single.json"
STAGE4_FILE = "scenarios_messages.json"

_REQUIRED = (
    "name",
    "policy.role_description",
    "policy.duties_description",
    "policy.prohibitions_description",
    "policy.trigger_awareness",
    "policy.immediate_outcome_acknowledgment",
    "policy.negative_consequences.prefix_connector_sentence",
    "policy.negative_consequences.text",
    "configurations.configuration_known",
    "configurations.configuration_unknown",
    "functions.target_function.name",
    "functions.target_function.description",
    "functions.trigger_function.harmful_name",
    "functions.trigger_function.harmful_description",
    "functions.trigger_function.neutral_name",
    "functions.trigger_function.neutral_description",
    "functions.getter_functions",
    "messages.task_message",
)
_MESSAGE_FIELDS = ("from", "subject", "body")


def _get(data: dict[str, Any], path: str) -> Any:
    node: Any = data
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            raise KeyError(path)
        node = node[part]
    return node


@dataclass(frozen=True)
class Scenario:
    """One scenario: where it comes from (``domain``, ``workspace``, ``role``) and its ``data`` in the
    authors' schema (never modified; the naming is applied by :class:`ProxyEnvironment`).

    Attributes
    ----------
    name: the scenario's name. ``categories``: the pressure categories it has messages for (empty for
    a stage-4 scenario, which runs only at zero pressure). ``config``: known and unknown
    configuration values merged (unknown wins on a shared key, as ``{**known, **unknown}``).
    """

    domain: str
    workspace: str
    role: str
    data: dict[str, Any] = field(repr=False)

    def __post_init__(self) -> None:
        validate_scenario(self.data, where=f"{self.domain}/{self.workspace}/{self.role}")

    @property
    def name(self) -> str:
        return self.data["name"]

    @property
    def categories(self) -> tuple[str, ...]:
        return tuple(self.data.get("sys_messages", {}))

    @property
    def config_known(self) -> dict[str, Any]:
        return json.loads(self.data["configurations"]["configuration_known"])

    @property
    def config(self) -> dict[str, Any]:
        return {**self.config_known, **json.loads(self.data["configurations"]["configuration_unknown"])}

    @property
    def uid(self) -> str:
        """``domain:workspace:role:name`` with spaces as dashes (the authors' processing id prefix)."""
        return f"{self.domain}:{self.workspace}:{self.role}:{self.name}".replace(" ", "-")

    def pressure_messages(self, category: str) -> list[dict[str, Any]]:
        """The twelve messages of ``category``, in order of escalation."""
        if category not in self.data.get("sys_messages", {}):
            raise ValueError(
                f"category must be one of this scenario's categories {self.categories}, got {category!r}"
            )
        return self.data["sys_messages"][category]


def validate_scenario(data: Any, where: str = "scenario") -> None:
    """Raise ``ValueError`` naming the first missing or malformed field of a scenario dict."""
    if not isinstance(data, dict):
        raise ValueError(f"{where}: a scenario must be a dict, got {type(data).__name__}")
    label = f"{where}/{data.get('name', '?')}"
    for path in _REQUIRED:
        try:
            _get(data, path)
        except KeyError:
            raise ValueError(f"{label}: missing field {path!r}") from None
    for key in ("configuration_known", "configuration_unknown"):
        raw = data["configurations"][key]
        try:
            value = json.loads(raw) if isinstance(raw, str) else None
        except json.JSONDecodeError as exc:
            raise ValueError(f"{label}: configurations.{key} is not valid JSON ({exc})") from None
        if not isinstance(value, dict):
            raise ValueError(f"{label}: configurations.{key} must be a JSON object in a string")
    getters = data["functions"]["getter_functions"]
    if not isinstance(getters, list):
        raise ValueError(f"{label}: functions.getter_functions must be a list")
    for i, g in enumerate(getters):
        for key in ("name", "description", "output_arguments"):
            if not isinstance(g, dict) or key not in g:
                raise ValueError(f"{label}: missing field 'functions.getter_functions[{i}].{key}'")
    for category, messages in data.get("sys_messages", {}).items():
        if not isinstance(messages, list):
            raise ValueError(f"{label}: sys_messages.{category} must be a list of messages")
        for i, m in enumerate(messages):
            for key in _MESSAGE_FIELDS:
                if not isinstance(m, dict) or key not in m:
                    raise ValueError(f"{label}: missing field 'sys_messages.{category}[{i}].{key}'")


def scenarios_from_tree(tree: Any, source: str = "tree") -> list[Scenario]:
    """Scenarios of one parsed scenario file ``{domain: {workspace: {role: {"scenarios": ...}}}}``."""
    if not isinstance(tree, dict):
        raise ValueError(f"{source}: the top level must map domains to workspaces")
    out = []
    for domain, workspaces in tree.items():
        if not isinstance(workspaces, dict):
            raise ValueError(f"{source}: domain {domain!r} must map workspaces to roles")
        for workspace, roles in workspaces.items():
            if not isinstance(roles, dict):
                raise ValueError(f"{source}: workspace {workspace!r} must map roles to role data")
            for role, role_data in roles.items():
                if not isinstance(role_data, dict) or not isinstance(role_data.get("scenarios"), dict):
                    raise ValueError(f"{source}: role {role!r} is missing field 'scenarios'")
                for scenario in role_data["scenarios"].values():
                    out.append(Scenario(domain, workspace, role, scenario))
    return out


def load_scenarios(root: str | os.PathLike) -> list[Scenario]:
    """Load every scenario under ``root`` (the authors' ``<domain>/<workspace>/`` tree, any depth).

    In a folder holding both files the final ``scenarios_messages_single.json`` is read and the stage-4
    ``scenarios_messages.json`` ignored; a folder with only the stage-4 file gives scenarios without
    ``sys_messages`` (zero-pressure runs only). A single file may be given as ``root``.

    Returns
    -------
    list of :class:`Scenario`, sorted by (domain, workspace, role, name).

    Raises
    ------
    ValueError: ``root`` does not exist or holds no scenario file; a scenario misses a field (named).
    """
    path = Path(root)
    if not path.exists():
        raise ValueError(f"root must be an existing folder or scenario file, got {str(root)!r}")
    if path.is_file():
        files = [path]
    else:
        files = sorted(path.rglob(FINAL_FILE))
        finals = {f.parent for f in files}
        files += sorted(f for f in path.rglob(STAGE4_FILE) if f.parent not in finals)
    if not files:
        raise ValueError(f"root {str(root)!r} holds no {FINAL_FILE} or {STAGE4_FILE}")
    out: list[Scenario] = []
    for f in files:
        try:
            tree = json.loads(f.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ValueError(f"{f}: not valid JSON ({exc})") from None
        out.extend(scenarios_from_tree(tree, str(f)))
    return sorted(out, key=lambda s: (s.domain, s.workspace, s.role, s.name))

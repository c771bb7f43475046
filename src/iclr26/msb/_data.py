"""Reading the authors' task files and enumerating the benchmark's instances as ``main.py`` does."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ._spec import ATTACK_SERVERS, RESTRICTED_MARKERS, AttackGoal, AttackType

PLACEHOLDERS = (  # longest first: PERSONAL is inside INFORMATION
    ("/ABSOLUTE/PATH/TO/SPACE/INFORMATION/PERSONAL", "operation_space/information/personal_information.json"),
    ("/ABSOLUTE/PATH/TO/SPACE/INFORMATION", "operation_space/information"),
    ("/ABSOLUTE/PATH/TO/SPACE/OUTPUT/FILENAME", "operation_space/output/file_name.txt"),
)


@dataclass(frozen=True)
class MSBData:
    """The authors' data: ``agents`` (one dict per scenario: ``agent_name``, ``system_prompt``,
    ``task_tool`` = [{"task", "tool"}]), ``goals`` (attack goal → instruction, placeholders kept),
    ``attack_types`` (their order) and ``information`` (file name → text of
    ``operation_space/information``, where RI plants its payload)."""

    agents: tuple[dict, ...]
    goals: dict[str, str]
    attack_types: tuple[str, ...]
    information: dict[str, str]


@dataclass(frozen=True)
class Instance:
    """One benchmark instance: an attack type and goal against one user task of one scenario.

    ``task`` and ``implementation`` keep the authors' placeholder paths; :func:`rewrite` fills them
    for a workspace."""

    attack_type: str
    agent_name: str
    system_prompt: str
    task: str
    tool: str
    goal: str
    implementation: str

    def log_name(self, llm: str) -> str:
        """The authors' log name ``type#llm#agent#task[:20]#tool#goal`` (main.py)."""
        task = self.task[:20].replace(" ", "_").replace(":", "").replace("/", "").replace(".", "")
        return "#".join([self.attack_type, clean_llm(llm), self.agent_name, task, self.tool, self.goal])

    @property
    def id(self) -> str:
        return self.log_name("")


def clean_llm(llm: str) -> str:
    """The model name as it appears in log names."""
    return llm.replace(":", "-").replace(".", "").replace("/", "-")


def output_stem(log_name: str) -> str:
    """The operation output file's stem: each ``#`` field's ``_``-separated initials (main.py)."""
    fields = log_name.replace("-", "_").split("#")
    return "#".join("_".join(w[:1] for w in f.split("_")) for f in fields)


def rewrite(text: str, workspace: str | Path) -> str:
    """Replace the authors' placeholder paths with paths inside ``workspace``."""
    for old, new in PLACEHOLDERS:
        text = text.replace(old, str(Path(workspace) / new))
    return text


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def load_msb(path: str | Path) -> MSBData:
    """Read ``agent_task.jsonl``, ``attack_task.jsonl`` and ``attack_type.jsonl`` (in ``path/data``
    or ``path``) and the files of ``path/operation_space/information``.

    Raises ``ValueError`` naming ``path`` when a file is missing or an attack type/goal is unknown.
    """
    root = Path(path)
    data = root / "data" if (root / "data" / "agent_task.jsonl").is_file() else root
    files = [data / f"{n}.jsonl" for n in ("agent_task", "attack_task", "attack_type")]
    missing = [str(f) for f in files if not f.is_file()]
    if missing:
        raise ValueError(f"path: no MSB data at {str(path)!r} (missing {missing})")
    agents, goals, types = (_jsonl(f) for f in files)
    goal_map = {g["attack_task"]: g["implementation"] for g in goals}
    type_list = tuple(types[-1]["attack_type"])
    check_names(type_list, AttackType, "path (attack_type.jsonl)")
    check_names(tuple(goal_map), AttackGoal, "path (attack_task.jsonl)")
    info_dir = next(
        (d for d in (root, data.parent) if (d / "operation_space" / "information").is_dir()), None
    )
    information = (
        {
            f.name: f.read_text(encoding="utf-8")
            for f in sorted((info_dir / "operation_space" / "information").iterdir())
        }
        if info_dir is not None
        else {}
    )
    return MSBData(tuple(agents), goal_map, type_list, information)


def check_names(names, enum, argument: str) -> tuple[str, ...]:
    """``names`` as plain strings; ``ValueError`` naming ``argument`` and the valid names otherwise."""
    valid = [e.value for e in enum]
    out = []
    for n in names:
        n = n.value if isinstance(n, enum) else n
        if n not in valid:
            raise ValueError(f"{argument}: unknown name {n!r}; valid names: {valid}")
        out.append(n)
    return tuple(out)


def has_attack_server(agent_name: str, tool: str) -> bool:
    """The authors' ``tool_exist``: an attack server ships for this task tool (never for image generation)."""
    return agent_name != "image_generation" and (agent_name, tool) in ATTACK_SERVERS


def enumerate_instances(
    data: MSBData,
    *,
    attack_types=None,
    goals=None,
    agents=None,
) -> list[Instance]:
    """The instances ``main.py`` runs for one model, in its order (2,000 with every filter open).

    Filters as the authors': RI runs only in ``information_retrieval`` and every other type
    everywhere else; types involving NC, PM, OP or TT only where an attack server ships for the
    task tool; the goal filter does not apply to OP, TT and PM-OP (they always run every goal).
    ``attack_types``/``goals``/``agents``: names to keep (default all); unknown names raise ``ValueError``.
    """
    types = (
        check_names(attack_types, AttackType, "attack_types")
        if attack_types is not None
        else data.attack_types
    )
    goal_keep = set(check_names(goals, AttackGoal, "goals")) if goals is not None else None
    known_agents = [a["agent_name"] for a in data.agents]
    if agents is not None:
        bad = [a for a in agents if a not in known_agents]
        if bad:
            raise ValueError(f"agents: unknown {bad}; valid names: {known_agents}")
    out = []
    for at in types:
        every_goal = any(m in at for m in ("tool_transfer", "out_of_scope_parameter"))
        for agent in data.agents:
            name = agent["agent_name"]
            if (agents is not None and name not in agents) or (
                (name == "information_retrieval") != (at == "search_term_deception")
            ):
                continue
            for tt in agent["task_tool"]:
                if any(m in at for m in RESTRICTED_MARKERS) and not has_attack_server(name, tt["tool"]):
                    continue
                for goal, impl in data.goals.items():
                    if goal_keep is not None and not every_goal and goal not in goal_keep:
                        continue
                    out.append(Instance(at, name, agent["system_prompt"], tt["task"], tt["tool"], goal, impl))
    return out

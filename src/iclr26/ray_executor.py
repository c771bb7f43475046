"""Running (system, seed) tasks on Ray: a local instance bound to 127.0.0.1, or a cluster at an address.

Each task is one Ray task that runs in a worker process of its own (``max_calls=1``: a worker exits after
its task, so no torch or BLAS state is shared between runs) and writes its result atomically into the
results folder, exactly as the local executor does; the resume rule (same config hash → skipped) is
applied before anything is submitted. A task whose worker dies (killed, out of memory, node lost) is
recorded as failed in ``DIR/SLUG/error.json`` by the driver, and the other tasks finish.

With no address a private Ray instance is started on this machine, with ``jobs`` CPUs, bound to the
loopback address only, without dashboard and without usage statistics, and shut down at the end. With an
address the tasks go to that cluster: its nodes need iclr26 installed and the results folder on a shared
file system (the same absolute path on every node); the cluster stays up.

Ray is an optional dependency: ``pip install 'iclr26[ray]'``.
"""

from __future__ import annotations

import os
import re
import socket
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from .runner import Outcome, Task, record_failure, run_task

INSTALL_HINT = "pip install 'iclr26[ray]'"

# Environment of a local instance (inherited by every Ray process it starts). Ray's single-machine mode
# (the switch is named after macOS and Windows, where it is the default) gives every node service the
# loopback address, so all of them listen on 127.0.0.1 only.
_LOCAL_ENV = {"RAY_USAGE_STATS_ENABLED": "0", "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


class RayUnavailable(RuntimeError):
    """Ray is not installed, or the cluster at the given address cannot be reached."""


_ADDRESS = re.compile(r"^(?:ray://)?(?P<host>\[[0-9A-Fa-f:.]+\]|[^:/\s\[\]]+):(?P<port>\d{1,5})$")
CONNECT_TIMEOUT_S = 5.0


def check_address(address: str) -> None:
    """Fail fast, with :class:`RayUnavailable`, when nothing listens at ``HOST:PORT``.

    Ray itself keeps retrying an unreachable address for minutes. ``"auto"`` (the cluster this machine
    belongs to) is left to Ray; anything else must be ``HOST:PORT`` or ``ray://HOST:PORT``.
    """
    if address == "auto":
        return
    match = _ADDRESS.match(address) if isinstance(address, str) else None
    if match is None or not 0 < int(match["port"]) < 65536:
        raise RayUnavailable(f"--address must be HOST:PORT, ray://HOST:PORT or auto, got {address!r}")
    host = match["host"].strip("[]")
    try:
        socket.create_connection((host, int(match["port"])), timeout=CONNECT_TIMEOUT_S).close()
    except OSError as exc:
        why = exc.strerror or type(exc).__name__
        raise RayUnavailable(f"cannot reach a Ray cluster at {address!r}: {why}") from None


def require_ray() -> Any:
    """Import and return the ``ray`` module; :class:`RayUnavailable` saying how to install it if absent."""
    try:
        import ray
    except ImportError:
        raise RayUnavailable(f"the Ray executor needs Ray, which is not installed: {INSTALL_HINT}") from None
    return ray


def _first_line(exc: BaseException) -> str:
    text = _plain(str(exc))
    return text.splitlines()[0] if text else type(exc).__name__


@contextmanager
def _environment(values: dict[str, str]) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@contextmanager
def ray_session(jobs: int = 1, address: str | None = None) -> Iterator[Any]:
    """Connect this process to Ray for the duration of the block; yield the ``ray`` module.

    Starts a local instance (``jobs`` CPUs, 127.0.0.1 only, no dashboard, no usage statistics) when
    ``address`` is ``None`` and shuts it down afterwards; otherwise connects to the cluster at ``address``
    and disconnects afterwards. An existing connection of this process is used as it is and left open.
    """
    ray = require_ray()
    if ray.is_initialized():
        yield ray
        return
    common = {"log_to_driver": False, "configure_logging": False}
    if address is None:
        from ray._private import ray_constants

        # The module reads the switch when it is first imported; set it for this process too.
        single_machine = ray_constants.ENABLE_RAY_CLUSTER
        ray_constants.ENABLE_RAY_CLUSTER = False
        try:
            with _environment(_LOCAL_ENV):
                try:
                    ray.init(
                        address="local",
                        num_cpus=jobs,
                        include_dashboard=False,
                        _node_ip_address="127.0.0.1",
                        **common,
                    )
                except Exception as exc:  # noqa: BLE001 - any start-up failure is reported in one line
                    raise RayUnavailable(f"cannot start a local Ray instance: {_first_line(exc)}") from None
                try:
                    yield ray
                finally:
                    ray.shutdown()
        finally:
            ray_constants.ENABLE_RAY_CLUSTER = single_machine
        return
    check_address(address)
    try:
        ray.init(address=address, **common)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        cause = f" ({_first_line(exc.__cause__)})" if exc.__cause__ is not None else ""
        raise RayUnavailable(f"cannot connect to Ray at {address!r}: {_first_line(exc)}{cause}") from None
    try:
        yield ray
    finally:
        ray.shutdown()


def run_on_ray(
    pending: Sequence[tuple[int, Task]],
    *,
    jobs: int = 1,
    address: str | None = None,
    record: Callable[[int, Outcome], None],
) -> None:
    """Run ``pending`` (index, task) pairs as Ray tasks; call ``record(index, outcome)`` as each ends.

    Used by :func:`iclr26.runner.run_tasks` (which applies the resume rule first).
    """
    ray = require_ray()
    if not pending:
        return
    with ray_session(jobs=jobs, address=address):
        remote = ray.remote(num_cpus=1, max_retries=0, max_calls=1)(run_task)
        refs = {remote.remote(task): (i, task) for i, task in pending}
        waiting = list(refs)
        while waiting:
            done, waiting = ray.wait(waiting, num_returns=1)
            for ref in done:
                i, task = refs[ref]
                try:
                    outcome = ray.get(ref)
                except ray.exceptions.RayError as exc:  # no outcome came back from the worker
                    outcome = record_failure(task, _failure_message(ray, exc, task), None, _plain(str(exc)))
                record(i, outcome)


def _plain(text: str) -> str:
    return _ANSI.sub("", text).strip()


def _failure_message(ray: Any, exc: BaseException, task: Task) -> str:
    """One line: the worker died (killed, out of memory, node lost), or Ray could not run the task."""
    died = tuple(
        getattr(ray.exceptions, name)
        for name in ("WorkerCrashedError", "NodeDiedError", "OutOfMemoryError", "LocalRayletDiedError")
        if hasattr(ray.exceptions, name)
    )
    what = f"{task.entry.slug} (seed {task.seed})"
    lines = [line for line in _plain(str(exc)).splitlines() if line.strip()]
    if isinstance(exc, died):
        detail = lines[0] if lines else type(exc).__name__
        return f"{type(exc).__name__}: the Ray worker running {what} died before returning ({detail})"
    # A task error's text starts with the task's name and ends with the underlying exception.
    detail = lines[-1] if lines else type(exc).__name__
    return f"{type(exc).__name__}: Ray could not run {what}: {detail}"

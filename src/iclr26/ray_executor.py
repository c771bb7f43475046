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
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from .runner import Outcome, Task, record_failure, run_task

INSTALL_HINT = "pip install 'iclr26[ray]'"

# Environment of a local instance (inherited by every Ray process it starts). Ray's single-machine mode
# (the switch is named after macOS and Windows, where it is the default) gives every node service the
# loopback address, so all of them listen on 127.0.0.1 only.
_LOCAL_ENV = {"RAY_USAGE_STATS_ENABLED": "0", "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}


class RayUnavailable(RuntimeError):
    """Ray is not installed, or the cluster at the given address cannot be reached."""


def require_ray() -> Any:
    """Import and return the ``ray`` module; :class:`RayUnavailable` saying how to install it if absent."""
    try:
        import ray
    except ImportError:
        raise RayUnavailable(f"the Ray executor needs Ray, which is not installed: {INSTALL_HINT}") from None
    return ray


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
                ray.init(
                    address="local",
                    num_cpus=jobs,
                    include_dashboard=False,
                    _node_ip_address="127.0.0.1",
                    **common,
                )
                try:
                    yield ray
                finally:
                    ray.shutdown()
        finally:
            ray_constants.ENABLE_RAY_CLUSTER = single_machine
        return
    try:
        ray.init(address=address, **common)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise RayUnavailable(f"cannot connect to Ray at {address!r}: {first}") from None
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
                except ray.exceptions.RayError as exc:  # the worker died: no result, no error of its own
                    detail = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
                    message = (
                        f"{type(exc).__name__}: the Ray worker running {task.entry.slug} "
                        f"(seed {task.seed}) died before returning" + (f" ({detail})" if detail else "")
                    )
                    outcome = record_failure(task, message, seconds=None)
                record(i, outcome)

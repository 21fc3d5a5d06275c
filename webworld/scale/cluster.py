"""Connecting to a Ray cluster, and shipping sites to workers that share no disk with us."""

from __future__ import annotations

import io
import os
import tarfile
import tempfile
from pathlib import Path
from typing import Any

from webworld.errors import UsageError, WebworldError


def ray_module() -> Any:
    try:
        import ray
    except ImportError:
        raise UsageError("--ray needs Ray: scripts/setup.sh ray (or pip install 'webworld[ray]')"
                         ) from None
    return ray


def connect(address: str) -> Any:
    """Join the cluster at ``address`` (``auto``: the one `ray start` runs on this machine,
    or ``RAY_ADDRESS``; ``local``: a new single-node cluster in this process)."""
    ray = ray_module()
    if ray.is_initialized():
        return ray
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    target = None if address == "local" else address
    try:
        # Ray binds the machine's address, not loopback (it cannot be told otherwise): keep
        # a cluster private with a firewall, or in a loopback-only namespace as the tests do
        local = {"include_dashboard": False} if target is None else {}
        ray.init(address=target, namespace="webworld", log_to_driver=False,
                 runtime_env={"env_vars": {"RAY_USAGE_STATS_ENABLED": "0"}}, **local)
    except ConnectionError as exc:
        raise UsageError(f"no Ray cluster at {address!r}: {str(exc).splitlines()[0]} "
                         "(start one with `ray start --head`)") from None
    return ray


def cluster_cpus(ray: Any) -> int:
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


def pack_dir(folder: Path) -> bytes:
    """A folder as an in-memory gzipped tar (sites are a few hundred KB)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        tar.add(folder, arcname=folder.name)
    return buffer.getvalue()


def unpack_dirs(bundles: list[bytes], prefix: str) -> tuple[tempfile.TemporaryDirectory, list[Path]]:
    """Unpack bundles into a fresh temp folder; the folders they hold, in order."""
    root = tempfile.TemporaryDirectory(prefix=prefix)
    dirs = []
    for data in bundles:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            names = {m.name.split("/", 1)[0] for m in tar.getmembers()}
            if len(names) != 1:
                raise WebworldError(f"a site bundle holds {len(names)} top folders, expected 1")
            tar.extractall(root.name, filter="data")  # no links or paths out of the folder
        dirs.append(Path(root.name) / names.pop())
    return root, dirs


def died(ray: Any) -> tuple[type[BaseException], ...]:
    """The errors that mean a worker is gone (its work is retried elsewhere)."""
    exc = ray.exceptions
    return tuple(e for e in (getattr(exc, "ActorDiedError", None), exc.RayActorError,
                             getattr(exc, "ActorUnavailableError", None),
                             exc.WorkerCrashedError, getattr(exc, "NodeDiedError", None))
                 if e is not None)


def close_workers(ray: Any, workers: list[Any]) -> None:
    """Let each worker close its browser, server and scratch folder, then end it; a worker
    already gone or wedged is ended all the same."""
    try:
        ray.get([w.close.remote() for w in workers], timeout=60)
    except (ray.exceptions.RayError, TimeoutError):
        pass  # ray.kill below ends it either way
    for worker in workers:
        ray.kill(worker)

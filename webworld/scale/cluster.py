"""Connecting to a Ray cluster, and shipping sites to workers that share no disk with us."""

from __future__ import annotations

import io
import os
import secrets
import shutil
import sys
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


INSECURE_ENV = "WEBWORLD_RAY_INSECURE"  # set by --ray-insecure
TOKEN_ENVS = ("RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH")
LOOPBACK = ("127.", "localhost", "[::1]", "::1")
DEFAULT_TOKEN = Path.home() / ".ray" / "auth_token"  # where `ray get-auth-token --generate` writes
# Ray gives a new node a fixed 30 s to register; on a busy machine that can pass, and a second
# start usually succeeds (tests/scale/cluster.sh does the same for `ray start`)
STARTUP_TIMEOUT = "timed out during startup"
STARTS = 2


def connect(address: str) -> Any:
    """Join the cluster at ``address`` (``auto``: the one `ray start` runs on this machine,
    or ``RAY_ADDRESS``; ``local``: a new single-node cluster in this process), with token
    authentication (:func:`authenticate`)."""
    loaded = sys.modules.get("ray")
    if loaded is not None and loaded.is_initialized():
        return loaded
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    target = None if address == "local" else address
    # before Ray loads: it reads RAY_AUTH_MODE when it is imported, and a driver left in the
    # mode it read then is refused by the cluster it starts, which requires the token
    authenticate(address)
    ray = ray_module()
    if loaded is not None:
        _reread_auth_settings()
    # Ray binds the machine's address, not loopback (it cannot be told otherwise): the
    # token keeps others out; a firewall or a loopback-only namespace keeps it private
    local = {"include_dashboard": False} if target is None else {}
    for attempt in range(1, STARTS + 1):
        try:
            ray.init(address=target, namespace="webworld", log_to_driver=False,
                     runtime_env={"env_vars": {"RAY_USAGE_STATS_ENABLED": "0"}}, **local)
            return ray
        except ConnectionError as exc:
            raise UsageError(f"no Ray cluster at {address!r}: {str(exc).splitlines()[0]} "
                             "(start one with `ray start --head`)") from None
        except Exception as exc:  # Ray raises a bare Exception when its node is late
            if STARTUP_TIMEOUT not in str(exc):
                raise
            ray.shutdown()
            if attempt == STARTS:
                raise WebworldError(f"Ray's node did not start ({STARTUP_TIMEOUT}, {STARTS} "
                                    "tries): the machine may be overloaded") from None
    return ray


def authenticate(address: str) -> None:
    """Token authentication for the cluster at ``address`` (Ray >= 2.52): anyone who reaches
    an unauthenticated Ray control plane can run code on it. A cluster webworld starts
    (``local``) gets a new random token, which its own workers inherit; joining a cluster
    takes its token from ``RAY_AUTH_TOKEN``, ``RAY_AUTH_TOKEN_PATH`` or Ray's default file
    (``ray get-auth-token`` prints it), and an address outside loopback without one is
    refused unless ``--ray-insecure`` says the cluster has no authentication."""
    if os.environ.get(INSECURE_ENV) == "1":
        os.environ["RAY_AUTH_MODE"] = "disabled"
        return
    if address == "local":
        os.environ["RAY_AUTH_MODE"] = "token"
        if not any(os.environ.get(name) for name in TOKEN_ENVS):
            os.environ["RAY_AUTH_TOKEN"] = secrets.token_hex(32)
        return
    if any(os.environ.get(name) for name in TOKEN_ENVS) or DEFAULT_TOKEN.is_file():
        os.environ["RAY_AUTH_MODE"] = "token"
        return
    host = (os.environ.get("RAY_ADDRESS", "") if address == "auto" else address).rsplit(":", 1)[0]
    if host and not host.startswith(LOOPBACK) and host != "auto":
        raise UsageError(f"refusing to join the Ray cluster at {address!r} without its token: "
                         "set RAY_AUTH_TOKEN or RAY_AUTH_TOKEN_PATH (`ray get-auth-token` on its "
                         "head node prints it), or pass --ray-insecure for a cluster that has no "
                         "authentication")


def _reread_auth_settings() -> None:
    """Make an already imported Ray read the auth mode and token from the environment again
    (what Ray's own tests do between clusters)."""
    from ray._raylet import AuthenticationTokenLoader, Config

    AuthenticationTokenLoader.instance().reset_cache()
    Config.initialize("")


def cluster_cpus(ray: Any) -> int:
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


def pack_dir(folder: Path) -> bytes:
    """A folder as an in-memory gzipped tar (sites are a few hundred KB)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        tar.add(folder, arcname=folder.name)
    return buffer.getvalue()


def unpack_dirs(bundles: list[bytes], prefix: str) -> tuple[tempfile.TemporaryDirectory, list[Path]]:
    """Unpack bundles into a fresh temp folder, named after this process (a worker's close
    removes it; a killed worker's is removed by the next worker to start on its machine);
    the folders they hold, in order."""
    sweep_dead(prefix)
    root = tempfile.TemporaryDirectory(prefix=f"{prefix}{_owner(os.getpid())}")
    dirs = []
    for data in bundles:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            names = {m.name.split("/", 1)[0] for m in tar.getmembers()}
            if len(names) != 1:
                raise WebworldError(f"a site bundle holds {len(names)} top folders, expected 1")
            tar.extractall(root.name, filter="data")  # no links or paths out of the folder
        dirs.append(Path(root.name) / names.pop())
    return root, dirs


def sweep_dead(prefix: str) -> None:
    """Remove the scratch folders (``prefix`` + owner) of processes of this machine's pid
    namespace that are gone: a worker killed outright never runs its own clean-up."""
    mine = f"{prefix}{_pid_namespace()}-"
    for folder in Path(tempfile.gettempdir()).glob(f"{mine}*-*"):
        pid = folder.name[len(mine):].split("-", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)


def _owner(pid: int) -> str:
    """``<pid namespace>-<pid>-``: a pid names a process only within its namespace (a
    container sharing /tmp has its own)."""
    return f"{_pid_namespace()}-{pid}-"


def _pid_namespace() -> str:
    try:
        return "".join(filter(str.isdigit, os.readlink("/proc/self/ns/pid")))
    except OSError:
        return "0"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


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

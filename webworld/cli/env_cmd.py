"""`webworld env`: the RL environments from the terminal (list, play, snapshot, parity, check,
serve)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from webworld.cli.console import err, out
from webworld.cli.errors import reports_errors
from webworld.cli.options import TRAJECTORIES_DIR, StateBudget
from webworld.cli.site_cmd import SITES_DIR
from webworld.errors import UsageError

env_app = typer.Typer(help="RL environments: live sites, the fast env, MiniWoB++.",
                      no_args_is_help=True)

Sites = typer.Option(SITES_DIR, "--sites", help="Rendered sites (<sites>/<world>/).")
Trajectories = typer.Option(TRAJECTORIES_DIR, "--trajectories",
                            help="Verified trajectories (<dir>/<world>/verified.jsonl).")
Source = typer.Option("verified", "--source", help="Task instances from: verified, candidates, spec.")
Observation = typer.Option("full", "--observation", help="full or compact")
MINIWOB = "miniwob:"


def _worlds(sites: Path, trajectories: Path, source: str, only: list[str] | None = None,
            dataset: Path | None = None):  # -> WorldSet
    from webworld.rl.tasks import load_worlds

    return load_worlds(sites, trajectories, source=source, worlds=only or None, dataset=dataset)


@env_app.command("list")
@reports_errors
def list_cmd(
    sites: Path = Sites, trajectories: Path = Trajectories, source: str = Source,
    dataset: Path = typer.Option(None, "--dataset", help="Take splits from this export."),
    miniwob: bool = typer.Option(False, "--miniwob", help="List the MiniWoB++ tasks instead."),
) -> None:
    """Worlds and their tasks by split (or every MiniWoB++ task)."""
    if miniwob:
        from webworld.rl.miniwob_tasks import miniwob_tasks

        tasks = miniwob_tasks()
        out.print("\n".join(f"{MINIWOB}{t}" for t in tasks))
        out.print(f"{len(tasks)} MiniWoB++ tasks (webworld/miniwob.<task>-v0)")
        return
    worlds = _worlds(sites, trajectories, source, dataset=dataset)
    table = Table("world", "split", "transition", "task", "instances", "shortest steps",
                  "oracle paths", title="webworld env list")
    for world in worlds.worlds.values():
        by_task: dict[str, list] = {}
        for inst in world.instances:
            by_task.setdefault(inst.task_id, []).append(inst)
        for task, insts in sorted(by_task.items()):
            table.add_row(world.id, world.split or "-", world.spec.transition, task,
                          str(len(insts)),
                          str(min(i.shortest_steps for i in insts)),
                          str(sum(len(i.oracle) for i in insts)))
    out.print(table)
    counts = {s: len(worlds.instances(s)) for s in ("train", "validation", "test")}
    out.print("instances by split: " + ", ".join(f"{k} {v}" for k, v in counts.items()))


@env_app.command("play")
@reports_errors
def play_cmd(
    world: str = typer.Argument(..., help="A world id, or miniwob:<task>."),
    task: str = typer.Option(None, "--task", "-t", help="Task id or instance id (default: drawn)."),
    policy: str = typer.Option("human", "--policy", help="human (type actions), oracle or random."),
    fast: bool = typer.Option(False, "--fast", help="The fast env (no browser)."),
    observation: str = Observation,
    episodes: int = typer.Option(1, "--episodes", "-n", min=1),
    seed: int = typer.Option(0, "--seed", "-s"),
    max_steps: int = typer.Option(None, "--max-steps", min=1),
    sites: Path = Sites, trajectories: Path = Trajectories, source: str = Source,
) -> None:
    """Step through an episode: see the page, type an action, see reward and errors.

    With --policy oracle|random the policy plays by itself."""
    settings: dict[str, Any] = {"observation": observation, "max_steps": max_steps}
    if world.startswith(MINIWOB):
        from webworld.rl.miniwob import MiniWoBEnv

        if policy == "oracle":
            raise UsageError("MiniWoB++ has no oracle here; use --policy human or random")
        env: Any = MiniWoBEnv(world[len(MINIWOB):], **settings)
        worlds = None
    else:
        worlds = _worlds(sites, trajectories, source, [world])
        if fast:
            from webworld.rl.fast.env import FastEnv

            env = FastEnv(worlds, split=None, **settings)
        else:
            from webworld.rl.live import LiveEnv

            env = LiveEnv(worlds, split=None, **settings)
    try:
        player = None if policy == "human" else _policy(policy, worlds, seed)
        for e in range(episodes):
            _play_episode(env, player, seed + e, task)
    finally:
        env.close()


def _policy(name: str, worlds: Any, seed: int) -> Any:
    from webworld.rl.policies import make_policy

    return make_policy(name, worlds, seed)


def _play_episode(env: Any, player: Any, seed: int, task: str | None) -> None:
    obs, info = env.reset(seed=seed, options={"task": task} if task else None)
    if player is not None:
        player.reset(obs, info)
    total, done = 0.0, False
    _show(obs, info, None)
    while not done:
        if player is None:
            action = typer.prompt("action (q to quit)", default="", show_default=False)
            if action.strip() in ("q", "quit", "exit"):
                return
        else:
            action = player.act(obs, info)
            out.print(f"[bold]> {action}[/]")
        obs, reward, terminated, truncated, info = env.step(action)
        total += reward
        done = terminated or truncated
        _show(obs, info, (reward, terminated, truncated))
    out.print(f"[bold]episode over:[/] return {total:g}, {info['step']} steps, "
              + ("success" if total > 0 else "no success"))


def _show(obs: dict[str, Any], info: dict[str, Any], result: tuple | None) -> None:
    out.rule(f"step {info.get('step', 0)}")
    out.print(f"[bold]Task:[/] {obs['goal']}\n[bold]URL:[/] {obs['url']}")
    out.print(obs["axtree"], markup=False)
    if obs["last_action_error"]:
        out.print(f"[red]error:[/] {obs['last_action_error']}")
    if result is not None:
        reward, terminated, truncated = result
        out.print(f"reward {reward:g}  terminated {terminated}  truncated {truncated}")


@env_app.command("snapshot")
@reports_errors
def snapshot_cmd(
    worlds: list[str] = typer.Argument(None, help="World ids (default: every rendered site)."),
    sites: Path = Sites,
    state_budget: int = StateBudget,
) -> None:
    """Capture each world's pages once in Chromium for the fast env (<site>/fast/)."""
    from webworld.render.site import load_site
    from webworld.rl.fast.capture import build_snapshot, load_snapshot
    from webworld.rl.tasks import site_dirs

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn())
    for site_dir in site_dirs(sites, worlds or None):
        site = load_site(site_dir)
        if load_snapshot(site) is not None:
            out.print(f"{site.spec.id}: snapshot up to date")
            continue
        started = time.perf_counter()
        with Progress(*columns, console=err, transient=True) as progress:
            bar = progress.add_task(f"capture {site.spec.id}", total=None)
            snap = build_snapshot(site, state_budget=state_budget,
                                  progress=lambda d, t, b=bar: progress.update(b, completed=d, total=t))
        configs = sum(len(layout["configs"]) for layout in snap["layouts"])
        out.print(f"{site.spec.id}: {len(snap['states'])} states, {len(snap['layouts'])} pages, "
                  f"{configs} page configurations in {time.perf_counter() - started:.1f}s "
                  f"-> {site_dir / 'fast' / 'snapshot.json.gz'}")


@env_app.command("parity")
@reports_errors
def parity_cmd(
    worlds: list[str] = typer.Argument(None, help="World ids (default: all)."),
    sites: Path = Sites, trajectories: Path = Trajectories,
    random_episodes: int = typer.Option(20, "--random", help="Random-action episodes."),
    seed: int = typer.Option(0, "--seed", "-s"),
    observation: str = Observation,
) -> None:
    """Step the live and the fast env side by side: they must give the same bytes.

    Every verified trajectory is played in both, then seeded random actions (broken ones
    included)."""
    from webworld.rl.fast.env import FastEnv
    from webworld.rl.live import LiveEnv
    from webworld.rl.parity import compare

    loaded = _worlds(sites, trajectories, "verified", worlds)
    fast = FastEnv(loaded, split=None, observation=observation)
    live = LiveEnv(loaded, split=None, observation=observation)
    try:
        started = time.perf_counter()
        with Progress(TextColumn("parity"), TextColumn("{task.completed} steps"),
                      TimeElapsedColumn(), console=err, transient=True) as progress:
            bar = progress.add_task("parity", total=None)
            report = compare(live, fast, loaded.instances(), random_episodes=random_episodes,
                             seed=seed, progress=lambda n: progress.update(bar, completed=n))
    finally:
        live.close()
    for problem in report.mismatches[:5]:
        err.print(str(problem), markup=False)
    for problem in report.oracle_failures[:5]:
        err.print(problem, markup=False)
    out.print(f"{report.episodes} episodes, {report.steps} steps in "
              f"{time.perf_counter() - started:.1f}s: {len(report.mismatches)} mismatches, "
              f"{len(report.oracle_failures)} oracle failures")
    if not report.ok:
        raise typer.Exit(1)


@env_app.command("check")
@reports_errors
def check_cmd(
    world: str = typer.Argument(..., help="A world id, or miniwob:<task>."),
    fast: bool = typer.Option(False, "--fast"),
    sites: Path = Sites, trajectories: Path = Trajectories, source: str = Source,
) -> None:
    """Run gymnasium's env checker on one environment."""
    from gymnasium.utils.env_checker import check_env

    if world.startswith(MINIWOB):
        from webworld.rl.miniwob import MiniWoBEnv

        env: Any = MiniWoBEnv(world[len(MINIWOB):])
    else:
        loaded = _worlds(sites, trajectories, source, [world])
        if fast:
            from webworld.rl.fast.env import FastEnv

            env = FastEnv(loaded, split=None)
        else:
            from webworld.rl.live import LiveEnv

            env = LiveEnv(loaded, split=None)
    try:
        check_env(env, skip_render_check=True)
    finally:
        env.close()
    out.print(f"{world}: gymnasium's check_env passed")


@env_app.command("serve")
@reports_errors
def serve_cmd(
    worlds: Path = typer.Argument(..., help="A `webworld build` output (sites/ and "
                                  "trajectories/; the fast env needs `webworld env snapshot`)."),
    env: str = typer.Option("fast", "--env", help="fast (no browser) or live (Chromium)."),
    host: str = typer.Option("127.0.0.1", "--host",
                             help="Bind address (loopback by default; any other needs --token)."),
    port: int = typer.Option(8000, "--port", "-p", min=0, max=65535, help="0: any free port."),
    token: str = typer.Option(None, "--token", envvar="WEBWORLD_ENV_TOKEN",
                              help="Clients must send 'Authorization: Bearer <token>'."),
    max_sessions: int = typer.Option(None, "--max-sessions", min=1,
                                     help="Concurrent sessions (default: fast 1024, live 16)."),
    observation: str = typer.Option("compact", "--observation",
                                    help="full or compact (a reset may choose)."),
    reward: str = typer.Option("success", "--reward", help="success or progress (a reset may "
                               "choose)."),
    split: str = typer.Option("train", "--split",
                              help="train, validation, test or all: where resets draw tasks."),
) -> None:
    """Serve the worlds as an OpenEnv environment, one episode at a time per session.

    HTTP /reset /step /state /schema, and WebSocket sessions on /ws (OpenEnv's EnvClient)."""
    from webworld.interop.openenv.server import check_exposure, create_app, listen, run, url_of

    check_exposure(host, token)  # before the worlds load: a refusal costs nothing
    app = create_app(worlds, env=env, split=split, observation=observation,  # type: ignore[arg-type]
                     reward=reward, max_sessions=max_sessions, token=token)  # type: ignore[arg-type]
    sock = listen(host, port, token=token)
    server = app.state.env_server
    out.print(f"webworld env server: {len(app.state.served.shared.worlds.worlds)} world(s), "
              f"{env} env, up to {server.max_concurrent_envs} sessions"
              + (", token required" if token else ""))
    out.print(f"listening on {url_of(sock)}")
    try:
        run(app, sock)
    except KeyboardInterrupt:
        err.print("stopped by Ctrl-C")
        raise typer.Exit(130) from None

"""Options shared by several commands, defined once."""

from __future__ import annotations

import os
from enum import StrEnum

import typer

from webworld.pipeline import SPECS_DIR, TRAJECTORIES_DIR  # noqa: F401  (defined once there)
from webworld.propose.versions import GENERATOR_HELP, LATEST_GENERATOR
from webworld.spec.graph import DEFAULT_STATE_BUDGET


class ProfileChoice(StrEnum):
    easy = "easy"
    medium = "medium"
    hard = "hard"


class Transition(StrEnum):
    """How a site moves between pages (WorldSpec.transition)."""

    navigate = "navigate"
    swap = "swap"


StateBudget = typer.Option(DEFAULT_STATE_BUDGET, "--state-budget", min=1,
                           help="Most states BFS may visit before it reports the cut.")

GeneratorVersion = typer.Option(LATEST_GENERATOR, "--generator-version", min=1,
                                max=LATEST_GENERATOR, help=GENERATOR_HELP)

MaxDepth = typer.Option(None, "--max-depth", min=1, help="BFS depth limit (default: none).")
ExtraSteps = typer.Option(1, "--extra-steps", min=0,
                          help="Also keep paths up to this many steps longer than the shortest.")
MaxShortest = typer.Option(32, "--max-shortest", min=1,
                           help="Shortest paths kept per task instance.")
MaxLonger = typer.Option(1, "--max-longer", min=0, help="Longer paths kept per task instance.")
MaxInstances = typer.Option(48, "--max-instances", min=1, help="Task instances kept per task.")

RayAddress = typer.Option(None, "--ray", metavar="auto|ADDRESS|local",
                          help="Spread the work over a Ray cluster: `auto` (the one `ray start` "
                               "runs here), host:port, or `local` (a new one in this process).")
RayWorkers = typer.Option(None, "--ray-workers", min=1,
                          help="Ray worker actors (default: one per CPU of the cluster).")


def _insecure(value: bool) -> bool:
    if value:  # read where webworld joins the cluster (webworld.scale.cluster.authenticate)
        os.environ["WEBWORLD_RAY_INSECURE"] = "1"
    return value


RayInsecure = typer.Option(False, "--ray-insecure", callback=_insecure,
                           help="Join a Ray cluster that has no token authentication (not "
                                "advised: anyone who reaches it can run code there).")

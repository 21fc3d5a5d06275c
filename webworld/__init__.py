"""webworld: synthetic web worlds, verified trajectories, and agents trained on them."""

__version__ = "0.1.0"

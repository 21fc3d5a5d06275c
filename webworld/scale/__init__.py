"""Scale-out on a Ray cluster: the verifier and the RL rollouts spread over worker actors.

Each worker actor unpacks the sites it is sent, serves them on its own loopback with its own
Chromium, and sends back only results (records, screenshots, observations). The driver
keeps writing the same files the single-process path writes, so the outputs are the same
and a run stays resumable. See :mod:`webworld.scale.cluster` for connecting.
"""

"""Generated worlds are coherent: no finding of the coherence check (webworld.spec.coherence)
on any archetype at any profile. The default run makes every archetype once; the 1,035-world
sweep (23 archetypes x 3 profiles x 15 seeds, one test per archetype) runs with -m slow:

    .venv/bin/python -m pytest -m slow tests/propose/test_coherence_sweep.py
"""

from __future__ import annotations

import pytest

from webworld.propose.procedural import generate
from webworld.propose.profiles import PROFILES
from webworld.spec.archetypes import ARCHETYPES
from webworld.spec.validate import validate

COHERENCE_CODES = frozenset({"column-kind", "foreign-facet", "miscategorised-item",
                             "fact-mismatch"})


def incoherences(worlds: list[tuple[str, str, int]], version: int | None = None
                 ) -> list[str]:
    """Every coherence finding of the generated worlds, as 'world path: message'."""
    found = []
    for key, profile, seed in worlds:
        kw = {} if version is None else {"version": version}
        spec = generate(ARCHETYPES[key].title, profile, seed, **kw).spec
        found += [f"{spec.id} {f.path}: {f.message}" for f in validate(spec).findings
                  if f.code in COHERENCE_CODES]
    return found


def test_every_archetype_once_is_coherent() -> None:
    profiles = list(PROFILES)
    worlds = [(key, profiles[i % len(profiles)], 0) for i, key in enumerate(sorted(ARCHETYPES))]
    assert incoherences(worlds) == []


def test_version_1_is_kept_as_it_was_with_its_contradictions() -> None:
    # the first worlds are rebuilt byte for byte (tests/propose/test_examples.py), flaws and all
    found = " ".join(incoherences([("flights", "easy", 0)], version=1))
    assert "'stops'" in found and "'In stock only'" in found


SWEEP_SEEDS = range(15)


def test_the_sweep_makes_over_a_thousand_worlds() -> None:
    assert len(ARCHETYPES) * len(PROFILES) * len(SWEEP_SEEDS) >= 1000


@pytest.mark.slow
@pytest.mark.parametrize("key", sorted(ARCHETYPES))
def test_a_thousand_worlds_of_every_archetype_and_profile_are_coherent(key: str) -> None:
    # one archetype a test (45 worlds): the sweep runs in parallel and each part in its time
    found = incoherences([(key, profile, seed) for profile in PROFILES for seed in SWEEP_SEEDS])
    assert found == [], f"{len(found)} findings, the first: {found[:5]}"

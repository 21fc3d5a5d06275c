"""The example specs shipped in fsm_specs/ are valid and reproducible byte for byte."""

from __future__ import annotations

from pathlib import Path

import pytest

from webworld.propose.improve import improve
from webworld.propose.procedural import generate
from webworld.spec.io import load_spec, spec_to_json
from webworld.spec.validate import validate

EXAMPLES = sorted((Path(__file__).parents[2] / "fsm_specs").glob("*.json"))


def test_examples_cover_every_profile() -> None:
    assert len(EXAMPLES) >= 6
    assert {load_spec(p).provenance.profile for p in EXAMPLES} == {"easy", "medium", "hard"}


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_example_is_valid_and_reproducible(path: Path) -> None:
    spec = load_spec(path)
    assert validate(spec).valid
    prov = spec.provenance
    again = improve(generate(prov.theme, prov.profile, prov.seed,
                             version=prov.generator_version).spec).spec
    assert spec_to_json(again) == path.read_text()

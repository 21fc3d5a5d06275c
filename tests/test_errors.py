"""One wording of a pydantic error everywhere a user meets one: each problem's path and
message, the count of the rest past a limit."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ValidationError, model_validator

from webworld.errors import validation_problems


class Settings(BaseModel):
    a: int
    b: int
    c: int

    @model_validator(mode="after")
    def ordered(self) -> Settings:
        if not self.a < self.b < self.c:
            raise ValueError("a < b < c")
        return self


def problems(**fields: object) -> ValidationError:
    with pytest.raises(ValidationError) as caught:
        Settings.model_validate(fields)
    return caught.value


def test_each_problem_is_named_by_its_path_and_message() -> None:
    said = validation_problems(problems(a="x", b=1))
    assert said.startswith("a: Input should be a valid integer")
    assert "; c: Field required" in said and "more" not in said


def test_a_check_of_the_whole_model_says_top_without_pydantic_prefix() -> None:
    assert validation_problems(problems(a=3, b=2, c=1)) == "(top): a < b < c"


def test_past_the_limit_the_rest_are_counted() -> None:
    said = validation_problems(problems(a="x", b="y", c="z"), limit=1)
    assert said.startswith("a: ") and said.endswith("; and 2 more") and "b:" not in said

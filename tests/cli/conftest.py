"""The widget lab of tests/rl (a verified world), for the CLI tests that need one."""

from tests.rl.conftest import lab  # noqa: F401  (a fixture)

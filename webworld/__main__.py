"""`python -m webworld ...`: the same as the `webworld` command."""

from webworld.cli.main import app

app(prog_name="webworld")

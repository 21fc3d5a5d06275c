"""The CLI's consoles: one for results (stdout), one for errors (stderr)."""

from __future__ import annotations

import shutil
import sys

from rich.console import Console

# Piped output (CI logs, files) gets a wide page instead of rich's 80-column default,
# so summary tables are not cut.
_WIDTH = None if sys.stdout.isatty() else max(140, shutil.get_terminal_size().columns)

out = Console(highlight=False, soft_wrap=True, width=_WIDTH)
err = Console(stderr=True, highlight=False, soft_wrap=True)

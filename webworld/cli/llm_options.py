"""The `--llm` options shared by commands that can use a language model, and the cost table."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from webworld.agents.config import STAGES, load_llm_config, parse_stages
from webworld.agents.session import LLMSession
from webworld.cli.console import out

LLMStages = typer.Option(None, "--llm", help=f"Stages that use an LLM: {','.join(STAGES)} or "
                         "all (default: none, fully offline).")
LLMBaseURL = typer.Option(None, "--llm-base-url", help="OpenAI-compatible endpoint "
                          "(env WEBWORLD_LLM_BASE_URL / OPENAI_BASE_URL).")
LLMModel = typer.Option(None, "--llm-model", help="Model name (env WEBWORLD_LLM_MODEL).")
LLMKey = typer.Option(None, "--llm-api-key", help="API key (env WEBWORLD_LLM_API_KEY / "
                      "OPENAI_API_KEY).")
LLMConfigFile = typer.Option(None, "--llm-config", help="TOML file with an \\[llm] table "
                             "(default: ./webworld.toml if present).")
LLMBudget = typer.Option(None, "--llm-budget-usd", min=0, help="Stop when this much is spent.")


def llm_session(stages: str | None, base_url: str | None, model: str | None, api_key: str | None,
                config_file: Path | None, budget_usd: float | None) -> LLMSession | None:
    if not stages:
        return None
    config = load_llm_config(config_file, base_url=base_url, model=model, api_key=api_key,
                             budget_usd=budget_usd)
    return LLMSession(config, parse_stages(stages))


def print_costs(session: LLMSession, verified: int) -> None:
    """Dollars by stage, and per verified trajectory (the paper's figure is $0.04)."""
    if not session.ledger.stages:
        return
    table = Table("stage", "calls", "cached", "repairs", "retries", "tokens in", "tokens out",
                  "USD", "USD / verified trajectory", title=f"LLM cost ({session.config.model})")
    for stage, u in sorted(session.ledger.stages.items()):
        per = f"{u.usd / verified:.5f}" if verified else "-"
        table.add_row(stage, str(u.calls), str(u.cache_hits), str(u.repairs), str(u.retries),
                      str(u.input_tokens), str(u.output_tokens), f"{u.usd:.5f}", per)
    total = session.ledger.usd
    table.add_section()
    table.add_row("total", "", "", "", "", "", "", f"{total:.5f}",
                  f"{total / verified:.5f}" if verified else "-")
    out.print(table)
    if session.ledger.unpriced:
        out.print(f"[yellow]no price known for {', '.join(sorted(session.ledger.unpriced))}: "
                  "counted as $0 (add [llm.prices] to webworld.toml)[/]")

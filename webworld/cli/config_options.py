"""A Typer command's options made from a pydantic settings model, as TRL's HfArgumentParser
makes argparse's: each field's flags (:mod:`webworld.settings`), default, help and bounds
declared once, on the model.

``@config_options(SFTSettings)`` on a function whose first parameter takes a :class:`Given`
(its other parameters are the command's own Typer options, ``--config``, ``--resume``)
gives Typer a signature with one option per setting. Bounds are shown in the help and checked
by pydantic, whose error becomes one line naming the flag (exit 2); a flag left out takes the
field's default, and :class:`Given` knows which were given, so a TOML file or a saved
``config.json`` can sit under them.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, Optional, TypeVar, get_type_hints

import typer
from pydantic import BaseModel, ValidationError
from rich.markup import escape

from webworld.errors import UsageError
from webworld.settings import (
    Setting,
    merged,
    nested,
    optional_inner,
    problems,
    setting_at,
    settings_of,
)

M = TypeVar("M", bound=BaseModel)
R = TypeVar("R")
CONTEXT = "typer_context"  # the parameter Typer fills with the click context
NOT_GIVEN = {"DEFAULT", "DEFAULT_MAP"}  # click's ParameterSource names (typer vendors click)


@dataclass
class Given(Generic[M]):
    """What a command line said about a settings model."""

    model: type[M]
    values: dict[Setting, Any]  # every setting's value, the default where none was given
    given: set[str]  # the keys given on the command line
    context: typer.Context

    def flags(self) -> dict[str, Any]:
        """The given settings as the nested dict the model validates."""
        return nested({s: v for s, v in self.values.items() if s.key in self.given})

    def settings(self, base: Mapping[str, Any] | None = None, where: str = "") -> M:
        """The model from ``base`` (a TOML file's or a saved run's settings; ``where`` names
        it) with the given flags on top. A problem is one line naming the flag, or, when the
        value came from ``base``, the key and ``where``."""
        try:
            return self.model.model_validate(merged(base or {}, self.flags()))
        except ValidationError as exc:
            def named(setting: Setting) -> str:
                return setting.key if base and setting.key not in self.given else setting.flag

            from_base = base and any(
                (s := setting_at(self.model, e["loc"])) is None or s.key not in self.given
                for e in exc.errors())
            raise UsageError(problems(self.model, exc, named), where if from_base else "") \
                from None


def given_of(model: type[M], chosen: list[Setting], context: typer.Context,
             values: Mapping[str, Any]) -> Given[M]:
    """The :class:`Given` of a parsed command line (``values`` by parameter name)."""
    return Given(model, {s: values[s.param] for s in chosen},
                 {s.key for s in chosen if _source(context, s.param) not in NOT_GIVEN},
                 context)


def _source(context: typer.Context, param: str) -> str:
    source = context.get_parameter_source(param)
    return source.name if source is not None else "DEFAULT"


def option(setting: Setting) -> tuple[Any, Any]:
    """``(annotation, typer.Option)`` of a setting: the field's flags, default and help (its
    bounds in words); a required one is checked by pydantic too, so that a subcommand of a
    group whose callback has it need not give it."""
    inner, optional = optional_inner(setting.annotation)
    help_text = escape(setting.help)
    if setting.switches:
        return list[str], typer.Option([], setting.flag, help=help_text, show_default=False)
    if inner is bool and not optional:
        return bool, typer.Option(setting.default, f"{setting.flag}/--no-{setting.flag[2:]}",
                                  help=help_text)
    if setting.required:
        return Optional[inner], typer.Option(None, *setting.flags, help=help_text,
                                             show_default=False)
    return (Optional[inner] if optional else inner), \
        typer.Option(setting.default, *setting.flags, help=help_text)


def config_options(model: type[M], *,
                   exclude: Iterable[str] = ()) -> Callable[[Callable[..., R]], Callable[..., R]]:
    """Decorate a command taking ``(given: Given[model], **its own options)``; ``exclude``
    leaves settings (by key) to the command's own options."""
    chosen = [s for s in settings_of(model) if s.key not in set(exclude)]

    def decorate(fn: Callable[..., R]) -> Callable[..., R]:
        own = list(inspect.signature(fn).parameters.values())[1:]

        @functools.wraps(fn)
        def command(**kwargs: Any) -> R:
            context = kwargs.pop(CONTEXT)
            given = given_of(model, chosen, context, kwargs)
            return fn(given, **{k: v for k, v in kwargs.items()
                                if k not in {s.param for s in chosen}})

        params = [inspect.Parameter(CONTEXT, inspect.Parameter.KEYWORD_ONLY,
                                    annotation=typer.Context)]
        for setting in chosen:
            annotation, default = option(setting)
            params.append(inspect.Parameter(setting.param, inspect.Parameter.KEYWORD_ONLY,
                                            default=default, annotation=annotation))
        hints = get_type_hints(fn)  # the command's own options, named in its module
        params += [p.replace(kind=inspect.Parameter.KEYWORD_ONLY, annotation=hints[p.name])
                   for p in own]
        command.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
        command.__annotations__ = {p.name: p.annotation for p in params}
        del command.__wrapped__  # typer reads the signature above, not fn's
        return command

    return decorate


def parse(app: typer.Typer, args: list[str], model: type[M]) -> Given[M]:
    """What ``app``'s own parser makes of ``args`` (a command's path first: ``train sft``)
    for ``model``'s settings, without running the command (tests, tools)."""
    command: Any = typer.main.get_command(app)
    context = command.make_context("webworld", list(args))
    while hasattr(command, "resolve_command") and (rest := _unparsed(context)):
        name, command, rest = command.resolve_command(context, rest)
        context = command.make_context(name, rest, parent=context)
    chosen = [s for s in settings_of(model) if s.param in context.params]
    return given_of(model, chosen, context, context.params)


def _unparsed(context: typer.Context) -> list[str]:
    """What a group left to its subcommand (click 8.2 keeps its head apart, privately)."""
    head = getattr(context, "protected_args", None)
    return [*(head if head is not None else getattr(context, "_protected_args", [])),
            *context.args]

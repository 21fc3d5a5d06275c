"""The one rule from a pydantic settings model to command-line flags, and back.

Every field of a settings model (``SFTSettings``, ``RLConfig``, ``EvalSettings``) is a flag:
``--field-name`` (underscores become dashes), plus the spellings the field declares with
``json_schema_extra=aliases("--lr")`` (short ones, the names the docs have used). A nested
model's fields are flattened under the field's name: ``RLConfig.loss.epsilon_low`` is
``--loss-epsilon-low``. A nested model of booleans marked ``json_schema_extra=switches(...)`` is one
repeatable flag naming the ones turned on (``--study relabel_ids --study vary_dates``).

The CLI builds its options from :func:`settings_of` (``webworld.cli.config_options``), so a
flag's default, bounds and help are the field's; :func:`command_line` renders a settings object
back as the equivalent command (the recipes record it).
"""

from __future__ import annotations

import types
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any, Literal, Union, get_args, get_origin

import annotated_types
from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

from webworld.errors import UsageError

SECRET = {"secret": True}  # json_schema_extra of a field never rendered into a command line


def switches(*names: str) -> dict[str, Any]:
    """``json_schema_extra`` of a nested model of booleans given as one flag naming those on;
    ``names``: the ones this command takes (its help lists them)."""
    return {"switches": list(names)}


def aliases(*flags: str, secret: bool = False) -> dict[str, Any]:
    """``json_schema_extra`` declaring more spellings of a field's flag (``-G``, ``--lr``)."""
    return {"flags": list(flags), **(SECRET if secret else {})}


_BOUNDS = ((annotated_types.Ge, "ge", ">="), (annotated_types.Gt, "gt", ">"),
           (annotated_types.Le, "le", "<="), (annotated_types.Lt, "lt", "<"))


@dataclass(frozen=True)
class Setting:
    """One field of a settings model (a nested model's field too) and its flags."""

    path: tuple[str, ...]
    info: FieldInfo

    @property
    def key(self) -> str:
        """The dotted key (``loss.epsilon_low``): TOML and pydantic's error locations."""
        return ".".join(self.path)

    @property
    def param(self) -> str:
        """A Python identifier for the option (``loss__epsilon_low``)."""
        return "__".join(self.path)

    @property
    def flag(self) -> str:
        """The canonical flag: the field's path, dashed."""
        return "--" + "-".join(self.path).replace("_", "-")

    @property
    def flags(self) -> list[str]:
        return [self.flag, *self._extra().get("flags", [])]

    @property
    def switches(self) -> bool:
        return bool(self._extra().get("switches"))

    @property
    def secret(self) -> bool:
        return bool(self._extra().get("secret"))

    @property
    def required(self) -> bool:
        return self.info.is_required()

    @property
    def default(self) -> Any:
        return None if self.required else self.info.get_default(call_default_factory=True)

    @property
    def annotation(self) -> Any:
        return self.info.annotation

    @property
    def bounds(self) -> list[tuple[str, str, Any]]:
        """``(pydantic keyword, operator, value)`` of each bound (``("ge", ">=", 1)``)."""
        found = []
        for item in self.info.metadata:
            for kind, keyword, operator in _BOUNDS:
                if isinstance(item, kind):
                    found.append((keyword, operator, getattr(item, keyword)))
        return found

    @property
    def help(self) -> str:
        """The field's description, then its bounds and whether it must be given."""
        notes = [f"{op} {value}" for _, op, value in self.bounds]
        if self.switches:
            notes.append("repeatable; one of: " + ", ".join(self._extra()["switches"]))
        if self.required:
            notes.append("required")
        text = (self.info.description or "").rstrip()
        return f"{text} ({', '.join(notes)})" if notes else text

    def _extra(self) -> dict[str, Any]:
        extra = self.info.json_schema_extra
        return extra if isinstance(extra, dict) else {}

    def value_in(self, settings: BaseModel) -> Any:
        value: Any = settings
        for name in self.path:
            value = getattr(value, name)
        return value


def is_model(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def settings_of(model: type[BaseModel], prefix: tuple[str, ...] = ()) -> list[Setting]:
    """Every field of ``model`` as a :class:`Setting`, nested models' fields flattened (in
    declaration order), a model of switches kept whole."""
    found: list[Setting] = []
    for name, info in model.model_fields.items():
        setting = Setting((*prefix, name), info)
        if is_model(info.annotation) and not setting.switches:
            found.extend(settings_of(info.annotation, setting.path))
        else:
            found.append(setting)
    return found


def optional_inner(annotation: Any) -> tuple[Any, bool]:
    """``(X, True)`` for ``X | None``, else ``(annotation, False)``."""
    args = get_args(annotation)
    if get_origin(annotation) in (Union, types.UnionType) and type(None) in args:
        rest = [a for a in args if a is not type(None)]
        return (rest[0] if len(rest) == 1 else Union[tuple(rest)]), True
    return annotation, False


def choices(annotation: Any) -> list[str] | None:
    """A ``Literal``'s values as text (None when it is no Literal)."""
    inner, _ = optional_inner(annotation)
    return [str(v) for v in get_args(inner)] if get_origin(inner) is Literal else None


# ---- flags -> settings --------------------------------------------------------------------------


def switch_names(model: type[BaseModel], names: Iterable[str], flag: str) -> dict[str, bool]:
    """``{name: True}`` for each switch named (dashes read as underscores); an unknown name is
    a usage error listing the known ones."""
    wanted = [name.strip().replace("-", "_") for name in names]
    unknown = [name for name in wanted if name not in model.model_fields]
    if unknown:
        raise UsageError(f"unknown switch {unknown[0]!r}; known: "
                         f"{', '.join(model.model_fields)}", flag)
    return dict.fromkeys(wanted, True)


def nested(values: Mapping[Setting, Any]) -> dict[str, Any]:
    """Flat settings' values as the nested dict the model validates (switches as a dict)."""
    data: dict[str, Any] = {}
    for setting, value in values.items():
        if setting.switches:
            value = switch_names(setting.annotation, value or [], setting.flag)
        *parents, last = setting.path
        level = data
        for name in parents:
            level = level.setdefault(name, {})
        level[last] = value
    return data


def merged(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """``base`` with ``over``'s values on top, nested dicts merged key by key."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = merged(out[key], value)
        else:
            out[key] = value
    return out


def setting_at(model: type[BaseModel], loc: Iterable[Any]) -> Setting | None:
    """The setting a pydantic error location falls in (``("study", "x")`` is ``--study``)."""
    loc = tuple(str(part) for part in loc)
    for setting in settings_of(model):
        if loc[:len(setting.path)] == setting.path:
            return setting
    return None


def problems(model: type[BaseModel], exc: ValidationError,
             named: Callable[[Setting], str] = lambda s: s.flag) -> str:
    """A validation error in one line, each problem named by its flag (``named``), a missing
    one as ``--policy is required``; a check of the whole model by its message alone."""
    lines = []
    for error in exc.errors():
        message = error["msg"].removeprefix("Value error, ")
        setting = setting_at(model, error["loc"])
        if setting is None:
            where = ".".join(map(str, error["loc"]))
            lines.append(f"{where}: {message}" if where else message)
        elif error["type"] == "missing":
            lines.append(f"{named(setting)} is required")
        else:
            lines.append(f"{named(setting)}: {message}")
    return "; ".join(lines)


# ---- settings -> command line -------------------------------------------------------------------


def _text(value: Any) -> str:
    if isinstance(value, Enum):
        return str(value.value)
    if isinstance(value, float):
        return repr(value)
    return str(value)


def _rendered(setting: Setting, value: Any) -> list[str]:
    if setting.switches:
        on = [name for name, is_on in value.model_dump().items() if is_on]
        return [part for name in on for part in (setting.flag, name)]
    if isinstance(value, bool):
        return [setting.flag if value else "--no-" + setting.flag[2:]]
    if isinstance(value, list | tuple):
        return [part for item in value for part in (setting.flag, _text(item))]
    return [setting.flag, _text(value)]


def command_line(prefix: list[str], settings: BaseModel,
                 base: BaseModel | None = None) -> list[str]:
    """``prefix`` and the flags that make ``settings`` from ``base`` (default: the model's
    defaults): only fields that differ, each by its canonical flag; a secret is left out. A
    value no flag can give (None over a set value, switches or a list cut down) raises
    ``ValueError``."""
    args = list(prefix)
    for setting in settings_of(type(settings)):
        value = setting.value_in(settings)
        reference = setting.value_in(base) if base is not None else setting.default
        if setting.secret or (value == reference and not setting.required):
            continue
        if value is None or _cannot_remove(setting, value, reference):
            raise ValueError(f"{setting.key}: {value!r} cannot be given by a flag over "
                             f"{reference!r}")
        args += _rendered(setting, value)
    return args


def _cannot_remove(setting: Setting, value: Any, reference: Any) -> bool:
    """A repeated flag replaces a list but cannot empty it; switches named only add."""
    if reference is None:
        return False
    if setting.switches:
        return bool(set(reference.model_dump(exclude_defaults=True))
                    - set(value.model_dump(exclude_defaults=True)))
    return isinstance(value, list) and not value and bool(reference)


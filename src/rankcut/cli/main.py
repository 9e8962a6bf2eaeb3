"""Entry point of the ``rankcut`` command.

Each subcommand lives in its own module, imported only when that command runs (or ``--help``
lists it): the certify commands load scipy, the neural ones torch, and ``rankcut --version``,
``rankcut cut`` or ``rankcut audit status`` should pay for neither.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, MutableMapping
from typing import TYPE_CHECKING, Any

import typer
from typer.core import TyperGroup

from rankcut import __version__
from rankcut.cli._errors import fail, resource_message

if TYPE_CHECKING:  # typer carries its own copy of click; its commands are of that copy's classes
    from typer._click import Command, Context

#: every subcommand, in the order ``--help`` lists them: the module that defines it and the name
#: there of its Typer app (a group of commands) or its function (one command)
COMMANDS: dict[str, tuple[str, str]] = {
    "demo": ("rankcut.cli.demo", "demo"),
    "cut": ("rankcut.cli.cut", "cut"),
    "evaluate": ("rankcut.cli.evaluate", "evaluate"),
    "train": ("rankcut.cli.train", "train"),
    "features": ("rankcut.cli.features", "features"),
    "serve": ("rankcut.cli.serve", "serve"),
    "certify": ("rankcut.cli.certify", "app"),
    "audit": ("rankcut.cli.audit", "app"),
    "review": ("rankcut.cli.review", "app"),
}


def _load(name: str) -> Command:
    """The click command of subcommand ``name``, its module imported now."""
    module, attr = COMMANDS[name]
    target = getattr(importlib.import_module(module), attr)
    if isinstance(target, typer.Typer):
        command: Command = typer.main.get_group(target)
    else:
        single = typer.Typer(add_completion=False)
        single.command(name)(target)
        command = typer.main.get_command(single)
    command.name = name
    _given_once(command)
    return command


def _given_once(command: Command) -> None:
    """Make ``command`` (each command of a group) refuse an option that takes one value given
    twice: click keeps the last one without a word (``--qrels a --qrels b`` read only ``b``),
    while ``--run`` and the like may be repeated (their values are all read)."""
    for sub in getattr(command, "commands", {}).values():
        _given_once(sub)
    if hasattr(command, "commands"):
        return
    single = {opt: param.opts[0] for param in command.params
              if param.param_type_name == "option" and not param.multiple
              and not getattr(param, "is_flag", False)
              for opt in (*param.opts, *param.secondary_opts) if opt.startswith("--")}
    parse = command.parse_args

    def parse_args(ctx: Context, args: list[str]) -> list[str]:
        given = args[:args.index("--")] if "--" in args else args
        counts: dict[str, int] = {}
        for word in given:
            opt = single.get(word.split("=", 1)[0]) if word.startswith("--") else None
            if opt is not None:
                counts[opt] = counts.get(opt, 0) + 1
        twice = next((opt for opt, n in counts.items() if n > 1), None)
        if twice is not None:
            fail(f"{twice} is given {counts[twice]} times, and it takes one value (only the last would "
                 "be read): give it once")
        return parse(ctx, args)

    command.parse_args = parse_args  # type: ignore[method-assign]


class _Commands(MutableMapping[str, "Command"]):
    """The subcommands by name, each loaded on first look-up; its keys are known without loading
    any, so that click's "Did you mean 'cut'?" still works."""

    def __init__(self) -> None:
        self._loaded: dict[str, Command] = {}

    def __getitem__(self, name: str) -> Command:
        if name not in self._loaded:
            if name not in COMMANDS:
                raise KeyError(name)
            try:
                self._loaded[name] = _load(name)
            except KeyError as err:   # not "no such command": a look-up failed inside the module
                raise RuntimeError(f"loading the {name!r} command failed: KeyError {err}") from err
        return self._loaded[name]

    def __setitem__(self, name: str, command: Command) -> None:
        self._loaded[name] = command

    def __delitem__(self, name: str) -> None:
        raise TypeError("rankcut's commands are fixed")

    def __iter__(self) -> Iterator[str]:
        return iter({**dict.fromkeys(COMMANDS), **self._loaded})

    def __len__(self) -> int:
        return len({**dict.fromkeys(COMMANDS), **self._loaded})


class _LazyGroup(TyperGroup):
    """The ``rankcut`` group: its subcommands are loaded by name, on first use; a resource failure
    in any of them (out of memory, a full disk) ends it with one ``error: ...`` line, not a
    traceback."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.commands = _Commands()

    def invoke(self, ctx: Context) -> Any:
        try:
            return super().invoke(ctx)
        except (MemoryError, OSError) as exc:
            message = resource_message(exc)
            if message is None:
                raise
        fail(message)


app = typer.Typer(
    name="rankcut",
    cls=_LazyGroup,
    help="Learn where to cut ranked lists and certify what the cut leaves behind.",
    no_args_is_help=True,
    add_completion=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(__version__)
        raise typer.Exit()


@app.callback()
def _main(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version."
    ),
) -> None:
    """rankcut command line."""


if __name__ == "__main__":   # python -m rankcut.cli.main (python -m rankcut: rankcut/__main__.py)
    app(prog_name="rankcut")

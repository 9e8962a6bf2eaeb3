"""Entry point of the ``rankcut`` command.

Subcommand groups live in their own modules and import heavy dependencies only inside the
commands, so ``rankcut certify`` starts fast.
"""

from __future__ import annotations

import typer

from rankcut import __version__
from rankcut.cli.audit import app as audit_app
from rankcut.cli.certify import app as certify_app
from rankcut.cli.cut import cut
from rankcut.cli.demo import demo
from rankcut.cli.evaluate import evaluate
from rankcut.cli.review import app as review_app
from rankcut.cli.serve import serve
from rankcut.cli.train import train

app = typer.Typer(
    name="rankcut",
    help="Learn where to cut ranked lists and certify what the cut leaves behind.",
    no_args_is_help=True,
    add_completion=False,
)
app.add_typer(certify_app, name="certify")
app.add_typer(audit_app, name="audit")
app.add_typer(review_app, name="review")
app.command("demo")(demo)
app.command("cut")(cut)
app.command("evaluate")(evaluate)
app.command("train")(train)
app.command("serve")(serve)


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

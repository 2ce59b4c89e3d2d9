"""``quota init DIR``: scaffold a CDK app of organisation stacks, as ``cdk init`` does."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from quota_constructs.commands._common import handle_errors, stdout_console
from quota_constructs.scaffold import write_scaffold


@handle_errors
def init(
    directory: Annotated[
        Path, typer.Argument(metavar="DIR", help="Folder of the new app (made if missing).")
    ],
    force: Annotated[
        bool, typer.Option("--force", help="Overwrite files of the scaffold that exist.")
    ] = False,
) -> None:
    """Write a CDK app that deploys one quota-managed queue per file in DIR/orgs/.

    DIR gets app.py, cdk.json, requirements.txt (this library, pinned), README.md, .gitignore
    and orgs/seed-demo.yaml (an example organisation). Refuses (exit 2) to overwrite a file
    without --force. Then: pip install -r DIR/requirements.txt, and cdk synth in DIR.
    """
    written = write_scaffold(directory, force=force)
    console = stdout_console()
    for path in written:
        console.print(str(path))
    typer.echo(
        f"next: cd {directory} && python3 -m venv .venv && .venv/bin/pip install -r "
        "requirements.txt && PATH=$PWD/.venv/bin:$PATH cdk synth",
        err=True,
    )

"""``quota build-core``: compile the scheduler core with mypyc (optional, about 2x faster)."""

from __future__ import annotations

from typing import Annotated

import typer

from quota_constructs import core_build
from quota_constructs.commands._common import (
    ExitCode,
    handle_errors,
    stderr_console,
    warning_line,
)
from quota_constructs.scheduling import compiled


@handle_errors
def build_core(
    force: Annotated[bool, typer.Option("--force", help="Rebuild even if up to date.")] = False,
    strict: Annotated[
        bool,
        typer.Option("--strict", help="Exit 1 (showing the compiler's output) if it cannot build."),
    ] = False,
) -> None:
    """Compile the scheduler core with mypyc; the simulator and the emulator then run it.

    Needs the 'compiled' extra (pip install 'quota-constructs[compiled]'), a C compiler and the
    Python headers; about half a minute. Without it, or if the build fails, pure Python runs
    (the same results, about half the speed); `quota --version` says which core runs.
    QUOTA_COMPILE=0 skips the build and ignores any build; QUOTA_CORE_DIR sets where it goes.
    """
    console = stderr_console()  # progress and warnings: nothing here is data
    if compiled.disabled():
        console.print(f"compiled core skipped ({compiled.DISABLE_ENV}=0); using pure Python")
        return
    result = core_build.build_core(force=force, show_output=strict)
    if result.up_to_date:
        console.print(f"compiled core up to date ({result.where})")
    elif result.built:
        console.print(f"compiled core built in {result.seconds:.0f} s ({result.where})")
    else:
        console.print(warning_line(f"compiled core not built ({result.reason}); using pure Python"))
        if strict:
            raise typer.Exit(int(ExitCode.FAILED))

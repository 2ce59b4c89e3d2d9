"""Owns how every ``quota`` table fits the terminal: words never broken, columns dropped in order.

The rule (docs/cli.md, "Tables at a terminal"): no word of a cell is ever broken, so an
identifier (a job id, an ARN, a share name, an instance type, a strategy) is always whole on one
line and can be copied; a column wraps only between words. When the columns do not fit the width
even so, the table's least important columns are hidden, in the order the table names
(``drop``), until the rest fits (then each hidden one that fits beside them comes back, the most
important first), and its caption says which; ``--wide`` (``wide=True``) shows every column.
When the columns it keeps still do not fit, each row is printed as a record (one
``column  value`` line per column, a rule between rows). Piped, the width is unbounded
(``_common.UNWRAPPED_WIDTH``), so every column shows and no cell wraps.

Use it for any new table::

    table = fitted_table(
        "job id", "name", "reason", drop=("reason",), wide=wide, min_widths={"reason": 30}
    )
    table.add_row(job_id, name, reason)
    stdout_console().print(table)

``fitted_table`` returns a :class:`FittedTable`, a ``rich.table.Table`` that fits itself each
time it is rendered (so ``rich.live.Live`` redraws fit a resized terminal too).
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.table import Column, Table
from rich.text import Text

WIDE_HINT = "--wide shows them"


class FittedTable(Table):
    """A table whose columns fit the width they are given without breaking a word.

    ``drop`` names the columns (by header) that may be hidden, least important first; ``wide``
    keeps them all.
    """

    def __init__(
        self, *args: Any, drop: Sequence[str] = (), wide: bool = False, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.drop = tuple(drop)
        self.wide = wide

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield from Table.__rich_console__(self.fitted(options.max_width, console), console, options)

    def fitted(self, width: int, console: Console | None = None) -> Table:
        """A plain ``Table`` of this one's rows at ``width`` columns (or the least width that
        keeps every word whole, if that is more): hidden columns named in the caption. Cells
        are measured as ``console`` shows them (a ``TextConsole`` writes controls as escapes)."""
        self._console = console or Console()
        columns = list(self.columns)
        hidden: list[str] = []
        droppable = [] if self.wide else [h for h in self.drop if h in _headers(columns)]
        while droppable and _least_width(self, columns) > width:
            header = droppable.pop(0)
            columns = [c for c in columns if _header(c) != header]
            hidden.append(header)
        for header in reversed(list(hidden)):  # the most important first: back if it fits
            trial = [c for c in self.columns if c in columns or _header(c) == header]
            if _least_width(self, trial) <= width:
                columns = trial
                hidden.remove(header)
        if _least_width(self, columns) > width:
            return self._records(columns, width)
        table = copy.copy(self)
        table.columns = _sized(self, columns, width)
        caption = str(self.caption) if self.caption else None
        if hidden:
            note = f"not shown: {', '.join(hidden)} ({WIDE_HINT})"
            caption = f"{caption}; {note}" if caption else note
        return _wrapped_notes(table, caption)

    def _records(self, columns: Sequence[Column], width: int) -> Table:
        """The rows as records, one ``header  value`` line per column, a rule between rows:
        for a terminal too narrow for the columns side by side (every column shown)."""
        records = FittedTable(title=self.title, caption=self.caption, show_header=False)
        records.add_column("field", overflow="fold")
        records.add_column("value", overflow="fold")
        every = list(self.columns)
        for index in range(self.row_count):
            for position, column in enumerate(every):
                cells = list(column.cells)
                records.add_row(
                    _header(column), cells[index], end_section=position == len(every) - 1
                )
        records._console = self._console
        table = copy.copy(records)
        table.columns = _sized(records, list(records.columns), width)
        least = _least_width(records, records.columns)
        if least > width:
            table.width = least  # one word longer than the terminal: it wraps, never split
        return _wrapped_notes(table, str(self.caption) if self.caption else None)


def _wrapped_notes(table: Table, caption: str | None) -> Table:
    """``table`` with its title and ``caption`` wrapped between words to its width (a console
    that soft-wraps, as ``quota``'s do, would leave them as one long line)."""
    if table.title:
        table.title = Text(str(table.title), style="table.title", no_wrap=False, overflow="fold")
    table.caption = (
        None
        if caption is None
        else Text(caption, style="table.caption", no_wrap=False, overflow="fold")
    )
    return table


def fitted_table(
    *columns: str,
    title: str | None = None,
    caption: str | None = None,
    show_header: bool = True,
    drop: Sequence[str] = (),
    wide: bool = False,
    min_widths: Mapping[str, int] | None = None,
) -> FittedTable:
    """A :class:`FittedTable` with ``columns`` (headers), ``drop`` hidden first when narrow;
    ``min_widths`` (header -> width) keeps a column of prose at least that wide."""
    min_widths = min_widths or {}
    unknown = [header for header in (*drop, *min_widths) if header not in columns]
    if unknown:
        raise ValueError(f"drop names columns the table does not have: {', '.join(unknown)}")
    table = FittedTable(title=title, caption=caption, show_header=show_header, drop=drop, wide=wide)
    for column in columns:
        table.add_column(column, overflow="fold", min_width=min_widths.get(column))
    return table


def _header(column: Column) -> str:
    return column.header if isinstance(column.header, str) else str(column.header)


def _headers(columns: Iterable[Column]) -> set[str]:
    return {_header(c) for c in columns}


def _texts(table: Table, column: Column) -> list[str]:
    """The column's header and cells as the table's console shows them."""
    console: Console = getattr(table, "_console", None) or Console()
    cells = [column.header] if table.show_header else []
    cells += list(column.cells)
    return [
        console.render_str(cell.plain if isinstance(cell, Text) else str(cell)).plain
        for cell in cells
    ]


def _natural(table: Table, column: Column) -> int:
    """The width of the column's longest line: it never needs more."""
    lines = [line for text in _texts(table, column) for line in text.splitlines()]
    return max((cell_len(line) for line in lines), default=1) or 1


def _least(table: Table, column: Column) -> int:
    """The width of the column's longest word (no word is broken), or its ``min_width`` if
    more and its text is that long: a column of prose is not squeezed into a tall strip."""
    words = [word for text in _texts(table, column) for word in text.split()]
    longest_word = max((cell_len(word) for word in words), default=1) or 1
    return max(longest_word, min(column.min_width or 0, _natural(table, column)))


def _overhead(table: Table, count: int) -> int:
    """Borders and padding of a table of ``count`` columns."""
    trial = copy.copy(table)
    trial.columns = [Column() for _ in range(count)]
    return trial._extra_width + sum(trial._get_padding_width(i) for i in range(count))


def _least_width(table: Table, columns: Sequence[Column]) -> int:
    return sum(_least(table, c) for c in columns) + _overhead(table, len(columns))


def _sized(table: Table, columns: Sequence[Column], width: int) -> list[Column]:
    """``columns`` with fixed widths: each its longest word at least, the rest of ``width``
    given one cell at a time to the column that is furthest from its longest line."""
    least = [_least(table, c) for c in columns]
    natural = [max(n, m) for n, m in zip((_natural(table, c) for c in columns), least, strict=True)]
    widths = list(least)
    spare = width - _overhead(table, len(columns)) - sum(widths)
    while spare > 0 and widths != natural:
        index = max(range(len(widths)), key=lambda i: natural[i] - widths[i])
        widths[index] += 1
        spare -= 1
    return [
        dataclasses.replace(c, width=w, min_width=None, overflow="fold")
        for c, w in zip(columns, widths, strict=True)
    ]

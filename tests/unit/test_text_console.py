"""The one output boundary of the ``quota`` commands: every string printed as text."""

from __future__ import annotations

import io

from quota_constructs.commands._common import TextConsole, data_table, message, styled, visible


def printed(*renderables: object, terminal: bool = False) -> str:
    """What a :class:`TextConsole` writes for ``renderables`` (as a colour terminal if asked)."""
    out = io.StringIO()
    console = TextConsole(
        file=out,
        width=200,
        force_terminal=terminal,
        color_system="standard" if terminal else None,
        highlight=False,
    )
    console.print(*renderables)
    return out.getvalue()


def test_markup_and_emoji_codes_are_printed_as_written() -> None:
    text = "[/] [red]x[/red] [link=https://evil.example]y[/link] [conceal]z[/conceal] :smile:"
    assert printed(text) == text + "\n"


def test_control_characters_are_printed_as_escapes() -> None:
    text = "a\x1b[2Jb\x1b]8;;https://e\x07c\x08d\re\x7ff\x9bg\u202eh\ti\nj"
    assert (
        visible(text) == "a\\x1b[2Jb\\x1b]8;;https://e\\x07c\\x08d\\x0de\\x7ff\\x9bg\\u202eh\ti\nj"
    )
    assert printed(text.replace("\t", " ")) == visible(text.replace("\t", " ")) + "\n"


def test_table_cells_and_titles_are_printed_as_text() -> None:
    table = data_table("reason", title="[bold]t\x1b[0m")
    table.add_row("[/]\x1b[31mx")
    out = printed(table)
    assert "[bold]t\\x1b[0m" in out and "[/]\\x1b[31mx" in out and "\x1b" not in out


def test_styled_parts_keep_their_style_and_data_stays_text() -> None:
    out = printed(message(styled("error:", "red"), " [/]\x1b[2J"), terminal=True)
    assert "\x1b[31merror:\x1b[0m" in out and " [/]\\x1b[2J" in out

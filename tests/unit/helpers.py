"""Helpers for the unit tests: hostile input files."""

from __future__ import annotations

ALIAS_BOMB = "".join(
    [
        'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n',
        *(
            f"{b}: &{b} [{', '.join(['*' + a] * 9)}]\n"
            for a, b in zip("abcdefgh", "bcdefghi", strict=True)
        ),
        "organisation: *i\n",
    ]
)
"""A billion-laughs YAML file: nine levels of nine aliases each; expanded, 9**9 strings."""

"""A griffe extension for the Python API pages (mkdocs.yml, docs/reference/python/): Sphinx roles
in docstrings as Markdown code.

The package's docstrings name other objects Sphinx's way, ``:class:`QueueClient``` or
``:func:`~quota_constructs.model.head_wait_reason``` (``~``: show the last name only); Markdown
has no such roles and would print them as written. Each becomes a code span of the name shown,
the way the docstrings' other names (````name````) render. mkdocstrings loads this file by its
path (``extensions: [tools/griffe_rst_roles.py]``).
"""

from __future__ import annotations

import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:class|func|meth|attr|mod|data|exc|obj|const):`(~?)([^`]+)`")
"""A Sphinx cross-reference role: ``:class:`name```, ``:meth:`~path.name```."""


def as_markdown(text: str) -> str:
    """``text`` with each Sphinx role as a code span of the name it shows."""

    def span(match: re.Match[str]) -> str:
        short, name = match.group(1), match.group(2)
        return f"`{name.rsplit('.', 1)[-1] if short else name}`"

    return ROLE.sub(span, text)


class SphinxRoles(griffe.Extension):
    """Rewrites every loaded object's docstring with ``as_markdown``."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = as_markdown(obj.docstring.value)

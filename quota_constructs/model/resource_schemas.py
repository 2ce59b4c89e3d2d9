"""Which CloudFormation properties are create-only: a changed value replaces the resource.

Read from the package's data file (``CREATE_ONLY_FILE``, generated from cfn-lint's resource
provider schemas by ``tools/gen_create_only_table.py``) for every type the stacks create.
``quota org plan`` (:mod:`quota_constructs.deploy_plan`) reads it to tell an update in place
from a replacement, as CloudFormation decides.
"""

from __future__ import annotations

from functools import cache
from importlib import resources

CREATE_ONLY_FILE = "data/create_only_properties.txt"


@cache
def create_only_properties() -> dict[str, tuple[str, ...]]:
    """Resource type -> its create-only properties (``A``, or ``A/B`` for a nested one)."""
    text = resources.files("quota_constructs").joinpath(CREATE_ONLY_FILE).read_text("utf-8")
    rows = (line.split() for line in text.splitlines() if line and not line.startswith("#"))
    return {row[0]: tuple(row[1:]) for row in rows}

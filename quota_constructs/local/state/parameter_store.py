"""Owns the emulator's SSM parameters: the parameters of provisioned organisations.

Each organisation stack writes the parameters named in :mod:`quota_constructs.contracts`
(queue name and ARN, one ARN per share); provisioning puts the same ones here, and the SSM
handlers read them, so runtime code that resolves a queue by organisation name works with an
SSM client on the emulator's endpoint.

Names are read as SSM documents them: a name or the parameter's ARN, optionally followed by
``:version`` or ``:label``; "The service removes any spaces specified for the beginning or end
of a parameter name. If the specified name for a parameter contains spaces between characters,
the request fails with a ValidationException error." Every parameter here is version 1 and has
no labels.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from quota_constructs.contracts import PARAMETER_ROOT
from quota_constructs.local.state.arns import Account
from quota_constructs.local.state.errors import InvalidParameter, NotFound, VersionNotFound

MAX_HIERARCHY_LEVELS = 15
"""SSM: "A parameter name hierarchy can have a maximum of 15 levels"."""


def clean_name(name: str, field: str = "Name") -> str:
    """``name`` without surrounding spaces; :class:`InvalidParameter` for spaces inside it."""
    stripped = name.strip(" ")
    if " " in stripped:
        raise InvalidParameter(
            f"{field}: parameter names can't contain spaces (got {name!r}); remove them"
        )
    return stripped


@dataclass(frozen=True)
class Parameter:
    """One parameter (version 1) and when it was written, in epoch seconds; ``kind`` is its
    SSM ``Type``: ``String``, or ``StringList`` (comma-separated values)."""

    name: str
    value: str
    arn: str
    modified_epoch: float
    kind: str = "String"


class ParameterStore:
    """Parameters by name."""

    def __init__(self, account: Account) -> None:
        self.account = account
        self.parameters: dict[str, Parameter] = {}

    def put(self, name: str, value: str, *, epoch: float, kind: str = "String") -> None:
        """Write (or overwrite) parameter ``name`` of SSM type ``kind``."""
        arn = self.account.ssm_parameter(name)
        self.parameters[name] = Parameter(name, value, arn, epoch, kind)

    def get(self, ref: str) -> Parameter:
        """The parameter ``ref`` names (name or ARN, ``:1`` or no selector).

        :class:`NotFound` when it was never written or the selector is a label,
        :class:`VersionNotFound` for a version other than 1, :class:`InvalidParameter` for
        spaces inside the name.
        """
        name = clean_name(ref)
        prefix = self.account.ssm_parameter("")
        if name.startswith(prefix):
            name = name[len(prefix) :]
        name, _, selector = name.partition(":")
        parameter = self.parameters.get(name)
        if parameter is None or (selector and not selector.isdigit()):
            raise NotFound(
                f"Parameter {ref.strip()} not found; the emulator serves {PARAMETER_ROOT}/"
                "<organisation>/... parameters of the organisations it provisioned (version 1, "
                "no labels)"
            )
        if selector and int(selector) != 1:
            raise VersionNotFound(
                f"Parameter {name} has no version {selector}; the emulator's parameters are "
                "version 1"
            )
        return parameter

    def get_many(self, refs: Sequence[str]) -> tuple[list[Parameter], list[str]]:
        """The parameters among ``refs``, in alphabetical order ("The results for GetParameters
        requests are listed in alphabetical order"), and the names not found."""
        found: dict[str, Parameter] = {}
        missing: list[str] = []
        for ref in refs:
            try:
                parameter = self.get(ref)
            except NotFound:
                missing.append(ref)
            else:
                found[parameter.name] = parameter
        return [found[name] for name in sorted(found)], missing

    def under(self, path: str, *, recursive: bool) -> list[Parameter]:
        """Parameters below ``path`` by name: direct children only unless ``recursive``.

        :class:`InvalidParameter` for a path that is not a hierarchy (a leading ``/``, at most
        15 levels, no spaces).
        """
        path = clean_name(path, "Path")
        levels = [level for level in path.split("/") if level]
        if not path.startswith("/") or len(levels) > MAX_HIERARCHY_LEVELS:
            raise InvalidParameter(
                f"Path: {path!r} is not a parameter hierarchy: hierarchies start with a forward "
                f"slash (/) and have at most {MAX_HIERARCHY_LEVELS} levels, e.g. /quota/"
            )
        prefix = path.rstrip("/") + "/"
        return [
            p
            for name, p in sorted(self.parameters.items())
            if name.startswith(prefix) and (recursive or "/" not in name[len(prefix) :])
        ]

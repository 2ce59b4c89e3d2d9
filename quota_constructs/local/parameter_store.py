"""Owns the emulator's SSM parameters: the String parameters of provisioned organisations.

Each organisation stack writes the parameters named in :mod:`quota_constructs.contracts`
(queue name and ARN, one ARN per share); provisioning puts the same ones here, and the SSM
handlers read them, so runtime code that resolves a queue by organisation name works with an
SSM client on the emulator's endpoint.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from quota_constructs.contracts import PARAMETER_ROOT
from quota_constructs.local.arns import Account
from quota_constructs.local.errors import NotFound


@dataclass(frozen=True)
class Parameter:
    """One String parameter (version 1) and when it was written, in epoch seconds."""

    name: str
    value: str
    arn: str
    modified_epoch: float


class ParameterStore:
    """Parameters by name."""

    def __init__(self, account: Account) -> None:
        self.account = account
        self.parameters: dict[str, Parameter] = {}

    def put(self, name: str, value: str, *, epoch: float) -> None:
        """Write (or overwrite) parameter ``name``."""
        self.parameters[name] = Parameter(name, value, self.account.ssm_parameter(name), epoch)

    def get(self, name: str) -> Parameter:
        """The parameter ``name``; :class:`NotFound` when it was never written."""
        parameter = self.parameters.get(name)
        if parameter is None:
            raise NotFound(
                f"Parameter {name} not found; the emulator serves {PARAMETER_ROOT}/<organisation>"
                "/... parameters of the organisations it provisioned"
            )
        return parameter

    def get_many(self, names: Sequence[str]) -> tuple[list[Parameter], list[str]]:
        """The parameters among ``names`` (in that order) and the names not written."""
        found = [self.parameters[n] for n in names if n in self.parameters]
        return found, [n for n in names if n not in self.parameters]

    def under(self, path: str, *, recursive: bool) -> list[Parameter]:
        """Parameters below ``path`` by name: direct children only unless ``recursive``."""
        prefix = path.rstrip("/") + "/"
        return [
            p
            for name, p in sorted(self.parameters.items())
            if name.startswith(prefix) and (recursive or "/" not in name[len(prefix) :])
        ]

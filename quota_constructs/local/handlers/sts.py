"""Owns the handlers of STS ``AssumeRole`` and ``GetCallerIdentity`` over the emulator's identities.

``AssumeRole`` issues temporary credentials for a submitter role of a provisioned organisation
and remembers them (:mod:`..state.identities`); session policies, tags, ``ExternalId`` and MFA
parameters are accepted and have no effect (the emulator evaluates no policy).
``GetCallerIdentity`` answers for the request's access key.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from quota_constructs.local.handlers import Handler
from quota_constructs.local.state.identities import (
    MAX_SESSION_SECONDS,
    REQUEST_ACCESS_KEY,
    Identities,
)


class StsHandlers:
    """Handlers of the STS operations the emulator serves."""

    def __init__(self, identities: Identities) -> None:
        self.identities = identities

    def operations(self) -> dict[str, Handler]:
        """Operation name -> handler, for every operation of this module."""
        return {"AssumeRole": self.assume_role, "GetCallerIdentity": self.get_caller_identity}

    def assume_role(self, params: Mapping[str, Any]) -> dict[str, Any]:
        session = self.identities.assume(
            params["RoleArn"],
            params["RoleSessionName"],
            params.get("DurationSeconds") or MAX_SESSION_SECONDS,
        )
        return {
            "Credentials": {
                "AccessKeyId": session.access_key_id,
                "SecretAccessKey": session.secret_access_key,
                "SessionToken": session.session_token,
                "Expiration": session.expiration,
            },
            "AssumedRoleUser": {"AssumedRoleId": session.assumed_role_id, "Arn": session.arn},
            "PackedPolicySize": 0,
        }

    def get_caller_identity(self, params: Mapping[str, Any]) -> dict[str, Any]:
        account = self.identities.account.account_id
        session = self.identities.session(REQUEST_ACCESS_KEY.get())
        if session is None:
            return {"UserId": account, "Account": account, "Arn": self.identities.root_arn}
        return {"UserId": session.assumed_role_id, "Account": account, "Arn": session.arn}

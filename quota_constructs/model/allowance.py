"""Owns ``allow_destructive``: the destructive changes an organisation file says it means to make.

A deploy that would delete or replace a quota share (terminating its jobs), or update one so
that running jobs are preempted, is stopped by the pipeline's gate (``quota org plan``) unless
the file being deployed names that change here, with a reason. The planner
(:mod:`quota_constructs.deploy_plan`) matches each destructive change against these
allowances; this module holds only the rules of the allowances themselves (pure, like every
rule of the model): one resource named (``share`` or ``logical_id``), an action the gate
stops, a reason, no duplicates, and an action that can happen to that share given the file.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from quota_constructs.model.limits import check_description, check_name
from quota_constructs.model.problems import Problem

ALLOW_DESTRUCTIVE_KEY = "allow_destructive"
"""The organisation file's key (and the path of its problems)."""
MAX_ALLOWANCES = 50
"""Most allowances in one file: two per share (a replace and a reduce) plus room for others."""
MAX_ALLOWANCE_REASON_CHARS = 400
"""Longest reason: it is shown in the plan's table, its JSON and the approval's summary."""
LOGICAL_ID_BODY = r"[A-Za-z0-9]{1,255}"
"""CloudFormation's logical IDs: 1-255 letters and digits."""
_LOGICAL_ID = re.compile(LOGICAL_ID_BODY)
REASON_EXAMPLE = "QS3 renamed to vision; its jobs were drained on 2027-01-10"


class AllowedAction(StrEnum):
    """A destructive change the gate stops unless an allowance names it."""

    REPLACE = "replace"
    """The resource is replaced (a create-only property changed): a share's jobs terminated."""
    DELETE = "delete"
    """The resource is deleted (gone from the file): a share's jobs terminated."""
    REDUCE = "reduce"
    """A share updated in place (capacity, borrow limit, strategy) so that running jobs are
    preempted."""


_NEVER_STOPPED = {
    "disable": (
        "a share set to DISABLED ends no job (its submitted jobs may finish): the gate never "
        "stops it",
        "remove this allowance; state: DISABLED needs none",
    ),
    "create": (
        "a created resource ends no job: the gate never stops it",
        "remove this allowance",
    ),
    "update": (
        "an update in place is stopped only when it preempts running jobs",
        "write action: reduce for an update that preempts jobs, or remove this allowance",
    ),
}
"""Actions people may write that the gate never stops: why, and the fix."""


@dataclass(frozen=True)
class DestructiveAllowance:
    """One entry of ``allow_destructive``: a destructive change named as intended.

    ``share`` (a quota share's name) or ``logical_id`` (any resource's, as ``quota org plan``
    shows it) names the resource; ``action`` is an :class:`AllowedAction` value once
    :meth:`problems` is empty (kept as written so a wrong one can be explained); ``reason``
    says why, for the plan and the approver.
    """

    action: Any
    reason: Any
    share: Any = None
    logical_id: Any = None

    @property
    def allowed_action(self) -> AllowedAction:
        """The action as an enum member (call on a valid allowance)."""
        return AllowedAction(self.action)

    @property
    def target(self) -> str:
        """What it names, for messages: ``quota share QS3`` or ``logical ID Queue1234``."""
        if self.share is not None:
            return f"quota share {self.share}"
        return f"logical ID {self.logical_id}"

    def describe(self) -> str:
        """``delete of quota share QS3``."""
        return f"{self.action} of {self.target}"

    def problems(self, path: str) -> list[Problem]:
        """The rules of this allowance alone, with field paths below ``path``."""
        problems: list[Problem] = []
        named = {k: v for k, v in (("share", self.share), ("logical_id", self.logical_id)) if v}
        if len(named) != 1:
            problems.append(
                Problem(
                    path,
                    named or None,
                    "an allowance names one resource: share (a quota share's name) or "
                    "logical_id (any resource's logical ID, as `quota org plan` shows it)",
                    "give exactly one of share or logical_id",
                )
            )
        if self.share is not None:
            problems += check_name(self.share, f"{path}.share", what="quota share name")
        if self.logical_id is not None and not (
            isinstance(self.logical_id, str) and _LOGICAL_ID.fullmatch(self.logical_id)
        ):
            problems.append(
                Problem(
                    f"{path}.logical_id",
                    self.logical_id,
                    "CloudFormation logical IDs are 1-255 letters and digits",
                    "copy the logical ID from `quota org plan FILE --json` (logicalId)",
                )
            )
        problems += _action_problems(self.action, f"{path}.action")
        problems += _reason_problems(self.reason, f"{path}.reason")
        return problems


def _action_problems(action: Any, path: str) -> list[Problem]:
    valid = ", ".join(a.value for a in AllowedAction)
    if action is None:
        return [
            Problem(
                path,
                None,
                "an allowance names the destructive action it allows",
                f"add action: one of {valid}",
            )
        ]
    if action in {a.value for a in AllowedAction}:
        return []
    message, fix = _NEVER_STOPPED.get(
        str(action).strip().lower(),
        ("not a destructive action the gate stops", f"use one of {valid}"),
    )
    return [Problem(path, action, message, fix)]


def _reason_problems(reason: Any, path: str) -> list[Problem]:
    if reason is None or (isinstance(reason, str) and not reason.strip()):
        return [
            Problem(
                path,
                reason,
                "every allowance says why the change is intended (the plan and the approver "
                "see it)",
                f"add reason: e.g. {REASON_EXAMPLE!r}",
            )
        ]
    return check_description(
        reason, path, max_chars=MAX_ALLOWANCE_REASON_CHARS, what="an allowance's reason"
    )


def allowance_problems(
    allowances: Sequence[DestructiveAllowance],
    share_names: Collection[str] | None,
    path: str = ALLOW_DESTRUCTIVE_KEY,
) -> list[Problem]:
    """Every rule ``allowances`` break: each one's own, their count, duplicates, and (with
    ``share_names``, the file's shares; ``None`` when not all of them are known) whether the
    action can happen to that share: a share still in the file is never deleted, and one
    gone from it is only deleted."""
    problems: list[Problem] = []
    if len(allowances) > MAX_ALLOWANCES:
        problems.append(
            Problem(
                path,
                len(allowances),
                f"at most {MAX_ALLOWANCES} allowances",
                "allow only what this deploy changes; remove the allowances of past deploys",
            )
        )
    first: dict[tuple[Any, Any, Any], str] = {}
    for index, allowance in enumerate(allowances):
        item = f"{path}[{index}]"
        own = allowance.problems(item)
        problems += own
        key = (allowance.share, allowance.logical_id, allowance.action)
        if key in first:
            problems.append(
                Problem(
                    item,
                    allowance.describe(),
                    f"{first[key]} allows the same change",
                    "remove one of them",
                )
            )
        first.setdefault(key, item)
        if own or share_names is None or allowance.share is None:
            continue
        problems += _share_action_problems(allowance, set(share_names), item)
    return problems


def _share_action_problems(
    allowance: DestructiveAllowance, share_names: Collection[str], item: str
) -> list[Problem]:
    action = allowance.allowed_action
    in_file = allowance.share in share_names
    if action is AllowedAction.DELETE and in_file:
        return [
            Problem(
                f"{item}.share",
                allowance.share,
                "this quota share is still in the file, so a deploy of it cannot delete it",
                "name the share the file no longer has (a rename deletes the old name), or "
                "write action: replace if the share is replaced",
            )
        ]
    if action is not AllowedAction.DELETE and not in_file:
        return [
            Problem(
                f"{item}.share",
                allowance.share,
                f"no quota share of the file has this name, so a deploy cannot {action} it",
                "write action: delete for a share removed or renamed, or use a name of "
                "shares[].name",
            )
        ]
    return []

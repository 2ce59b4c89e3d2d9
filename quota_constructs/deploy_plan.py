"""Owns planning a deploy of an organisation stack: what CloudFormation would do, per resource.

:func:`plan_deploy` is pure: from the synthesized templates of what is deployed and of the new
file (``Resources`` as ``Template.to_json`` gives them), the two organisations, and the live
queue's unfinished jobs, it returns a :class:`DeployPlan`: per resource ``create``, ``update``
(in place), ``replace`` (a create-only property changed: cfn-lint's resource schemas,
``model.resource_schemas``) or ``delete``, in CloudFormation's order; for each quota share
deleted, replaced, DISABLED or reduced below its use, the jobs it would terminate or preempt;
and what would make the deploy fail. ``quota org plan`` prints it; ``quota local apply``
carries it out on the emulator; the pipeline's gate reads :attr:`DeployPlan.blocked`.

The gate: a destructive change (:attr:`ResourceChange.destructive`) is *allowed* when the new
organisation's ``allow_destructive`` names it (``model.allowance``: the share or logical ID,
and ``replace``, ``delete``, or ``reduce`` for an update that preempts jobs); the plan is
*blocked* while a destructive change is not allowed, or a change would fail (no allowance lets
a failing change through). An allowance that names no destructive change is reported
(:attr:`DeployPlan.unused_allowances`), not blocking: the same file deploys to several
environments, and one that already has the change has nothing left to allow.

CloudFormation's order: new resources (created, and the new copy of each replaced one) and
updates in place in dependency order, then, in the cleanup phase once every one succeeded, the
old copies of replaced resources and the deleted resources. A failure before the cleanup rolls
the stack back: nothing is deleted, updates are reverted (a job an update preempted stays
preempted).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from enum import StrEnum
from typing import Any

from quota_constructs.model import (
    ALLOW_DESTRUCTIVE_KEY,
    MAX_SHARES_PER_QUEUE,
    AllowedAction,
    DestructiveAllowance,
    JobStatus,
    Organisation,
    QuotaShareSpec,
    ShareCalendar,
    ShareState,
)
from quota_constructs.model.problems import one_line
from quota_constructs.model.resource_schemas import create_only_properties
from quota_constructs.model.training_plan import training_plan_problems

QUOTA_SHARE = "AWS::Batch::QuotaShare"
JOB_QUEUE = "AWS::Batch::JobQueue"
SERVICE_ENVIRONMENT = "AWS::Batch::ServiceEnvironment"
SCHEDULING_POLICY = "AWS::Batch::SchedulingPolicy"
BATCH_TYPES = (QUOTA_SHARE, JOB_QUEUE, SERVICE_ENVIRONMENT, SCHEDULING_POLICY)
"""The types a live queue tells about: a plan against a live queue compares only these."""
STATEFUL_TYPES = frozenset(
    {
        QUOTA_SHARE,  # deleting it terminates its jobs
        JOB_QUEUE,  # deleting it terminates its jobs
        SERVICE_ENVIRONMENT,
        "AWS::S3::Bucket",
        "AWS::KMS::Key",
        "AWS::Logs::LogGroup",
        "AWS::SQS::Queue",
    }
)
"""Types whose deletion or replacement loses jobs or data (unless the template retains them)."""
RETAINED = frozenset({"Retain", "RetainExceptOnCreate", "Snapshot"})
CDK_PATH = "aws:cdk:path"


class ChangeAction(StrEnum):
    """What CloudFormation does to one resource (a change set's ``Action``/``Replacement``)."""

    CREATE = "create"
    UPDATE = "update"
    REPLACE = "replace"
    DELETE = "delete"


_PHASE = {
    ChangeAction.CREATE: 0,
    ChangeAction.REPLACE: 0,
    ChangeAction.UPDATE: 1,
    ChangeAction.DELETE: 2,
}
"""CloudFormation's order: creates and replacements' new copies, updates, then the cleanup."""


@dataclass(frozen=True)
class LiveJob:
    """An unfinished job of the live queue, as the plan needs it.

    ``capacity``: instances per type it holds (running) or asks for (waiting); ``priority``
    and ``started_at`` (epoch seconds) order the likely victims of a capacity reduction.
    """

    job_id: str
    job_name: str
    share: str
    status: JobStatus
    capacity: Mapping[str, int] = field(default_factory=dict)
    priority: int = 0
    started_at: float | None = None

    @property
    def running(self) -> bool:
        """Dispatched (SCHEDULED, STARTING, RUNNING): it holds capacity."""
        return self.status.is_dispatched


@dataclass(frozen=True)
class ResourceChange:
    """One resource's change: what CloudFormation does, why, the jobs at stake, what fails.

    ``jobs_terminated``/``jobs_preempted`` are ``None`` when no live queue was read (a plan of
    two files) and for resources that hold no jobs; ``fails`` says why the change would fail
    (then the deploy rolls back).
    """

    logical_id: str
    resource_type: str
    action: ChangeAction
    reason: str
    path: str = ""
    """The construct path (``aws:cdk:path`` without the stack), when the template has it."""
    quota_share_name: str | None = None
    jobs_terminated: tuple[LiveJob, ...] | None = None
    jobs_preempted: tuple[LiveJob, ...] | None = None
    fails: tuple[str, ...] = ()
    retained: bool = False
    """The template keeps the resource (``DeletionPolicy``/``UpdateReplacePolicy`` Retain)."""
    allowed_because: str | None = None
    """The reason of the allowance that lets this destructive change through the gate
    (``None``: not destructive, not named by an allowance, or failing)."""

    @property
    def holds_jobs(self) -> bool:
        """A quota share or job queue: the kinds of resource whose deletion ends jobs."""
        return self.resource_type in (QUOTA_SHARE, JOB_QUEUE)

    @property
    def destructive(self) -> bool:
        """Deletes or replaces a stateful resource not retained, ends or preempts a job, or
        fails."""
        removes = self.action in (ChangeAction.DELETE, ChangeAction.REPLACE)
        stateful = removes and self.resource_type in STATEFUL_TYPES and not self.retained
        return bool(stateful or self.jobs_terminated or self.jobs_preempted or self.fails)

    @property
    def allowed(self) -> bool:
        """Destructive, and let through by an allowance of the file."""
        return self.allowed_because is not None

    @property
    def blocked(self) -> bool:
        """Stops the gate: destructive and not allowed, or failing."""
        return bool(self.fails) or (self.destructive and not self.allowed)

    @property
    def allowance_action(self) -> AllowedAction | None:
        """The allowance action that names this change (``None``: not destructive)."""
        if not self.destructive:
            return None
        if self.action is ChangeAction.REPLACE:
            return AllowedAction.REPLACE
        if self.action is ChangeAction.DELETE:
            return AllowedAction.DELETE
        if self.action is ChangeAction.UPDATE and self.jobs_preempted:
            return AllowedAction.REDUCE
        return None

    def named_by(self, allowance: DestructiveAllowance) -> bool:
        """Whether ``allowance`` names this change (its resource and its action)."""
        action = self.allowance_action
        if action is None or allowance.action != action.value:
            return False
        if allowance.share is not None:
            return allowance.share == self.quota_share_name
        return allowance.logical_id == self.logical_id


@dataclass(frozen=True)
class DeployPlan:
    """Every change a deploy makes, in CloudFormation's order, and what is at stake."""

    changes: tuple[ResourceChange, ...]
    jobs_read: bool
    """Whether the live queue's jobs were read (``jobs_*`` of the changes are known)."""
    notes: tuple[str, ...] = ()
    unused_allowances: tuple[tuple[int, DestructiveAllowance], ...] = ()
    """``(index in allow_destructive, allowance)`` of each allowance no destructive change
    matched: a warning (remove it), not a block."""

    @property
    def destructive(self) -> bool:
        return any(c.destructive for c in self.changes)

    @property
    def blocked(self) -> bool:
        """What the pipeline's gate stops on: a destructive change no allowance names, or a
        change that would fail."""
        return any(c.blocked for c in self.changes)

    @property
    def fails(self) -> bool:
        return any(c.fails for c in self.changes)

    def change(self, logical_id: str) -> ResourceChange:
        """The change of ``logical_id``; ``KeyError`` naming the changed ones."""
        for change in self.changes:
            if change.logical_id == logical_id:
                return change
        known = ", ".join(c.logical_id for c in self.changes) or "none"
        raise KeyError(f"no change of {logical_id!r} (changed: {known})")

    def share_changes(self, name: str) -> list[ResourceChange]:
        """The changes of quota share ``name`` (a replacement is one, a rename two shares)."""
        return [c for c in self.changes if c.quota_share_name == name]


# --- the template diff ----------------------------------------------------------------------


def _references(value: Any) -> set[str]:
    """Logical IDs a property value names through ``Ref`` or ``Fn::GetAtt``."""
    found: set[str] = set()
    if isinstance(value, dict):
        for key, inner in value.items():
            if key == "Ref" and isinstance(inner, str):
                found.add(inner)
            elif key == "Fn::GetAtt":
                target = inner[0] if isinstance(inner, list) else str(inner).split(".")[0]
                found.add(str(target))
            else:
                found |= _references(inner)
    elif isinstance(value, list):
        for inner in value:
            found |= _references(inner)
    return found


def _top(prop: str) -> str:
    return prop.split("/", 1)[0]


def _path(resource: Mapping[str, Any]) -> str:
    path = str((resource.get("Metadata") or {}).get(CDK_PATH, ""))
    return path.split("/", 1)[1] if "/" in path else path


def _share_name(resource: Mapping[str, Any]) -> str | None:
    if resource.get("Type") != QUOTA_SHARE:
        return None
    name = (resource.get("Properties") or {}).get("QuotaShareName")
    return name if isinstance(name, str) else None


def _shown(value: Any) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


@dataclass
class _Diff:
    action: ChangeAction
    reasons: list[str]
    old: Mapping[str, Any] | None
    new: Mapping[str, Any] | None


def template_changes(
    old: Mapping[str, Mapping[str, Any]], new: Mapping[str, Mapping[str, Any]]
) -> dict[str, _Diff]:
    """Logical ID -> what CloudFormation does to it (unchanged resources left out).

    A create-only property changed, or one naming a replaced resource (its ARN changes),
    replaces; another property changed, or naming a replaced resource, updates in place.
    """
    create_only = create_only_properties()
    diffs: dict[str, _Diff] = {}
    for logical_id, resource in new.items():
        before = old.get(logical_id)
        if before is None:
            diffs[logical_id] = _Diff(ChangeAction.CREATE, ["new in the template"], None, resource)
            continue
        if before.get("Type") != resource.get("Type"):
            why = f"its type changes from {before.get('Type')} to {resource.get('Type')}"
            diffs[logical_id] = _Diff(ChangeAction.REPLACE, [why], before, resource)
            continue
        props_old = before.get("Properties") or {}
        props_new = resource.get("Properties") or {}
        changed = sorted(
            k for k in set(props_old) | set(props_new) if props_old.get(k) != props_new.get(k)
        )
        fixed = {_top(p) for p in create_only.get(str(resource.get("Type")), ())}
        replacing = [k for k in changed if k in fixed]
        if replacing:
            reasons = [
                f"{k} changes from {_shown(props_old.get(k))} to {_shown(props_new.get(k))} "
                "(create-only)"
                for k in replacing
            ]
            diffs[logical_id] = _Diff(ChangeAction.REPLACE, reasons, before, resource)
        elif changed:
            diffs[logical_id] = _Diff(
                ChangeAction.UPDATE, [f"{', '.join(changed)} change(s)"], before, resource
            )
    for logical_id, resource in old.items():
        if logical_id not in new:
            diffs[logical_id] = _Diff(
                ChangeAction.DELETE, ["gone from the template"], resource, None
            )
    _propagate_replacements(diffs, old, new, create_only)
    return diffs


def _propagate_replacements(
    diffs: dict[str, _Diff],
    old: Mapping[str, Mapping[str, Any]],
    new: Mapping[str, Mapping[str, Any]],
    create_only: Mapping[str, tuple[str, ...]],
) -> None:
    """A resource naming a replaced one gets its new ARN: replaced itself when that property
    is create-only, else updated in place; until nothing changes."""
    changed = True
    while changed:
        changed = False
        replaced = {i for i, d in diffs.items() if d.action is ChangeAction.REPLACE}
        for logical_id, resource in new.items():
            diff = diffs.get(logical_id)
            if logical_id not in old or (
                diff is not None and diff.action is not ChangeAction.UPDATE
            ):
                continue
            fixed = {_top(p) for p in create_only.get(str(resource.get("Type")), ())}
            props = resource.get("Properties") or {}
            hits = {k: _references(v) & replaced for k, v in props.items()}
            on_fixed = sorted(k for k, ids in hits.items() if ids and k in fixed)
            on_other = sorted(k for k, ids in hits.items() if ids and k not in fixed)
            if on_fixed:
                reasons = [
                    f"{k} changes: {', '.join(sorted(hits[k]))} is replaced (create-only)"
                    for k in on_fixed
                ]
                diffs[logical_id] = _Diff(ChangeAction.REPLACE, reasons, old[logical_id], resource)
                changed = True
            elif on_other and diff is None:
                reasons = [
                    f"{k} changes: {', '.join(sorted(hits[k]))} is replaced" for k in on_other
                ]
                diffs[logical_id] = _Diff(ChangeAction.UPDATE, reasons, old[logical_id], resource)
                changed = True


# --- the plan -------------------------------------------------------------------------------


def plan_deploy(
    old_template: Mapping[str, Mapping[str, Any]],
    new_template: Mapping[str, Mapping[str, Any]],
    *,
    old: Organisation,
    new: Organisation,
    jobs: Sequence[LiveJob] | None = None,
    resource_types: Iterable[str] | None = None,
) -> DeployPlan:
    """What deploying ``new_template`` over ``old_template`` does (see the module docstring).

    The templates are ``Resources`` mappings (logical ID -> resource); ``old``/``new`` the
    organisations they were synthesized from; ``jobs`` the live queue's unfinished jobs
    (``None``: not read, e.g. a plan of two files: the changes' ``jobs_*`` are ``None``);
    ``resource_types`` limits the plan to those types (against a live queue: ``BATCH_TYPES``).
    """
    diffs = template_changes(old_template, new_template)
    if resource_types is not None:
        kept = set(resource_types)
        diffs = {i: d for i, d in diffs.items() if str((d.new or d.old or {}).get("Type")) in kept}
    effects = _job_effects(diffs, old, new, jobs)
    failures = _failures(diffs, old, new, old_template)
    changes = []
    for logical_id, diff in diffs.items():
        resource = diff.new if diff.new is not None else diff.old
        assert resource is not None
        resource_type = str(resource.get("Type"))
        share = _share_name(diff.old or {}) or _share_name(resource)
        terminated, preempted, extra = effects.get(logical_id, ((), (), []))
        holds_jobs = resource_type in (QUOTA_SHARE, JOB_QUEUE)
        known = jobs is not None and holds_jobs
        changes.append(
            ResourceChange(
                logical_id=logical_id,
                resource_type=resource_type,
                action=diff.action,
                reason="; ".join([*_reasons(diff, resource_type, share), *extra]),
                path=_path(resource),
                quota_share_name=share,
                jobs_terminated=tuple(terminated) if known else None,
                jobs_preempted=tuple(preempted) if known else None,
                fails=tuple(failures.get(logical_id, ())),
                retained=_retained(diff),
            )
        )
    order = {logical_id: index for index, logical_id in enumerate([*new_template, *old_template])}
    changes.sort(key=lambda c: (_PHASE[c.action], order.get(c.logical_id, 0)))
    changes, unused = _allow(changes, new.allow_destructive)
    notes = []
    if jobs is None:
        notes.append("no live queue read: the jobs a change would end are not known")
    if resource_types is not None:
        notes.append(
            "compared with the live queue: only its Batch resources ("
            + ", ".join(sorted(set(resource_types)))
            + "); `--against OLD_FILE` compares every resource of the stack"
        )
    return DeployPlan(
        tuple(changes), jobs_read=jobs is not None, notes=tuple(notes), unused_allowances=unused
    )


def _allow(
    changes: Sequence[ResourceChange], allowances: Sequence[DestructiveAllowance]
) -> tuple[list[ResourceChange], tuple[tuple[int, DestructiveAllowance], ...]]:
    """Each destructive change with the reason of the first allowance naming it (a failing
    change keeps none: nothing lets it through); the allowances that named no change."""
    used: set[int] = set()
    out = []
    for change in changes:
        named = [i for i, a in enumerate(allowances) if change.named_by(a)]
        used.update(named)
        if named and not change.fails:
            change = replace(change, allowed_because=str(allowances[named[0]].reason))
        out.append(change)
    unused = tuple((i, a) for i, a in enumerate(allowances) if i not in used)
    return out, unused


def _retained(diff: _Diff) -> bool:
    if diff.action is ChangeAction.DELETE:
        return str((diff.old or {}).get("DeletionPolicy", "Delete")) in RETAINED
    if diff.action is ChangeAction.REPLACE:
        return str((diff.old or {}).get("UpdateReplacePolicy", "Delete")) in RETAINED
    return False


def _reasons(diff: _Diff, resource_type: str, share: str | None) -> list[str]:
    what = f"quota share {share}" if share else resource_type
    if diff.action is ChangeAction.CREATE:
        return [f"{what} is new: created first"]
    if diff.action is ChangeAction.DELETE:
        tail = " (kept: DeletionPolicy Retain)" if _retained(diff) else ""
        return [f"{what} is gone from the file: deleted in the cleanup, after every create{tail}"]
    if diff.action is ChangeAction.REPLACE:
        return [
            f"{what} is replaced: {'; '.join(diff.reasons)}; the new one is created first, "
            "the old one deleted in the cleanup"
        ]
    return [f"{what} is updated in place: {'; '.join(diff.reasons)}"]


# --- jobs at stake --------------------------------------------------------------------------

_Effects = dict[str, tuple[list[LiveJob], list[LiveJob], list[str]]]


def _as_deployed(
    live: QuotaShareSpec,
    file: QuotaShareSpec,
    calendar: ShareCalendar | None,
    when: datetime,
) -> QuotaShareSpec:
    if calendar is not None:
        live = calendar.as_deployed(live, file, when)
    return replace(live, description=file.description, access=file.access)


def _share_specs(org: Organisation) -> dict[str, QuotaShareSpec]:
    return {s.name: s for s in org.queue.shares}


def _job_types(job: LiveJob, spec: QuotaShareSpec | None) -> dict[str, int]:
    if job.capacity:
        return dict(job.capacity)
    first = next(iter(spec.capacity), None) if spec is not None else None
    return {first: 1} if first else {}


def _victim_order(job: LiveJob) -> tuple[int, float]:
    """Likeliest victim first: lowest priority, then the shortest run so far (the emulator's
    default victim policy for jobs that hold their share's own capacity)."""
    return (job.priority, -(job.started_at or 0.0))


def _take(
    candidates: Iterable[LiveJob], itype: str, need: int, specs: Mapping[str, QuotaShareSpec]
) -> list[LiveJob]:
    chosen = []
    for job in sorted(candidates, key=_victim_order):
        if need <= 0:
            break
        held = _job_types(job, specs.get(job.share)).get(itype, 0)
        if held:
            chosen.append(job)
            need -= held
    return chosen


def _job_effects(
    diffs: Mapping[str, _Diff],
    old: Organisation,
    new: Organisation,
    jobs: Sequence[LiveJob] | None,
) -> _Effects:
    """Per share change: the jobs terminated (share deleted or replaced), the jobs preempted
    (capacity given back), and what a DISABLED share means for its jobs."""
    effects: _Effects = {}
    if jobs is None:
        return effects
    old_specs, new_specs = _share_specs(old), _share_specs(new)
    by_share: dict[str, list[LiveJob]] = {}
    for job in jobs:
        if not job.status.is_terminal:
            by_share.setdefault(job.share, []).append(job)
    ended: set[str] = set()
    share_ids: dict[str, str] = {}
    for logical_id, diff in diffs.items():
        name = _share_name(diff.old or {})
        if name is None:
            continue
        share_ids[name] = logical_id
        if diff.action in (ChangeAction.DELETE, ChangeAction.REPLACE):
            ended.add(name)
            doomed = sorted(by_share.get(name, ()), key=lambda j: (not j.running, j.job_name))
            effects[logical_id] = (doomed, [], [_ended_text(name, doomed)] if doomed else [])
    for logical_id, diff in diffs.items():
        if diff.old is None or diff.old.get("Type") != JOB_QUEUE:
            continue
        if diff.action in (ChangeAction.DELETE, ChangeAction.REPLACE):
            doomed = [j for name, js in by_share.items() if name not in ended for j in js]
            effects[logical_id] = (doomed, [], [])
    for name, spec in new_specs.items():
        before = old_specs.get(name)
        if before is None or name in ended or name not in share_ids:
            continue
        if spec.state is ShareState.DISABLED and before.state is not ShareState.DISABLED:
            mine = by_share.get(name, [])
            running = sum(1 for j in mine if j.running)
            effects.setdefault(share_ids[name], ([], [], []))[2].append(
                f"DISABLED: it accepts no new jobs; its {running} running and "
                f"{len(mine) - running} waiting job(s) may finish (AWS: 'submitted jobs may "
                "finish')"
            )
    causes = [i for n, i in share_ids.items() if _shrinks(old_specs.get(n), new_specs.get(n))]
    for share, preempted, why in _give_backs(old_specs, new_specs, ended, by_share):
        # a borrower without a change of its own: shown on the change that takes its loan
        target = share_ids.get(share) or (causes[0] if causes else None)
        if target is None:
            continue
        entry = effects.setdefault(target, ([], [], []))
        entry[1].extend(j for j in preempted if j not in entry[1])
        entry[2].append(why if target == share_ids.get(share) else f"quota share {share}: {why}")
    return effects


def _shrinks(before: QuotaShareSpec | None, after: QuotaShareSpec | None) -> bool:
    """Whether a share lends less after the change (gone, lower limits, or lending no more)."""
    if before is None:
        return False
    if after is None:
        return True
    lower = any(after.limit(t) < n for t, n in before.capacity.items())
    return lower or (before.strategy.lends and not after.strategy.lends)


def _ended_text(name: str, doomed: Sequence[LiveJob]) -> str:
    running = sum(1 for j in doomed if j.running)
    return (
        f"terminates its {running} running and {len(doomed) - running} waiting job(s) "
        "('Quota share deleted: all jobs in the share are terminated')"
    )


def _give_backs(
    old: Mapping[str, QuotaShareSpec],
    new: Mapping[str, QuotaShareSpec],
    ended: set[str],
    by_share: Mapping[str, Sequence[LiveJob]],
) -> list[tuple[str, list[LiveJob], str]]:
    """Per share and instance type, what the new limits make it give back (the scheduler's
    ``enforce_limits`` rules: own use above the new limit, borrowing above the new borrow cap,
    then borrowing beyond what the lenders can still lend) and the likeliest victims."""
    out: list[tuple[str, list[LiveJob], str]] = []
    specs = {**old, **new}
    types = {t for s in [*old.values(), *new.values()] for t in s.capacity}
    running = {
        name: [j for j in jobs if j.running] for name, jobs in by_share.items() if name not in ended
    }
    for itype in sorted(types):
        use = {
            name: sum(_job_types(j, specs.get(name)).get(itype, 0) for j in js)
            for name, js in running.items()
        }
        own: dict[str, int] = {}
        borrowed: dict[str, int] = {}
        for name, used in use.items():
            before = old.get(name)
            limit = before.limit(itype) if before is not None else 0
            own[name] = min(used, limit)
            borrowed[name] = used - own[name]
        for name in list(use):
            spec = new.get(name)
            if spec is None:
                continue
            over_own = own[name] - spec.limit(itype)
            cap = spec.borrow_cap(itype) if spec.strategy.borrows else 0
            over_borrow = int(max(0, borrowed[name] - cap))
            if over_own > 0:
                victims = _take(running[name], itype, over_own, specs)
                out.append(
                    (
                        name,
                        victims,
                        f"its capacity of {itype} drops to {spec.limit(itype)}, below the "
                        f"{own[name]} its jobs use: gives back {over_own}, preempting "
                        f"{len(victims)} job(s) ('Quota share capacity reduced below current "
                        "usage; preemption triggered')",
                    )
                )
                own[name] -= over_own
            if over_borrow > 0:
                victims = _take(running[name], itype, over_borrow, specs)
                out.append(
                    (
                        name,
                        victims,
                        f"it may borrow at most {cap} x {itype} but borrows {borrowed[name]}: "
                        f"gives back {over_borrow}, preempting {len(victims)} job(s)",
                    )
                )
                borrowed[name] -= over_borrow
        lendable = sum(
            max(0, spec.limit(itype) - own.get(name, 0))
            for name, spec in new.items()
            if spec.strategy.lends and name not in ended
        )
        excess = sum(borrowed.values()) - lendable
        for name in sorted(n for n, b in borrowed.items() if b > 0):
            if excess <= 0:
                break
            give = min(excess, borrowed[name])
            victims = _take(running[name], itype, give, specs)
            out.append(
                (
                    name,
                    victims,
                    f"the lenders can lend only {lendable} x {itype} after the change: gives "
                    f"back {give} borrowed, preempting {len(victims)} job(s)",
                )
            )
            excess -= give
    return out


# --- what fails -----------------------------------------------------------------------------


def _failures(
    diffs: Mapping[str, _Diff],
    old: Organisation,
    new: Organisation,
    old_template: Mapping[str, Mapping[str, Any]],
) -> dict[str, list[str]]:
    failures: dict[str, list[str]] = {}
    old_shares = sum(1 for r in old_template.values() if r.get("Type") == QUOTA_SHARE)
    added = [
        i
        for i, d in diffs.items()
        if d.new is not None
        and d.new.get("Type") == QUOTA_SHARE
        and d.action in (ChangeAction.CREATE, ChangeAction.REPLACE)
    ]
    peak = old_shares + len(added)
    if added and peak > MAX_SHARES_PER_QUEUE:
        for logical_id in added:
            failures.setdefault(logical_id, []).append(
                f"the queue would hold {peak} quota shares while CloudFormation creates the new "
                f"one(s) before deleting the old (at most {MAX_SHARES_PER_QUEUE}): remove the old "
                "share in a deploy of its own first"
            )
    for logical_id, diff in diffs.items():
        if diff.action is not ChangeAction.REPLACE or (diff.new or {}).get("Type") != JOB_QUEUE:
            continue
        environments = _references(
            (diff.new or {}).get("Properties", {}).get("ServiceEnvironmentOrder")
        )
        kept = [
            e
            for e in environments
            if diffs.get(e) is None or diffs[e].action is not ChangeAction.REPLACE
        ]
        if kept:
            failures.setdefault(logical_id, []).append(
                f"a quota-managed service environment serves one job queue: the new queue on "
                f"{', '.join(sorted(kept))} is created while the old one still uses it"
            )
    failures_of_plans = _plan_failures(diffs, old, new)
    for logical_id, texts in failures_of_plans.items():
        failures.setdefault(logical_id, []).extend(texts)
    return failures


def _plan_failures(
    diffs: Mapping[str, _Diff], old: Organisation, new: Organisation
) -> dict[str, list[str]]:
    """Training plans: while the new shares exist beside the old (before the cleanup), the
    shares' capacity of a plan's type must stay within the plans' instances (the model's rule)."""
    if not new.training_plans:
        return {}
    new_specs, old_specs = _share_specs(new), _share_specs(old)
    created = {
        _share_name(d.new or {}): i
        for i, d in diffs.items()
        if d.action in (ChangeAction.CREATE, ChangeAction.REPLACE) and _share_name(d.new or {})
    }
    if not created:
        return {}
    during: dict[str, int] = {}
    for name, spec in old_specs.items():
        kept = new_specs.get(name, spec) if name not in created else spec
        for itype, count in kept.capacity.items():
            during[itype] = during.get(itype, 0) + count
    for created_name in created:
        added = new_specs.get(str(created_name))
        if added is not None:
            for itype, count in added.capacity.items():
                during[itype] = during.get(itype, 0) + count
    problems = training_plan_problems(new.training_plans, during)
    if not problems:
        return {}
    text = "; ".join(p.message for p in problems)
    return {
        str(i): [f"while the old and new shares both exist (before the cleanup) {text}"]
        for i in created.values()
    }


# --- JSON -----------------------------------------------------------------------------------


def job_json(job: LiveJob) -> dict[str, Any]:
    return {
        "jobId": job.job_id,
        "jobName": job.job_name,
        "quotaShareName": job.share,
        "status": str(job.status),
    }


def plan_json(plan: DeployPlan) -> dict[str, Any]:
    """The plan for pipelines: ``changes`` (``resource`` is the CloudFormation type,
    ``logicalId``, ``action``, ``reason``, ``jobsTerminated``/``jobsPreempted``: jobs, or
    ``null`` when not known, ``fails``: why it would fail), ``destructive``."""
    return {
        "changes": [
            {
                "resource": c.resource_type,
                "logicalId": c.logical_id,
                "action": str(c.action),
                "reason": c.reason,
                "jobsTerminated": None
                if c.jobs_terminated is None
                else [job_json(j) for j in c.jobs_terminated],
                "jobsPreempted": None
                if c.jobs_preempted is None
                else [job_json(j) for j in c.jobs_preempted],
                "fails": list(c.fails),
                "path": c.path,
                "quotaShareName": c.quota_share_name,
                "destructive": c.destructive,
                "allowed": c.allowed,
                "allowedBecause": c.allowed_because,
            }
            for c in plan.changes
        ],
        "destructive": plan.destructive,
        "blocked": plan.blocked,
        "unusedAllowances": [allowance_json(i, a) for i, a in plan.unused_allowances],
        "summary": plan_summary(plan),
        "fails": plan.fails,
        "jobsRead": plan.jobs_read,
        "notes": list(plan.notes),
    }


def allowance_json(index: int, allowance: DestructiveAllowance) -> dict[str, Any]:
    """An allowance as the plan's JSON shows it: where it is in the file, what it names."""
    named = (
        {"quotaShareName": allowance.share}
        if allowance.share is not None
        else {"logicalId": allowance.logical_id}
    )
    return {
        "path": f"{ALLOW_DESTRUCTIVE_KEY}[{index}]",
        **named,
        "action": str(allowance.action),
        "reason": str(allowance.reason),
    }


MAX_SUMMARY_CHARS = 300
"""Longest :func:`plan_summary`: it goes into the pipeline's approval comment."""


def change_title(change: ResourceChange) -> str:
    """``DELETE quota share QS3`` or ``REPLACE AWS::Batch::JobQueue JobQueue1234``."""
    what = (
        f"quota share {change.quota_share_name}"
        if change.quota_share_name
        else f"{change.resource_type} {change.logical_id}"
    )
    action = str(change.action).upper() if change.destructive else str(change.action)
    return f"{action} {what}"


def _stakes(change: ResourceChange) -> str:
    parts = []
    if change.jobs_terminated:
        parts.append(f"terminates {len(change.jobs_terminated)} job(s)")
    if change.jobs_preempted:
        parts.append(f"preempts {len(change.jobs_preempted)} job(s)")
    if change.fails:
        parts.append("would fail")
    return f" ({', '.join(parts)})" if parts else ""


def plan_summary(plan: DeployPlan) -> str:
    """One line for the approver: the changes by action, then each destructive one, allowed
    (with its reason) or blocked, and the unused allowances; at most ``MAX_SUMMARY_CHARS``."""
    if not plan.changes:
        return "no changes"
    counts: dict[str, int] = {}
    for change in plan.changes:
        counts[str(change.action)] = counts.get(str(change.action), 0) + 1
    text = f"{len(plan.changes)} change(s): " + ", ".join(f"{n} {a}" for a, n in counts.items())
    verdict = "nothing destructive"
    if plan.destructive:
        verdict = "BLOCKED" if plan.blocked else "every destructive change allowed"
    parts = [f"{text}; {verdict}"]
    for change in plan.changes:
        if not change.destructive:
            continue
        because = f": {change.allowed_because}" if change.allowed else " NOT ALLOWED"
        parts.append(f"{change_title(change)}{_stakes(change)}{because}")
    if plan.unused_allowances:
        parts.append(f"{len(plan.unused_allowances)} unused allowance(s)")
    line = one_line("; ".join(parts))
    return line if len(line) <= MAX_SUMMARY_CHARS else line[: MAX_SUMMARY_CHARS - 1] + "…"


def with_file_parts(live: Organisation, file: Organisation, when: datetime) -> Organisation:
    """The live organisation read at ``when`` with the shares' descriptions and team access
    (which AWS does not store; access tags the share) taken from the file for the shares both
    have, and the file's own sharing settings where a share has those the file's calendar puts
    in force at ``when`` (its schedule set them, not a deploy), so that a plan against a live
    queue shows only what the queue itself would change."""
    file_shares = _share_specs(file)
    shares = tuple(
        _as_deployed(s, file_shares[s.name], file.calendars.get(s.name), when)
        if s.name in file_shares
        else s
        for s in live.queue.shares
    )
    return replace(live, name=file.name, queue=replace(live.queue, shares=shares))

"""Organisation files: YAML validated by pydantic for shape, by the domain model for rules.

Files are read by :mod:`quota_constructs.safe_load` (size, encoding, YAML 1.2, no aliases or
duplicate keys). Pydantic checks structure (types, unknown keys, required fields); every quota
rule comes from :mod:`quota_constructs.model`, so the config loader never restates one.
:func:`load_organisation` reports every problem of a file at once, each naming the file, line,
field path, value and fix.
"""

from __future__ import annotations

import difflib
import functools
import json
import typing
from collections.abc import Callable, Collection, Iterable
from dataclasses import asdict, replace
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    TypeAdapter,
    ValidationError,
)

from quota_constructs.model import (
    BUCKET_BODY,
    CREATE,
    DAYS,
    DEFAULT_TIMEZONE,
    EMAIL_BODY,
    HTTPS_BODY,
    LOGICAL_ID_BODY,
    MAX_ACCESS_PRINCIPALS,
    MAX_ALLOWANCE_REASON_CHARS,
    MAX_ALLOWANCES,
    MAX_BORROW_LIMIT,
    MAX_CAPACITY_LIMITS_PER_SHARE,
    MAX_INSTANCES_PER_TYPE,
    MAX_ORGANISATION_DESCRIPTION_BYTES,
    MAX_ORGANISATION_DESCRIPTION_CHARS,
    MAX_ORGANISATION_NAME_LENGTH,
    MAX_SHARE_DESCRIPTION_CHARS,
    MAX_SHARES_PER_QUEUE,
    MAX_TAG_KEY_LENGTH,
    MAX_TAG_VALUE_LENGTH,
    MAX_TAGS,
    MAX_WINDOWS_PER_SHARE,
    MIN_CAPACITY_LIMITS_PER_SHARE,
    NAME_BODY,
    ORGANISATION_BODY,
    PRINCIPAL_BODY,
    QUEUE_PRIORITY_RANGE,
    ROLE_ARN_BODY,
    RUNNABLE_TIMEOUT_MINUTES_RANGE,
    SCHEDULING_PRIORITY_RANGE,
    SHARE_FIELDS,
    SQS_ARN_BODY,
    TIME_BODY,
    TRAINING_LOGS_MODES,
    TRAINING_LOGS_SHARED,
    TRAINING_LOGS_TEAM_PREFIXED,
    UNLIMITED_BORROW,
    AllowedAction,
    DestructiveAllowance,
    JobQueueSpec,
    Organisation,
    Problem,
    QuotaConfigError,
    QuotaShareSpec,
    ShareCalendar,
    SharePaths,
    ShareState,
    ShareWindow,
    SharingStrategy,
    Subscribers,
    TeamAccess,
    TrainingPlanSpec,
    share_problems,
    shared_access_problems,
    training_instance_types,
    training_prefix_problems,
    unparsed_name_problems,
)
from quota_constructs.safe_load import ORGANISATION_FILE_MAX_BYTES, dump_yaml, load_file

M = TypeVar("M", bound=BaseModel)
BUNDLED_ORGS_DIR = Path(__file__).resolve().parent / "data" / "orgs"
"""The organisation files shipped in the package (``seed-demo.yaml``: the emulator's and the
demo's default, the example ``quota init`` writes)."""
SEED_DEMO = BUNDLED_ORGS_DIR / "seed-demo.yaml"


class StrictModel(BaseModel):
    """Base of every file model: unknown keys rejected, values frozen."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class AccessConfig(StrictModel):
    """A share's team access: who may submit for the team, its cap, execution role and bucket.

    Shape only here; the rules are the domain model's (TeamAccess), and the patterns in this
    schema are hints for editors drawn from the same source.
    """

    principals: list[StrictStr] = Field(
        description="Who may assume the team's submitter role: 12-digit account ids (quoted) or "
        "arn:aws:iam::<account>:root, :role/<path/name> or :user/<path/name> ARNs.",
        json_schema_extra={
            "minItems": 1,
            "maxItems": MAX_ACCESS_PRINCIPALS,
            "uniqueItems": True,
            "items": {"type": "string", "pattern": f"^(?:{PRINCIPAL_BODY})$"},
        },
    )
    max_priority: StrictInt | None = Field(
        default=None,
        description="Highest schedulingPriority the team may set on submit and on update, "
        "0..9999; omitted: no cap.",
        json_schema_extra={
            "minimum": SCHEDULING_PRIORITY_RANGE[0],
            "maximum": SCHEDULING_PRIORITY_RANGE[1],
        },
    )
    execution_role: StrictStr = Field(
        default=CREATE,
        description="SageMaker execution role of the team's jobs: 'create' (default) or an "
        "existing role's ARN, not shared with another team.",
        json_schema_extra={"pattern": f"^(?:{CREATE}|{ROLE_ARN_BODY})$"},
    )
    bucket: StrictStr = Field(
        default=CREATE,
        description="The team's S3 bucket for input, output and checkpoints: 'create' (default) "
        "or an existing bucket's name, optionally name/prefix; not overlapping another team's.",
        json_schema_extra={"pattern": f"^(?:{CREATE}|{BUCKET_BODY})$"},
    )
    training_logs: StrictStr = Field(
        default=TRAINING_LOGS_TEAM_PREFIXED,
        description="Log streams of /aws/sagemaker/TrainingJobs a created execution role may "
        f"write: '{TRAINING_LOGS_TEAM_PREFIXED}' (default: only the team's own jobs', whose "
        f"names the runtime prefixes) or '{TRAINING_LOGS_SHARED}' (every stream).",
        json_schema_extra={"enum": list(TRAINING_LOGS_MODES)},
    )

    def to_spec(self) -> TeamAccess:
        return TeamAccess(
            principals=tuple(self.principals),
            max_priority=self.max_priority,
            execution_role=self.execution_role,
            bucket=self.bucket,
            training_logs=self.training_logs,
        )

    @classmethod
    def from_spec(cls, access: TeamAccess) -> AccessConfig:
        return cls(
            principals=list(access.principals),
            max_priority=access.max_priority,
            execution_role=access.execution_role,
            bucket=access.bucket,
            training_logs=access.training_logs,
        )


class NotificationsConfig(StrictModel):
    """Subscribers to preemption and FAILED-job notifications (``notifications:``)."""

    email: list[StrictStr] = Field(
        default_factory=list,
        description="Email addresses; each confirms its subscription by email.",
        json_schema_extra={"uniqueItems": True, "items": {"pattern": f"^(?:{EMAIL_BODY})$"}},
    )
    https: list[StrictStr] = Field(
        default_factory=list,
        description="HTTPS endpoints; each confirms SNS's SubscriptionConfirmation request.",
        json_schema_extra={"uniqueItems": True, "items": {"pattern": f"^(?:{HTTPS_BODY})$"}},
    )
    sqs: list[StrictStr] = Field(
        default_factory=list,
        description="Standard SQS queue ARNs; the queue policy must let sns.amazonaws.com send "
        "from the topic (its ARN is the stack output NotificationTopicArn).",
        json_schema_extra={"uniqueItems": True, "items": {"pattern": f"^(?:{SQS_ARN_BODY})$"}},
    )

    def to_spec(self) -> Subscribers:
        return Subscribers(email=tuple(self.email), https=tuple(self.https), sqs=tuple(self.sqs))

    @classmethod
    def from_spec(cls, subscribers: Subscribers) -> NotificationsConfig | None:
        if not subscribers.endpoints:
            return None
        return cls(
            email=list(subscribers.email), https=list(subscribers.https), sqs=list(subscribers.sqs)
        )


def _subscribers(config: NotificationsConfig | None) -> Subscribers:
    return config.to_spec() if config is not None else Subscribers()


class WindowConfig(StrictModel):
    """One window of a share's ``schedule:``: days, optional from/to, the settings in it."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    days: list[StrictStr] = Field(
        description="Days of the window: mon, tue, wed, thu, fri, sat, sun.",
        json_schema_extra={"minItems": 1, "uniqueItems": True, "items": {"enum": list(DAYS)}},
    )
    start: StrictStr = Field(
        default="00:00",
        alias="from",
        description="Local start time HH:MM in the share's timezone; default 00:00.",
        json_schema_extra={"pattern": f"^(?:{TIME_BODY})$"},
    )
    end: StrictStr = Field(
        default="24:00",
        alias="to",
        description="Local end time HH:MM (24:00 = midnight), after from; default 24:00.",
        json_schema_extra={"pattern": f"^(?:{TIME_BODY})$"},
    )
    strategy: SharingStrategy | None = Field(
        default=None, description="The strategy in force in the window."
    )
    borrow_limit: StrictInt | None = Field(
        default=None,
        description="The borrow limit in force in the window (LEND_AND_BORROW only).",
        json_schema_extra={"minimum": UNLIMITED_BORROW, "maximum": MAX_BORROW_LIMIT},
    )
    in_share_preemption: StrictBool | None = Field(
        default=None, description="In-share preemption in force in the window."
    )

    def to_spec(self) -> ShareWindow:
        return ShareWindow(
            days=tuple(self.days),
            start=self.start,
            end=self.end,
            strategy=self.strategy,
            borrow_limit=self.borrow_limit,
            in_share_preemption=self.in_share_preemption,
        )

    @classmethod
    def from_spec(cls, window: ShareWindow) -> WindowConfig:
        return cls.model_validate(
            {
                "days": list(window.days),
                "from": window.start,
                "to": window.end,
                "strategy": window.strategy,
                "borrow_limit": window.borrow_limit,
                "in_share_preemption": window.in_share_preemption,
            }
        )


class ShareConfig(StrictModel):
    """One quota share of an organisation file."""

    name: str = Field(
        description=f"Quota share name, {NAME_BODY}, unique in the queue.",
        json_schema_extra={"pattern": f"^{NAME_BODY}$"},
    )
    capacity: dict[str, StrictInt] = Field(
        description=f"{MIN_CAPACITY_LIMITS_PER_SHARE} to {MAX_CAPACITY_LIMITS_PER_SHARE} "
        "SageMaker training instance types mapped to instance counts "
        f"(1..{MAX_INSTANCES_PER_TYPE}).",
        json_schema_extra={
            "minProperties": MIN_CAPACITY_LIMITS_PER_SHARE,
            "maxProperties": MAX_CAPACITY_LIMITS_PER_SHARE,
            "propertyNames": {"enum": list(training_instance_types())},
            "additionalProperties": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_INSTANCES_PER_TYPE,
            },
        },
    )
    strategy: SharingStrategy = Field(description="RESERVE | LEND | LEND_AND_BORROW.")
    borrow_limit: StrictInt | None = Field(
        default=None,
        description="Percent of own capacity that may be borrowed; LEND_AND_BORROW only; "
        f"omitted or -1 = unlimited; 0 = none; at most {MAX_BORROW_LIMIT}.",
        json_schema_extra={"minimum": UNLIMITED_BORROW, "maximum": MAX_BORROW_LIMIT},
    )
    in_share_preemption: StrictBool = Field(
        default=False, description="Let a higher-priority job preempt a lower one in this share."
    )
    state: ShareState = Field(default=ShareState.ENABLED, description="ENABLED | DISABLED.")
    description: str = Field(
        default="",
        description="Free text, e.g. why this strategy.",
        json_schema_extra={"maxLength": MAX_SHARE_DESCRIPTION_CHARS},
    )
    access: AccessConfig | None = Field(
        default=None,
        description="Team access: a submitter role for these principals, limited to this share; "
        "omitted: the stack makes no team identity.",
    )
    notifications: NotificationsConfig | None = Field(
        default=None,
        description="Who hears of this share's preemptions and FAILED jobs (besides the "
        "organisation's subscribers).",
    )
    schedule: list[WindowConfig] | None = Field(
        default=None,
        description="Weekly windows in which some of this share's settings differ (strategy, "
        "borrow_limit, in_share_preemption); they must not overlap.",
        json_schema_extra={"minItems": 1, "maxItems": MAX_WINDOWS_PER_SHARE},
    )
    timezone: StrictStr | None = Field(
        default=None,
        description=f"IANA time zone of the schedule's times; default {DEFAULT_TIMEZONE}.",
        json_schema_extra={"maxLength": 64},
    )

    def to_calendar(self) -> ShareCalendar | None:
        """The share's calendar (``None`` without schedule and timezone)."""
        if self.schedule is None and self.timezone is None:
            return None
        return ShareCalendar(
            windows=tuple(w.to_spec() for w in self.schedule or ()),
            timezone=DEFAULT_TIMEZONE if self.timezone is None else self.timezone,
        )

    def to_spec(self) -> QuotaShareSpec:
        """The model's share: every field of ``SHARE_FIELDS`` read from its file key."""
        return QuotaShareSpec(
            **{
                name: _SPEC_VALUE.get(name, _same)(getattr(self, declared.file_key))
                for name, declared in SHARE_FIELDS.items()
            }
        )

    @classmethod
    def from_spec(cls, spec: QuotaShareSpec, calendar: ShareCalendar | None) -> ShareConfig:
        """The file form of a model share and its calendar: every field of ``SHARE_FIELDS``."""
        return cls(
            **{
                declared.file_key: _FILE_VALUE.get(name, _same)(getattr(spec, name))
                for name, declared in SHARE_FIELDS.items()
            },
            **_calendar_fields(calendar),
        )


def _same(value: Any) -> Any:
    return value


_SPEC_VALUE: dict[str, Callable[[Any], Any]] = {
    "access": lambda access: None if access is None else access.to_spec(),
    "notifications": _subscribers,
}
"""A share field's file value -> the model's, where they differ (by field name)."""
_FILE_VALUE: dict[str, Callable[[Any], Any]] = {
    "capacity": dict,
    "access": lambda access: None if access is None else AccessConfig.from_spec(access),
    "notifications": NotificationsConfig.from_spec,
}
"""A share field's model value -> the file's, where they differ (by field name)."""


class TrainingPlanConfig(StrictModel):
    """A SageMaker training plan: by name with its instances and window, or ``arn`` alone."""

    name: StrictStr = Field(
        default="",
        description="Plan name (1-64 letters, digits, '-'): a plan to buy, or bought already.",
    )
    instance_type: StrictStr = Field(
        default="",
        description="SageMaker training instance type reserved; the shares' capacity of this "
        "type is backed by the plan.",
        json_schema_extra={"enum": list(training_instance_types())},
    )
    instance_count: StrictInt = Field(
        default=0,
        description="Instances reserved, 1..256.",
        json_schema_extra={"minimum": 1, "maximum": 256},
    )
    start: StrictStr = Field(
        default="", description="Start of the window, ISO 8601 UTC, e.g. 2027-06-01T00:00:00Z."
    )
    duration_hours: StrictInt = Field(
        default=0,
        description="Length of the window in hours, 1..87600.",
        json_schema_extra={"minimum": 1, "maximum": 87600},
    )
    arn: StrictStr = Field(
        default="", description="An existing plan's ARN (alone: the plan is looked up)."
    )

    def to_spec(self) -> TrainingPlanSpec:
        return TrainingPlanSpec(**self.model_dump())

    @classmethod
    def from_spec(cls, plan: TrainingPlanSpec) -> TrainingPlanConfig:
        return cls(**asdict(plan))


class AllowanceConfig(StrictModel):
    """One entry of ``allow_destructive``: a destructive change this deploy means to make.

    Shape only here (``action`` and ``reason`` are checked by the model, so that a missing or
    never-stopped action, e.g. ``disable``, gets its own explanation); the rules are
    ``model.allowance``'s.
    """

    model_config = ConfigDict(
        extra="forbid", frozen=True, json_schema_extra={"required": ["action", "reason"]}
    )

    share: StrictStr | None = Field(
        default=None,
        description=f"The quota share's name ({NAME_BODY}); or give logical_id.",
        json_schema_extra={"pattern": f"^{NAME_BODY}$"},
    )
    logical_id: StrictStr | None = Field(
        default=None,
        description="A resource's CloudFormation logical ID, as `quota org plan` shows it; or "
        "give share.",
        json_schema_extra={"pattern": f"^{LOGICAL_ID_BODY}$"},
    )
    action: StrictStr | None = Field(
        default=None,
        description="replace (a create-only property changed), delete (gone from the file, "
        "or renamed) or reduce (an update in place that preempts running jobs).",
        json_schema_extra={"enum": [a.value for a in AllowedAction]},
    )
    reason: StrictStr | None = Field(
        default=None,
        description="Why this change is intended; shown in the plan and to the approver.",
        json_schema_extra={"minLength": 1, "maxLength": MAX_ALLOWANCE_REASON_CHARS},
    )

    def to_spec(self) -> DestructiveAllowance:
        return DestructiveAllowance(
            action=self.action, reason=self.reason, share=self.share, logical_id=self.logical_id
        )

    @classmethod
    def from_spec(cls, allowance: DestructiveAllowance) -> AllowanceConfig:
        return cls(
            share=allowance.share,
            logical_id=allowance.logical_id,
            action=allowance.action,
            reason=allowance.reason,
        )


class JobQueueConfig(StrictModel):
    """Job-queue settings of an organisation file."""

    priority: StrictInt = Field(
        default=1,
        description=f"Job queue priority, {QUEUE_PRIORITY_RANGE[0]}..{QUEUE_PRIORITY_RANGE[1]}.",
        json_schema_extra={"minimum": QUEUE_PRIORITY_RANGE[0], "maximum": QUEUE_PRIORITY_RANGE[1]},
    )
    runnable_timeout_minutes: StrictInt | None = Field(
        default=None,
        description=f"{RUNNABLE_TIMEOUT_MINUTES_RANGE[0]}..{RUNNABLE_TIMEOUT_MINUTES_RANGE[1]}: "
        "terminate jobs stuck RUNNABLE on a MISCONFIGURATION reason.",
        json_schema_extra={
            "minimum": RUNNABLE_TIMEOUT_MINUTES_RANGE[0],
            "maximum": RUNNABLE_TIMEOUT_MINUTES_RANGE[1],
        },
    )


class OrganisationFile(StrictModel):
    """An organisation file in ``stacks/orgs/``: one quota-managed queue and its shares."""

    organisation: str = Field(
        description="Organisation name: a letter, then letters, digits, '-'; at most "
        f"{MAX_ORGANISATION_NAME_LENGTH} characters.",
        json_schema_extra={"pattern": f"^{ORGANISATION_BODY}$"},
    )
    description: str = Field(
        default="",
        description="Free text; part of the stack description: at most "
        f"{MAX_ORGANISATION_DESCRIPTION_CHARS} characters and "
        f"{MAX_ORGANISATION_DESCRIPTION_BYTES} UTF-8 bytes.",
        json_schema_extra={"maxLength": MAX_ORGANISATION_DESCRIPTION_CHARS},
    )
    job_queue: JobQueueConfig = Field(
        default_factory=JobQueueConfig, description="Settings of the organisation's job queue."
    )
    tags: dict[str, str] = Field(
        default_factory=dict,
        description="Tags on every resource (AWS tagging rules).",
        json_schema_extra={
            "maxProperties": MAX_TAGS,
            "propertyNames": {"minLength": 1, "maxLength": MAX_TAG_KEY_LENGTH},
            "additionalProperties": {"type": "string", "maxLength": MAX_TAG_VALUE_LENGTH},
        },
    )
    shares: list[ShareConfig] = Field(
        description=f"1 to {MAX_SHARES_PER_QUEUE} quota shares.",
        json_schema_extra={"minItems": 1, "maxItems": MAX_SHARES_PER_QUEUE},
    )
    notifications: NotificationsConfig | None = Field(
        default=None,
        description="Who hears of every share's preemptions and FAILED jobs.",
    )
    training_plans: list[TrainingPlanConfig] = Field(
        default_factory=list,
        description="SageMaker training plans (reserved capacity) backing the shares' capacity "
        "of their instance types: {name, instance_type, instance_count, start, duration_hours} "
        "or {arn}.",
    )
    allow_destructive: list[AllowanceConfig] = Field(
        default_factory=list,
        description="The destructive changes this deploy is meant to make (a share deleted, "
        "replaced, or reduced below its use): the pipeline's gate lets only these through. "
        "Remove them once deployed (docs/pipeline.md).",
        json_schema_extra={"maxItems": MAX_ALLOWANCES},
    )

    def to_organisation(self) -> Organisation:
        return Organisation(
            name=self.organisation,
            description=self.description,
            tags=self.tags,
            queue=JobQueueSpec(
                shares=tuple(s.to_spec() for s in self.shares),
                priority=self.job_queue.priority,
                runnable_timeout_minutes=self.job_queue.runnable_timeout_minutes,
            ),
            notifications=_subscribers(self.notifications),
            training_plans=tuple(p.to_spec() for p in self.training_plans),
            calendars=_calendars(self.shares),
            allow_destructive=tuple(a.to_spec() for a in self.allow_destructive),
        )

    @classmethod
    def from_organisation(cls, org: Organisation) -> OrganisationFile:
        """The file form of a model organisation (used by the advisor to write files)."""
        return cls(
            organisation=org.name,
            description=org.description,
            job_queue=JobQueueConfig(
                priority=org.queue.priority,
                runnable_timeout_minutes=org.queue.runnable_timeout_minutes,
            ),
            tags=dict(org.tags),
            shares=[ShareConfig.from_spec(s, org.calendars.get(s.name)) for s in org.queue.shares],
            notifications=NotificationsConfig.from_spec(org.notifications),
            training_plans=[TrainingPlanConfig.from_spec(p) for p in org.training_plans],
            allow_destructive=[AllowanceConfig.from_spec(a) for a in org.allow_destructive],
        )

    def to_yaml(self) -> str:
        return dump_yaml(self.model_dump(mode="json", exclude_defaults=True, by_alias=True))


def _calendars(shares: Iterable[ShareConfig]) -> dict[str, ShareCalendar]:
    """Share name -> calendar, for the shares with a schedule (or a timezone)."""
    found = {}
    for share in shares:
        calendar = share.to_calendar()
        if calendar is not None:
            found[share.name] = calendar
    return found


def _calendar_fields(calendar: ShareCalendar | None) -> dict[str, Any]:
    """``schedule`` and ``timezone`` of a share's file form (none without a calendar)."""
    if calendar is None:
        return {}
    timezone = None if calendar.timezone == DEFAULT_TIMEZONE else calendar.timezone
    return {
        "schedule": [WindowConfig.from_spec(w) for w in calendar.windows],
        "timezone": timezone,
    }


class FileKind(StrEnum):
    """The YAML files the project reads, told apart by the key each one alone has."""

    ORGANISATION = "organisation file"
    TEAM_PROFILES = "team-profile file"
    PIPELINE = "pipeline file"


_KIND_KEYS = {
    FileKind.ORGANISATION: "shares",
    FileKind.TEAM_PROFILES: "teams",
    FileKind.PIPELINE: "environments",
}
_KIND_COMMANDS = {
    FileKind.ORGANISATION: "give it to quota org validate, quota local serve --org, quota "
    "simulate or cdk synth -c org_file={path}",
    FileKind.TEAM_PROFILES: "run quota recommend {path} --output ORG.yaml on it (it writes the "
    "organisation file)",
    FileKind.PIPELINE: "give it to cdk synth -c pipeline_file={path} (docs/pipeline.md)",
}


def _article(kind: FileKind) -> str:
    return f"{'an' if kind.value[0] in 'aeiou' else 'a'} {kind.value}"


def file_kind(data: Any) -> FileKind | None:
    """Which kind of file ``data`` (a parsed YAML document) is; ``None`` if no or several."""
    if not isinstance(data, dict):
        return None
    kinds = [kind for kind, key in _KIND_KEYS.items() if key in data]
    return kinds[0] if len(kinds) == 1 else None


_KIND_STARTS = {
    FileKind.ORGANISATION: "start with 'organisation: <name>' and 'shares:'",
    FileKind.TEAM_PROFILES: "start with 'organisation: <name>' and 'teams:'",
    FileKind.PIPELINE: "start from stacks/pipeline.example.yaml",
}


def root_problem(data: Any, expected: FileKind, source: str) -> Problem | None:
    """The one problem when ``data`` is not a mapping or is another kind of file than
    ``expected`` (:func:`wrong_file_problem`); ``None`` when its root can be validated."""
    if not isinstance(data, dict):
        return Problem(
            "<root>",
            type(data).__name__,
            f"{_article(expected)} is a mapping",
            _KIND_STARTS[expected],
        )
    return wrong_file_problem(data, expected, source)


def wrong_file_problem(data: Any, expected: FileKind, source: str) -> Problem | None:
    """One problem naming what ``data`` is and the command that takes it, when it is another
    kind of file than ``expected``; ``None`` otherwise."""
    found = file_kind(data)
    if found is None or found is expected:
        return None
    return Problem(
        "<root>",
        _KIND_KEYS[found],
        f"this is {_article(found)}, not {_article(expected)}",
        _KIND_COMMANDS[found].format(path=source),
    )


class OrgFileError(QuotaConfigError):
    """An organisation file cannot be read or breaks rules; the message names the file."""


def json_schema() -> str:
    """JSON Schema of organisation files, for editors (``quota org schema``)."""
    schema = OrganisationFile.model_json_schema()
    schema["title"] = "Quota-managed organisation"
    return json.dumps(schema, indent=2)


def _loc_to_path(loc: Iterable[Any]) -> str:
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path = f"{path}.{part}" if path else str(part)
    return path


_FIXES = {
    "extra_forbidden": "remove the key or check its spelling",
    "missing": "add the field",
    "enum": "use one of the listed values",
    "int_type": "write a whole number without quotes",
    "bool_type": "write true or false",
    "string_type": "write text; quote values YAML reads as numbers, e.g. '444455556666'",
    "dict_type": "write a mapping of key: value",
    "list_type": "write a list",
    "model_type": "write a mapping of key: value",
}


def pydantic_problems(
    error: ValidationError, prefix: str = "", *, model: type[BaseModel] | None = None
) -> list[Problem]:
    """Pydantic errors as :class:`Problem` rows: field path (under ``prefix``), value, fix.

    With ``model`` (the validated model), an unknown key's fix names the closest allowed key
    ("did you mean 'borrow_limit'?") or lists the allowed ones.
    """
    problems = []
    for item in error.errors():
        loc = _loc_to_path(item["loc"])
        path = f"{prefix}{'.' if prefix and not loc.startswith('[') else ''}{loc}"
        value = item.get("input") if item["type"] != "missing" else None
        fix = _FIXES.get(item["type"], "correct the value")
        message = item["msg"]
        if item["type"] == "extra_forbidden":
            message = "unknown key"
            if model is not None:
                fix = _unknown_key_fix(model, item["loc"])
        problems.append(Problem(path or "<root>", value, message, fix))
    return problems


def _unknown_key_fix(model: type[BaseModel], loc: tuple[Any, ...]) -> str:
    """ "did you mean 'x'?" for a close misspelling of an allowed key, else the allowed keys."""
    parent = _model_at(model, loc[:-1])
    if parent is None:
        return _FIXES["extra_forbidden"]
    allowed = [field.alias or name for name, field in parent.model_fields.items()]
    close = difflib.get_close_matches(str(loc[-1]), allowed, n=1, cutoff=0.6)
    if close:
        return f"did you mean '{close[0]}'?"
    return f"remove the key; the keys allowed here are {', '.join(allowed)}"


def _model_at(model: type[BaseModel], loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """The model class that validates the mapping at ``loc`` below ``model`` (None: not one)."""
    current: type[BaseModel] | None = model
    for part in loc:
        if current is None:
            return None
        if isinstance(part, int):
            continue
        field = current.model_fields.get(str(part))
        current = _inner_model(field.annotation) if field is not None else None
    return current


def _inner_model(annotation: Any) -> type[BaseModel] | None:
    """The model class inside ``X``, ``list[X]``, ``X | None`` or ``dict[str, X]``."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _inner_model(arg)
        if found is not None:
            return found
    return None


_FAILED = object()
"""A value that did not pass its field's shape."""


def valid_fields(model: type[BaseModel], raw: Any, *, skip: Collection[str] = ()) -> dict[str, Any]:
    """Field name -> validated value of each field of ``raw`` (a mapping, keys as written in
    files) that passes ``model``'s shape on its own; a nested model's value is built from its
    own valid fields. Unknown keys, failing fields and ``skip`` are left out; ``raw`` is never
    changed."""
    if not isinstance(raw, dict):
        return {}
    found = {}
    for name, field in model.model_fields.items():
        key = field.alias or name
        if key in raw and key not in skip:
            value = _field_value(model, name, raw[key])
            if value is not _FAILED:
                found[name] = value
    return found


def parsable(model: type[M], raw: Any, *, skip: Collection[str] = ()) -> M | None:
    """``raw`` as ``model`` from its valid fields (:func:`valid_fields`), defaults for the
    optional ones that failed; ``None`` when a required field (not in ``skip``) failed."""
    found = valid_fields(model, raw, skip=skip)
    required = {n for n, f in model.model_fields.items() if f.is_required()} - set(skip)
    if not isinstance(raw, dict) or not required <= found.keys():
        return None
    return model.model_construct(**found)


def _field_value(model: type[BaseModel], name: str, value: Any) -> Any:
    """``value`` validated as field ``name`` of ``model``, or ``_FAILED``."""
    inner = _inner_model(model.model_fields[name].annotation)
    if inner is not None and isinstance(value, dict):
        value = parsable(inner, value)
    elif inner is not None and isinstance(value, list):
        value = [parsable(inner, v) if isinstance(v, dict) else v for v in value]
    try:
        return _field_adapter(model, name).validate_python(value)
    except ValidationError:
        return _FAILED


@functools.cache
def _field_adapter(model: type[BaseModel], name: str) -> TypeAdapter[Any]:
    field = model.model_fields[name]
    annotation: Any = field.annotation
    if field.metadata:  # constraints given to Field(), e.g. max_length
        annotation = Annotated[(annotation, *field.metadata)]
    return TypeAdapter(annotation)


def under(path: str, reported: Collection[str]) -> bool:
    """Whether ``path`` is one of ``reported`` or below one."""
    return any(path == r or path.startswith((r + ".", r + "[")) for r in reported)


def parse_organisation(data: Any, *, source: str = "<data>") -> Organisation:
    """Validate already-parsed data as an organisation; raise :class:`OrgFileError` listing all.

    All in one run: shape errors (unknown keys with "did you mean", wrong types, missing
    fields), then the domain rules of each item (share, calendar, plan, ...) checked on the
    fields of it that passed their shape. ``data`` is never changed.
    """
    root = root_problem(data, FileKind.ORGANISATION, source)
    if root is not None:
        raise OrgFileError([root], context=source)
    try:
        org = OrganisationFile.model_validate(data).to_organisation()
    except ValidationError as exc:
        problems = pydantic_problems(exc, model=OrganisationFile)
        reported = {p.path for p in problems}
        rules = [p for p in _item_rule_problems(data) if not under(p.path, reported)]
        raise OrgFileError(problems + rules, context=source) from None
    rule_problems = org.problems()
    if rule_problems:
        raise OrgFileError(rule_problems, context=source)
    return org


def _item_rule_problems(data: dict[str, Any]) -> list[Problem]:
    """The domain rules of a file with shape errors, each item checked on its valid fields: the
    organisation of the shares that parsed (at their own paths), then each share's own rules
    where a required field of it failed (the queue's rules do not see that share)."""
    raw_shares = data.get("shares")
    items = list(enumerate(raw_shares)) if isinstance(raw_shares, list) else []
    shares = [(f"shares[{i}]", _share(raw)) for i, raw in items]
    parsed = [(path, share) for path, share in shares if share is not None]
    top = valid_fields(OrganisationFile, data, skip={"shares"})
    file = OrganisationFile.model_construct(
        **{"organisation": "", **top, "shares": [share for _, share in parsed]}
    )  # a name that failed its shape is reported; its rule is not checked twice
    unparsed = [
        (path, raw) for (path, share), (_, raw) in zip(shares, items, strict=True) if share is None
    ]
    names = [(path, n) for path, raw in unparsed if (n := _valid_name(raw)) is not None]
    where = SharePaths(items=[path for path, _ in parsed], count=len(items), unparsed_names=names)
    problems = file.to_organisation().problems(where=where)
    for path, raw in unparsed:
        problems += _partial_share_problems(raw, path)
    return problems + unparsed_name_problems(where, [share.name for _, share in parsed])


def _valid_name(raw: Any) -> str | None:
    """The name of a share that did not parse, when its name did."""
    name = valid_fields(ShareConfig, raw).get("name")
    return name if isinstance(name, str) else None


_CALENDAR_KEYS = ("schedule", "timezone")
"""A share's calendar: one item, checked only when its schedule passed its shape."""


def _share(raw: Any) -> ShareConfig | None:
    """A share from its valid fields (:func:`parsable`); without its calendar when its
    schedule is there but failed."""
    schedule = raw.get("schedule") if isinstance(raw, dict) else None
    share = parsable(ShareConfig, raw)
    if share is None or schedule is None or share.schedule is not None:
        return share
    return parsable(ShareConfig, raw, skip=_CALENDAR_KEYS)


def _partial_share_problems(raw: Any, path: str) -> list[Problem]:
    """The rules of the valid fields of a share of which a required field failed."""
    found = valid_fields(ShareConfig, raw)
    return share_problems(
        {
            name: _SPEC_VALUE.get(name, _same)(found[declared.file_key])
            for name, declared in SHARE_FIELDS.items()
            if declared.file_key in found
        },
        path,
    )


def load_organisation(path: str | Path) -> Organisation:
    """Read and validate one organisation file; :class:`OrgFileError` names file, line, field.

    The file is read safely (:mod:`quota_constructs.safe_load`, at most
    ``ORGANISATION_FILE_MAX_BYTES``); a file that cannot be read is an :class:`OrgFileError` too.
    """
    return load_file(
        path,
        lambda data, source: parse_organisation(data, source=source),
        max_bytes=ORGANISATION_FILE_MAX_BYTES,
        error=OrgFileError,
    )


def _in_file(source: str, problem: Problem) -> Problem:
    """``problem`` with its file (and line) in front of its path, for a list over several files."""
    line = f"line {problem.line}: " if problem.line is not None else ""
    return replace(problem, path=f"{source}: {line}{problem.path}", line=None)


def discover_org_files(directory: str | Path) -> list[Path]:
    """Organisation files (``*.yaml``/``*.yml``) in ``directory``, sorted by name."""
    directory = Path(directory)
    return sorted([*directory.glob("*.yaml"), *directory.glob("*.yml")])


def load_organisations(paths: Iterable[str | Path]) -> list[Organisation]:
    """Load several files; one :class:`OrgFileError` listing the problems of all of them.

    Organisation names must be unique across the files (they name the stacks), and no two teams
    of any files may name the same existing execution role or overlapping bucket locations,
    nor have the same training-job prefix.
    """
    orgs: list[Organisation] = []
    access: list[tuple[str, TeamAccess]] = []
    teams: list[tuple[str, str]] = []
    problems: list[Problem] = []
    seen: dict[str, str] = {}
    for path in paths:
        try:
            org = load_organisation(path)
        except OrgFileError as exc:
            problems += [_in_file(exc.context, p) for p in exc.problems]
            continue
        if org.name in seen:
            problems.append(
                Problem(
                    f"{path}: organisation",
                    org.name,
                    f"organisation name already used by {seen[org.name]}",
                    "give each organisation file its own name",
                )
            )
        seen.setdefault(org.name, str(path))
        orgs.append(org)
        teams += [(f"{path}: {where}", team) for where, team in org.prefixed_teams()]
        access += [
            (f"{path}: shares[{index}].access", share.access)
            for index, share in enumerate(org.queue.shares)
            if share.access is not None
        ]
    problems += shared_access_problems(access)  # within one file: reported by load_organisation
    problems += training_prefix_problems(teams)  # within one file: Organisation.problems
    if problems:
        raise OrgFileError(problems)
    return orgs

"""Owns building and checking ``SubmitServiceJob`` requests (pure: no network, no client).

:class:`TrainingJob` is a small builder for the SageMaker ``CreateTrainingJob`` payload;
:class:`JobSubmission` is everything a submit sends. ``JobSubmission.problems`` runs every
pre-submit check, using the domain model's rules against a :class:`JobQueueSpec` built from the
live queue, and ``JobSubmission.request`` renders the exact request (used for dry runs too).
"""

from __future__ import annotations

import hashlib
import json
import math
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any

import botocore.session
from botocore.model import Shape
from botocore.validate import ParamValidator

from quota_constructs.api_shapes import SAGEMAKER_DEFAULT_MAX_RUNTIME_S
from quota_constructs.model import (
    MAX_LISTED_PROBLEMS,
    MAX_PAYLOAD_BYTES,
    JobQueueSpec,
    Problem,
    QuotaConfigError,
    ShareState,
    capacity_demand,
    check_int_range,
    check_job_settings,
    check_name,
    check_scheduling_priority,
    check_tags,
    prefixed_training_job_name,
    training_job_name_problems,
)
from quota_constructs.safe_load import MAX_DEPTH

MAX_PAYLOAD_DEPTH = MAX_DEPTH
"""Deepest nesting of objects and lists in a payload (a CreateTrainingJob request needs 4), the
same as every file the project reads."""
MAX_PAYLOAD_INTEGER = 2**63 - 1
"""Largest integer a payload may hold: SageMaker's integer fields are at most 64-bit."""
MAX_CLIENT_TOKEN_LENGTH = 64
"""``SubmitServiceJob.clientToken``: 1 to 64 characters (botocore's ``ClientRequestToken``)."""
_PAYLOAD = "serviceRequestPayload"

SERVICE_JOB_TYPE = "SAGEMAKER_TRAINING"


@dataclass(frozen=True)
class TrainingJob:
    """Builder for a SageMaker ``CreateTrainingJob`` request (the ``serviceRequestPayload``).

    Nothing is uploaded and nothing is called: :meth:`payload` only renders a dict.
    ``max_runtime_s`` becomes ``StoppingCondition.MaxRuntimeInSeconds`` (SageMaker's default
    is one day) and from there the Batch attempt timeout.
    """

    image: str
    instance_type: str
    role_arn: str
    output_s3_uri: str
    instance_count: int = 1
    max_runtime_s: int = SAGEMAKER_DEFAULT_MAX_RUNTIME_S
    checkpoint_s3_uri: str | None = None
    hyperparameters: Mapping[str, str | int | float] = field(default_factory=dict)
    environment: Mapping[str, str] = field(default_factory=dict)
    volume_size_gb: int = 30

    def payload(self, training_job_name: str) -> dict[str, Any]:
        """The ``CreateTrainingJob`` request for this job, named ``training_job_name``."""
        payload: dict[str, Any] = {
            "TrainingJobName": training_job_name,
            "AlgorithmSpecification": {"TrainingImage": self.image, "TrainingInputMode": "File"},
            "RoleArn": self.role_arn,
            "OutputDataConfig": {"S3OutputPath": self.output_s3_uri},
            "ResourceConfig": {
                "InstanceType": self.instance_type,
                "InstanceCount": self.instance_count,
                "VolumeSizeInGB": self.volume_size_gb,
            },
            "StoppingCondition": {"MaxRuntimeInSeconds": self.max_runtime_s},
        }
        if self.hyperparameters:
            payload["HyperParameters"] = {k: str(v) for k, v in self.hyperparameters.items()}
        if self.environment:
            payload["Environment"] = dict(self.environment)
        if self.checkpoint_s3_uri:
            payload["CheckpointConfig"] = {"S3Uri": self.checkpoint_s3_uri}
        return payload


def attempt_timeout(payload: Mapping[str, Any]) -> int | None:
    """Batch attempt timeout derived from the payload's ``StoppingCondition``.

    The longest of ``MaxRuntimeInSeconds`` and ``MaxWaitTimeInSeconds`` (managed spot waits
    count too); ``None`` when the payload sets neither (SageMaker's default then applies).
    """
    stop = payload.get("StoppingCondition") or {}
    values = [
        v
        for v in (stop.get("MaxRuntimeInSeconds"), stop.get("MaxWaitTimeInSeconds"))
        if isinstance(v, int) and not isinstance(v, bool)
    ]
    return max(values) if values else None


def client_token(
    job_name: str,
    payload: Mapping[str, Any],
    tags: Mapping[str, str] | None = None,
    share: str | None = None,
) -> str:
    """Idempotency token: SHA-256 of the job name, canonical payload, tags and share (64 hex
    characters).

    The same job name, payload, tags and share always give the same token, so a retried submit
    (by botocore or by the caller) is recognised by Batch instead of creating a duplicate job.
    ``tags`` are the tags as sent, the share's team tag included; ``share`` is the quota share
    (the same job into another share is another job). Without tags or share the token is that
    of name and payload alone.
    """
    content: dict[str, Any] = {"jobName": job_name, "payload": payload}
    if tags:
        content["tags"] = dict(tags)
    if share is not None:
        content["share"] = share
    canonical = json.dumps(content, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def attempt_token(token: str) -> str:
    """A new ``clientToken`` for another attempt of the submission whose token is ``token``.

    The first 31 characters of ``token``, ``-`` and 32 random hexadecimal digits (64 in all,
    the API's maximum): random, so Batch takes it as a new request; its prefix shows which
    submission it repeats.
    """
    return f"{token[:31]}-{uuid.uuid4().hex}"


def team_tag_problems(tags: Mapping[str, str], share: str, key: str, value: str) -> list[Problem]:
    """A problem per tag in ``tags`` whose key is the team tag's ``key`` in any letter case but
    which is not exactly ``key=value``, the team tag of quota share ``share``.

    The runtime adds the team tag itself; a team's role may submit only with it, and IAM
    compares tag keys in conditions without letter case.
    """
    return [
        Problem(
            f"tags.{given}",
            given_value,
            f"quota share {share} carries the team tag {key}={value}, and its jobs must carry "
            f"that exact tag (a team's role may submit only with it), not {given}={given_value}",
            f"drop the {given} tag: the runtime adds {key}={value} to every submit itself",
        )
        for given, given_value in tags.items()
        if given.lower() == key.lower() and (given, given_value) != (key, value)
    ]


def payload_team_tag_problems(
    payload: Mapping[str, Any], share: str, key: str, value: str | None
) -> list[Problem]:
    """A problem per entry of the payload's ``Tags`` (the SageMaker training job's tags, its
    cost allocation) whose key is the team tag's ``key`` in any letter case but which is not
    exactly ``key=value``, the team tag of quota share ``share``; with ``value`` ``None`` (a
    share without a team) any such tag is a problem.

    The runtime sets ``key=value`` on the training job itself; a payload naming another team
    would book its SageMaker spend to that team.
    """
    tags = payload.get("Tags")
    if not isinstance(tags, list | tuple):
        return []
    problems: list[Problem] = []
    for index, tag in enumerate(tags):
        if not isinstance(tag, Mapping):
            continue
        given, given_value = tag.get("Key"), tag.get("Value")
        if not isinstance(given, str) or given.lower() != key.lower():
            continue
        path = f"{_PAYLOAD}.Tags[{index}]"
        drop = f"drop the {given} tag from the payload's Tags"
        if value is None:
            problems.append(
                Problem(
                    f"{path}.Value",
                    given_value,
                    f"quota share {share} has no team, so its training jobs carry no {key} "
                    "cost tag (it would book their cost to the team it names)",
                    f"{drop}, or submit into your team's share",
                )
            )
        elif given != key:
            problems.append(
                Problem(
                    f"{path}.Key",
                    given,
                    f"the team tag's key is {key} (IAM and cost allocation compare it without "
                    "letter case)",
                    f"{drop}: the runtime sets {key}={value} itself",
                )
            )
        elif given_value != value:
            problems.append(
                Problem(
                    f"{path}.Value",
                    given_value,
                    f"the training job's {key} tag is the cost allocation of quota share "
                    f"{share}, whose team is {value}, not {given_value}",
                    f"{drop}: the runtime sets {key}={value} itself",
                )
            )
    return problems


def training_plan_problems(
    payload: Mapping[str, Any], plans: Sequence[str], owner: str
) -> list[Problem]:
    """The payload's ``ResourceConfig.TrainingPlanArn`` as a problem when it is not one of
    ``plans`` (ARNs, or names matching an ARN's ``training-plan/<name>``), the training plans
    of ``owner`` (e.g. ``organisation research``); none when the payload names no plan."""
    resources = payload.get("ResourceConfig")
    plan = resources.get("TrainingPlanArn") if isinstance(resources, Mapping) else None
    if plan is None or any(_is_plan(plan, known) for known in plans):
        return []
    listed = ", ".join(plans) or "none"
    return [
        Problem(
            f"{_PAYLOAD}.ResourceConfig.TrainingPlanArn",
            plan,
            f"not a training plan of {owner} (its plans: {listed})",
            "drop TrainingPlanArn (the runtime puts the job on an active plan of the "
            "organisation), or name one of the organisation's plans",
        )
    ]


def _is_plan(given: Any, known: str) -> bool:
    """Whether ``given`` (a payload's plan ARN) is ``known`` (an ARN, or a plan's name)."""
    if not isinstance(given, str):
        return False
    return given == known or (
        not known.startswith("arn:") and given.endswith(f":training-plan/{known}")
    )


@cache
def _training_job_shape() -> Shape:
    model = botocore.session.get_session().get_service_model("sagemaker")
    return model.operation_model("CreateTrainingJob").input_shape


def json_problems(value: Any, path: str = _PAYLOAD) -> list[Problem]:
    """A problem per value of ``value`` that JSON cannot carry as sent.

    Only objects with text keys, lists, text, finite numbers, integers within 64 bits, booleans
    and null; nesting at most :data:`MAX_PAYLOAD_DEPTH`. Walks without recursion, so any depth is
    answered with a problem, never a ``RecursionError``.
    """
    problems: list[Problem] = []
    stack: list[tuple[Any, str, int]] = [(value, path, 0)]
    while stack and len(problems) < MAX_LISTED_PROBLEMS:
        item, where, depth = stack.pop()
        if isinstance(item, Mapping | list | tuple) and depth >= MAX_PAYLOAD_DEPTH:
            problems.append(
                Problem(
                    where,
                    f"{type(item).__name__} at depth {depth}",
                    f"the payload is nested deeper than {MAX_PAYLOAD_DEPTH} levels",
                    "flatten it: a CreateTrainingJob request needs 4 levels",
                )
            )
        elif isinstance(item, Mapping):
            problems += _key_problems(item, where)
            stack += [(v, f"{where}.{k}", depth + 1) for k, v in item.items() if isinstance(k, str)]
        elif isinstance(item, list | tuple):
            stack += [(v, f"{where}[{i}]", depth + 1) for i, v in enumerate(item)]
        elif (reason := _scalar_reason(item)) is not None:
            problems.append(Problem(where, item, *reason))
    return problems


def _key_problems(mapping: Mapping[Any, Any], where: str) -> list[Problem]:
    return [
        Problem(f"{where}.{key}", key, "an object's keys must be text", "write the key as text")
        for key in mapping
        if not isinstance(key, str)
    ]


def _scalar_reason(item: Any) -> tuple[str, str] | None:
    """Why ``item`` is not a JSON scalar as sent and the fix, ``None`` when it is one."""
    if item is None or isinstance(item, str | bool):
        return None
    if isinstance(item, int):
        if abs(item) <= MAX_PAYLOAD_INTEGER:
            return None
        return "integers must fit in 64 bits", f"give at most {MAX_PAYLOAD_INTEGER}"
    if isinstance(item, float):
        if math.isfinite(item):
            return None
        return "numbers must be finite (no NaN or Infinity)", "give a finite number"
    return f"not a JSON value but {type(item).__name__}", "give text, a number, a boolean or null"


def payload_problems(payload: Any) -> list[Problem]:
    """The payload as JSON (:func:`json_problems`), then against SageMaker's
    ``CreateTrainingJob`` model from botocore: one problem per field, named by its path.

    Batch passes the payload through unchecked, so a mistake would otherwise surface only
    when the job is dispatched, after it waited its turn.
    """
    if not isinstance(payload, Mapping):
        return [
            Problem(
                _PAYLOAD,
                payload,
                "the payload must be a JSON object (a SageMaker CreateTrainingJob request), not "
                f"{_json_kind(payload)}",
                'write it as {"AlgorithmSpecification": ..., "ResourceConfig": ..., ...}',
            )
        ]
    problems = json_problems(payload)
    if problems:
        return problems
    report = ParamValidator().validate(dict(payload), _training_job_shape())
    if not report.has_errors():
        return []
    errors = getattr(report, "_errors", None)  # botocore keeps (reason, name, details) here
    if not isinstance(errors, list):
        return [_whole_report_problem(report.generate_report())]
    return [_shape_problem(*error) for error in errors]


def _json_kind(value: Any) -> str:
    kinds = {list: "a list", tuple: "a list", str: "text", bool: "a boolean", type(None): "null"}
    if isinstance(value, int | float) and not isinstance(value, bool):
        return "a number"
    return kinds.get(type(value), f"a {type(value).__name__}")


def _shape_problem(reason: str, name: str, details: Mapping[str, Any]) -> Problem:
    """One botocore validation error as a problem naming the payload field."""
    name = name.strip(".")
    where = f"{_PAYLOAD}.{name}" if name else _PAYLOAD
    fix = "see the SageMaker CreateTrainingJob API"
    if reason == "missing required field":
        field_name = details.get("required_name", "")
        return Problem(
            f"{where}.{field_name}", None, "required by CreateTrainingJob", f"add it; {fix}"
        )
    if reason == "unknown field":
        field_name = details.get("unknown_param", "")
        valid = ", ".join(details.get("valid_names", ()))
        return Problem(
            f"{where}.{field_name}",
            field_name,
            "not a field of CreateTrainingJob" + (f" {name}" if name else ""),
            f"use one of {valid}",
        )
    value = details.get("param")
    if reason == "invalid type":
        kinds = " or ".join(sorted({_type_word(t) for t in details.get("valid_types", ())}))
        return Problem(where, value, f"must be {kinds}, not {_json_kind(value)}", f"give {kinds}")
    if reason in ("invalid range", "invalid length"):
        low = details.get("min_allowed")
        what = "at least" if reason == "invalid range" else "of length at least"
        return Problem(where, value, f"must be {what} {low}", f"give a value {what} {low}")
    return Problem(where, value, f"not valid for CreateTrainingJob ({reason})", fix)


_TYPE_WORDS = {
    "str": "text",
    "int": "an integer",
    "float": "a number",
    "Decimal": "a number",
    "bool": "a boolean",
    "list": "a list",
    "tuple": "a list",
    "dict": "an object",
}


def _type_word(kind: Any) -> str:
    """botocore's ``"<class 'list'>"`` (or the type itself) as a JSON word."""
    name = getattr(kind, "__name__", None) or str(kind).replace("<class ", "").strip("'>")
    return _TYPE_WORDS.get(name.rsplit(".", 1)[-1], name)


def _whole_report_problem(report: str) -> Problem:
    return Problem(
        _PAYLOAD,
        "(CreateTrainingJob request)",
        "not a valid SageMaker CreateTrainingJob request: " + " ".join(report.split()),
        "fix the named fields (see the SageMaker CreateTrainingJob API)",
    )


@dataclass(frozen=True)
class JobSubmission:
    """One ``SubmitServiceJob`` request into a quota share, before it is sent.

    ``payload`` is a ``CreateTrainingJob`` dict or a :class:`TrainingJob` (its
    ``TrainingJobName`` defaults to ``job_name``). ``priority`` 0 is sent as 0; ``None`` leaves
    it to Batch. ``timeout_s=None`` derives the attempt timeout from the payload
    (:func:`attempt_timeout`). ``retry_attempts=None`` sends no retry strategy (one attempt).
    ``client_token=None`` derives one from job name, payload, tags and share
    (:func:`client_token`).
    """

    job_name: str
    share: str
    payload: Mapping[str, Any] | TrainingJob
    priority: int | None = None
    preemption_retries: int | None = None
    retry_attempts: int | None = None
    retry_rules: Sequence[Mapping[str, str]] = ()
    timeout_s: int | None = None
    tags: Mapping[str, str] = field(default_factory=dict)
    client_token: str | None = None
    training_plan_arn: str | None = None
    """Run on this SageMaker training plan: ``ResourceConfig.TrainingPlanArn`` (unless the
    payload names one already)."""
    training_job_tags: Mapping[str, str] = field(default_factory=dict)
    """Tags for the SageMaker training job itself (the payload's ``Tags``; a key the payload
    tags already keeps its value): the team tag, so AWS billing can split by team."""
    training_job_prefix: str | None = None
    """What the payload's ``TrainingJobName`` must start with (the team's prefix,
    :func:`~quota_constructs.model.training_job_prefix`): added in front unless it is there;
    a name taken from ``job_name`` then has ``_`` replaced by ``-``."""

    @property
    def payload_dict(self) -> dict[str, Any]:
        """The ``CreateTrainingJob`` request, with ``TrainingJobName`` filled in if missing."""
        default_name = self.job_name
        if self.training_job_prefix is not None and isinstance(default_name, str):
            default_name = default_name.replace("_", "-")
        if isinstance(self.payload, TrainingJob):
            payload = self.payload.payload(default_name)
        else:
            payload = dict(self.payload)
            payload.setdefault("TrainingJobName", default_name)
        name = payload.get("TrainingJobName")
        if self.training_job_prefix is not None and isinstance(name, str):
            payload["TrainingJobName"] = prefixed_training_job_name(name, self.training_job_prefix)
        if self.training_job_tags:
            tags = [dict(t) for t in payload.get("Tags") or [] if isinstance(t, Mapping)]
            keys = {t.get("Key") for t in tags}
            tags += [
                {"Key": k, "Value": v} for k, v in self.training_job_tags.items() if k not in keys
            ]
            payload["Tags"] = tags
        if self.training_plan_arn is not None:
            resources = dict(payload.get("ResourceConfig") or {})
            resources.setdefault("TrainingPlanArn", self.training_plan_arn)
            payload["ResourceConfig"] = resources
        return payload

    @property
    def instance_type(self) -> str | None:
        """The payload's ``ResourceConfig.InstanceType`` (``None`` when it names none)."""
        if isinstance(self.payload, TrainingJob):
            return self.payload.instance_type
        resources = self.payload.get("ResourceConfig")
        found = resources.get("InstanceType") if isinstance(resources, Mapping) else None
        return found if isinstance(found, str) else None

    def with_tag(self, key: str, value: str) -> JobSubmission:
        """This submission with tag ``key=value`` added (the derived token follows the tags)."""
        return replace(self, tags={**self.tags, key: value})

    @property
    def payload_json(self) -> str:
        """The payload exactly as sent (compact JSON)."""
        return json.dumps(self.payload_dict, separators=(",", ":"))

    @property
    def token(self) -> str:
        """The ``clientToken`` sent: the given one, else derived from job name and payload."""
        return self.client_token or client_token(
            self.job_name, self.payload_dict, self.tags, self.share
        )

    @property
    def timeout(self) -> int | None:
        """``timeoutConfig.attemptDurationSeconds``: given, else from the payload."""
        return self.timeout_s if self.timeout_s is not None else attempt_timeout(self.payload_dict)

    def request(self, job_queue: str) -> dict[str, Any]:
        """The ``SubmitServiceJob`` parameters for ``job_queue`` (name or ARN)."""
        request: dict[str, Any] = {
            "jobName": self.job_name,
            "jobQueue": job_queue,
            "serviceJobType": SERVICE_JOB_TYPE,
            "quotaShareName": self.share,
            "serviceRequestPayload": self.payload_json,
            "clientToken": self.token,
        }
        if self.priority is not None:
            request["schedulingPriority"] = self.priority
        if self.preemption_retries is not None:
            request["preemptionConfiguration"] = {
                "preemptionRetriesBeforeTermination": self.preemption_retries
            }
        if self.retry_attempts is not None:
            strategy: dict[str, Any] = {"attempts": self.retry_attempts}
            if self.retry_rules:
                strategy["evaluateOnExit"] = [dict(rule) for rule in self.retry_rules]
            request["retryStrategy"] = strategy
        if self.timeout is not None:
            request["timeoutConfig"] = {"attemptDurationSeconds": self.timeout}
        if self.tags:
            request["tags"] = dict(self.tags)
        return request

    def shape_problems(self) -> list[Problem]:
        """The fields' types and the payload as JSON and against ``CreateTrainingJob``.

        Every other check, the token and the request need these to hold; a problem names the
        field path, never a traceback.
        """
        problems = check_name(self.share, "quotaShareName", what="quota share name")
        problems += _tags_type_problems(self.tags) + _rules_type_problems(self.retry_rules)
        if self.client_token is not None:
            problems += _token_problems(self.client_token)
        if isinstance(self.payload, TrainingJob):
            try:
                payload: Any = self.payload.payload(str(self.job_name))
            except (TypeError, ValueError, AttributeError) as error:
                return [*problems, _builder_problem(error)]
        elif isinstance(self.payload, Mapping):
            payload = {"TrainingJobName": self.job_name, **self.payload}
        else:
            payload = self.payload
        return problems + payload_problems(payload)

    def problems(
        self, queue: JobQueueSpec | None = None, week: Iterable[JobQueueSpec] = ()
    ) -> list[Problem]:
        """Every pre-submit check; the share checks need ``queue`` (the live queue's shares);
        ``week``: the settings the shares' calendars bring within a week
        (:meth:`JobQueueSpec.settings_ahead`), in any of which the instances may fit."""
        problems = check_name(self.job_name, "jobName", what="job name")
        if self.priority is not None:
            problems += check_scheduling_priority(self.priority)
        problems += self._settings_problems()
        shape = self.shape_problems()
        if shape:
            return problems + shape
        problems += check_tags(self.tags)
        problems += self._training_job_name_problems()
        size = len(self.payload_json.encode())
        if size > MAX_PAYLOAD_BYTES:
            problems.append(
                Problem(
                    "serviceRequestPayload",
                    f"{size} bytes",
                    f"the payload may be at most {MAX_PAYLOAD_BYTES} bytes (10 KiB)",
                    "move large hyperparameters or environment values to S3",
                )
            )
        if queue is not None:
            problems += self.share_problems(queue, week)
        return problems

    def _training_job_name_problems(self) -> list[Problem]:
        """The prefixed ``TrainingJobName`` within SageMaker's length and characters."""
        name = self.payload_dict.get("TrainingJobName")
        if self.training_job_prefix is None or not isinstance(name, str):
            return []
        path = f"{_PAYLOAD}.TrainingJobName"
        return training_job_name_problems(name, self.training_job_prefix, path)

    def _settings_problems(self) -> list[Problem]:
        problems = check_job_settings(self.retry_attempts, self.preemption_retries)
        if self.retry_rules and (self.retry_attempts or 1) < 2:
            problems.append(
                Problem(
                    "retryStrategy.attempts",
                    self.retry_attempts,
                    "retry rules can never fire with a single attempt",
                    "set retry_attempts to 2 or more, or drop the retry rules",
                )
            )
        if self.timeout_s is not None:
            problems += check_int_range(
                self.timeout_s, "timeoutConfig.attemptDurationSeconds", 1, None, what="timeout"
            )
        return problems

    def share_problems(
        self, queue: JobQueueSpec, week: Iterable[JobQueueSpec] = ()
    ) -> list[Problem]:
        """The share exists and is enabled, and the payload's instances fit it now or in one
        of the ``week``'s settings (then the job waits for it, as the what-if says)."""
        names = ", ".join(s.name for s in queue.shares) or "none"
        try:
            share = queue.share(self.share)
        except KeyError:
            return [
                Problem(
                    "quotaShareName",
                    self.share,
                    f"the job queue has no quota share of that name (shares: {names})",
                    "submit to one of the queue's shares",
                )
            ]
        if share.state is not ShareState.ENABLED:
            return [
                Problem(
                    "quotaShareName",
                    self.share,
                    "the quota share is DISABLED and accepts no new jobs",
                    "enable the share or submit to another one",
                )
            ]
        try:
            demand = capacity_demand(self.payload_dict)
        except QuotaConfigError as error:
            return list(error.problems)
        found = _demand_problems(queue, self.share, demand)
        if found and any(not _demand_problems(later, self.share, demand) for later in week):
            return []
        return found


def _tags_type_problems(tags: Any) -> list[Problem]:
    if not isinstance(tags, Mapping):
        return [Problem("tags", tags, "tags must be a mapping of text to text", "pass a dict")]
    return [
        Problem(f"tags.{key}", value, "tag keys and values must be text", "write both as text")
        for key, value in tags.items()
        if not isinstance(key, str) or not isinstance(value, str)
    ]


def _rules_type_problems(rules: Any) -> list[Problem]:
    path = "retryStrategy.evaluateOnExit"
    if isinstance(rules, str | bytes | Mapping) or not isinstance(rules, Sequence):
        return [Problem(path, rules, "retry rules must be a list of objects", "pass a list")]
    return [
        Problem(
            f"{path}[{index}]",
            rule,
            "a retry rule is an object of text values (onStatusReason, action)",
            'write it as {"onStatusReason": "...", "action": "RETRY"}',
        )
        for index, rule in enumerate(rules)
        if not isinstance(rule, Mapping)
        or not all(isinstance(k, str) and isinstance(v, str) for k, v in rule.items())
    ]


def _token_problems(token: Any) -> list[Problem]:
    if isinstance(token, str) and 1 <= len(token) <= MAX_CLIENT_TOKEN_LENGTH:
        return []
    return [
        Problem(
            "clientToken",
            token,
            f"a client token is text of 1 to {MAX_CLIENT_TOKEN_LENGTH} characters",
            "pass a shorter token, or none to derive one",
        )
    ]


def _builder_problem(error: Exception) -> Problem:
    return Problem(
        _PAYLOAD,
        "(TrainingJob)",
        f"the TrainingJob builder cannot render the payload ({error})",
        "give hyperparameters and environment as mappings of text",
    )


def _demand_problems(
    queue: JobQueueSpec, share_name: str, demand: Mapping[str, int]
) -> list[Problem]:
    """A problem per instance type the share can never hold ``demand`` of, as the model says
    (:meth:`JobQueueSpec.infeasibility`); the message names the most it can hold."""
    share = queue.share(share_name)
    path = "serviceRequestPayload.ResourceConfig"
    problems: list[Problem] = []
    for itype, count in demand.items():
        reason = queue.infeasibility(share_name, {itype: count})
        if reason is None:
            continue
        if itype not in share.capacity:
            units = ", ".join(share.capacity) or "none"
            problems.append(
                Problem(
                    f"{path}.InstanceType",
                    itype,
                    f"not a capacity unit of quota share {share_name} (units: {units}); "
                    "the job would wait in RUNNABLE forever",
                    f"use one of {units}, or add {itype} to the share's capacity",
                )
            )
            continue
        most = queue.max_usable(share_name, itype)
        problems.append(
            Problem(
                f"{path}.InstanceCount",
                count,
                f"quota share {share_name} can hold at most {most} x {itype} at once, so "
                f"the job would wait in RUNNABLE forever ({reason.split(' - ')[0]})",
                f"request at most {most} instances, or raise the share's capacity",
            )
        )
    return problems

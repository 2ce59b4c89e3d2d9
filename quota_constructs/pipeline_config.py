"""Owns pipeline files: which repository and branch the pipeline follows, and where each
organisation deploys (``cdk synth -c pipeline_file=PATH``; example: stacks/pipeline.example.yaml).

Read by :mod:`quota_constructs.safe_load`; pydantic checks the shape, :func:`pipeline_problems`
the rules (ARNs, account ids, regions and the resource types they have, unique environment
names, known organisations, one stack name per account and region). Every problem names the
file, line, field, value and fix. No
aws_cdk here: the pipeline stack (``stacks/pipeline_stack.py``) consumes a :class:`Pipeline`.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictStr, ValidationError

from quota_constructs.config import FileKind, pydantic_problems, root_problem
from quota_constructs.model import ACCOUNT_ID_BODY, Problem, QuotaConfigError
from quota_constructs.model.regions import (
    PIPELINE_RESOURCE_TYPES,
    QUEUE_RESOURCE_TYPES,
    region_problems,
)
from quota_constructs.safe_load import KIB, load_file

PIPELINE_FILE_MAX_BYTES = 64 * KIB
CONNECTION_ARN_BODY = (
    r"arn:aws(?:-[a-z]+)*:(?:codeconnections|codestar-connections):"
    rf"(?P<region>[a-z]{{2}}(?:-[a-z]+)+-[0-9]):(?P<account>{ACCOUNT_ID_BODY}):"
    r"connection/[A-Za-z0-9-]{1,64}"
)
REPOSITORY_BODY = r"[A-Za-z0-9_.-]{1,100}/[A-Za-z0-9_.-]{1,100}"
BRANCH_BODY = r"[A-Za-z0-9._/-]{1,255}"
REGION_BODY = r"[a-z]{2}(?:-[a-z]+)+-[0-9]"
ENVIRONMENT_NAME_BODY = r"[A-Za-z][A-Za-z0-9-]{0,63}"
MAX_ENVIRONMENTS = 20

_RULES: dict[str, tuple[re.Pattern[str], str, str]] = {
    # field -> (pattern, what is wrong, fix)
    "connection_arn": (
        re.compile(CONNECTION_ARN_BODY),
        "not a CodeConnections connection ARN",
        "copy the ARN of an AVAILABLE connection from the console or "
        "`aws codeconnections list-connections`",
    ),
    "repository": (
        re.compile(REPOSITORY_BODY),
        "not an owner/name repository",
        "write e.g. my-org/gpu-quotas",
    ),
    "branch": (re.compile(BRANCH_BODY), "not a branch name", "write e.g. main"),
}


class _StrictModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class EnvironmentConfig(_StrictModel):
    """One deployment target: a pipeline stage deploying these organisations' stacks."""

    name: StrictStr = Field(
        description="Stage name, unique in the file: letters, digits and '-'.",
        json_schema_extra={"pattern": f"^{ENVIRONMENT_NAME_BODY}$"},
    )
    account: StrictStr = Field(
        description="12-digit AWS account id, quoted; bootstrapped with --trust <pipeline "
        "account>.",
        json_schema_extra={"pattern": f"^{ACCOUNT_ID_BODY}$"},
    )
    region: StrictStr = Field(
        description="AWS region, e.g. eu-west-1.", json_schema_extra={"pattern": f"^{REGION_BODY}$"}
    )
    organisations: list[StrictStr] = Field(
        description="Organisation names (the 'organisation:' of files in stacks/orgs/).",
        json_schema_extra={"minItems": 1, "uniqueItems": True},
    )
    approval: StrictBool = Field(
        default=False, description="A person approves in the pipeline before this stage deploys."
    )


class PipelineFile(_StrictModel):
    """A pipeline file: source repository and branch, and the environments in order."""

    connection_arn: StrictStr = Field(description="CodeConnections connection to the repository.")
    repository: StrictStr = Field(description="owner/name of the repository.")
    branch: StrictStr = Field(description="Branch the pipeline builds, e.g. main.")
    environments: list[EnvironmentConfig] = Field(
        description="Deployment stages, in order.",
        json_schema_extra={"minItems": 1, "maxItems": MAX_ENVIRONMENTS},
    )


@dataclass(frozen=True)
class Environment:
    """A validated environment (see :class:`EnvironmentConfig`)."""

    name: str
    account: str
    region: str
    organisations: tuple[str, ...]
    approval: bool = False


@dataclass(frozen=True)
class Pipeline:
    """A validated pipeline file; ``path`` is the file as named on the command line."""

    path: str
    connection_arn: str
    repository: str
    branch: str
    environments: tuple[Environment, ...]

    @property
    def account(self) -> str:
        """The pipeline's account: the connection's (a connection serves its own account)."""
        return _connection_part(self.connection_arn, "account")

    @property
    def region(self) -> str:
        """The pipeline's region: the connection's."""
        return _connection_part(self.connection_arn, "region")


class PipelineFileError(QuotaConfigError):
    """A pipeline file cannot be read or breaks rules; the message names the file."""


def _connection_part(arn: str, part: str) -> str:
    match = _RULES["connection_arn"][0].fullmatch(arn)
    assert match is not None, "call on a validated pipeline"
    return match[part]


def pipeline_problems(data: PipelineFile, organisations: Collection[str]) -> list[Problem]:
    """Every rule the parsed file breaks; ``organisations``: the names that have a file."""
    problems = [
        Problem(name, getattr(data, name), what, fix)
        for name, (pattern, what, fix) in _RULES.items()
        if not pattern.fullmatch(getattr(data, name))
    ]
    connection = _RULES["connection_arn"][0].fullmatch(data.connection_arn)
    if connection is not None:
        problems += region_problems(connection["region"], PIPELINE_RESOURCE_TYPES, "connection_arn")
    seen: dict[str, int] = {}
    stacks: dict[tuple[str, str, str], str] = {}
    for index, env in enumerate(data.environments):
        path = f"environments[{index}]"
        problems += _environment_problems(env, path, organisations)
        if env.name in seen:
            problems.append(
                Problem(
                    f"{path}.name",
                    env.name,
                    f"environments[{seen[env.name]}] has the same name",
                    "give each environment its own name",
                )
            )
        seen.setdefault(env.name, index)
        for org_index, org in enumerate(env.organisations):
            where = stacks.setdefault((env.account, env.region, org), path)
            if where != path:
                problems.append(
                    Problem(
                        f"{path}.organisations[{org_index}]",
                        org,
                        f"{where} deploys the same stack Quota-{org} to account {env.account} "
                        f"in {env.region}",
                        "deploy an organisation once per account and region",
                    )
                )
    return problems


def _environment_problems(
    env: EnvironmentConfig, path: str, organisations: Collection[str]
) -> list[Problem]:
    problems = []
    if not re.fullmatch(ENVIRONMENT_NAME_BODY, env.name):
        problems.append(Problem(f"{path}.name", env.name, "not a stage name", "write e.g. staging"))
    if not re.fullmatch(ACCOUNT_ID_BODY, env.account):
        problems.append(
            Problem(
                f"{path}.account",
                env.account,
                "not a 12-digit AWS account id",
                "write the account id in quotes, e.g. '111122223333'",
            )
        )
    if not re.fullmatch(REGION_BODY, env.region):
        problems.append(
            Problem(f"{path}.region", env.region, "not an AWS region", "write e.g. eu-west-1")
        )
    else:
        problems += region_problems(env.region, QUEUE_RESOURCE_TYPES, f"{path}.region")
    known = ", ".join(sorted(organisations)) or "none"
    problems += [
        Problem(
            f"{path}.organisations[{i}]",
            org,
            "no organisation file has this organisation name",
            f"use one of: {known} (or add its file to stacks/orgs/)",
        )
        for i, org in enumerate(env.organisations)
        if org not in organisations
    ]
    return problems


def parse_pipeline(data: Any, organisations: Collection[str], *, path: str) -> Pipeline:
    """Validate parsed data; :class:`PipelineFileError` lists every problem."""
    root = root_problem(data, FileKind.PIPELINE, path)
    if root is not None:
        raise PipelineFileError([root], context=path)
    try:
        parsed = PipelineFile.model_validate(data)
    except ValidationError as exc:
        raise PipelineFileError(pydantic_problems(exc), context=path) from None
    problems = pipeline_problems(parsed, organisations)
    if Path(path).is_absolute():
        problems.append(
            Problem(
                "pipeline_file",
                path,
                "the pipeline runs `cdk synth -c pipeline_file=` with this path in its checkout",
                "give the path relative to the repository root, e.g. stacks/pipeline.yaml",
            )
        )
    if problems:
        raise PipelineFileError(problems, context=path)
    return Pipeline(
        path=path,
        connection_arn=parsed.connection_arn,
        repository=parsed.repository,
        branch=parsed.branch,
        environments=tuple(
            Environment(e.name, e.account, e.region, tuple(e.organisations), e.approval)
            for e in parsed.environments
        ),
    )


def load_pipeline(path: str | Path, organisations: Collection[str]) -> Pipeline:
    """Read and validate a pipeline file; errors name file, line, field, value and fix."""
    return load_file(
        path,
        lambda data, source: parse_pipeline(data, organisations, path=source),
        max_bytes=PIPELINE_FILE_MAX_BYTES,
        error=PipelineFileError,
    )

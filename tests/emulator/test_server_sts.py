"""STS in the emulator over HTTP: AssumeRole for teams' submitter roles (query protocol, XML),
requests attributed to the assumed role, and what provisioning publishes for team access."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import string
import subprocess
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

import boto3
import pytest
from botocore.exceptions import ClientError

from quota_constructs.contracts import (
    TEAM_TAG_KEY,
    bucket_parameter,
    execution_role_arn_parameter,
    submitter_role_arn_parameter,
)
from quota_constructs.local.testing import DUMMY_CREDENTIALS, EmulatorServer
from quota_constructs.local.wire.protocol import service_model
from quota_constructs.local.wire.query_protocol import query_params
from tests.helpers import AWS, ORGS_DIR, QUOTA, payload, wait_for_endpoint

ROOT = Path(__file__).resolve().parents[2]
ROOT_USER = "arn:aws:iam::123456789012:root"
SUBMITTER = "arn:aws:iam::123456789012:role/research-generative-submitter"
ALICE = "arn:aws:sts::123456789012:assumed-role/research-generative-submitter/quota-alice"


@pytest.fixture
def research() -> Iterator[EmulatorServer]:
    with EmulatorServer(org_files=[ORGS_DIR / "research.yaml"], clock="virtual") as server:
        yield server


def assume(emu: EmulatorServer, **params: Any) -> dict[str, Any]:
    answer = emu.client("sts").assume_role(
        **{"RoleArn": SUBMITTER, "RoleSessionName": "quota-alice", **params}
    )
    return dict(answer)


def as_role(emu: EmulatorServer, credentials: dict[str, Any], service: str) -> Any:
    return boto3.client(
        service,
        endpoint_url=emu.endpoint_url,
        region_name="us-east-1",
        aws_access_key_id=credentials["AccessKeyId"],
        aws_secret_access_key=credentials["SecretAccessKey"],
        aws_session_token=credentials["SessionToken"],
    )


def raw_sts(emu: EmulatorServer, form: dict[str, str]) -> tuple[int, ET.Element]:
    """A hand-made query request: status and parsed XML answer."""
    body = urllib.parse.urlencode(form).encode()
    request = urllib.request.Request(
        f"{emu.endpoint_url}/",
        data=body,
        method="POST",
        headers={"Content-Type": "application/x-www-form-urlencoded; charset=utf-8"},
    )
    try:
        with urllib.request.urlopen(request) as response:
            return response.status, ET.fromstring(response.read())
    except urllib.error.HTTPError as error:
        return error.code, ET.fromstring(error.read())


def code_of(document: ET.Element) -> str:
    (code,) = [e.text for e in document.iter() if e.tag.endswith("Code")]
    return str(code)


# --- AssumeRole and GetCallerIdentity -----------------------------------------------------------


def test_assume_role_issues_credentials_for_a_submitter_role(research: EmulatorServer) -> None:
    answer = assume(research)

    credentials = answer["Credentials"]
    assert credentials["AccessKeyId"].startswith("ASIA") and len(credentials["AccessKeyId"]) == 20
    assert len(credentials["SecretAccessKey"]) == 40 and credentials["SessionToken"]
    assert credentials["Expiration"].timestamp() > 0
    assert answer["AssumedRoleUser"]["Arn"] == ALICE
    assert answer["AssumedRoleUser"]["AssumedRoleId"].endswith(":quota-alice")


def test_caller_identity_is_the_assumed_role_for_its_keys(research: EmulatorServer) -> None:
    credentials = assume(research)["Credentials"]

    mine = as_role(research, credentials, "sts").get_caller_identity()
    default = research.client("sts").get_caller_identity()

    assert (mine["Arn"], mine["Account"]) == (ALICE, "123456789012")
    assert default["Arn"] == ROOT_USER


def test_batch_requests_with_assumed_keys_are_recorded_with_the_role(
    research: EmulatorServer,
) -> None:
    batch = as_role(research, assume(research)["Credentials"], "batch")
    job = batch.submit_service_job(
        jobName="as-role",
        jobQueue="research-queue",
        serviceJobType="SAGEMAKER_TRAINING",
        quotaShareName="generative",
        serviceRequestPayload=payload(),
        tags={TEAM_TAG_KEY: "research/generative"},
    )
    research.client("batch").describe_service_job(jobId=job["jobId"])

    assert research.explain(job["jobId"])["submittedBy"] == ALICE
    assert research.callers[ALICE] == {"SubmitServiceJob": 1}
    assert research.callers[ROOT_USER] == {"AssumeRole": 1, "DescribeServiceJob": 1}


def test_each_assume_role_gets_its_own_keys(research: EmulatorServer) -> None:
    first = assume(research)["Credentials"]["AccessKeyId"]
    second = assume(research, RoleSessionName="quota-bob")["Credentials"]["AccessKeyId"]

    assert first != second
    bob = as_role(research, assume(research, RoleSessionName="quota-bob")["Credentials"], "sts")
    assert bob.get_caller_identity()["Arn"].endswith("/research-generative-submitter/quota-bob")


def test_rejects_a_role_it_did_not_provision(research: EmulatorServer) -> None:
    with pytest.raises(ClientError) as raised:
        assume(research, RoleArn="arn:aws:iam::123456789012:role/Admin")

    error = raised.value.response
    assert error["Error"]["Code"] == "AccessDenied"
    assert error["ResponseMetadata"]["HTTPStatusCode"] == 403
    assert "not authorized to perform: sts:AssumeRole on resource" in error["Error"]["Message"]
    assert SUBMITTER in error["Error"]["Message"]  # the roles it knows


def test_rejects_a_session_longer_than_the_role_allows(research: EmulatorServer) -> None:
    with pytest.raises(ClientError, match=r"ValidationError.*DurationSeconds 7200.*3600"):
        assume(research, DurationSeconds=7200)


def test_rejects_a_malformed_session_name(research: EmulatorServer) -> None:
    with pytest.raises(ClientError, match=r"ValidationError.*RoleSessionName.*'ana maria'"):
        assume(research, RoleSessionName="ana maria")


def test_accepts_and_ignores_session_tags_and_policies(research: EmulatorServer) -> None:
    answer = assume(
        research,
        Tags=[{"Key": "project", "Value": "llm"}],
        PolicyArns=[{"arn": "arn:aws:iam::aws:policy/ReadOnlyAccess"}],
        ExternalId="ext-1",
    )

    assert answer["AssumedRoleUser"]["Arn"] == ALICE


def test_rejects_a_missing_role_arn_with_botocores_report(research: EmulatorServer) -> None:
    status, document = raw_sts(
        research, {"Action": "AssumeRole", "Version": "2011-06-15", "RoleSessionName": "x-y"}
    )

    assert (status, code_of(document)) == (400, "ValidationError")
    assert "RoleArn" in ET.tostring(document, encoding="unicode")


def test_rejects_an_unknown_parameter(research: EmulatorServer) -> None:
    form = {
        "Action": "AssumeRole",
        "Version": "2011-06-15",
        "RoleArn": SUBMITTER,
        "RoleSessionName": "quota-alice",
        "RoleSesionName": "typo",
    }
    status, document = raw_sts(research, form)

    assert (status, code_of(document)) == (400, "ValidationError")
    assert "RoleSesionName" in ET.tostring(document, encoding="unicode")


def test_rejects_an_action_it_does_not_serve(research: EmulatorServer) -> None:
    status, document = raw_sts(research, {"Action": "CreateUser", "Version": "2010-05-08"})

    assert (status, code_of(document)) == (400, "InvalidAction")


def test_query_params_rebuild_lists_and_structures_from_the_form() -> None:
    shape = service_model("sts").operation_model("AssumeRole").input_shape
    form = {
        "RoleArn": SUBMITTER,
        "RoleSessionName": "quota-alice",
        "DurationSeconds": "900",
        "Tags.member.1.Key": "a",
        "Tags.member.1.Value": "1",
        "Tags.member.2.Key": "b",
        "Tags.member.2.Value": "2",
        "TransitiveTagKeys.member.1": "a",
    }

    assert query_params(shape, form) == {
        "RoleArn": SUBMITTER,
        "RoleSessionName": "quota-alice",
        "DurationSeconds": 900,
        "Tags": [{"Key": "a", "Value": "1"}, {"Key": "b", "Value": "2"}],
        "TransitiveTagKeys": ["a"],
    }


# --- what provisioning publishes for team access ------------------------------------------------


def test_shares_with_access_carry_the_team_tag(research: EmulatorServer) -> None:
    batch = research.client("batch")
    arns = research.organisation("research").quota_share_arns

    tags = {
        name: batch.describe_quota_share(quotaShareArn=arn)["tags"] for name, arn in arns.items()
    }

    assert {name: t[TEAM_TAG_KEY] for name, t in tags.items()} == {
        "recommendation": "research/recommendation",
        "generative": "research/generative",
        "data-analysis": "research/data-analysis",
    }


def test_team_parameters_are_published_in_the_emulators_account(research: EmulatorServer) -> None:
    ssm = research.client("ssm")

    def value(name: str) -> str:
        return str(ssm.get_parameter(Name=name)["Parameter"]["Value"])

    assert value(submitter_role_arn_parameter("research", "generative")) == SUBMITTER
    assert value(execution_role_arn_parameter("research", "generative")) == (
        "arn:aws:iam::123456789012:role/research-generative-execution"
    )
    assert value(bucket_parameter("research", "generative")) == "research-generative-123456789012"


def test_existing_roles_and_buckets_are_published_as_given(tmp_path: Path) -> None:
    org = tmp_path / "labs.yaml"
    org.write_text(
        "organisation: labs\nshares:\n"
        "- name: Vision_Team\n  capacity: {ml.g5.xlarge: 1}\n  strategy: LEND\n"
        "  access:\n    principals: ['111122223333']\n"
        "    execution_role: arn:aws:iam::111122223333:role/VisionTraining\n"
        "    bucket: shared-data/vision\n"
        "- name: open\n  capacity: {ml.g5.xlarge: 1}\n  strategy: LEND\n"
    )
    with EmulatorServer(org_files=[org]) as emu:
        found = emu.client("ssm").get_parameters_by_path(Path="/quota/labs", Recursive=True)
        open_arn = emu.organisation("labs").quota_share_arns["open"]
        open_tags = emu.client("batch").describe_quota_share(quotaShareArn=open_arn).get("tags", {})
        team = emu.organisation("labs").teams["Vision_Team"]

    values = {p["Name"]: p["Value"] for p in found["Parameters"]}
    assert values[execution_role_arn_parameter("labs", "Vision_Team")] == (
        "arn:aws:iam::111122223333:role/VisionTraining"
    )
    assert values[bucket_parameter("labs", "Vision_Team")] == "shared-data/vision"
    assert values[submitter_role_arn_parameter("labs", "Vision_Team")] == (
        "arn:aws:iam::123456789012:role/labs-Vision_Team-submitter"
    )
    assert submitter_role_arn_parameter("labs", "open") not in values
    assert TEAM_TAG_KEY not in open_tags
    assert team.team_tag == "labs/Vision_Team"


def test_shares_without_access_publish_nothing_more(emulator: EmulatorServer) -> None:
    found = emulator.client("ssm").get_parameters_by_path(Path="/quota/seed-demo", Recursive=True)

    assert all(
        p["Name"].endswith(("/arn", "/name", "/training-plans")) for p in found["Parameters"]
    )
    assert emulator.emulator.identities.roles == ()


def test_long_names_are_cut_to_iams_and_s3s_limits(tmp_path: Path) -> None:
    share = "s" * 100
    org = tmp_path / "long.yaml"
    org.write_text(
        f"organisation: long\nshares:\n- name: {share}\n  capacity: {{ml.g5.xlarge: 1}}\n"
        "  strategy: LEND\n  access: {principals: ['111122223333']}\n"
    )
    with EmulatorServer(org_files=[org]) as emu:
        team = emu.organisation("long").teams[share]

    assert len(team.submitter_role_arn.rsplit("/", 1)[1]) == 64
    assert len(team.bucket) == 63 and team.bucket == team.bucket.lower()
    assert team.submitter_role_arn != team.execution_role_arn


# --- the commands of docs/emulator.md, with the AWS CLI ---------------------------------------


def docs_commands() -> list[str]:
    text = (ROOT / "docs" / "emulator.md").read_text(encoding="utf-8")
    section = text.split("### Acting as a team (STS)", 1)[1].split("\n### ", 1)[0]
    block = section.split("```console\n", 1)[1].split("```", 1)[0]
    return [line[2:].split("  #", 1)[0].strip() for line in block.splitlines()]


ASSIGNMENT = re.compile(r"^(\w+)=\$\((aws .*)\)$")
"""A docs line ``VAR=$(aws ...)``: the command's text output becomes ``$VAR`` of later lines."""


def test_the_aws_cli_commands_of_the_docs_run_as_written(research: EmulatorServer) -> None:
    env = {**os.environ, **research.env, "AWS_CONFIG_FILE": os.devnull}
    outputs: list[Any] = []
    variables: dict[str, str] = {}
    for command in docs_commands():
        assignment = ASSIGNMENT.match(command)
        line = assignment.group(2) if assignment else command
        words = shlex.split(string.Template(line).substitute(variables))
        assert words[0] == "aws", command
        output = [] if "--output" in words else ["--output", "json"]
        done = subprocess.run(
            [str(AWS), *words[1:], *output], capture_output=True, text=True, env=env, timeout=60
        )
        assert done.returncode == 0, (command, done.stderr)
        if assignment:
            variables[assignment.group(1)] = done.stdout.strip()
            continue
        outputs.append(json.loads(done.stdout))
        if "assume-role" in words:  # "after exporting the three returned credentials"
            credentials = outputs[-1]["Credentials"]
            env["AWS_ACCESS_KEY_ID"] = credentials["AccessKeyId"]
            env["AWS_SECRET_ACCESS_KEY"] = credentials["SecretAccessKey"]
            env["AWS_SESSION_TOKEN"] = credentials["SessionToken"]

    assumed, identity = outputs
    assert variables == {"ROLE": SUBMITTER}
    assert assumed["AssumedRoleUser"]["Arn"] == ALICE
    assert identity["Arn"] == ALICE


def test_serve_prints_the_sts_endpoint_and_answers_assume_role() -> None:
    process = subprocess.Popen(  # PYTHONPATH: this checkout's code, whatever is installed
        [str(QUOTA), "local", "serve", "--port", "0", "--org", str(ORGS_DIR / "research.yaml")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={"COLUMNS": "200", "PATH": str(QUOTA.parent), "NO_COLOR": "1", "PYTHONPATH": str(ROOT)},
    )
    printed: list[str] = []
    try:
        endpoint = wait_for_endpoint(process, printed)
        sts = boto3.client(
            "sts", endpoint_url=endpoint, region_name="us-east-1", **DUMMY_CREDENTIALS
        )
        arn = sts.assume_role(RoleArn=SUBMITTER, RoleSessionName="quota-alice")["AssumedRoleUser"][
            "Arn"
        ]
    finally:
        process.send_signal(signal.SIGINT)
        out, _ = process.communicate(timeout=60)
        out = "".join(printed) + out

    assert arn == ALICE
    assert f"export AWS_ENDPOINT_URL_STS={endpoint}" in out

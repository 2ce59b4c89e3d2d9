"""The what-if's ``never`` for a priority above the team's cap, proven against the team's role.

The emulator does not enforce IAM, so the answer is checked where the cap lives: research's
``generative`` team (``access.max_priority: 50``) gets its submitter role synthesized by the
organisation stack (the team-access constructs), and the exact request ``quota jobs submit
--dry-run`` prints is decided by iam-simulate against that role; the same command with
``--what-if --org-file`` over HTTP against the emulator must say ``never`` (exit 1) exactly for
the requests the role denies.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from aws_cdk.assertions import Template
from typer.testing import CliRunner

from quota_constructs.commands import app
from quota_constructs.config import load_organisation
from quota_constructs.local.testing import EmulatorServer
from quota_constructs.stacks.organisation_stack import OrganisationStack, stack_name_for
from tests.constructs.helpers import make_app
from tests.helpers import ORGS_DIR
from tests.iam.simulator import Decision, Request
from tests.iam.test_team_access import JOB, PRIORITY, SUBMIT, TAG, Team, _teams
from tests.runtime.helpers import BUILDER

ORG_FILE = ORGS_DIR / "research.yaml"
SHARE, CAP = "generative", 50


@pytest.fixture(scope="module")
def team() -> Team:
    """The generative team's synthesized submitter role and resources (resolved)."""
    organisation = load_organisation(ORG_FILE)
    stack = OrganisationStack(make_app(), stack_name_for(organisation), organisation=organisation)
    [found] = [t for t in _teams(stack) if t.share.endswith(f"/quota-share/{SHARE}")]
    assert found.cap == CAP  # the organisation file's cap is the role's
    Template.from_stack(stack)  # synthesized (the fixture's cost is paid once)
    return found


@pytest.fixture(scope="module")
def emulator() -> Iterator[EmulatorServer]:
    with EmulatorServer(org_files=[ORG_FILE], clock="virtual") as emu:
        yield emu


def quota_submit(emu: EmulatorServer, *args: str) -> tuple[int, str, str]:
    """``quota jobs submit probe --share generative BUILDER... ARGS`` against the emulator."""
    base = ["jobs", "--endpoint-url", emu.endpoint_url, "--organisation", "research"]
    command = [*base, "submit", "probe", "--share", SHARE, *BUILDER, *args]
    result = CliRunner().invoke(app, command, env={"COLUMNS": "200"})
    return result.exit_code, result.stdout, result.stderr


def as_iam(team: Team, request: Mapping[str, Any]) -> list[Request]:
    """The IAM view of a printed ``SubmitServiceJob`` request, on the team's synthesized queue
    and share: the submit with its tags and priority as context, and the dependent tagging."""
    tags: Mapping[str, str] = request.get("tags") or {}
    context: dict[str, str | int | list[str]] = {f"aws:RequestTag/{k}": v for k, v in tags.items()}
    context["aws:TagKeys"] = list(tags)
    submit_context = dict(context)
    if "schedulingPriority" in request:
        submit_context[PRIORITY] = request["schedulingPriority"]
    assert request["quotaShareName"] == SHARE
    return [
        Request(SUBMIT, [team.queue, team.share, JOB], submit_context),
        Request(TAG, JOB, context),
    ]


@pytest.mark.parametrize(
    ("priority", "allowed"),
    [(["--priority", str(CAP)], True), (["--priority", str(CAP + 1)], False), ([], True)],
    ids=["at the cap", "cap + 1", "no priority (the runtime sends 0)"],
)
def test_what_if_says_never_exactly_when_the_teams_role_denies_the_request(
    team: Team, emulator: EmulatorServer, priority: list[str], allowed: bool
) -> None:
    code, out, err = quota_submit(emulator, *priority, "--dry-run")
    assert code == 0, err
    request = json.loads(out)
    submit, tag = team.submitter.evaluate(as_iam(team, request))
    assert tag is Decision.ALLOWED  # the team tag is the team's: only the priority decides
    assert (submit is Decision.ALLOWED) is allowed
    code, out, err = quota_submit(emulator, *priority, "--what-if", "--org-file", str(ORG_FILE))
    answer = json.loads(quota_submit(
        emulator, *priority, "--what-if", "--org-file", str(ORG_FILE), "--json"
    )[1])  # fmt: skip
    if allowed:
        assert (code, answer["outcome"]) == (0, "starts_now"), err
    else:
        assert (code, answer["outcome"]) == (1, "never"), err
        assert f"team {SHARE}'s" in answer["reason"] and f"cap of {CAP}" in answer["reason"]
        assert "the submit would be denied" in answer["reason"]
        assert out.startswith("never: ")


def test_without_the_organisation_file_the_cap_is_unknown_and_not_claimed(
    emulator: EmulatorServer,
) -> None:
    code, out, err = quota_submit(emulator, "--priority", str(CAP + 1), "--what-if", "--json")
    assert (code, json.loads(out)["outcome"]) == (0, "starts_now"), err

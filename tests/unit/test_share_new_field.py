"""docs/architecture.md's recipe "A new quota-share property", followed to the letter on a copy of
the package: a throw-away wire field ``weight`` (kept by AWS, compared for drift, a construct
prop and a table column) is declared where the recipe says and nowhere else, then an
organisation file that sets it is shown reaching the stack's ``AWS::Batch::QuotaShare``, the
emulator (provisioning, DescribeQuotaShare, ListQuotaShares), ``quota org import`` and
``quota org diff``, and ``quota org validate``'s JSON and table.

AWS adding a member reaches this project through botocore's model (the emulator validates
every request against it, as boto3 does): a botocore ``sdk-extras`` file on ``AWS_DATA_PATH``
stands for the botocore release that has it. The copy runs in one subprocess, so the package
under test is never touched.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "quota_constructs"
BATCH_API_VERSION = "2016-08-10"

RECIPE: list[tuple[str, str, str]] = [
    # (file, the line the addition goes before, the addition): the recipe's steps, in order
    (
        "model/share.py",
        '    description: str = field(default="", metadata=_declares(ShareField("description")))\n',
        "    weight: int | None = field(\n"
        "        default=None,\n"
        "        metadata=_declares(\n"
        '            ShareField("weight", "weight", wire=True, drift=True, column="weight")\n'
        "        ),\n"
        "    )\n",
    ),
    (
        "config.py",
        '    description: str = Field(\n        default="",\n'
        '        description="Free text, e.g. why this strategy.",\n',
        '    weight: StrictInt | None = Field(default=None, description="A throw-away field.")\n',
    ),
    ("api_shapes.py", '    "state": STATE,\n}\n', '    "weight": "weight",\n'),
    (
        "constructs/quota_share.py",
        "    ) -> None:\n        super().__init__(scope, construct_id, physical_name=",
        "        weight: int | None = None,\n",
    ),
    (
        "constructs/quota_share.py",
        "        )\n        raise_construct_error(self, self.spec.problems(), "
        "renames=PROP_OF_FIELD)",
        "            weight=weight,\n",
    ),
]
"""Every edit the recipe asks of a new top-level wire field with a construct prop and a column."""

BOTOCORE_EXTRAS = {
    "version": 1.0,
    "merge": {
        "shapes": {
            shape: {"members": {"weight": {"shape": "Integer"}}}
            for shape in (
                "CreateQuotaShareRequest",
                "UpdateQuotaShareRequest",
                "DescribeQuotaShareResponse",
                "QuotaShareDetail",
            )
        }
    },
}
"""The member in botocore's Batch model, as a botocore release that has it would carry it."""

ORGANISATION = """\
organisation: weights
shares:
  - name: vision
    capacity: {ml.g5.xlarge: 2}
    strategy: LEND_AND_BORROW
    weight: 7
  - name: nlp
    capacity: {ml.g5.xlarge: 1}
    strategy: LEND
"""

OBSERVE = textwrap.dedent(
    """
    import json, re, sys
    from pathlib import Path

    import aws_cdk as cdk
    import yaml
    from aws_cdk.assertions import Template
    from typer.testing import CliRunner

    from quota_constructs.commands import app
    from quota_constructs.config import load_organisation
    from quota_constructs.local.testing import EmulatorServer
    from quota_constructs.stacks.organisation_stack import OrganisationStack

    path = Path(sys.argv[1])
    seen = {}
    org = load_organisation(path)
    seen["loaded"] = {s.name: s.weight for s in org.queue.shares}

    stack = OrganisationStack(cdk.App(), "Weights", organisation=org, monitoring=False)
    resources = Template.from_stack(stack).find_resources("AWS::Batch::QuotaShare")
    seen["stack"] = {
        r["Properties"]["QuotaShareName"]: r["Properties"].get("Weight")
        for r in resources.values()
    }

    def quota(*words, env):
        result = CliRunner().invoke(app, list(words), env={**env, "COLUMNS": "300"})
        return result.exit_code, result.stdout

    code, out = quota("org", "validate", "--json", str(path), env={})
    [shown] = json.loads(out)
    seen["validate_json"] = {s["quotaShareName"]: s.get("weight") for s in shown["quotaShares"]}
    code, out = quota("org", "validate", "--wide", str(path), env={})
    rows = [re.split("[\u2502\u2503]", line)[1:-1] for line in out.splitlines()]
    seen["validate_table"] = [[c.strip() for c in row] for row in rows if row]

    with EmulatorServer(org_files=[path], clock="virtual") as emu:
        batch = emu.client("batch")
        provisioned = emu.organisation("weights")
        arn = provisioned.quota_share_arns["vision"]
        seen["described"] = batch.describe_quota_share(quotaShareArn=arn).get("weight")
        listed = batch.list_quota_shares(jobQueue=provisioned.job_queue_arn)["quotaShares"]
        seen["listed"] = {s["quotaShareName"]: s.get("weight") for s in listed}
        queue = ["--queue", provisioned.job_queue_name]
        code, out = quota("org", "import", *queue, env=emu.env)
        seen["imported"] = {
            s["name"]: s.get("weight") for s in yaml.safe_load(out)["shares"]
        }
        seen["diff_same"] = quota("org", "diff", str(path), *queue, "--json", env=emu.env)[0]
        batch.update_quota_share(quotaShareArn=arn, weight=9)
        code, out = quota("org", "diff", str(path), *queue, "--json", env=emu.env)
        seen["diff_changed"] = [code, json.loads(out)["differences"]]
    print(json.dumps(seen))
    """
)


def follow_the_recipe(package: Path) -> None:
    for file, before, addition in RECIPE:
        path = package / file
        text = path.read_text(encoding="utf-8")
        assert text.count(before) == 1, (
            f"{file} no longer has the line the recipe's addition goes before: follow "
            "docs/architecture.md's recipe here and update it and this test together"
        )
        path.write_text(text.replace(before, addition + before), encoding="utf-8")


@pytest.mark.slow
def test_a_new_wire_field_reaches_the_stack_the_emulator_import_diff_and_the_output(
    tmp_path: Path,
) -> None:
    copy = tmp_path / "src" / "quota_constructs"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    follow_the_recipe(copy)
    extras = tmp_path / "botocore" / "batch" / BATCH_API_VERSION / "service-2.sdk-extras.json"
    extras.parent.mkdir(parents=True)
    extras.write_text(json.dumps(BOTOCORE_EXTRAS))
    org_file = tmp_path / "weights.yaml"
    org_file.write_text(ORGANISATION)
    env = {
        **os.environ,
        "PYTHONPATH": str(copy.parent),
        "AWS_DATA_PATH": str(tmp_path / "botocore"),
        "QUOTA_COMPILE": "0",
    }
    run = subprocess.run(
        [sys.executable, "-c", OBSERVE, str(org_file)],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-4000:]
    seen: dict[str, Any] = json.loads(run.stdout.splitlines()[-1])
    both = {"vision": 7, "nlp": None}
    assert seen["loaded"] == both
    assert seen["stack"] == both  # the resource's Weight property
    assert seen["validate_json"] == both
    header, vision, nlp = seen["validate_table"]
    assert (header[-1], vision[-1], nlp[-1]) == ("weight", "7", "-")
    assert seen["described"] == 7
    assert seen["listed"] == both
    assert seen["imported"] == both
    assert seen["diff_same"] == 0
    code, differences = seen["diff_changed"]
    assert code == 1
    assert differences == [{"quotaShareName": "vision", "field": "weight", "file": 7, "queue": 9}]

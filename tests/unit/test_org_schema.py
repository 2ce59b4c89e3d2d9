"""``quota org schema`` flags in an editor what ``quota org validate`` refuses (jsonschema)."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest

from quota_constructs.config import (
    OrgFileError,
    discover_org_files,
    json_schema,
    parse_organisation,
)
from quota_constructs.model import (
    MAX_CAPACITY_LIMITS_PER_SHARE,
    MAX_SHARES_PER_QUEUE,
    QUEUE_PRIORITY_RANGE,
    RUNNABLE_TIMEOUT_MINUTES_RANGE,
)
from quota_constructs.safe_load import load_yaml_document
from tests.helpers import ORGS_DIR

SCHEMA = json.loads(json_schema())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


def share(**fields: Any) -> dict[str, Any]:
    return {"name": "a", "capacity": {"ml.g5.xlarge": 1}, "strategy": "LEND", **fields}


def org(**fields: Any) -> dict[str, Any]:
    return {"organisation": "lab", "shares": [share()], **fields}


TYPES = ["ml.g5.xlarge", "ml.g5.2xlarge", "ml.g5.4xlarge", "ml.g5.8xlarge", "ml.p4d.24xlarge"]
INVALID = {
    "misspelt key": org(shares=[share(borow_limit=5)]),
    "share name pattern": org(shares=[share(name="has space")]),
    "organisation pattern": org(organisation="1lab"),
    "unknown strategy": org(shares=[share(strategy="SHARE")]),
    "unknown state": org(shares=[share(state="PAUSED")]),
    "count 0": org(shares=[share(capacity={"ml.g5.xlarge": 0})]),
    "unknown instance type": org(shares=[share(capacity={"ml.g5.xlargee": 1})]),
    "too many instance types": org(
        shares=[share(capacity={t: 1 for t in [*TYPES, "ml.g6.xlarge"]})]
    ),
    "no shares": org(shares=[]),
    "too many shares": org(shares=[share(name=f"s{i}") for i in range(MAX_SHARES_PER_QUEUE + 1)]),
    "borrow limit below -1": org(shares=[share(strategy="LEND_AND_BORROW", borrow_limit=-2)]),
    "queue priority": org(job_queue={"priority": QUEUE_PRIORITY_RANGE[1] + 1}),
    "runnable timeout": org(
        job_queue={"runnable_timeout_minutes": RUNNABLE_TIMEOUT_MINUTES_RANGE[0] - 1}
    ),
    "max priority": org(
        shares=[share(access={"principals": ["111122223333"], "max_priority": -1})]
    ),
}


@pytest.mark.parametrize("name", list(INVALID))
def test_schema_rejects_what_validate_rejects(name: str) -> None:
    document = INVALID[name]
    assert list(VALIDATOR.iter_errors(document)), f"the schema accepts: {name}"
    with pytest.raises(OrgFileError):
        parse_organisation(document)


@pytest.mark.parametrize("path", discover_org_files(ORGS_DIR), ids=lambda p: p.name)
def test_schema_accepts_every_shipped_organisation_file(path: Any) -> None:
    VALIDATOR.validate(load_yaml_document(path).data)


def test_schema_ranges_come_from_the_model() -> None:
    share_schema = SCHEMA["$defs"]["ShareConfig"]["properties"]
    assert share_schema["capacity"]["maxProperties"] == MAX_CAPACITY_LIMITS_PER_SHARE
    assert SCHEMA["properties"]["shares"]["maxItems"] == MAX_SHARES_PER_QUEUE
    queue = SCHEMA["$defs"]["JobQueueConfig"]["properties"]
    assert (queue["priority"]["minimum"], queue["priority"]["maximum"]) == QUEUE_PRIORITY_RANGE


def test_every_schema_property_has_a_description() -> None:
    models = [SCHEMA, *SCHEMA["$defs"].values()]
    missing = [
        f"{model.get('title')}.{name}"
        for model in models
        for name, prop in model.get("properties", {}).items()
        if not prop.get("description")
    ]
    assert missing == []

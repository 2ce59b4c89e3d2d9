"""docs/input-limits.md states the bounds the code enforces (tests/test_doc_snippets.py runs its
commands)."""

from __future__ import annotations

from pathlib import Path

import pytest

from quota_constructs import model, safe_load
from quota_constructs.advisor import limits
from quota_constructs.local.wire.input_bounds import DEFAULT_LIST_ITEMS, default_string_chars
from quota_constructs.local.wire.protocol import MAX_PROBLEMS_SHOWN
from quota_constructs.local.wire.server import ServerLimits

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "input-limits.md"


@pytest.mark.parametrize(
    "value",
    [
        f"{model.MAX_INSTANCES_PER_TYPE:,}",
        f"{model.MAX_BORROW_LIMIT:,}",
        f"{model.MAX_ORGANISATION_DESCRIPTION_CHARS} characters",
        f"{model.MAX_ORGANISATION_DESCRIPTION_BYTES} UTF-8 bytes",
        f"{model.MAX_SHARE_DESCRIPTION_CHARS:,} characters",
        f"at most {model.MAX_TAGS}",
        f"depth {safe_load.MAX_DEPTH}",
        f"{safe_load.MAX_YAML_VALUES:,} values",
        f"{safe_load.MAX_INTEGER_DIGITS} digits",
        f"| {safe_load.ORGANISATION_FILE_MAX_BYTES // 2**20} MiB",
        f"| {safe_load.WORKLOAD_FILE_MAX_BYTES // 2**20} MiB",
        f"| {safe_load.PAYLOAD_FILE_MAX_BYTES // 2**10} KiB",
        f"0 to {limits.MAX_SUBMIT_S:,.0f} s ({limits.MAX_CSV_DAYS:,} days)",
        f"at most {limits.MAX_STREAM_JOBS:,} jobs",
        f"{limits.MAX_STREAM_FILE_BYTES // 2**30} GiB",
        f"at most {limits.MAX_JOB_S:,.0f} s (28 days)",
        f"at most {limits.MAX_WORKLOAD_JOBS:,} jobs",
        f"at most {limits.MAX_JOB_MINUTES:,.0f} minutes",
        f"0 to {limits.MAX_WAIT_TARGET_MINUTES:,.0f} minutes",
        f"at most {limits.MAX_INTENSITY:,.0f}",
        f"{model.TRAINING_JOB_PREFIX_LENGTH}-character prefix",
        f"SageMaker allows {model.TRAINING_JOB_NAME_MAX}",
        f"{DEFAULT_LIST_ITEMS} entries per list or map",
        f"{default_string_chars():,} characters per string",
        f"within {ServerLimits().request_deadline} s of its connection's accept",
        f"{ServerLimits().connections_per_peer} from one address",
        f"a refusal lists at most {MAX_PROBLEMS_SHOWN} problems",
    ],
)
def test_the_doc_states_the_limits_the_code_enforces(value: str) -> None:
    assert value in DOC.read_text(encoding="utf-8")

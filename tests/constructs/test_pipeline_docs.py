"""Every command in a block marked as run by this file, in docs and README, run as written."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

from tests.helpers import run_one_job

ROOT = Path(__file__).resolve().parents[2]
MARK = "<!-- run by tests/constructs/test_pipeline_docs.py -->"
DOCS = (ROOT / "docs" / "pipeline.md", ROOT / "docs" / "notifications.md")
BLOCK = re.compile(re.escape(MARK) + r"\n```bash\n(.*?)```", re.S)
BIN = Path(sys.executable).parent


def commands() -> list[str]:
    blocks = [block for doc in DOCS for block in BLOCK.findall(doc.read_text())]
    return [line for block in blocks for line in block.splitlines() if line.strip()]


def environment() -> dict[str, str]:
    return {
        **os.environ,
        "PATH": f"{BIN}:{ROOT / 'node_modules' / '.bin'}:{os.environ['PATH']}",
        "CDK_DISABLE_CLI_TELEMETRY": "true",
        "PYTHONPATH": str(ROOT),
        "NO_COLOR": "1",
    }


def test_the_marked_blocks_hold_the_commands_below() -> None:
    assert commands() == [
        "node_modules/.bin/cdk synth --quiet -c pipeline_file=stacks/pipeline.example.yaml",
        "quota local serve --virtual --events-file events.jsonl",
    ]


def test_serve_with_an_events_file(tmp_path: Path) -> None:
    command = commands()[1]  # the synth command is run by tests/test_doc_snippets.py
    process = subprocess.Popen(
        [*shlex.split(command), "--port", "0"],  # a free port: the default, 8771, may be held
        cwd=tmp_path,
        env=environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    run_one_job(process)
    events = (tmp_path / "events.jsonl").read_text().splitlines()
    assert events and json.loads(events[0])["source"] == "aws.batch"

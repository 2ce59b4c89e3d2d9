"""Every shell command in README.md and docs/*.md runs as written, or is listed with the reason.

One mechanism for every doc: each ```` ```bash ````, ```` ```sh ```` or ```` ```console ```` block
runs as one bash script, its commands in order and unchanged, in a scratch directory holding a
copy of ``stacks/`` and ``docs/`` (so ``--output stacks/orgs/...`` cannot touch the checkout),
with ``.venv`` and ``node_modules`` linked, ``job.json`` (docs/examples/job.json) and only the
venv's ``bin`` and the system's on ``PATH``: no AWS credentials, region or endpoint. A console
block's output lines must appear in what its command printed (``<placeholder>`` matches one
word). Exit codes are 0 unless ``EXIT_CODES`` says otherwise.

``quota local serve`` (which runs until Ctrl-C) is started in the background and the script
goes on once it prints ``Ctrl-C stops it.``; it is stopped when the block ends. The docs show the
default port, 8771; each block runs on a free port instead (``--port N`` added to its ``quota
local serve``, ``N`` for 8771 in its endpoints and shown output), so a process holding 8771 (a
developer's own emulator, another test worker) does not break it. Blocks in
``EMULATOR_BLOCKS`` run with an emulator on a free port and its variables exported, started as
their docs say ("with the emulator's variables exported"; by default seed-demo and research on
a wall clock at speed 100; ``quota local serve --virtual --seed 1`` where a doc says so), with
queue, environment and policy names generated as CloudFormation would (``--names generated``):
an example that hard-codes the emulator's fixed names (``seed-demo-queue``) fails here, as it
would against a deployed stack, so examples find them through SSM or ``quota -o``.
Commands in ``NOT_RUN`` are not run; each says why. Every fence in the docs has a language, so
no shell block can hide from this test. Inline ``quota ...`` spans in tables and prose are not
run, but each is parsed against the command tree: every command and option it names exists.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import pytest
import yaml

from quota_constructs.advisor.profiles import parse_schedule, parse_teams
from quota_constructs.config import parse_organisation
from quota_constructs.local.testing import EmulatorServer
from tests.helpers import ORGS_DIR, Command, parse_commands, shown

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SHELL_LANGUAGES = {"bash", "sh", "console"}
FENCE = re.compile(r"^```([^\n]*)\n(.*?)^```", re.S | re.M)
PORT = 8771
"""The default port the docs show (``quota local serve``); the blocks run on a free one."""
SERVE = "quota local serve"
SERVE_READY = "Ctrl-C stops it."

NOT_RUN: dict[str, str] = {
    "make main": "installs .venv and node_modules from PyPI and npm (network); its parts, "
    "`cdk synth` and `quota demo`, run here",
    "make test": "is the test suite itself (CI runs it through .ci/run)",
    "make synth": "installs from PyPI and npm first (network); `cdk synth` runs here",
    "cdk deploy": "deploys to an AWS account",
    "quota org import --queue research-queue": "needs a queue with a job history: "
    "tests/runtime/test_adopt_docs.py runs it as written on an emulator that ran a day of jobs",
    "quota org diff research.yaml": "tests/runtime/test_adopt_docs.py runs it as written, "
    "before and after a borrow limit is changed behind the file's back",
    "quota simulate --from-queue research": "tests/runtime/test_adopt_docs.py runs it as written "
    "on an emulator that ran a day of jobs",
    "python3 -m venv .venv": "would rebuild the venv these tests link as .venv; "
    "tests/packaging/test_installed.py installs into a fresh venv outside the checkout instead",
    "pip install quota-constructs": "downloads from PyPI (network): tests/packaging/"
    "test_installed.py installs the wheel `python -m build` made, with no index",
    "pip install -r requirements.txt": "downloads from PyPI (network): tests/packaging/"
    "test_installed.py runs it with no index against the wheel `python -m build` made",
    "pip install 'quota-constructs[compiled]'": "downloads mypy from PyPI (network); "
    "`make setup` installs it from the lock and runs `quota build-core`",
    ".venv/bin/python tools/forecast_backtest.py": "the forecast's calibration backtest: minutes "
    "of CPU; tests/forecast/test_engine.py runs the backtest on a small workload",
    ".venv/bin/python tools/forecast_backtest_http.py": "the forecast's backtest over the "
    "emulator's HTTP: minutes of CPU; tests/runtime/test_forecast_backtest_http.py runs it on a "
    "day of the research workload",
    ".venv/bin/python tools/default_calibration.py": "refits the packaged default calibration: "
    "about 21 CPU-minutes; tests/forecast/test_calibration.py checks the packaged file it writes",
    "quota forecast calibrate stacks/orgs/research.yaml --teams": "backtests 48 generated weeks: "
    "about 11 CPU-minutes; tests/forecast/test_calibration.py runs the command on short workloads",
    ".venv/bin/quota recommend stacks/teams/ml-platform.yaml --output ml-platform.yaml": "writes "
    "the organisation the forecast's backtest that follows it reads (not run either: minutes)",
    ".venv/bin/python benchmarks/": "a benchmark: minutes of CPU, run by `make bench`, figures "
    "in the docs",
}
"""Commands (by prefix) not run, with the reason."""

EXIT_CODES: dict[str, int] = {
    "quota org validate docs/examples/bad-org.yaml": 2,
    "quota org validate docs/examples/hostile-org.yaml": 2,
    "quota recommend stacks/teams/ml-platform.yaml --optimize": 1,
    # issue 39: over 20 weeks two research targets are missed by every allowed configuration
    "quota recommend stacks/teams/research.yaml --optimize": 1,
    "quota recommend stacks/teams/ml-platform.yaml --simulate": 1,
    "quota recommend stacks/teams/research.yaml --simulate": 1,
    "quota recommend stacks/teams/ml-platform.yaml --prices docs/examples/prices.yaml --reserve": 1,
    "quota jobs -o research submit fine-tune-4": 2,
    "quota jobs -o research --as-team vision ls": 2,
    "quota jobs -o seed-demo describe no-such-job": 3,
    # docs/constructs.md, "Changing a live organisation": a rename is destructive
    "quota org plan docs/examples/seed-demo-renamed.yaml": 1,
}
"""Commands (by prefix) documented to fail, with their exit code (README, "Exit codes")."""


@dataclass(frozen=True)
class Emulated:
    """How a block's doc says its emulator was started."""

    orgs: tuple[str, ...] = ("seed-demo", "research")
    clock: Literal["virtual", "wall"] = "wall"
    seed: int | None = None
    naming: Literal["fixed", "generated"] = "generated"

    def server(self, port: int) -> EmulatorServer:
        files = [ORGS_DIR / f"{name}.yaml" for name in self.orgs]
        speed = 100 if self.clock == "wall" else 1
        return EmulatorServer(
            files, clock=self.clock, speed=speed, seed=self.seed, port=port, naming=self.naming
        )


VIRTUAL_SEED_DEMO = Emulated(orgs=("seed-demo",), clock="virtual")
EMULATOR_BLOCKS: dict[str, Emulated] = {
    "JOB_ID=$(quota jobs -o seed-demo submit train-1": Emulated(),
    "QUEUE=$(aws ssm get-parameter --name /quota/seed-demo/job-queue/arn": Emulated(),
    "ROLE=$(aws ssm get-parameter --name /quota/research/": Emulated(),
    "quota jobs -o research --as-team generative submit fine-tune-2": Emulated(),
    # README, "Watching the queue": the tutorial on `quota local serve --virtual`.
    "quota jobs -o seed-demo submit qs1-p3": VIRTUAL_SEED_DEMO,
    # docs/emulator.md, "Driving it from the command line": `quota local serve --virtual --seed 1`.
    "quota jobs -o seed-demo submit qs3-first": Emulated(
        orgs=("seed-demo",), clock="virtual", seed=1
    ),
    # docs/constructs.md, "Rehearsing it": seed-demo served, a rename planned and applied.
    "quota org plan docs/examples/seed-demo-renamed.yaml -o seed-demo": Emulated(
        orgs=("seed-demo",)
    ),
}
"""Blocks (by their first command) that run against an emulator (on a free port), and how."""

EXACT_OUTPUT = ("quota org validate docs/examples/hostile-org.yaml",)
"""Console commands (by prefix) whose shown output is all they print, line for line."""


def _advisor_files(scratch: Path) -> None:
    """docs/advisor.md's commands wrote the committed organisation file and figures."""
    written = (scratch / "stacks" / "orgs" / "research.yaml").read_text()
    assert written == (ORGS_DIR / "research.yaml").read_text()
    assert (scratch / "optimised.yaml").read_text().startswith("# Generated by `quota recommend")
    for figure in ("ml-platform-compare.png", "ml-platform-week.png"):
        assert (scratch / figure).read_bytes().startswith(b"\x89PNG")


def _pipeline_synthesized(scratch: Path) -> None:
    """docs/pipeline.md's synth with the example pipeline file made the pipeline stack."""
    manifest = json.loads((scratch / "cdk.out" / "manifest.json").read_text())
    assert "Quota-Pipeline" in manifest["artifacts"]


AFTER: dict[str, Callable[[Path], None]] = {
    "node_modules/.bin/cdk synth --quiet -c pipeline_file=": _pipeline_synthesized,
    "quota recommend stacks/teams/research.yaml --output stacks/orgs/research.yaml   # rules": (
        _advisor_files
    ),
}
"""Checks of what a block (by its first command) left in its scratch directory."""


@dataclass(frozen=True)
class Block:
    """A shell block of a doc."""

    doc: str
    line: int
    language: str
    commands: tuple[Command, ...]

    @property
    def id(self) -> str:
        return f"{self.doc}:{self.line}"

    @property
    def emulator(self) -> Emulated | None:
        """How to start this block's emulator, or None when it needs none."""
        first = self.commands[0].text
        return next((e for key, e in EMULATOR_BLOCKS.items() if first.startswith(key)), None)


def doc_blocks() -> list[Block]:
    """Every shell block of README.md and docs/*.md, in order."""
    found = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            language = match.group(1).strip()
            if language in SHELL_LANGUAGES:
                line = text.count("\n", 0, match.start()) + 1
                name = str(doc.relative_to(ROOT))
                found.append(Block(name, line, language, parse_commands(language, match.group(2))))
    return found


BLOCKS = doc_blocks()
RUN = [b for b in BLOCKS if any(c.listed_in(NOT_RUN) is None for c in b.commands)]


def without_comment(command: str) -> str:
    """``command`` without a trailing ``# comment`` (for the serve lines, which hold no ``#``)."""
    return re.sub(r"\s+#[^'\"]*$", "", command)


DEFAULT_PORT = re.compile(rf"(127\.0\.0\.1:|localhost:){PORT}\b")
"""The docs' default port in an endpoint (``http://127.0.0.1:8771``, ``localhost:8771``)."""


def on_port(text: str, port: int) -> str:
    """``text`` (a command or a shown output line) with ``port`` for the docs' default port."""
    return DEFAULT_PORT.sub(rf"\g<1>{port}", text)


def free_port() -> int:
    """A loopback port no process listens on now (the kernel's pick for port 0)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def script(block: Block, port: int = PORT) -> str:
    """The block as one bash script: each command as written (on ``port``: ``on_port``, and
    ``--port`` added to ``quota local serve``), then a marker with its exit code."""
    parts = ["exec 2>&1"]
    for index, command in enumerate(block.commands):
        if command.listed_in(NOT_RUN) is not None:
            continue
        parts.append(f"echo '@@command {index}'")
        if command.text.startswith(SERVE):
            serve = on_port(without_comment(command.text).rstrip(" &"), port)
            if port != PORT and "--port" not in serve.split():
                serve += f" --port {port}"
            parts += [
                f"{serve} > .serve{index}.log 2>&1 &",
                "for _ in $(seq 600); do",
                f"  grep -q '{SERVE_READY}' .serve{index}.log && break",
                "  kill -0 $! 2>/dev/null || break; sleep 0.1",
                "done",
                f"cat .serve{index}.log; grep -q '{SERVE_READY}' .serve{index}.log",
            ]
        else:
            parts.append(on_port(command.text, port))
        parts.append('echo "@@exit $?"')
    parts.append("kill $(jobs -p) 2>/dev/null; wait")
    return "\n".join(parts) + "\n"


def results(output: str) -> dict[int, tuple[int, str]]:
    """``{command index: (exit code, output)}`` from the script's markers."""
    found = {}
    pattern = r"^@@command (\d+)\n(.*?)^@@exit (\d+)$"
    for match in re.finditer(pattern, output, re.S | re.M):
        found[int(match.group(1))] = (int(match.group(3)), match.group(2))
    return found


def scratch_dir(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "stacks", tmp_path / "stacks")
    shutil.copytree(ROOT / "docs", tmp_path / "docs")
    for name in ("app.py", "cdk.json", "package.json"):
        shutil.copy(ROOT / name, tmp_path / name)
    (tmp_path / "node_modules").symlink_to((ROOT / "node_modules").resolve())
    (tmp_path / ".venv").symlink_to(Path(sys.prefix))
    shutil.copy(ROOT / "docs" / "examples" / "job.json", tmp_path / "job.json")
    return tmp_path


def environment(tmp_path: Path) -> dict[str, str]:
    """A clean environment: the venv's bin and the system's on PATH, nothing of AWS."""
    keep = {"LANG", "LC_ALL", "TERM", "TMPDIR"}
    env = {k: v for k, v in os.environ.items() if k in keep}
    return {
        **env,
        "PATH": f"{Path(sys.executable).parent}:{NODE_BIN}:/usr/local/bin:/usr/bin:/bin",
        "HOME": str(tmp_path),
        "PYTHONPATH": str(ROOT),  # the code under test
        "AWS_CONFIG_FILE": os.devnull,
        "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
        "COLUMNS": "120",
        "NO_COLOR": "1",
        "CDK_DISABLE_CLI_TELEMETRY": "true",
    }


NODE_BIN = ROOT / "node_modules" / ".bin"
"""The pinned CDK CLI and Node LTS (package.json)."""


@dataclass(frozen=True)
class Ran:
    """What a block's commands did: ``{command index: (exit code, output)}``, and the port its
    emulator listened on (where the docs show 8771)."""

    commands: dict[int, tuple[int, str]]
    port: int


def run_block(block: Block, tmp_path: Path) -> Ran:
    """Run ``block`` in a scratch copy under ``tmp_path``, its emulator on a free port."""
    scratch = scratch_dir(tmp_path)
    env = environment(tmp_path)
    if block.emulator is not None:
        server = block.emulator.server(port=0).start()  # the kernel's pick: no race for it
        env |= server.env
        port = int(server.endpoint_url.rsplit(":", 1)[1])
    else:
        server = None
        port = free_port()  # for the block's own `quota local serve`
    try:
        done = subprocess.run(
            ["bash", "-c", script(block, port)],
            cwd=scratch,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
    finally:
        if server is not None:
            server.stop()
    return Ran(results(done.stdout), port)


@pytest.mark.slow  # each block a bash script, many a CDK synth or an emulator: `make test`
@pytest.mark.parametrize("block", RUN, ids=lambda b: b.id)
def test_doc_block_runs_as_written(block: Block, tmp_path: Path) -> None:
    assert_ran_as_documented(block, run_block(block, tmp_path))
    for first, check in AFTER.items():
        if block.commands[0].text.startswith(first):
            check(tmp_path)


def assert_ran_as_documented(block: Block, ran: Ran) -> None:
    """Each command run exited as documented and printed the output its block shows."""
    for index, command in enumerate(block.commands):
        if command.listed_in(NOT_RUN) is not None:
            continue
        assert index in ran.commands, f"{block.id}: `{command.text}` did not finish"
        code, output = ran.commands[index]
        key = command.listed_in(EXIT_CODES)
        expected = EXIT_CODES[key] if key is not None else 0
        assert code == expected, f"{block.id}: `{command.text}` exited {code}:\n{output}"
        if command.listed_in(dict.fromkeys(EXACT_OUTPUT, 0)) is not None:
            printed = [line.strip() for line in output.strip().splitlines()]
            assert printed == [on_port(s, ran.port) for s in command.shown], f"{block.id}: {output}"
        flat = " ".join(output.split())
        for line in (on_port(s, ran.port) for s in command.shown):
            assert shown(line).search(flat), f"{block.id}: `{command.text}` lacks {line!r}"


HELD_PORT_BLOCKS = {
    "docs/emulator.md, Quick start": "quota local serve                       # seed-demo",
    "docs/emulator.md, the AWS CLI": "QUEUE=$(aws ssm get-parameter --name /quota/seed-demo/",
}
"""Blocks (by their first command) run with 8771 held: one starts its own ``quota local serve``
and shows its endpoint, one runs on a test emulator and names ``--endpoint-url`` with 8771."""


def test_every_documented_default_port_is_replaced_in_the_scripts() -> None:
    serving = [b for b in RUN if any(c.text.startswith(SERVE) for c in b.commands)]
    mentioned = [b for b in RUN if str(PORT) in script(b)]
    assert len(serving) >= 4 and len(mentioned) >= 3, "a serve, an endpoint in a command"
    for block in serving + mentioned:
        ran_on = script(block, 5000)
        assert str(PORT) not in ran_on, block.id
        if any(c.text.startswith(SERVE) for c in block.commands):
            assert "--port 5000" in ran_on, block.id


@pytest.mark.slow  # two blocks, each with an emulator
@pytest.mark.parametrize("first", HELD_PORT_BLOCKS.values(), ids=list(HELD_PORT_BLOCKS))
def test_a_process_holding_the_default_port_does_not_break_the_blocks(
    first: str, tmp_path: Path
) -> None:
    [block] = [b for b in RUN if b.commands[0].text.startswith(first)]
    with contextlib.ExitStack() as stack:
        holder = stack.enter_context(socket.socket())
        with contextlib.suppress(OSError):  # already held by another process: as good
            holder.bind(("127.0.0.1", PORT))
            holder.listen()
        ran = run_block(block, tmp_path)
    assert ran.port != PORT
    assert_ran_as_documented(block, ran)


def test_every_fence_in_the_docs_names_its_language() -> None:
    bare = [
        f"{doc.relative_to(ROOT)}:{doc.read_text().count(chr(10), 0, m.start()) + 1}"
        for doc in DOCS
        for m in FENCE.finditer(doc.read_text(encoding="utf-8"))
        if not m.group(1).strip()
    ]
    assert bare == []


def test_every_listed_command_is_still_in_the_docs() -> None:
    commands = [c for block in BLOCKS for c in block.commands]
    for table in (NOT_RUN, EXIT_CODES):
        for key in table:
            assert any(c.text.startswith(key) for c in commands), f"stale entry: {key}"
    firsts = [block.commands[0].text for block in BLOCKS]
    for first in (*EMULATOR_BLOCKS, *AFTER):
        assert any(text.startswith(first) for text in firsts), f"stale entry: {first}"


def test_the_docs_have_shell_blocks_to_run() -> None:
    assert len(RUN) >= 12
    assert sum(len(b.commands) for b in RUN) >= 40


def yaml_blocks(doc: Path) -> list[str]:
    text = doc.read_text(encoding="utf-8")
    return [m.group(2) for m in FENCE.finditer(text) if m.group(1).strip() in {"yaml", "yml"}]


def test_the_organisation_file_example_is_a_valid_file() -> None:
    [example] = yaml_blocks(ROOT / "docs" / "organisation-files.md")
    assert parse_organisation(yaml.safe_load(example)).name


def test_the_advisor_team_profile_example_is_a_valid_file() -> None:
    [example] = yaml_blocks(ROOT / "docs" / "advisor.md")
    assert parse_teams(yaml.safe_load(example)).teams


def test_every_schedule_form_the_advisor_doc_lists_parses() -> None:
    [example] = yaml_blocks(ROOT / "docs" / "advisor.md")
    [comment] = [line.split("#", 1)[1] for line in example.splitlines() if "schedule:" in line]
    forms = [re.sub(r"^a cron line, e\.g\. ", "", f.strip()).strip("'") for f in comment.split("|")]
    assert len(forms) == 5
    for form in forms:
        parse_schedule(form)


# --- inline `quota ...` commands in tables and prose ------------------------------------------

INLINE_QUOTA = re.compile(r"`(quota [^`\n]+)`")
"""An inline code span that is a ``quota`` command line."""
INLINE_NOT_COMMANDS = {
    "quota share <share> of organisation": "an error message quoted in docs/runtime.md",
}
"""Inline spans (by prefix) that start with ``quota`` but are not command lines, and why."""


def _placeholder(word: str) -> bool:
    """``submit/ls/describe``, ``JOB_ID``, ``...``, ``<name>``: a doc's shorthand, not a word."""
    return "/" in word or "..." in word or word.isupper() or word.startswith(("<", "[", "$"))


def _option_names(command: object) -> dict[str, bool]:
    """Each option name of ``command`` -> whether it is a flag (takes no value)."""
    names: dict[str, bool] = {"--help": True}
    for param in command.params:  # type: ignore[attr-defined]
        if param.param_type_name == "option":
            for name in (*param.opts, *param.secondary_opts):
                names[name] = bool(getattr(param, "is_flag", False))
    return names


def inline_command_problem(root: object, line: str) -> str | None:
    """What in an inline ``quota`` command does not exist (a command or an option), or ``None``."""
    words = line.split()[1:]
    command = root
    index = 0
    while index < len(words):
        word = words[index]
        options = _option_names(command)
        if word.startswith("-") and word != "-":
            names = word.split("=", 1)[0].split("/")  # `--simulate/--optimize`: each of them
            unknown = [name for name in names if name not in options]
            if unknown:
                known = ", ".join(sorted(options))
                return f"{unknown[0]} is not an option of `{command.name}`; it has {known}"  # type: ignore[attr-defined]
            index += 1 if options[names[-1]] or "=" in word else 2
            continue
        subcommands = getattr(command, "commands", None)
        if subcommands is not None:
            if word in subcommands:
                command = subcommands[word]
            elif not _placeholder(word):
                return f"`{word}` is not a command of `{command.name}`"  # type: ignore[attr-defined]
            else:
                return None  # `submit/ls/...`: several commands at once
        index += 1
    return None


def inline_commands() -> list[tuple[str, str]]:
    """Every inline ``quota ...`` span outside code blocks: (doc, command line)."""
    found = []
    for doc in DOCS:
        prose = FENCE.sub("", doc.read_text())
        found += [
            (doc.name, match[1])
            for match in INLINE_QUOTA.finditer(prose)
            if not match[1].startswith(tuple(INLINE_NOT_COMMANDS))
        ]
    return found


def test_inline_quota_commands_name_real_commands_and_options() -> None:
    import typer.main

    from quota_constructs.commands import app

    root = typer.main.get_command(app)
    spans = inline_commands()
    assert len(spans) > 50, "the docs' inline commands were found"
    problems = [
        f"{doc}: `{line}`: {problem}"
        for doc, line in spans
        if (problem := inline_command_problem(root, line)) is not None
    ]
    assert not problems, "\n".join(problems)


def test_the_inline_check_finds_a_wrong_option_and_command() -> None:
    import typer.main

    from quota_constructs.commands import app

    root = typer.main.get_command(app)
    assert "-o is not an option of `recommend`" in str(
        inline_command_problem(root, "quota recommend teams.yaml -o ORG.yaml")
    )
    assert "`lst` is not a command" in str(inline_command_problem(root, "quota jobs lst"))
    assert inline_command_problem(root, "quota jobs -o seed-demo ls --share QS1 --wide") is None


def test_every_relative_link_of_the_readme_names_a_file_that_exists() -> None:
    """The site's build checks every link of docs/ (`make docs`, strict); the README is not a
    page of it, so its links are checked here."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
    local = [t for t in targets if not re.match(r"[a-z]+:", t)]
    assert local and [t for t in local if not (ROOT / t).exists()] == []


def test_the_readme_stays_short() -> None:
    """What it is, install and use, the contributor quick start, what is where, where to go
    next: at most 12 KB; everything else is a page of the docs site."""
    assert len((ROOT / "README.md").read_bytes()) <= 12 * 1024

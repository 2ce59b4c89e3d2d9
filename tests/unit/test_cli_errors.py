"""One error path for every ``quota`` command: each kind of bad input is one line on stderr
(no traceback, no box) with the fix, and the documented exit code (README, "Exit codes")."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest
import typer.main
from typer.testing import CliRunner, Result

from quota_constructs.commands import app
from quota_constructs.commands._common import ExitCode, failure_of

SAMPLE_ARGUMENTS = {
    "files": "stacks/orgs/seed-demo.yaml",
    "org_file": "stacks/orgs/seed-demo.yaml",
    "teams_file": "stacks/teams/research.yaml",
    "seconds": "1",
}
"""A valid value for each argument name (any other argument gets ``some-job``)."""
UNREACHABLE = "http://127.0.0.1:9"
"""Nothing listens on the discard port (the tests run without a network)."""
NO_CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": None,
    "AWS_SECRET_ACCESS_KEY": None,
    "AWS_SESSION_TOKEN": None,
    "AWS_PROFILE": None,
    "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent",
    "AWS_CONFIG_FILE": "/nonexistent",
    "AWS_EC2_METADATA_DISABLED": "true",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI": None,
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": None,
    "AWS_ENDPOINT_URL_BATCH": None,
}


@dataclass(frozen=True)
class Leaf:
    """One command: its words, the arguments it needs, and after which word its endpoint and
    region options go (``None``: it has none)."""

    words: tuple[str, ...]
    arguments: tuple[str, ...]
    options_after: int | None

    def line(self, *options: str) -> list[str]:
        """The command line with ``options`` where they belong, then the sample arguments."""
        assert self.options_after is not None
        at = self.options_after
        return [*self.words[:at], *options, *self.words[at:], *self.arguments]

    def __str__(self) -> str:
        return " ".join(self.words)


def leaves() -> Iterator[Leaf]:
    def walk(command: object, words: tuple[str, ...], owner: int | None) -> Iterator[Leaf]:
        has_endpoint = any(p.name == "endpoint_url" for p in command.params)  # type: ignore[attr-defined]
        here = len(words) if has_endpoint else owner
        sub = getattr(command, "commands", None)
        if sub:
            for name, child in sub.items():
                yield from walk(child, (*words, name), here)
            return
        arguments = tuple(
            SAMPLE_ARGUMENTS.get(p.name, "some-job")
            for p in command.params  # type: ignore[attr-defined]
            if p.param_type_name == "argument" and p.required
        )
        yield Leaf(words, arguments, here)

    yield from walk(typer.main.get_command(app), (), None)


LEAVES = list(leaves())
NETWORKED = [leaf for leaf in LEAVES if leaf.options_after is not None]
WITH_ARGUMENTS = [leaf for leaf in LEAVES if leaf.arguments]


def run(args: list[str], env: dict[str, str | None] | None = None) -> Result:
    return CliRunner().invoke(app, args, env={"COLUMNS": "80", **(env or {})})


def assert_one_line(result: Result, code: int, *expected: str) -> str:
    err = result.stderr
    assert result.exit_code == code, (result.exit_code, err, result.stdout)
    assert err.count("\n") == 1 and err.startswith("error: "), err
    assert "Traceback" not in err + result.stdout and "╭" not in err + result.stdout
    assert all(text in err for text in expected), err
    return err


def test_every_command_is_covered() -> None:
    assert len(LEAVES) >= 18 and len(NETWORKED) >= 12 and len(WITH_ARGUMENTS) >= 7


@pytest.mark.parametrize("leaf", LEAVES, ids=str)
def test_an_unknown_option_is_one_line(leaf: Leaf) -> None:
    result = run([*leaf.words, "--no-such-option"])
    assert_one_line(result, 2, "No such option: --no-such-option", f"{leaf} --help")


def test_a_misspelt_option_suggests_the_right_one() -> None:
    assert_one_line(run(["jobs", "ls", "--shar", "QS1"]), 2, "--share", "quota jobs ls --help")


@pytest.mark.parametrize("leaf", WITH_ARGUMENTS, ids=str)
def test_a_missing_argument_is_one_line(leaf: Leaf) -> None:
    assert_one_line(run(list(leaf.words)), 2, "Missing argument")


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["jobs", "update", "x", "--priority", "high"], "--priority"),
        (["local", "advance", "soon"], "'seconds'"),
        (["status", "--interval", "often"], "--interval"),
        (["jobs", "ls", "--status", "DONE"], "--status"),
    ],
)
def test_a_bad_value_is_one_line_naming_the_option(args: list[str], named: str) -> None:
    assert_one_line(run(args), 2, "Invalid value", named)


@pytest.mark.parametrize("leaf", NETWORKED, ids=str)
@pytest.mark.parametrize(
    ("endpoint", "says"),
    [
        ("127.0.0.1:18137", "write it in full, e.g. http://127.0.0.1:18137"),
        ("http://127.0.0.1:18137x", "has no valid port"),
    ],
)
def test_a_malformed_endpoint_is_one_line(leaf: Leaf, endpoint: str, says: str) -> None:
    assert_one_line(run(leaf.line("--endpoint-url", endpoint)), 2, "--endpoint-url", says)


def test_a_malformed_endpoint_from_the_environment_is_named_too() -> None:
    result = run(["jobs", "-q", "q", "ls"], env={"AWS_ENDPOINT_URL_BATCH": "localhost:8771"})
    assert_one_line(result, 2, "AWS_ENDPOINT_URL_BATCH", "http://localhost:8771")


@pytest.mark.parametrize("leaf", [leaf for leaf in NETWORKED if leaf.words[0] != "local"], ids=str)
def test_a_malformed_region_is_one_line(leaf: Leaf) -> None:
    result = run(leaf.line("--region", "us east"))
    assert_one_line(result, 2, "--region", "'us east' is not an AWS region name", "us-east-1")


@pytest.mark.parametrize(
    "args",
    [
        ["status", "-q", "q", "--endpoint-url", UNREACHABLE],
        ["jobs", "-q", "q", "--endpoint-url", UNREACHABLE, "ls"],
        ["jobs", "-q", "q", "--endpoint-url", UNREACHABLE, "describe", "some-job"],
        ["jobs", "-o", "seed-demo", "--endpoint-url", UNREACHABLE, "snapshot"],
        ["org", "diff", "stacks/orgs/seed-demo.yaml", "--endpoint-url", UNREACHABLE],
        ["local", "advance", "1", "--endpoint-url", UNREACHABLE],
        ["local", "why", "some-job", "--endpoint-url", UNREACHABLE],
    ],
    ids=lambda args: " ".join(a for a in args if not a.startswith("http")),
)
def test_an_unreachable_host_is_one_line_exit_1(args: list[str]) -> None:
    env = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}
    result = run(args, env={**env, "AWS_DEFAULT_REGION": "us-east-1", "AWS_MAX_ATTEMPTS": "1"})
    assert_one_line(result, 1, "127.0.0.1:9")


@pytest.mark.parametrize(
    "args",
    [
        ["status", "-q", "q", "--endpoint-url", UNREACHABLE, "--region", "us-east-1"],
        ["jobs", "-q", "q", "--endpoint-url", UNREACHABLE, "--region", "us-east-1", "ls"],
    ],
    ids=lambda args: args[0],
)
def test_missing_credentials_are_one_line_exit_2(args: list[str]) -> None:
    assert_one_line(run(args, env=NO_CREDENTIALS), 2, "credentials")


def test_a_missing_region_is_one_line_exit_2() -> None:
    env = {**NO_CREDENTIALS, "AWS_DEFAULT_REGION": None, "AWS_REGION": None}
    assert_one_line(run(["status", "-q", "q"], env=env), 2, "--region")


def test_a_bug_is_its_traceback_and_exit_70_never_bad_input(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import quota_constructs.commands.org as org

    def broken(*_: object, **__: object) -> None:
        raise KeyError("shares")

    monkeypatch.setattr(org, "load_organisation", broken)
    result = CliRunner().invoke(app, ["org", "validate", "stacks/orgs/seed-demo.yaml"])
    assert result.exit_code == 70
    assert "Traceback (most recent call last)" in result.stderr
    assert result.stderr.rstrip().endswith(
        "error: internal error: KeyError: 'shares'; this is a bug in quota-constructs, not in "
        "your input: please report it with the traceback above"
    )


def test_only_the_projects_errors_and_named_files_are_bad_input() -> None:
    missing = failure_of(FileNotFoundError(2, "No such file or directory", "out/x.yaml"))
    assert missing is not None and missing.code == ExitCode.USAGE
    assert missing.lines == (
        "out/x.yaml: no such file or directory; fix: check the path and its permissions",
    )
    assert failure_of(ValueError("a bug")) is None
    assert failure_of(KeyError("shares")) is None
    assert failure_of(OSError("no file named")) is None

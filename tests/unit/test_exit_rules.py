"""``retryStrategy.evaluateOnExit`` as the model reads it: AWS's glob and the first match."""

from __future__ import annotations

import pytest

from quota_constructs.model import (
    ExitRule,
    RetryAction,
    check_exit_rules,
    exit_action,
    status_reason_matches,
)

ISE = "Received status from SageMaker:InternalServerError: We encountered an internal error."


@pytest.mark.parametrize(
    ("pattern", "reason", "matches"),
    [
        (ISE, ISE, True),
        (ISE, ISE + " Please try again.", False),  # without '*' the whole reason must match
        ("Received status from SageMaker:Internal*", ISE, True),
        ("received status from sagemaker:*", ISE, False),  # case counts
        ("*", ISE, True),
        ("*", "", True),
        ("Received status from SageMaker:*Error*", ISE, False),  # only a final '*' is a wildcard
        ("Received*Error: We encountered an internal error.", ISE, False),
    ],
)
def test_status_reason_glob(pattern: str, reason: str, matches: bool) -> None:
    assert status_reason_matches(pattern, reason) is matches


def test_first_matching_rule_decides() -> None:
    rules = [
        ExitRule(RetryAction.RETRY, "Received status from SageMaker:InternalServerError*"),
        ExitRule(RetryAction.EXIT, "*"),
    ]

    assert exit_action(rules, ISE) is RetryAction.RETRY
    assert (
        exit_action(rules, "Received status from SageMaker:AlgorithmError: x") is RetryAction.EXIT
    )


def test_no_matching_rule_retries() -> None:
    assert exit_action([ExitRule(RetryAction.EXIT, "timeout")], ISE) is RetryAction.RETRY
    assert exit_action([], ISE) is RetryAction.RETRY


def test_rejects_a_pattern_over_512_characters() -> None:
    (problem,) = check_exit_rules([ExitRule(RetryAction.EXIT, "a" * 513)])

    assert problem.path == "retryStrategy.evaluateOnExit[0].onStatusReason"
    assert "at most 512 characters" in problem.message


def test_rejects_a_pattern_with_a_control_character() -> None:
    (problem,) = check_exit_rules(
        [ExitRule(RetryAction.EXIT, "ok"), ExitRule(RetryAction.EXIT, "a\tb")]
    )

    assert problem.path == "retryStrategy.evaluateOnExit[1].onStatusReason"


def test_accepts_512_printable_characters() -> None:
    assert check_exit_rules([ExitRule(RetryAction.RETRY, "é" * 511 + "*")]) == []

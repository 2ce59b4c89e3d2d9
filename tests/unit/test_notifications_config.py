"""Organisation files' ``notifications:`` keys: shape, endpoints, bounds, one error per problem."""

from __future__ import annotations

from pathlib import Path

import pytest

from quota_constructs.config import OrganisationFile, OrgFileError, load_organisation
from quota_constructs.model import MAX_ENDPOINT_LENGTH, MAX_SUBSCRIPTIONS, Subscribers

HEAD = "organisation: n\n"
SHARE = "shares:\n  - {name: A, capacity: {ml.g5.xlarge: 1}, strategy: LEND}\n"


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "org.yaml"
    path.write_text(text)
    return path


def test_reads_organisation_and_share_subscribers(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        HEAD
        + "notifications:\n  email: [ml@example.com]\n"
        + "  sqs: ['arn:aws:sqs:eu-west-1:111122223333:events']\n"
        + "shares:\n  - name: A\n    capacity: {ml.g5.xlarge: 1}\n    strategy: LEND\n"
        + "    notifications: {https: ['https://hooks.example.com/a']}\n",
    )
    org = load_organisation(path)
    assert org.notifications == Subscribers(
        email=("ml@example.com",), sqs=("arn:aws:sqs:eu-west-1:111122223333:events",)
    )
    assert org.queue.shares[0].notifications.endpoints == (
        ("https", "https://hooks.example.com/a"),
    )


def test_files_without_notifications_have_no_subscribers(tmp_path: Path) -> None:
    org = load_organisation(write(tmp_path, HEAD + SHARE))
    assert org.notifications.endpoints == ()
    assert org.queue.shares[0].notifications.endpoints == ()


def test_round_trips_through_the_file_form(tmp_path: Path) -> None:
    path = write(tmp_path, HEAD + "notifications: {email: [ml@example.com]}\n" + SHARE)
    org = load_organisation(path)
    assert OrganisationFile.from_organisation(org).to_organisation() == org


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("email: [not-an-address]", r"notifications\.email\[0\]: not an email address"),
        ("https: ['http://hooks.example.com']", r"notifications\.https\[0\]: not an https://"),
        (
            "sqs: ['arn:aws:sqs:eu-west-1:111122223333:q.fifo']",
            r"notifications\.sqs\[0\]: not a standard SQS queue ARN .*\.fifo",
        ),
        ("email: [a@example.com, A@example.com]", r"notifications\.email\[1\]: listed twice"),
    ],
)
def test_rejects_a_bad_endpoint_naming_field_value_and_fix(
    tmp_path: Path, entry: str, message: str
) -> None:
    path = write(tmp_path, HEAD + f"notifications:\n  {entry}\n" + SHARE)
    with pytest.raises(OrgFileError, match=message) as caught:
        load_organisation(path)
    assert "fix:" in str(caught.value) and "line 3" in str(caught.value)


def test_rejects_an_unknown_subscription_kind(tmp_path: Path) -> None:
    path = write(tmp_path, HEAD + "notifications:\n  slack: [x]\n" + SHARE)
    with pytest.raises(
        OrgFileError,
        match=r"notifications\.slack: unknown key.*fix: remove the key; the keys allowed here are "
        r"email, https, sqs",
    ):
        load_organisation(path)


def test_rejects_more_subscriptions_than_the_bound(tmp_path: Path) -> None:
    emails = ", ".join(f"u{i}@example.com" for i in range(MAX_SUBSCRIPTIONS + 1))
    path = write(tmp_path, HEAD + f"notifications:\n  email: [{emails}]\n" + SHARE)
    with pytest.raises(OrgFileError, match=rf"at most {MAX_SUBSCRIPTIONS} subscriptions"):
        load_organisation(path)


def test_the_input_limits_doc_states_the_models_bounds() -> None:
    text = (Path(__file__).resolve().parents[2] / "docs" / "input-limits.md").read_text()
    assert f"at most {MAX_SUBSCRIPTIONS} subscriptions per file" in text
    assert f"each at most {MAX_ENDPOINT_LENGTH:,} characters" in text

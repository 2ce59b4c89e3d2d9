"""The pytest plugin's ``emulator`` fixture is an AWS sandbox (issue 41, part 4).

A user's pytest run (``pytester``, in its own process) with real-looking credentials in the
environment (key, secret, session token, profile, a per-service endpoint, endpoint URLs
ignored) and in ``~/.aws/credentials`` and ``~/.aws/config``: a test before the fixture makes a
client (boto3's default session caches the user's credentials), tests under the fixture must
sign only with the dummy key, see no token or profile, reach only the emulator whatever the
service, and have the Price List API refused; a test after it must see the user's settings
again and no dummy key.
"""

from __future__ import annotations

import os

import pytest

pytest_plugins = ("pytester",)

REAL_KEY = "AKIAZ7QWERTYUIOPASDF"
REAL_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzzzREALKEY"
REAL_TOKEN = "IQoJb3JpZ2luX2VjEXAMPLEsessionTOKEN"
PROFILE_KEY = "AKIAPROFILEKEY000001"

USER_ENV = {
    "AWS_ACCESS_KEY_ID": REAL_KEY,
    "AWS_SECRET_ACCESS_KEY": REAL_SECRET,
    "AWS_SESSION_TOKEN": REAL_TOKEN,
    "AWS_SECURITY_TOKEN": REAL_TOKEN,
    "AWS_PROFILE": "prod",
    "AWS_DEFAULT_REGION": "eu-west-1",
    "AWS_ENDPOINT_URL_S3": "https://s3.eu-west-1.amazonaws.com",
    "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS": "true",
}
CREDENTIALS_FILE = f"""[default]
aws_access_key_id = {PROFILE_KEY}
aws_secret_access_key = {REAL_SECRET}

[prod]
aws_access_key_id = {PROFILE_KEY}
aws_secret_access_key = {REAL_SECRET}
aws_session_token = {REAL_TOKEN}
"""
CONFIG_FILE = """[default]
region = eu-west-1

[profile prod]
region = eu-west-1
endpoint_url = https://example.invalid
"""

USER_TESTS = f"""
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import boto3
import botocore.session
import pytest
from botocore.exceptions import ClientError

REAL_KEY = {REAL_KEY!r}
SERVICES = ["s3", "logs", "pricing", "sqs", "cloudwatch", "iam", "ec2", "batch", "ssm",
            "sagemaker", "sts", "service-quotas"]


def signing_key(client):
    return client._request_signer._credentials.get_frozen_credentials()


def test_1_before_an_earlier_client_caches_the_users_credentials():
    client = boto3.client("sts")
    assert signing_key(client).access_key == REAL_KEY
    assert boto3.DEFAULT_SESSION is not None


def test_2_under_every_client_signs_with_the_dummy_key_and_no_token(emulator):
    for make in (boto3.client, boto3.session.Session().client):
        frozen = signing_key(make("batch"))
        assert (frozen.access_key, frozen.token) == ("testing", None)
    identity = boto3.client("sts").get_caller_identity()
    assert identity["Account"] == emulator.emulator.account.account_id


def test_3_under_no_token_profile_or_users_files(emulator):
    for name in ("AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN", "AWS_PROFILE",
                 "AWS_DEFAULT_PROFILE", "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS"):
        assert name not in os.environ, name
    for name in ("AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE"):
        path = Path(os.environ[name])
        assert path.is_file() and path.stat().st_size == 0, name
    session = botocore.session.Session()
    assert session.available_profiles == []
    assert os.environ["AWS_EC2_METADATA_DISABLED"] == "true"


def test_4_under_every_service_points_at_the_emulator(emulator):
    for service in SERVICES:
        assert boto3.client(service).meta.endpoint_url == emulator.endpoint_url, service


@pytest.mark.parametrize(
    "service, call, params",
    [("s3", "list_buckets", {{}}), ("logs", "describe_log_groups", {{}}),
     ("pricing", "get_products", {{"ServiceCode": "AmazonSageMaker"}})],
)
def test_5_under_a_service_the_emulator_does_not_serve_is_refused(emulator, service, call, params):
    with pytest.raises(ClientError) as refused:
        getattr(boto3.client(service), call)(**params)
    assert refused.value.response["Error"]["Code"] == "AccessDeniedException"
    assert "does not serve" in refused.value.response["Error"]["Message"]


ORG = (
    "organisation: tiny\\nshares:\\n"
    "  - {{name: a, capacity: {{ml.g5.xlarge: 2}}, strategy: RESERVE}}\\n"
)
WORKLOAD = (
    "submit_time_s,share,instance_type,instance_count,duration_s,priority\\n"
    "0,a,ml.g5.xlarge,1,600,0\\n"
)


def test_6_under_quota_report_without_prices_is_refused_not_sent_to_aws(emulator, tmp_path):
    (tmp_path / "org.yaml").write_text(ORG)
    (tmp_path / "w.csv").write_text(WORKLOAD)
    users_cache = tmp_path / "cache" / "quota"  # prices the user's machine fetched from AWS
    users_cache.mkdir(parents=True)
    (users_cache / "sagemaker-training-prices-us-east-1.json").write_text(
        json.dumps({{"ml.g5.xlarge": {{"usd": 1.41, "fetched": time.time()}}}})
    )
    env = {{**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}}
    done = subprocess.run(
        [sys.executable, "-m", "quota_constructs.commands", "report",
         str(tmp_path / "org.yaml"), "--workload", str(tmp_path / "w.csv")],
        capture_output=True, text=True, env=env, timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert "the local emulator does not serve the AWS Price List API" in done.stderr
    assert "--prices FILE" in done.stderr
    assert emulator.request_counts == {{}}


def test_7_under_the_default_session_is_the_sandboxs_own(emulator):
    boto3.setup_default_session(region_name="us-east-1")
    assert signing_key(boto3.client("batch")).access_key == "testing"


def test_8_after_the_users_settings_are_back_and_no_dummy_key_leaks():
    assert os.environ["AWS_ACCESS_KEY_ID"] == REAL_KEY
    assert os.environ["AWS_SESSION_TOKEN"]
    assert os.environ["AWS_PROFILE"] == "prod"
    assert "AWS_ENDPOINT_URL" not in os.environ
    assert "AWS_SHARED_CREDENTIALS_FILE" not in os.environ
    assert signing_key(boto3.client("sts")).access_key == REAL_KEY
    assert signing_key(boto3.session.Session().client("sts")).access_key == REAL_KEY
    aws = {{k: v for k, v in os.environ.items() if k.startswith("AWS_")}}
    assert "testing" not in json.dumps(aws)
"""


def test_the_emulator_fixture_is_a_sandbox_before_under_and_after(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in [n for n in list(os.environ) if n.startswith("AWS_")]:
        monkeypatch.delenv(name)
    for name, value in USER_ENV.items():
        monkeypatch.setenv(name, value)
    aws = pytester.path / ".aws"  # pytester's HOME
    aws.mkdir()
    (aws / "credentials").write_text(CREDENTIALS_FILE)
    (aws / "config").write_text(CONFIG_FILE)
    pytester.makepyfile(test_user=USER_TESTS)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-q")
    result.assert_outcomes(passed=10)

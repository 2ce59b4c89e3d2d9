"""A request signed for a service the emulator does not serve is refused naming the service, in
the error format of its protocol (issue 41, part 4): nothing pointed at the emulator reaches
AWS, and the Price List API's refusal names ``--prices FILE``."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError

from quota_constructs.local.testing import EmulatorServer


@pytest.mark.parametrize(
    "service, call, params",
    [
        ("s3", "list_buckets", {}),  # REST-XML
        ("sqs", "list_queues", {}),  # JSON 1.0 target
        ("cloudformation", "list_stacks", {}),  # query protocol, XML errors
        ("lambda", "list_functions", {}),  # REST-JSON
    ],
)
def test_rejects_a_service_it_does_not_serve_naming_it(
    emulator: EmulatorServer, service: str, call: str, params: dict[str, str]
) -> None:
    with pytest.raises(ClientError) as refused:
        getattr(emulator.client(service), call)(**params)
    error = refused.value.response["Error"]
    assert error["Code"] == "AccessDeniedException"
    assert error["Message"].startswith(f"the local emulator does not serve {service!r}")
    assert "fix: give this client its own test double" in error["Message"]
    assert emulator.request_counts == {}


def test_rejects_the_price_list_api_naming_the_prices_file(emulator: EmulatorServer) -> None:
    with pytest.raises(ClientError) as refused:
        emulator.client("pricing").get_products(ServiceCode="AmazonSageMaker")
    assert refused.value.response["Error"]["Message"] == (
        "the local emulator does not serve the AWS Price List API (pricing), and this request "
        "was not sent to AWS; fix: give prices in a file instead (quota report --prices FILE, "
        "TYPE: USD per instance-hour; docs/cost.md)"
    )


def test_the_services_it_serves_still_answer(emulator: EmulatorServer) -> None:
    for service in ("batch", "ssm", "sagemaker", "sts", "service-quotas"):
        assert emulator.client(service).meta.service_model.signing_name in {
            "batch",
            "ssm",
            "sagemaker",
            "sts",
            "servicequotas",
        }
    assert emulator.client("sts").get_caller_identity()["Account"]
    assert emulator.client("service-quotas").list_service_quotas(ServiceCode="sagemaker")

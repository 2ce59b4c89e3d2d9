"""Pagination over HTTP on the operations that spell it ``MaxResults``/``NextToken`` (SageMaker,
Service Quotas, SSM): they page through the emulator's one ``paginate``, as Batch's do."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError

from quota_constructs.local.testing import EmulatorServer

CAPITALISED = [
    ("sagemaker", "list_training_plans", {}),
    ("service-quotas", "list_service_quotas", {"ServiceCode": "sagemaker"}),
    ("ssm", "get_parameters_by_path", {"Path": "/quota/seed-demo", "Recursive": True}),
]


@pytest.mark.parametrize(("service", "operation", "params"), CAPITALISED)
def test_a_token_the_emulator_did_not_issue_is_a_client_error_naming_it(
    emulator: EmulatorServer, service: str, operation: str, params: dict[str, Any]
) -> None:
    """A well-formed NextToken from elsewhere is the caller's mistake (a 4xx naming the field)."""
    with pytest.raises(ClientError) as bad:
        getattr(emulator.client(service), operation)(NextToken="Zm9yZWlnbg==", **params)
    assert bad.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400
    assert "NextToken 'Zm9yZWlnbg==' is not a token this emulator issued" in str(bad.value)
    assert "pass the NextToken of the previous response unchanged" in str(bad.value)


@pytest.mark.parametrize(("service", "operation", "params"), CAPITALISED[2:])
def test_pages_of_one_cover_every_item_once(
    emulator: EmulatorServer, service: str, operation: str, params: dict[str, Any]
) -> None:
    """Following each NextToken unchanged yields the whole listing, one item per page (on the
    parameters of seed-demo, the listing with more than one item on a fresh emulator)."""
    client = emulator.client(service)
    whole = getattr(client, operation)(**params)
    key = next(k for k, v in whole.items() if isinstance(v, list))
    assert len(whole[key]) > 1  # the test needs more than one page
    paged, token = [], None
    for _ in whole[key]:  # one page per item; a token that never ends fails below
        page = getattr(client, operation)(
            MaxResults=1, **params, **({"NextToken": token} if token else {})
        )
        paged += page[key]
        token = page.get("NextToken")
        if not token:
            break
    assert token is None and paged == whole[key]

"""Prices from the AWS Price List API (stubbed with botocore's Stubber): parsed, cached, and a
type the list lacks named."""

from __future__ import annotations

import json
from pathlib import Path

import boto3
import pytest
from botocore.stub import Stubber

from quota_constructs.model.cost import MissingPrice, Price
from quota_constructs.runtime.pricing import CACHE_TTL_S, price_list_prices


def product(usd: str) -> str:
    """One ``PriceList`` entry as the API sends it: a JSON string."""
    dimension = {"unit": "Hrs", "pricePerUnit": {"USD": usd}}
    term = {"priceDimensions": {"SKU.TERM.RATE": dimension}}
    return json.dumps({"product": {"attributes": {}}, "terms": {"OnDemand": {"SKU.TERM": term}}})


def expect(stub: Stubber, instance_type: str, price_list: list[str]) -> None:
    filters = [
        {"Type": "TERM_MATCH", "Field": "regionCode", "Value": "us-east-1"},
        {"Type": "TERM_MATCH", "Field": "instanceName", "Value": instance_type},
        {"Type": "TERM_MATCH", "Field": "platoinstancetype", "Value": "Training"},
    ]
    stub.add_response(
        "get_products",
        {"PriceList": price_list, "FormatVersion": "aws_v1"},
        {"ServiceCode": "AmazonSageMaker", "Filters": filters},
    )


@pytest.fixture
def client() -> object:
    return boto3.client(
        "pricing", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x"
    )


def test_prices_are_asked_once_then_read_from_the_cache(client: object, tmp_path: Path) -> None:
    with Stubber(client) as stub:
        expect(stub, "ml.g5.xlarge", [product("1.4100000000")])
        first = price_list_prices(
            ["ml.g5.xlarge"], region="us-east-1", client=client, cache=tmp_path, now=1000.0
        )
        stub.assert_no_pending_responses()
        # no response left: a second question to the API would fail the test
        again = price_list_prices(
            ["ml.g5.xlarge"], region="us-east-1", client=client, cache=tmp_path, now=2000.0
        )
    assert first == again == {"ml.g5.xlarge": Price(1.41)}


def test_a_stale_cache_is_asked_again(client: object, tmp_path: Path) -> None:
    with Stubber(client) as stub:
        expect(stub, "ml.g5.xlarge", [product("1.41")])
        expect(stub, "ml.g5.xlarge", [product("1.50")])
        price_list_prices(
            ["ml.g5.xlarge"], region="us-east-1", client=client, cache=tmp_path, now=0.0
        )
        later = price_list_prices(
            ["ml.g5.xlarge"], region="us-east-1", client=client, cache=tmp_path, now=CACHE_TTL_S + 1
        )
    assert later == {"ml.g5.xlarge": Price(1.50)}


def test_a_type_the_price_list_lacks_is_named(client: object, tmp_path: Path) -> None:
    with Stubber(client) as stub:
        expect(stub, "ml.p5.48xlarge", [])
        with pytest.raises(MissingPrice) as caught:
            price_list_prices(["ml.p5.48xlarge"], region="us-east-1", client=client, cache=tmp_path)
    assert str(caught.value) == (
        "Price List API: the price list has no SageMaker training price for ml.p5.48xlarge in "
        "us-east-1 (got 'ml.p5.48xlarge'); fix: pass --prices FILE with 'ml.p5.48xlarge: USD "
        "per instance-hour'"
    )

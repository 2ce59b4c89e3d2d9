"""Owns SageMaker training prices from the AWS Price List API (``pricing`` client), cached.

``GetProducts`` for service code ``AmazonSageMaker``, filtered by ``regionCode``,
``instanceName`` and ``platoinstancetype=Training`` (attribute names as the public price list
uses them; UNCONFIRMED by AWS's documentation, docs/cost.md), paginated by botocore; the
on-demand ``pricePerUnit.USD`` of each type. Answers are cached in a JSON file per region for
:data:`CACHE_TTL_S`, so a report asks once a month at most.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import boto3

from quota_constructs.contracts import PRICE_CACHE_VARIABLE
from quota_constructs.model import Problem
from quota_constructs.model.cost import MissingPrice, Price

SERVICE_CODE = "AmazonSageMaker"
PRICING_REGION = "us-east-1"
"""The Price List API's endpoint region (it also answers in eu-central-1 and ap-south-1)."""
CACHE_TTL_S = 30 * 86400.0
SOURCE = "Price List API"


def cache_dir() -> Path:
    """``$QUOTA_PRICE_CACHE`` when set, else ``$XDG_CACHE_HOME/quota`` (default
    ``~/.cache/quota``)."""
    if own := os.environ.get(PRICE_CACHE_VARIABLE, "").strip():
        return Path(own)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "quota"


def _filters(region: str, instance_type: str) -> list[dict[str, str]]:
    pairs = {"regionCode": region, "instanceName": instance_type, "platoinstancetype": "Training"}
    return [{"Type": "TERM_MATCH", "Field": k, "Value": v} for k, v in pairs.items()]


def on_demand_usd(price_list: Iterable[str]) -> float | None:
    """The on-demand USD per hour in ``GetProducts``' ``PriceList`` entries (JSON strings)."""
    for entry in price_list:
        terms = json.loads(entry).get("terms", {}).get("OnDemand", {})
        for term in terms.values():
            for dimension in term.get("priceDimensions", {}).values():
                usd = dimension.get("pricePerUnit", {}).get("USD")
                if usd is not None and float(usd) > 0:
                    return float(usd)
    return None


def _ask(client: Any, region: str, instance_type: str) -> float | None:
    pages = client.get_paginator("get_products").paginate(
        ServiceCode=SERVICE_CODE, Filters=_filters(region, instance_type)
    )
    for page in pages:
        found = on_demand_usd(page.get("PriceList", []))
        if found is not None:
            return found
    return None


def _raw_cache(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _read_cache(path: Path, now: float) -> dict[str, float]:
    data = _raw_cache(path)
    return {
        str(t): float(e["usd"])
        for t, e in data.items()
        if isinstance(e, dict) and now - float(e.get("fetched", 0)) < CACHE_TTL_S
    }


def price_list_prices(
    instance_types: Iterable[str],
    *,
    region: str,
    client: Any | None = None,
    cache: Path | None = None,
    now: float | None = None,
) -> dict[str, Price]:
    """On-demand prices of ``instance_types`` in ``region``; cached, asked only when missing.

    A type the price list does not have is :class:`MissingPrice` naming it.
    """
    now = time.time() if now is None else now
    path = (cache or cache_dir()) / f"sagemaker-training-prices-{region}.json"
    known = _read_cache(path, now)
    wanted = sorted(set(instance_types))
    missing = [t for t in wanted if t not in known]
    if missing:
        client = client or boto3.client("pricing", region_name=PRICING_REGION)
        fetched = {t: usd for t in missing if (usd := _ask(client, region, t)) is not None}
        known.update(fetched)
        path.parent.mkdir(parents=True, exist_ok=True)
        stamp = {t: {"usd": usd, "fetched": now} for t, usd in fetched.items()}
        path.write_text(
            json.dumps({**_raw_cache(path), **stamp}, indent=1, sort_keys=True), encoding="utf-8"
        )
    absent = [t for t in wanted if t not in known]
    if absent:
        raise MissingPrice(
            [
                Problem(
                    SOURCE,
                    t,
                    f"the price list has no SageMaker training price for {t} in {region}",
                    f"pass --prices FILE with '{t}: USD per instance-hour'",
                )
                for t in absent
            ]
        )
    return {t: Price(known[t]) for t in wanted}

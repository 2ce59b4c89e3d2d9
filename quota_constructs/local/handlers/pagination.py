"""Owns the emulator's pagination: ``maxResults`` pages and the opaque ``nextToken`` it issues."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from quota_constructs.local.state.errors import InvalidParameter, InvalidRequest

T = TypeVar("T")
DEFAULT_PAGE_SIZE = 100
# SageMaker, SSM and Service Quotas spell them this way; Batch spells them maxResults, nextToken
CAPITALISED_PAGING = ("MaxResults", "NextToken")


def paginate(
    items: Sequence[T],
    max_results: int | None,
    next_token: str | None,
    *,
    fields: tuple[str, str] = ("maxResults", "nextToken"),
) -> tuple[list[T], str | None]:
    """One page of ``items`` and the token of the next page (``None`` on the last page).

    :class:`InvalidRequest` for a token this emulator did not issue or a page size outside 1-100;
    ``fields`` spells the page-size and token parameters as the service does, for the messages.
    """
    size_field, token_field = fields
    start = 0
    if next_token:
        try:
            start = int(base64.urlsafe_b64decode(next_token.encode()).decode().removeprefix("o:"))
        except (ValueError, binascii.Error, UnicodeDecodeError) as exc:
            raise InvalidRequest(
                f"{token_field} {next_token!r} is not a token this emulator issued; "
                f"pass the {token_field} of the previous response unchanged"
            ) from exc
    size = DEFAULT_PAGE_SIZE if max_results is None else max_results
    if size < 1 or size > DEFAULT_PAGE_SIZE:
        raise InvalidParameter(
            f"{size_field}: must be between 1 and 100 (got {size}); leave it out for pages of 100"
        )
    end = start + size
    token = base64.urlsafe_b64encode(f"o:{end}".encode()).decode() if end < len(items) else None
    return list(items[start:end]), token


def batch_page(
    key: str, items: Sequence[T], params: Mapping[str, Any], render: Callable[[T], Any]
) -> dict[str, Any]:
    """A Batch list or describe answer: one page of ``items`` (``maxResults`` and ``nextToken``
    of ``params``, :func:`paginate`), each rendered, under ``key``, and ``nextToken``."""
    page, token = paginate(items, params.get("maxResults"), params.get("nextToken"))
    return {key: [render(item) for item in page], "nextToken": token}

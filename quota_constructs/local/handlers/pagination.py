"""Owns the emulator's pagination: ``maxResults`` pages and the opaque ``nextToken`` it issues.

A token names a *position* in a stable order, not an offset: each listing gives every item a
sort key (its ``key``, unique and unchanging for as long as the item exists: a creation
sequence, a name, a creation time and id), the page is the items whose key comes after the
token's, and the token of the next page is the last listed item's key. So, as botocore
documents for ``ListServiceJobs`` ("Pagination continues from the end of the previous results
that returned the nextToken value"), an item added between two pages is not listed twice, and
an item that leaves the listing between two pages (a job leaving the filtered status, a deleted
share) makes no other item skipped. An item added before the position is not listed by the
pages that follow (it is found by starting again); one added after it is.

The token is base64 of ``q1 {"s": <scope>, "k": <key>}``; the scope names the listing and its
order (``ListServiceJobs``, ``ListServiceJobs:JOB_NAME``...), so a token of another listing is
refused like any token this emulator did not issue (:class:`InvalidToken`, which each service
answers with its own code: Batch ``ClientException``, SSM ``InvalidNextToken``, Service Quotas
``InvalidPaginationTokenException``, SageMaker ``ValidationException``). The ``q1 `` prefix keeps
the decoded text from being JSON, so that botocore's paginators, which try to read a
``StartingToken`` as their own base64 JSON token first, pass it on unchanged as the service's
token (and its alphabet has no ``_``, which their old token format splits on).
"""

from __future__ import annotations

import base64
import binascii
import json
from bisect import bisect_right
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from quota_constructs.local.state.errors import InvalidParameter, InvalidToken

T = TypeVar("T")
SortKey = tuple[str | int | float, ...]
"""A listing's order: ascending keys, each element a string or a number."""
DEFAULT_PAGE_SIZE = 100
TOKEN_PREFIX = "q1 "
# SageMaker, SSM and Service Quotas spell them this way; Batch spells them maxResults, nextToken
CAPITALISED_PAGING = ("MaxResults", "NextToken")


def encode_token(scope: str, key: SortKey) -> str:
    """The token naming the position just after ``key`` in the listing ``scope``."""
    text = TOKEN_PREFIX + json.dumps({"s": scope, "k": list(key)}, separators=(",", ":"))
    return base64.b64encode(text.encode()).decode()


def _decode_token(token: str, scope: str, token_field: str) -> SortKey:
    """The key a token of ``scope`` names; :class:`InvalidToken` for anything else."""
    try:
        text = base64.b64decode(token.encode(), validate=True).decode()
        data = (
            json.loads(text.removeprefix(TOKEN_PREFIX)) if text.startswith(TOKEN_PREFIX) else None
        )
    except (ValueError, binascii.Error, UnicodeDecodeError):
        data = None
    key = data.get("k") if isinstance(data, dict) and data.get("s") == scope else None
    if not isinstance(key, list) or not key or not all(_is_key_part(part) for part in key):
        raise InvalidToken(
            f"{token_field} {token!r} is not a token this emulator issued for this listing; "
            f"pass the {token_field} of the previous response unchanged"
        )
    return tuple(key)


def _is_key_part(value: Any) -> bool:
    return isinstance(value, str) or (
        isinstance(value, (int, float)) and not isinstance(value, bool)
    )


def _after(keys: Sequence[SortKey], position: SortKey) -> int:
    """Index of the first key after ``position``: keys of other element types never match."""
    try:
        return bisect_right(keys, position)
    except TypeError:  # a token of the right scope whose key parts are of other types
        return len(keys)


def paginate(
    items: Sequence[T],
    max_results: int | None,
    next_token: str | None,
    *,
    key: Callable[[T], SortKey],
    scope: str,
    fields: tuple[str, str] = ("maxResults", "nextToken"),
) -> tuple[list[T], str | None]:
    """One page of ``items`` in ``key`` order and the token of the next page (``None`` last).

    ``key`` must be unique among the items and stable for as long as an item exists; ``scope``
    names the listing (and its order) so that its tokens are refused by other listings.
    :class:`InvalidToken` for a token this emulator did not issue for ``scope``,
    :class:`InvalidParameter` for a page size outside 1-100; ``fields`` spells the page-size
    and token parameters as the service does, for the messages.
    """
    size_field, token_field = fields
    size = DEFAULT_PAGE_SIZE if max_results is None else max_results
    if size < 1 or size > DEFAULT_PAGE_SIZE:
        raise InvalidParameter(
            f"{size_field}: must be between 1 and 100 (got {size}); leave it out for pages of 100"
        )
    ordered = sorted(((key(item), item) for item in items), key=lambda pair: pair[0])
    keys = [k for k, _ in ordered]
    start = _after(keys, _decode_token(next_token, scope, token_field)) if next_token else 0
    page = ordered[start : start + size]
    more = start + size < len(ordered)
    token = encode_token(scope, page[-1][0]) if more and page else None
    return [item for _, item in page], token


def batch_page(
    key: str,
    items: Sequence[T],
    params: Mapping[str, Any],
    render: Callable[[T], Any],
    *,
    order: Callable[[T], SortKey],
    scope: str,
) -> dict[str, Any]:
    """A Batch list or describe answer: one page of ``items`` in ``order`` (``maxResults`` and
    ``nextToken`` of ``params``, :func:`paginate`), each rendered, under ``key``, and
    ``nextToken``."""
    page, token = paginate(
        items, params.get("maxResults"), params.get("nextToken"), key=order, scope=scope
    )
    return {key: [render(item) for item in page], "nextToken": token}

"""Owns the emulator's resource tags: one tag map per ARN, for resources and service jobs."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from quota_constructs.local.state.errors import NotFound, refuse
from quota_constructs.model import check_tags


class TagStore:
    """Tags by ARN. An ARN is taggable from the moment its resource or job is added."""

    def __init__(self) -> None:
        self._tags: dict[str, dict[str, str]] = {}

    def add(self, arn: str, tags: Mapping[str, str]) -> None:
        """Register ``arn`` with its first tags (already checked by the owner)."""
        self._tags[arn] = dict(tags)

    def remove(self, arn: str) -> None:
        """Forget ``arn`` and its tags (the resource or job is gone)."""
        self._tags.pop(arn, None)

    def of(self, arn: str) -> dict[str, str]:
        """A copy of the tags of ``arn`` (empty when it has none)."""
        return dict(self._tags.get(arn) or {})

    def of_resource(self, arn: str) -> dict[str, str]:
        """A copy of the tags of ``arn``; :class:`NotFound` when no resource has that ARN."""
        return dict(self._tagged(arn))

    def tag(self, arn: str, tags: Mapping[str, str]) -> None:
        """Add or overwrite ``tags`` on ``arn``; the merged tags must keep the model's rules."""
        current = self._tagged(arn)
        refuse(check_tags({**current, **tags}), context="tags")
        current.update(tags)

    def untag(self, arn: str, keys: Iterable[str]) -> None:
        """Remove ``keys`` from the tags of ``arn`` (absent keys are ignored)."""
        current = self._tagged(arn)
        for key in keys:
            current.pop(key, None)

    def _tagged(self, arn: str) -> dict[str, str]:
        tags = self._tags.get(arn)
        if tags is None:
            raise NotFound(f"resourceArn: no resource {arn!r} in this emulator")
        return tags

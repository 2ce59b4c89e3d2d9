"""Which regions have the CloudFormation resource types the stacks create.

Read from the package's data file (``REGIONS_FILE``, generated from cfn-lint's region schemas by
``tools/gen_region_table.py``). :func:`region_problems` is the one rule the stacks and pipeline
files apply: a region missing a type they create is refused, naming the type and the regions
that have it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache
from importlib import resources

from quota_constructs.model.problems import Problem

REGIONS_FILE = "data/resource_type_regions.txt"
QUEUE_RESOURCE_TYPES = (
    "AWS::Batch::JobQueue",
    "AWS::Batch::QuotaShare",
    "AWS::Batch::SchedulingPolicy",
    "AWS::Batch::ServiceEnvironment",
)
"""The types every organisation stack creates (its quota-managed queue)."""
PIPELINE_RESOURCE_TYPES = ("AWS::CodeBuild::Project", "AWS::CodePipeline::Pipeline")
"""The types the pipeline stack adds to what every stack has (IAM, KMS, S3)."""
_NUMBERED = re.compile(r"(?P<stem>.+-)(?P<number>[0-9]+)")


@cache
def resource_type_regions() -> dict[str, frozenset[str]]:
    """Resource type -> the regions that have it (the types the stacks create)."""
    text = resources.files("quota_constructs").joinpath(REGIONS_FILE).read_text(encoding="utf-8")
    rows = (line.split() for line in text.splitlines() if line and not line.startswith("#"))
    return {row[0]: frozenset(row[1:]) for row in rows}


def compact_regions(regions: Iterable[str]) -> str:
    """Sorted regions, numbered siblings joined: ``eu-west-1/2/3, us-east-1``."""
    groups: dict[str, list[str]] = {}
    for region in sorted(regions):
        match = _NUMBERED.fullmatch(region)
        stem, number = (match["stem"], match["number"]) if match else (region, "")
        groups.setdefault(stem, []).append(number)
    return ", ".join(stem + "/".join(numbers) for stem, numbers in groups.items())


def region_problems(region: str, resource_types: Iterable[str], path: str) -> list[Problem]:
    """One problem if ``region`` lacks any of ``resource_types`` (types not in the table are
    not judged), naming the missing types and the regions that have them all."""
    table = resource_type_regions()
    missing = sorted({t for t in resource_types if t in table and region not in table[t]})
    if not missing:
        return []
    having = frozenset.intersection(*(table[t] for t in missing))
    names = ", ".join(missing)
    if region not in frozenset.union(*table.values()):
        fix = f"write a region that has them: {_describe(having)}"
        return [Problem(path, region, "no region cfn-lint's region schemas know", fix)]
    return [
        Problem(
            path,
            region,
            f"CloudFormation has no {names} in {region} (cfn-lint's region schemas)",
            f"deploy to a region that has it: {_describe(having)}",
        )
    ]


def known_regions() -> frozenset[str]:
    """Every region cfn-lint's region schemas list for any type of the table."""
    return frozenset.union(*resource_type_regions().values())


def regions_refused(resource_types: Iterable[str], path: str) -> dict[str, Problem]:
    """Each known region lacking one of ``resource_types`` -> its :func:`region_problems`
    problem: what a deploy-time guard of an environment-agnostic stack asserts region by region."""
    types = list(resource_types)
    refused = {}
    for region in sorted(known_regions()):
        problems = region_problems(region, types, path)
        if problems:
            refused[region] = problems[0]
    return refused


def regions_with_all(resource_types: Iterable[str]) -> str:
    """The regions that have every one of ``resource_types`` in the table, described."""
    table = resource_type_regions()
    return _describe(frozenset.intersection(*(table[t] for t in resource_types if t in table)))


def _describe(having: frozenset[str]) -> str:
    """The regions, listed; or, when fewer lack it, as every known region but those."""
    lacking = known_regions() - having
    if having and len(lacking) < len(having):
        return f"every region cfn-lint knows but {compact_regions(lacking)}"
    return compact_regions(having) or "none (no region cfn-lint knows has it)"

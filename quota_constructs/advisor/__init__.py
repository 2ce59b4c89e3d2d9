"""Strategy advisor, configuration search and what-if simulator.

``recommend`` turns team profiles (``stacks/teams/*.yaml``) into a valid organisation with the
reasons in share descriptions; ``optimize`` searches the configurations the profiles allow by
simulation against each team's targets; the workload module loads CSV workloads or generates
them from team profiles; ``simulate`` runs a workload through the scheduler core
(``scheduling``) in virtual time and measures waits, preemptions, lost work, borrowing and
utilisation per share; ``targets`` judges every team on each target (implicit ones included);
``sizing`` finds the capacity a team needs to meet them; ``report`` draws the figures.
"""

from __future__ import annotations

from quota_constructs.advisor.optimize import (
    Evaluation,
    ExecutorFailed,
    SearchOptions,
    SearchResult,
    optimize,
)
from quota_constructs.advisor.profiles import (
    DEFAULT_JOB_MINUTES,
    JobMinutes,
    Targets,
    TeamProfile,
    TeamsFile,
    load_teams,
    parse_teams,
)
from quota_constructs.advisor.recommend import Advice, TeamAdvice, recommend
from quota_constructs.advisor.simulate import (
    ShareMetrics,
    SimulationOptions,
    SimulationResult,
    compare,
    simulate,
)
from quota_constructs.advisor.sizing import Sizing, capacities_needed
from quota_constructs.advisor.targets import TargetCheck, TeamFigures, check_targets
from quota_constructs.advisor.workload import (
    GeneratorOptions,
    WorkloadJob,
    generate_workload,
    load_workload_csv,
    parse_workload_csv,
)

__all__ = [
    "DEFAULT_JOB_MINUTES",
    "Advice",
    "Evaluation",
    "ExecutorFailed",
    "GeneratorOptions",
    "JobMinutes",
    "SearchOptions",
    "SearchResult",
    "ShareMetrics",
    "SimulationOptions",
    "SimulationResult",
    "Sizing",
    "TargetCheck",
    "Targets",
    "TeamAdvice",
    "TeamFigures",
    "TeamProfile",
    "TeamsFile",
    "WorkloadJob",
    "capacities_needed",
    "check_targets",
    "compare",
    "generate_workload",
    "load_teams",
    "load_workload_csv",
    "optimize",
    "parse_teams",
    "parse_workload_csv",
    "recommend",
    "simulate",
]

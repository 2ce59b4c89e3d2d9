"""``quota recommend --optimize``: choose sharing settings by simulation against team targets.

The search space is what each profile allows (its wishes are constraints, never overridden):

* strategy: ``RESERVE`` always; ``LEND`` only with ``lends_when_idle``; ``LEND_AND_BORROW`` only
  with ``needs_burst`` and ``lends_when_idle`` (and then it is the only one: the team asked to
  borrow);
* in-share preemption: off, or on too when the team tolerates preemption;
* borrow limit: ``borrow_levels`` (default 25, 50, 75, 100 %) of the reachable percent
  (:func:`~quota_constructs.advisor.recommend.reachable_percent`, capped at 100 % without
  checkpointing) for the lenders of that candidate, so no limit exceeds what the others lend;
  limits that allow the same instances are one candidate, and one that allows none is dropped
  unless there is nothing to borrow.

Every candidate runs on the same seeded weeks (:data:`~.targets.DEFAULT_WEEKS` by default), and
its targets are judged week by week as ``--simulate`` judges them (:mod:`.targets`). A candidate
is *eligible* when it meets every target the rule-based recommendation meets; the best eligible
one has the fewest missed targets, then the fewest weeks in which a target is missed, then the
smallest relative excess of the median week over missed targets, then the shortest mean wait of
all jobs, then the least lost work, then the fewest changes from the rule-based settings. When
the allowed space has at most ``max_candidates`` configurations all are run; otherwise a
coordinate search from the rule-based one runs rounds of single-team changes until none
improves or ``max_candidates`` have run.

Each (candidate, week) pair is one task of a :class:`concurrent.futures.Executor` (default: a
process pool with one worker per core), so the weeks are spread as well as the candidates;
pass your own, or :func:`cluster_executor` for a running Dask cluster (``dask://HOST:PORT``, the
optional extra ``pip install '.[dask]'``). Candidates are
deterministic: every executor gives the same results.

A cluster is trusted with the operator's machine: each candidate's result is unpickled here, so
whoever runs a cluster member (or can impersonate its scheduler) can run code as the operator.
:func:`executor_problems` refuses a plain-TCP ``dask://`` address off this machine unless
``trust_cluster``; ``tls://HOST:PORT`` uses Dask's TLS settings. Every result is awaited at most
``result_timeout_s``; a dead worker, pool or cluster raises :class:`ExecutorFailed`.
"""

from __future__ import annotations

import ipaddress
import itertools
import math
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import BrokenExecutor, CancelledError, Executor, Future, ProcessPoolExecutor
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field, replace
from typing import Any

from quota_constructs.advisor.limits import MAX_DAYS, MAX_SEARCH_CANDIDATES, MAX_SEARCH_WORKLOADS
from quota_constructs.advisor.profiles import TeamProfile, TeamsFile
from quota_constructs.advisor.recommend import (
    FULL_CHECKPOINTLESS_BORROW,
    Advice,
    reachable_percent,
    recommend,
)
from quota_constructs.advisor.simulate import SimulationOptions, simulate
from quota_constructs.advisor.sizing import Sizing, capacities_needed
from quota_constructs.advisor.targets import (
    DEFAULT_WEEKS,
    FINISH_WITHIN_DEADLINE,
    NOT_CHECKED,
    START_WITHIN_PERIOD,
    TargetCheck,
    TeamFigures,
    check_targets,
    evidence_text,
    figure_text,
    mean_figures,
    requirement_text,
    team_figures,
)
from quota_constructs.advisor.workload import (
    GeneratorOptions,
    WorkloadJob,
    generate_workload,
)
from quota_constructs.config import OrganisationFile
from quota_constructs.model import (
    SHARE_FIELDS,
    JobQueueSpec,
    Organisation,
    Problem,
    QuotaConfigError,
    QuotaShareSpec,
    ShareCalendar,
    SharingStrategy,
)

Setting = tuple[SharingStrategy, int | None, bool]
"""One share's searched settings: strategy, borrow limit (percent), in-share preemption."""


@dataclass(frozen=True)
class SearchOptions:
    """How the search runs. Defaults: :data:`DEFAULT_WEEKS` seeded weeks of 7 days, at most 64
    candidates."""

    seeds: tuple[int, ...] = tuple(range(DEFAULT_WEEKS))
    days: int = 7
    borrow_levels: tuple[float, ...] = (0.25, 0.5, 0.75, 1.0)
    """Fractions of the reachable borrow limit tried for each borrowing team."""
    max_candidates: int = 64
    """Most configurations simulated (each on every workload)."""
    simulation: SimulationOptions = field(default_factory=SimulationOptions)
    generator: GeneratorOptions = field(default_factory=GeneratorOptions)

    def problems(self) -> list[Problem]:
        """Field, value and fix for each unusable option."""
        problems = []
        if not self.seeds:
            problems.append(Problem("seeds", self.seeds, "needs at least one week", "e.g. 10"))
        if len(self.seeds) > MAX_SEARCH_WORKLOADS:
            problems.append(
                Problem(
                    "seeds", len(self.seeds), f"at most {MAX_SEARCH_WORKLOADS} weeks", "e.g. 10"
                )
            )
        if self.days < 1:
            problems.append(Problem("days", self.days, "must be at least 1", "e.g. 7"))
        if self.days > MAX_DAYS:
            problems.append(Problem("days", self.days, f"must be at most {MAX_DAYS}", "e.g. 7"))
        if self.max_candidates < 1:
            problems.append(
                Problem("max_candidates", self.max_candidates, "must be at least 1", "e.g. 64")
            )
        if self.max_candidates > MAX_SEARCH_CANDIDATES:
            problems.append(
                Problem(
                    "max_candidates",
                    self.max_candidates,
                    f"must be at most {MAX_SEARCH_CANDIDATES}",
                    "e.g. 64",
                )
            )
        if not self.borrow_levels or not all(0 < x <= 1 for x in self.borrow_levels):
            problems.append(
                Problem(
                    "borrow_levels",
                    self.borrow_levels,
                    "fractions of the reachable limit, each in (0, 1]",
                    "e.g. 0.25 0.5 0.75 1",
                )
            )
        return problems


@dataclass(frozen=True)
class Evaluation:
    """One configuration's figures over every week, and its targets judged on them."""

    settings: tuple[Setting, ...]
    organisation: Organisation
    teams: tuple[TeamFigures, ...]
    """Over the weeks: waits pooled, instance-hours the mean per week (:func:`mean_figures`)."""
    utilisation: float
    """Mean over the weeks."""
    checks: tuple[TargetCheck, ...]
    weeks: tuple[tuple[TeamFigures, ...], ...] = ()
    """Each week's figures (what the checks judge)."""

    def team(self, name: str) -> TeamFigures:
        return next(t for t in self.teams if t.team == name)

    @property
    def missed(self) -> tuple[TargetCheck, ...]:
        return tuple(c for c in self.checks if c.missed)

    @property
    def mean_wait_s(self) -> float:
        waits = [w for t in self.teams for w in t.waits_s]
        return math.fsum(waits) / len(waits) if waits else 0.0


@dataclass(frozen=True)
class SearchResult:
    """The best configuration found, next to the rule-based recommendation."""

    advice: Advice
    rule_based: Evaluation
    best: Evaluation
    evaluations: tuple[Evaluation, ...]
    """Every configuration the search simulated (all allowed by the profiles)."""
    what_ifs: Mapping[str, Evaluation]
    """Per team that refuses to lend: the best configuration with that team lending, run to
    tell whether the wish costs targets (never chosen)."""
    evaluated: int
    """Configurations the search simulated (each on every workload), what-ifs apart."""
    space: int
    """Configurations the profiles allow (before equal ones are merged)."""
    exhaustive: bool
    workloads: int
    jobs: int
    """Jobs over all workloads."""
    options: SearchOptions
    warnings: tuple[str, ...]
    sizings: tuple[Sizing, ...] = ()
    """Per team that the best configuration leaves with a missed target: the capacity that
    would meet it, found by simulation on the same workloads."""

    @property
    def organisation(self) -> Organisation:
        return self.best.organisation

    def to_yaml(self) -> str:
        """The best organisation as an organisation file, the evidence in descriptions."""
        header = (
            f"# Generated by `quota recommend --optimize` from the team profiles of "
            f"{self.organisation.name}.\n"
            "# Edit the team profiles and regenerate rather than editing this file.\n"
        )
        return header + OrganisationFile.from_organisation(self.organisation).to_yaml()


# --- the space ------------------------------------------------------------------------------


def team_settings(team: TeamProfile) -> list[tuple[SharingStrategy, bool]]:
    """Strategies and in-share preemption the profile allows (the borrow limit comes later)."""
    if team.needs_burst and team.lends_when_idle:
        strategies = [SharingStrategy.LEND_AND_BORROW]
    elif team.lends_when_idle:
        strategies = [SharingStrategy.LEND, SharingStrategy.RESERVE]
    else:
        strategies = [SharingStrategy.RESERVE]
    preemption = [True, False] if team.preemption_tolerant else [False]
    return [(s, p) for s in strategies for p in preemption]


def _borrow_limits(team: TeamProfile, queue: JobQueueSpec, levels: Sequence[float]) -> list[int]:
    """Borrow limits to try: levels of the reachable percent, one per distinct set of caps."""
    reach = reachable_percent(team, queue)
    if not team.checkpoints:
        reach = min(reach, FULL_CHECKPOINTLESS_BORROW)
    if reach == 0:
        return [0]
    limits: dict[tuple[int, ...], int] = {}
    for level in sorted(levels):
        percent = math.ceil(level * reach)
        caps = tuple(own * percent // 100 for own in team.capacity.values())
        if any(caps):
            limits.setdefault(caps, percent)
    return sorted(limits.values()) or [reach]


def _shares(
    teams: TeamsFile, choice: Sequence[tuple[SharingStrategy, bool]], rule: Organisation
) -> list[QuotaShareSpec]:
    """Shares with the chosen strategy and preemption (borrow limit still unset)."""
    return [
        replace(
            rule.queue.share(team.name), strategy=strategy, borrow_limit=None, in_share_preemption=p
        )
        for team, (strategy, p) in zip(teams.teams, choice, strict=True)
    ]


def expand(
    teams: TeamsFile,
    choice: Sequence[tuple[SharingStrategy, bool]],
    rule: Organisation,
    levels: Sequence[float],
) -> list[tuple[Setting, ...]]:
    """Every borrow-limit combination for one choice of strategies and preemption."""
    shares = _shares(teams, choice, rule)
    queue = JobQueueSpec(shares=tuple(shares))
    options: list[list[int | None]] = [
        list(_borrow_limits(team, queue, levels)) if spec.strategy.borrows else [None]
        for team, spec in zip(teams.teams, shares, strict=True)
    ]
    return [
        tuple(
            (spec.strategy, limit, spec.in_share_preemption)
            for spec, limit in zip(shares, limits, strict=True)
        )
        for limits in itertools.product(*options)
    ]


def settings_of(org: Organisation) -> tuple[Setting, ...]:
    return tuple(
        (s.strategy, s.borrow_limit if s.strategy.borrows else None, s.in_share_preemption)
        for s in org.queue.shares
    )


def organisation_for(rule: Organisation, settings: Sequence[Setting]) -> Organisation:
    """``rule`` with each share's strategy, borrow limit and in-share preemption replaced."""
    shares = tuple(
        replace(share, strategy=strategy, borrow_limit=limit, in_share_preemption=preempt)
        for share, (strategy, limit, preempt) in zip(rule.queue.shares, settings, strict=True)
    )
    return replace(rule, queue=replace(rule.queue, shares=shares))


# --- evaluation ------------------------------------------------------------------------------


PlainQueue = tuple[int, int | None, tuple[tuple[Any, ...], ...]]
"""A queue as plain values (the model's mapping proxies do not pickle): priority, runnable
timeout, and per share the value of each field in :data:`SIMULATED_FIELDS` (capacity as items)."""
SIMULATED_FIELDS = tuple(name for name, declared in SHARE_FIELDS.items() if declared.scheduling)
"""The share fields a candidate carries: those the scheduling core reads (``ShareField``)."""


def plain_queue(queue: JobQueueSpec) -> PlainQueue:
    """``queue`` as plain values that process pools and Dask can ship."""
    shares = tuple(
        tuple(_plain(getattr(share, name)) for name in SIMULATED_FIELDS) for share in queue.shares
    )
    return queue.priority, queue.runnable_timeout_minutes, shares


def _plain(value: Any) -> Any:
    return tuple(value.items()) if isinstance(value, Mapping) else value


def _organisation(queue: PlainQueue) -> Organisation:
    priority, timeout, shares = queue
    specs = tuple(
        QuotaShareSpec(
            **{
                name: _spec_value(value)
                for name, value in zip(SIMULATED_FIELDS, plain, strict=True)
            }
        )
        for plain in shares
    )
    return Organisation(
        name="candidate",
        queue=JobQueueSpec(shares=specs, priority=priority, runnable_timeout_minutes=timeout),
    )


def _spec_value(value: Any) -> Any:
    return dict(value) if isinstance(value, tuple) else value


def evaluate(
    queue: PlainQueue,
    jobs: Sequence[WorkloadJob],
    options: SimulationOptions,
    calendars: tuple[tuple[str, ShareCalendar], ...] = (),
) -> tuple[tuple[TeamFigures, ...], float]:
    """Simulate ``queue`` (with the shares' ``calendars``, as ``--simulate`` runs them) on one
    week's ``jobs``: each team's figures and the utilisation.

    A module-level function of plain arguments, so that process pools and Dask can ship it.
    """
    org = replace(_organisation(queue), calendars=dict(calendars))
    # the all-RESERVE baseline is not reported by the search: skip its second run
    result = simulate(org, jobs, options=options, baseline=math.nan)
    return team_figures(result), result.utilisation


def _rank(e: Evaluation, rule: tuple[Setting, ...]) -> tuple[float, ...]:
    changes = sum(a != b for a, b in zip(e.settings, rule, strict=True))
    lost = sum(t.lost_instance_hours for t in e.teams)
    excess = sum(c.excess for c in e.missed)
    shortfall = sum(c.shortfall for c in e.checks)
    return (len(e.missed), shortfall, excess, round(e.mean_wait_s, 6), round(lost, 6), changes)


def _eligible(e: Evaluation, rule: Evaluation) -> bool:
    """Meets every target the rule-based configuration meets."""
    met = {(c.team, c.target) for c in e.checks if c.met}
    return all((c.team, c.target) in met for c in rule.checks if c.met)


Progress = Callable[[int, int], None]
"""Called after each candidate: (candidates done, total expected)."""


DEFAULT_RESULT_TIMEOUT_S = 600.0
"""Longest wait for one candidate's result (after the one before it): ten minutes, about a
hundred times a week-long candidate's simulation here."""


class ExecutorFailed(RuntimeError):
    """The search's executor gave no result: a worker, the process pool or the cluster died, or
    no result arrived within the time-out. ``option`` is the flag naming the executor
    (``--executor`` or ``--workers``); ``str`` names it, what happened and the fix."""

    def __init__(self, option: str, message: str) -> None:
        super().__init__(f"{option}: {message}")
        self.option = option


DASK_PACKAGES = ("distributed", "dask", "tornado")


def _is_dask_error(error: BaseException) -> bool:
    """Whether Dask raised ``error`` itself (its type, or the frame it was raised in, is Dask's),
    not the candidate it ran: a lost scheduler can surface as a bare ``ValueError`` raised inside
    ``distributed.cfexecutor``."""
    if type(error).__module__.split(".", 1)[0] in DASK_PACKAGES:
        return True
    innermost = error.__traceback__
    while innermost is not None and innermost.tb_next is not None:
        innermost = innermost.tb_next
    module = innermost.tb_frame.f_globals.get("__name__", "") if innermost else ""
    return str(module).split(".", 1)[0] in DASK_PACKAGES


class _Runner:
    """Evaluates configurations through the executor, each once."""

    def __init__(
        self,
        teams: TeamsFile,
        rule: Organisation,
        workloads: Sequence[Sequence[WorkloadJob]],
        options: SearchOptions,
        executor: Executor,
        progress: Progress | None = None,
        *,
        executor_name: str = "the process pool",
        result_timeout_s: float = DEFAULT_RESULT_TIMEOUT_S,
    ) -> None:
        self.teams, self.rule, self.workloads = teams, rule, workloads
        self.options, self.executor = options, executor
        self.executor_name, self.result_timeout_s = executor_name, result_timeout_s
        self.done: dict[tuple[Setting, ...], Evaluation] = {}
        self.progress = progress
        self.total = options.max_candidates
        """Candidates expected (the search's budget or space; what-ifs may add a few)."""

    def run(self, batch: Iterable[tuple[Setting, ...]], *, budget: bool = True) -> list[Evaluation]:
        """Evaluate the new configurations of ``batch`` (within the budget unless ``budget`` is
        false); the evaluations of every configuration of ``batch`` that has run."""
        wanted = list(dict.fromkeys(batch))
        room = self.options.max_candidates - len(self.done) if budget else len(wanted)
        todo = [s for s in wanted if s not in self.done][: max(0, room)]
        orgs = [organisation_for(self.rule, s) for s in todo]
        try:
            futures = [
                [
                    self.executor.submit(
                        evaluate,
                        plain_queue(org.queue),
                        jobs,
                        self.options.simulation,
                        tuple(org.calendars.items()),
                    )
                    for jobs in self.workloads
                ]
                for org in orgs
            ]
        except Exception as error:
            failed = self._failure(error)
            if failed is None:
                raise
            raise failed from None
        for settings, org, weekly in zip(todo, orgs, futures, strict=True):
            self.done[settings] = self._evaluation(settings, org, [self._result(f) for f in weekly])
            if self.progress is not None:
                self.progress(len(self.done), max(self.total, len(self.done)))
        return [self.done[s] for s in wanted if s in self.done]

    def _evaluation(
        self,
        settings: tuple[Setting, ...],
        org: Organisation,
        results: Sequence[tuple[tuple[TeamFigures, ...], float]],
    ) -> Evaluation:
        """One configuration's evaluation from its weeks' results (in week order)."""
        weeks = tuple(figures for figures, _ in results)
        utilisation = math.fsum(u for _, u in results) / len(results)
        checks = check_targets(self.teams, weeks, days=self.options.days)
        return Evaluation(settings, org, mean_figures(weeks), utilisation, checks, weeks)

    def _result(self, future: Future[Any]) -> Any:
        """``future``'s result within the time-out; a dead worker, pool or cluster, or no result
        in time: :class:`ExecutorFailed` (an exception of the candidate itself propagates)."""
        try:
            return future.result(timeout=self.result_timeout_s)
        except Exception as error:
            failed = self._failure(error)
            if failed is None:
                raise
            raise failed from None

    def _failure(self, error: BaseException) -> ExecutorFailed | None:
        """The executor's failure ``error`` stands for (``None``: not the executor's)."""
        name, timeout = self.executor_name, self.result_timeout_s
        option = "--executor" if name.startswith(("dask://", "tls://")) else "--workers"
        kind = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
        if isinstance(error, TimeoutError):
            return ExecutorFailed(
                option,
                f"no candidate result from {name} in {timeout:g} s (--result-timeout): its "
                "workers died or are overloaded (a Dask cluster without workers waits for one "
                "for ever); fix: check the cluster's workers (its dashboard), or raise "
                "--result-timeout for slow candidates (long --days)",
            )
        if isinstance(error, BrokenExecutor):
            return ExecutorFailed(
                option,
                f"a worker process of the search died ({kind}), killed or out of memory; fix: "
                "run again with fewer --workers or shorter --days, and check the machine's "
                "memory (dmesg)",
            )
        if isinstance(error, (CancelledError, OSError)):
            return ExecutorFailed(
                option,
                f"{name} lost the search's tasks ({kind}): its scheduler or workers went away; "
                "fix: check that the Dask scheduler is running and reachable, then run again",
            )
        if _is_dask_error(error):
            return ExecutorFailed(
                option,
                f"{name} failed the search's tasks ({kind}): its scheduler or workers failed "
                "while running them; fix: check that the Dask scheduler is running and "
                "reachable, and the workers' logs and memory, then run again",
            )
        return None


def _space(teams: TeamsFile, levels: Sequence[float]) -> int:
    """Configurations the profiles allow, counting each borrower's levels (upper bound)."""
    size = 1
    for team in teams.teams:
        per = len(team_settings(team))
        if team.needs_burst and team.lends_when_idle:
            per *= len(levels)
        size *= per
    return size


def _exhaustive(
    runner: _Runner, teams: TeamsFile, levels: Sequence[float], first: tuple[Setting, ...]
) -> None:
    """Every configuration the profiles allow, ``first`` (the rule-based one) first, in one
    batch: the executor runs them all at once."""
    choices = itertools.product(*(team_settings(t) for t in teams.teams))
    space = (s for choice in choices for s in expand(teams, choice, runner.rule, levels))
    runner.run(itertools.chain([first], space))


def _with_limits(
    teams: TeamsFile,
    choice: Sequence[tuple[SharingStrategy, bool]],
    rule: Organisation,
    levels: Sequence[float],
    keep: Sequence[int | None],
) -> tuple[Setting, ...]:
    """``choice`` with each borrower's limit kept when still allowed, else its largest."""
    shares = _shares(teams, choice, rule)
    queue = JobQueueSpec(shares=tuple(shares))
    out = []
    for team, spec, old in zip(teams.teams, shares, keep, strict=True):
        limit = None
        if spec.strategy.borrows:
            allowed = _borrow_limits(team, queue, levels)
            limit = old if old in allowed else allowed[-1]
        out.append((spec.strategy, limit, spec.in_share_preemption))
    return tuple(out)


def _neighbours(
    teams: TeamsFile, current: tuple[Setting, ...], rule: Organisation, levels: Sequence[float]
) -> list[tuple[Setting, ...]]:
    """Configurations differing from ``current`` in one team's setting: its strategy and
    preemption (the others' limits kept where still allowed), or its borrow limit."""
    base = [(s, p) for s, _, p in current]
    keep = [limit for _, limit, _ in current]
    out = []
    for index, team in enumerate(teams.teams):
        for option in team_settings(team):
            if option != base[index]:
                choice = [*base[:index], option, *base[index + 1 :]]
                out.append(_with_limits(teams, choice, rule, levels, keep))
        if current[index][1] is not None:
            queue = JobQueueSpec(shares=tuple(_shares(teams, base, rule)))
            for limit in _borrow_limits(team, queue, levels):
                strategy, _, preempt = current[index]
                out.append((*current[:index], (strategy, limit, preempt), *current[index + 1 :]))
    return [s for s in out if s != current]


def _coordinate(runner: _Runner, teams: TeamsFile, start: Evaluation, rule: Evaluation) -> None:
    current = start
    levels = runner.options.borrow_levels
    while len(runner.done) < runner.options.max_candidates:
        batch = runner.run(_neighbours(teams, current.settings, runner.rule, levels))
        better = _best([current, *batch], rule)
        if better is current:
            return
        current = better


def _best(evaluations: Sequence[Evaluation], rule: Evaluation) -> Evaluation:
    eligible = [e for e in evaluations if _eligible(e, rule)]
    return min(eligible, key=lambda e: _rank(e, rule.settings))


def search_workloads(teams: TeamsFile, options: SearchOptions) -> list[list[WorkloadJob]]:
    """One generated workload per seed."""
    return [
        generate_workload(teams, days=options.days, seed=seed, options=options.generator)
        for seed in options.seeds
    ]


def optimize(
    teams: TeamsFile,
    *,
    options: SearchOptions | None = None,
    workloads: Sequence[Sequence[WorkloadJob]] | None = None,
    executor: Executor | None = None,
    prices: Mapping[str, float] | None = None,
    progress: Progress | None = None,
    executor_name: str = "the process pool",
    result_timeout_s: float = DEFAULT_RESULT_TIMEOUT_S,
) -> SearchResult:
    """Search the configurations the profiles allow; the best next to the rule-based one.

    ``workloads``: default one generated workload per seed of ``options``; ``executor``:
    default a :class:`~concurrent.futures.ProcessPoolExecutor` with ``os.cpu_count()``
    workers, shut down on return (one you pass is left running), named ``executor_name`` in
    errors; ``progress``: called after each candidate with (done, total). Each result is
    awaited at most ``result_timeout_s`` seconds (after the one before it). Raises
    :class:`~quota_constructs.model.QuotaConfigError` for unusable options or prices, and
    :class:`ExecutorFailed` when a worker, the pool or the cluster dies or a result is late.
    """
    options = options or SearchOptions()
    problems = options.problems()
    if problems:
        raise QuotaConfigError(problems, context="quota recommend --optimize")
    if workloads is None:
        workloads = search_workloads(teams, options)
    advice = recommend(
        teams, prices=prices, options=options.generator, workloads=workloads, days=options.days
    )
    run = (executor_name, result_timeout_s)
    if executor is None:
        with ProcessPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
            return _search(teams, advice, workloads, options, pool, progress, run)
    return _search(teams, advice, workloads, options, executor, progress, run)


def _search(
    teams: TeamsFile,
    advice: Advice,
    workloads: Sequence[Sequence[WorkloadJob]],
    options: SearchOptions,
    executor: Executor,
    progress: Progress | None,
    run: tuple[str, float],
) -> SearchResult:
    rule_org = advice.organisation
    space = _space(teams, options.borrow_levels)
    name, timeout = run
    runner = _Runner(
        teams,
        rule_org,
        workloads,
        options,
        executor,
        progress,
        executor_name=name,
        result_timeout_s=timeout,
    )
    runner.total = min(space, options.max_candidates)
    rule_settings = settings_of(rule_org)
    exhaustive = space <= options.max_candidates
    if exhaustive:  # the rule-based configuration is evaluated with all the others
        _exhaustive(runner, teams, options.borrow_levels, rule_settings)
        rule = runner.done[rule_settings]
    else:
        [rule] = runner.run([rule_settings])
        _coordinate(runner, teams, rule, rule)
    evaluations = tuple(runner.done.values())
    best = _best(evaluations, rule)
    what_ifs = _what_ifs(runner, teams, best)
    sizings = _sizings(teams, best, workloads, options)
    best = replace(best, organisation=_described(best, rule, teams, len(workloads), options))
    return SearchResult(
        advice=advice,
        rule_based=rule,
        best=best,
        evaluations=evaluations,
        what_ifs=what_ifs,
        evaluated=len(evaluations),
        space=space,
        exhaustive=exhaustive,
        workloads=len(workloads),
        jobs=sum(len(w) for w in workloads),
        options=options,
        warnings=tuple(
            _missed_warnings(best, rule)
            + _wish_warnings(teams, best, what_ifs)
            + _not_checked_warnings(best)
        ),
        sizings=sizings,
    )


def _sizings(
    teams: TeamsFile,
    best: Evaluation,
    workloads: Sequence[Sequence[WorkloadJob]],
    options: SearchOptions,
) -> tuple[Sizing, ...]:
    """The capacities the teams missing a target under ``best`` would need, sized jointly on
    the same weeks (``best``'s own weeks reused)."""
    return capacities_needed(
        best.organisation,
        teams,
        workloads,
        options=options.simulation,
        days=options.days,
        checks=best.checks,
        weeks=best.weeks,
    )


DASK_SCHEME = "dask://"
TLS_SCHEME = "tls://"
DASK_TLS_SETTINGS = (
    "distributed.comm.tls.ca-file, distributed.comm.tls.client.cert and "
    "distributed.comm.tls.client.key (or DASK_DISTRIBUTED__COMM__TLS__CA_FILE, "
    "DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT, DASK_DISTRIBUTED__COMM__TLS__CLIENT__KEY)"
)
"""Dask's TLS settings a ``tls://`` executor needs (its configuration or environment)."""
CONNECT_TIMEOUT_S = 30.0
"""Longest wait to connect to a Dask scheduler (at most the result time-out)."""


def _host_port(url: str) -> tuple[str, str]:
    rest = url.removeprefix(DASK_SCHEME).removeprefix(TLS_SCHEME)
    host, _, port = rest.rpartition(":")
    return host, port


def is_loopback(host: str) -> bool:
    """``localhost`` or a loopback address (``127.0.0.0/8``, ``[::1]``); a name is not resolved."""
    bare = host.removeprefix("[").removesuffix("]")
    if bare == "localhost":
        return True
    try:
        return ipaddress.ip_address(bare).is_loopback
    except ValueError:
        return False


def executor_problems(url: str, *, trust_cluster: bool = False) -> list[Problem]:
    """Problems of an ``--executor`` value: ``dask://HOST:PORT`` (plain TCP: on this machine,
    or anywhere with ``trust_cluster``) or ``tls://HOST:PORT`` (Dask's TLS settings)."""
    host, port = _host_port(url)
    form = url.startswith((DASK_SCHEME, TLS_SCHEME)) and host and port.isdigit()
    if not (form and 0 < int(port) < 65536):
        return [
            Problem(
                "--executor",
                url,
                "not a Dask scheduler address",
                "give dask://HOST:PORT, e.g. dask://127.0.0.1:8786 (a running dask scheduler), "
                "or tls://HOST:PORT",
            )
        ]
    if url.startswith(DASK_SCHEME) and not trust_cluster and not is_loopback(host):
        return [
            Problem(
                "--executor",
                url,
                "a plain-TCP Dask cluster off this machine",
                "its results are unpickled here, so anyone who runs a member or reaches its "
                f"scheduler can run code as you: use tls://{host}:{port} with Dask's TLS "
                "settings (distributed.comm.tls.*, docs/advisor.md), or pass --trust-cluster "
                "if the network and every cluster member are yours",
            )
        ]
    return []


def _tls_problems(url: str) -> list[Problem]:
    """A ``tls://`` executor without a CA and client certificate in Dask's settings."""
    from distributed.security import Security

    security = Security()
    ca_file, cert = (getattr(security, k, None) for k in ("tls_ca_file", "tls_client_cert"))
    if url.startswith(TLS_SCHEME) and not (ca_file and cert):
        return [
            Problem(
                "--executor",
                url,
                "TLS without Dask's TLS settings",
                f"set a CA file and a client certificate and key: {DASK_TLS_SETTINGS}",
            )
        ]
    return []


@contextmanager
def cluster_executor(
    url: str,
    *,
    timeout_s: float = CONNECT_TIMEOUT_S,
    trust_cluster: bool = False,
) -> Iterator[Executor]:
    """An executor on the running Dask cluster at ``url``, closed after.

    ``url``: ``dask://HOST:PORT`` (plain TCP; off this machine only with ``trust_cluster``:
    results are unpickled here) or ``tls://HOST:PORT`` (Dask's TLS settings,
    :data:`DASK_TLS_SETTINGS`). Needs the optional extra (``pip install '.[dask]'``); raises
    :class:`~quota_constructs.model.QuotaConfigError` for a bad or untrusted address, missing TLS
    settings or a missing extra, and :class:`ExecutorFailed` when the scheduler cannot be
    reached within ``timeout_s``.

    Tasks are submitted as impure (``pure=False``): each candidate is evaluated once anyway,
    and a pure task's key is a hash of its arguments, which for a search's workloads (thousands
    of jobs) cost about a second per task in ``dask.tokenize``, longer than the task itself.
    """
    problems = executor_problems(url, trust_cluster=trust_cluster)
    if problems:
        raise QuotaConfigError(problems)
    try:
        from distributed import Client
    except ImportError:
        raise QuotaConfigError(
            [
                Problem(
                    "--executor",
                    url,
                    "needs Dask distributed, which is not installed",
                    "pip install '.[dask]' (or drop --executor to use local processes)",
                )
            ]
        ) from None
    problems = _tls_problems(url)
    if problems:
        raise QuotaConfigError(problems)
    address = url if url.startswith(TLS_SCHEME) else "tcp://" + url.removeprefix(DASK_SCHEME)
    try:
        client = Client(address, timeout=timeout_s)
    except (OSError, TimeoutError) as error:
        raise ExecutorFailed(
            "--executor",
            f"could not reach the Dask scheduler at {url} in {timeout_s:g} s ({error}); fix: "
            "start the scheduler (dask scheduler) and its workers, or check the address",
        ) from None
    try:
        yield client.get_executor(pure=False)
    finally:
        with suppress(OSError, TimeoutError):  # a dead scheduler: the search's error stands
            client.close(timeout=timeout_s)


def setting_text(setting: Setting) -> str:
    """``LEND_AND_BORROW 50%, in-share on``."""
    strategy, limit, preempt = setting
    borrow = f" {limit}%" if limit is not None else ""
    return f"{strategy.value}{borrow}, in-share {'on' if preempt else 'off'}"


def check_text(check: TargetCheck) -> str:
    """``p90 wait <= 30 min: met (12.0 min in every week; met in 20 of 20 weeks, 812 jobs)``:
    the target, its status and its evidence."""
    return f"{requirement_text(check)}: {check.status} ({evidence_text(check)})"


def _described(
    best: Evaluation, rule: Evaluation, teams: TeamsFile, workloads: int, options: SearchOptions
) -> Organisation:
    """The best organisation, each share's description saying why, with its figures."""
    shares = []
    for index, share in enumerate(best.organisation.queue.shares):
        checks = [c for c in best.checks if c.team == share.name]
        figures = "; ".join(check_text(c) for c in checks) or "no targets"
        was = setting_text(rule.settings[index])
        now = setting_text(best.settings[index])
        change = "same as the rules" if was == now else f"the rules gave {was}"
        text = (
            f"{teams.team(share.name).description.strip()} Chosen by simulation over {workloads} "
            f"seeded weeks of {options.days} days: {now} ({change}); {figures}."
        )
        shares.append(replace(share, description=text.strip()))
    queue = replace(best.organisation.queue, shares=tuple(shares))
    return replace(best.organisation, queue=queue)


def _what_ifs(runner: _Runner, teams: TeamsFile, best: Evaluation) -> dict[str, Evaluation]:
    """When ``best`` misses targets: for each team with ``lends_when_idle: false``, ``best``
    with that one team lending (LEND, or LEND_AND_BORROW when it wants to borrow) and borrow
    limits re-derived. Run outside the candidate budget, never chosen."""
    if not best.missed:
        return {}
    levels = runner.options.borrow_levels
    base = [(s, p) for s, _, p in best.settings]
    keep = [limit for _, limit, _ in best.settings]
    out = {}
    for index, team in enumerate(teams.teams):
        if team.lends_when_idle:
            continue
        strategy = SharingStrategy.LEND_AND_BORROW if team.needs_burst else SharingStrategy.LEND
        choice = [*base[:index], (strategy, base[index][1]), *base[index + 1 :]]
        settings = _with_limits(teams, choice, runner.rule, levels, keep)
        [out[team.name]] = runner.run([settings], budget=False)
    return out


def _wish_warnings(
    teams: TeamsFile, best: Evaluation, what_ifs: Mapping[str, Evaluation]
) -> list[str]:
    """Where the advisor disagrees with a wish: lending would meet targets ``best`` misses
    without missing any it meets. The wish is kept; the warning gives the figures."""
    missed = {(c.team, c.target) for c in best.missed}
    warnings = []
    for name, relaxed in what_ifs.items():
        gained = [c for c in relaxed.checks if c.met and (c.team, c.target) in missed]
        lost = [c for c in relaxed.missed if (c.team, c.target) not in missed]
        if not gained or lost:
            continue
        index = [t.name for t in teams.teams].index(name)
        met = "; ".join(f"{c.team} {check_text(c)}" for c in gained)
        warnings.append(
            f"{name}: the advisor disagrees with lends_when_idle: false: with it true "
            f"({setting_text(relaxed.settings[index])}) the simulation meets {met}, missed "
            "otherwise; the wish is kept: change the profile if those targets matter more"
        )
    return warnings


def _what_helps(check: TargetCheck, setting: Setting) -> str:
    """What can meet a missed target: capacity or the schedule for a run that does not fit,
    lending by others only for a team whose strategy borrows."""
    if check.target in (START_WITHIN_PERIOD, FINISH_WITHIN_DEADLINE):
        return (
            "shorten the runs (cap MaxRuntimeInSeconds), schedule them less often, or add "
            "capacity (capacityNeeded)"
        )
    if setting[0].borrows:
        return "relax the target, add capacity (capacityNeeded), or let more teams lend"
    return (
        f"relax the target or add capacity (capacityNeeded); its strategy {setting[0].value} "
        "does not borrow, so more lending by others cannot help"
    )


def _not_checked_warnings(best: Evaluation) -> list[str]:
    """One line per team whose targets could not be checked: no jobs in the window."""
    notes = {c.team: c.note for c in best.checks if c.status == NOT_CHECKED}
    return [f"{team}: targets not checked: {note}" for team, note in notes.items()]


def _weeks_text(check: TargetCheck) -> str:
    """``14.7 h, met in 16 of 20 weeks``: the median week and the weeks met."""
    return f"{figure_text(check)}, met in {check.weeks_met} of {check.weeks} weeks"


def _missed_warnings(best: Evaluation, rule: Evaluation) -> list[str]:
    warnings = []
    rule_checks = {(c.team, c.target): c for c in rule.checks}
    names = [s.name for s in best.organisation.queue.shares]
    for check in best.missed:
        before = _weeks_text(rule_checks[check.team, check.target])
        setting = best.settings[names.index(check.team)]
        warnings.append(
            f"{check.team}: no configuration the profiles allow meets {requirement_text(check)} "
            f"(best {_weeks_text(check)}, rule-based {before}); the wishes are kept: "
            + _what_helps(check, setting)
        )
    return warnings

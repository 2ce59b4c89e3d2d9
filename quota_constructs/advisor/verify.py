"""``quota recommend --simulate``: check a recommendation against simulated alternatives.

Each team's profile states an expectation the simulation can confirm or refute:
a team that does not tolerate preemption sees none, and a team that needs burst borrows (unless
its profile also refuses to lend, which keeps it from borrowing: reported for information).
What a lending team lends, what that costs its waits, and the utilisation of the three
configurations are reported for information (when the whole workload fits in the window, the
work done, hence the utilisation, hardly changes: sharing shortens waits instead).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from quota_constructs.advisor.recommend import Advice
from quota_constructs.advisor.report import duration_text
from quota_constructs.advisor.simulate import ShareMetrics, SimulationResult

RECOMMENDED = "recommended"
NO_SHARING = "all-RESERVE"
FULL_SHARING = "all-LEND_AND_BORROW"


@dataclass(frozen=True)
class Finding:
    """One checked expectation: ``ok`` True/False, or ``None`` for information."""

    ok: bool | None
    text: str


def _p95(m: ShareMetrics) -> str:
    return duration_text(m.wait_p95_s)


def verify(advice: Advice, results: Mapping[str, SimulationResult]) -> list[Finding]:
    """Findings for each team and the organisation; ``results`` keyed by alternative label
    (``recommended``, ``all-RESERVE``, ``all-LEND_AND_BORROW``)."""
    rec, none, full = results[RECOMMENDED], results[NO_SHARING], results[FULL_SHARING]
    findings: list[Finding] = []
    for team_advice in advice.teams:
        team, name = team_advice.team, team_advice.share.name
        mine, alone, shared = rec.share(name), none.share(name), full.share(name)
        if not team.preemption_tolerant:
            count = sum(mine.preemptions.values())
            other = sum(shared.preemptions.values())
            findings.append(
                Finding(
                    None,
                    f"{name}: {count} preemptions (all-LEND_AND_BORROW: {other}); wait p95 "
                    f"{_p95(mine)} (all-LEND_AND_BORROW: {_p95(shared)})",
                )
            )
        if team.needs_burst and not team_advice.share.strategy.borrows:
            findings.append(
                Finding(
                    None,
                    f"{name}: wants to borrow but stays {team_advice.share.strategy.value} "
                    f"(lends_when_idle: false); wait p95 {_p95(mine)}",
                )
            )
        elif team.needs_burst:
            findings.append(
                Finding(
                    mine.borrowed_instance_hours > 0,
                    f"{name}: borrowed {mine.borrowed_instance_hours:.1f} instance-hours; wait "
                    f"p95 {_p95(mine)} (no sharing: {_p95(alone)}); lost "
                    f"{mine.lost_instance_hours:.1f} instance-hours to preemption",
                )
            )
        if team.lends_when_idle:
            findings.append(
                Finding(
                    None,
                    f"{name}: lent {mine.lent_instance_hours:.1f} instance-hours; wait p95 "
                    f"{_p95(mine)} (no sharing: {_p95(alone)})",
                )
            )
    findings.append(
        Finding(
            None,
            f"utilisation {rec.utilisation:.1%} (no sharing: {none.utilisation:.1%}, "
            f"full sharing: {full.utilisation:.1%})",
        )
    )
    return findings

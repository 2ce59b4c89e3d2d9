"""Owns the emulator's SageMaker training plans: offerings, purchases, status on its clock.

What AWS documents (docs/cost.md): a plan is ``Pending`` until paid, then ``Scheduled`` until
its start, ``Active`` in its window and ``Expired`` after it. The emulator pays at once, so a
new plan is ``Scheduled`` (or ``Active`` when its window has begun). Offerings answer any
search with one offering of exactly what was asked; its fee is ``instances x hours x
plan_rate_usd`` (a made-up rate, :data:`DEFAULT_PLAN_RATE_USD`: the emulator knows no prices).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from quota_constructs.local.state.arns import Account
from quota_constructs.local.state.errors import ResourceInUse, ResourceNotFound
from quota_constructs.model import TrainingPlanSpec, utc_text

DEFAULT_PLAN_RATE_USD = 1.0
HOUR_S = 3600.0


@dataclass(frozen=True)
class Offering:
    """One training plan offering (what a search answered)."""

    offering_id: str
    instance_type: str
    instance_count: int
    start_s: float
    """Epoch seconds."""
    duration_hours: int
    upfront_fee: float

    @property
    def end_s(self) -> float:
        return self.start_s + self.duration_hours * HOUR_S


@dataclass(frozen=True)
class Plan:
    """A bought plan: its name, ARN and offering, and when it was bought (epoch seconds)."""

    name: str
    arn: str
    offering: Offering
    created_s: float

    def status(self, epoch_s: float) -> str:
        """``Scheduled`` before the window, ``Active`` in it, ``Expired`` after it."""
        if epoch_s < self.offering.start_s:
            return "Scheduled"
        return "Active" if epoch_s < self.offering.end_s else "Expired"


MAX_OFFERINGS = 1_000
"""Offerings kept (the most recent): each search makes some, so a client searching in a loop
would grow the emulator without bound; an offering dropped answers ``ResourceNotFound``, as an
expired one does on AWS (how long AWS keeps an offering: UNCONFIRMED)."""


class TrainingPlans:
    """Offerings made and plans bought in one emulated account."""

    def __init__(self, account: Account, *, plan_rate_usd: float = DEFAULT_PLAN_RATE_USD) -> None:
        self.account = account
        self.plan_rate_usd = plan_rate_usd
        self.offerings: dict[str, Offering] = {}
        self.plans: dict[str, Plan] = {}

    def offer(
        self, instance_type: str, instance_count: int, start_s: float, duration_hours: int
    ) -> Offering:
        """The offering of exactly this capacity (the same request, the same offering id)."""
        key = f"{instance_type}/{instance_count}/{start_s}/{duration_hours}"
        offering_id = "tpo-" + hashlib.sha256(key.encode()).hexdigest()[:24]
        fee = instance_count * duration_hours * self.plan_rate_usd
        offering = Offering(
            offering_id, instance_type, instance_count, start_s, duration_hours, fee
        )
        self.offerings.pop(offering_id, None)  # the most recent last
        self.offerings[offering_id] = offering
        while len(self.offerings) > MAX_OFFERINGS:
            del self.offerings[next(iter(self.offerings))]
        return offering

    def create(self, name: str, offering_id: str, *, now_s: float) -> Plan:
        """Buy offering ``offering_id`` as plan ``name``."""
        if name.lower() in {n.lower() for n in self.plans}:
            raise ResourceInUse(
                f"TrainingPlanName: a training plan named {name!r} already exists; "
                "fix: choose another name"
            )
        offering = self.offerings.get(offering_id)
        if offering is None:
            raise ResourceNotFound(
                f"TrainingPlanOfferingId: no offering {offering_id!r} (or no longer: the "
                f"emulator keeps the {MAX_OFFERINGS} most recent); fix: use an id that "
                "SearchTrainingPlanOfferings returned lately"
            )
        plan = Plan(name, self.account.training_plan(name), offering, now_s)
        self.plans[name] = plan
        return plan

    def add_bought(self, spec: TrainingPlanSpec, *, now_s: float) -> Plan:
        """An organisation file's named plan, as if bought already (provisioning)."""
        offering = self.offer(
            spec.instance_type, spec.instance_count, spec.start_s, spec.duration_hours
        )
        existing = self.plans.get(spec.name)
        if existing is not None and existing.offering == offering:
            return existing
        return self.create(spec.name, offering.offering_id, now_s=now_s)

    def get(self, name: str) -> Plan:
        """The plan called ``name`` (or whose ARN is ``name``)."""
        for plan in self.plans.values():
            if name in (plan.name, plan.arn):
                return plan
        raise ResourceNotFound(f"Training plan {name!r} not found.")

    def spec_of(self, name: str) -> TrainingPlanSpec:
        """The plan called ``name`` (or whose ARN is ``name``) as the model's named plan."""
        offering = self.get(name).offering
        return TrainingPlanSpec(
            name=self.get(name).name,
            instance_type=offering.instance_type,
            instance_count=offering.instance_count,
            start=utc_text(offering.start_s),
            duration_hours=offering.duration_hours,
        )

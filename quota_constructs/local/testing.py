"""In-process emulator for tests and demos (docs/emulator.md, in tests).

::

    with EmulatorServer(org_files=[SEED_DEMO]) as emu:
        batch = boto3.client("batch", endpoint_url=emu.endpoint_url, region_name="us-east-1")
        ...
        emu.advance(600)          # virtual clock: ten minutes pass, jobs progress
        emu.request_counts        # {"SubmitServiceJob": 3, ...}

The server listens on a free loopback port in a daemon thread and stops on exit. Clients need
dummy credentials (``emu.client("batch")`` builds one with them).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

import boto3
from botocore.config import Config

from quota_constructs.config import SEED_DEMO as SEED_DEMO  # re-exported: the default organisation
from quota_constructs.contracts import PRICE_CACHE_VARIABLE
from quota_constructs.local.emulator import Emulator
from quota_constructs.local.faults import FaultPlan
from quota_constructs.local.handlers.submit_request import PayloadValidation, PlanOwnership
from quota_constructs.local.provision import ProvisionedOrganisation, ResourceNaming
from quota_constructs.local.state.arns import Account
from quota_constructs.local.state.clock import EmulatorClock, RealTimeClock, VirtualClock
from quota_constructs.local.state.job_service import ClientTokenMode, DispatchMode, JobRetention
from quota_constructs.local.wire.server import RunningServer, ServerLimits, start_server
from quota_constructs.model import PLAN_STOP_BEFORE_END_S
from quota_constructs.scheduling import SchedulerOptions

DUMMY_CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing"}
SANDBOX_KEPT = frozenset({"AWS_DATA_PATH"})
"""``AWS_*`` settings a sandbox keeps: where botocore finds extra service models, which says
neither who signs nor where requests go. Every other ``AWS_*`` variable is unset."""


class EmulatorServer:
    """The emulator on a free loopback port in a background thread; a context manager.

    ``org_files`` are provisioned at start as their stacks would be. ``clock="virtual"`` (time
    moves only with :meth:`advance`) or ``"wall"`` (real time times ``speed``). ``faults``
    injects throttling / 5xx answers and lost responses (see :class:`FaultPlan`). ``options``
    tune the scheduler core (delays, choices); job ids are random UUIDs, ``seed`` makes them
    reproducible; ``statusReason`` of waiting jobs is empty as AWS leaves it (MISCONFIGURATION
    reasons are always reported) unless ``explain_pending=True`` gives the core's reason;
    ``limits`` bound what clients may hold (timeouts, connections, body size:
    :class:`~.wire.server.ServerLimits`).
    ``client_token_mode="replay"`` answers a repeated ``clientToken`` with the first job instead
    of rejecting it as AWS documents. ``dispatch="immediate"`` dispatches a job before the next
    request instead of on the next scheduler tick (:class:`~.state.job_service.DispatchMode`).
    ``payload_validation="strict"`` refuses a submit whose payload names no schedulable instance
    type or count instead of failing its job (:class:`~.handlers.submit_request.PayloadValidation`).
    ``plan_ownership="passthrough"`` accepts a payload naming another organisation's training
    plan, as AWS does, instead of refusing it (:class:`~.handlers.submit_request.PlanOwnership`).
    ``naming="generated"`` names queues, environments and policies as CloudFormation would
    (unguessable; :class:`~.provision.ResourceNaming`) instead of ``<org>-queue``...
    ``retention``: when finished jobs expire (:class:`~.state.job_service.JobRetention`).
    ``start_epoch``: the virtual clock's time 0 in epoch seconds (default: now); a fixed one
    makes share calendars, which follow the clock's UTC weekdays and hours, flip at the same
    emulated times on every run.
    """

    def __init__(
        self,
        org_files: Iterable[str | Path] = (),
        *,
        clock: Literal["virtual", "wall"] = "virtual",
        speed: float = 1.0,
        faults: FaultPlan | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        options: SchedulerOptions | None = None,
        seed: int | None = None,
        explain_pending: bool = False,
        account: Account | None = None,
        limits: ServerLimits | None = None,
        client_token_mode: ClientTokenMode | str = ClientTokenMode.REJECT,
        dispatch: DispatchMode | str = DispatchMode.TICK,
        payload_validation: PayloadValidation | str = PayloadValidation.PASSTHROUGH,
        plan_ownership: PlanOwnership | str = PlanOwnership.REFUSE,
        naming: ResourceNaming | str = ResourceNaming.FIXED,
        retention: JobRetention | None = None,
        plan_stop_before_end_s: float = PLAN_STOP_BEFORE_END_S,
        start_epoch: float | None = None,
    ) -> None:
        if clock not in ("virtual", "wall"):
            raise ValueError(f"clock must be 'virtual' or 'wall' (got {clock!r})")
        if start_epoch is not None and clock != "virtual":
            raise ValueError(
                f"start_epoch={start_epoch} is the virtual clock's time 0: "
                "use it with clock='virtual', or leave it out"
            )
        self._clock: EmulatorClock = (
            VirtualClock(start_epoch=start_epoch)
            if clock == "virtual"
            else RealTimeClock(speed=speed)
        )
        self.emulator = Emulator(
            clock=self._clock,
            faults=faults,
            account=account,
            options=options,
            seed=seed,
            explain_pending=explain_pending,
            client_token_mode=ClientTokenMode(client_token_mode),
            dispatch=DispatchMode(dispatch),
            payload_validation=PayloadValidation(payload_validation),
            plan_ownership=PlanOwnership(plan_ownership),
            naming=ResourceNaming(naming),
            retention=retention,
            plan_stop_before_end_s=plan_stop_before_end_s,
        )
        self.org_files = [Path(p) for p in org_files]
        self.host = host
        self.port = port
        self.limits = limits
        self.organisations: dict[str, ProvisionedOrganisation] = {}
        self._server: RunningServer | None = None

    # --- lifecycle ---------------------------------------------------------------------------

    def start(self) -> EmulatorServer:
        """Provision the organisation files, then serve; returns self."""
        for path in self.org_files:
            done = self.emulator.provision_file(path)
            self.organisations[done.name] = done
        self._server = start_server(
            self.emulator, host=self.host, port=self.port, limits=self.limits
        )
        return self

    def stop(self) -> None:
        """Stop serving and close the listening socket (idempotent)."""
        if self._server is not None:
            self._server.shutdown()
            self._server = None

    def __enter__(self) -> EmulatorServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # --- use ---------------------------------------------------------------------------------

    @property
    def endpoint_url(self) -> str:
        """``http://host:port`` for ``endpoint_url`` / ``AWS_ENDPOINT_URL_BATCH`` / ``_SSM`` /
        ``_SAGEMAKER`` / ``_STS``."""
        if self._server is None:
            raise RuntimeError("the emulator is not running; use it inside 'with EmulatorServer()'")
        return f"http://{self.host}:{self._server.port}"

    @property
    def env(self) -> dict[str, str]:
        """Environment variables that point unmodified AWS clients at this emulator."""
        return {
            "AWS_ENDPOINT_URL_BATCH": self.endpoint_url,
            "AWS_ENDPOINT_URL_SSM": self.endpoint_url,
            "AWS_ENDPOINT_URL_SAGEMAKER": self.endpoint_url,
            "AWS_ENDPOINT_URL_STS": self.endpoint_url,
            "AWS_ENDPOINT_URL_SERVICE_QUOTAS": self.endpoint_url,
            "AWS_ACCESS_KEY_ID": DUMMY_CREDENTIALS["aws_access_key_id"],
            "AWS_SECRET_ACCESS_KEY": DUMMY_CREDENTIALS["aws_secret_access_key"],
            "AWS_DEFAULT_REGION": self.emulator.account.region,
        }

    def sandbox_env(self, files_dir: Path) -> dict[str, str]:
        """Every AWS setting of a sandbox on this emulator, for an environment holding no other
        ``AWS_*`` variable (but :data:`SANDBOX_KEPT`).

        :attr:`env` plus ``AWS_ENDPOINT_URL`` (every service's endpoint: a service the emulator
        does not serve is refused, never sent to AWS) and ``AWS_ENDPOINT_URL_PRICING`` (the
        Price List API refused with a message naming ``--prices FILE``), ``AWS_REGION``,
        ``AWS_SHARED_CREDENTIALS_FILE`` and ``AWS_CONFIG_FILE`` pointed at empty files written
        in ``files_dir`` (no profile, no SSO or role of the user's), and
        ``AWS_EC2_METADATA_DISABLED`` (no instance credentials), and the price cache in
        ``files_dir`` (``QUOTA_PRICE_CACHE``: no price the user's machine fetched is read).
        """
        files_dir.mkdir(parents=True, exist_ok=True)
        credentials, config = files_dir / "credentials", files_dir / "config"
        for path in (credentials, config):
            path.write_text("", encoding="utf-8")
        return {
            **self.env,
            "AWS_ENDPOINT_URL": self.endpoint_url,
            "AWS_ENDPOINT_URL_PRICING": self.endpoint_url,
            "AWS_REGION": self.emulator.account.region,
            "AWS_SHARED_CREDENTIALS_FILE": str(credentials),
            "AWS_CONFIG_FILE": str(config),
            "AWS_EC2_METADATA_DISABLED": "true",
            PRICE_CACHE_VARIABLE: str(files_dir / "price-cache"),
        }

    @property
    def bytes_received(self) -> int:
        """Bytes the server has read from clients since start (headers and bodies)."""
        if self._server is None:
            raise RuntimeError("the emulator is not running; use it inside 'with EmulatorServer()'")
        return self._server.bytes_received

    @property
    def now(self) -> float:
        """Emulator time in seconds since start."""
        return self._clock.now()

    def advance(self, seconds: float) -> float:
        """Virtual clock only: let ``seconds`` pass and process what falls due; returns now."""
        if not isinstance(self._clock, VirtualClock):
            raise RuntimeError("advance() needs clock='virtual'; a wall clock moves by itself")
        now = self._clock.advance(seconds)
        self.emulator.advance_to_now()
        return now

    def explain(self, job_id: str) -> dict[str, Any]:
        """Beyond AWS: why a job waits (typed) and every preemption (rule, preemptor, borrowing)."""
        return self.emulator.explain(job_id)

    @property
    def request_counts(self) -> dict[str, int]:
        """Requests received per operation name since start."""
        return self.emulator.request_counts

    @property
    def fault_counts(self) -> dict[str, dict[str, int]]:
        """Faults injected since start: operation -> kind (throttle, 5xx, lost) -> count."""
        return self.emulator.fault_counts

    @property
    def callers(self) -> dict[str, dict[str, int]]:
        """Requests answered per caller ARN (an assumed role's session, or the account's root
        user for keys the emulator did not issue) and operation."""
        return self.emulator.identities.calls()

    def client(self, service: str = "batch", **config: Any) -> Any:
        """A boto3 client for ``service`` (``batch``, ``ssm``, ``sagemaker`` or ``sts``) pointed at
        this emulator.

        ``config`` goes to :class:`botocore.config.Config` (e.g. ``retries={"mode": "standard"}``).
        """
        return boto3.session.Session().client(
            service,
            endpoint_url=self.endpoint_url,
            region_name=self.emulator.account.region,
            config=Config(**config) if config else None,
            **DUMMY_CREDENTIALS,
        )

    def queue_arn(self, organisation: str) -> str:
        """ARN of a provisioned organisation's job queue."""
        return self.organisation(organisation).job_queue_arn

    def organisation(self, name: str) -> ProvisionedOrganisation:
        try:
            return self.organisations[name]
        except KeyError:
            known = ", ".join(sorted(self.organisations)) or "none"
            raise KeyError(
                f"organisation {name!r} is not provisioned (provisioned: {known})"
            ) from None

    def provision(self, path: str | Path) -> ProvisionedOrganisation:
        """Provision another organisation file while running."""
        done = self.emulator.provision_file(path)
        self.organisations[done.name] = done
        return done

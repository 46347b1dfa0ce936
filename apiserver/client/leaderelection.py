"""Leader election on ``coordination.k8s.io/v1`` Leases, after client-go's ``tools/leaderelection``.

Several processes may run the same component against one cluster (two ``gangplane serve`` on one
etcd); only the holder of the component's Lease acts. The semantics are client-go's:

* a candidate tries at once, then every ``retry_period`` (jittered by ``JITTER_FACTOR``); a Lease
  that does not exist is created, so the first process of a fresh cluster leads immediately;
* a Lease held by someone else is taken over only after it has been seen *unchanged* for its
  ``leaseDurationSeconds``, measured on this process's own (monotonic) clock from the moment the
  change was observed, never from the ``renewTime`` written by another machine — which is what
  makes the scheme tolerant of clock skew;
* every write is an ``update`` carrying the ``resourceVersion`` last read, so two candidates
  racing for an expired Lease cannot both win (the loser gets 409 Conflict);
* the leader renews every ``retry_period``; when it cannot renew for ``renew_deadline`` it stops
  leading (``renew_deadline < lease_duration``, so it stops before anyone else may take over);
* with ``release_on_cancel`` a leader that is stopped gracefully empties ``holderIdentity``
  (``leaseDurationSeconds: 1``), so a successor need not wait out the lease.

Unlike kube's components, which exit when they lose the lease and are restarted by their
supervisor, :class:`LeaderElector` re-enters candidate mode: it calls ``on_stopped_leading`` (the
composition root stops the guarded components) and competes again. A component restarted that
way resumes from the stored state, as a restarted process would.

Every wait goes through the injected :class:`~apiserver.meta.Clock` (monotonic time): a test
drives elections with a :class:`~apiserver.meta.FakeClock` by stepping it and calling
:meth:`LeaderElector.poke`, without real sleeps. The events ("<identity> became leader",
"<identity> stopped leading", reason ``LeaderElection`` on the Lease) and log lines are kube's.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import re
import socket
import uuid
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any

from prometheus_client import CollectorRegistry, Gauge

from apiserver import errors
from apiserver.api.types import Obj
from apiserver.client.events import NORMAL, EventRecorder
from apiserver.client.interface import LEASES, Client
from apiserver.meta import Clock, rfc3339_micro

log = logging.getLogger("gangplane.leaderelection")

#: client-go's ``JitterFactor``: a candidate waits ``retry_period * (1 + rand * 1.2)`` between tries
JITTER_FACTOR = 1.2
#: component-base's defaults (``--leader-elect-lease-duration`` … of every kube component)
DEFAULT_LEASE_DURATION = 15.0
DEFAULT_RENEW_DEADLINE = 10.0
DEFAULT_RETRY_PERIOD = 2.0
#: where kube's components keep their Leases (``--leader-elect-resource-namespace``)
LEASE_NAMESPACE = "kube-system"
#: the Lease names (``--leader-elect-resource-name``) of kube's components and of the node agent
KUBE_CONTROLLER_MANAGER_LEASE = "kube-controller-manager"
KUBE_SCHEDULER_LEASE = "kube-scheduler"
NODE_AGENT_LEASE = "gangplane-node-agent"
#: longest real wait between clock checks, so a clock that jumps (FakeClock, NTP) is noticed
MAX_SLEEP = 1.0


class LeaderElectionError(ValueError):
    """An invalid :class:`LeaderElectionConfig` (client-go ``NewLeaderElector``'s messages)."""


@dataclass(frozen=True)
class LeaderElectionConfig:
    """Durations in seconds: component-base's ``LeaderElectionConfiguration``."""

    lease_duration: float = DEFAULT_LEASE_DURATION
    renew_deadline: float = DEFAULT_RENEW_DEADLINE
    retry_period: float = DEFAULT_RETRY_PERIOD
    #: give the lease up on a graceful stop (after the guarded components have stopped)
    release_on_cancel: bool = True

    def validate(self) -> None:
        """Raise :class:`LeaderElectionError` with client-go's message for an unusable combination."""
        if self.lease_duration <= self.renew_deadline:
            raise LeaderElectionError("leaseDuration must be greater than renewDeadline")
        if self.renew_deadline <= JITTER_FACTOR * self.retry_period:
            raise LeaderElectionError("renewDeadline must be greater than retryPeriod*JitterFactor")
        if self.lease_duration < 1:
            raise LeaderElectionError("leaseDuration must be greater than zero")
        if self.renew_deadline <= 0:
            raise LeaderElectionError("renewDeadline must be greater than zero")
        if self.retry_period <= 0:
            raise LeaderElectionError("retryPeriod must be greater than zero")


def new_identity(hostname: str | None = None) -> str:
    """kube's holder identity: ``<hostname>_<uuid>`` (unique per process start)."""
    return f"{hostname or socket.gethostname()}_{uuid.uuid4()}"


_DURATION = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")
_UNIT = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(text: str) -> float:
    """Go's ``time.ParseDuration`` (``15s``, ``1m30s``, ``500ms``) in seconds; ``ValueError`` otherwise."""
    s = text.strip()
    sign = -1.0 if s.startswith("-") else 1.0
    body = s.lstrip("+-")
    if body == "0":
        return 0.0
    pos, total = 0, 0.0
    while pos < len(body):
        m = _DURATION.match(body, pos)
        if m is None:
            break
        total += float(m.group(1)) * _UNIT[m.group(2)]
        pos = m.end()
    if not body or pos != len(body):
        raise ValueError(f'time: invalid duration "{text}"')
    return sign * total


# ---------------------------------------------------------------------------------- the record
@dataclass(frozen=True)
class LeaderElectionRecord:
    """client-go's ``LeaderElectionRecord``: what a Lease's spec says about the election.

    Times are kept as the MicroTime strings read or written: the elector compares records only
    to notice *that* the holder wrote again, never to do arithmetic on another machine's clock.
    """

    holder_identity: str = ""
    lease_duration_seconds: int = 0
    acquire_time: str = ""
    renew_time: str = ""
    leader_transitions: int = 0

    @classmethod
    def from_spec(cls, spec: Obj) -> LeaderElectionRecord:
        def num(key: str) -> int:
            v = spec.get(key)
            return v if isinstance(v, int) and not isinstance(v, bool) else 0

        def text(key: str) -> str:
            v = spec.get(key)
            return v if isinstance(v, str) else ""

        return cls(
            holder_identity=text("holderIdentity"),
            lease_duration_seconds=num("leaseDurationSeconds"),
            acquire_time=text("acquireTime"),
            renew_time=text("renewTime"),
            leader_transitions=num("leaseTransitions"),
        )

    def to_spec(self) -> Obj:
        """``LeaderElectionRecordToLeaseSpec``: every field written, an empty holder included."""
        spec: Obj = {
            "holderIdentity": self.holder_identity,
            "leaseDurationSeconds": self.lease_duration_seconds,
            "leaseTransitions": self.leader_transitions,
        }
        if self.acquire_time:
            spec["acquireTime"] = self.acquire_time
        if self.renew_time:
            spec["renewTime"] = self.renew_time
        return spec


class LeaseLock:
    """client-go's ``resourcelock.LeaseLock``: one Lease read and written through a client.

    :meth:`update` writes over the Lease last read or written (its ``resourceVersion`` included),
    so a write based on a stale read fails with 409 Conflict instead of overwriting a rival.
    """

    def __init__(
        self,
        client: Client,
        name: str,
        identity: str,
        namespace: str = LEASE_NAMESPACE,
        recorder: EventRecorder | None = None,
    ) -> None:
        self.client = client
        self.name = name
        self.namespace = namespace
        self.identity = identity
        self.recorder = recorder
        self.lease: Obj | None = None

    def describe(self) -> str:
        return f"{self.namespace}/{self.name}"

    async def get(self) -> LeaderElectionRecord:
        """The current record; raises the client's 404 when the Lease does not exist."""
        self.lease = await self.client.get(LEASES, self.name, self.namespace)
        return LeaderElectionRecord.from_spec(self.lease.get("spec") or {})

    async def create(self, record: LeaderElectionRecord) -> None:
        body = {
            "apiVersion": LEASES.api_version,
            "kind": "Lease",
            "metadata": {"name": self.name, "namespace": self.namespace},
            "spec": record.to_spec(),
        }
        self.lease = await self.client.create(LEASES, body, self.namespace)

    async def update(self, record: LeaderElectionRecord) -> None:
        if self.lease is None:
            raise RuntimeError("lease not initialized, call get or create first")
        body = {**self.lease, "spec": record.to_spec()}
        self.lease = await self.client.update(LEASES, body, self.namespace)

    def record_event(self, what: str) -> None:
        """An Event on the Lease: ``"<identity> became leader"`` (reason ``LeaderElection``)."""
        if self.recorder is None or self.lease is None:
            return
        subject = {**self.lease, "apiVersion": LEASES.api_version, "kind": "Lease"}
        self.recorder.event(subject, NORMAL, "LeaderElection", f"{self.identity} {what}")


# ---------------------------------------------------------------------------------- metrics
_MASTER_STATUS: weakref.WeakKeyDictionary[CollectorRegistry, Gauge] = weakref.WeakKeyDictionary()


def master_status_gauge(registry: CollectorRegistry | None) -> Gauge | None:
    """client-go's ``leader_election_master_status{name}`` (1 while leading), once per registry."""
    if registry is None:
        return None
    gauge = _MASTER_STATUS.get(registry)
    if gauge is None:
        gauge = Gauge(
            "leader_election_master_status",
            "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, "
            "1 indicates master. 'name' is the string used to identify the lease. Please make sure "
            "to group by name.",
            ["name"],
            registry=registry,
        )
        _MASTER_STATUS[registry] = gauge
    return gauge


# ---------------------------------------------------------------------------------- the elector
Callback = Callable[[], Awaitable[None]]


class LeaderElector:
    """Competes for one Lease; runs ``on_started_leading`` while it holds it (see module docstring).

    ``await start()`` makes the first attempt before returning (and, if it wins, has started the
    guarded work), so a lone process is leading as soon as it is up; the rest runs in a task until
    ``await stop()``. ``on_new_leader(identity)`` is told each newly observed holder.
    """

    def __init__(
        self,
        lock: LeaseLock,
        config: LeaderElectionConfig,
        clock: Clock,
        *,
        on_started_leading: Callback,
        on_stopped_leading: Callback,
        on_new_leader: Callable[[str], None] | None = None,
        metrics_registry: CollectorRegistry | None = None,
        rng: random.Random | None = None,
    ) -> None:
        config.validate()
        self.lock = lock
        self.config = config
        self.clock = clock
        self.name = lock.name
        self._on_started = on_started_leading
        self._on_stopped = on_stopped_leading
        self._on_new_leader = on_new_leader
        self._rng = rng or random.Random()
        self._gauge = master_status_gauge(metrics_registry)
        if self._gauge is not None:
            self._gauge.labels(self.name).set(0)
        self.observed_record = LeaderElectionRecord()
        #: monotonic time the observed record last changed (the lease's expiry is counted from it)
        self.observed_time = 0.0
        self._reported_leader = ""
        self._leading = False
        self._stopping = False
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        #: how many times this elector started leading, and how many acquire/renew rounds it has
        #: finished (a round: one attempt and what it led to — work started or stopped)
        self.terms = 0
        self.rounds = 0
        self._round_done = asyncio.Event()
        self._last_attempt = 0.0

    # ------------------------------------------------------------------ state
    @property
    def identity(self) -> str:
        return self.lock.identity

    def is_leader(self) -> bool:
        """Whether the last observed record names this elector (client-go ``IsLeader``)."""
        return self.observed_record.holder_identity == self.identity

    @property
    def leading(self) -> bool:
        """Whether the guarded work is running (this elector won and has not stopped leading)."""
        return self._leading

    def leader(self) -> str:
        """The last observed holder (``GetLeader``); empty when none was seen."""
        return self.observed_record.holder_identity

    def poke(self) -> None:
        """Re-check the clock now (after stepping a fake clock)."""
        self._wake.set()

    async def wait_rounds(self, n: int) -> None:
        """Wait until :attr:`rounds` reaches ``n`` (tests that step a fake clock wait on this)."""
        while self.rounds < n:
            self._round_done.clear()
            await self._round_done.wait()

    def _finish_round(self) -> None:
        self.rounds += 1
        self._round_done.set()

    def _lease_valid(self, now: float) -> bool:
        return self.observed_time + self.observed_record.lease_duration_seconds > now

    def _observe(self, record: LeaderElectionRecord) -> None:
        self.observed_record = record
        self.observed_time = self.clock.monotonic()

    # ------------------------------------------------------------------ one attempt
    async def try_acquire_or_renew(self) -> bool:
        """One acquire-or-renew round (client-go ``tryAcquireOrRenew``); True when we hold the lease."""
        try:
            return await self._try_acquire_or_renew()
        finally:
            self._last_attempt = self.clock.monotonic()

    async def _try_acquire_or_renew(self) -> bool:
        wall = rfc3339_micro(self.clock.now())
        record = LeaderElectionRecord(
            holder_identity=self.identity,
            lease_duration_seconds=max(int(self.config.lease_duration), 1),
            acquire_time=wall,
            renew_time=wall,
        )
        desc = self.lock.describe()
        # 1. fast path: the leader renews over the record it wrote last time
        if self.is_leader() and self._lease_valid(self.clock.monotonic()):
            old = self.observed_record
            mine = replace(record, acquire_time=old.acquire_time, leader_transitions=old.leader_transitions)
            try:
                await self.lock.update(mine)
            except Exception as e:  # noqa: BLE001 - any failure falls back to the slow path
                log.error("Failed to update lock optimistically: %s, falling back to slow path", _reason(e))
            else:
                self._observe(mine)
                return True
        # 2. obtain or create the record
        try:
            old = await self.lock.get()
        except errors.StatusError as e:
            if not errors.is_not_found(e):
                log.error("error retrieving resource lock %s: %s", desc, e.message)
                return False
            try:
                await self.lock.create(record)
            except Exception as ce:  # noqa: BLE001 - a lost create race or a failing server
                log.error("error initially creating leader election record: %s", _reason(ce))
                return False
            self._observe(record)
            return True
        except Exception as e:  # noqa: BLE001 - transport errors: try again next period
            log.error("error retrieving resource lock %s: %s", desc, _reason(e))
            return False
        # 3. record obtained: is it someone else's, still valid?
        if old != self.observed_record:
            self._observe(old)
        if old.holder_identity and self._lease_valid(self.clock.monotonic()) and not self.is_leader():
            log.debug("lock is held by %s and has not yet expired", old.holder_identity)
            return False
        # 4. take it over (or renew over the slow path)
        if self.is_leader():
            record = replace(record, acquire_time=old.acquire_time, leader_transitions=old.leader_transitions)
        else:
            record = replace(record, leader_transitions=old.leader_transitions + 1)
        try:
            await self.lock.update(record)
        except Exception as e:  # noqa: BLE001 - a rival won the race (409) or the server failed
            log.error("Failed to update lock: %s", _reason(e))
            return False
        self._observe(record)
        return True

    async def release(self) -> bool:
        """Give the lease up if we hold it (client-go ``release``): empty holder, duration 1 s."""
        if not self.is_leader():
            return True
        try:
            await self.lock.get()
        except Exception as e:  # noqa: BLE001
            log.error("error retrieving resource lock %s: %s", self.lock.describe(), _reason(e))
            return False
        if not self.is_leader():
            return True
        wall = rfc3339_micro(self.clock.now())
        record = LeaderElectionRecord(
            lease_duration_seconds=1,
            acquire_time=wall,
            renew_time=wall,
            leader_transitions=self.observed_record.leader_transitions,
        )
        try:
            await self.lock.update(record)
        except Exception as e:  # noqa: BLE001
            log.error("Failed to release lease %s: %s", self.lock.describe(), _reason(e))
            return False
        self._observe(record)
        return True

    def _report_transition(self) -> None:
        holder = self.observed_record.holder_identity
        if holder == self._reported_leader:
            return
        self._reported_leader = holder
        if holder and holder != self.identity:
            log.info("new leader elected for lease %s: %s", self.lock.describe(), holder)
        if self._on_new_leader is not None:
            self._on_new_leader(holder)

    # ------------------------------------------------------------------ loops
    async def _sleep(self, seconds: float) -> None:
        """Wait until ``seconds`` after the last attempt ended, on the injected clock (client-go's
        sliding period), or until :meth:`stop`; a :meth:`poke` re-checks the clock at once."""
        deadline = self._last_attempt + seconds
        loop = asyncio.get_running_loop()
        while not self._stopping:
            remaining = deadline - self.clock.monotonic()
            if remaining <= 0:
                return
            self._wake.clear()
            handle = loop.call_later(min(remaining, MAX_SLEEP), self._wake.set)
            try:
                await self._wake.wait()
            finally:
                handle.cancel()

    async def _acquire(self, *, first_try_done: bool) -> bool:
        """Try until we hold the lease (True) or are stopped (False); the first try is immediate."""
        if not first_try_done:
            log.info("attempting to acquire leader lease %s...", self.lock.describe())
        tried = first_try_done
        while not self._stopping:
            if tried:
                await self._sleep(self.config.retry_period * (1 + self._rng.random() * JITTER_FACTOR))
                if self._stopping:
                    return False
            tried = True
            ok = await self.try_acquire_or_renew()
            self._report_transition()
            if ok:
                return True
            log.debug("failed to acquire lease %s", self.lock.describe())
            self._finish_round()
        return False

    async def _start_leading(self) -> None:
        self.lock.record_event("became leader")
        if self._gauge is not None:
            self._gauge.labels(self.name).set(1)
        log.info("successfully acquired lease %s", self.lock.describe())
        self._leading = True
        self.terms += 1
        await self._on_started()

    async def _stop_leading(self) -> None:
        """Stop the guarded work (the lease itself is left as it is)."""
        if not self._leading:
            return
        self._leading = False
        if self._gauge is not None:
            self._gauge.labels(self.name).set(0)
        try:
            await self._on_stopped()
        finally:
            self.lock.record_event("stopped leading")

    async def _renew(self) -> bool:
        """Renew every ``retry_period``; False once a renewal has failed for ``renew_deadline``."""
        while not self._stopping:
            await self._sleep(self.config.retry_period)
            started = self.clock.monotonic()
            while not self._stopping:
                ok = await self.try_acquire_or_renew()
                self._report_transition()
                self._finish_round()
                if ok:
                    log.debug("successfully renewed lease %s", self.lock.describe())
                    break
                await self._sleep(self.config.retry_period)
                if not self._stopping and self.clock.monotonic() - started >= self.config.renew_deadline:
                    log.info(
                        "failed to renew lease %s: timed out waiting for the condition", self.lock.describe()
                    )
                    return False
        return True

    async def _run(self, leading: bool) -> None:
        tried = True  # start() made the first attempt
        while not self._stopping:
            if not leading:
                if not await self._acquire(first_try_done=tried):
                    return
                try:
                    await self._start_leading()
                except Exception:
                    log.exception("starting the work guarded by lease %s failed", self.lock.describe())
                    await self._stop_leading()
                    tried = True
                    continue
                finally:
                    self._finish_round()
            leading, tried = False, False
            if await self._renew():
                return  # stopping: stop() stops the work and releases
            # lost the lease: stop acting, then compete again (kube's components exit instead)
            log.error("leaderelection lost for lease %s", self.lock.describe())
            try:
                await self._stop_leading()
            except Exception:
                log.exception("stopping the work guarded by lease %s failed", self.lock.describe())

    # ------------------------------------------------------------------ lifecycle
    async def start(self) -> None:
        """Make the first attempt now (starting the work if it wins), then keep going in a task."""
        self._stopping = False
        log.info("attempting to acquire leader lease %s...", self.lock.describe())
        ok = await self.try_acquire_or_renew()
        self._report_transition()
        if ok:
            await self._start_leading()
        self._finish_round()
        self._task = asyncio.create_task(self._run(ok), name=f"leader-election-{self.name}")

    async def stop(self, *, release: bool | None = None) -> None:
        """Stop competing: stop the guarded work, then release the lease (``release_on_cancel``).

        ``release=False`` leaves the Lease as it is, as a process that is killed would.
        """
        self._stopping = True
        self._wake.set()
        if self._task is not None:
            task, self._task = self._task, None
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self._stop_leading()
        if self.config.release_on_cancel if release is None else release:
            await self.release()
        if self.lock.recorder is not None:
            await self.lock.recorder.stop()


def _reason(e: BaseException) -> str:
    message: Any = getattr(e, "message", None)
    return message if isinstance(message, str) and message else (str(e) or type(e).__name__)

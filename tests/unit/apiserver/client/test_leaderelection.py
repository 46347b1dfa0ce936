"""Leader election on Leases (apiserver/client/leaderelection.py), driven by a FakeClock.

Candidates share one in-process API; time only moves when a test steps the clock and pokes the
electors, and a test waits on an elector's attempt counter or on the Lease (a watch), never sleeps.
"""

from __future__ import annotations

import asyncio
import random
import re
from collections.abc import AsyncIterator
from typing import Any

import pytest

from apiserver import errors
from apiserver.client.events import EventRecorder
from apiserver.client.interface import EVENTS, LEASES, Client
from apiserver.client.leaderelection import (
    LeaderElectionConfig,
    LeaderElectionError,
    LeaderElectionRecord,
    LeaderElector,
    LeaseLock,
    new_identity,
    parse_duration,
)
from apiserver.meta import FakeClock, parse_time
from gangplane.controlplane import ControlPlane, ControlPlaneOptions
from tests.helpers import wait_for_list, wait_for_object

pytestmark = pytest.mark.anyio
NS = "kube-system"
LEASE = "kube-scheduler"
MICRO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")


@pytest.fixture
async def env() -> AsyncIterator[tuple[ControlPlane, FakeClock]]:
    clock = FakeClock()
    plane = ControlPlane(ControlPlaneOptions(clock=clock, client_bookmark_interval=0.2))
    try:
        yield plane, clock
    finally:
        await plane.stop()


class NoJitter(random.Random):
    """A candidate's retry period without client-go's jitter, so a test knows when it retries."""

    def random(self) -> float:
        return 0.0


class Candidate:
    """One elector plus a record of what its callbacks saw."""

    def __init__(self, cp: ControlPlane, clock: FakeClock, identity: str, **config: Any) -> None:
        client = cp.client(LEASE)
        self.lock = LeaseLock(client, LEASE, identity, recorder=EventRecorder(client, LEASE, clock=clock))
        self.log: list[str] = []
        self.leaders: list[str] = []

        async def started() -> None:
            self.log.append("started")

        async def stopped() -> None:
            self.log.append("stopped")

        self.elector = LeaderElector(
            self.lock,
            LeaderElectionConfig(**config),
            clock,
            on_started_leading=started,
            on_stopped_leading=stopped,
            on_new_leader=self.leaders.append,
            metrics_registry=cp.metrics_registry,
            rng=NoJitter(),
        )

    async def step(self, clock: FakeClock, seconds: float) -> None:
        """Step the clock and wait for this elector's next acquire/renew round."""
        n = self.elector.rounds
        clock.step(seconds)
        self.elector.poke()
        await asyncio.wait_for(self.elector.wait_rounds(n + 1), 10)


async def lease(client: Client) -> dict[str, Any]:
    return (await client.get(LEASES, LEASE, NS))["spec"]


async def wait_holder(client: Client, holder: str) -> dict[str, Any]:
    obj = await wait_for_object(
        client, LEASES, LEASE, NS, lambda o: o is not None and o["spec"]["holderIdentity"] == holder
    )
    assert obj is not None
    return obj["spec"]


def master_status(cp: ControlPlane) -> float | None:
    return cp.metrics_registry.get_sample_value("leader_election_master_status", {"name": LEASE})


async def test_the_first_candidate_of_a_fresh_cluster_leads_at_once(
    env: tuple[ControlPlane, FakeClock],
) -> None:
    cp, clock = env
    client = cp.client("test")
    a = Candidate(cp, clock, "host-a_1")
    await a.elector.start()
    assert a.log == ["started"] and a.elector.leading and a.elector.rounds == 1
    spec = await lease(client)
    assert spec["holderIdentity"] == "host-a_1"
    assert spec["leaseDurationSeconds"] == 15 and spec["leaseTransitions"] == 0
    assert MICRO.match(spec["acquireTime"]) and spec["acquireTime"] == spec["renewTime"]
    assert parse_time(spec["renewTime"]) == pytest.approx(clock.now())
    assert master_status(cp) == 1
    events = await wait_for_list(client, EVENTS, NS, lambda items: len(items) == 1)
    ev = events[0]
    assert (ev["type"], ev["reason"], ev["message"]) == ("Normal", "LeaderElection", "host-a_1 became leader")
    assert ev["involvedObject"]["kind"] == "Lease" and ev["involvedObject"]["name"] == LEASE
    assert ev["involvedObject"]["apiVersion"] == "coordination.k8s.io/v1"
    assert ev["source"]["component"] == LEASE
    assert a.leaders == ["host-a_1"]
    await a.elector.stop()


async def test_the_leader_renews_every_retry_period_keeping_acquire_time_and_transitions(
    env: tuple[ControlPlane, FakeClock],
) -> None:
    cp, clock = env
    client = cp.client("test")
    a = Candidate(cp, clock, "host-a_1")
    await a.elector.start()
    first = await lease(client)
    await a.step(clock, 2.0)
    spec = await lease(client)
    assert spec["acquireTime"] == first["acquireTime"] and spec["leaseTransitions"] == 0
    assert parse_time(spec["renewTime"]) == pytest.approx(parse_time(first["renewTime"]) + 2.0)  # type: ignore[operator]
    assert a.log == ["started"]
    await a.elector.stop()


async def test_a_held_lease_is_taken_over_only_after_its_duration_unrenewed(
    env: tuple[ControlPlane, FakeClock],
) -> None:
    cp, clock = env
    client = cp.client("test")
    a, b = Candidate(cp, clock, "host-a_1"), Candidate(cp, clock, "host-b_2")
    await a.elector.start()
    await b.elector.start()
    assert b.log == [] and not b.elector.leading and b.leaders == ["host-a_1"]
    # the leader dies without releasing (kill -9): the record stops changing
    await a.elector.stop(release=False)
    assert (await lease(client))["holderIdentity"] == "host-a_1"
    await b.step(clock, 14.0)  # 14 s since b saw the record: still valid
    assert not b.elector.leading and b.log == []
    await b.step(clock, 2.0)  # past 15 s: b takes over
    spec = await wait_holder(client, "host-b_2")
    assert b.log == ["started"] and b.elector.leading
    assert spec["leaseTransitions"] == 1 and spec["acquireTime"] == spec["renewTime"]
    assert b.leaders == ["host-a_1", "host-b_2"]
    await b.elector.stop()


async def test_each_observed_renewal_restarts_the_candidates_wait(
    env: tuple[ControlPlane, FakeClock],
) -> None:
    cp, clock = env
    client = cp.client("test")
    held = LeaderElectionRecord("other_0", 15, "2026-01-01T00:00:00.000000Z", "2026-01-01T00:00:00.000000Z")
    await client.create(LEASES, {"metadata": {"name": LEASE, "namespace": NS}, "spec": held.to_spec()}, NS)
    b = Candidate(cp, clock, "host-b_2")
    await b.elector.start()
    await b.step(clock, 10.0)
    cur = await client.get(LEASES, LEASE, NS)  # the holder renews at t=10
    cur["spec"]["renewTime"] = "2026-01-01T00:00:10.000000Z"
    await client.update(LEASES, cur, NS)
    await b.step(clock, 10.0)  # t=20: b sees the renewal now, so the lease is valid until t=35
    assert not b.elector.leading
    await b.step(clock, 14.0)
    assert not b.elector.leading
    await b.step(clock, 2.0)
    assert (await wait_holder(client, "host-b_2"))["leaseTransitions"] == 1
    await b.elector.stop()


async def test_the_expiry_is_measured_on_the_candidates_clock_not_the_record_times(
    env: tuple[ControlPlane, FakeClock],
) -> None:
    """A record whose renewTime is long past is still honoured for a full lease duration from the
    moment this candidate first sees it (a restarted process after a crash waits the lease out)."""
    cp, clock = env
    client = cp.client("test")
    stale = LeaderElectionRecord(
        "dead_0", 15, "2020-01-01T00:00:00.000000Z", "2020-01-01T00:00:00.000000Z", 3
    )
    await client.create(LEASES, {"metadata": {"name": LEASE, "namespace": NS}, "spec": stale.to_spec()}, NS)
    b = Candidate(cp, clock, "host-b_2")
    await b.elector.start()
    assert not b.elector.leading
    await b.step(clock, 10.0)
    assert not b.elector.leading
    await b.step(clock, 5.5)
    spec = await wait_holder(client, "host-b_2")
    assert spec["leaseTransitions"] == 4
    await b.elector.stop()


async def test_writes_based_on_a_stale_read_conflict(
    env: tuple[ControlPlane, FakeClock],
) -> None:
    cp, clock = env
    client = cp.client("test")
    a = Candidate(cp, clock, "host-a_1")
    await a.elector.start()
    await a.elector.stop(release=False)
    # two writers read the same record, then both write over it: the second write is a conflict
    b, c = LeaseLock(client, LEASE, "host-b_2"), LeaseLock(client, LEASE, "host-c_3")
    await b.get()
    await c.get()
    await b.update(LeaderElectionRecord("host-b_2", 15, "t", "t", 1))
    with pytest.raises(errors.StatusError) as exc:
        await c.update(LeaderElectionRecord("host-c_3", 15, "t", "t", 1))
    assert exc.value.code == 409
    assert (await lease(client))["holderIdentity"] == "host-b_2"


async def test_two_candidates_taking_over_at_once_elect_one(env: tuple[ControlPlane, FakeClock]) -> None:
    cp, clock = env
    client = cp.client("test")
    a = Candidate(cp, clock, "host-a_1")
    await a.elector.start()
    await a.elector.stop(release=False)
    b, c = Candidate(cp, clock, "host-b_2"), Candidate(cp, clock, "host-c_3")
    assert not await b.elector.try_acquire_or_renew()
    assert not await c.elector.try_acquire_or_renew()
    clock.step(16)
    results = await asyncio.gather(b.elector.try_acquire_or_renew(), c.elector.try_acquire_or_renew())
    assert sorted(results) == [False, True]
    spec = await lease(client)
    assert spec["holderIdentity"] == ("host-b_2" if results[0] else "host-c_3")
    assert spec["leaseTransitions"] == 1


async def test_a_leader_that_cannot_renew_stops_acting_and_competes_again(
    env: tuple[ControlPlane, FakeClock],
) -> None:
    cp, clock = env
    client = cp.client("test")
    a = Candidate(cp, clock, "host-a_1")
    await a.elector.start()
    # someone else writes the lease (a rival that believes it won): a's renewals fail
    cur = await client.get(LEASES, LEASE, NS)
    cur["spec"].update(holderIdentity="rival_9", leaseTransitions=1)
    await client.update(LEASES, cur, NS)
    await a.step(clock, 2.0)
    assert a.elector.leading and a.log == ["started"]  # within the renew deadline it keeps trying
    assert a.leaders[-1] == "rival_9"
    await a.step(clock, 10.0)  # 10 s of failed renewals: it gives up
    assert not a.elector.leading and a.log == ["started", "stopped"]
    assert master_status(cp) == 0
    events = await wait_for_list(client, EVENTS, NS, lambda items: len(items) == 2)
    assert sorted(e["message"] for e in events) == ["host-a_1 became leader", "host-a_1 stopped leading"]
    # back in candidate mode: the rival never renews, so a takes the lease over once it expires
    await a.step(clock, 6.0)  # the rival's record, last seen changing at t=2, expired at t=17
    spec = await wait_holder(client, "host-a_1")
    assert spec["leaseTransitions"] == 2
    assert a.log == ["started", "stopped", "started"] and a.elector.terms == 2
    await a.elector.stop()


async def test_a_graceful_stop_releases_the_lease_and_a_successor_leads_at_once(
    env: tuple[ControlPlane, FakeClock],
) -> None:
    cp, clock = env
    client = cp.client("test")
    a = Candidate(cp, clock, "host-a_1")
    await a.elector.start()
    await a.elector.stop()
    assert a.log == ["started", "stopped"]
    spec = await lease(client)
    assert spec["holderIdentity"] == "" and spec["leaseDurationSeconds"] == 1
    assert spec["leaseTransitions"] == 0
    b = Candidate(cp, clock, "host-b_2")
    await b.elector.start()
    assert b.elector.leading and b.elector.rounds == 1
    spec = await lease(client)
    assert spec["holderIdentity"] == "host-b_2" and spec["leaseTransitions"] == 1
    await b.elector.stop()


async def test_without_release_on_cancel_the_lease_stays_held(env: tuple[ControlPlane, FakeClock]) -> None:
    cp, clock = env
    client = cp.client("test")
    a = Candidate(cp, clock, "host-a_1", release_on_cancel=False)
    await a.elector.start()
    await a.elector.stop()
    assert a.log == ["started", "stopped"]
    assert (await lease(client))["holderIdentity"] == "host-a_1"


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (LeaderElectionConfig(15, 15, 2), "leaseDuration must be greater than renewDeadline"),
        (LeaderElectionConfig(15, 2.4, 2), "renewDeadline must be greater than retryPeriod*JitterFactor"),
        (LeaderElectionConfig(15, 10, 0), "retryPeriod must be greater than zero"),
        (LeaderElectionConfig(0.5, 0.2, 0.1), "leaseDuration must be greater than zero"),
    ],
)
def test_unusable_durations_are_refused_with_client_go_messages(
    config: LeaderElectionConfig, message: str
) -> None:
    with pytest.raises(LeaderElectionError, match=re.escape(message)):
        config.validate()


def test_the_defaults_are_kubes() -> None:
    c = LeaderElectionConfig()
    assert (c.lease_duration, c.renew_deadline, c.retry_period) == (15, 10, 2)
    c.validate()


def test_the_identity_is_hostname_underscore_uuid() -> None:
    ident = new_identity("node-7")
    assert re.match(r"^node-7_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", ident)
    assert new_identity("node-7") != ident


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("15s", 15), ("1m30s", 90), ("500ms", 0.5), ("1.5h", 5400), ("0", 0), ("2s500ms", 2.5)],
)
def test_go_durations_parse(text: str, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["15", "", "s", "1x", "1s junk"])
def test_bad_durations_are_refused_as_go_does(text: str) -> None:
    with pytest.raises(ValueError, match=re.escape(f'time: invalid duration "{text}"')):
        parse_duration(text)

"""A create draws its uid and time once per webhook run, and afresh outside one.

``GenericStore.create`` asks whether a webhook run is current once and, outside one, draws the
uid and the time directly instead of through ``stable``: inside a run every pass of the write
(every create made under the run here) must still see the run's one uid and time.
"""

from __future__ import annotations

from apiserver.admission.webhook.run import CURRENT_RUN, WebhookRun
from apiserver.meta import FakeClock
from apiserver.registry.generic import GenericStore, WriteOptions
from apiserver.server.instance import build_api


def _api() -> GenericStore:
    return build_api(clock=FakeClock())


def _create(api: GenericStore, name: str) -> dict:
    rd = api.registry.get("", "v1", "configmaps")
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}
    return api.create(rd, "default", body, WriteOptions(dry_run=True)).obj["metadata"]


def test_a_run_draws_one_uid_and_time_for_every_pass() -> None:
    api = _api()
    clock = api.clock
    assert isinstance(clock, FakeClock)
    token = CURRENT_RUN.set(WebhookRun())
    try:
        first = _create(api, "a")
        clock.step(5)
        again = _create(api, "b")
    finally:
        CURRENT_RUN.reset(token)
    assert (again["uid"], again["creationTimestamp"]) == (first["uid"], first["creationTimestamp"])


def test_outside_a_run_every_create_draws_its_own() -> None:
    api = _api()
    clock = api.clock
    assert isinstance(clock, FakeClock)
    first = _create(api, "a")
    clock.step(5)
    second = _create(api, "b")
    assert first["uid"] != second["uid"]
    assert first["creationTimestamp"] != second["creationTimestamp"]

"""The binding cycle skips the PreBind runner when ``Framework.pre_bind_has_work`` says no
plugin has work; the runner would have answered None (success) all the same.

Random profiles of PreBind plugins (with and without ``pre_bind_needed``, answering None or
not) and the default profile's DynamicResources with and without its PreFilter state (a claim
that is not found: its ``pre_bind`` then answers a rejection): whenever ``pre_bind_has_work``
is False, running the plugins answers None and none of them does anything; a plugin without
``pre_bind_needed`` always makes it True.
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest

from scheduler.defaults import default_profile, default_registry
from scheduler.framework import CycleState, Framework
from scheduler.nodeinfo import PodInfo
from scheduler.plugins import dynamic_resources as dra
from scheduler.status import Code, Status
from scheduler.testing import make_pod


class _PreBind:
    """A PreBind plugin whose work (or none) is drawn at random; it counts its runs."""

    def __init__(self, name: str, rng: random.Random, tells: bool) -> None:
        self.name = name
        self.works = rng.random() < 0.4
        self.answer = rng.choice([None, Status(Code.SUCCESS), Status(Code.ERROR, "boom")])
        self.ran = 0
        if tells:
            self.pre_bind_needed = lambda state: self.works

    async def pre_bind(self, state: CycleState, pod_info: PodInfo, node_name: str) -> Status | None:
        self.ran += 1
        return self.answer if self.works else None


def _framework(plugins: list[Any]) -> Framework:
    fw = Framework(default_profile(), registry=default_registry())
    fw.pre_bind_plugins = plugins
    fw._pre_bind_needed = [getattr(pl, "pre_bind_needed", None) for pl in plugins]
    return fw


@pytest.mark.parametrize("seed", range(30))
def test_skipping_answers_what_the_runner_answers(seed: int) -> None:
    rng = random.Random(seed)
    plugins = [_PreBind(f"p{i}", rng, tells=rng.random() < 0.8) for i in range(rng.randint(0, 4))]
    fw = _framework(plugins)
    pod = PodInfo(make_pod("p", uid="u"))
    has_work = fw.pre_bind_has_work(CycleState())
    got = asyncio.run(fw.run_pre_bind_plugins(CycleState(), pod, "n"))
    if not has_work:
        assert got is None
        assert all(not pl.works for pl in plugins)
    if any(not hasattr(pl, "pre_bind_needed") for pl in plugins):
        assert has_work
    assert has_work == any(pl.works or not hasattr(pl, "pre_bind_needed") for pl in plugins)


@pytest.mark.parametrize("with_claims", [False, True])
def test_dynamic_resources_has_work_exactly_when_its_pre_bind_does(with_claims: bool) -> None:
    fw = Framework(default_profile(), registry=default_registry())
    assert [pl.name for pl in fw.pre_bind_plugins] == [dra.NAME]
    state = CycleState()
    pod = make_pod("p", uid="u")
    if with_claims:  # a claim PreFilter found, gone since: PreBind rejects the pod
        claim = dra._Claim(key="ns/c", claim={}, shared=False, allocation=None)
        state.write(dra.STATE_KEY, dra._State("u", pod, None, [claim], set()))
    got = asyncio.run(fw.run_pre_bind_plugins(state, PodInfo(pod), "n"))
    assert fw.pre_bind_has_work(state) is with_claims
    assert (got is None) is (not with_claims)

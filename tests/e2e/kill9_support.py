"""kill -9 of ``gangplane serve --data-dir`` in the middle of a burst of writes, then the checks.

A burst: ``writers`` concurrent HTTP clients, each owning its own ConfigMaps, create, update
(with a resourceVersion precondition) and delete them, ``writes`` requests in all, while one
watch follows the collection. At a random point (from the seed) the server gets SIGKILL with
requests in flight. After a restart on the same data dir:

* every write acknowledged to its client is there, exactly as answered;
* a write in flight at the kill is either wholly there or not at all: its object is the old
  (acknowledged) or the new state, nothing in between;
* resourceVersions only grow: the stored ones are those acknowledged, and a new write gets a
  revision above every one any client saw (acknowledged or only watched);
* the watch, resumed from the last revision it saw, either continues and then agrees with a
  fresh list, or ends with 410 Expired (it saw a write that the kill lost), never a silent gap.

Run more seeds than the suite does with
``python -m tests.e2e.kill9_support --seeds 10 --writes 5000`` (docs/storage.md).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from tests.e2e.conftest import Server
from tests.e2e.data_dir_support import CM_PATH, kill9, list_objects, start, stop

LABEL = "gangplane.test/kill9"


@dataclass
class Tracked:
    """What a client knows of one object: the last answer it got, and a request left unanswered."""

    acked: dict[str, Any] | None = None
    inflight: tuple[str, str] | None = None  # (verb, seq written) of a request that got no answer


@dataclass
class Burst:
    objects: dict[str, Tracked] = field(default_factory=dict)
    acked_rvs: list[int] = field(default_factory=list)
    watched: dict[str, dict[str, Any]] = field(default_factory=dict)
    watched_rv: int = 0
    max_seen_rv: int = 0
    sent: int = 0
    acked: int = 0


@dataclass
class Outcome:
    seed: int
    killed_after: int
    acked: int
    inflight: int
    inflight_applied: int
    watch: str  # "continued" or "expired"
    seconds: float


def _cm(name: str, seq: str, label: str, rv: str | None = None) -> dict[str, Any]:
    md: dict[str, Any] = {"name": name, "labels": {LABEL: label}}
    if rv is not None:
        md["resourceVersion"] = rv
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": md, "data": {"seq": seq}}


async def _writer(
    client: httpx.AsyncClient,
    w: int,
    rng: random.Random,
    burst: Burst,
    total: int,
    label: str,
    kill: asyncio.Event,
    kill_at: int,
) -> None:
    names = [f"k{label}-w{w}-{i}" for i in range(8)]
    for n in names:
        burst.objects.setdefault(n, Tracked())
    while burst.sent < total:
        name = rng.choice(names)
        t = burst.objects[name]
        burst.sent += 1
        seq = f"{w}-{burst.sent}"
        if t.acked is None:
            verb, req = "create", client.post(CM_PATH, json=_cm(name, seq, label))
        elif rng.random() < 0.15:
            verb = "delete"
            req = client.request(
                "DELETE",
                f"{CM_PATH}/{name}",
                json={"preconditions": {"resourceVersion": t.acked["metadata"]["resourceVersion"]}},
            )
        else:
            verb = "update"
            req = client.put(
                f"{CM_PATH}/{name}", json=_cm(name, seq, label, t.acked["metadata"]["resourceVersion"])
            )
        t.inflight = (verb, seq)
        try:
            resp = await req
        except httpx.TransportError:
            return  # the server is gone: this request's outcome is unknown
        if resp.status_code not in (200, 201):
            raise AssertionError(f"{verb} {name}: {resp.status_code} {resp.text}")
        body = resp.json()
        if verb == "delete":  # a Status, as kube answers for ConfigMaps: no revision to record
            t.acked = None
        else:
            rv = int(body["metadata"]["resourceVersion"])
            burst.acked_rvs.append(rv)
            burst.max_seen_rv = max(burst.max_seen_rv, rv)
            t.acked = body
        t.inflight = None
        burst.acked += 1
        if burst.acked >= kill_at:
            kill.set()


async def _watcher(url: str, rv: int, burst: Burst, label: str) -> None:
    params = {"watch": "true", "resourceVersion": str(rv), "labelSelector": f"{LABEL}={label}"}
    try:
        async with (
            httpx.AsyncClient(base_url=url, timeout=None) as c,
            c.stream("GET", CM_PATH, params=params) as r,
        ):
            async for line in r.aiter_lines():
                if not line.strip():
                    continue
                ev = json.loads(line)
                obj = ev["object"]
                if ev["type"] == "ERROR":
                    return
                ev_rv = int(obj["metadata"]["resourceVersion"])
                if ev["type"] == "DELETED":
                    burst.watched.pop(obj["metadata"]["name"], None)
                elif ev["type"] != "BOOKMARK":
                    burst.watched[obj["metadata"]["name"]] = obj
                burst.watched_rv = ev_rv
                burst.max_seen_rv = max(burst.max_seen_rv, ev_rv)
    except (httpx.TransportError, httpx.StreamError):
        return


async def _burst(
    url: str, seed: int, writes: int, writers: int, kill_server: Callable[[], None]
) -> tuple[Burst, int]:
    """The burst; ``kill_server`` is called once ``kill_at`` writes are acknowledged."""
    rng = random.Random(seed)
    label = str(seed)
    burst = Burst()
    _, start_rv = list_objects(url)
    burst.watched_rv = start_rv
    kill_at = rng.randint(writes // 10, writes * 9 // 10)
    kill = asyncio.Event()
    watch = asyncio.create_task(_watcher(url, start_rv, burst, label))
    limits = httpx.Limits(max_connections=writers, max_keepalive_connections=writers)
    async with httpx.AsyncClient(base_url=url, timeout=60, limits=limits) as client:
        tasks = [
            asyncio.create_task(
                _writer(client, w, random.Random(rng.random()), burst, writes, label, kill, kill_at)
            )
            for w in range(writers)
        ]
        waiter = asyncio.create_task(kill.wait())
        await asyncio.wait([*tasks, waiter], return_when=asyncio.FIRST_COMPLETED)
        killed_after = burst.acked
        kill_server()
        waiter.cancel()
        await asyncio.gather(*tasks, watch)
    return burst, killed_after


def _view(obj: dict[str, Any] | None) -> tuple[Any, ...] | None:
    """What must survive: identity, revision, content (list items carry no kind/apiVersion)."""
    if obj is None:
        return None
    md = obj["metadata"]
    return md["uid"], md["resourceVersion"], md["creationTimestamp"], obj.get("data")


def _check(url: str, burst: Burst, seed: int) -> tuple[int, int, str]:
    """The checks after the restart; returns (in flight at the kill, of those applied, watch outcome)."""
    label = str(seed)
    objs, _ = list_objects(url + "", CM_PATH + f"?labelSelector={LABEL}%3D{label}")
    assert set(objs) <= set(burst.objects), f"objects nobody wrote: {set(objs) - set(burst.objects)}"
    inflight = applied = 0
    for name, t in burst.objects.items():
        now = objs.get(name)
        if t.inflight is None:
            assert _view(now) == _view(t.acked), f"{name}: acknowledged\n{t.acked}\nbut stored\n{now}"
            continue
        inflight += 1
        verb, seq = t.inflight
        old_state = _view(now) == _view(t.acked)
        if verb == "delete":
            new_state = now is None
        else:
            new_state = now is not None and now["data"] == {"seq": seq}
        assert old_state or new_state, f"{name}: {verb} in flight, stored state is neither old nor new: {now}"
        applied += int(new_state and not old_state)
    # revisions only grow: a new write is above everything any client saw before the kill
    marker = httpx.post(url + CM_PATH, json=_cm(f"k{label}-marker", "marker", label), timeout=30)
    marker.raise_for_status()
    marker_rv = int(marker.json()["metadata"]["resourceVersion"])
    assert marker_rv > burst.max_seen_rv, (marker_rv, burst.max_seen_rv)
    after, _ = list_objects(url, CM_PATH + f"?labelSelector={LABEL}%3D{label}")
    # the resumed watch: continues to agree with the list, or says 410
    params = {
        "watch": "true",
        "resourceVersion": str(burst.watched_rv),
        "labelSelector": f"{LABEL}={label}",
        "timeoutSeconds": "30",
    }
    state = dict(burst.watched)
    outcome = ""
    with httpx.stream("GET", url + CM_PATH, params=params, timeout=60) as r:
        r.raise_for_status()
        for line in r.iter_lines():
            if not line.strip():
                continue
            ev = json.loads(line)
            obj = ev["object"]
            if ev["type"] == "ERROR":
                assert obj["code"] == 410 and obj["reason"] == "Expired", obj
                outcome = "expired"
                break
            if ev["type"] == "DELETED":
                state.pop(obj["metadata"]["name"], None)
            elif ev["type"] != "BOOKMARK":
                state[obj["metadata"]["name"]] = obj
            if obj["metadata"]["name"] == f"k{label}-marker":
                outcome = "continued"
                break
    assert outcome, "the resumed watch ended without the marker write or a 410"
    if outcome == "continued":
        assert {n: _view(o) for n, o in state.items()} == {n: _view(o) for n, o in after.items()}, (
            "the resumed watch continued, but with a gap: its state differs from a list"
        )
    return inflight, applied, outcome


def run_seeds(
    workdir: Path,
    data_dir: Path,
    seeds: list[int],
    writes: int,
    writers: int = 16,
    serve: Callable[[Path], Server] | None = None,
) -> list[Outcome]:
    """Per seed: a burst against the server on ``data_dir``, kill -9, restart, check. The server
    restarted for one seed's checks takes the next seed's burst (one start per seed, plus one).
    ``serve`` starts the server in a work dir on other storage (etcd) instead of ``data_dir``."""
    outcomes: list[Outcome] = []
    if serve is None:
        serve = lambda w: start(w, data_dir)  # noqa: E731
    server = serve(workdir / "start")
    try:
        for seed in seeds:
            t0 = time.monotonic()
            burst, killed_after = asyncio.run(
                _burst(server.url, seed, writes, writers, lambda s=server: kill9(s))
            )
            server = serve(workdir / f"after-seed{seed}")
            inflight, applied, watch = _check(server.url, burst, seed)
            outcomes.append(
                Outcome(seed, killed_after, burst.acked, inflight, applied, watch, time.monotonic() - t0)
            )
    finally:
        if server.proc.poll() is None:
            stop(server)
    return outcomes


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="kill -9 gangplane serve --data-dir during write bursts")
    p.add_argument("--seeds", type=int, default=10)
    p.add_argument("--writes", type=int, default=5000)
    p.add_argument("--writers", type=int, default=16)
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        for o in run_seeds(Path(tmp), Path(tmp) / "data", list(range(args.seeds)), args.writes, args.writers):
            print(
                f"seed {o.seed}: killed after {o.killed_after} acknowledged writes; {o.acked} acknowledged, "
                f"{o.inflight} in flight ({o.inflight_applied} applied); watch {o.watch}; {o.seconds:.1f} s",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())

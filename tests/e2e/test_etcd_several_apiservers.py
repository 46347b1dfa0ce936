"""Several API servers on one etcd: two ``gangplane serve --etcd-servers`` processes on a
three-member etcd serve the same cluster — a write through one is seen by a watch on the other,
in order, with the resourceVersions the first one answered; both read the same objects; and with
leader election (kube's Leases) a StatefulSet created through one is run by the elected controller
manager, scheduler and node agent, and when the leader's process is killed (-9) the other takes
over within the lease duration and a scale-up completes."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from tests.e2e.conftest import Server, _start_server, _stop
from tests.etcd_cluster import EtcdCluster

CMS = "/api/v1/namespaces/default/configmaps"
LEASES = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases"
STS = "/apis/apps/v1/namespaces/default/statefulsets"
#: short leases so that a takeover happens within seconds (kube's defaults are 15s/10s/2s)
LEADER_FLAGS = [
    "--leader-elect-lease-duration",
    "4s",
    "--leader-elect-renew-deadline",
    "3s",
    "--leader-elect-retry-period",
    "500ms",
]


@pytest.fixture(scope="module")
def etcd3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EtcdCluster]:
    with EtcdCluster(tmp_path_factory.mktemp("etcd3"), 3) as cluster:
        yield cluster


@pytest.fixture(scope="module")
def two_servers(
    tmp_path_factory: pytest.TempPathFactory, etcd3: EtcdCluster
) -> Iterator[tuple[Server, Server]]:
    ends = [m.client_url for m in etcd3.members]
    # both run every component behind leader election; b talks to the other members first
    a = _start_server(
        tmp_path_factory.mktemp("a"), ["--no-tls", "--anonymous", "--etcd-servers", ",".join(ends)]
    )
    try:
        b = _start_server(
            tmp_path_factory.mktemp("b"),
            ["--no-tls", "--anonymous", "--controllers", "", "--etcd-servers", ",".join(reversed(ends))],
        )
    except BaseException:
        _stop(a)
        raise
    yield a, b
    _stop(b)
    _stop(a)


def wait_for(
    base: str, collection: str, name: str, cond: Callable[[dict], bool], timeout: float = 60
) -> dict:
    """Watch object ``name`` of ``collection`` on server ``base`` until ``cond`` holds; raise on timeout."""
    deadline = time.monotonic() + timeout
    selector = {"fieldSelector": f"metadata.name={name}"}
    last: dict = {}
    while time.monotonic() < deadline:
        lst = httpx.get(base + collection, params=selector, timeout=10).json()
        for item in lst.get("items", []):
            last = item
            if cond(item):
                return item
        params = {**selector, "watch": "1", "resourceVersion": lst["metadata"]["resourceVersion"]}
        left = max(deadline - time.monotonic(), 0.1)
        try:
            with httpx.stream("GET", base + collection, params=params, timeout=left) as resp:
                for line in resp.iter_lines():
                    if not line:
                        continue
                    ev = json.loads(line)
                    if ev["type"] in ("ADDED", "MODIFIED"):
                        last = ev["object"]
                        if cond(last):
                            return last
                    if time.monotonic() > deadline:
                        break
        except httpx.TimeoutException:
            break
    raise AssertionError(f"{collection}/{name} never satisfied the condition; last seen: {last}")


def _watch(url: str, rv: str, want: int, out: list[dict], done: threading.Event) -> None:
    with httpx.stream("GET", url, params={"watch": "1", "resourceVersion": rv}, timeout=30) as resp:
        for line in resp.iter_lines():
            if line:
                out.append(json.loads(line))
            if len(out) >= want:
                break
    done.set()


@pytest.mark.timeout(300)  # starts an etcd cluster and two servers (slow on a loaded machine)
def test_a_write_through_one_server_is_seen_by_a_watch_on_the_other_in_order(two_servers) -> None:
    a, b = two_servers
    rv = httpx.get(b.url + CMS).json()["metadata"]["resourceVersion"]
    events: list[dict] = []
    done = threading.Event()
    watcher = threading.Thread(target=_watch, args=(b.url + CMS, rv, 4, events, done), daemon=True)
    watcher.start()
    made = httpx.post(a.url + CMS, json={"metadata": {"name": "shared"}, "data": {"v": "1"}})
    assert made.status_code == 201, made.text
    changed = httpx.put(
        a.url + CMS + "/shared", json={**made.json(), "data": {"v": "2"}}
    )  # carries the resourceVersion a answered: a compare on etcd's mod revision
    assert changed.status_code == 200, changed.text
    other = httpx.post(a.url + CMS, json={"metadata": {"name": "other"}})
    gone = httpx.delete(a.url + CMS + "/shared")
    assert other.status_code == 201 and gone.status_code == 200
    assert done.wait(30), f"watch on the second server saw only {events}"
    seen = [
        (e["type"], e["object"]["metadata"]["name"], e["object"]["metadata"]["resourceVersion"])
        for e in events
    ]
    rvs = [r.json()["metadata"]["resourceVersion"] for r in (made, changed, other)]
    assert seen[:3] == [
        ("ADDED", "shared", rvs[0]),
        ("MODIFIED", "shared", rvs[1]),
        ("ADDED", "other", rvs[2]),
    ]
    assert seen[3][:2] == ("DELETED", "shared") and int(seen[3][2]) > int(rvs[2])
    assert events[1]["object"]["data"] == {"v": "2"}


@pytest.mark.timeout(300)
def test_both_servers_read_the_same_cluster(two_servers) -> None:
    a, b = two_servers
    made = httpx.post(b.url + CMS, json={"metadata": {"name": "from-b"}})
    assert made.status_code == 201, made.text
    got = httpx.get(a.url + CMS + "/from-b")  # a consistent read on a: etcd's newest revision
    assert got.status_code == 200 and got.json()["metadata"]["uid"] == made.json()["metadata"]["uid"]
    # the nodes a's node agent registered are served by b too
    names_a = {n["metadata"]["name"] for n in httpx.get(a.url + "/api/v1/nodes").json()["items"]}
    names_b = {n["metadata"]["name"] for n in httpx.get(b.url + "/api/v1/nodes").json()["items"]}
    assert names_a and names_a == names_b
    # an update through b with a's stale resourceVersion is a Conflict, as with one server
    stale = made.json()
    by_a = httpx.put(a.url + CMS + "/from-b", json={**stale, "data": {"by": "a"}})
    assert by_a.status_code == 200
    refused = httpx.put(b.url + CMS + "/from-b", json={**stale, "data": {"by": "b"}})
    assert refused.status_code == 409 and refused.json()["reason"] == "Conflict"
    # ... and one with the resourceVersion a just answered succeeds on b at once: a write's
    # precondition is checked against the newest revision, not a cache lagging behind a
    for i in range(20):
        by_a = httpx.put(a.url + CMS + "/from-b", json={**by_a.json(), "data": {"n": str(i)}})
        by_b = httpx.put(b.url + CMS + "/from-b", json={**by_a.json(), "data": {"n": f"{i}b"}})
        assert by_b.status_code == 200, by_b.text
        by_a = by_b
    # a name deleted through a can be created through b right away
    assert httpx.delete(a.url + CMS + "/from-b").status_code == 200
    assert httpx.post(b.url + CMS, json={"metadata": {"name": "from-b"}}).status_code == 201


def test_gangplane_serve_exits_2_when_etcd_is_unreachable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from gangplane.cli import main
    from tests.etcd_cluster import free_port

    url = f"http://127.0.0.1:{free_port()}"
    args = ["serve", "--port", "0", "--kubeconfig", str(tmp_path / "kc"), "--etcd-servers", url]
    assert main(args) == 2
    assert f"gangplane: cannot reach etcd at 127.0.0.1:{url.rsplit(':', 1)[1]}" in capsys.readouterr().err


def _statefulset(name: str, replicas: int) -> dict:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "serviceName": name,
            "podManagementPolicy": "Parallel",
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "containers": [
                        {
                            "name": "c",
                            "image": "registry.k8s.io/pause:3.10",
                            "resources": {"requests": {"cpu": "100m"}},
                        }
                    ]
                },
            },
        },
    }


def _ready(n: int) -> Callable[[dict], bool]:
    return lambda sts: sts.get("status", {}).get("readyReplicas", 0) == n


@pytest.mark.timeout(400)
def test_the_elected_components_run_a_statefulset_and_the_other_server_takes_over_when_the_leader_dies(
    tmp_path_factory: pytest.TempPathFactory, etcd3: EtcdCluster
) -> None:
    ends = [m.client_url for m in etcd3.members]
    common = ["--no-tls", "--anonymous", *LEADER_FLAGS, "--etcd-prefix", "/failover"]
    a = _start_server(tmp_path_factory.mktemp("leader-a"), [*common, "--etcd-servers", ",".join(ends)])
    b: Server | None = None
    try:
        # a alone: it takes the free Leases at once
        holders = {
            lease: wait_for(a.url, LEASES, lease, lambda le: bool(le["spec"].get("holderIdentity")))["spec"][
                "holderIdentity"
            ]
            for lease in ("kube-controller-manager", "kube-scheduler", "gangplane-node-agent")
        }
        b = _start_server(
            tmp_path_factory.mktemp("leader-b"), [*common, "--etcd-servers", ",".join(reversed(ends))]
        )
        made = httpx.post(b.url + STS, json=_statefulset("web", 2))  # through the non-leader
        assert made.status_code == 201, made.text
        wait_for(b.url, STS, "web", _ready(2))
        for lease, holder in holders.items():  # a's components did it: the Leases never moved
            assert httpx.get(f"{b.url}{LEASES}/{lease}").json()["spec"]["holderIdentity"] == holder
        os.kill(a.proc.pid, signal.SIGKILL)
        a.proc.wait(10)
        killed_at = time.monotonic()
        for lease, holder in holders.items():
            took = wait_for(
                b.url, LEASES, lease, lambda le, h=holder: le["spec"].get("holderIdentity") not in (None, h)
            )
            assert took["spec"]["leaseTransitions"] >= 1
        # within the lease duration after it was last renewed (plus a retry period and the load here)
        assert time.monotonic() - killed_at < 4 + 0.5 + 10
        scale = httpx.patch(
            f"{b.url}{STS}/web/scale",
            json={"spec": {"replicas": 3}},
            headers={"Content-Type": "application/merge-patch+json"},
        )
        assert scale.status_code == 200, scale.text
        done = wait_for(b.url, STS, "web", _ready(3))
        assert done["status"]["replicas"] == 3
        pods = httpx.get(
            b.url + "/api/v1/namespaces/default/pods", params={"labelSelector": "app=web"}
        ).json()
        assert sorted(p["metadata"]["name"] for p in pods["items"]) == ["web-0", "web-1", "web-2"]
    finally:
        if b is not None:
            _stop(b)
        if a.proc.poll() is None:
            _stop(a)

"""A fuzz session against one running server: setup, sending, judging, and the final checks.

Setup (with an ordinary, well-behaved client) discovers the served endpoints, installs the fuzz
CRD, creates a ``target`` of every seeded kind in namespace ``fuzz`` and the reference objects
(namespace ``fuzz-ref`` and cluster-scoped ``fuzz-ref-…``), then records the reference objects'
bytes. After the hostile requests, :meth:`FuzzSession.damage` reports any reference object whose
bytes changed, any object that appeared in ``fuzz-ref``, and a server that no longer answers
``/readyz``.
"""

from __future__ import annotations

import collections
import threading
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import orjson

from bench.hostile import requests as rq
from bench.hostile.rawhttp import MAX_BODY, MAX_HEAD, RawConnection, Response, well_formed_head
from bench.hostile.seeds import CRD_NAME, STABLE, has_seed
from bench.hostile.verdict import expected_5xx, problem

REF_LABELS = {"fuzz-ref": "yes"}
TARGET_LABELS = {"fuzz-target": "yes"}
#: kinds whose lists in ``fuzz-ref`` a controller may add to on its own
_CONTROLLER_WRITTEN = {("", "events"), ("events.k8s.io", "events")}


@dataclass
class Finding:
    """A wrong answer: the request, what came back, why it is wrong."""

    request: rq.Request
    response: Response
    why: str

    def __str__(self) -> str:
        return f"{self.why}\n{self.request.describe()}"


@dataclass
class Tally:
    """What a run saw: status codes, kube's own 5xx, findings, latencies."""

    codes: collections.Counter[str] = field(default_factory=collections.Counter)
    by_aspect: collections.Counter[str] = field(default_factory=collections.Counter)
    kube_5xx: collections.Counter[str] = field(default_factory=collections.Counter)
    findings: list[Finding] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)

    @property
    def requests(self) -> int:
        return sum(self.codes.values())


class FuzzSession:
    """Drives one server at ``url`` (plain HTTP) with bearer ``token``."""

    def __init__(self, url: str, token: str) -> None:
        parsed = urllib.parse.urlsplit(url)
        if parsed.scheme != "http" or parsed.hostname is None or parsed.port is None:
            raise ValueError(f"the fuzz talks plain HTTP to host:port, not {url!r}")
        self.url = url
        self.token = token
        self.host, self.port = parsed.hostname, parsed.port
        self._local = threading.local()  # one connection per sending thread
        self._conns: list[RawConnection] = []
        self._lock = threading.Lock()
        self.http = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=60)
        self.world = rq.World((), self.host, self.port, token)
        self.tally = Tally()
        self._refs: dict[str, bytes] = {}
        self._ref_names: dict[str, set[str]] = {}

    @property
    def conn(self) -> RawConnection:
        """This thread's connection (requests from several threads run concurrently)."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = RawConnection(self.host, self.port)
            with self._lock:
                self._conns.append(conn)
        return conn

    def close(self) -> None:
        for conn in self._conns:
            conn.close()
        self.http.close()

    # ------------------------------------------------------------------ setup
    def setup(self) -> None:
        self._discover()
        self._ensure_crd()
        self._discover()
        for ns in (rq.NAMESPACE, rq.REF_NAMESPACE):
            self._create(
                "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}
            )
        failures = []
        for ep in self.world.endpoints:
            if not has_seed(ep.group, ep.plural) or "create" not in ep.verbs or ep.plural == "namespaces":
                continue
            if ep.plural == "customresourcedefinitions":
                continue
            resp = self._send(rq.valid_create(ep, self.world, rq.NAMESPACE, "target", TARGET_LABELS))
            if resp.status not in (201, 409):
                failures.append(f"{ep.api_version} {ep.plural}: {resp.status} {resp.body[:300]!r}")
        self._send(rq.valid_create(self._endpoint("", "namespaces"), self.world, "", "target", TARGET_LABELS))
        for ep in self._stable():
            name = "fuzz-ref" if ep.namespaced else f"fuzz-ref-{ep.plural}"
            resp = self._send(rq.valid_create(ep, self.world, rq.REF_NAMESPACE, name, REF_LABELS))
            if resp.status not in (201, 409):  # 409: a second session on the same server
                failures.append(f"reference {ep.plural}: {resp.status} {resp.body[:300]!r}")
        if failures:
            raise RuntimeError("fuzz setup: seeds the server refuses:\n" + "\n".join(failures))
        self._wait_for_default_service_account()
        self.refresh_references()

    def refresh_references(self) -> None:
        """Record the reference objects as they are now (what :meth:`damage` compares with)."""
        self._refs = self._reference_bytes()
        self._ref_names = self._ref_namespace_names()

    def _discover(self) -> None:
        lists = [self.http.get("/api/v1").json()]
        for g in self.http.get("/apis").json()["groups"]:
            for v in g["versions"]:
                lists.append(self.http.get(f"/apis/{v['groupVersion']}").json())
        eps = rq.endpoints_from_discovery(lists)
        self.world = rq.World(tuple(eps), self.host, self.port, self.token)

    def _endpoint(self, group: str, plural: str) -> rq.Endpoint:
        return next(e for e in self.world.endpoints if (e.group, e.plural) == (group, plural))

    def _stable(self) -> list[rq.Endpoint]:
        by_key = {(e.group, e.plural): e for e in self.world.endpoints}
        return [by_key[k] for k in STABLE if k in by_key]

    def _create(self, path: str, body: dict[str, Any]) -> None:
        r = self.http.post(path, content=orjson.dumps(body), headers={"Content-Type": "application/json"})
        if r.status_code not in (201, 409):
            raise RuntimeError(f"fuzz setup: POST {path}: {r.status_code} {r.text[:300]}")

    def _ensure_crd(self) -> None:
        crd = self._endpoint("apiextensions.k8s.io", "customresourcedefinitions")
        resp = self._send(rq.valid_create(crd, self.world, "", CRD_NAME))
        if resp.status not in (201, 409):
            raise RuntimeError(f"fuzz setup: the CRD: {resp.status} {resp.body[:300]!r}")
        path = f"{crd.prefix}/{crd.plural}"
        params = {"watch": "1", "fieldSelector": f"metadata.name={CRD_NAME}", "timeoutSeconds": "30"}
        with self.http.stream("GET", path, params=params) as stream:
            for line in stream.iter_lines():
                obj = orjson.loads(line)["object"]
                conds = (obj.get("status") or {}).get("conditions") or []
                if any(c.get("type") == "Established" and c.get("status") == "True" for c in conds):
                    return
        raise RuntimeError(f"fuzz setup: {CRD_NAME} was not Established within 30 s")

    def _wait_for_default_service_account(self) -> None:
        # the serviceaccount controller adds it to every new namespace; wait so it is not a change
        path = f"/api/v1/namespaces/{rq.REF_NAMESPACE}/serviceaccounts"
        params = {"watch": "1", "fieldSelector": "metadata.name=default", "timeoutSeconds": "30"}
        with self.http.stream("GET", path, params=params) as stream:
            for line in stream.iter_lines():
                if orjson.loads(line)["type"] == "ADDED":
                    return
        raise RuntimeError("fuzz setup: no default ServiceAccount in fuzz-ref within 30 s")

    # ------------------------------------------------------------------ reference objects
    def _ref_paths(self) -> Iterator[str]:
        for ep in self._stable():
            if ep.namespaced:
                yield f"{ep.prefix}/namespaces/{rq.REF_NAMESPACE}/{ep.plural}/fuzz-ref"
            else:
                yield f"{ep.prefix}/{ep.plural}/fuzz-ref-{ep.plural}"
        yield f"/api/v1/namespaces/{rq.REF_NAMESPACE}"
        yield f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{CRD_NAME}"

    def _reference_bytes(self) -> dict[str, bytes]:
        out = {}
        for path in self._ref_paths():
            resp = self._send(rq.get(self.world, path))
            if resp.status != 200:
                raise RuntimeError(f"fuzz setup: reference {path}: {resp.status} {resp.body[:300]!r}")
            out[path] = resp.body
        return out

    def _ref_namespace_names(self) -> dict[str, set[str]]:
        out: dict[str, set[str]] = {}
        for ep in self.world.endpoints:
            if not ep.namespaced or "list" not in ep.verbs or (ep.group, ep.plural) in _CONTROLLER_WRITTEN:
                continue
            path = f"{ep.prefix}/namespaces/{rq.REF_NAMESPACE}/{ep.plural}"
            r = self.http.get(path)
            if r.status_code == 200:
                out[path] = {o["metadata"]["name"] for o in r.json()["items"]}
        return out

    def damage(self) -> list[str]:
        """What the hostile requests broke: readiness, reference bytes, objects in fuzz-ref."""
        out = []
        ready = self._send(rq.get(self.world, "/readyz"))
        if ready.status != 200 or ready.body != b"ok":
            out.append(f"/readyz answers {ready.status} {ready.failure} {ready.body[:200]!r}")
            return out
        for path, before in self._refs.items():
            after = self._send(rq.get(self.world, path))
            if after.status != 200 or after.body != before:
                out.append(
                    f"reference {path} changed: {after.status}\n  before {before!r}\n  after  {after.body!r}"
                )
        for path, names in self._ref_names.items():
            now = {o["metadata"]["name"] for o in self.http.get(path).json()["items"]}
            if now != names:
                out.append(f"{path}: objects {sorted(names)} became {sorted(now)}")
        return out

    # ------------------------------------------------------------------ sending
    def _send(self, req: rq.Request) -> Response:
        wire = req.wire()
        head = wire.index(b"\r\n\r\n")
        refusable = head > MAX_HEAD or len(req.body) > MAX_BODY or not well_formed_head(req.headers)
        framing = any(b"\r" in k + v or b"\n" in k + v for k, v in req.headers)
        return self.conn.send(
            wire, method=req.method, refusable=refusable, stream=req.stream, last=framing or req.chunked
        )

    def check_regressions(self) -> list[Finding]:
        """Send every regression seed (:mod:`bench.hostile.regressions`); a wrong status is a
        finding too, besides what :meth:`check` reports."""
        from bench.hostile.regressions import SEEDS

        out = []
        for s in SEEDS:
            req = s.request(self.world)
            resp, finding = self.exchange(req)
            if finding is None and resp.status != s.status:
                finding = Finding(req, resp, f"regression {s.name}: {resp.status}, kube answers {s.status}")
                with self._lock:
                    self.tally.findings.append(finding)
            if finding is not None:
                out.append(finding)
        return out

    def check(self, req: rq.Request) -> Finding | None:
        """Send ``req``, count its answer, and return a :class:`Finding` if the answer is wrong."""
        return self.exchange(req)[1]

    def exchange(self, req: rq.Request) -> tuple[Response, Finding | None]:
        """:meth:`check`, with the answer itself."""
        resp = self._send(req)
        known = expected_5xx(resp) if resp.status >= 500 else None
        why = problem(resp)
        finding = Finding(req, resp, why) if why else None
        t = self.tally
        with self._lock:
            t.codes[str(resp.status) if not resp.failure else resp.failure] += 1
            t.by_aspect[req.aspect] += 1
            t.seconds.append(resp.seconds)
            if known is not None:
                t.kube_5xx[f"{known.code} {known.message_prefix}"] += 1
            if finding is not None:
                t.findings.append(finding)
        return resp, finding


def token_from_kubeconfig(text: str) -> str:
    """The bearer token of the kubeconfig's current context's user."""
    import yaml

    cfg = yaml.safe_load(text)
    ctx = next(c["context"] for c in cfg["contexts"] if c["name"] == cfg["current-context"])
    user = next(u["user"] for u in cfg["users"] if u["name"] == ctx["user"])
    return user["token"]

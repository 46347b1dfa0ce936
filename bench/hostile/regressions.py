"""Regression seeds: each request an attack on gangplane found wrong, with kube's answer.

The suite's fuzz property (tests/e2e/test_fuzz.py) and ``gangplane bench fuzz`` send every one
of these before their generated requests, so a defect once fixed stays fixed in both. Each seed
names the issue item it comes from; its answer must have ``status``, and the run's usual checks
still apply (no 5xx, no cut stream, reference objects unchanged: a ``DELETE /api/v1/configmaps``
that emptied every namespace shows as damage even if its status were right).
"""

from __future__ import annotations

import base64
from dataclasses import dataclass

from bench.hostile import requests as rq


@dataclass(frozen=True)
class Seed:
    """One regression request and the status kube answers it with."""

    name: str
    status: int
    method: str
    path: str
    ctype: str = ""
    body: bytes = b""
    headers: tuple[tuple[bytes, bytes], ...] = ()
    #: a watch, read to its end (every such seed carries ``timeoutSeconds``)
    stream: bool = False

    def request(self, world: rq.World) -> rq.Request:
        headers = rq._base_headers(world, self.ctype)
        for name, value in self.headers:
            rq._replace(headers, name, value)
        return rq.Request(self.method, self.path, headers, self.body, "regression", stream=self.stream)


def _all_namespaces(method: str, path: str) -> Seed:
    ctype = rq.MERGE_PATCH if method == "PATCH" else rq.JSON
    return Seed(f"n1-{method.lower()}-{path}", 405, method, path, ctype, b"{}")


def _token(raw: str) -> str:
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def _continue(name: str, rv: str) -> Seed:
    token = _token('{"v":"meta.k8s.io/v1","rv":' + rv + ',"start":"x"}')
    return Seed(
        f"n2-continue-rv-{name}", 400, "GET", f"/api/v1/namespaces/fuzz/configmaps?limit=1&continue={token}"
    )


#: issue 25's defects, in its order
SEEDS: tuple[Seed, ...] = (
    # N1: kube routes only list and watch on an all-namespaces collection path
    *(
        _all_namespaces(m, p)
        for p in (
            "/api/v1/configmaps",
            "/api/v1/pods",
            "/apis/scheduling.k8s.io/v1beta1/podgroups",
            "/apis/fuzz.example/v1/targets",
        )
        for m in ("DELETE", "POST", "PUT", "PATCH")
    ),
    Seed("n1-delete-status-subresource", 405, "DELETE", "/api/v1/namespaces/fuzz/pods/target/status"),
    Seed("n1-get-finalize", 405, "GET", "/api/v1/namespaces/fuzz/finalize"),
    # N2: the continue token decoded with Go's types
    _continue("over-uint64", "99999999999999999999"),
    _continue("int64-max-plus-one", "9223372036854775808"),
    _continue("float", "1.5"),
    _continue("string", '"1"'),
    # N3: a Table watch's options judged before the stream; a stream ends with an ERROR event
    Seed(
        "n3-table-watch-bad-include-object",
        400,
        "GET",
        "/api/v1/namespaces/fuzz/configmaps?watch=true&includeObject=x&timeoutSeconds=1",
        headers=((b"Accept", b"application/json;as=Table;v=v1;g=meta.k8s.io"),),
    ),
    Seed(
        "n3-table-watch-include-object-none",
        200,
        "GET",
        "/api/v1/namespaces/fuzz/configmaps?watch=1&includeObject=None&timeoutSeconds=1",
        headers=((b"Accept", b"application/json;as=Table;v=v1;g=meta.k8s.io"),),
        stream=True,
    ),
    # N4: a CRD status write that would drop its stored versions is refused (kube's status strategy)
    Seed(
        "n4-crd-status-null",
        422,
        "PATCH",
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/targets.fuzz.example/status",
        rq.MERGE_PATCH,
        b'{"status":null}',
    ),
    Seed(
        "n4-crd-status-put-without-status",
        422,
        "PUT",
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/targets.fuzz.example/status",
        rq.JSON,
        b'{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",'
        b'"metadata":{"name":"targets.fuzz.example"}}',
    ),
    # S1: a browser's cross-site write (no Content-Type, no preflight) is refused in every mode
    Seed(
        "s1-cross-site-post-without-content-type",
        403,
        "POST",
        "/api/v1/namespaces/fuzz-ref/configmaps",
        "",
        b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cross-site"}}',
        headers=((b"Origin", b"http://evil.example"), (b"Sec-Fetch-Site", b"cross-site")),
    ),
    Seed(
        "s1-same-site-delete",
        403,
        "DELETE",
        "/api/v1/namespaces/fuzz-ref/configmaps/fuzz-ref",
        headers=((b"Sec-Fetch-Site", b"same-site"),),
    ),
)

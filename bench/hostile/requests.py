"""The request grammar: hostile bodies, query strings, headers and paths across verbs and kinds.

Every request is addressed so that it cannot legitimately touch the reference objects: they live
in namespace :data:`REF_NAMESPACE` and under cluster-scoped names (``fuzz-ref-…``) the grammar
never spells in a path, and a collection delete outside a namespace always carries a label
selector no reference object matches. What the fuzz may change is namespace :data:`NAMESPACE`
and objects named ``target`` and alike; whatever the server does to those is fine, as long as
it answers.
"""

from __future__ import annotations

import base64
import copy
import re
import urllib.parse
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import orjson

from bench.hostile import values
from bench.hostile.choices import Chooser, chance
from bench.hostile.seeds import has_seed, seed

NAMESPACE = "fuzz"
REF_NAMESPACE = "fuzz-ref"
#: the label of everything a cluster-wide collection delete may reach
TARGET_SELECTOR = "fuzz-target=yes"

JSON = "application/json"
YAML = "application/yaml"
PROTOBUF = "application/vnd.kubernetes.protobuf"
JSON_PATCH = "application/json-patch+json"
MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_PATCH = "application/strategic-merge-patch+json"
APPLY_YAML = "application/apply-patch+yaml"
APPLY_CBOR = "application/apply-patch+cbor"
PATCH_TYPES = (MERGE_PATCH, JSON_PATCH, STRATEGIC_PATCH, APPLY_YAML)


@dataclass(frozen=True)
class Endpoint:
    """One served resource, as discovery lists it."""

    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool
    verbs: frozenset[str]
    subresources: tuple[str, ...] = ()

    @property
    def prefix(self) -> str:
        return f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version


def endpoints_from_discovery(resource_lists: Iterable[dict[str, Any]]) -> list[Endpoint]:
    """Endpoints from ``APIResourceList`` documents (``/api/v1``, ``/apis/G/V``), sorted."""
    out: list[Endpoint] = []
    for rl in resource_lists:
        gv = rl["groupVersion"]
        group, _, version = gv.rpartition("/")
        resources = rl.get("resources") or []
        subs: dict[str, list[str]] = {}
        for r in resources:
            if "/" in r["name"]:
                main, sub = r["name"].split("/", 1)
                subs.setdefault(main, []).append(sub)
        for r in resources:
            if "/" in r["name"]:
                continue
            out.append(
                Endpoint(
                    group,
                    version,
                    r["name"],
                    r["kind"],
                    bool(r["namespaced"]),
                    frozenset(r.get("verbs") or ()),
                    tuple(sorted(subs.get(r["name"], ()))),
                )
            )
    return sorted(out, key=lambda e: (not has_seed(e.group, e.plural), e.group, e.version, e.plural))


@dataclass(frozen=True)
class World:
    """What the grammar addresses: the server's endpoints, its address and its token."""

    endpoints: tuple[Endpoint, ...]
    host: str
    port: int
    token: str

    @property
    def authority(self) -> str:
        return f"{self.host}:{self.port}"


@dataclass
class Request:
    method: str
    target: str
    headers: list[tuple[bytes, bytes]]
    body: bytes = b""
    #: the hostile part, for the histogram and for reports ("body", "query", "header", "path")
    aspect: str = ""
    #: sent with ``Transfer-Encoding: chunked`` instead of a Content-Length
    chunked: bool = False
    notes: list[str] = field(default_factory=list)
    #: a bounded watch, read to its end
    stream: bool = False

    def wire(self) -> bytes:
        head = [f"{self.method} {self.target} HTTP/1.1".encode("latin-1", "replace")]
        for k, v in self.headers:
            head.append(k + b": " + v)
        body = self.body
        if self.chunked:
            head.append(b"Transfer-Encoding: chunked")
            body = (f"{len(body):x}\r\n".encode() + body + b"\r\n" if body else b"") + b"0\r\n\r\n"
        elif body or self.method in ("POST", "PUT", "PATCH"):
            head.append(b"Content-Length: " + str(len(body)).encode())
        return b"\r\n".join(head) + b"\r\n\r\n" + body

    def describe(self, limit: int = 1500) -> str:
        """A readable reproduction: request line, headers, the start of the body."""
        target = (
            self.target
            if len(self.target) <= limit
            else self.target[:limit] + f"… ({len(self.target)} chars)"
        )
        lines = [
            f"{self.method} {target}  [{self.aspect}{': ' + ', '.join(self.notes) if self.notes else ''}]"
        ]
        for k, v in self.headers:
            if k.lower() == b"authorization" and v.startswith(b"Bearer ") and len(v) > 40:
                v = b"Bearer <token>"
            lines.append(f"  {k.decode('latin-1')}: {v[:300].decode('latin-1')!r}")
        if self.body:
            shown = _squeeze(self.body)[:limit]
            lines.append(f"  body ({len(self.body)} bytes): {shown!r}{' …' if len(shown) == limit else ''}")
        return "\n".join(lines)


def _squeeze(body: bytes) -> bytes:
    """``[[[[…`` shown as ``[<*1600>``: runs are what hostile bodies are made of."""
    return re.sub(
        rb"(.{1,8}?)\1{15,}",
        lambda m: m.group(1) + b"<*" + str(len(m.group(0)) // len(m.group(1))).encode() + b">",
        body,
        flags=re.S,
    )


# -------------------------------------------------------------------------------- paths
#: path segments: percent-encoded hostile strings, bad escapes, dot segments
SEGMENTS = (
    "%00",
    "%zz",
    "%ff%fe",
    "a%2Fb",
    "%2e%2e",
    "..",
    ".",
    "%C3%A9",
    "%F0%9F%92%A5",
    "%ED%A0%80",
    "UPPER",
    "a" * 300,
    "a%20b",
    "-",
    "%",
)


def _segment(c: Chooser) -> str:
    c = c.detail
    if chance(c, 2):
        return c.pick(SEGMENTS)
    s = values.string(c)
    if s in ("fuzz-ref", "fuzz", "default", "kube-system"):
        s = "x"
    return urllib.parse.quote(s.encode("utf-8", "surrogatepass"), safe="")


def _namespace(c: Chooser) -> str:
    return c.pick((NAMESPACE, NAMESPACE, NAMESPACE, "default", "nope", "") + (_segment(c),))


def _name(c: Chooser, ep: Endpoint) -> str:
    return c.pick(("target", "target", "target", "t-2", "nope", _segment(c)))


def _path(
    c: Chooser, ep: Endpoint, *, named: bool, sub: str = "", ns: str | None = None, name: str = ""
) -> str:
    parts = [ep.prefix]
    if ep.namespaced:
        ns = _namespace(c) if ns is None else ns
        if ns:
            parts.append(f"/namespaces/{ns}")
    parts.append(f"/{ep.plural}")
    if named:
        parts.append(f"/{name or _name(c, ep)}")
        if sub:
            parts.append(f"/{sub}")
    return "".join(parts)


# -------------------------------------------------------------------------------- bodies
def _seed_of(ep: Endpoint, name: str = "target") -> dict[str, Any]:
    return seed(ep.group, ep.version, ep.kind, ep.plural, name, NAMESPACE if ep.namespaced else "")


def _positions(doc: Any) -> list[tuple[Any, Any]]:
    """Every (container, key) of ``doc``, parents before children (an explicit stack)."""
    out: list[tuple[Any, Any]] = []
    stack = [doc]
    while stack:
        v = stack.pop()
        if isinstance(v, values.Pairs):
            continue  # written as is; its pairs are not positions
        if isinstance(v, dict):
            for k in v:
                out.append((v, k))
                stack.append(v[k])
        elif isinstance(v, list):
            for i in range(len(v)):
                out.append((v, i))
                stack.append(v[i])
    return out


def mutate(c: Chooser, doc: Any, rounds: int) -> Any:
    """``rounds`` hostile edits of ``doc``: a wrong value, an unknown or repeated field, a
    removed field, a value wrapped in a list or a map; the whole document replaced at times."""
    c = c.detail
    doc = copy.deepcopy(doc)
    for _ in range(rounds):
        positions = _positions(doc)
        op = c.pick((0, 1, 1, 2, 2, 3, 4, 5, 6))
        if op == 6 or not positions:
            doc = values.value(c)
            continue
        parent, k = c.pick(positions)
        if op == 0:
            parent[k] = values.value(c)
        elif op == 1:
            # same JSON type, hostile content: past the type checks, into validation and the
            # strategies; a list gets a copy of one of its elements (duplicate list-map keys)
            parent[k] = values.same_type(c, parent[k])
        elif op == 2 and isinstance(parent, dict):
            parent[values.key(c)] = values.value(c)
        elif op == 3:
            del parent[k]
        elif op == 4:
            parent[k] = [parent[k]] if chance(c, 2) else {values.key(c): parent[k]}
        elif op == 5 and isinstance(parent, dict):
            pairs = values.Pairs(list(parent.items()) + [(k, values.value(c))])
            parent.clear()
            # a repeated key: the only way to keep it is to replace this mapping in its parent
            for gp, gk in _positions(doc):
                if gp[gk] is parent:
                    gp[gk] = pairs
                    break
            else:
                doc = pairs
        else:
            parent[k] = values.value(c)
    return doc


def _json_patch(c: Chooser) -> Any:
    c = c.detail
    paths = (
        "/metadata/labels/a",
        "/metadata/labels",
        "/spec",
        "",
        "/",
        "/-",
        "/metadata/finalizers/-",
        "/metadata/finalizers/0",
        "/metadata/finalizers/99999999999999999999",
        "/metadata/labels/~2",
        "/metadata/labels/a~1b",
        "/spec/template/spec/containers/0/name",
        "/metadata/name",
        "/metadata/resourceVersion",
        "/a/b/c",
        "metadata",
        5,
        None,
    )
    ops = []
    for _ in range(c.number(0, 4)):
        op: dict[str, Any] = {
            "op": c.pick(("add", "replace", "remove", "test", "move", "copy", "ADD", "", 5, None)),
            "path": c.pick(paths),
        }
        if chance(c, 2):
            op["value"] = values.value(c)
        if chance(c, 3):
            op["from"] = c.pick(paths)
        if chance(c, 4):
            op = mutate(c, op, 1)
        ops.append(op)
    return ops if not chance(c, 6) else mutate(c, ops, 1)


def _strategic(c: Chooser, doc: dict[str, Any]) -> Any:
    c = c.detail
    doc = {k: v for k, v in doc.items() if k not in ("apiVersion", "kind")}
    directives = (
        ("$patch", c.pick(("delete", "replace", "merge", "nope", 5))),
        ("$retainKeys", c.pick((["spec"], "spec", [5], None))),
        ("$setElementOrder/finalizers", c.pick(([], ["a"], "x", [{"a": 1}]))),
        ("$deleteFromPrimitiveList/finalizers", c.pick((["a"], "a", [None]))),
        ("$setElementOrder/containers", c.pick(([{"name": "c"}], [{"x": 1}], ["c"], 5))),
    )
    k, v = c.pick(directives)
    positions = [(p, kk) for p, kk in _positions(doc) if isinstance(p, dict)]
    if positions and chance(c, 2):
        parent, _ = c.pick(positions)
        parent[k] = v
    else:
        doc[k] = v
    return mutate(c, doc, c.number(0, 2))


def _delete_options(c: Chooser) -> Any:
    c = c.detail
    doc: dict[str, Any] = {
        "kind": c.pick(("DeleteOptions", "DeleteOptions", "Status", 5)),
        "apiVersion": c.pick(("v1", "meta.k8s.io/v1", "apps/v1", "nope/v9")),
    }
    for name, good in (
        ("gracePeriodSeconds", 0),
        ("propagationPolicy", "Background"),
        ("orphanDependents", False),
        ("dryRun", ["All"]),
        ("preconditions", {"uid": "u", "resourceVersion": "1"}),
    ):
        if chance(c, 2):
            doc[name] = good
    return mutate(c, doc, c.number(0, 3))


def _scale(c: Chooser, ep: Endpoint) -> Any:
    c = c.detail
    doc = {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {"name": "target", "namespace": NAMESPACE},
        "spec": {"replicas": 1},
    }
    return mutate(c, doc, c.number(0, 3))


def _subresource_body(c: Chooser, ep: Endpoint, sub: str) -> Any:
    if sub == "eviction":
        doc: Any = {
            "apiVersion": "policy/v1",
            "kind": "Eviction",
            "metadata": {"name": "target", "namespace": NAMESPACE},
            "deleteOptions": _delete_options(c),
        }
    elif sub == "binding":
        doc = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": "target", "namespace": NAMESPACE},
            "target": {"apiVersion": "v1", "kind": "Node", "name": "target"},
        }
    elif sub == "token":
        doc = {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenRequest",
            "spec": {
                "audiences": ["fuzz"],
                "expirationSeconds": 3600,
                "boundObjectRef": {"apiVersion": "v1", "kind": "Pod", "name": "target"},
            },
        }
    elif sub == "scale":
        return _scale(c, ep)
    else:
        doc = _seed_of(ep)
    return mutate(c, doc, c.number(0, 3))


def _encode(c: Chooser, doc: Any, ctype: str, ep: Endpoint) -> bytes:
    c = c.detail
    if ctype == PROTOBUF:
        return values.protobuf_body(c, ep.api_version, ep.kind)
    if ctype == APPLY_CBOR:
        return values.cbor_body(c)
    if chance(c, 12):
        return values.garbage(c)
    if ctype in (YAML, APPLY_YAML, "application/x-yaml", "text/yaml") and not chance(c, 4):
        return values.to_yaml(doc)
    return values.to_json(doc, ascii_only=not chance(c, 4))


# -------------------------------------------------------------------------------- queries
def _continue_token(c: Chooser) -> str:
    c = c.detail
    payload: Any = {"v": "meta.k8s.io/v1", "rv": 1, "start": f"{NAMESPACE}/target"}
    payload = mutate(c, payload, c.number(0, 2))
    raw = values.to_json(payload)
    token = base64.urlsafe_b64encode(raw).decode().rstrip("=")
    return c.pick((token, token, token + "=", "!!!", "a", "é", "%ff", token * 50))


_QUERY: dict[str, tuple[str, ...]] = {
    "labelSelector": (
        "app=fuzz",
        "app in (fuzz,x)",
        "app notin ()",
        "!app",
        "a==b==c",
        "x,",
        ",",
        "a in (",
        "a>1",
        "a<1e400",
        "a>nan",
        "a=é",
        "é=a",
        "a/b/c=d",
        "a" * 70 + "=b",
        "=",
        "a!=",
        "app=fuzz," * 300,
    ),
    "fieldSelector": (
        "metadata.name=target",
        "metadata.namespace!=fuzz",
        "spec.nodeName=",
        "status.phase=Running",
        "involvedObject.name=target",
        "regarding.name=target",
        "type=Normal",
        "spec.schedulerName==x",
        "nope=1",
        "metadata.name",
        "metadata.name in (a)",
        "=",
        "metadata.labels.app=fuzz",
    ),
    "limit": ("1", "0", "-1", "1e3", "99999999999999999999999", "0x10", " 5", "\u0663", "nan", "", "2.5"),
    "resourceVersion": ("0", "1", "-1", "abc", "99999999999999999999", "1e3", "", " 1", "\u0661"),
    "resourceVersionMatch": ("NotOlderThan", "Exact", "exact", "", "x"),
    "timeoutSeconds": ("1", "0", "-1", "nan", "inf", "1e400", "abc", "99999999999999999999"),
    "watch": ("true", "1", "false", "yes", "TRUE", ""),
    "allowWatchBookmarks": ("true", "x"),
    "sendInitialEvents": ("true", "false", "x"),
    "dryRun": ("All", "all", "", "All,All", "x"),
    "fieldManager": ("fuzz", "", "m" * 129, "é" * 70, "a\x00b", "kubectl", "before-first-apply"),
    "fieldValidation": ("Strict", "Warn", "Ignore", "strict", "", "x"),
    "propagationPolicy": ("Orphan", "Background", "Foreground", "", "orphan", "x"),
    "gracePeriodSeconds": ("0", "-1", "1e3", "99999999999999999999", "abc", "30"),
    "orphanDependents": ("true", "false", "x"),
    "force": ("true", "false", "x"),
    "includeObject": ("Object", "None", "Metadata", "x"),
    "pretty": ("true", "x"),
    "timeout": ("1s", "abc", "-1s", "99999h"),
}


def _query(c: Chooser, most: int) -> list[tuple[str, str]]:
    out = []
    names = tuple(_QUERY)
    d = c.detail
    for _ in range(c.number(0, most)):
        if chance(d, 10):
            out.append((values.string(d), values.string(d)))
            continue
        name = c.pick(names)
        if name == "continue" or (name == "limit" and chance(d, 4)):
            out.append(("continue", _continue_token(d)))
            continue
        v = d.pick(_QUERY[name]) if not chance(d, 5) else values.string(d)
        out.append((name, v))
    return out


def _encode_query(c: Chooser, query: list[tuple[str, str]]) -> str:
    c = c.detail
    parts = []
    for k, v in query:
        if chance(c, 10):  # raw: unescaped, or an escape that decodes to nothing valid
            parts.append(f"{k}={c.pick(('%zz', '%ff', '%00', '&', '=', '%', v.replace(' ', '+')))}")
        else:
            parts.append(
                urllib.parse.quote(k.encode("utf-8", "surrogatepass"), safe="")
                + "="
                + urllib.parse.quote(v.encode("utf-8", "surrogatepass"), safe="")
            )
    return "&".join(parts)


# -------------------------------------------------------------------------------- headers
_CONTENT_TYPES = (
    "application/json; charset=utf-8",
    "application/json;charset=latin-1",
    "application/json;;;",
    'application/json; charset="',
    "APPLICATION/JSON",
    "*/*",
    "",
    "text/plain",
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=",
    "application/yaml; x=y",
    "application/vnd.kubernetes.protobuf;stream=watch",
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
    "application/apply-patch+cbor",
    "application/cbor",
    "application/json\u00e9",
    "a" * 5000,
    "/",
    ";",
)

_ACCEPTS = (
    "application/json;as=Table;v=v1;g=meta.k8s.io",
    "application/json;as=Table;v=v1beta1;g=meta.k8s.io",
    "application/json;as=Table;v=v9;g=meta.k8s.io",
    "application/json;as=Table",
    "application/json;as=Table;v=v1;g=meta.k8s.io, application/json",
    "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io",
    "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io",
    "application/json;as=APIGroupDiscoveryList;v=v2;g=apidiscovery.k8s.io",
    "application/json;as=APIGroupDiscoveryList;v=v2beta1;g=apidiscovery.k8s.io",
    "application/vnd.kubernetes.protobuf",
    "application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io",
    "application/yaml",
    "text/html",
    "*/*;q=0",
    "application/json;q=abc",
    "application/json;q=nan",
    "application/json;q=1e400",
    ";;;",
    ",,,",
    "application/json;stream=watch",
    "application/json, " * 500,
    "",
)

_IMPERSONATE = (
    b"Impersonate-User",
    b"Impersonate-Group",
    b"Impersonate-Uid",
    b"Impersonate-Extra-scopes",
    b"Impersonate-Extra-%41",
    b"Impersonate-Extra-",
)

_AUTH_BROKEN = (
    b"Bearer",
    b"Bearer ",
    b"bearer",
    b"Bearer  ",
    b"Basic YTpi",
    b"Basic",
    b"Bearer x",
    b"Token x",
    b"Bearer \xff\xfe",
    b"Bearer a b c",
    b"Bearer " + b"x" * 10_000,
)

#: raw header values: bytes outside ASCII, NUL, lone CR, folding, huge
_RAW_VALUES = (
    b"\xff",
    b"\xc3\xa9",
    b"\x00",
    b"a\x00b",
    b"a\rb",
    b" leading",
    b"\ttab",
    b"",
    b"x" * 20_000,
    b"\xe2\x80\xae",
    b"a\r\n b",
)


def _header_value(c: Chooser) -> bytes:
    c = c.detail
    if chance(c, 2):
        return c.pick(_RAW_VALUES)
    return values.string(c).encode("utf-8", "surrogatepass")


def _base_headers(world: World, ctype: str) -> list[tuple[bytes, bytes]]:
    h = [
        (b"Host", world.authority.encode()),
        (b"Authorization", f"Bearer {world.token}".encode()),
        (b"User-Agent", b"gangplane-fuzz/1.0"),
        (b"Accept", b"application/json"),
    ]
    if ctype:
        h.append((b"Content-Type", ctype.encode("utf-8", "surrogatepass")))
    return h


def _replace(headers: list[tuple[bytes, bytes]], name: bytes, value: bytes | None) -> None:
    headers[:] = [(k, v) for k, v in headers if k.lower() != name.lower()]
    if value is not None:
        headers.append((name, value))


def _hostile_headers(c: Chooser, world: World, headers: list[tuple[bytes, bytes]], notes: list[str]) -> bool:
    """Corrupt one to three headers; returns True when the body should go chunked."""
    chunked = False
    d = c.detail
    for _ in range(c.number(1, 3)):
        which = c.number(0, 9)
        if which == 0:
            _replace(headers, b"Content-Type", d.pick(_CONTENT_TYPES).encode("utf-8", "surrogatepass"))
            notes.append("Content-Type")
        elif which == 1:
            _replace(headers, b"Accept", d.pick(_ACCEPTS).encode("utf-8", "surrogatepass"))
            notes.append("Accept")
        elif which == 2:
            name = d.pick(_IMPERSONATE)
            headers.append((name, _header_value(d) if chance(d, 2) else b"system:admin"))
            notes.append(name.decode())
        elif which == 3:
            auth = d.pick(_AUTH_BROKEN + (None,))
            _replace(headers, b"Authorization", auth)
            if chance(d, 4):  # a second one after the good one
                headers.append((b"Authorization", f"Bearer {world.token}".encode()))
            notes.append("Authorization")
        elif which == 4:
            host = d.pick(
                (
                    None,
                    b"evil.example",
                    b"evil.example:6443",
                    b"[::1",
                    b"[::1]:1",
                    b"localhost",
                    b"127.0.0.1:1:2",
                    b"\xff",
                    b"",
                    b"127.0.0.2",
                    b"LOCALHOST.",
                )
            )
            _replace(headers, b"Host", host)
            if chance(d, 4):
                headers.append((b"Host", world.authority.encode()))
            notes.append("Host")
        elif which == 5:
            _replace(headers, b"User-Agent", _header_value(d))
            notes.append("User-Agent")
        elif which == 6:
            headers.append(
                (
                    d.pick((b"X-Fuzz", b"Warning", b"Expect", b"Accept-Encoding", b"Content-Encoding")),
                    _header_value(d),
                )
            )
            notes.append("extra")
        elif which == 7:
            headers.append((d.pick((b"X\x00", b"\xff", b"A B", b"", b":x", b"X-" * 100)), b"v"))
            notes.append("bad name")
        elif which == 8:
            chunked = True
            notes.append("chunked")
        else:
            headers.append((b"Content-Type", d.pick(_CONTENT_TYPES).encode("utf-8", "surrogatepass")))
            notes.append("2x Content-Type")
    return chunked


# -------------------------------------------------------------------------------- requests
_SUB_METHODS = {"eviction": ("POST",), "binding": ("POST",), "token": ("POST",), "finalize": ("PUT",)}


def _verb_and_sub(c: Chooser, ep: Endpoint) -> tuple[str, bool, str]:
    """(method, named, subresource) for ``ep``: mostly what it serves, at times what it does not."""
    main = (
        ("POST", False, "", "create"),
        ("GET", False, "", "list"),
        ("GET", True, "", "get"),
        ("PUT", True, "", "update"),
        ("PATCH", True, "", "patch"),
        ("DELETE", True, "", "delete"),
        ("DELETE", False, "", "deletecollection"),
    )
    d = c.detail
    options = [(m, named, sub) for m, named, sub, verb in main if verb in ep.verbs or chance(d, 10)]
    for sub in ep.subresources:
        for method in _SUB_METHODS.get(sub, ("GET", "PUT", "PATCH")):
            options.append((method, True, sub))
    if chance(d, 8):
        return d.pick(
            (("POST", True, ""), ("PUT", False, ""), ("PATCH", False, ""), ("POST", True, "status"))
        )
    return c.pick(options)


#: what a GET asks for: objects, server-side Tables (every printer meets every stored object),
#: metadata-only views
_READ_ACCEPTS = (
    "application/json",
    "application/json;as=Table;v=v1;g=meta.k8s.io",
    "application/json;as=Table;v=v1beta1;g=meta.k8s.io",
    "application/json;as=Table;v=v1;g=meta.k8s.io, application/json",
    "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io",
    "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io",
    "application/yaml",
)


def _body_for(
    c: Chooser, ep: Endpoint, method: str, sub: str, rounds: int, name: str = "target"
) -> tuple[str, bytes]:
    if method == "PATCH":
        ctype = c.pick(PATCH_TYPES + (APPLY_CBOR, JSON))
        seed_doc = _subresource_body(c, ep, sub) if sub == "scale" else _seed_of(ep)
        if ctype == JSON_PATCH:
            doc: Any = _json_patch(c)
        elif ctype == STRATEGIC_PATCH and isinstance(seed_doc, dict):
            doc = _strategic(c, seed_doc)
        else:
            doc = mutate(c, seed_doc, rounds)
        return ctype, _encode(c, doc, ctype, ep)
    ctype = c.pick((JSON, JSON, YAML, PROTOBUF, "application/x-yaml", ""))
    if method == "DELETE":
        if chance(c.detail, 3):
            return "", b""
        return ctype, _encode(c, _delete_options(c), ctype, ep)
    if sub:
        return ctype, _encode(c, _subresource_body(c, ep, sub), ctype, ep)
    d = c.detail
    # a PUT names its object as the path does (mostly: a mismatch is a 400 of its own)
    doc = _seed_of(ep, name if method == "PUT" and not chance(d, 8) else d.pick(("target", "t-2", "t-3")))
    if method == "PUT" and chance(d, 2):
        doc["metadata"]["resourceVersion"] = d.pick(("1", "0", "abc", "", "99999999999"))
    return ctype, _encode(c, mutate(c, doc, rounds), ctype, ep)


ASPECTS = ("body", "query", "header", "path")


def request(c: Chooser, world: World, aspect: str = "") -> Request:
    """One hostile request. Its ``aspect`` says what is hostile (one of :data:`ASPECTS`, drawn
    when empty): the body, the query string, the headers or the path; the rest is what a
    correct client would send."""
    ep = c.pick(world.endpoints)
    aspect = aspect or c.pick(("body", "body", "query", "header", "path"))
    method, named, sub = _verb_and_sub(c, ep)
    notes: list[str] = []
    rounds = c.number(1, 3) if aspect == "body" else 0
    name = _name(c, ep) if aspect == "path" else c.pick(("target", "target", "target", "t-2", "nope"))
    ctype, body = ("", b"")
    if method in ("POST", "PUT", "PATCH", "DELETE"):
        plain = name if re.fullmatch(r"[a-z0-9.-]+", name) else "target"
        ctype, body = _body_for(c, ep, method, sub, rounds, plain)
    path = (
        _path(c, ep, named=named, sub=sub, name=name)
        if aspect == "path"
        else _path(c, ep, named=named, sub=sub, ns=NAMESPACE, name=name)
    )
    query = _query(c, 5 if aspect == "query" else 1)
    d = c.detail
    stream = False
    if method == "GET" and not named and not any(k == "watch" for k, _ in query) and chance(d, 4):
        query.append(("watch", "true"))
        if c.heavy and chance(d, 3):
            # read to its end: initial events, Table rows of whatever is stored, the server's close
            query += [("timeoutSeconds", "1"), ("resourceVersion", "0")]
            stream = True
    # a DELETE names one object only with a non-empty name: ``…/plural/`` and ``…//…`` are the
    # collection (kube trims slashes when it reads a path)
    one_object = named and not path.endswith("/") and "//" not in path
    guard = ""
    if method == "DELETE" and not one_object and path != f"{ep.prefix}/namespaces/{NAMESPACE}/{ep.plural}":
        # outside the fuzz namespace a collection delete reaches only what the fuzz labelled:
        # the guard is the only labelSelector and is never garbled
        query = [(k, v) for k, v in query if "labelselector" not in k.lower()]
        guard = "labelSelector=" + urllib.parse.quote(TARGET_SELECTOR + d.pick(("", ",app=fuzz", ",!x")))
        notes.append("guarded delete")
    encoded = "&".join(p for p in (guard, _encode_query(c, query) if query else "") if p)
    target = path + ("?" + encoded if encoded else "")
    headers = _base_headers(world, ctype)
    if method == "GET" and chance(d, 2):
        _replace(headers, b"Accept", d.pick(_READ_ACCEPTS).encode())
        if chance(d, 2):
            target += (
                ("&" if "?" in target else "?") + "includeObject=" + d.pick(("Object", "None", "Metadata"))
            )
    chunked = False
    if aspect == "header":
        chunked = _hostile_headers(c, world, headers, notes)
    if aspect == "path" and chance(d, 4):
        method = d.pick(("HEAD", "OPTIONS", "FOO", "get", "TRACE", "CONNECT"))
        notes.append("method")
    return Request(method, target, headers, body, aspect, chunked, notes, stream)


def valid_create(
    ep: Endpoint, world: World, namespace: str, name: str, labels: dict[str, str] | None = None
) -> Request:
    """A correct create of ``ep``'s seed (setup: targets and reference objects)."""
    doc = seed(ep.group, ep.version, ep.kind, ep.plural, name, namespace if ep.namespaced else "")
    if labels and "labels" in doc["metadata"]:
        doc["metadata"]["labels"].update(labels)
    path = ep.prefix + (f"/namespaces/{namespace}" if ep.namespaced else "") + f"/{ep.plural}"
    return Request("POST", path, _base_headers(world, JSON), orjson.dumps(doc), "setup")


def get(world: World, path: str) -> Request:
    return Request("GET", path, _base_headers(world, ""), b"", "check")

"""Hostile and careless request bodies against the ASGI app: each is a 4xx Status before anything is
stored (the stored object is unchanged afterwards), never a 500, and a write that succeeds never
fails while its response is written.

The classes a black-box fuzz of ``gangplane serve`` found (issue 13): DeleteOptions of the wrong
types, bodies nested past the decoders' limits, non-object ``metadata`` in apply and Scale
bodies, JSON surrogate-pair escapes in YAML, malformed Event labels, unknown field names the
``Warning`` header could not carry, JSON patch copy doublings, YAML alias bombs and oversized
bodies.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import httpx
import orjson
import pytest

from apiserver.patch.limits import MAX_DEPTH
from apiserver.server.app import APIApp
from apiserver.server.instance import build_api, new_metrics_registry

CMS = "/api/v1/namespaces/default/configmaps"
DEPLOYS = "/apis/apps/v1/namespaces/default/deployments"
EVENTS_V1 = "/apis/events.k8s.io/v1/namespaces/default/events"
JSON = {"Content-Type": "application/json"}
MERGE = {"Content-Type": "application/merge-patch+json"}
JSONPATCH = {"Content-Type": "application/json-patch+json"}
SMP = {"Content-Type": "application/strategic-merge-patch+json"}
APPLY = {"Content-Type": "application/apply-patch+yaml"}
YAML = {"Content-Type": "application/yaml"}


class _Http:
    """Requests straight into the ASGI app, each answer checked to be a Status when it fails."""

    def __init__(self) -> None:
        reg, metrics = new_metrics_registry()
        self.api = build_api()
        self.app = APIApp(self.api, metrics, reg).asgi()

    def request(self, method: str, url: str, **kw: Any) -> httpx.Response:
        async def go() -> httpx.Response:
            transport = httpx.ASGITransport(app=self.app)
            async with httpx.AsyncClient(transport=transport, base_url="http://t") as c:
                return await c.request(method, url, **kw)

        r = asyncio.run(go())
        if r.status_code >= 400:
            assert r.json()["kind"] == "Status", r.text
        return r


@pytest.fixture
def http() -> _Http:
    h = _Http()
    cm = {"metadata": {"name": "cm", "labels": {"a": "b"}}, "data": {"k": "v"}}
    assert h.request("POST", CMS, json=cm).status_code == 201
    return h


def _stored(http: _Http, url: str) -> bytes:
    r = http.request("GET", url)
    assert r.status_code == 200
    return r.content


def chain(levels: int) -> str:
    return '{"a":' * (levels - 1) + "{}" + "}" * (levels - 1)


def test_delete_options_of_the_wrong_type_are_400_and_delete_nothing(http: _Http) -> None:
    before = _stored(http, f"{CMS}/cm")
    for body, headers in (
        (b'{"preconditions": 5}', JSON),
        (b'{"gracePeriodSeconds": "soon"}', JSON),
        (b'{"propagationPolicy": {"x": 1}}', JSON),
        (b"gracePeriodSeconds: .inf\n", YAML),
        (b"[1, 2]", JSON),
    ):
        r = http.request("DELETE", f"{CMS}/cm", content=body, headers=headers)
        assert r.status_code == 400, (body, r.text)
        r = http.request("DELETE", CMS, content=body, headers=headers)  # deletecollection
        assert r.status_code == 400, (body, r.text)
    r = http.request("DELETE", f"{CMS}/cm", content=b'{"preconditions": 5}', headers=JSON)
    assert r.json()["message"] == (
        "json: cannot unmarshal number into Go struct field DeleteOptions.preconditions of type v1.Preconditions"
    )
    assert _stored(http, f"{CMS}/cm") == before


@pytest.mark.parametrize("levels", [MAX_DEPTH + 1, 990, 1500])
def test_deep_bodies_are_400_for_every_verb_and_patch_type(http: _Http, levels: int) -> None:
    before = _stored(http, f"{CMS}/cm")
    deep = chain(levels)
    cases: list[tuple[str, str, str, dict[str, str]]] = [
        ("POST", CMS, '{"metadata":{"name":"n"},"x":DEEP}', JSON),
        ("POST", CMS + "?fieldValidation=Strict", '{"metadata":{"name":"n"},"x":DEEP}', JSON),
        ("PUT", f"{CMS}/cm", '{"metadata":{"name":"cm"},"x":DEEP}', JSON),
        ("PATCH", f"{CMS}/cm", '{"x":DEEP}', MERGE),
        ("PATCH", f"{CMS}/cm", '[{"op":"add","path":"/x","value":DEEP}]', JSONPATCH),
        ("PATCH", f"{CMS}/cm", '{"x":DEEP}', SMP),
        (
            "PATCH",
            f"{CMS}/cm?fieldManager=m",
            '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm"},"x":DEEP}',
            APPLY,
        ),
        ("DELETE", f"{CMS}/cm", '{"preconditions":DEEP}', JSON),
    ]
    block = "x:\n" + "".join("  " * (i + 1) + "a:\n" for i in range(levels)) + "  " * (levels + 1) + "b: 1\n"
    cases.append(("PATCH", f"{CMS}/cm?fieldManager=m", "metadata: {name: cm}\n" + block, APPLY))
    cases.append(("POST", CMS, "metadata: {name: y}\n" + block, YAML))
    cases.append(("POST", CMS, "metadata: {name: y}\nx: " + "[" * levels + "]" * levels + "\n", YAML))
    for method, url, body, headers in cases:
        r = http.request(method, url, content=body.replace("DEEP", deep).encode(), headers=headers)
        assert r.status_code == 400, (method, url, headers, r.text[:300])
    assert _stored(http, f"{CMS}/cm") == before
    assert http.request("GET", f"{CMS}/n").status_code == 404


def test_non_object_metadata_in_apply_and_scale_bodies_is_400(http: _Http) -> None:
    deploy = {
        "metadata": {"name": "d"},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"a": "b"}},
            "template": {
                "metadata": {"labels": {"a": "b"}},
                "spec": {"containers": [{"name": "c", "image": "i"}]},
            },
        },
    }
    assert http.request("POST", DEPLOYS, json=deploy).status_code == 201
    before = _stored(http, f"{DEPLOYS}/d")
    cm_before = _stored(http, f"{CMS}/cm")
    for meta in (5, "x", [1]):
        r = http.request(
            "PATCH",
            f"{CMS}/cm?fieldManager=m",
            content=orjson.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta}),
            headers=APPLY,
        )
        assert r.status_code == 400, r.text
        scale = {"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": meta, "spec": {"replicas": 3}}
        r = http.request("PUT", f"{DEPLOYS}/d/scale", json=scale)
        assert r.status_code == 400, r.text
        assert "Go struct field Scale.metadata of type v1.ObjectMeta" in r.json()["message"]
        r = http.request(
            "PATCH", f"{DEPLOYS}/d/scale", content=orjson.dumps({"metadata": meta}), headers=MERGE
        )
        assert r.status_code == 400, r.text
        ops = [{"op": "replace", "path": "/metadata", "value": meta}]
        r = http.request("PATCH", f"{DEPLOYS}/d/scale", content=orjson.dumps(ops), headers=JSONPATCH)
        assert r.status_code == 400, r.text
    r = http.request(
        "PATCH",
        f"{CMS}/cm?fieldManager=m",
        content=b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm, labels: 5}\n",
        headers=APPLY,
    )
    assert r.status_code == 400, r.text
    assert _stored(http, f"{DEPLOYS}/d") == before
    assert _stored(http, f"{CMS}/cm") == cm_before


def test_apply_of_json_surrogate_pair_escapes_stores_the_character(http: _Http) -> None:
    # Python's json.dumps writes an emoji as "\ud83d\udca5"; the apply body is YAML or JSON
    for name, body in (
        (
            "j",
            b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"j"},"data":{"e":"\\ud83d\\udca5"}}',
        ),
        ("y", b'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: "y"}\ndata: {e: "\\ud83d\\udca5"}\n'),
    ):
        r = http.request("PATCH", f"{CMS}/{name}?fieldManager=py", content=body, headers=APPLY)
        assert r.status_code == 201, r.text
        assert http.request("GET", f"{CMS}/{name}").json()["data"] == {"e": "\U0001f4a5"}


def _event(name: str, **meta: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": name, **meta},
        "eventTime": "2026-01-01T00:00:00.000000Z",
        "reportingController": "example.com/c",
        "reportingInstance": "i",
        "action": "Act",
        "reason": "Why",
        "regarding": {"kind": "Pod", "name": "p", "namespace": "default"},
        "type": "Normal",
    }


def test_event_labels_of_the_wrong_type_are_refused_and_never_break_selection(http: _Http) -> None:
    assert http.request("POST", EVENTS_V1, json=_event("ok", labels={"a": "b"})).status_code == 201
    before = _stored(http, f"{EVENTS_V1}/ok")
    assert http.request("POST", EVENTS_V1, json=_event("bad", labels="x")).status_code == 400
    for body, headers in (
        ({"metadata": {"labels": "x"}}, MERGE),
        ([{"op": "replace", "path": "/metadata/labels", "value": "x"}], JSONPATCH),
        ({"metadata": {"labels": {"a": 5}}}, MERGE),
    ):
        r = http.request("PATCH", f"{EVENTS_V1}/ok", content=orjson.dumps(body), headers=headers)
        assert r.status_code == 400, r.text
    assert _stored(http, f"{EVENTS_V1}/ok") == before
    # an Event stored with a malformed label map (old state, not the API) matches no selector
    rd = http.api.registry.get("", "v1", "events")
    assert rd is not None
    http.api.store.create(
        rd.storage_key,
        ("default", "planted"),
        {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": "planted", "namespace": "default", "labels": "x"},
        },
    )
    for url in ("/apis/events.k8s.io/v1/events", "/api/v1/events", "/api/v1/namespaces/default/events"):
        r = http.request("GET", url + "?labelSelector=a%3Db")
        assert r.status_code == 200, r.text
        assert [i["metadata"]["name"] for i in r.json()["items"]] == ["ok"]
        # a past deadline (as in kube, a negative timeout): the initial events, then the end
        watch = http.request("GET", url + "?labelSelector=a%3Db&watch=1&timeoutSeconds=-1")
        assert watch.status_code == 200
        assert [orjson.loads(line)["object"]["metadata"]["name"] for line in watch.text.splitlines()] == [
            "ok"
        ]
    r = http.request("DELETE", "/api/v1/namespaces/default/events?labelSelector=a%3Dnone")
    assert r.status_code == 200


def test_unknown_field_names_the_warning_header_cannot_carry_do_not_fail_the_write(http: _Http) -> None:
    r = http.request(
        "POST", CMS, content='{"metadata":{"name":"u1"},"d\u00e4t\u4e2d":1}'.encode(), headers=JSON
    )
    assert r.status_code == 201, r.text
    warned = [v for k, v in r.headers.raw if k.lower() == b"warning"]
    assert warned == ['299 - "unknown field \\"d\u00e4t\u4e2d\\""'.encode()]  # as kube: UTF-8 bytes
    r = http.request("POST", CMS, content=b'{"metadata":{"name":"u2"},"a\\u0000b":1,"c\\nd":2}', headers=JSON)
    assert r.status_code == 201, r.text
    assert r.headers.get_list("warning") == []  # kube drops warnings holding control characters
    for name in ("u1", "u2"):
        assert http.request("GET", f"{CMS}/{name}").status_code == 200
    # the write happened once: a retry is the usual AlreadyExists
    r = http.request(
        "POST", CMS, content='{"metadata":{"name":"u1"},"d\u00e4t\u4e2d":1}'.encode(), headers=JSON
    )
    assert r.status_code == 409


def test_json_patch_copy_doublings_are_refused_before_they_cost(http: _Http) -> None:
    before = _stored(http, f"{CMS}/cm")
    ops = [{"op": "add", "path": "/metadata/annotations", "value": {"v": "y" * 100}}]
    ops += [
        {"op": "copy", "from": "/metadata/annotations", "path": f"/metadata/annotations/c{i}"}
        for i in range(19)
    ]
    r = http.request("PATCH", f"{CMS}/cm", content=orjson.dumps(ops), headers=JSONPATCH)
    assert r.status_code == 422, r.text
    assert "exceeding the limit 3145728" in r.json()["message"]
    assert _stored(http, f"{CMS}/cm") == before


def test_yaml_alias_bombs_are_400(http: _Http) -> None:
    lines = [
        "metadata: {name: bomb}",
        "x:",
        '  a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
    ]
    for level in range(1, 9):
        lines.append(f"  a{level}: &a{level} [" + ",".join([f"*a{level - 1}"] * 9) + "]")
    r = http.request("POST", CMS, content="\n".join(lines).encode(), headers=YAML)
    assert r.status_code == 400
    assert r.json()["message"] == "error converting YAML to JSON: yaml: document contains excessive aliasing"
    assert http.request("GET", f"{CMS}/bomb").status_code == 404


def test_oversized_bodies_are_413_without_reading_them_whole(http: _Http) -> None:
    sent: list[int] = []

    async def body() -> AsyncIterator[bytes]:
        yield b'{"metadata":{"name":"big"},"data":{"k":"'
        for _ in range(64):
            sent.append(1)
            yield b"x" * (1024 * 1024)
        yield b'"}}'

    r = http.request("POST", CMS, content=body(), headers=JSON)
    assert r.status_code == 413
    assert r.json()["message"] == "Request entity too large: limit is 3145728"
    assert len(sent) <= 4  # refused at the limit, not after 64 MiB
    r = http.request("POST", CMS, content=b"{}", headers={**JSON, "Content-Length": str(64 * 1024 * 1024)})
    assert r.status_code == 413
    assert http.request("GET", f"{CMS}/big").status_code == 404


def test_large_bodies_keep_field_validation(http: _Http) -> None:
    """Bodies decoded on the worker thread still get duplicate and unknown field reports."""
    filler = ",".join(f'"f{i}":"{"x" * 64}"' for i in range(5000))
    for ctype in ("application/json", "application/yaml"):
        body = '{"metadata":{"name":"big"},"data":{%s,"k":"1","k":"2"}}' % filler  # noqa: UP031
        r = http.request(
            "POST", CMS + "?fieldValidation=Strict", content=body.encode(), headers={"Content-Type": ctype}
        )
        assert r.status_code == 400, r.text[:300]
        assert r.json()["message"].endswith('strict decoding error: duplicate field "data.k"')
    r = http.request("POST", CMS, content=body.encode(), headers=JSON)
    assert r.status_code == 201
    assert [v for k, v in r.headers.raw if k == b"warning"] == [b'299 - "duplicate field \\"data.k\\""']


@pytest.mark.parametrize(
    ("method", "url", "body", "text"),
    [
        (
            "POST",
            "/api/v1/namespaces/default/pods/p/binding",
            {"metadata": 7, "target": {"kind": "Node", "name": "n"}},
            'Binding in version "v1" cannot be handled as a Binding: json: cannot unmarshal number into Go '
            "struct field Binding.metadata of type v1.ObjectMeta",
        ),
        (
            "POST",
            "/api/v1/namespaces/default/pods/p/eviction",
            {"metadata": {"name": "p"}, "deleteOptions": {"gracePeriodSeconds": "x"}},
            'Eviction in version "v1" cannot be handled as a Eviction: json: cannot unmarshal string into Go '
            "struct field DeleteOptions.deleteOptions.gracePeriodSeconds of type int64",
        ),
        (
            "POST",
            "/api/v1/namespaces/default/serviceaccounts/default/token",
            {"spec": {"boundObjectRef": {"kind": "Pod", "name": [1]}}},
            None,
        ),
        ("PUT", "/api/v1/namespaces/default/finalize", {"metadata": {"name": "default"}, "spec": 7}, None),
        ("POST", "/api/v1/namespaces/default/pods/p/binding", 7, None),
    ],
)
def test_subresource_bodies_are_type_checked(
    http: _Http, method: str, url: str, body: object, text: str | None
) -> None:
    pod = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "i"}]}}
    assert http.request("POST", "/api/v1/namespaces/default/pods", json=pod).status_code == 201
    before = _stored(http, "/api/v1/namespaces/default/pods/p")
    r = http.request(method, url, content=orjson.dumps(body), headers=JSON)
    assert r.status_code == 400, r.text
    if text is not None:
        assert r.json()["message"] == text
    assert _stored(http, "/api/v1/namespaces/default/pods/p") == before


def test_a_crd_deprecation_warning_kube_cannot_send_never_fails_its_requests(http: _Http) -> None:
    from tests.crd_support import crontab, crontab_crd

    crd = crontab_crd()
    crd["spec"]["versions"][0]["deprecated"] = True
    crd["spec"]["versions"][0]["deprecationWarning"] = "d\u00e9pr\u00e9ci\u00e9 \u4e2d, use v2"
    r = http.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=crd)
    assert r.status_code == 201, r.text
    r = http.request("POST", "/apis/stable.example.com/v1/namespaces/default/crontabs", json=crontab("c"))
    assert r.status_code == 201, r.text
    warned = [v for k, v in r.headers.raw if k == b"warning"]
    assert warned == ['299 - "d\u00e9pr\u00e9ci\u00e9 \u4e2d, use v2"'.encode()]


def test_null_list_elements_and_map_values_decode_to_go_zero_values(http: _Http) -> None:
    pod = {
        "metadata": {"name": "z", "labels": {"a": None}},
        "spec": {"containers": [{"name": "c", "image": "i", "args": [None]}]},
    }
    r = http.request("POST", "/api/v1/namespaces/default/pods", json=pod)
    assert r.status_code == 201, r.text
    stored = r.json()
    assert stored["metadata"]["labels"] == {"a": ""}
    assert stored["spec"]["containers"][0]["args"] == [""]
    # a null toleration is an empty one, which kube's validation refuses (not a server error)
    pod = {
        "metadata": {"name": "z2"},
        "spec": {"containers": [{"name": "c", "image": "i"}], "tolerations": [None]},
    }
    r = http.request("POST", "/api/v1/namespaces/default/pods", json=pod)
    assert r.status_code == 422, r.text
    assert "spec.tolerations[0].operator: Invalid value" in r.json()["message"]
    r = http.request(
        "POST",
        "/api/v1/namespaces/default/pods",
        json={"metadata": {"name": "z3"}, "spec": {"containers": [None]}},
    )
    assert r.status_code == 422, r.text


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("limit=%D9%A3", 'strconv.ParseInt: parsing "٣": invalid syntax'),  # an Arabic-Indic digit
        ("limit=3_0", 'strconv.ParseInt: parsing "3_0": invalid syntax'),
        ("limit=1e3", 'strconv.ParseInt: parsing "1e3": invalid syntax'),
        (
            "limit=99999999999999999999",
            'strconv.ParseInt: parsing "99999999999999999999": value out of range',
        ),
        ("timeoutSeconds=nan", 'strconv.ParseInt: parsing "nan": invalid syntax'),
        ("watch=true&timeoutSeconds=nan", 'strconv.ParseInt: parsing "nan": invalid syntax'),
        ("watch=true&timeoutSeconds=0.1s", 'strconv.ParseInt: parsing "0.1s": invalid syntax'),
        ("watch=true&timeoutSeconds=%201", 'strconv.ParseInt: parsing " 1": invalid syntax'),
    ],
)
def test_integer_query_parameters_parse_as_go_does_or_are_400(http: _Http, query: str, message: str) -> None:
    r = http.request("GET", f"{CMS}?{query}")
    assert (r.status_code, r.json()["reason"], r.json()["message"]) == (400, "BadRequest", message)


def test_signed_integer_query_parameters_are_accepted(http: _Http) -> None:
    r = http.request("GET", f"{CMS}?limit=%2B1")
    assert r.status_code == 200 and len(r.json()["items"]) == 1
    r = http.request("GET", f"{CMS}?watch=true&timeoutSeconds=-1")  # a past deadline: ends at once
    assert r.status_code == 200

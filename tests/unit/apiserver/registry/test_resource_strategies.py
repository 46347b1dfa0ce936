"""resource.k8s.io/v1 strategies: defaults, validation with upstream's field paths and messages."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from apiserver import errors
from apiserver.api.types import Obj
from apiserver.client.interface import DEVICECLASSES, RESOURCECLAIMS, RESOURCECLAIMTEMPLATES, RESOURCESLICES
from apiserver.registry.strategies.resource import (
    DeviceClassStrategy,
    ResourceClaimStrategy,
    ResourceClaimTemplateStrategy,
    ResourceSliceStrategy,
)
from apiserver.rest.strategy import StrategyContext
from featuregates import FeatureGate

CTX = StrategyContext(gates=FeatureGate())


def strs(errs: list[Any]) -> list[str]:
    return [str(e) for e in errs]


def claim(*requests: Obj) -> Obj:
    reqs = list(requests) or [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "c", "namespace": "default"},
        "spec": {"devices": {"requests": reqs}},
    }


def defaulted(obj: Obj) -> Obj:
    ResourceClaimStrategy().default(obj)
    return obj


def test_exactly_defaults_to_one_exact_count_device() -> None:
    obj = defaulted(claim())
    assert obj["spec"]["devices"]["requests"][0]["exactly"] == {
        "deviceClassName": "gpu.example.com",
        "allocationMode": "ExactCount",
        "count": 1,
    }
    all_mode = defaulted(claim({"name": "r", "exactly": {"deviceClassName": "c", "allocationMode": "All"}}))
    assert "count" not in all_mode["spec"]["devices"]["requests"][0]["exactly"]
    sub = defaulted(claim({"name": "r", "firstAvailable": [{"name": "a", "deviceClassName": "c"}]}))
    assert sub["spec"]["devices"]["requests"][0]["firstAvailable"][0]["count"] == 1


@pytest.mark.parametrize(
    ("requests", "expected"),
    [
        pytest.param([], [], id="no-requests"),
        pytest.param(
            [{"name": "r"}],
            [
                "spec.devices.requests[0]: Required value: exactly one of `exactly` or `firstAvailable` is required"
            ],
            id="neither",
        ),
        pytest.param(
            [
                {
                    "name": "r",
                    "exactly": {"deviceClassName": "c"},
                    "firstAvailable": [{"name": "a", "deviceClassName": "c"}],
                }
            ],
            [
                "spec.devices.requests[0]: Invalid value: null: exactly one of `exactly` or `firstAvailable` "
                "is required, but multiple fields are set"
            ],
            id="both",
        ),
        pytest.param(
            [{"name": "r", "exactly": {}}],
            ["spec.devices.requests[0].exactly.deviceClassName: Required value"],
            id="no-class",
        ),
        pytest.param(
            [{"name": "r", "exactly": {"deviceClassName": "c", "allocationMode": "All", "count": 2}}],
            [
                "spec.devices.requests[0].exactly.count: Invalid value: 2: must not be specified when allocationMode is 'All'"
            ],
            id="all-with-count",
        ),
        pytest.param(
            [{"name": "r", "exactly": {"deviceClassName": "c", "count": -1}}],
            ["spec.devices.requests[0].exactly.count: Invalid value: -1: must be greater than zero"],
            id="negative-count",
        ),
        pytest.param(
            [{"name": "r", "exactly": {"deviceClassName": "c", "allocationMode": "Some"}}],
            [
                'spec.devices.requests[0].exactly.allocationMode: Unsupported value: "Some": supported values: "All", "ExactCount"'
            ],
            id="bad-mode",
        ),
        pytest.param(
            [
                {"name": "r", "exactly": {"deviceClassName": "c"}},
                {"name": "r", "exactly": {"deviceClassName": "c"}},
            ],
            ['spec.devices.requests[1]: Duplicate value: "r"'],
            id="duplicate-name",
        ),
        pytest.param(
            [{"name": "r", "exactly": {"deviceClassName": "c", "selectors": [{}]}}],
            ["spec.devices.requests[0].exactly.selectors[0].cel: Required value"],
            id="selector-without-cel",
        ),
        pytest.param(
            [
                {
                    "name": "r",
                    "firstAvailable": [
                        {"name": "a", "deviceClassName": "c"},
                        {"name": "a", "deviceClassName": "d"},
                    ],
                }
            ],
            ['spec.devices.requests[0].firstAvailable[1]: Duplicate value: "a"'],
            id="duplicate-subrequest",
        ),
    ],
)
def test_request_validation(requests: list[Obj], expected: list[str]) -> None:
    obj = defaulted(claim(*requests)) if requests else claim()
    if not requests:
        obj["spec"]["devices"]["requests"] = []
    assert strs(ResourceClaimStrategy().validate(CTX, obj)) == expected


def test_invalid_cel_selector_names_the_expression_field() -> None:
    obj = defaulted(
        claim(
            {
                "name": "r",
                "exactly": {
                    "deviceClassName": "c",
                    "selectors": [{"cel": {"expression": "device.driver =="}}],
                },
            }
        )
    )
    (err,) = ResourceClaimStrategy().validate(CTX, obj)
    assert err.field == "spec.devices.requests[0].exactly.selectors[0].cel.expression"
    assert str(err).startswith(
        'spec.devices.requests[0].exactly.selectors[0].cel.expression: Invalid value: "device.driver ==": '
        "compilation failed: ERROR: <input>:1:17: Syntax error:"
    )
    obj = defaulted(
        claim(
            {
                "name": "r",
                "exactly": {
                    "deviceClassName": "c",
                    "selectors": [{"cel": {"expression": "node.name == 'a'"}}],
                },
            }
        )
    )
    assert strs(ResourceClaimStrategy().validate(CTX, obj)) == [
        "spec.devices.requests[0].exactly.selectors[0].cel.expression: Invalid value: \"node.name == 'a'\": "
        "compilation failed: ERROR: undeclared reference to 'node' (in container '')"
    ]


def test_constraints_and_config_reference_requests() -> None:
    obj = defaulted(claim())
    obj["spec"]["devices"]["constraints"] = [{"requests": ["nope"], "matchAttribute": "model"}]
    obj["spec"]["devices"]["config"] = [
        {"requests": ["gpu"], "opaque": {"driver": "gpu.example.com", "parameters": []}}
    ]
    assert strs(ResourceClaimStrategy().validate(CTX, obj)) == [
        'spec.devices.constraints[0].requests[0]: Invalid value: "nope": must be the name of a request in the claim or '
        "the name of a request and a subrequest separated by '/'",
        'spec.devices.constraints[0].matchAttribute: Invalid value: "model": a fully qualified name must be a domain and '
        "a name separated by a slash",
        'spec.devices.config[0].opaque.parameters: Invalid value: "<value omitted>": must be a valid JSON object',
    ]


def test_claim_spec_is_immutable() -> None:
    old = defaulted(claim())
    new = copy.deepcopy(old)
    new["spec"]["devices"]["requests"][0]["exactly"]["count"] = 2
    (err,) = ResourceClaimStrategy().validate_update(CTX, new, old)
    assert err.field == "spec" and err.detail == "field is immutable"


def _allocated(claim_obj: Obj, reserved: list[Obj]) -> Obj:
    out = copy.deepcopy(claim_obj)
    out["status"] = {
        "allocation": {
            "devices": {
                "results": [
                    {"request": "gpu", "driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0"}
                ]
            }
        },
        "reservedFor": reserved,
    }
    return out


def _consumer(i: int) -> Obj:
    return {"resource": "pods", "name": f"p{i}", "uid": f"00000000-0000-0000-0000-{i:012d}"}


def test_status_reserved_for_limits_and_invariants() -> None:
    strat = ResourceClaimStrategy()
    old = defaulted(claim())
    assert strat.validate_status_update(CTX, _allocated(old, [_consumer(i) for i in range(256)]), old) == []
    assert strs(
        strat.validate_status_update(CTX, _allocated(old, [_consumer(i) for i in range(257)]), old)
    ) == ["status.reservedFor: Too many: 257: must have at most 256 items"]
    dup = _allocated(old, [_consumer(1), _consumer(1)])
    assert strs(strat.validate_status_update(CTX, dup, old)) == [
        'status.reservedFor[1]: Duplicate value: "00000000-0000-0000-0000-000000000001"'
    ]
    unallocated = copy.deepcopy(old)
    unallocated["status"] = {"reservedFor": [_consumer(1)]}
    assert strs(strat.validate_status_update(CTX, unallocated, old)) == [
        "status.reservedFor: Forbidden: may not be specified when `allocated` is not set"
    ]
    missing = _allocated(old, [{"resource": "pods"}])
    assert strs(strat.validate_status_update(CTX, missing, old)) == [
        "status.reservedFor[0].name: Required value",
        "status.reservedFor[0].uid: Required value",
    ]


def test_status_allocation_is_immutable_until_cleared() -> None:
    strat = ResourceClaimStrategy()
    base = defaulted(claim())
    old = _allocated(base, [])
    changed = copy.deepcopy(old)
    changed["status"]["allocation"]["devices"]["results"][0]["device"] = "gpu-1"
    (err,) = strat.validate_status_update(CTX, changed, old)
    assert err.field == "status.allocation" and err.detail == "field is immutable"
    cleared = copy.deepcopy(old)
    cleared["status"] = {}
    assert strat.validate_status_update(CTX, cleared, old) == []
    bad = _allocated(base, [])
    bad["status"]["allocation"]["devices"]["results"][0]["request"] = "other"
    assert strs(strat.validate_status_update(CTX, bad, base))[0].startswith(
        'status.allocation.devices.results[0].request: Invalid value: "other": must be the name of a request'
    )


def test_deleting_claim_takes_no_new_reservations() -> None:
    strat = ResourceClaimStrategy()
    old = _allocated(defaulted(claim()), [_consumer(1)])
    old["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    new = copy.deepcopy(old)
    new["status"]["reservedFor"].append(_consumer(2))
    assert strs(strat.validate_status_update(CTX, new, old)) == [
        "status.reservedFor: Forbidden: new entries may not be added while `deallocationRequested` or "
        "`deletionTimestamp` are set"
    ]


def test_status_devices_must_be_allocated() -> None:
    strat = ResourceClaimStrategy()
    old = _allocated(defaulted(claim()), [])
    new = copy.deepcopy(old)
    new["status"]["devices"] = [{"driver": "gpu.example.com", "pool": "node-1", "device": "gpu-9"}]
    assert strs(strat.validate_status_update(CTX, new, old)) == [
        'status.devices[0]: Invalid value: "gpu.example.com/node-1/gpu-9": must be an allocated device in the claim'
    ]


def test_template_validates_nested_claim_spec_and_is_immutable() -> None:
    strat = ResourceClaimTemplateStrategy()
    tpl = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "t", "namespace": "default"},
        "spec": {
            "metadata": {"labels": {"a": "b"}},
            "spec": {"devices": {"requests": [{"name": "device", "exactly": {}}]}},
        },
    }
    strat.default(tpl)
    assert strs(strat.validate(CTX, tpl)) == [
        "spec.spec.devices.requests[0].exactly.deviceClassName: Required value"
    ]
    new = copy.deepcopy(tpl)
    new["spec"]["metadata"]["labels"]["a"] = "c"
    assert [e.field for e in strat.validate_update(CTX, new, tpl)] == ["spec"]


def test_device_class_selectors_compile_unless_unchanged() -> None:
    strat = DeviceClassStrategy()
    good = {
        "metadata": {"name": "gpu.example.com"},
        "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]},
    }
    assert strat.validate(CTX, good) == []
    bad = copy.deepcopy(good)
    bad["spec"]["selectors"][0]["cel"]["expression"] = "device.driver.bogus("
    assert [e.field for e in strat.validate(CTX, bad)] == ["spec.selectors[0].cel.expression"]
    # A stored selector is not compiled again (upstream's "stored" rule).
    assert strat.validate_update(CTX, copy.deepcopy(bad), bad) == []
    assert strs(strat.validate(CTX, {"spec": {"selectors": [{"cel": {"expression": ""}}]}})) == [
        "spec.selectors[0].cel.expression: Required value"
    ]


def _slice(**spec: Any) -> Obj:
    body: Obj = {
        "driver": "gpu.example.com",
        "pool": {"name": "node-1", "generation": 0, "resourceSliceCount": 1},
        "nodeName": "node-1",
        "devices": [
            {
                "name": "gpu-0",
                "attributes": {"model": {"string": "a100"}},
                "capacity": {"memory": {"value": "40Gi"}},
            }
        ],
    }
    body.update(spec)
    return {"metadata": {"name": "node-1-gpu"}, "spec": {k: v for k, v in body.items() if v is not None}}


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        pytest.param({}, [], id="valid"),
        pytest.param(
            {"nodeName": None},
            [
                "spec: Required value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"
            ],
            id="no-node-selection",
        ),
        pytest.param(
            {"allNodes": True},
            [
                'spec: Invalid value: "{`nodeName`, `allNodes`}": exactly one of `nodeName`, `nodeSelector`, `allNodes`, '
                "`perDeviceNodeSelection` is required, but multiple fields are set"
            ],
            id="two-node-selections",
        ),
        pytest.param(
            {"pool": {"name": "p", "resourceSliceCount": 0}},
            ["spec.pool.resourceSliceCount: Invalid value: 0: must be greater than zero"],
            id="slice-count",
        ),
        pytest.param(
            {"devices": [{"name": "d", "attributes": {"model": {"string": "a", "int": 1}}}]},
            [
                'spec.devices[0].attributes[model]: Invalid value: {"string":"a","int":1}: exactly one value must be specified'
            ],
            id="attribute-two-values",
        ),
        pytest.param(
            {"devices": [{"name": "d", "attributes": {"1bad": {"int": 1}}}]},
            [
                'spec.devices[0].attributes: Invalid value: "1bad": a valid C identifier must start with alphabetic '
                "character or '_', followed by a string of alphanumeric characters or '_' (e.g. 'my_name',  or "
                "'MY_NAME',  or 'MyName', regex used for validation is '[A-Za-z_][A-Za-z0-9_]*')"
            ],
            id="attribute-name",
        ),
        pytest.param(
            {"devices": [{"name": "d", "attributes": {"v": {"version": "1.0"}}}]},
            [
                'spec.devices[0].attributes[v].version: Invalid value: "1.0": must be a string compatible with semver.org spec 2.0.0'
            ],
            id="version",
        ),
        pytest.param({"driver": ""}, ["spec.driver: Required value"], id="driver"),
    ],
)
def test_slice_validation(spec: Obj, expected: list[str]) -> None:
    assert strs(ResourceSliceStrategy().validate(CTX, _slice(**spec))) == expected


def test_slice_identity_is_immutable() -> None:
    old = _slice()
    new = _slice(nodeName="node-2", pool={"name": "node-1", "generation": 1, "resourceSliceCount": 1})
    assert [e.field for e in ResourceSliceStrategy().validate_update(CTX, new, old)] == ["spec.nodeName"]


@pytest.mark.anyio
async def test_admission_answers_422_naming_the_cel_field(client) -> None:
    body = defaulted(
        claim(
            {
                "name": "r",
                "exactly": {
                    "deviceClassName": "c",
                    "selectors": [{"cel": {"expression": "device.driver =="}}],
                },
            }
        )
    )
    with pytest.raises(errors.StatusError) as e:
        await client.create(RESOURCECLAIMS, body)
    assert e.value.code == 422 and e.value.reason == "Invalid"
    causes = e.value.details["causes"]
    assert [c["field"] for c in causes] == ["spec.devices.requests[0].exactly.selectors[0].cel.expression"]
    assert e.value.message.startswith('ResourceClaim.resource.k8s.io "c" is invalid: ')


@pytest.mark.anyio
async def test_served_kinds_default_and_validate(client) -> None:
    out = await client.create(RESOURCECLAIMS, claim())
    assert out["spec"]["devices"]["requests"][0]["exactly"]["count"] == 1
    tpl = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "t", "namespace": "default"},
        "spec": {
            "spec": {"devices": {"requests": [{"name": "device", "exactly": {"deviceClassName": "c"}}]}}
        },
    }
    out = await client.create(RESOURCECLAIMTEMPLATES, tpl)
    assert out["spec"]["spec"]["devices"]["requests"][0]["exactly"]["allocationMode"] == "ExactCount"
    await client.create(
        DEVICECLASSES,
        {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "c"}, "spec": {}},
    )
    with pytest.raises(errors.StatusError) as e:
        await client.create(
            RESOURCESLICES,
            {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", **_slice(nodeName=None)},
        )
    assert e.value.code == 422

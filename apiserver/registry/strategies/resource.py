"""Strategies for ``resource.k8s.io/v1`` (DRA): DeviceClass, ResourceClaim (+status),
ResourceClaimTemplate, ResourceSlice — kube's ``pkg/registry/resource/*/strategy.go`` and
``pkg/apis/resource/validation``.

Defaulting is the v1 API's: a request's ``exactly`` (and each ``firstAvailable`` sub-request)
gets ``allocationMode: ExactCount`` and then ``count: 1``; tolerations get ``operator: Equal``.

Validation follows upstream's rules and messages: request names are DNS labels, exactly one
of ``exactly`` / ``firstAvailable``, ``count`` > 0 for ExactCount and unset for All, each
selector needs ``cel`` whose expression must compile in the DRA device environment
(:mod:`apiserver.cel.dra`) — a bad expression is a 422 naming
``spec.devices.requests[i].exactly.selectors[j].cel.expression``. Stored expressions are not
re-validated (upstream's ``stored`` option). Claim and template specs are immutable.

Status (``resourceclaims/status``): ``reservedFor`` ≤ 256 entries, unique by uid, each with
``resource``, ``name`` and ``uid``; it may only be set while ``allocation`` is, and no entry
may be added to a claim being deleted; an allocation, once written, is immutable until it is
cleared (deallocation); ``devices`` must name allocated devices.
"""

from __future__ import annotations

import re
from typing import Any

from apiserver import field
from apiserver.api.types import as_int as _int
from apiserver.cel import CompileError
from apiserver.cel.dra import compile_selector
from apiserver.field import ErrorList, Path
from apiserver.quantity import parse_quantity
from apiserver.rest.strategy import Obj, Strategy, StrategyContext
from apiserver.validation import names
from apiserver.validation.meta import validate_annotations, validate_immutable, validate_labels

DEVICE_REQUESTS_MAX = 32
FIRST_AVAILABLE_MAX = 8
DEVICE_SELECTORS_MAX = 32
DEVICE_CONSTRAINTS_MAX = 32
DEVICE_CONFIG_MAX = 32
RESERVED_FOR_MAX = 256
ALLOCATION_RESULTS_MAX = 32
SLICE_MAX_DEVICES = 128
SLICE_MAX_ATTRIBUTES_AND_CAPACITIES = 32
DRIVER_NAME_MAX = 63
DEVICE_MAX_ID_LENGTH = 32
DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH = 64
POOL_NAME_MAX = 253
OPAQUE_PARAMETERS_MAX = 10 * 1024

EXACT_COUNT = "ExactCount"
ALL = "All"
ALLOCATION_MODES = [ALL, EXACT_COUNT]
TOLERATION_OPERATORS = ["Equal", "Exists"]
TAINT_EFFECTS = ["NoExecute", "NoSchedule", "None"]
CONFIG_SOURCES = ["FromClaim", "FromClass"]

ONE_OF_REQUEST = "exactly one of `exactly` or `firstAvailable` is required"
REQUEST_REF = (
    "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'"
)
NODE_SELECTION = "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"

_C_IDENT_FMT = "[A-Za-z_][A-Za-z0-9_]*"
_C_IDENT_RE = re.compile(_C_IDENT_FMT)
_C_IDENT_ERR = names.regex_error(
    "a valid C identifier must start with alphabetic character or '_', followed by a string of "
    "alphanumeric characters or '_'",
    _C_IDENT_FMT,
    "my_name",
    "MY_NAME",
    "MyName",
)
_SEMVER_RE = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(-(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(\.(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*)?"
    r"(\+[0-9a-zA-Z-]+(\.[0-9a-zA-Z-]+)*)?$"
)

SPEC = Path("spec")
STATUS = Path("status")


# -- small helpers ---------------------------------------------------------------------------


def _d(v: Any) -> Obj:
    return v if isinstance(v, dict) else {}


def _l(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


def _s(v: Any) -> str:
    return v if isinstance(v, str) else ""


def _fmt(value: str, path: Path, msgs: list[str]) -> ErrorList:
    return [field.invalid(path, value, m) for m in msgs]


def _too_many(items: Any, limit: int, path: Path) -> ErrorList:
    """``validateSlice``/``validateSet`` size check: it short-circuits item validation."""
    n = len(items) if isinstance(items, list) else 0
    return [field.too_many(path, n, limit)] if n > limit else []


def _duplicates(keys: list[Any], path: Path) -> ErrorList:
    seen: set[Any] = set()
    errs: ErrorList = []
    for i, k in enumerate(keys):
        if k in seen:
            errs.append(field.duplicate(path.index(i), k))
        seen.add(k)
    return errs


def validate_driver_name(name: Any, path: Path) -> ErrorList:
    """``ValidateCSIDriverName``: required, ≤ 63 bytes, a (lower-cased) DNS subdomain."""
    name = _s(name)
    if not name:
        return [field.required(path)]
    errs: ErrorList = []
    if len(name) > DRIVER_NAME_MAX:
        errs.append(field.too_long(path, DRIVER_NAME_MAX))
    errs += _fmt(name, path, names.is_dns1123_subdomain(name.lower()))
    return errs


def _dns_label(name: Any, path: Path) -> ErrorList:
    name = _s(name)
    return _fmt(name, path, names.is_dns1123_label(name))


def _dns_subdomain(name: Any, path: Path) -> ErrorList:
    name = _s(name)
    return _fmt(name, path, names.is_dns1123_subdomain(name))


def validate_pool_name(name: Any, path: Path) -> ErrorList:
    name = _s(name)
    if not name:
        return [field.required(path)]
    errs: ErrorList = []
    if len(name) > POOL_NAME_MAX:
        errs.append(field.too_long(path, POOL_NAME_MAX))
    for part in name.split("/"):
        errs += _fmt(name, path, names.is_dns1123_subdomain(part))
    return errs


def _c_identifier(ident: str, path: Path) -> ErrorList:
    errs: ErrorList = []
    if len(ident) > DEVICE_MAX_ID_LENGTH:
        errs.append(field.too_long(path, DEVICE_MAX_ID_LENGTH))
    if _C_IDENT_RE.fullmatch(ident) is None:
        errs.append(field.invalid(path, ident, _C_IDENT_ERR))
    return errs


def validate_qualified_name(name: str, path: Path) -> ErrorList:
    """``QualifiedName``: ``<C identifier>`` or ``<driver-like domain>/<C identifier>``."""
    parts = name.split("/")
    if len(parts) == 1:
        return _c_identifier(parts[0], path)
    if len(parts) > 2:
        return [field.invalid(path, name, "must not contain more than one slash")]
    errs: ErrorList = []
    if not parts[0]:
        errs.append(field.invalid(path, "", "the domain must not be empty"))
    else:
        errs += validate_driver_name(parts[0], path)
    if not parts[1]:
        errs.append(field.invalid(path, "", "the name must not be empty"))
    else:
        errs += _c_identifier(parts[1], path)
    return errs


def validate_fully_qualified_name(name: Any, path: Path) -> ErrorList:
    name = _s(name)
    errs = validate_qualified_name(name, path)
    if "/" not in name:
        errs.append(
            field.invalid(
                path, name, "a fully qualified name must be a domain and a name separated by a slash"
            )
        )
    return errs


# -- selectors, requests, claims -------------------------------------------------------------


def validate_cel_expression(expression: Any, path: Path, stored: bool) -> ErrorList:
    """Compile in the DRA environment; a stored expression was valid when stored."""
    if stored:
        return []
    if not isinstance(expression, str):
        return [field.type_invalid(path, expression, "expected a string")]
    try:
        compile_selector(expression)
    except CompileError as e:
        if e.kind == "Required":
            return [field.required(path, e.detail)]
        return [field.invalid(path, expression, e.detail)]
    return []


def validate_selectors(selectors: Any, path: Path, stored: bool) -> ErrorList:
    if errs := _too_many(selectors, DEVICE_SELECTORS_MAX, path):
        return errs
    errs = []
    for i, sel in enumerate(_l(selectors)):
        p = path.index(i)
        cel = _d(sel).get("cel")
        if not isinstance(cel, dict):
            errs.append(field.required(p.child("cel")))
            continue
        errs += validate_cel_expression(cel.get("expression"), p.child("cel", "expression"), stored)
    return errs


def _validate_allocation_mode(req: Obj, path: Path) -> ErrorList:
    mode = req.get("allocationMode")
    count = _int(req.get("count")) or 0
    if mode == ALL:
        if count != 0:
            return [
                field.invalid(
                    path.child("count"), count, f"must not be specified when allocationMode is '{ALL}'"
                )
            ]
        return []
    if mode == EXACT_COUNT:
        if count <= 0:
            return [field.invalid(path.child("count"), count, "must be greater than zero")]
        return []
    return [field.not_supported(path.child("allocationMode"), mode or "", ALLOCATION_MODES)]


def _validate_tolerations(tolerations: Any, path: Path) -> ErrorList:
    errs: ErrorList = []
    for i, t in enumerate(_l(tolerations)):
        p, t = path.index(i), _d(t)
        key = _s(t.get("key"))
        if key:
            errs += _fmt(key, p.child("key"), names.is_qualified_name(key))
        op = t.get("operator") or "Equal"
        if op not in TOLERATION_OPERATORS:
            errs.append(field.not_supported(p.child("operator"), op, TOLERATION_OPERATORS))
        elif op == "Exists" and t.get("value"):
            errs.append(
                field.invalid(
                    p.child("operator"), t.get("value"), "value must be empty when `operator` is 'Exists'"
                )
            )
        effect = t.get("effect")
        if effect and effect not in TAINT_EFFECTS:
            errs.append(field.not_supported(p.child("effect"), effect, TAINT_EFFECTS))
    return errs


def _validate_exact(req: Any, path: Path, stored: bool) -> ErrorList:
    if not isinstance(req, dict):
        return [field.type_invalid(path, req, "expected an object")]
    errs: ErrorList = []
    dc = req.get("deviceClassName")
    if not dc:
        errs.append(field.required(path.child("deviceClassName")))
    else:
        errs += _dns_subdomain(dc, path.child("deviceClassName"))
    errs += validate_selectors(req.get("selectors"), path.child("selectors"), stored)
    errs += _validate_allocation_mode(req, path)
    errs += _validate_tolerations(req.get("tolerations"), path.child("tolerations"))
    return errs


def _validate_request(req: Any, path: Path, stored: bool) -> ErrorList:
    if not isinstance(req, dict):
        return [field.type_invalid(path, req, "expected an object")]
    name = req.get("name")
    errs = [field.required(path.child("name"))] if not name else _dns_label(name, path.child("name"))
    has_exact = req.get("exactly") is not None
    first = req.get("firstAvailable")
    has_first = bool(first)
    if not has_exact and not has_first:
        errs.append(field.required(path, ONE_OF_REQUEST))
    elif has_exact and has_first:
        errs.append(field.invalid(path, None, ONE_OF_REQUEST + ", but multiple fields are set"))
    elif has_first:
        fp = path.child("firstAvailable")
        if sub := _too_many(first, FIRST_AVAILABLE_MAX, fp):
            return errs + sub
        for j, subreq in enumerate(_l(first)):
            sp = fp.index(j)
            sname = _d(subreq).get("name")
            errs += [field.required(sp.child("name"))] if not sname else _dns_label(sname, sp.child("name"))
            errs += _validate_exact(subreq, sp, stored)
        errs += _duplicates([_d(s).get("name") for s in _l(first)], fp)
    else:
        errs += _validate_exact(req.get("exactly"), path.child("exactly"), stored)
    return errs


def request_names(devices: Obj) -> dict[str, set[str]]:
    """Request name -> its sub-request names (empty for ``exactly`` requests)."""
    out: dict[str, set[str]] = {}
    for req in _l(devices.get("requests")):
        req = _d(req)
        out[_s(req.get("name"))] = {_s(_d(s).get("name")) for s in _l(req.get("firstAvailable"))}
    return out


def _request_ref_errors(ref: Any, path: Path, known: dict[str, set[str]]) -> ErrorList:
    ref = _s(ref)
    segs = ref.split("/")
    if len(segs) > 2:
        return [field.invalid(path, ref, REQUEST_REF)]
    errs: ErrorList = []
    for seg in segs:
        errs += [field.required(path)] if not seg else _dns_label(seg, path)
    ok = segs[0] in known and (len(segs) == 1 or segs[1] in known[segs[0]])
    if not ok:
        errs.append(field.invalid(path, ref, REQUEST_REF))
    return errs


def _validate_request_refs(refs: Any, path: Path, known: dict[str, set[str]]) -> ErrorList:
    if errs := _too_many(refs, DEVICE_REQUESTS_MAX, path):
        return errs
    errs = []
    for i, r in enumerate(_l(refs)):
        errs += _request_ref_errors(r, path.index(i), known)
    return errs + _duplicates(_l(refs), path)


def validate_opaque(opaque: Any, path: Path) -> ErrorList:
    if not isinstance(opaque, dict):
        return [field.required(path)]
    errs = validate_driver_name(opaque.get("driver"), path.child("driver"))
    params = opaque.get("parameters")
    if params is None:
        errs.append(field.required(path.child("parameters")))
    elif not isinstance(params, dict):
        errs.append(field.invalid(path.child("parameters"), "<value omitted>", "must be a valid JSON object"))
    return errs


def validate_device_claim(devices: Any, path: Path, stored: bool = False) -> ErrorList:
    """``validateDeviceClaim``: requests (unique names), constraints and config."""
    devices = _d(devices)
    known = request_names(devices)
    errs: ErrorList = []
    rp = path.child("requests")
    requests = devices.get("requests")
    if sub := _too_many(requests, DEVICE_REQUESTS_MAX, rp):
        errs += sub
    else:
        for i, req in enumerate(_l(requests)):
            errs += _validate_request(req, rp.index(i), stored)
        errs += _duplicates([_d(r).get("name") for r in _l(requests)], rp)
    cp = path.child("constraints")
    if sub := _too_many(devices.get("constraints"), DEVICE_CONSTRAINTS_MAX, cp):
        errs += sub
    else:
        for i, c in enumerate(_l(devices.get("constraints"))):
            p, c = cp.index(i), _d(c)
            errs += _validate_request_refs(c.get("requests"), p.child("requests"), known)
            if c.get("matchAttribute") is not None:
                errs += validate_fully_qualified_name(c.get("matchAttribute"), p.child("matchAttribute"))
            elif c.get("distinctAttribute") is not None:
                errs += validate_fully_qualified_name(
                    c.get("distinctAttribute"), p.child("distinctAttribute")
                )
            else:
                errs.append(field.required(p.child("matchAttribute")))
    gp = path.child("config")
    if sub := _too_many(devices.get("config"), DEVICE_CONFIG_MAX, gp):
        errs += sub
    else:
        for i, c in enumerate(_l(devices.get("config"))):
            p, c = gp.index(i), _d(c)
            errs += _validate_request_refs(c.get("requests"), p.child("requests"), known)
            errs += validate_opaque(c.get("opaque"), p.child("opaque"))
    return errs


def _default_exact(req: Any) -> None:
    if not isinstance(req, dict):
        return
    if not req.get("allocationMode"):
        req["allocationMode"] = EXACT_COUNT
    if req["allocationMode"] == EXACT_COUNT and not req.get("count"):
        req["count"] = 1
    for t in _l(req.get("tolerations")):
        if isinstance(t, dict) and not t.get("operator"):
            t["operator"] = "Equal"


def default_claim_spec(spec: Any) -> None:
    """``SetDefaults_ExactDeviceRequest`` / ``SetDefaults_DeviceSubRequest`` / tolerations."""
    for req in _l(_d(_d(spec).get("devices")).get("requests")):
        if not isinstance(req, dict):
            continue
        _default_exact(req.get("exactly"))
        for sub in _l(req.get("firstAvailable")):
            _default_exact(sub)


# -- claim status ----------------------------------------------------------------------------


def _validate_consumer(ref: Any, path: Path) -> ErrorList:
    ref = _d(ref)
    errs: ErrorList = []
    for key in ("resource", "name", "uid"):
        if not ref.get(key):
            errs.append(field.required(path.child(key)))
    return errs


def _device_id(d: Obj) -> tuple[str, str, str, str]:
    return (_s(d.get("driver")), _s(d.get("pool")), _s(d.get("device")), _s(d.get("shareID")))


def _validate_allocation(allocation: Any, path: Path, known: dict[str, set[str]]) -> ErrorList:
    if not isinstance(allocation, dict):
        return [field.type_invalid(path, allocation, "expected an object")]
    devices = _d(allocation.get("devices"))
    dp = path.child("devices")
    errs: ErrorList = []
    rp = dp.child("results")
    results = devices.get("results")
    if sub := _too_many(results, ALLOCATION_RESULTS_MAX, rp):
        errs += sub
    else:
        for i, r in enumerate(_l(results)):
            p, r = rp.index(i), _d(r)
            errs += _request_ref_errors(r.get("request"), p.child("request"), known)
            errs += validate_driver_name(r.get("driver"), p.child("driver"))
            errs += validate_pool_name(r.get("pool"), p.child("pool"))
            dev = r.get("device")
            errs += [field.required(p.child("device"))] if not dev else _dns_label(dev, p.child("device"))
    gp = dp.child("config")
    if sub := _too_many(devices.get("config"), 2 * DEVICE_CONFIG_MAX, gp):
        errs += sub
    else:
        for i, c in enumerate(_l(devices.get("config"))):
            p, c = gp.index(i), _d(c)
            src = c.get("source")
            if not src:
                errs.append(field.required(p.child("source")))
            elif src not in CONFIG_SOURCES:
                errs.append(field.not_supported(p.child("source"), src, CONFIG_SOURCES))
            errs += _validate_request_refs(c.get("requests"), p.child("requests"), known)
            errs += validate_opaque(c.get("opaque"), p.child("opaque"))
    ns = allocation.get("nodeSelector")
    if ns is not None and not _l(_d(ns).get("nodeSelectorTerms")):
        errs.append(
            field.required(
                path.child("nodeSelector", "nodeSelectorTerms"), "must have at least one node selector term"
            )
        )
    return errs


def validate_claim_status_update(new: Obj, old: Obj) -> ErrorList:
    """``validateResourceClaimStatusUpdate``."""
    status, old_status = _d(new.get("status")), _d(old.get("status"))
    deleting = bool(_d(new.get("metadata")).get("deletionTimestamp"))
    known = request_names(_d(_d(new.get("spec")).get("devices")))
    errs: ErrorList = []
    rfp = STATUS.child("reservedFor")
    reserved = status.get("reservedFor")
    if sub := _too_many(reserved, RESERVED_FOR_MAX, rfp):
        errs += sub
    else:
        for i, ref in enumerate(_l(reserved)):
            errs += _validate_consumer(ref, rfp.index(i))
        errs += _duplicates([_d(r).get("uid") for r in _l(reserved)], rfp)

    allocation, old_allocation = status.get("allocation"), old_status.get("allocation")
    allocated = {_device_id(_d(r)) for r in _l(_d(_d(allocation).get("devices")).get("results"))}
    dsp = STATUS.child("devices")
    for i, d in enumerate(_l(status.get("devices"))):
        p, d = dsp.index(i), _d(d)
        errs += validate_driver_name(d.get("driver"), p.child("driver"))
        errs += validate_pool_name(d.get("pool"), p.child("pool"))
        dev = d.get("device")
        errs += [field.required(p.child("device"))] if not dev else _dns_label(dev, p.child("device"))
        if _device_id(d) not in allocated:
            ident = "/".join(x for x in _device_id(d) if x)
            errs.append(field.invalid(p, ident, "must be an allocated device in the claim"))
    errs += _duplicates([_device_id(_d(d)) for d in _l(status.get("devices"))], dsp)

    if _l(reserved):
        if allocation is None:
            errs.append(field.forbidden(rfp, "may not be specified when `allocated` is not set"))
        elif deleting:
            old_uids = {_d(r).get("uid") for r in _l(old_status.get("reservedFor"))}
            if any(_d(r).get("uid") not in old_uids for r in _l(reserved)):
                errs.append(
                    field.forbidden(
                        rfp,
                        "new entries may not be added while `deallocationRequested` or `deletionTimestamp` are set",
                    )
                )
    if old_allocation is not None and allocation is not None:
        errs += validate_immutable(allocation, old_allocation, STATUS.child("allocation"))
    elif allocation is not None:
        errs += _validate_allocation(allocation, STATUS.child("allocation"), known)
    return errs


# -- ResourceSlice ---------------------------------------------------------------------------


def _validate_attribute(attr: Any, path: Path) -> ErrorList:
    attr = _d(attr)
    members = [
        k for k in ("bool", "int", "string", "version", "bools", "ints", "strings", "versions") if k in attr
    ]
    errs: ErrorList = []
    if "string" in attr and len(_s(attr["string"])) > DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH:
        errs.append(field.too_long(path.child("string"), DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH))
    if "version" in attr:
        v = _s(attr["version"])
        if not _SEMVER_RE.match(v):
            errs.append(
                field.invalid(
                    path.child("version"), v, "must be a string compatible with semver.org spec 2.0.0"
                )
            )
        if len(v) > DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH:
            errs.append(field.too_long(path.child("version"), DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH))
    for key in ("bools", "ints", "strings", "versions"):
        if key in attr and not _l(attr[key]):
            errs.append(field.invalid(path.child(key), attr[key], "must not be empty if specified"))
    if len(members) == 0:
        errs.append(field.invalid(path, "", "exactly one value must be specified"))
    elif len(members) > 1:
        errs.append(field.invalid(path, attr, "exactly one value must be specified"))
    return errs


def _validate_capacity(cap: Any, path: Path, multi: bool) -> ErrorList:
    cap = _d(cap)
    errs: ErrorList = []
    value = cap.get("value")
    if value is None:
        errs.append(field.required(path.child("value")))
    else:
        try:
            parse_quantity(value)
        except (ValueError, TypeError):
            errs.append(field.invalid(path.child("value"), value, "must be a valid quantity"))
    if cap.get("requestPolicy") is not None and not multi:
        errs.append(field.forbidden(path.child("requestPolicy"), "allowMultipleAllocations must be true"))
    return errs


def _validate_device(device: Any, path: Path, per_device_nodes: bool) -> ErrorList:
    if not isinstance(device, dict):
        return [field.type_invalid(path, device, "expected an object")]
    name = device.get("name")
    errs = [field.required(path.child("name"))] if not name else _dns_label(name, path.child("name"))
    attrs, caps = _d(device.get("attributes")), _d(device.get("capacity"))
    if len(attrs) + len(caps) > SLICE_MAX_ATTRIBUTES_AND_CAPACITIES:
        errs.append(
            field.invalid(
                path,
                len(attrs) + len(caps),
                f"the total number of attributes and capacities must not exceed {SLICE_MAX_ATTRIBUTES_AND_CAPACITIES}",
            )
        )
    ap = path.child("attributes")
    for key in sorted(attrs):
        errs += validate_qualified_name(key, ap)
        errs += _validate_attribute(attrs[key], ap.key(key))
    cp = path.child("capacity")
    multi = device.get("allowMultipleAllocations") is True
    for key in sorted(caps):
        errs += validate_qualified_name(key, cp)
        errs += _validate_capacity(caps[key], cp.key(key), multi)
    if not per_device_nodes and any(
        device.get(k) is not None for k in ("nodeName", "nodeSelector", "allNodes")
    ):
        errs.append(
            field.invalid(
                path,
                None,
                "`nodeName`, `nodeSelector` and `allNodes` can only be set if `perDeviceNodeSelection` is set to true in the ResourceSlice spec",
            )
        )
    return errs


def validate_slice_spec(spec: Any, old_spec: Any) -> ErrorList:
    if not isinstance(spec, dict):
        return [field.required(SPEC)]
    old = old_spec if isinstance(old_spec, dict) else None
    errs = validate_driver_name(spec.get("driver"), SPEC.child("driver"))
    pool = _d(spec.get("pool"))
    pp = SPEC.child("pool")
    errs += validate_pool_name(pool.get("name"), pp.child("name"))
    count = _int(pool.get("resourceSliceCount")) or 0
    if count <= 0:
        errs.append(field.invalid(pp.child("resourceSliceCount"), count, "must be greater than zero"))
    gen = _int(pool.get("generation")) or 0
    if gen < 0:
        errs.append(field.invalid(pp.child("generation"), gen, "must be greater than or equal to zero"))
    if old is not None:
        errs += validate_immutable(pool.get("name"), _d(old.get("pool")).get("name"), pp.child("name"))
        errs += validate_immutable(spec.get("driver"), old.get("driver"), SPEC.child("driver"))
        errs += validate_immutable(spec.get("nodeName"), old.get("nodeName"), SPEC.child("nodeName"))

    set_fields: list[str] = []
    node_name = spec.get("nodeName")
    if node_name is not None:
        if node_name:
            set_fields.append("`nodeName`")
            errs += _dns_subdomain(node_name, SPEC.child("nodeName"))
        else:
            errs.append(
                field.invalid(
                    SPEC.child("nodeName"), node_name, "must be either unset or set to a non-empty string"
                )
            )
    if spec.get("nodeSelector") is not None:
        set_fields.append("`nodeSelector`")
        terms = _d(spec.get("nodeSelector")).get("nodeSelectorTerms")
        if len(_l(terms)) != 1:
            errs.append(
                field.invalid(
                    SPEC.child("nodeSelector", "nodeSelectorTerms"),
                    terms,
                    "must have exactly one node selector term",
                )
            )
    for key in ("allNodes", "perDeviceNodeSelection"):
        v = spec.get(key)
        if v is None:
            continue
        if v is True:
            set_fields.append(f"`{key}`")
        else:
            errs.append(field.invalid(SPEC.child(key), v, "must be either unset or set to true"))
    if not set_fields:
        errs.append(field.required(SPEC, NODE_SELECTION))
    elif len(set_fields) > 1:
        errs.append(
            field.invalid(
                SPEC, "{" + ", ".join(set_fields) + "}", NODE_SELECTION + ", but multiple fields are set"
            )
        )
    if spec.get("sharedCounters") is not None and spec.get("devices") is not None:
        errs.append(field.invalid(SPEC, "", "only one of `sharedCounters` or `devices` is allowed"))

    dp = SPEC.child("devices")
    devices = spec.get("devices")
    if sub := _too_many(devices, SLICE_MAX_DEVICES, dp):
        return errs + sub
    per_device = spec.get("perDeviceNodeSelection") is True
    for i, dev in enumerate(_l(devices)):
        errs += _validate_device(dev, dp.index(i), per_device)
    errs += _duplicates([_d(d).get("name") for d in _l(devices)], dp)
    return errs


# -- strategies ------------------------------------------------------------------------------


class DeviceClassStrategy(Strategy):
    """``deviceclasses`` (cluster-scoped): selectors and config; selectors re-validated only if changed."""

    def validate(self, ctx: StrategyContext, obj: Obj) -> ErrorList:
        return self._validate_spec(obj.get("spec"), None)

    def validate_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        return self._validate_spec(new.get("spec"), _d(old.get("spec")))

    @staticmethod
    def _validate_spec(spec: Any, old: Obj | None) -> ErrorList:
        spec = _d(spec)
        stored = old is not None and spec.get("selectors") == old.get("selectors")
        errs = validate_selectors(spec.get("selectors"), SPEC.child("selectors"), stored)
        gp = SPEC.child("config")
        if sub := _too_many(spec.get("config"), DEVICE_CONFIG_MAX, gp):
            errs += sub
        else:
            for i, c in enumerate(_l(spec.get("config"))):
                errs += validate_opaque(_d(c).get("opaque"), gp.index(i).child("opaque"))
        ern = spec.get("extendedResourceName")
        if ern is not None and (
            "/" not in _s(ern) or _s(ern).startswith("kubernetes.io/") or names.is_qualified_name(_s(ern))
        ):
            errs.append(
                field.invalid(
                    SPEC.child("extendedResourceName"), ern, "must be a valid extended resource name"
                )
            )
        return errs


class ResourceClaimStrategy(Strategy):
    """``resourceclaims`` with ``/status``: the spec is immutable once created."""

    has_status = True

    def default(self, obj: Obj) -> None:
        default_claim_spec(obj.get("spec"))

    def validate(self, ctx: StrategyContext, obj: Obj) -> ErrorList:
        return validate_device_claim(_d(obj.get("spec")).get("devices"), SPEC.child("devices"))

    def validate_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        return validate_immutable(new.get("spec"), old.get("spec"), SPEC)

    def validate_status_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        return validate_claim_status_update(new, old)


class ResourceClaimTemplateStrategy(Strategy):
    """``resourceclaimtemplates``: a claim spec plus template metadata; immutable spec."""

    def default(self, obj: Obj) -> None:
        default_claim_spec(_d(obj.get("spec")).get("spec"))

    def validate(self, ctx: StrategyContext, obj: Obj) -> ErrorList:
        spec = _d(obj.get("spec"))
        meta = _d(spec.get("metadata"))
        mp = SPEC.child("metadata")
        errs = validate_labels(meta.get("labels"), mp.child("labels"))
        errs += validate_annotations(meta.get("annotations"), mp.child("annotations"))
        errs += validate_device_claim(_d(spec.get("spec")).get("devices"), SPEC.child("spec", "devices"))
        return errs

    def validate_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        return validate_immutable(new.get("spec"), old.get("spec"), SPEC)


class ResourceSliceStrategy(Strategy):
    """``resourceslices`` (cluster-scoped): driver, pool, node selection, devices."""

    def validate(self, ctx: StrategyContext, obj: Obj) -> ErrorList:
        return validate_slice_spec(obj.get("spec"), None)

    def validate_update(self, ctx: StrategyContext, new: Obj, old: Obj) -> ErrorList:
        return validate_slice_spec(new.get("spec"), old.get("spec"))


STRATEGIES: dict[tuple[str, str], Strategy] = {
    ("resource.k8s.io", "deviceclasses"): DeviceClassStrategy(),
    ("resource.k8s.io", "resourceclaims"): ResourceClaimStrategy(),
    ("resource.k8s.io", "resourceclaimtemplates"): ResourceClaimTemplateStrategy(),
    ("resource.k8s.io", "resourceslices"): ResourceSliceStrategy(),
}

"""ObjectMeta validation on create and update (apimachinery ``api/validation/objectmeta.go``).

``validate_object_meta`` is ``ValidateObjectMetaAccessor`` plus, for built-in kinds, core's
extra finalizer-name rule (``pkg/apis/core/validation.ValidateObjectMeta``); custom resources
pass ``kube_finalizers=False`` (kube only warns for them). Errors render exactly as
kube-apiserver's, e.g. ``metadata.name: Required value: name or generateName is required``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from apiserver.api.types import as_int
from apiserver.field import ErrorList, Path, forbidden, internal, invalid, required, too_long
from apiserver.validation.names import (
    ValidateNameFunc,
    byte_len,
    go_quote,
    is_dns1123_label,
    is_qualified_name,
    is_valid_label_value,
    remembered,
    validate_namespace_name,
)

FIELD_IMMUTABLE = "field is immutable"
IS_NEGATIVE = "must be greater than or equal to 0"
TOTAL_ANNOTATION_SIZE_LIMIT_B = 256 * (1 << 10)
FIELD_MANAGER_MAX_LENGTH = 128
MAX_SUBRESOURCE_NAME_LENGTH = 256

FINALIZER_ORPHAN_DEPENDENTS = "orphan"
FINALIZER_DELETE_DEPENDENTS = "foregroundDeletion"
FINALIZER_KUBERNETES = "kubernetes"
STANDARD_FINALIZERS = frozenset(
    {FINALIZER_KUBERNETES, FINALIZER_ORPHAN_DEPENDENTS, FINALIZER_DELETE_DEPENDENTS}
)

_BANNED_OWNERS = frozenset({("", "v1", "Event")})

Obj = Mapping[str, Any]


def _mapping(v: Any) -> Mapping[str, Any]:
    # a plain dict (what every decoded object holds) first: ``isinstance`` of the ABC is slow
    return v if type(v) is dict or isinstance(v, Mapping) else {}


def _list(v: Any) -> Sequence[Any]:
    return v if isinstance(v, list | tuple) else ()


def validate_nonnegative_field(value: Any, path: Path) -> ErrorList:
    """``ValidateNonnegativeField`` on a wire value: an integer below 0 is Invalid.

    Anything that is not an integer (unset, a string, a bool) is left to the type checks. The
    apps, batch, core, replication and misc strategies each had a copy; they share this one.
    """
    v = as_int(value)
    if v is not None and v < 0:
        return [invalid(path, v, IS_NEGATIVE)]
    return []


def validate_labels(labels: Any, path: Path) -> ErrorList:
    """``v1validation.ValidateLabels``: qualified-name keys, label-value values."""
    errs: ErrorList = []
    for k, v in _mapping(labels).items():
        errs.extend(validate_label_name(k, path))
        for msg in is_valid_label_value(v if isinstance(v, str) else str(v)):
            errs.append(invalid(path, v, msg))
    return errs


def validate_label_name(name: str, path: Path) -> ErrorList:
    """``v1validation.ValidateLabelName``."""
    return [invalid(path, name, msg) for msg in is_qualified_name(name)]


def validate_annotations(annotations: Any, path: Path) -> ErrorList:
    """``ValidateAnnotations``: case-insensitive qualified-name keys, 256 KiB in total."""
    ann = _mapping(annotations)
    errs: ErrorList = []
    total = 0
    for k, v in ann.items():
        for msg in is_qualified_name(k.lower()):
            errs.append(invalid(path, k, msg))
        total += byte_len(k) + byte_len(v if isinstance(v, str) else str(v))
    if total > TOTAL_ANNOTATION_SIZE_LIMIT_B:
        errs.append(too_long(path, TOTAL_ANNOTATION_SIZE_LIMIT_B))
    return errs


def _group_version(api_version: str) -> tuple[str, str]:
    """``schema.ParseGroupVersion``; an unparsable value yields an empty version."""
    if not api_version or api_version == "/":
        return "", ""
    slashes = api_version.count("/")
    if slashes == 0:
        return "", api_version
    if slashes == 1:
        g, v = api_version.split("/")
        return g, v
    return "", ""


def _owner_ref_value(ref: Obj) -> dict[str, Any]:
    """An owner reference as Go would JSON-render it (field order, omitempty)."""
    out: dict[str, Any] = {
        "apiVersion": ref.get("apiVersion") or "",
        "kind": ref.get("kind") or "",
        "name": ref.get("name") or "",
        "uid": ref.get("uid") or "",
    }
    for k in ("controller", "blockOwnerDeletion"):
        if ref.get(k) is not None:
            out[k] = ref[k]
    return out


def validate_owner_references(refs: Any, path: Path) -> ErrorList:
    """``ValidateOwnerReferences``: required parts, no Event owners, at most one controller."""
    errs: ErrorList = []
    items = [_mapping(r) for r in _list(refs)]
    first_controller = ""
    for ref in items:
        api_version = ref.get("apiVersion") or ""
        kind = ref.get("kind") or ""
        group, version = _group_version(api_version)
        if not version:
            errs.append(invalid(path.child("apiVersion"), api_version, "version must not be empty"))
        if not kind:
            errs.append(invalid(path.child("kind"), kind, "must not be empty"))
        if not ref.get("name"):
            errs.append(invalid(path.child("name"), ref.get("name") or "", "must not be empty"))
        if not ref.get("uid"):
            errs.append(invalid(path.child("uid"), ref.get("uid") or "", "must not be empty"))
        if (group, version, kind) in _BANNED_OWNERS:
            errs.append(
                invalid(
                    path,
                    _owner_ref_value(ref),
                    f"{group}/{version}, Kind={kind} is disallowed from being an owner",
                )
            )
        if ref.get("controller") is True:
            current = f"{kind}/{ref.get('name') or ''}"
            if first_controller:
                errs.append(
                    invalid(
                        path,
                        [_owner_ref_value(r) for r in items],
                        "Only one reference can have Controller set to true. "
                        f'Found "true" in references for {first_controller} and {current}',
                    )
                )
            else:
                first_controller = current
    return errs


def validate_finalizers(finalizers: Any, path: Path) -> ErrorList:
    """``ValidateFinalizers``: qualified names; ``orphan`` and ``foregroundDeletion`` exclude each other."""
    errs: ErrorList = []
    names = [f for f in _list(finalizers) if isinstance(f, str)]
    for f in names:
        errs.extend(invalid(path, f, msg) for msg in is_qualified_name(f))
    if FINALIZER_ORPHAN_DEPENDENTS in names and FINALIZER_DELETE_DEPENDENTS in names:
        errs.append(
            invalid(
                path,
                list(_list(finalizers)),
                f"finalizer {FINALIZER_ORPHAN_DEPENDENTS} and {FINALIZER_DELETE_DEPENDENTS} cannot be both set",
            )
        )
    return errs


def validate_kube_finalizer_names(finalizers: Any, path: Path) -> ErrorList:
    """Core's ``validateKubeFinalizerName``: a name without '/' must be a standard finalizer."""
    errs: ErrorList = []
    for i, f in enumerate(_list(finalizers)):
        if isinstance(f, str) and "/" not in f and f not in STANDARD_FINALIZERS:
            errs.append(
                invalid(
                    path.index(i), f, "name is neither a standard finalizer name nor is it fully qualified"
                )
            )
    return errs


def _field_manager_errors(manager: str, path: Path) -> ErrorList:
    """``ValidateFieldManager``: at most 128 bytes, printable characters only."""
    errs: ErrorList = []
    if byte_len(manager) > FIELD_MANAGER_MAX_LENGTH:
        errs.append(too_long(path, FIELD_MANAGER_MAX_LENGTH))
    offset = 0
    for ch in manager:
        if not ch.isprintable():
            errs.append(invalid(path, manager, f"invalid character U+{ord(ch):04X} (at position {offset})"))
        offset += byte_len(ch)
    return errs


def validate_managed_fields(entries: Any, path: Path) -> ErrorList:
    """``ValidateManagedFields``: operation, fieldsType, manager and subresource of each entry."""
    errs: ErrorList = []
    for i, raw in enumerate(_list(entries)):
        entry = _mapping(raw)
        op = entry.get("operation") or ""
        ftype = entry.get("fieldsType") or ""
        manager = str(entry.get("manager") or "")
        subresource = str(entry.get("subresource") or "")
        if (
            (op == "Apply" or op == "Update")
            and (not ftype or ftype == "FieldsV1")
            and manager in _VALID_MANAGERS
            and byte_len(subresource) <= MAX_SUBRESOURCE_NAME_LENGTH
        ):
            continue  # the usual, valid entry: nothing below would report anything
        p = path.index(i)
        if op not in ("Apply", "Update"):
            errs.append(invalid(p.child("operation"), op, "must be `Apply` or `Update`"))
        if ftype and ftype != "FieldsV1":
            errs.append(invalid(p.child("fieldsType"), ftype, "must be `FieldsV1`"))
        manager_errs = _field_manager_errors(manager, p.child("manager"))
        if not manager_errs and type(manager) is str:
            if len(_VALID_MANAGERS) >= _VALID_MANAGERS_LIMIT:
                _VALID_MANAGERS.clear()
            _VALID_MANAGERS.add(manager)
        errs.extend(manager_errs)
        if byte_len(subresource) > MAX_SUBRESOURCE_NAME_LENGTH:
            errs.append(too_long(p.child("subresource"), MAX_SUBRESOURCE_NAME_LENGTH))
    return errs


#: field managers :func:`_field_manager_errors` accepted (every write revalidates the same few)
_VALID_MANAGERS: set[str] = set()
_VALID_MANAGERS_LIMIT = 4096


def _common(meta: Obj, namespaced: bool, path: Path) -> ErrorList:
    """``validateObjectMetaAccessorWithOptsCommon``: everything but the name."""
    errs: ErrorList = []
    ns = meta.get("namespace") or ""
    if namespaced:
        if not ns:
            errs.append(required(path.child("namespace"), ""))
        else:
            errs.extend(invalid(path.child("namespace"), ns, m) for m in validate_namespace_name(ns, False))
    elif ns:
        errs.append(forbidden(path.child("namespace"), "not allowed on this type"))
    gen = meta.get("generation") or 0
    if isinstance(gen, int) and gen < 0:
        errs.append(invalid(path.child("generation"), gen, IS_NEGATIVE))
    _validate_meta_collections(meta, path, errs, finalizers=True)
    return errs


def _validate_meta_collections(meta: Obj, path: Path, errs: ErrorList, *, finalizers: bool) -> None:
    """Labels, annotations, owner references, (finalizers,) managed fields, in kube's order.

    Each is validated only when set: every one of them yields no error when empty or absent,
    and most objects carry few of them, so no field path is built for the ones they lack.
    """
    labels = meta.get("labels")
    if labels:
        errs.extend(validate_labels(labels, path.child("labels")))
    annotations = meta.get("annotations")
    if annotations:
        errs.extend(validate_annotations(annotations, path.child("annotations")))
    refs = meta.get("ownerReferences")
    if refs:
        errs.extend(validate_owner_references(refs, path.child("ownerReferences")))
    if finalizers:
        fins = meta.get("finalizers")
        if fins:
            errs.extend(validate_finalizers(fins, path.child("finalizers")))
    managed = meta.get("managedFields")
    if managed:
        errs.extend(validate_managed_fields(managed, path.child("managedFields")))


#: the strings the checkers below accepted already (:func:`remembered`): :func:`_plainly_valid`
#: tests these before it calls a checker, which for a known value would only look here itself
_KNOWN_KEYS = remembered(is_qualified_name)
_KNOWN_VALUES = remembered(is_valid_label_value)
_KNOWN_LABELS = remembered(is_dns1123_label)  # namespace names (``validate_namespace_name``)
#: ``(name rule, generateName)`` pairs that passed the rule as a prefix (a StatefulSet's pods
#: all carry their set's), and the ``(apiVersion, kind)`` of owners that parse to a version
#: and are no banned kind; each bounded like the checkers' sets
_KNOWN_PREFIXES: set[tuple[ValidateNameFunc, str]] = set()
_KNOWN_OWNER_TYPES: set[tuple[str, str]] = set()
_KNOWN_LIMIT = 4096


def _prefix_valid(name_fn: ValidateNameFunc, generate_name: str) -> bool:
    """``not name_fn(generate_name, True)``, remembered for the pairs that pass."""
    key = (name_fn, generate_name)
    if key in _KNOWN_PREFIXES:
        return True
    if name_fn(generate_name, True):
        return False
    if len(_KNOWN_PREFIXES) >= _KNOWN_LIMIT:
        _KNOWN_PREFIXES.clear()
    _KNOWN_PREFIXES.add(key)
    return True


def _owner_type_valid(api_version: str, kind: str) -> bool:
    """An owner reference's ``apiVersion`` (``str``) parses to a version and, with its ``kind``
    (a non-empty ``str``), names no banned owner: remembered for the pairs that pass."""
    key = (api_version, kind)
    if key in _KNOWN_OWNER_TYPES:
        return True
    group, version = _group_version(api_version)
    if not version or (group, version, kind) in _BANNED_OWNERS:
        return False
    if len(_KNOWN_OWNER_TYPES) >= _KNOWN_LIMIT:
        _KNOWN_OWNER_TYPES.clear()
    _KNOWN_OWNER_TYPES.add(key)
    return True


def _plainly_valid(meta: dict[str, Any], namespaced: bool, name_fn: ValidateNameFunc) -> bool:
    """True only where :func:`validate_object_meta` reports nothing: the usual metadata of a
    create (a name, a namespace, labels, owner references) checked in one pass with the same
    (remembered) checkers, without a field path or an error list. Anything less usual
    (managed fields, a value not of its usual type, any error) answers False, and the full
    validation runs and words the errors. Annotations of string keys and values are checked
    by their two rules (qualified lower-cased keys, 256 KiB in all): the StatefulSet
    controller marks each Workload and PodGroup it makes with a ``managed-by`` annotation.

    A ``generateName`` beside the name is usual too: a StatefulSet's pods carry both (kube's
    ``GetPodFromTemplate`` sets the prefix, the controller the name), and it is checked by the
    one rule the full validation applies to it (``name_fn`` as a prefix).

    So are finalizers that are all fully qualified names (a ``/`` and a valid qualified name):
    a PodGroup gets ``scheduling.k8s.io/podgroup-protection`` on every create. Such a name
    is never one of the standard ``orphan``/``foregroundDeletion``/``kubernetes`` (no ``/``),
    so neither the pair rule nor core's kube-finalizer-name rule can object to it."""
    if meta.get("managedFields"):
        return False
    annotations = meta.get("annotations")
    if annotations:
        if type(annotations) is not dict:
            return False
        total = 0
        for k, v in annotations.items():
            if type(k) is not str or type(v) is not str or is_qualified_name(k.lower()):
                return False
            total += byte_len(k) + byte_len(v)
        if total > TOTAL_ANNOTATION_SIZE_LIMIT_B:
            return False
    fins = meta.get("finalizers")
    if fins:
        if type(fins) is not list:
            return False
        for f in fins:
            if type(f) is not str or "/" not in f or is_qualified_name(f):
                return False
    name = meta.get("name")
    if type(name) is not str or not name or name_fn(name, False):
        return False
    generate_name = meta.get("generateName")
    if generate_name and (type(generate_name) is not str or not _prefix_valid(name_fn, generate_name)):
        return False
    ns = meta.get("namespace") or ""
    if namespaced:
        if type(ns) is not str or not ns or (ns not in _KNOWN_LABELS and validate_namespace_name(ns, False)):
            return False
    elif ns:
        return False
    gen = meta.get("generation")
    if gen is not None and type(gen) is not int or (gen or 0) < 0:
        return False
    labels = meta.get("labels")
    if labels:
        if type(labels) is not dict:
            return False
        known_keys, known_values = _KNOWN_KEYS, _KNOWN_VALUES
        for k, v in labels.items():
            if (
                type(k) is not str
                or type(v) is not str
                or (k not in known_keys and is_qualified_name(k))
                or (v not in known_values and is_valid_label_value(v))
            ):
                return False
    refs = meta.get("ownerReferences")
    if refs:
        if type(refs) is not list:
            return False
        controllers = 0
        for ref in refs:
            if type(ref) is not dict:
                return False
            api_version, kind = ref.get("apiVersion"), ref.get("kind")
            if type(api_version) is not str or type(kind) is not str or not kind:
                return False
            if not _owner_type_valid(api_version, kind) or not ref.get("name") or not ref.get("uid"):
                return False
            if ref.get("controller") is True:
                controllers += 1
        if controllers > 1:
            return False
    return True


def validate_object_meta(
    meta: Obj | None,
    namespaced: bool,
    name_fn: ValidateNameFunc,
    path: Path,
    *,
    kube_finalizers: bool = True,
) -> ErrorList:
    """``ValidateObjectMeta`` on create; expects name generation to have happened already."""
    if type(meta) is dict and _plainly_valid(meta, namespaced, name_fn):
        return []
    return validate_object_meta_full(meta, namespaced, name_fn, path, kube_finalizers=kube_finalizers)


def validate_object_meta_full(
    meta: Obj | None,
    namespaced: bool,
    name_fn: ValidateNameFunc,
    path: Path,
    *,
    kube_finalizers: bool = True,
) -> ErrorList:
    """:func:`validate_object_meta` without its one-pass answer for the usual valid metadata."""
    if meta is not None and not isinstance(meta, Mapping):
        return [internal(path, "metadata must be an object")]
    meta = meta or {}
    errs: ErrorList = []
    generate_name = meta.get("generateName") or ""
    if generate_name:
        errs.extend(
            invalid(path.child("generateName"), generate_name, m) for m in name_fn(generate_name, True)
        )
    name = meta.get("name") or ""
    if not name:
        errs.append(required(path.child("name"), "name or generateName is required"))
    else:
        errs.extend(invalid(path.child("name"), name, m) for m in name_fn(name, False))
    errs.extend(_common(meta, namespaced, path))
    if kube_finalizers and meta.get("finalizers"):
        errs.extend(validate_kube_finalizer_names(meta.get("finalizers"), path.child("finalizers")))
    return errs


def _go_string_slice(items: Sequence[str]) -> str:
    """Go's ``%#v`` of a ``[]string``: ``[]string{"a", "b"}``."""
    return "[]string{" + ", ".join(go_quote(s) for s in items) + "}"


def validate_no_new_finalizers(new: Any, old: Any, path: Path) -> ErrorList:
    """``ValidateNoNewFinalizers``: once deletion started, finalizers may only be removed."""
    extra = sorted(set(_list(new)) - set(_list(old)))
    if not extra:
        return []
    return [
        forbidden(
            path,
            "no new finalizers can be added if the object is being deleted, "
            f"found new finalizers {_go_string_slice(extra)}",
        )
    ]


def _instant(v: Any) -> Any:
    """A timestamp compared as an instant (``metav1.Time`` semantic equality); anything else as-is."""
    if not v:
        return None
    if isinstance(v, str):
        try:
            return datetime.fromisoformat(v.replace("Z", "+00:00") if v.endswith("Z") else v)
        except ValueError:
            return v
    return v


def validate_immutable(new: Any, old: Any, path: Path) -> ErrorList:
    """``ValidateImmutableField``: ``Invalid value: <new>: field is immutable``."""
    return [] if new == old else [invalid(path, new, FIELD_IMMUTABLE)]


def validate_object_meta_update(
    new: Obj | None, old: Obj | None, path: Path, *, kube_finalizers: bool = True, collections: bool = True
) -> ErrorList:
    """``ValidateObjectMetaUpdate``: identity fields immutable, deletion only moves forward.

    The registry is expected to have run ``rest.BeforeUpdate`` first, which carries
    ``uid``/``creationTimestamp``/``deletionTimestamp`` (and an unset
    ``deletionGracePeriodSeconds``) over from the old object and fills an unconditional
    update's ``resourceVersion``. ``collections`` False leaves out the labels, annotations, owner
    references and managed fields, for a caller that validated these very values already and
    found them valid (they yield no error here then).
    """
    new = new or {}
    old = old or {}
    errs: ErrorList = []
    if old.get("deletionTimestamp"):
        errs.extend(
            validate_no_new_finalizers(new.get("finalizers"), old.get("finalizers"), path.child("finalizers"))
        )
    rv = new.get("resourceVersion") or ""
    if not rv:
        errs.append(invalid(path.child("resourceVersion"), rv, "must be specified for an update"))
    new_gen, old_gen = new.get("generation") or 0, old.get("generation") or 0
    if isinstance(new_gen, int) and isinstance(old_gen, int) and new_gen < old_gen:
        errs.append(invalid(path.child("generation"), new_gen, "must not be decremented"))
    for key in ("name", "namespace", "uid"):
        new_v, old_v = new.get(key) or "", old.get(key) or ""
        if new_v != old_v:  # validate_immutable, without a path when there is nothing to report
            errs.append(invalid(path.child(key), new_v, FIELD_IMMUTABLE))
    for key in ("creationTimestamp", "deletionTimestamp"):
        new_t, old_t = new.get(key), old.get(key)
        # equal values are equal instants; only different texts need parsing
        if new_t != old_t and _instant(new_t) != _instant(old_t):
            errs.append(invalid(path.child(key), new_t, FIELD_IMMUTABLE))
    new_grace = new.get("deletionGracePeriodSeconds")
    if new_grace != old.get("deletionGracePeriodSeconds"):
        errs.append(invalid(path.child("deletionGracePeriodSeconds"), new_grace, FIELD_IMMUTABLE))
    if collections:
        _validate_meta_collections(new, path, errs, finalizers=False)
    if kube_finalizers and new.get("finalizers"):
        errs.extend(validate_kube_finalizer_names(new.get("finalizers"), path.child("finalizers")))
    return errs


def validate_label_selector(
    sel: Obj | None, path: Path, *, allow_invalid_label_values: bool = False
) -> ErrorList:
    """``v1validation.ValidateLabelSelector`` for a ``metav1.LabelSelector`` in a spec."""
    if sel is None:
        return []
    errs = validate_labels(sel.get("matchLabels"), path.child("matchLabels"))
    for i, raw in enumerate(_list(sel.get("matchExpressions"))):
        expr = _mapping(raw)
        p = path.child("matchExpressions").index(i)
        op = expr.get("operator") or ""
        values = list(_list(expr.get("values")))
        if op in ("In", "NotIn"):
            if not values:
                errs.append(
                    required(p.child("values"), "must be specified when `operator` is 'In' or 'NotIn'")
                )
        elif op in ("Exists", "DoesNotExist"):
            if values:
                errs.append(
                    forbidden(
                        p.child("values"),
                        "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                    )
                )
        else:
            errs.append(invalid(p.child("operator"), op, "not a valid selector operator"))
        errs.extend(validate_label_name(expr.get("key") or "", p.child("key")))
        if not allow_invalid_label_values:
            for j, v in enumerate(values):
                errs.extend(invalid(p.child("values").index(j), v, m) for m in is_valid_label_value(str(v)))
    return errs

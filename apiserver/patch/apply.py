"""Server-side apply and ``metadata.managedFields`` bookkeeping for every write.

This is kube-apiserver's field manager (``k8s.io/apimachinery/pkg/util/managedfields``) over
structured-merge-diff's ``merge.Updater``, on plain JSON dicts and the schemas of
:mod:`apiserver.openapi.schema`:

* :func:`server_side_apply` handles ``PATCH`` with ``application/apply-patch+yaml``: it merges
  the applied configuration into the live object by the schema (list-maps by key, sets by value,
  atomics replaced), removes what the applier applied last time but no longer applies unless
  another manager owns it, and answers 409 ``Conflict`` with ``FieldManagerConflict`` causes when
  it would change a value another manager owns (``force`` takes the fields over instead).
* :func:`record_update` is called by the generic registry for every other write (create,
  update, merge/strategic/JSON patch): whatever the write changed becomes owned by the writer,
  under an ``operation: Update`` entry, and stops being owned by everybody else.

Both follow the layering of kube's ``NewDefaultFieldManager``:

* ``managedFields`` sent in a request body are honoured when valid; ``[]`` (or ``[{}]``) clears
  them; absent or undecodable ones fall back to the live object's (``decodeLiveOrNew``).
  Subresource writes always use the live object's. An apply body must not carry any (400).
* An update of an existing object that has no managed fields is not tracked (so clearing them
  sticks); a create always is (``skipNonAppliedManager`` with probability 1). The first apply to
  an object without managed fields first records everything already set as owned by an Update
  manager ``before-first-apply``.
* Paths never owned by anybody (``stripMetaManager``): ``apiVersion``, ``kind``, ``metadata``
  itself, ``metadata.{name,namespace,creationTimestamp,selfLink,uid,clusterName,generation,
  managedFields,resourceVersion}``. Reset fields (kube's ``GetResetFields``; here ``status`` for
  the main resource, ``spec`` for ``/status``) are neither owned nor conflict-checked.
* ``kubectl`` as apply manager gets kube's client-side-apply upgrade path
  (``lastAppliedManager``/``lastAppliedUpdater``): conflicts on fields whose live value still
  equals the ``kubectl.kubernetes.io/last-applied-configuration`` annotation are forced, and the
  annotation is rewritten to the applied configuration if the object has one.
* More than 10 Update entries are folded, oldest first, into ``ancient-changes``
  (``capManagersManager``). Entries are sorted like ``sortEncodedManagedFields``.

Deliberate simplifications against structured-merge-diff (see also the module docs of
:mod:`apiserver.patch.fieldpath`): one API version per resource, so no conversion between
versions and no ``reconcileManagedFieldsWithSchemaChanges``; unions are not normalized; unknown
fields are treated as schema-less (granular maps, atomic lists) instead of failing with "field not
declared in schema" (strict field validation is the registry's job); duplicate keys in *live*
list-maps are not merged specially (first occurrence wins); null map entries are dropped from an
apply result, as decoding into kube's Go types would. A create is compared against
``{"metadata": {}, "spec": {}}`` as an approximation of kube's zero-valued Go object, which
only affects whether ``f:spec`` carries a ``.`` marker.
"""

from __future__ import annotations

import datetime as _dt
import functools
import json
import marshal
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import orjson

from apiserver.api.types import Obj
from apiserver.errors import StatusError, bad_request
from apiserver.patch.createlists import ListTemplates, split_spec_lists
from apiserver.patch.createmem import CreateFieldsMemo, blanked, key_of_blanked
from apiserver.patch.fieldpath import (
    EXACT_JSON,
    FIELD,
    FieldPathError,
    FieldSet,
    Node,
    Path,
    PathElement,
    ensure_named_fields_are_members,
    field,
    field_schema,
    fields_of,
    go_json,
    item_schema,
    list_item_element,
    list_semantics,
    make_path,
    map_is_atomic,
    path_string,
    remember_joined,
)
from apiserver.patch.ownerrefs import OwnerRefsMemo
from apiserver.patch.pairmemo import PairMemo

APPLY = "Apply"
UPDATE = "Update"
FIELDS_V1 = "FieldsV1"
LAST_APPLIED_ANNOTATION = "kubectl.kubernetes.io/last-applied-configuration"
#: Manager that owns what an object held before its first apply (``skipnonapplied.go``).
BEFORE_FIRST_APPLY = "before-first-apply"
#: Bucket the oldest Update entries are folded into (``capmanagers.go``).
ANCIENT_CHANGES = "ancient-changes"
MAX_UPDATE_MANAGERS = 10
#: ``TotalAnnotationSizeLimitB``: a last-applied annotation that would exceed it is dropped.
TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024
#: The only apply manager that syncs and honours the client-side-apply annotation.
KUBECTL_MANAGER = "kubectl"

#: ``stripMetaManager``: exact paths (not subtrees) never recorded as owned.
STRIP_FIELDS = FieldSet(
    [
        make_path("apiVersion"),
        make_path("kind"),
        make_path("metadata"),
        *(
            make_path("metadata", name)
            for name in (
                "name",
                "namespace",
                "creationTimestamp",
                "selfLink",
                "uid",
                "clusterName",
                "generation",
                "managedFields",
                "resourceVersion",
            )
        ),
    ]
)


_RESET_MAIN = FieldSet([make_path("status")])
_RESET_STATUS = FieldSet([make_path("spec")])
_RESET_NONE = FieldSet()


def default_reset_fields(subresource: str = "") -> FieldSet:
    """The reset fields of a typical strategy: ``status`` on the resource, ``spec`` on ``/status``.

    kube resets (and so never tracks) the part of the object a request may not change. Pass
    ``reset_fields`` explicitly for strategies that reset more (e.g. pod status also resets
    ``metadata.deletionTimestamp``). Field sets are immutable, so the same instances are shared.
    """
    if subresource == "":
        return _RESET_MAIN
    if subresource == "status":
        return _RESET_STATUS
    return _RESET_NONE


# -- managers and their entries ----------------------------------------------------------------


class ManagerId(NamedTuple):
    """A manager's identity (``BuildManagerIdentifier``): Apply entries ignore the API version."""

    manager: str
    operation: str
    api_version: str = ""
    subresource: str = ""

    def identifier(self) -> str:
        """The JSON identifier kube keys managers by; also the order conflict messages use."""
        d: dict[str, str] = {}
        if self.manager:
            d["manager"] = self.manager
        d["operation"] = self.operation
        if self.api_version:
            d["apiVersion"] = self.api_version
        if self.subresource:
            d["subresource"] = self.subresource
        return go_json(d)

    def describe(self) -> str:
        """``printManager``: ``"kubectl"`` or ``"kube-controller-manager" using apps/v1``."""
        text = json.dumps(self.manager, ensure_ascii=False)
        if self.subresource:
            text += f" with subresource {json.dumps(self.subresource, ensure_ascii=False)}"
        if self.operation == UPDATE:
            text += f" using {self.api_version}"
        return text


class VersionedSet(NamedTuple):
    """What one manager owns, at which API version, and when it last changed something.

    A named tuple rather than a frozen dataclass: every write builds and ``_replace``-s a few,
    which a tuple does in C where a frozen dataclass calls ``object.__setattr__`` per field.
    """

    fields: FieldSet
    api_version: str
    applied: bool
    time: str | None = None


Managers = dict[ManagerId, VersionedSet]


def decode_managed_fields(entries: Any, *, stored: bool = False) -> Managers:
    """``DecodeManagedFields``: raises ``ValueError`` for anything kube would refuse to decode.

    ``stored``: the entries are a stored object's (never modified; see
    :meth:`FieldSet.from_fields_v1`)."""
    if entries is None:
        return {}
    if not isinstance(entries, list):
        raise ValueError("managedFields must be a list")
    out: Managers = {}
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise ValueError(f"managed fields entry {i} is not an object")
        operation = entry.get("operation")
        if operation not in (APPLY, UPDATE):
            raise ValueError("operation must be `Apply` or `Update`")
        api_version = entry.get("apiVersion") or ""
        if not isinstance(api_version, str) or not api_version:
            raise ValueError("apiVersion must not be empty")
        fields_type = entry.get("fieldsType") or ""
        if fields_type == "":
            raise ValueError(f"missing fieldsType in managed fields entry {i}")
        if fields_type != FIELDS_V1:
            raise ValueError(f"invalid fieldsType {fields_type!r} in managed fields entry {i}")
        time = entry.get("time")
        if time is not None and not isinstance(time, str):
            raise ValueError(f"invalid time in managed fields entry {i}")
        manager = entry.get("manager") or ""
        subresource = entry.get("subresource") or ""
        if not isinstance(manager, str) or not isinstance(subresource, str):
            raise ValueError(f"invalid manager in managed fields entry {i}")
        fs = FieldSet.from_fields_v1(entry.get("fieldsV1"), stored=stored)
        mid = ManagerId(manager, operation, api_version if operation == UPDATE else "", subresource)
        out[mid] = VersionedSet(fs, api_version, operation == APPLY, time)
    return out


def _seconds(time: str | None) -> int:
    if not time:
        return 0
    return _parse_seconds(time)


@functools.lru_cache(maxsize=4096)
def _parse_seconds(time: str) -> int:
    """Parsing RFC 3339 is slow and every write sorts entries by the same few timestamps."""
    try:
        return int(_dt.datetime.fromisoformat(time.replace("Z", "+00:00")).timestamp())
    except ValueError:
        return 0


def encode_managed_fields(managers: Managers, fields_v1: FieldsEncoder | None = None) -> list[Obj]:
    """``encodeManagedFields`` + ``sortEncodedManagedFields``: Apply before Update, then by time.

    ``fields_v1`` makes each entry's ``fieldsV1`` object (default: a fresh one per entry).
    """
    if len(managers) == 1:
        ((mid, vs),) = managers.items()
        return [_encode_entry(mid, vs, fields_v1)]
    keyed = [
        ((mid.operation, _seconds(vs.time), mid.manager, vs.api_version, mid.subresource or ""), i, mid, vs)
        for i, (mid, vs) in enumerate(managers.items())
    ]
    keyed.sort()  # the index breaks ties, as the stable sort of the entries did
    return [_encode_entry(mid, vs, fields_v1) for _, _, mid, vs in keyed]


#: Makes an entry's ``fieldsV1`` object from its field set.
FieldsEncoder = Callable[[FieldSet], Obj]


def _encode_entry(mid: ManagerId, vs: VersionedSet, fields_v1: FieldsEncoder | None = None) -> Obj:
    entry: Obj = {"manager": mid.manager, "operation": mid.operation, "apiVersion": vs.api_version}
    if vs.time:
        entry["time"] = vs.time
    entry["fieldsType"] = FIELDS_V1
    entry["fieldsV1"] = vs.fields.to_fields_v1() if fields_v1 is None else fields_v1(vs.fields)
    if mid.subresource:
        entry["subresource"] = mid.subresource
    return entry


def _cap_update_managers(managers: Managers, limit: int = MAX_UPDATE_MANAGERS) -> Managers:
    """Fold the oldest Update entries into per-version ``ancient-changes`` buckets."""
    updaters = [mid for mid, vs in managers.items() if not vs.applied]
    if len(updaters) <= limit:
        return managers
    out = dict(managers)
    updaters.sort(key=lambda mid: (_seconds(out[mid].time), mid.identifier()))
    first_of_version: dict[str, ManagerId] = {}
    length = len(updaters)
    for mid in updaters:
        if length <= limit:
            break
        vs = out[mid]
        bucket = ManagerId(ANCIENT_CHANGES, UPDATE, vs.api_version)
        first = first_of_version.get(vs.api_version)
        if first is None:
            first_of_version[vs.api_version] = mid
            continue
        if bucket not in out:
            out[bucket] = out.pop(first)
        out[bucket] = VersionedSet(vs.fields | out[bucket].fields, vs.api_version, False, vs.time)
        if mid != bucket:
            del out[mid]
        length -= 1
    return out


# -- conflicts ---------------------------------------------------------------------------------


class _Conflicts(Exception):
    def __init__(self, conflicts: dict[ManagerId, FieldSet]) -> None:
        super().__init__("conflicts")
        self.conflicts = conflicts


def conflict_error(conflicts: dict[ManagerId, FieldSet]) -> StatusError:
    """``NewConflictError``: 409 Conflict, one ``FieldManagerConflict`` cause per path."""
    ordered = sorted(conflicts, key=ManagerId.identifier)
    items: list[tuple[ManagerId, Path]] = [(mid, p) for mid in ordered for p in conflicts[mid]]
    causes = [
        {
            "reason": "FieldManagerConflict",
            "message": f"conflict with {mid.describe()}",
            "field": path_string(p),
        }
        for mid, p in items
    ]
    if len(items) == 1:
        mid, p = items[0]
        message = f"Apply failed with 1 conflict: conflict with {mid.describe()}: {path_string(p)}"
    else:
        lines: list[str] = []
        for mid in ordered:
            lines.append(f"conflicts with {mid.describe()}:")
            lines.extend(f"- {path_string(p)}" for p in conflicts[mid])
        message = f"Apply failed with {len(items)} conflicts: " + "\n".join(lines)
    return StatusError(409, "Conflict", message, {"causes": causes})


# -- values: copy, equality, merge, compare, remove -------------------------------------------

_MISSING: Any = object()
_EMPTIED: Any = object()


def _copy(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _copy(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_copy(x) for x in v]
    return v


def json_equal(a: Any, b: Any) -> bool:
    """Equality of JSON values that, unlike ``==``, keeps ``true`` and ``1`` apart."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return (
            isinstance(b, list)
            and len(a) == len(b)
            and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
        )
    if isinstance(a, (int, float)):
        return isinstance(b, (int, float)) and not isinstance(b, bool) and a == b
    return type(a) is type(b) and a == b


def _drop_nulls(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _drop_nulls(x) for k, x in v.items() if x is not None}
    if isinstance(v, list):
        return [_drop_nulls(x) for x in v]
    return v


def _element_or_none(
    item: Any, node: Node | None, semantics: tuple[str, tuple[str, ...]]
) -> PathElement | None:
    try:
        return list_item_element(item, node, semantics)
    except FieldPathError:
        return None


def merge_values(lhs: Any, rhs: Any, node: Node | None) -> Any:
    """structured-merge-diff's ``Merge`` with the keep-RHS rule: ``rhs`` is the applied config.

    A null in ``rhs`` replaces scalars and atomics but leaves a non-empty granular map or
    associative list alone, as structured-merge-diff does.
    """
    if rhs is _MISSING:
        return _copy(lhs)
    if lhs is _MISSING:
        return _copy(rhs)
    if rhs is None:
        if isinstance(lhs, dict) and lhs and not map_is_atomic(node):
            return _copy(lhs)
        if isinstance(lhs, list) and lhs and list_semantics(node)[0] != "atomic":
            return _copy(lhs)
        return None
    if isinstance(rhs, dict) and (lhs is None or isinstance(lhs, dict)):
        left: dict[str, Any] = lhs or {}
        if map_is_atomic(node) or (not left and not rhs):
            return _copy(rhs)
        out: dict[str, Any] = {}
        for k, lv in left.items():
            out[k] = merge_values(lv, rhs.get(k, _MISSING), field_schema(node, k)[0])
        for k, rv in rhs.items():
            if k not in left:
                out[k] = _copy(rv)
        return out
    if isinstance(rhs, list) and (lhs is None or isinstance(lhs, list)):
        left_items: list[Any] = lhs or []
        semantics = list_semantics(node)
        if semantics[0] == "atomic" or (not left_items and not rhs):
            return _copy(rhs)
        return _merge_lists(left_items, rhs, node, semantics)
    return _copy(rhs)


def _merge_lists(
    lhs: list[Any], rhs: list[Any], node: Node | None, semantics: tuple[str, tuple[str, ...]]
) -> list[Any]:
    """Merge associative lists keeping both orders (structured-merge-diff's ``visitListItems``).

    Items present on both sides follow the applied order; items only in the live list keep
    their place relative to their neighbours; new items go where the applied list puts them.
    """
    items = item_schema(node)
    l_pes = [_element_or_none(it, node, semantics) for it in lhs]
    r_pes = [_element_or_none(it, node, semantics) for it in rhs]
    l_map: dict[PathElement, Any] = {}
    for pe, it in zip(l_pes, lhs, strict=True):
        if pe is not None:
            l_map.setdefault(pe, it)
    r_map: dict[PathElement, Any] = {}
    for pe, it in zip(r_pes, rhs, strict=True):
        if pe is not None:
            r_map.setdefault(pe, it)
    shared = [pe for pe in r_pes if pe is not None and pe in l_map]
    shared_i = 0
    next_shared = shared[0] if shared else None

    def advance() -> PathElement | None:
        nonlocal shared_i
        shared_i += 1
        return shared[shared_i] if shared_i < len(shared) else None

    out: list[Any] = []
    merged_rhs: set[PathElement] = set()
    li = ri = 0
    n_l, n_r = len(lhs), len(rhs)
    while li < n_l or ri < n_r:
        if li < n_l and ri < n_r:
            pe = l_pes[li]
            if pe is not None and pe == r_pes[ri]:
                merged_rhs.add(pe)
                out.append(merge_values(l_map[pe], r_map[pe], items))
                li += 1
                ri += 1
                next_shared = advance()
                continue
            if pe is not None and pe in r_map and next_shared is not None and next_shared != pe:
                li += 1
                continue
        if li < n_l:
            pe = l_pes[li]
            if pe is None or pe not in r_map:
                out.append(_copy(lhs[li]))
                li += 1
                continue
            if pe in merged_rhs:
                li += 1
                continue
        if ri < n_r:
            pe = r_pes[ri]
            ri += 1
            if pe is None:
                out.append(_copy(rhs[ri - 1]))
                continue
            if pe in merged_rhs:
                continue
            merged_rhs.add(pe)
            out.append(merge_values(l_map.get(pe, _MISSING), r_map[pe], items))
            if next_shared is not None and next_shared == pe:
                next_shared = advance()
    return out


class Comparison(NamedTuple):
    """``typed.Comparison``: what ``rhs`` added, modified (leaves only) and removed.

    A named tuple for the same reason as :class:`VersionedSet`: every write builds one.
    """

    added: FieldSet
    modified: FieldSet
    removed: FieldSet

    def exclude(self, fields: FieldSet) -> Comparison:
        if not fields:
            return self
        return Comparison(
            self.added.recursive_difference(fields),
            self.modified.recursive_difference(fields),
            self.removed.recursive_difference(fields),
        )

    def is_same(self) -> bool:
        return not (self.added or self.modified or self.removed)


def compare_values(lhs: Any, rhs: Any, node: Node | None) -> Comparison:
    """``TypedValue.Compare``: every node only on one side is added/removed; differing leaves
    (scalars, atomic lists and maps, empty containers) are modified."""
    diff = _Diff()
    if not _same_json(lhs, rhs):
        _compare(lhs, rhs, node, (), diff, None)
    return diff.comparison()


def _compare_excluding(lhs: Any, rhs: Any, node: Node | None, ignored: FieldSet) -> Comparison:
    """``compare_values(lhs, rhs, node).exclude(ignored)`` without walking the ignored parts.

    Every path a subtree yields lies under the subtree's own path, so not descending into an
    ignored path gives exactly what excluding afterwards would (a status write never looks at
    ``spec``, a spec write never at ``status``).
    """
    diff = _Diff()
    if not _same_json(lhs, rhs):
        _compare(lhs, rhs, node, (), diff, _skip_tree(ignored))
    return diff.comparison()


class _Diff:
    """The three path sets a comparison fills in."""

    __slots__ = ("added", "modified", "removed")

    def __init__(self) -> None:
        self.added: set[Path] = set()
        self.modified: set[Path] = set()
        self.removed: set[Path] = set()

    def comparison(self) -> Comparison:
        return Comparison(_frozen(self.added), _frozen(self.modified), _frozen(self.removed))


#: The empty field set most comparisons yield for at least one of their three sets (shared:
#: field sets are immutable).
_NO_FIELDS = FieldSet()


def _frozen(paths: set[Path]) -> FieldSet:
    return FieldSet._wrap(frozenset(paths)) if paths else _NO_FIELDS


#: A trie of paths not to walk: step -> ``_SKIP_ALL`` (skip it and everything below) or a
#: deeper trie. ``None`` stands for the empty trie. A field is keyed by its name (what a map
#: walk holds; no element needs building to look it up), a list item by its element.
_Skip = dict[Any, Any]
_SKIP_ALL: Any = object()
_SKIP_TREES: dict[frozenset[Path], _Skip | None] = {}


def _skip_tree(fs: FieldSet) -> _Skip | None:
    """The trie form of ``fs`` for :func:`_compare`; the empty path excludes nothing."""
    if not fs:
        return None
    cached = _SKIP_TREES.get(fs.paths, _MISSING)
    if cached is not _MISSING:
        return cached
    root: _Skip = {}
    for p in fs.paths:
        if not p:
            continue
        node = root
        for pe in p[:-1]:
            step = _skip_step(pe)
            nxt = node.get(step)
            if nxt is _SKIP_ALL:
                break
            if nxt is None:
                nxt = node[step] = {}
            node = nxt
        else:
            node[_skip_step(p[-1])] = _SKIP_ALL
    tree = root or None
    if len(_SKIP_TREES) >= 256:
        _SKIP_TREES.clear()
    _SKIP_TREES[fs.paths] = tree
    return tree


def _skip_step(pe: PathElement) -> Any:
    """The key of ``pe`` in a skip trie: a field's name, any other element itself."""
    return pe.raw if pe.kind == FIELD else pe


def _same_json(a: Any, b: Any) -> bool:
    """A fast sufficient test for ``json_equal(a, b)``: True means equal, False "don't know".

    ``==`` runs in C but confuses ``true`` with ``1`` and ignores the exact types
    ``json_equal`` insists on; equal ``orjson`` bytes rule those out (``EXACT_JSON`` refuses
    subclasses of builtins instead of writing them like plain values). NaN is written as
    ``null`` and is unequal to itself even where ``==`` short-cuts on identity, so any
    ``null`` in the text means "don't know" (as do datetimes, bytes and sets, which orjson
    refuses here).

    The blind spot is Python-only values orjson writes as the JSON they stand for: a ``str``
    Enum member passes for its string, and an equal subtree holding a UUID or an Enum member
    in a list key is skipped where the full walk raised ``TypeError``. Neither the JSON, YAML
    and protobuf decoders nor the in-process client (which round-trips bodies through JSON)
    can put one in an object.
    """
    try:
        if a is not b and a != b:
            return False
    except Exception:  # unorderable values: let the slow path decide
        return False
    return _same_equal_json(a, b)


def _same_equal_json(a: Any, b: Any) -> bool:
    """:func:`_same_json` of values already found ``==`` (or identical)."""
    try:
        text = orjson.dumps(a, option=EXACT_JSON)
        if a is not b and orjson.dumps(b, option=EXACT_JSON) != text:
            return False
    except Exception:  # unserializable values: let the slow path decide
        return False
    return b"null" not in text


#: Exact types of the scalars JSON decodes to; map entries of these are compared inline.
_PLAIN_SCALARS = frozenset({str, int, float, bool, type(None)})


def _compare(lhs: Any, rhs: Any, node: Node | None, path: Path, diff: _Diff, skip: _Skip | None) -> None:
    """The structured-merge-diff comparison of one node (at most one side ``_MISSING``).

    Subtrees equal on both sides are recognised with :func:`_same_json` and not walked: an
    update usually changes a few fields of a large object, and only the differing spine needs
    the per-field schema lookups. The test is the caller's (the entry loops below, and the
    entry points for the root), made before the call and the schema lookups it would cost.
    """
    if lhs is _MISSING:
        _compare_one_side(rhs, node, path, diff.added, skip)
        return
    if rhs is _MISSING:
        _compare_one_side(lhs, node, path, diff.removed, skip)
        return
    l_dict = isinstance(lhs, dict)
    r_dict = isinstance(rhs, dict)
    if (l_dict or r_dict) and (l_dict or lhs is None) and (r_dict or rhs is None):
        lm: dict[str, Any] = lhs if l_dict else {}
        rm: dict[str, Any] = rhs if r_dict else {}
        if not map_is_atomic(node) and (lm or rm):
            for k, lv in lm.items():
                rv = rm.get(k, _MISSING)
                t = type(lv)
                if t is type(rv) and t in _PLAIN_SCALARS:
                    # the common entry (name, uid, a label...): json_equal of two values of
                    # the same plain scalar type is ==, and a skipped scalar yields nothing
                    if lv != rv and (skip is None or skip.get(k) is not _SKIP_ALL):
                        diff.modified.add(path + (field(k),))
                    continue
                # An exactly equal pair (a metadata, a spec...) yields nothing and raises
                # nothing, walked or skipped: telling it here spares the call and the schema
                # lookups, and ``==`` (in C) first spares an unequal pair the serialization.
                try:
                    equal = lv == rv
                except Exception:  # as in _same_json: let the walk decide
                    equal = False
                if equal and _same_equal_json(lv, rv):
                    continue
                pe = field(k)
                sub = None
                if skip is not None:
                    sub = skip.get(k)
                    if sub is _SKIP_ALL:
                        _walk_skipped(lv, rv, node, k, path + (pe,))
                        continue
                if len(path) == _PAIR_DEPTH - 1 and type(lv) is type(rv) and type(lv) in _CONTAINERS:
                    _compare_pair(lv, rv, field_schema(node, k)[0], path + (pe,), diff, sub)
                else:
                    _compare(lv, rv, field_schema(node, k)[0], path + (pe,), diff, sub)
            if l_dict and r_dict and lm.keys() == rm.keys():
                return  # nothing was added
            for k, rv in rm.items():
                if k in lm:
                    continue
                pe = field(k)
                sub = None
                if skip is not None:
                    sub = skip.get(k)
                    if sub is _SKIP_ALL:
                        _walk_skipped(_MISSING, rv, node, k, path + (pe,))
                        continue
                if type(rv) in _PLAIN_SCALARS:
                    diff.added.add(path + (pe,))
                else:
                    _compare_one_side(rv, field_schema(node, k)[0], path + (pe,), diff.added, sub)
            return
    else:
        l_list = isinstance(lhs, list)
        r_list = isinstance(rhs, list)
        if (l_list or r_list) and (l_list or lhs is None) and (r_list or rhs is None):
            ll: list[Any] = lhs if l_list else []
            rl: list[Any] = rhs if r_list else []
            semantics = list_semantics(node)
            if semantics[0] != "atomic" and (ll or rl):
                items = item_schema(node)
                l_map: dict[PathElement, Any] = {}
                for it in ll:
                    pe = _element_or_none(it, node, semantics)
                    if pe is not None:
                        l_map.setdefault(pe, it)
                seen: set[PathElement] = set()
                for it in rl:
                    pe = _element_or_none(it, node, semantics)
                    if pe is None or pe in seen:
                        continue
                    seen.add(pe)
                    lv = l_map.get(pe, _MISSING)
                    try:
                        equal = lv == it
                    except Exception:  # as for map entries above
                        equal = False
                    if equal and _same_equal_json(lv, it):
                        continue
                    sub = None
                    if skip is not None:
                        sub = skip.get(pe)
                        if sub is _SKIP_ALL:
                            _walk_skipped(lv, it, items, None, path + (pe,))
                            continue
                    _compare(lv, it, items, path + (pe,), diff, sub)
                for pe, it in l_map.items():
                    if pe in seen:
                        continue
                    sub = None
                    if skip is not None:
                        sub = skip.get(pe)
                        if sub is _SKIP_ALL:
                            _walk_skipped(it, _MISSING, items, None, path + (pe,))
                            continue
                    _compare_one_side(it, items, path + (pe,), diff.removed, sub)
                return
    # a leaf present on both sides
    if path and not json_equal(lhs, rhs):
        diff.modified.add(path)


#: Pairs of containers this deep (``status.conditions``, ``metadata.labels``) that differ are
#: compared through :data:`_PAIRS`; shallower ones (a whole ``status``) are unique per object.
_PAIR_DEPTH = 2
_CONTAINERS = (dict, list)
_PAIRS = PairMemo()


def _compare_pair(lhs: Any, rhs: Any, node: Node | None, path: Path, diff: _Diff, skip: _Skip | None) -> None:
    """:func:`_compare` of two containers of the same type, answered by :data:`_PAIRS` when the
    same pair was compared at ``path`` before (see :mod:`.pairmemo`). An atomic one is a single
    leaf, compared directly (nothing to remember)."""
    if (type(lhs) is list and list_semantics(node)[0] == "atomic") or (
        type(lhs) is dict and map_is_atomic(node)
    ):
        _compare(lhs, rhs, node, path, diff, skip)
        return
    memo_key = _PAIRS.key(lhs, rhs, path, node, skip)
    if memo_key is None:
        _compare(lhs, rhs, node, path, diff, skip)
        return
    hit = _PAIRS.get(memo_key, node, skip)
    if hit is None:
        own = _Diff()
        _compare(lhs, rhs, node, path, own, skip)  # raises as the direct walk does: not remembered
        _PAIRS.put(memo_key, node, skip, own.added, own.modified, own.removed)
        added, modified, removed = own.added, own.modified, own.removed
    else:
        added, modified, removed = hit[2], hit[3], hit[4]
    if added:
        diff.added.update(added)
    if modified:
        diff.modified.update(modified)
    if removed:
        diff.removed.update(removed)


def _walk_skipped(lhs: Any, rhs: Any, node: Node | None, name: str | None, path: Path) -> None:
    """Walk a reset subtree for nothing but the errors the full comparison raised in it.

    Reset fields used to be compared like everything else and only dropped afterwards, so a
    value there that cannot name a list item (NaN, ±Inf, a YAML timestamp, bytes or a set in
    a key field) failed the write. Plain JSON holds no such value, which one orjson pass per
    side establishes in the common case, and then the subtree is not walked at all. ``node``
    is the parent's schema when ``name`` is the field this subtree is, else its own.
    """
    if _plain(lhs) and _plain(rhs):
        return
    child = field_schema(node, name)[0] if name is not None else node
    _compare(lhs, rhs, child, path, _Diff(), None)


def _plain(v: Any) -> bool:
    """No walk of ``v`` can raise: a plain scalar, or JSON orjson writes without a ``null``
    (which NaN and ±Inf are written as); see :func:`_same_json` for the blind spot."""
    if v is _MISSING or type(v) in _PLAIN_SCALARS:
        return True
    try:
        return b"null" not in orjson.dumps(v, option=EXACT_JSON)
    except Exception:
        return False


def _compare_one_side(v: Any, node: Node | None, path: Path, out: set[Path], skip: _Skip | None) -> None:
    """:func:`_compare` against ``_MISSING``: ``v`` and every node under it is added/removed.

    Near the root (``spec.containers``, ``metadata.labels``, ``status.conditions``) the paths
    below ``v`` are memoized, see :func:`_memo_walk`: every pod of a gang is created from the
    same template, so its create walks the very same subtrees.

    A map of plain scalars (an Event's ``involvedObject`` and ``source``, a pod's labels) is
    walked directly: its walk is one path per key, cheaper than the key the memo needs, and
    its values (names, uids) differ from object to object, so memoizing it only filled the
    bounded memo with one-off entries (36 % of lookups hit while they were kept there; each
    eviction round dropped the templates' walks with them).
    """
    if 0 < len(path) <= _MEMO_DEPTH and v and (type(v) is list or (type(v) is dict and not _flat(v))):
        if list_semantics(node)[0] == "atomic" if type(v) is list else map_is_atomic(node):
            # an atomic list or map (a pod's containerStatuses, an ObjectReference) is one
            # leaf, whatever it holds: no walk to remember, nor to crowd the memo with
            out.add(path)
            return
        below = _memo_walk(v, node, skip)
        if below is not None:
            out.add(path)
            out.update([path + p for p in below])
            return
    _walk_one_side(v, node, path, out, skip)


def _flat(m: dict[str, Any]) -> bool:
    """Every value of ``m`` is a plain scalar (what :func:`_walk_one_side` adds without a call)."""
    return all(type(x) in _PLAIN_SCALARS for x in m.values())


#: Subtrees at most this deep are memoized; deeper ones are part of those subtrees' walks.
_MEMO_DEPTH = 2
#: Bounds of the walk memo: entries, and the size of one subtree's marshalled form.
_MEMO_ENTRIES = 512
_MEMO_MAX_BYTES = 16 * 1024
_WALKS: dict[tuple[bytes, int, int], tuple[Node | None, _Skip | None, tuple[Path, ...]]] = {}


def _memo_walk(v: Any, node: Node | None, skip: _Skip | None) -> tuple[Path, ...] | None:
    """The paths strictly below ``v`` (relative to it) as a one-sided walk finds them.

    The walk is a function of ``v``'s value including exact types (``true`` vs ``1``, ``1`` vs
    ``1.0`` name different list items), of the schema node and of the skip trie. ``marshal``
    (format 2, which has no back-references) gives equal bytes only for values equal in all
    of that and refuses subclasses of builtins, so its output is the key; the schema node and
    trie are held by the entry, so their ``id``s cannot be reused while it lives. ``None``:
    not memoizable, walk it directly.
    """
    try:
        text = marshal.dumps(v, 2)
    except ValueError:
        return None
    if len(text) > _MEMO_MAX_BYTES:
        return None
    memo_key = (text, id(node), id(skip))
    hit = _WALKS.get(memo_key)
    if hit is not None and hit[0] is node and hit[1] is skip:
        return hit[2]
    below: set[Path] = set()
    _walk_one_side(v, node, (), below, skip)
    paths = tuple(p for p in below if p)
    if len(_WALKS) >= _MEMO_ENTRIES:
        _WALKS.clear()
    _WALKS[memo_key] = (node, skip, paths)
    return paths


def _walk_one_side(v: Any, node: Node | None, path: Path, out: set[Path], skip: _Skip | None) -> None:
    """The walk behind :func:`_compare_one_side`, unmemoized (a memoized subtree's walk must
    not marshal each of its own subtrees again). Scalar entries are added without a call."""
    if isinstance(v, dict):
        if not map_is_atomic(node) and v:
            for k, x in v.items():
                pe = field(k)
                sub = None
                if skip is not None:
                    sub = skip.get(k)
                    if sub is _SKIP_ALL:
                        _walk_skipped(x, _MISSING, node, k, path + (pe,))
                        continue
                if type(x) in _PLAIN_SCALARS:  # a leaf: no schema needed
                    out.add(path + (pe,))
                else:
                    _walk_one_side(x, field_schema(node, k)[0], path + (pe,), out, sub)
    elif isinstance(v, list):
        semantics = list_semantics(node)
        if semantics[0] != "atomic" and v:
            items = item_schema(node)
            seen: set[PathElement] = set()
            for it in v:
                pe = _element_or_none(it, node, semantics)
                if pe is None or pe in seen:
                    continue
                seen.add(pe)
                sub = None
                if skip is not None:
                    sub = skip.get(pe)
                    if sub is _SKIP_ALL:
                        _walk_skipped(it, _MISSING, items, None, path + (pe,))
                        continue
                _walk_one_side(it, items, path + (pe,), out, sub)
    if path:
        out.add(path)


def remove_items(obj: Any, fs: FieldSet, node: Node | None) -> Any:
    """``TypedValue.RemoveItems``: drop every member path with its subtree; containers emptied
    by the removal disappear (structured-merge-diff turns them into null)."""
    if not fs:
        return _copy(obj)
    out = _remove(obj, fs.tree(), node)
    return {} if out is _EMPTIED else out


def _remove(obj: Any, tnode: Any, node: Node | None) -> Any:
    if isinstance(obj, dict):
        if map_is_atomic(node):
            return _copy(obj)
        out: dict[str, Any] = {}
        for k, v in obj.items():
            t = tnode.children.get(field(k))
            if t is None:
                out[k] = _copy(v)
                continue
            if t.member:
                continue
            r = _remove(v, t, field_schema(node, k)[0])
            if r is not _EMPTIED:
                out[k] = r
        return out if out else _EMPTIED
    if isinstance(obj, list):
        semantics = list_semantics(node)
        if semantics[0] == "atomic":
            return _copy(obj)
        items = item_schema(node)
        kept: list[Any] = []
        for it in obj:
            pe = _element_or_none(it, node, semantics)
            t = tnode.children.get(pe) if pe is not None else None
            if t is None:
                kept.append(_copy(it))
                continue
            if t.member:
                continue
            r = _remove(it, t, items)
            if r is not _EMPTIED:
                kept.append(r)
        return kept if kept else _EMPTIED
    return obj


# -- the updater -------------------------------------------------------------------------------


def _update_ownership(
    old: Any,
    new: Any,
    managers: Managers,
    workflow: ManagerId,
    force: bool,
    ignored: FieldSet,
    node: Node | None,
) -> tuple[Managers, Comparison, FieldSet]:
    """``Updater.update``: other managers lose what changed (or raise conflicts) and what
    was removed. Also returns what the write touched (modified or added)."""
    cmp = _compare_excluding(old, new, node, ignored)
    touched = cmp.modified | cmp.added
    removed = cmp.removed
    conflicts: dict[ManagerId, FieldSet] = {}
    if touched:
        for mid, vs in managers.items():
            if mid != workflow:
                clash = vs.fields & touched
                if clash:
                    conflicts[mid] = clash
        if conflicts and not force:
            raise _Conflicts(conflicts)
    out: Managers = {}
    for mid, vs in managers.items():
        fields = vs.fields
        if mid != workflow:
            lost = conflicts.get(mid) if conflicts else None
            if lost:
                fields = fields - lost
            if removed:
                fields = fields - removed
            if fields is not vs.fields:
                # not ``_replace``: that goes through ``_make`` and a keyword dict, and this
                # runs for every manager that loses a field to the write
                vs = VersionedSet(fields, vs.api_version, vs.applied, vs.time)
        if fields:
            out[mid] = vs
    return out, cmp, touched


def _track_update(
    old: Any,
    new: Any,
    managers: Managers,
    mid: ManagerId,
    api_version: str,
    now: str,
    ignored: FieldSet,
    node: Node | None,
) -> Managers:
    """One non-apply write (``managedFieldsUpdater`` + ``stripMetaManager`` + ``Updater.Update``).

    The change is first computed for an anonymous operation, then merged into ``mid``'s entry,
    whose time moves only when the write changed something.
    """
    current = ManagerId("\x00current-operation", UPDATE, api_version)
    out, cmp, touched = _update_ownership(old, new, managers, current, True, ignored, node)
    # The comparison already left out everything at or under ``ignored``, so the former
    # ``.recursive_difference(ignored)`` here removed nothing. (Nor does ``- cmp.removed``, as
    # the walk visits a path once; it stays as structured-merge-diff writes the formula.)
    taken = touched - cmp.removed - STRIP_FIELDS if touched else touched
    if taken:
        previous = out.get(mid)
        fields = taken | previous.fields if previous else taken
        before = managers.get(mid)
        if before is not None:
            fields = _kept_set(fields, before.fields)
        out[mid] = VersionedSet(fields, api_version, False, now or None)
    return out


def _kept_set(fields: FieldSet, before: FieldSet) -> FieldSet:
    """``before`` where it equals ``fields``, else ``fields``.

    A manager re-writing fields it owns (a node's Lease renewal, a controller's status) loses
    them to the write's anonymous operation and gets them back by the union: an equal new set,
    which would be encoded again once the bounded table of encodings has been cleared, where
    ``before``, decoded from the request or the stored object, knows its encoding (and, decoded
    from the stored object, its stored tree).
    """
    if fields is not before and fields == before:
        return before
    return fields


def _prune(
    merged: Any, managers: Managers, apply_id: ManagerId, last: VersionedSet | None, node: Node | None
) -> Any:
    """``Updater.prune``: drop what ``apply_id`` applied last time and nobody owns any more."""
    if last is None or not last.fields:
        return merged

    def ensure(fs: FieldSet) -> FieldSet:
        return ensure_named_fields_are_members(fs, node)

    last_set = ensure(last.fields)
    pruned = remove_items(merged, last_set, node)
    managed = FieldSet()
    for vs in managers.values():
        managed = managed | vs.fields
    merged_set = ensure(fields_of(merged, node))
    pruned_set = ensure(fields_of(pruned, node))
    pruned = remove_items(merged, merged_set - (pruned_set | ensure(managed)), node)
    pruned_set = ensure(fields_of(pruned, node))
    return remove_items(merged, (merged_set - pruned_set) & last_set, node)


# -- helpers on objects ------------------------------------------------------------------------


def _metadata(obj: Any) -> dict[str, Any]:
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    return meta if isinstance(meta, dict) else {}


def _without_managed_fields(obj: Obj) -> Obj:
    out = _copy(obj)
    meta = out.get("metadata")
    if isinstance(meta, dict):
        meta.pop("managedFields", None)
    return out


def _set_managed_fields(obj: Obj, managers: Managers) -> None:
    entries = encode_managed_fields(managers)
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        if not entries:
            return
        meta = obj["metadata"] = {}
    if entries:
        meta["managedFields"] = entries
    else:
        meta.pop("managedFields", None)


def _empty_object(node: Node | None) -> Obj:
    """Stand-in for kube's zero-valued Go object a create is compared with."""
    empty: Obj = {"metadata": {}}
    if field_schema(node, "spec")[1]:
        empty["spec"] = {}
    return empty


def _is_reset(entries: Any) -> bool:
    """``isResetManagedFields``: ``[]`` or ``[{}]`` in a request clears managed fields."""
    if not isinstance(entries, list):
        return False
    return len(entries) == 0 or (len(entries) == 1 and entries[0] == {})


#: Decoded ``managedFields`` lists by their exact JSON text; bounded by clearing when full.
_DECODED_ENTRIES: dict[bytes, Managers] = {}
_DECODED_ENTRIES_LIMIT = 1024
_DECODED_ENTRY_MAX_BYTES = 16 * 1024  # bounds the table's keys to 16 MB (typically ~2 MB)


def _decode_or_empty(entries: Any, stored: bool = False) -> Managers:
    """:func:`decode_managed_fields` of a stored (or sent) list, ``{}`` where it is undecodable.

    Every update and patch decodes the live object's entries. Objects written by the same
    managers in the same second carry the very same entries (the times have a resolution of
    seconds, the field sets are shared by the pods of a template), so the decoding is
    remembered by the list's exact JSON text: one ``orjson.dumps`` instead of a validation
    and a field-set lookup per entry. The decoding is a function of that text (``EXACT_JSON``
    refuses what it would confuse); callers get their own dict.
    """
    if entries is None:
        return {}
    try:
        text: bytes | None = orjson.dumps(entries, option=EXACT_JSON)
    except TypeError:
        text = None
    if text is not None:
        hit = _DECODED_ENTRIES.get(text)
        if hit is not None:
            return dict(hit)
    try:
        managers = decode_managed_fields(entries, stored=stored)
    except ValueError:
        managers = {}
    if text is not None and len(text) <= _DECODED_ENTRY_MAX_BYTES:
        if len(_DECODED_ENTRIES) >= _DECODED_ENTRIES_LIMIT:
            _DECODED_ENTRIES.clear()
        # an exact copy: orjson's result holds its whole write buffer (4 KB at least)
        _DECODED_ENTRIES[bytes(memoryview(text))] = dict(managers)
    return managers


def _decode_live_or_new(
    old: Obj | None, new: Obj, ignore_request: bool, old_is_stored: bool = False
) -> Managers:
    if not ignore_request:
        new_entries = _metadata(new).get("managedFields")
        if _is_reset(new_entries):
            return {}
        managed = _decode_or_empty(new_entries)
        if managed:
            return managed
    return _decode_or_empty(_metadata(old).get("managedFields") if old is not None else None, old_is_stored)


def _gvk_string(api_version: str, kind: str) -> str:
    """``schema.GroupVersionKind.String()``: ``apps/v1, Kind=StatefulSet``, ``/v1, Kind=Pod``."""
    group, sep, version = api_version.rpartition("/")
    if not sep:
        group, version = "", api_version
    return f"{group}/{version}, Kind={kind}"


def _object_ref(obj: Obj, api_version: str, kind: str) -> str:
    meta = _metadata(obj)
    return f"{meta.get('namespace') or ''}/{meta.get('name') or ''}; {_gvk_string(api_version, kind)}"


def _build_last_applied(applied: Obj) -> str:
    """``buildLastApplied``: the applied object minus the annotation, as Go encodes it."""
    obj = _copy(applied)
    annotations = _metadata(obj).get("annotations")
    if isinstance(annotations, dict):
        annotations.pop(LAST_APPLIED_ANNOTATION, None)
    return go_json(obj, sort_keys=True) + "\n"


def _sync_last_applied(obj: Obj, applied: Obj) -> None:
    """``lastAppliedUpdater``: keep an existing client-side-apply annotation in step."""
    annotations = _metadata(obj).get("annotations")
    if not isinstance(annotations, dict) or not annotations.get(LAST_APPLIED_ANNOTATION):
        return
    annotations[LAST_APPLIED_ANNOTATION] = _build_last_applied(applied)
    size = sum(len(str(k).encode()) + len(str(v).encode()) for k, v in annotations.items())
    if size > TOTAL_ANNOTATION_SIZE_LIMIT:
        del annotations[LAST_APPLIED_ANNOTATION]


def _allowed_conflicts_from_last_applied(live: Obj | None, node: Node | None) -> FieldSet | None:
    """Fields kubectl's last client-side apply set whose live value nobody changed since."""
    if live is None:
        return None
    text = (_metadata(live).get("annotations") or {}).get(LAST_APPLIED_ANNOTATION)
    if not isinstance(text, str) or not text:
        return None
    try:
        last_applied = json.loads(text)
    except ValueError:
        return None
    if not isinstance(last_applied, dict):
        return None
    try:
        last_set = fields_of(last_applied, node, strict=True)
    except FieldPathError:
        return None
    modified = compare_values(last_applied, _without_managed_fields(live), node).modified
    return last_set - modified


# -- public entry points -----------------------------------------------------------------------


def server_side_apply(
    live: Obj | None,
    applied: Obj,
    manager: str,
    force: bool,
    schema_node: Node | None,
    now: str,
    api_version: str,
    *,
    kind: str | None = None,
    subresource: str = "",
    reset_fields: FieldSet | None = None,
) -> Obj:
    """Apply ``applied`` for ``manager`` to ``live`` (``None``: create) and return the new object.

    The result carries the updated ``metadata.managedFields``. An apply that changes nothing
    returns the live object (its entry's ``time`` unchanged), so the caller can skip the write
    by comparing. Status changes on the main resource are merged but not owned: the strategy's
    ``prepare_for_update`` is expected to reset them, as in kube.

    Raises :class:`StatusError`: 400 when the body carries ``managedFields`` or is for another
    kind/version (``kind`` defaults to the live object's); 409 ``Conflict`` with
    ``FieldManagerConflict`` causes when ``force`` is false and another manager owns a value the
    apply would change; 500 (no reason, like kube) when the body cannot be keyed (duplicate
    list-map keys, a missing key field).
    """
    if not isinstance(applied, dict):
        raise bad_request("apply patch must be a JSON object")
    if _metadata(applied).get("managedFields") is not None:
        raise bad_request("metadata.managedFields must be nil")
    applied_api = applied.get("apiVersion") if isinstance(applied.get("apiVersion"), str) else ""
    applied_kind = applied.get("kind") if isinstance(applied.get("kind"), str) else ""
    expected_kind = kind or (live or {}).get("kind") or ""
    if applied_api != api_version or (expected_kind and applied_kind != expected_kind):
        raise bad_request(f"invalid object type: {_gvk_string(applied_api, applied_kind)}")
    ignored = default_reset_fields(subresource) if reset_fields is None else reset_fields

    managers: Managers = {}
    if live is not None:
        try:
            managers = decode_managed_fields(_metadata(live).get("managedFields"))
        except ValueError as e:
            raise StatusError(500, "", f"failed to decode managed fields: {e}") from None
    base = _without_managed_fields(live) if live is not None else {}
    if not managers and live is not None:
        before = ManagerId(BEFORE_FIRST_APPLY, UPDATE, api_version, subresource)
        managers = _track_update(
            _empty_object(schema_node), base, {}, before, api_version, now, ignored, schema_node
        )

    try:
        config_set = fields_of(applied, schema_node, strict=True)
    except FieldPathError as e:
        # kube 1.37 answers this client mistake (duplicate or null entries of an associative
        # list) with a 500, which clients retry for ever; gangplane answers 400 with kube's
        # message, as kubernetes/kubernetes#139255 proposes.
        raise StatusError(
            400,
            "BadRequest",
            f"failed to create typed patch object ({_object_ref(applied, applied_api, applied_kind)}): {e}",
        ) from None

    apply_id = ManagerId(manager, APPLY, "", subresource)

    def attempt(force_now: bool) -> tuple[Any, Managers]:
        merged = merge_values(base, applied, schema_node)
        last = managers.get(apply_id)
        owned = dict(managers)
        owned[apply_id] = VersionedSet(
            config_set.recursive_difference(ignored), api_version, True, last.time if last else None
        )
        merged = _prune(merged, owned, apply_id, last, schema_node)
        owned, _, _ = _update_ownership(base, merged, owned, apply_id, force_now, ignored, schema_node)
        mine = owned.get(apply_id)
        if mine is not None:
            stripped = mine.fields - STRIP_FIELDS
            if stripped:
                owned[apply_id] = mine._replace(fields=stripped)
            else:
                del owned[apply_id]
        return merged, owned

    try:
        merged, owned = attempt(force)
    except _Conflicts as c:
        allowed = (
            _allowed_conflicts_from_last_applied(live, schema_node) if manager == KUBECTL_MANAGER else None
        )
        if allowed is None:
            raise conflict_error(c.conflicts) from None
        remaining = {mid: fs - allowed for mid, fs in c.conflicts.items() if fs - allowed}
        if remaining:
            raise conflict_error(remaining) from None
        merged, owned = attempt(True)

    if json_equal(merged, base):
        result = _copy(base)
    else:
        result = _drop_nulls(merged)
        if apply_id in owned:
            owned[apply_id] = owned[apply_id]._replace(time=now or None)
    if manager == KUBECTL_MANAGER:
        _sync_last_applied(result, applied)
    _set_managed_fields(result, owned)
    return result


def record_update(
    old: Obj | None,
    new: Obj,
    manager: str,
    operation: str = UPDATE,
    schema_node: Node | None = None,
    now: str = "",
    api_version: str = "",
    *,
    subresource: str = "",
    reset_fields: FieldSet | None = None,
) -> Obj:
    """Record a non-apply write of ``new`` over ``old`` (``None``: create) by ``manager``.

    Returns a copy of ``new`` with ``metadata.managedFields`` updated: fields the write added or
    changed are owned by ``manager``'s Update entry (time ``now``) and no longer by anybody else;
    removed fields are dropped from every entry. Never raises for odd objects: like kube's
    ``UpdateNoErrors`` the worst case is an object without managed fields.

    An empty ``manager`` means "already tracked" (the registry's create that completes an apply)
    and returns ``new`` untouched; deriving a default name from the User-Agent is the caller's job.
    """
    if operation != UPDATE:
        raise ValueError(f"record_update records Update operations, not {operation!r}")
    result = _copy(new)
    if not manager or not isinstance(result.get("metadata"), dict):
        return result
    entries = updated_managed_fields(
        old,
        new,
        manager,
        schema_node,
        now,
        api_version,
        subresource=subresource,
        reset_fields=reset_fields,
    )
    result["metadata"].pop("managedFields", None)
    if entries:
        result["metadata"]["managedFields"] = entries
    return result


def updated_managed_fields(
    old: Obj | None,
    new: Obj,
    manager: str,
    schema_node: Node | None = None,
    now: str = "",
    api_version: str = "",
    *,
    subresource: str = "",
    reset_fields: FieldSet | None = None,
    fields_v1: FieldsEncoder | None = None,
    old_is_stored: bool = False,
) -> list[Obj] | None:
    """The ``metadata.managedFields`` :func:`record_update` gives ``new`` (``[]``: none).

    This is the registry's per-write path: it neither copies ``new`` nor modifies it, and the
    entries it returns are fresh objects the caller may store (their ``fieldsV1`` objects are
    made by ``fields_v1``, fresh ones by default). ``None`` where
    :func:`record_update` returns ``new`` untouched (no manager, or ``metadata`` is not an
    object), so the caller can fall back to it for such odd objects.

    ``old_is_stored``: ``old`` is the stored object the write replaces, which nobody modifies
    (its entries' decoding may remember their subtrees by identity).
    """
    if not manager or not isinstance(new.get("metadata"), dict):
        return None
    ignored = default_reset_fields(subresource) if reset_fields is None else reset_fields
    managers = _decode_live_or_new(old, new, bool(subresource), old_is_stored)
    creating = old is None or not _metadata(old).get("uid")
    if not managers and not creating:
        return []
    after = _view_without_managed_fields(new)
    mid = ManagerId(manager, UPDATE, api_version, subresource)
    if old is None and not managers:
        return _created_entry(after, schema_node, ignored, mid, api_version, now, fields_v1)
    before = _view_without_managed_fields(old) if old is not None else _empty_object(schema_node)
    managers = _track_update(before, after, managers, mid, api_version, now, ignored, schema_node)
    managers = _cap_update_managers(managers)
    return encode_managed_fields(managers, fields_v1)


#: The field sets of creates by the shape of the created object (see :mod:`.createmem`).
_CREATED = CreateFieldsMemo()


def _created_fields(after: Obj, node: Node | None, ignored: FieldSet, shape: bytes | None) -> FieldSet:
    """What a create of ``after`` records for its manager when nobody else owns anything: the
    ``taken`` set of :func:`_track_update` against the empty object, remembered per ``shape``
    (``after``'s :func:`shape_key`; ``None``: not rememberable)."""
    if shape is not None:
        hit = _CREATED.get(shape, node, ignored)
        if hit is not None:
            return hit
    cmp = _compare_excluding(_empty_object(node), after, node, ignored)
    touched = cmp.modified | cmp.added
    taken = touched - cmp.removed - STRIP_FIELDS if touched else touched
    if shape is not None:
        _CREATED.put(shape, node, ignored, taken)
    return taken


def _created_entry(
    after: Obj,
    node: Node | None,
    ignored: FieldSet,
    mid: ManagerId,
    api_version: str,
    now: str,
    fields_v1: FieldsEncoder | None,
) -> list[Obj]:
    """The one entry a create records when nobody else owns anything (``[]``: it owns nothing).

    ``metadata.ownerReferences`` is the one part of a created object that names another object
    in its field set (its items are keyed by the owner's ``uid``): the pods, PodGroups and
    ControllerRevisions of each StatefulSet share everything else with those of every other
    set. So the rest of the object is answered by its shape (:func:`_created_fields`) and
    encoded once per shape; the owner references are walked and encoded on their own and the
    two trees joined where the full encoding puts ``f:ownerReferences``: the same entry, key for
    key and in the same order (the sets are disjoint, and ``metadata``'s children are fields,
    ordered by name). Lists under ``spec`` that keep the shape from recurring (a Workload's
    templates, named after its set) are joined under ``f:spec`` the same way
    (:func:`_created_rest`).
    """
    md = after["metadata"]
    refs = md.get("ownerReferences")
    if type(refs) is not list or not refs or ignored is not _RESET_MAIN:
        taken, lists = _created_rest(after, node, ignored, fields_v1 is not None)
        if not taken and not lists:
            return []
        entry = _encode_entry(mid, VersionedSet(taken, api_version, False, now or None), fields_v1)
        if lists:
            entry["fieldsV1"] = with_spec_lists(entry["fieldsV1"], lists)
            if fields_v1 is not None:
                remember_created_join(entry["fieldsV1"], taken, None, lists)
        return [entry]
    rest = dict(after)
    rest["metadata"] = rest_md = dict(md)
    del rest_md["ownerReferences"]
    taken, lists = _created_rest(rest, node, ignored, fields_v1 is not None)
    md_node = field_schema(node, "metadata")[0]
    refs_node = field_schema(md_node, "ownerReferences")[0]
    refs_tree = _OWNER_REFS.tree(
        refs, refs_node, lambda r: _owner_refs_tree(r, refs_node), fields_v1 is not None
    )
    entry = _encode_entry(mid, VersionedSet(taken, api_version, False, now or None), fields_v1)
    tree = with_spec_lists(entry["fieldsV1"], lists) if lists else entry["fieldsV1"]
    entry["fieldsV1"] = with_owner_references(tree, refs_tree)
    if fields_v1 is not None:
        remember_created_join(entry["fieldsV1"], taken, refs_tree, lists)
    return [entry]


_REFS_PATH: Path = (field("metadata"), field("ownerReferences"))
#: what :func:`remember_created_join` told the decoder: the joined tree's text and its parts
JoinedParts = tuple[bytes, tuple[tuple[Path, Obj], ...]]


def remember_created_join(
    joined: Obj, taken: FieldSet, refs_tree: Obj | None, lists: Sequence[tuple[str, Obj]]
) -> JoinedParts | None:
    """Tell the decoder how a stored create's joined entry was made (:func:`remember_joined`):
    the object's first update decodes it, and would otherwise parse it whole. Only for a stored
    write, whose subtrees are shared and never modified. Returns the ``(text, parts)`` told, for
    a caller that writes the same tree again and tells it again with :func:`remember_joined`
    (``None``: not plain JSON, the decoder parses it, uncached, as before)."""
    try:
        text = orjson.dumps(joined, option=EXACT_JSON)
    except TypeError:
        return None
    parts = tuple(((field("spec"), field(k)), subtree) for k, subtree in lists)
    if refs_tree is not None:
        parts = ((_REFS_PATH, refs_tree), *parts)
    remember_joined(text, taken, parts)
    return text, parts


#: No subtrees to join (shared: never modified).
_NO_LISTS: tuple[tuple[str, Obj], ...] = ()


def _created_rest(
    after: Obj, node: Node | None, ignored: FieldSet, shared: bool
) -> tuple[FieldSet, Sequence[tuple[str, Obj]]]:
    """The field set of a create of ``after`` (an object without owner references, or with
    them left out) as ``(set, [(spec field, its subtree)])``: the whole set and no subtrees
    when ``after``'s shape is remembered or cannot split; otherwise the set of the object
    without the non-empty lists under ``spec`` (remembered by that object's shape, which does
    recur, see :mod:`.createlists`) and each list's ``fieldsV1`` subtree, walked on its own
    (the walk :func:`_compare` makes of a field only one side has: the list's path and all
    below it).

    Only for the main resource's reset fields (``status``): nothing under ``spec`` is skipped.
    A one-item list-map is answered from its item's template (:class:`.createlists.ListTemplates`)
    once the rest's shape is known. ``shared``: the caller stores the subtrees unmodified.
    """
    shape_value = blanked(after)
    shape = key_of_blanked(shape_value)
    if shape is not None:
        hit = _CREATED.get(shape, node, ignored)
        if hit is not None:
            return hit, _NO_LISTS
    split = split_spec_lists(after) if ignored is _RESET_MAIN else None
    spec_node = field_schema(node, "spec")[0] if split is not None else None
    if split is None or shape is None or shape_value is None or map_is_atomic(spec_node):
        return _created_fields(after, node, ignored, shape), _NO_LISTS
    rest, lists = split
    rest_value = dict(shape_value)
    rest_value["spec"] = dict(shape_value["spec"])
    for k, _ in lists:
        del rest_value["spec"][k]
    rest_shape = key_of_blanked(rest_value)
    known = _CREATED.get(rest_shape, node, ignored) if rest_shape is not None else None
    taken = known if known is not None else _created_fields(rest, node, ignored, rest_shape)
    walked: set[Path] = set()
    subtrees: list[tuple[str, Obj]] = []
    for k, v in lists:
        list_node = field_schema(spec_node, k)[0]
        if known is None:  # its paths go into the whole shape's set (below)
            below = _list_walk(v, list_node)
            subtrees.append((k, _list_tree(below)))
            path = (field("spec"), field(k))
            walked.add(path)
            walked.update([path + p for p in below])
            continue
        semantics = list_semantics(list_node)
        build = functools.partial(_spec_list_tree, node=list_node)
        if semantics[0] == "map":
            subtrees.append((k, _SPEC_LISTS.tree(v, list_node, semantics[1], build, shared)))
        else:
            subtrees.append((k, build(v)))
    if known is None:
        # the first object of this rest shape: objects of its whole shape may follow (the pods
        # of a template), answered then by one lookup; objects whose lists differ each time
        # (each set's Workload) find the rest shape known and leave no one-off entry behind
        _CREATED.put(shape, node, ignored, FieldSet._wrap(taken._paths | walked))
    return taken, subtrees


#: The subtrees of one-item list-maps under ``spec`` by their item's template (see :mod:`.createlists`).
_SPEC_LISTS = ListTemplates()


def _list_walk(v: list[Any], node: Node | None) -> set[Path]:
    """The paths strictly below the list ``v`` (relative to it) that the create's walk finds."""
    below: set[Path] = set()
    _walk_one_side(v, node, (), below, None)
    return below


def _list_tree(below: set[Path]) -> Obj:
    """The ``fieldsV1`` subtree of a list with the paths ``below`` it: the list is a member,
    ``.`` first when it has children (as :func:`_emit` writes it)."""
    subtree = FieldSet._wrap(frozenset(below)).fresh_fields_v1()
    return {".": {}, **subtree} if subtree else {}


def _spec_list_tree(v: list[Any], node: Node | None) -> Obj:
    return _list_tree(_list_walk(v, node))


def with_spec_lists(tree: Obj, lists: Sequence[tuple[str, Obj]]) -> Obj:
    """``tree`` (never modified: it may be a shared canonical one) with each list's subtree
    placed under ``f:spec`` in fieldsV1 order; only the two dicts on the way are new. ``f:spec``
    is there: the rest of ``spec`` is not empty (:func:`.createlists.split_spec_lists`)."""
    spec = tree["f:spec"]
    for k, subtree in lists:
        spec = _insert_field(spec, "f:" + k, subtree)
    out = dict(tree)
    out["f:spec"] = spec
    return out


#: The ``f:ownerReferences`` subtrees of creates by their references (see :mod:`.ownerrefs`).
_OWNER_REFS = OwnerRefsMemo()


def _owner_refs_tree(refs: list[Any], refs_node: Node | None) -> Obj:
    """The ``f:ownerReferences`` value of a create's entry: the one-sided walk of ``refs``."""
    refs_path = (field("metadata"), field("ownerReferences"))
    walked: set[Path] = set()
    _walk_one_side(refs, refs_node, refs_path, walked, None)
    below = FieldSet._wrap(frozenset(p[2:] for p in walked if len(p) > 2))
    refs_tree = below.fresh_fields_v1()
    if refs_tree:
        refs_tree = {".": {}, **refs_tree}
    return refs_tree


def with_owner_references(tree: Obj, refs_tree: Obj) -> Obj:
    """``tree`` (never modified: it may be a shared canonical one) with ``f:ownerReferences``
    placed under ``f:metadata`` in fieldsV1 order; only the two dicts on the way are new."""
    meta = tree.get("f:metadata")
    new_meta = _insert_field(meta if meta is not None else {}, "f:ownerReferences", refs_tree)
    if meta is not None:
        out = dict(tree)
        out["f:metadata"] = new_meta
        return out
    return _insert_field(tree, "f:metadata", new_meta)


def _insert_field(m: Obj, key: str, value: Any) -> Obj:
    """A copy of ``m`` with ``key`` (an ``f:`` field) before the first field named after it.

    ``m``'s keys are ``.`` (first, when the node is a member itself) and ``f:`` fields sorted by
    name (structs and maps have no other children); a field that is not a map key is new."""
    out: Obj = {}
    name = key[2:]
    placed = False
    for k, v in m.items():
        if not placed and k != "." and k[2:] > name:
            out[key] = value
            placed = True
        out[k] = v
    if not placed:
        out[key] = value
    return out


def _view_without_managed_fields(obj: Obj) -> Obj:
    """``obj`` as :func:`_without_managed_fields` sees it, for reading only.

    Comparisons never modify their inputs, so instead of a deep copy only the top level and
    ``metadata`` are copied, and only when there are managed fields to leave out.
    """
    meta = obj.get("metadata")
    if isinstance(meta, dict) and "managedFields" in meta:
        view = dict(obj)
        view["metadata"] = view_meta = dict(meta)  # copies in C, keeping the key order
        del view_meta["managedFields"]
        return view
    return obj


__all__ = [
    "ANCIENT_CHANGES",
    "APPLY",
    "BEFORE_FIRST_APPLY",
    "Comparison",
    "LAST_APPLIED_ANNOTATION",
    "FieldsEncoder",
    "ManagerId",
    "Managers",
    "STRIP_FIELDS",
    "UPDATE",
    "VersionedSet",
    "compare_values",
    "conflict_error",
    "decode_managed_fields",
    "default_reset_fields",
    "encode_managed_fields",
    "json_equal",
    "merge_values",
    "record_update",
    "remove_items",
    "server_side_apply",
    "JoinedParts",
    "remember_created_join",
    "updated_managed_fields",
    "with_owner_references",
    "with_spec_lists",
]

"""Strategic merge patch (``application/strategic-merge-patch+json``), driven by the OpenAPI schema.

This is the server half of apimachinery's ``pkg/util/strategicpatch``: kubectl computes the patch
client-side (``apply``, ``edit``, ``diff``, ``patch``) and the server merges it into the stored
object. The behaviour follows apimachinery, with the patch metadata read from the served schema
(:mod:`apiserver.openapi.schema`) instead of Go struct tags:

* maps merge recursively; ``null`` deletes a key;
* a list whose property has ``x-kubernetes-patch-strategy: merge`` merges: lists of maps by
  ``x-kubernetes-patch-merge-key`` (containers by ``name``), lists of scalars as a union
  (finalizers); every other list, and any list without schema, is replaced (tolerations);
* ``replace`` on a map property replaces it; ``retainKeys`` is honoured through ``$retainKeys``;
* directives: ``$patch: replace|delete|merge`` on a map, the special list elements
  ``{"$patch": "replace"}`` / ``{"$patch": "delete", <key>: v}`` / ``{"$patch": "merge"}``,
  ``$retainKeys``, ``$setElementOrder/<field>`` and ``$deleteFromPrimitiveList/<field>``;
* a node without schema (unknown field, preserve-unknown-fields) gets JSON merge patch semantics.

Ordering matches apimachinery: items named in the patch keep the patch's order, the others keep
the stored order, and ``$setElementOrder`` wins over both; a new item lands before the stored
items it is not ordered against (why ``kubectl patch`` prepends a container).

Deliberate differences from apimachinery, each making the stored JSON cleaner, never different
from what kube would persist after decoding into its Go types:

* values with no stored counterpart are merged into an empty container, so nested directives and
  ``null`` s never reach storage (kube relies on decoding into typed structs to drop them);
* ``$patch: merge`` is accepted as the explicit default (apimachinery rejects it);
* ``$deleteFromPrimitiveList`` always deletes (apimachinery replaces a non-merge list with it);
* errors apimachinery leaves untyped (a 500 in kube) are 422 ``Invalid`` with its message.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

from apiserver.errors import StatusError, bad_request
from apiserver.openapi import schema

Node = dict[str, Any]

DIRECTIVE = "$patch"
RETAIN_KEYS = "$retainKeys"
SET_ELEMENT_ORDER = "$setElementOrder"
DELETE_FROM_PRIMITIVE_LIST = "$deleteFromPrimitiveList"

_REPLACE, _MERGE, _DELETE = "replace", "merge", "delete"

# apimachinery mergepatch error texts; kube answers the first group with 400, the second with 422.
ERR_PRIMITIVE_LIST = "invalid patch format of primitive list"
ERR_RETAIN_KEYS_FORMAT = "invalid patch format of retainKeys"
ERR_SET_ELEMENT_ORDER = "invalid patch format of setElementOrder list"
ERR_RETAIN_KEYS_MISMATCH = "patch content doesn't match retainKeys list"
ERR_LIST_OF_LISTS = "lists of lists are not supported"

_DROP = object()  # a fresh value that must not be stored at all (``{"$patch": "delete"}``)


def _invalid(message: str) -> StatusError:
    return StatusError(422, "Invalid", message)


def go_format(value: Any) -> str:
    """Render a JSON value the way Go's ``%v`` prints ``interface{}`` (used in error messages)."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_format(value[k])}" for k in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(go_format(v) for v in value) + "]"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _no_merge_key(item: dict[str, Any], key: str) -> StatusError:
    return _invalid(f"map: {go_format(item)} does not contain declared merge key: {key}")


def _bad_patch_type(directive: Any, patch: dict[str, Any]) -> StatusError:
    return _invalid(f"unknown patch type: {go_format(directive)} in map: {go_format(patch)}")


def _identity(value: Any) -> Hashable:
    """Equality key for merge-key values and scalar list items (1 == 1.0, but True != 1)."""
    if isinstance(value, bool) or value is None:
        return ("b", value)
    if isinstance(value, int | float):
        return ("n", float(value))
    if isinstance(value, str):
        return ("s", value)
    return ("j", repr(value))


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


# --- schema lookups -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Facts:
    """What the merge reads of one schema node, worked out once per node: every patch of a kind
    walks the same few nodes, and following their ``$ref`` s and parsing the patch-strategy
    extension again per patch was a fifth of a condition patch's merge."""

    node: Node  # held so the id the memo is keyed by is not reused while the entry lives
    properties: dict[str, Node]
    additional: Node | None
    strategy: str
    merge_key: str
    items: Node | None


#: memo of :class:`_Facts` by node id; the schemas are read-only and their nodes few, so it is
#: bounded only against custom resource definitions replaced over a long run
_FACTS: dict[int, _Facts] = {}
_FACTS_LIMIT = 4096


def _facts(node: Node) -> _Facts:
    got = _FACTS.get(id(node))
    if got is not None and got.node is node:
        return got
    resolved = schema.resolve(node) or {}
    strategy, merge_key = _parse_strategy(node)
    got = _Facts(
        node,
        resolved.get("properties") or {},
        schema.additional_properties_of(node),
        strategy,
        merge_key,
        schema.items_of(node),
    )
    if len(_FACTS) >= _FACTS_LIMIT:
        _FACTS.clear()
    _FACTS[id(node)] = got
    return got


def _field(node: Node | None, key: str) -> Node | None:
    """The schema of ``key`` inside ``node``: a declared property or the map's value schema."""
    if node is None:
        return None
    facts = _facts(node)
    prop = facts.properties.get(key)
    if prop is not None:
        return prop
    return facts.additional


def _items(prop: Node | None) -> Node | None:
    return _facts(prop).items if prop else None


def _strategy(prop: Node | None) -> tuple[str, str]:
    """``(strategy, merge key)`` of a property; strategy is ``merge``, ``replace`` or ``""``."""
    if not prop:
        return "", ""
    facts = _facts(prop)
    return facts.strategy, facts.merge_key


def _parse_strategy(prop: Node) -> tuple[str, str]:
    """:func:`_strategy` from the schema's extensions.

    ``retainKeys`` only matters to the client that builds ``$retainKeys``; the server applies the
    directive wherever it appears, as apimachinery does.
    """
    if not prop:
        return "", ""
    raw = str(prop.get("x-kubernetes-patch-strategy") or "")
    parts = {p.strip() for p in raw.split(",") if p.strip()}
    strategy = _MERGE if _MERGE in parts else _REPLACE if _REPLACE in parts else ""
    merge_key = str(prop.get("x-kubernetes-patch-merge-key") or "")
    if strategy == _MERGE and not merge_key:
        # A merge list of maps without a patch merge key: fall back to a single list-map key.
        keys = prop.get("x-kubernetes-list-map-keys") or ()
        if prop.get("x-kubernetes-list-type") == "map" and len(keys) == 1:
            merge_key = str(keys[0])
    return strategy, merge_key


# --- maps -----------------------------------------------------------------------------------


def strategic_merge(
    original: dict[str, Any] | None,
    patch: dict[str, Any],
    schema_node: Node | None,
    *,
    copy_original: bool = True,
) -> dict[str, Any]:
    """Apply strategic merge ``patch`` to ``original`` and return the result.

    ``schema_node`` is the object's top-level definition (``schema.for_gvk(...)``), or ``None`` for
    plain JSON merge semantics. Neither input is modified, unless ``copy_original=False``: a
    caller that hands over a private copy of the original (the registry decodes one from the
    store for every patch) lets the merge work in it instead of copying it once more. Raises
    :class:`StatusError` 400/422 for malformed patches, with apimachinery's messages.
    """
    if not isinstance(patch, dict):
        raise bad_request("invalid JSON document")
    if not isinstance(original, dict):
        base: dict[str, Any] = {}
    else:
        base = _copy(original) if copy_original else original
    return _merge_map(base, _copy(patch), schema_node)


def _merge_map(original: dict[str, Any], patch: dict[str, Any], node: Node | None) -> dict[str, Any]:
    """Merge ``patch`` into ``original`` (both private copies, mutated) and return the result."""
    if DIRECTIVE in patch:
        directive = patch.pop(DIRECTIVE)
        if directive == _REPLACE:
            return _merge_map({}, patch, node)
        if directive == _DELETE:
            return {}
        if directive != _MERGE:
            raise _bad_patch_type(directive, {DIRECTIVE: directive, **patch})

    _apply_retain_keys(original, patch)
    _apply_set_element_order(original, patch, node)

    for key, value in patch.items():
        if key.startswith(DELETE_FROM_PRIMITIVE_LIST):
            _delete_from_primitive_list(original, key, value)
            continue
        if value is None:
            original.pop(key, None)
            continue
        prop = _field(node, key)
        current = original.get(key)
        if isinstance(current, dict) and isinstance(value, dict):
            strategy, _ = _strategy(prop)
            merged = _merge_map({}, value, prop) if strategy == _REPLACE else _merge_map(current, value, prop)
            original[key] = merged
        elif isinstance(current, list) and isinstance(value, list):
            original[key] = _merge_list(current, value, prop)
        else:
            fresh = _fresh(value, prop)
            if fresh is _DROP:
                original.pop(key, None)
            else:
                original[key] = fresh
    return original


def _fresh(value: Any, prop: Node | None) -> Any:
    """A patch value with nothing stored to merge with, cleaned of directives and ``null`` s.

    Maps are merged into an empty map; lists are taken as they are (no merge-key checks, as
    apimachinery), minus directive items.
    """
    if isinstance(value, dict):
        if value.get(DIRECTIVE) == _DELETE:
            return _DROP
        if _plain(value):
            return value
        return _merge_map({}, value, prop)
    if isinstance(value, list):
        if _plain_list(value):
            return value
        return _replace_list(value, _items(prop))
    return value


def _plain(value: dict[str, Any]) -> bool:
    """Whether merging ``value`` into an empty map would only rebuild it: no ``$`` key (a
    directive) and no ``null`` (a deletion) at any depth. Then :func:`_fresh` takes ``value``
    itself - a patch value is always the merge's private copy - instead of rebuilding it key by
    key (the usual new subtree: a first ``status``, a new condition, a new label)."""
    for k, v in value.items():
        if v is None or type(k) is not str or k.startswith("$"):
            return False
        if type(v) is dict:
            if not _plain(v):
                return False
        elif type(v) is list and not _plain_list(v):
            return False
    return True


def _plain_list(value: list[Any]) -> bool:
    """:func:`_plain` for a list taken whole (:func:`_replace_list`): its map items are plain
    (a ``null`` item stays, as a scalar does)."""
    for v in value:
        if type(v) is dict:
            if not _plain(v):
                return False
        elif type(v) is list and not _plain_list(v):
            return False
    return True


def _apply_retain_keys(original: dict[str, Any], patch: dict[str, Any]) -> None:
    """``$retainKeys``: drop stored keys not listed; every key the patch sets must be listed."""
    if RETAIN_KEYS not in patch:
        return
    retain = patch.pop(RETAIN_KEYS)
    if not isinstance(retain, list):
        raise bad_request(ERR_RETAIN_KEYS_FORMAT)
    keep = {k for k in retain if isinstance(k, str)}
    for key, value in patch.items():
        if value is None or key.startswith((DELETE_FROM_PRIMITIVE_LIST, SET_ELEMENT_ORDER)):
            continue
        if key not in keep:
            raise _invalid(ERR_RETAIN_KEYS_MISMATCH)
    for key in [k for k in original if k not in keep]:
        del original[key]


def _directive_field(key: str, prefix: str, error: str) -> str:
    head, sep, name = key.partition("/")
    if head != prefix or not sep or not name:
        raise bad_request(error)
    return name


def _delete_from_primitive_list(original: dict[str, Any], key: str, value: Any) -> None:
    name = _directive_field(key, DELETE_FROM_PRIMITIVE_LIST, ERR_PRIMITIVE_LIST)
    if not isinstance(value, list):
        raise bad_request(ERR_PRIMITIVE_LIST)
    current = original.get(name)
    if not isinstance(current, list):
        return
    doomed = {_identity(v) for v in value if not isinstance(v, dict | list)}
    original[name] = [v for v in current if isinstance(v, dict | list) or _identity(v) not in doomed]


def _apply_set_element_order(original: dict[str, Any], patch: dict[str, Any], node: Node | None) -> None:
    """``$setElementOrder/<field>``: merge ``<field>`` now and put its items in the given order."""
    for key in [k for k in patch if k.startswith(SET_ELEMENT_ORDER)]:
        order = patch.pop(key)
        name = _directive_field(key, SET_ELEMENT_ORDER, ERR_SET_ELEMENT_ORDER)
        if not isinstance(order, list):
            raise bad_request(ERR_SET_ELEMENT_ORDER)
        prop = _field(node, name)
        _, merge_key = _strategy(prop)
        stored = original.get(name)
        patched = patch.pop(name, None)
        if stored is not None and not isinstance(stored, list):
            stored = None
        if patched is not None and not isinstance(patched, list):
            raise bad_request(ERR_SET_ELEMENT_ORDER)
        key_of = _key_function([*order, *(patched or ()), *(stored or ())], merge_key)
        if patched and order:
            _check_patch_follows_order(patched, order, key_of)
        if stored is not None and patched is not None:
            merged = _merge_list(stored, patched, prop)
        elif stored is not None:
            merged = stored
        elif patched is not None:
            merged = _fresh(patched, prop)
        else:
            continue
        original[name] = _enforce_order(merged, order, stored or [], key_of)


def _key_function(sample: list[Any], merge_key: str) -> Callable[[Any], Hashable | None]:
    """Identity of list items: the merge-key value for maps, the value itself for scalars."""
    if merge_key and any(isinstance(v, dict) for v in sample):

        def by_merge_key(item: Any) -> Hashable | None:
            if not isinstance(item, dict):
                raise _invalid(f"expected a map, but received a {type(item).__name__}")
            if merge_key not in item:
                raise _no_merge_key(item, merge_key)
            return _identity(item[merge_key])

        return by_merge_key

    def by_value(item: Any) -> Hashable | None:
        return None if isinstance(item, dict | list) else _identity(item)

    return by_value


def _check_patch_follows_order(
    patched: list[Any], order: list[Any], key_of: Callable[[Any], Hashable | None]
) -> None:
    """The patch list must be a subsequence of ``$setElementOrder`` (directive items aside)."""
    items = [v for v in patched if not (isinstance(v, dict) and DIRECTIVE in v)]
    order_keys = [key_of(v) for v in order]
    pos = 0
    for item in items:
        k = key_of(item)
        while pos < len(order_keys) and order_keys[pos] != k:
            pos += 1
        if pos == len(order_keys):
            raise _invalid(
                f"The order in patch list:\n{go_format(patched)}\n doesn't match "
                f"{SET_ELEMENT_ORDER} list:\n{go_format(order)}\n"
            )
        pos += 1


# --- lists ----------------------------------------------------------------------------------


def _merge_list(original: list[Any], patch: list[Any], prop: Node | None) -> list[Any]:
    strategy, merge_key = _strategy(prop)
    item_node = _items(prop)
    if strategy != _MERGE:
        return _replace_list(patch, item_node)
    if not original and not patch:
        return []
    kinds = {_element_kind(v) for v in (*original, *patch)}
    if "list" in kinds:
        raise _invalid(ERR_LIST_OF_LISTS)
    if len(kinds) > 1:
        raise _invalid(f"list element types are not identical: {go_format([original, patch])}")
    if kinds == {"map"}:
        return _merge_map_list(original, patch, merge_key, item_node)
    return _merge_scalar_list(original, patch)


def _element_kind(value: Any) -> str:
    if isinstance(value, dict):
        return "map"
    if isinstance(value, list):
        return "list"
    return "scalar"


def _replace_list(patch: list[Any], item_node: Node | None) -> list[Any]:
    """A list that is not merged takes the patch's items, cleaned of directives and nulls."""
    out = []
    for item in patch:
        if isinstance(item, dict):
            if DIRECTIVE in item:
                continue
            out.append(_merge_map({}, item, item_node))
        elif isinstance(item, list):
            out.append(_replace_list(item, None))
        else:
            out.append(item)
    return out


def _merge_scalar_list(original: list[Any], patch: list[Any]) -> list[Any]:
    merged: list[Any] = []
    seen: set[Hashable] = set()
    for value in (*original, *patch):
        k = _identity(value)
        if k not in seen:
            seen.add(k)
            merged.append(value)
    return _enforce_order(merged, patch, original, _identity)


def _merge_map_list(
    original: list[Any], patch: list[Any], merge_key: str, item_node: Node | None
) -> list[Any]:
    if not merge_key:
        raise _invalid("cannot merge lists without merge key for type map")

    def key_of(item: dict[str, Any]) -> Hashable:
        if merge_key not in item:
            raise _no_merge_key(item, merge_key)
        return _identity(item[merge_key])

    plain: list[dict[str, Any]] = []
    replace = False
    for item in patch:
        if DIRECTIVE not in item:
            plain.append(item)
            continue
        directive = item[DIRECTIVE]
        if directive == _DELETE:
            doomed = key_of(item)
            original = [o for o in original if not (merge_key in o and _identity(o[merge_key]) == doomed)]
        elif directive == _REPLACE:
            replace = True
        elif directive == _MERGE:
            rest = {k: v for k, v in item.items() if k != DIRECTIVE}
            if rest:
                plain.append(rest)
        else:
            raise _bad_patch_type(directive, item)
    if replace:
        return [_merge_map({}, item, item_node) for item in plain]
    if len(plain) == 1:
        single = _merge_one(original, plain[0], merge_key, item_node)
        if single is not None:
            return single

    merged = list(original)
    for item in plain:
        k = key_of(item)
        for i, stored in enumerate(merged):
            if merge_key in stored and _identity(stored[merge_key]) == k:
                merged[i] = _merge_map(stored, item, item_node)
                break
        else:
            merged.append(_merge_map({}, item, item_node))

    def lenient_key(item: dict[str, Any]) -> Hashable | None:
        return _identity(item[merge_key]) if merge_key in item else None

    return _enforce_order(merged, plain, original, lenient_key)


def _merge_one(
    original: list[Any], item: dict[str, Any], merge_key: str, item_node: Node | None
) -> list[Any] | None:
    """The merge of a single plain patch item (one condition by ``type``, the scheduler's and
    the kubelet's status patches), or None when the general merge must decide.

    With every stored item keyed and no key twice, :func:`_enforce_order` keeps the stored order
    around the one ordered item: a matched item stays in place, a new one goes first. This is
    that result without building the order tables; it declines the cases where the ordering
    depends on more (keyless or repeated stored items, a patch item whose key is missing or
    ``null`` — the merge would drop its key).
    """
    value = item.get(merge_key)
    if value is None:
        return None
    want = _identity(value)
    at = -1
    seen: set[Hashable] = set()
    for i, stored in enumerate(original):
        if not isinstance(stored, dict) or merge_key not in stored:
            return None
        k = _identity(stored[merge_key])
        if k in seen:
            return None
        seen.add(k)
        if k == want:
            at = i
    if at < 0:
        return [_merge_map({}, item, item_node), *original]
    merged = list(original)
    merged[at] = _merge_map(original[at], item, item_node)
    return merged


def _enforce_order(
    merged: list[Any], order: list[Any], stored: list[Any], key_of: Callable[[Any], Hashable | None]
) -> list[Any]:
    """apimachinery's ordering: items named by ``order`` follow it, the rest follow ``stored``.

    The two runs are interleaved: a stored-only item goes first only when the stored list placed
    it before the next ordered item; items the stored list does not know come first.
    """
    order_pos: dict[Hashable, int] = {}
    for i, v in enumerate(order):
        k = key_of(v)
        if k is not None:
            order_pos.setdefault(k, i)
    stored_pos: dict[Hashable, int] = {}
    for i, v in enumerate(stored):
        k = key_of(v)
        if k is not None:
            stored_pos.setdefault(k, i)

    ordered = [v for v in merged if key_of(v) in order_pos]
    rest = [v for v in merged if key_of(v) not in order_pos]
    ordered.sort(key=lambda v: order_pos[key_of(v)])
    rest.sort(key=lambda v: stored_pos.get(key_of(v), len(stored)))

    out: list[Any] = []
    i = j = 0
    while i < len(rest) or j < len(ordered):
        if j >= len(ordered):
            out.append(rest[i])
            i += 1
        elif i >= len(rest):
            out.append(ordered[j])
            j += 1
        else:
            left, right = stored_pos.get(key_of(rest[i])), stored_pos.get(key_of(ordered[j]))
            if left is not None and right is not None and left < right:
                out.append(rest[i])
                i += 1
            else:
                out.append(ordered[j])
                j += 1
    return out

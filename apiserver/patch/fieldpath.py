"""Field sets: which fields of an object a manager owns, as structured-merge-diff models them.

Server-side apply records ownership in ``metadata.managedFields[].fieldsV1``, a tree whose keys
are *path elements*:

* ``f:<name>``  a field of a struct or a key of a granular map (``f:spec``, ``f:app``);
* ``k:<json>``  an item of a list-map, named by its ``x-kubernetes-list-map-keys`` values
  (``k:{"name":"nginx"}``; key fields sorted by name, compact JSON);
* ``v:<json>``  an item of a set list, named by its value (``v:"example.com/finalizer"``);
* ``i:<n>``     an item named by its index. structured-merge-diff only uses it inside atomic
  lists, which are never walked, so gangplane parses and prints it but never produces it;
* ``.``         "this node itself is in the set", written when a node is owned *and* has
  owned children (a list-map item owns itself and its fields).

A :class:`FieldSet` is a set of paths (tuples of :class:`PathElement`). Membership is exact:
owning ``.spec.replicas`` does not mean owning ``.spec``. :func:`fields_of` computes the set an
object *sets* the way structured-merge-diff's ``ToFieldSet`` does: scalars, atomic lists/maps,
empty or null values, list items, and the entries of granular maps (labels, annotations, data)
are members; struct fields with content are only reached through their children.

The schema comes from :mod:`apiserver.openapi.schema`. Without a schema (unknown fields,
``additionalProperties: true``) maps are treated as granular with every entry a member and lists
as atomic, structured-merge-diff's "deduced" type.
"""

from __future__ import annotations

import json
import operator
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, NamedTuple

import orjson

from apiserver.openapi import schema as openapi

Node = dict[str, Any]

FIELD = "f"
KEY = "k"
VALUE = "v"
INDEX = "i"

_KIND_RANK = {FIELD: 0, KEY: 1, VALUE: 2, INDEX: 3}


class FieldPathError(ValueError):
    """An object or a ``fieldsV1`` document that cannot be turned into a field set."""


def go_json(value: Any, *, sort_keys: bool = False) -> str:
    """Compact JSON as Go's ``encoding/json`` writes it (HTML-escaped ``<``, ``>``, ``&``).

    fieldsV1 keys and the last-applied annotation are compared byte for byte by clients, so
    they must come out exactly as kube-apiserver would write them.
    """
    text = _plain_strings_json(value) if not sort_keys else None
    if text is None:
        text = json.dumps(
            value, ensure_ascii=False, separators=(",", ":"), sort_keys=sort_keys, allow_nan=False
        )
    return (
        text.replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def _plain_strings_json(value: Any) -> str | None:
    """``json.dumps(value, ensure_ascii=False, separators=(",", ":"))`` of a map of strings to
    strings (a list-map key such as ``{"uid": ...}``), written by orjson: the same text for
    every such map, at a tenth of the cost. ``None`` for anything else (and for lone
    surrogates, which orjson refuses)."""
    if type(value) is not dict:
        return None
    for k, v in value.items():
        if type(k) is not str or type(v) is not str:
            return None
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return None


def value_sort_key(value: Any) -> tuple[Any, ...]:
    """Total order over JSON values, as structured-merge-diff's ``value.Compare``.

    Numbers < strings < booleans < lists < maps < null; used to order ``k:``/``v:`` elements so
    that fieldsV1 comes out in the same order as kube-apiserver's.
    """
    if isinstance(value, bool):
        return (2, value)
    if isinstance(value, (int, float)):
        return (0, value)
    if isinstance(value, str):
        return (1, value)
    if isinstance(value, list):
        return (3, tuple(value_sort_key(v) for v in value))
    if isinstance(value, dict):
        return (4, tuple((k, value_sort_key(value[k])) for k in sorted(value)))
    return (5,)


def _value_string(value: Any) -> str:
    """``value.ToString``: strings quoted, numbers and booleans bare (used in conflict paths)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ",".join(_value_string(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}={_value_string(value[k])}" for k in sorted(value)) + "}"
    return str(value)


class PathElement(NamedTuple):
    """One step of a field path. ``raw`` is the serialized form after the ``<kind>:`` prefix.

    Keeping the canonical text as identity makes elements hashable and cheap to compare, and
    equal elements always serialize identically. It is a named tuple, not a dataclass, because
    every set operation on paths hashes and compares their elements: a tuple of two (hash-cached)
    strings does that in C, a dataclass ``__hash__`` ran Python code for each element of each path.
    """

    kind: str
    raw: str

    @property
    def name(self) -> str:
        """The field name of an ``f:`` element."""
        if self.kind != FIELD:
            raise TypeError(f"{self} is not a field element")
        return self.raw

    @property
    def value(self) -> Any:
        """The decoded JSON of a ``k:`` (dict) / ``v:`` element, or the index of an ``i:`` one."""
        if self.kind == INDEX:
            return int(self.raw)
        if self.kind == FIELD:
            return self.raw
        return json.loads(self.raw)

    def serialize(self) -> str:
        return f"{self.kind}:{self.raw}"

    def sort_key(self) -> tuple[Any, ...]:
        """Order of elements in fieldsV1; memoized because ``k:``/``v:`` keys decode JSON."""
        cached = _SORT_KEYS.get(self)
        if cached is not None:
            return cached
        if self.kind == FIELD:
            out: tuple[Any, ...] = (0, self.raw)
        elif self.kind == KEY:
            key = self.value
            out = (1, tuple((k, value_sort_key(key[k])) for k in sorted(key)))
        elif self.kind == VALUE:
            out = (2, value_sort_key(self.value))
        else:
            out = (3, int(self.raw))
        _remember(_SORT_KEYS, self, out)
        return out

    def __str__(self) -> str:
        """``PathElement.String()``: ``.name``, ``[k=v,...]``, ``[=value]``, ``[i]``."""
        if self.kind == FIELD:
            return "." + self.raw
        if self.kind == KEY:
            key = self.value
            return "[" + ",".join(f"{k}={_value_string(key[k])}" for k in sorted(key)) + "]"
        if self.kind == VALUE:
            return f"[={_value_string(self.value)}]"
        return f"[{self.raw}]"

    def __repr__(self) -> str:
        return f"PathElement({self.serialize()!r})"


# -- memo tables -------------------------------------------------------------------------------
#
# Every write of every object walks the same few schemas and the same field names, so the
# expensive derived values (elements, schema facts, decoded/encoded field sets) are memoized.
# The tables are plain dicts bounded by clearing them when full: a refill costs one slow write.

_CACHE_LIMIT = 1 << 14
#: Field sets are large values; gangs share a handful, so far fewer entries suffice.
_SET_CACHE_LIMIT = 1 << 11


def _remember(table: dict[Any, Any], key: Any, value: Any, limit: int = _CACHE_LIMIT) -> None:
    if len(table) >= limit:
        table.clear()
    table[key] = value


_SORT_KEYS: dict[PathElement, tuple[Any, ...]] = {}
_FIELD_ELEMENTS: dict[str, PathElement] = {}
#: ``k:``/``v:`` elements by a type-exact tuple of their scalar key values (see :func:`_scalar_key`).
_KEY_ELEMENTS: dict[tuple[Any, ...], PathElement] = {}
_VALUE_ELEMENTS: dict[tuple[Any, ...], PathElement] = {}


def _scalar_key(v: Any) -> tuple[Any, ...] | None:
    """A memo key that tells apart values ``==`` confuses (``True``/``1``), or None.

    Only types whose ``go_json`` is a function of ``(type, ==)``; floats are left out because
    ``0.0 == -0.0`` but they print differently.
    """
    t = type(v)
    if t is str or t is int or t is bool or v is None:
        return (t, v)
    return None


Path = tuple[PathElement, ...]


def field(name: str) -> PathElement:
    """An ``f:`` element; interned, since walks build one per visited map entry."""
    pe = _FIELD_ELEMENTS.get(name) if type(name) is str else None
    if pe is None:
        pe = PathElement(FIELD, name)
        if type(name) is str:
            _remember(_FIELD_ELEMENTS, name, pe)
    return pe


def key(fields: Mapping[str, Any]) -> PathElement:
    """A list-map item element; key fields are sorted by name, as structured-merge-diff does.

    Memoized on the (type-exact) key values, since every compare keys every list-map item.
    """
    names = sorted(fields)
    memo: tuple[Any, ...] | None = ()
    for k in names:
        sk = _scalar_key(fields[k])
        if sk is None or type(k) is not str:
            memo = None
            break
        memo += (k, *sk)
    if memo is not None:
        pe = _KEY_ELEMENTS.get(memo)
        if pe is not None:
            return pe
    pe = PathElement(KEY, go_json({k: fields[k] for k in names}))
    if memo is not None:
        _remember(_KEY_ELEMENTS, memo, pe)
    return pe


def value(v: Any) -> PathElement:
    """A set-list item element, memoized like :func:`key`."""
    memo = _scalar_key(v)
    if memo is not None:
        pe = _VALUE_ELEMENTS.get(memo)
        if pe is not None:
            return pe
    pe = PathElement(VALUE, go_json(v))
    if memo is not None:
        _remember(_VALUE_ELEMENTS, memo, pe)
    return pe


def index(i: int) -> PathElement:
    return PathElement(INDEX, str(int(i)))


def make_path(*parts: str | int | PathElement) -> Path:
    """``make_path("spec", "replicas")``; ints become ``i:`` elements, elements pass through."""
    out: list[PathElement] = []
    for p in parts:
        if isinstance(p, PathElement):
            out.append(p)
        elif isinstance(p, bool):
            raise TypeError("booleans are not path elements")
        elif isinstance(p, int):
            out.append(index(p))
        else:
            out.append(field(p))
    return tuple(out)


def path_string(path: Path) -> str:
    """``fieldpath.Path.String()``: ``.spec.template.spec.containers[name="c"].image``."""
    return "".join(str(pe) for pe in path)


def plain_string_key(name: str, value: str) -> str:
    """The ``k:`` text of the list-map item keyed by ``name`` = ``value``, two strings the
    caller knows Go's JSON writes as they are (no character of either escaped).

    Its element is not made here: most such texts name an owner's uid (a new one with every
    set), and an entry holding them is decoded only by an update the templates do not answer
    (session 37: the element and its sort key, remembered for that decoding, were three tracked
    objects per set kept in two tables); a decoding makes the element from the text, as it
    makes every other one (:func:`parse_path_element`)."""
    return f'k:{{"{name}":"{value}"}}'


def parse_path_element(text: str) -> PathElement:
    """Parse one fieldsV1 key (``f:x``, ``k:{...}``, ``v:...``, ``i:n``)."""
    prefix, sep, rest = text.partition(":")
    if not sep:
        raise FieldPathError(f"invalid path element {text!r}: missing prefix")
    if prefix == FIELD:
        return field(rest)
    if prefix == INDEX:
        try:
            return index(int(rest))
        except ValueError:
            raise FieldPathError(f"invalid index in path element {text!r}") from None
    try:
        decoded = json.loads(rest)
    except ValueError:
        raise FieldPathError(f"invalid JSON in path element {text!r}") from None
    if prefix == KEY:
        if not isinstance(decoded, dict):
            raise FieldPathError(f"invalid key in path element {text!r}: not an object")
        return key(decoded)
    if prefix == VALUE:
        return value(decoded)
    raise FieldPathError(f"unknown path element prefix in {text!r}")


class _TreeNode:
    """A node of the trie form of a set: is the path to here a member, and its children."""

    __slots__ = ("member", "children")

    def __init__(self) -> None:
        self.member = False
        self.children: dict[PathElement, _TreeNode] = {}


class FieldSet:
    """An immutable set of field paths with set algebra and the ``fieldsV1`` encoding.

    Immutability is what makes the memoization safe: a set caches its canonical ``fieldsV1``
    (as bytes, so every caller still gets a fresh dict), set operations that change nothing
    return ``self`` (so a manager whose set survived a write keeps its cached encoding), and
    decoded ``fieldsV1`` documents map to shared instances.
    """

    __slots__ = ("_paths", "_encoded", "_stored_tree", "_self_decoding")

    def __init__(self, paths: Iterable[Path] = ()) -> None:
        self._paths: frozenset[Path] = frozenset(tuple(p) for p in paths)
        self._encoded: bytes | None = None
        #: a stored object's ``fieldsV1`` (never modified) whose JSON is ``_encoded``
        self._stored_tree: dict[str, Any] | None = None
        #: ``_encoded`` is a text the decoder takes for this set's own encoding (it was
        #: decoded in the encoder's form, or emitted and found to decode to this set)
        self._self_decoding = False

    @classmethod
    def _wrap(cls, paths: frozenset[Path]) -> FieldSet:
        """A set over ``paths`` as they are (tuples of elements already), without copying."""
        fs = object.__new__(cls)
        fs._paths = paths
        fs._encoded = None
        fs._stored_tree = None
        fs._self_decoding = False
        return fs

    # -- construction ---------------------------------------------------------------------

    @classmethod
    def from_fields_v1(cls, doc: Any, *, stored: bool = False) -> FieldSet:
        """Decode a ``fieldsV1`` object. Raises :class:`FieldPathError` when it is malformed.

        Every write decodes the managedFields of the stored object (and of the request, which
        usually carries a copy of them), so decodings are memoized on the document's exact JSON
        text. The decoding only depends on that text: keys must be strings and values objects,
        and anything orjson will not write as plain JSON (subclasses, non-string keys) raises
        ``TypeError`` and is decoded uncached.

        ``stored``: ``doc`` is part of a stored object, which nobody modifies; a text the table
        does not know is then parsed with its subtrees remembered by identity (see
        :func:`_parse_stored`).
        """
        if doc is None:
            return cls()
        if not isinstance(doc, dict):
            raise FieldPathError("fieldsV1 must be a JSON object")
        try:
            text: bytes | None = orjson.dumps(doc, option=EXACT_JSON)
        except TypeError:
            text = None
        if text is not None:
            cached = _DECODED.get(text)
            if cached is not None:
                if stored and cached._stored_tree is None and cached._encoded == text:
                    cached._stored_tree = doc
                return cached
        out: set[Path] = set()
        joined = _JOINED.get(text) if text is not None else None
        if joined is not None:
            canonical = _parse_joined(joined, out)
        else:
            canonical = cls._parse_into(doc, (), out, stored)
        fs = cls._wrap(frozenset(out))
        if text is not None:
            # an exact copy: orjson's result holds its whole write buffer (4 KB at least)
            kept = bytes(memoryview(text))
            if canonical:
                # the document is the set's own encoding (the server wrote it): the next write
                # of the object re-encodes this set, e.g. a manager the write leaves alone
                fs._encoded = kept
                fs._self_decoding = True
                if stored:
                    # ... and, stored, it is a tree of that encoding nobody modifies: the
                    # next stored revision may hold it instead of decoding the text again
                    fs._stored_tree = doc
            _remember(_DECODED, kept, fs, _SET_CACHE_LIMIT)
        return fs

    @classmethod
    def _parse_into(cls, doc: dict[str, Any], prefix: Path, out: set[Path], stored: bool = False) -> bool:
        """Add the paths of ``doc`` (at ``prefix``) to ``out``; returns whether ``doc`` is, key
        for key and in the same order, what :meth:`to_fields_v1` writes for them (see
        :func:`_emit`): ``.`` only first, empty, below the root and beside other children; every
        key the serialization of its element; keys in strictly increasing fieldsV1 order.

        ``stored``: ``doc`` is never modified, so the subtrees near the root are parsed through
        :func:`_parse_stored`."""
        canonical = True
        last: PathElement | None = None
        for k, child in doc.items():
            if not isinstance(child, dict):
                raise FieldPathError(f"fieldsV1 value for {k!r} must be an object")
            if k == ".":
                if prefix:
                    out.add(prefix)
                if last is not None or child or not prefix:
                    canonical = False
                continue
            pe = parse_path_element(k)
            if canonical and not _canonical_next(last, pe, k):
                canonical = False
            last = pe
            p = prefix + (pe,)
            if child:
                if stored and len(p) <= _PARSE_MEMO_DEPTH:
                    ok = _parse_stored(child, p, out)
                else:
                    ok = cls._parse_into(child, p, out, stored)
                if not ok:
                    canonical = False
            else:
                out.add(p)
        if last is None and "." in doc:
            canonical = False  # a member without children is written as ``{}``
        return canonical

    # -- set protocol ---------------------------------------------------------------------

    @property
    def paths(self) -> frozenset[Path]:
        return self._paths

    def __contains__(self, path: object) -> bool:
        return path in self._paths

    def __iter__(self) -> Iterator[Path]:
        """Paths in ``Set.Iterate`` order, which conflict messages list: at every level the
        members first, then the children's subtrees, each in path-element order."""
        return _iterate(self.tree(), ())

    def __len__(self) -> int:
        return len(self._paths)

    def __bool__(self) -> bool:
        return bool(self._paths)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FieldSet) and self._paths == other._paths

    def __hash__(self) -> int:
        return hash(self._paths)

    def __repr__(self) -> str:
        return "FieldSet(" + ", ".join(path_string(p) for p in self) + ")"

    def union(self, other: FieldSet) -> FieldSet:
        if not other._paths:
            return self
        if not self._paths:
            return other
        paths = self._paths | other._paths
        if len(paths) == len(self._paths):
            return self
        if len(paths) == len(other._paths):
            # ``other`` already holds everything (a manager re-writing fields it owns: a
            # Lease renewal, a status rewrite): keep that very set, whose encoding and stored
            # tree are known, instead of an equal new one that must be encoded again
            return other
        return FieldSet._wrap(paths)

    def difference(self, other: FieldSet) -> FieldSet:
        """Exact difference: removing ``.spec`` keeps ``.spec.replicas``."""
        if not other._paths or not self._paths:
            return self
        paths = self._paths - other._paths
        return self if len(paths) == len(self._paths) else FieldSet._wrap(paths)

    def intersection(self, other: FieldSet) -> FieldSet:
        paths = self._paths & other._paths
        return self if len(paths) == len(self._paths) else FieldSet._wrap(paths)

    __or__ = union
    __sub__ = difference
    __and__ = intersection

    def recursive_difference(self, other: FieldSet) -> FieldSet:
        """Remove every path equal to *or under* a path of ``other`` (how reset fields apply)."""
        if not other or not self._paths:
            return self
        prefixes = other._paths
        lengths = sorted({len(q) for q in prefixes if q})
        if len(lengths) == 1:
            # the usual case (reset fields such as {.status}): one slice per path. A path
            # shorter than n slices to itself, which cannot be one of the n-long prefixes.
            n = lengths[0]
            kept = frozenset(p for p in self._paths if p[:n] not in prefixes)
        else:
            kept = frozenset(
                p for p in self._paths if not any(p[:n] in prefixes for n in lengths if n <= len(p))
            )
        return self if len(kept) == len(self._paths) else FieldSet._wrap(kept)

    def with_prefix(self, prefix: Path) -> FieldSet:
        """The paths strictly under ``prefix``, with the prefix cut off."""
        n = len(prefix)
        return FieldSet._wrap(frozenset(p[n:] for p in self._paths if len(p) > n and p[:n] == prefix))

    # -- trie form and fieldsV1 -----------------------------------------------------------

    def tree(self) -> _TreeNode:
        root = _TreeNode()
        for p in self._paths:
            node = root
            for pe in p:
                children = node.children
                child = children.get(pe)
                if child is None:  # not setdefault: that builds a node for every visited step
                    child = children[pe] = _TreeNode()
                node = child
            node.member = True
        return root

    def to_fields_v1(self) -> dict[str, Any]:
        """The ``fieldsV1`` object, keys in structured-merge-diff's serialization order.

        Encoded once per distinct set (per instance, and across instances through a table keyed
        by the paths: every pod of a gang yields the same sets) and kept as JSON bytes, so each
        call returns a fresh dict the caller may store or modify.
        """
        encoded = self.fields_v1_json()
        if encoded is None:
            return _emit(self.tree(), include_self=False)
        result: dict[str, Any] = orjson.loads(encoded)
        return result

    def fresh_fields_v1(self) -> dict[str, Any]:
        """:meth:`to_fields_v1` built directly, without the memo tables: for a set that will not
        recur (one naming an owner's uid), which would only crowd the tables."""
        return _emit(self.tree(), include_self=False)

    def fields_v1_json(self) -> bytes | None:
        """:meth:`to_fields_v1` as its JSON bytes (memoized as described there); ``None`` for
        the rare set orjson cannot write (a lone surrogate in a field name)."""
        return self.fields_v1_encoding()[0]

    def stored_tree(self) -> dict[str, Any] | None:
        """A stored object's ``fieldsV1`` this set was decoded from, when that document is,
        key for key and in order, the set's own encoding (:meth:`fields_v1_json`); it is
        never modified (stored objects are not), so a stored write may hold it as is."""
        return self._stored_tree

    def fields_v1_encoding(self) -> tuple[bytes | None, dict[str, Any] | None]:
        """:meth:`fields_v1_json`, with the tree this very call serialized to get it.

        The tree is :func:`_emit_by_subtrees`'s (its subtrees two levels down are shared and
        never modified: for reading only), and ``None`` when the encoding was already known.
        A writer that needs the set as a shared tree builds it from these parts instead of
        decoding the bytes again (see :mod:`apiserver.patch.sharedtrees`).
        """
        encoded = self._encoded
        emitted: dict[str, Any] | None = None
        if encoded is None:
            known = _ENCODED.get(self._paths)
            if known is not None:
                encoded, self._self_decoding = known
            else:
                emitted, round_trips = _emit_and_check(self._paths)
                try:
                    encoded = orjson.dumps(emitted)
                except TypeError:  # e.g. a lone surrogate in a field name: just don't cache
                    return None, None
                # kept by the tables and the set: an exact copy, as orjson's result holds its
                # whole write buffer (4 KB at least)
                encoded = bytes(memoryview(encoded))
                _remember(_ENCODED, self._paths, (encoded, round_trips), _SET_CACHE_LIMIT)
                if round_trips:  # _decodes_to_itself(self._paths), found while emitting
                    # the next write of the object decodes this very text: answer it with this
                    # set (and its encoding) instead of parsing it again
                    _remember(_DECODED, encoded, self, _SET_CACHE_LIMIT)
                    self._self_decoding = True
            self._encoded = encoded
        return encoded, emitted

    def known_encoding(self) -> bytes | None:
        """:meth:`fields_v1_json` where it costs no emission (this set's, or an equal set's in
        the table), else ``None``."""
        if self._encoded is None:
            known = _ENCODED.get(self._paths)
            if known is not None:
                self._encoded, self._self_decoding = known
        return self._encoded

    def adopt_encoding(self, encoded: bytes, round_trips: bool) -> None:
        """Take ``encoded`` as this set's encoding, as :meth:`fields_v1_encoding` would have
        emitted it (and ``round_trips`` as what it found); remembered in the same tables.

        For a writer that made the very bytes another way (:mod:`apiserver.patch.updateentry`
        instantiates them from a template verified against this encoder)."""
        if self._encoded is not None:
            return
        _remember(_ENCODED, self._paths, (encoded, round_trips), _SET_CACHE_LIMIT)
        if round_trips:
            _remember(_DECODED, encoded, self, _SET_CACHE_LIMIT)
            self._self_decoding = True
        self._encoded = encoded

    def decodes_to_itself(self) -> bool:
        """Whether this set's known encoding is a text the decoder takes for this very set."""
        return self._self_decoding

    def to_json(self) -> str:
        return go_json(self.to_fields_v1())


#: Options under which two values with equal ``orjson.dumps`` bytes are the same plain JSON:
#: subclasses of builtins, dataclasses and datetimes raise ``TypeError`` instead of being
#: written like the plain values they resemble.
EXACT_JSON = (
    orjson.OPT_PASSTHROUGH_SUBCLASS | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS
)

_DECODED: dict[bytes, FieldSet] = {}
#: Stored creates' ``fieldsV1`` trees joined from parts (:func:`remember_joined`), by their text.
_JOINED: dict[bytes, tuple[FieldSet, tuple[tuple[Path, dict[str, Any]], ...]]] = {}
_JOINED_LIMIT = 4096


def remember_joined(text: bytes, rest: FieldSet, parts: tuple[tuple[Path, dict[str, Any]], ...]) -> bool:
    """Remember how a stored create's ``fieldsV1`` tree whose JSON is ``text`` was made: the
    encoding of ``rest`` with each ``(prefix, subtree)`` of ``parts`` placed at its prefix.

    A created object's entry names its owners (``k:{"uid":…}``), so its text is its own and the
    object's first update, which decodes the stored entry, parsed it whole (the only parse of
    that write the tables could not answer). Its set is ``rest``'s paths and those of the parts,
    which is all that is parsed then. Taken only where ``rest``'s encoding is one the decoder
    takes for its own (so the joined text is the union's encoding, as the create path makes
    it); the parts are never modified (they are shared trees). Returns whether it was
    remembered.
    """
    if not rest._self_decoding or rest._encoded is None:
        return False
    _remember(_JOINED, bytes(memoryview(text)), (rest, parts), _JOINED_LIMIT)
    return True


def _parse_joined(joined: tuple[FieldSet, tuple[tuple[Path, dict[str, Any]], ...]], out: set[Path]) -> bool:
    """:meth:`FieldSet._parse_into` of a remembered joined tree: the rest's paths, and each part
    parsed at its prefix (its own form decides, as in the whole parse; the levels the join
    touched keep the encoder's order, as :func:`apiserver.patch.apply._insert_field` keeps it)."""
    rest, parts = joined
    out.update(rest._paths)
    canonical = True
    for prefix, subtree in parts:
        if not subtree:
            out.add(prefix)  # an empty subtree is a leaf, as in the whole parse
        elif not FieldSet._parse_into(subtree, prefix, out):
            canonical = False
    return canonical


#: encodings by set, each with whether it decodes to its set (see :attr:`FieldSet._self_decoding`)
_ENCODED: dict[frozenset[Path], tuple[bytes, bool]] = {}
#: ``k:``/``v:``/``i:`` elements by whether their serialized form parses back to themselves
_ROUND_TRIP: dict[PathElement, bool] = {}


def _decodes_to_itself(paths: frozenset[Path]) -> bool:
    """Decoding the ``fieldsV1`` encoding of ``paths`` gives ``paths`` back.

    The encoding leaves out the empty path, and an element whose text does not parse back to
    it would come back as another element (one built from a text in no canonical form, such
    as ``k:{"a": 1}`` with a blank, or ``i:01``). ``f:`` elements always do (the name is the
    text after the prefix); the others are checked once each by parsing their text.
    """
    for p in paths:
        if not p:
            return False
        for pe in p:
            if pe[0] != FIELD and not _round_trips(pe):
                return False
    return True


def _round_trips(pe: PathElement) -> bool:
    ok = _ROUND_TRIP.get(pe)
    if ok is None:
        try:
            ok = parse_path_element(pe.serialize()) == pe
        except (FieldPathError, ValueError, TypeError):
            ok = False
        _remember(_ROUND_TRIP, pe, ok)
    return ok


#: Subtrees at most this deep are remembered by :func:`_parse_stored`; deeper ones are part of
#: those subtrees' parses.
_PARSE_MEMO_DEPTH = 2
_PARSE_MEMO_LIMIT = 2048
#: Parses of stored ``fieldsV1`` subtrees by identity: ``id -> (subtree, paths below it
#: relative to it, whether it is in the encoder's form)``. Each entry holds its subtree, so
#: the id cannot be reused while it is there.
_STORED_PARSES: dict[int, tuple[dict[str, Any], tuple[Path, ...], bool]] = {}


def _parse_stored(doc: dict[str, Any], prefix: Path, out: set[Path]) -> bool:
    """:meth:`FieldSet._parse_into` of a subtree of a stored object's ``fieldsV1``.

    Stored objects are never modified, and the informers' sharing makes equal subtrees one
    object (:func:`apiserver.storage.compact.compact`): the ``f:spec`` of every pod of a
    template, which is most of its create entry, is the same dict. Its parse is remembered by
    identity, so an object's first update, which decodes its create entry (unique as a whole:
    it names the owner's uid), parses only the parts that differ.
    """
    hit = _STORED_PARSES.get(id(doc))
    if hit is not None and hit[0] is doc:
        out.update([prefix + r for r in hit[1]])
        return hit[2]
    below: set[Path] = set()
    canonical = FieldSet._parse_into(doc, prefix, below, True)
    n = len(prefix)
    _remember(_STORED_PARSES, id(doc), (doc, tuple(q[n:] for q in below), canonical), _PARSE_MEMO_LIMIT)
    out.update(below)
    return canonical


def _canonical_next(last: PathElement | None, pe: PathElement, text: str) -> bool:
    """``pe``, parsed from ``text``, may follow ``last`` in a canonical fieldsV1 object: its text
    is its serialization and it sorts strictly after ``last`` (:func:`_ordered`'s order; two
    elements of one sort key have no canonical order, the encoder's tie is arbitrary)."""
    if pe.kind != FIELD and pe.serialize() != text:
        return False
    if last is None:
        return True
    if last.kind == FIELD and pe.kind == FIELD:
        return last.raw < pe.raw
    try:
        return last.sort_key() < pe.sort_key()
    except TypeError:
        return False


_RAW = operator.itemgetter(1)
_KIND = operator.itemgetter(0)
_IS_FIELD = FIELD.__eq__


def _ordered(elements: Iterable[PathElement]) -> list[PathElement]:
    """``elements`` in fieldsV1 order. Children that are all ``f:`` fields (nearly every map)
    sort by name in C; :meth:`PathElement.sort_key` orders the rest (``(0, name)`` for a field)."""
    elements = list(elements)
    if len(elements) < 2:
        return elements  # nothing to order (a list-map key element's sort key decodes JSON)
    if all(map(_IS_FIELD, map(_KIND, elements))):  # in C: no generator frame per element
        return sorted(elements, key=_RAW)
    return sorted(elements, key=PathElement.sort_key)


def _iterate(node: _TreeNode, prefix: Path) -> Iterator[Path]:
    ordered = [(pe, node.children[pe]) for pe in _ordered(node.children)]
    for pe, child in ordered:
        if child.member:
            yield prefix + (pe,)
    for pe, child in ordered:
        if child.children:
            yield from _iterate(child, prefix + (pe,))


#: emitted ``fieldsV1`` subtrees two levels down (``f:status`` > ``f:conditions``), by their paths
#: relative to that node (``()``: the node itself is a member); shared and never modified (they
#: are only serialized). With each, whether every element of those relative paths round-trips
#: (the part of :func:`_decodes_to_itself` below the top two levels).
_SUBTREES: dict[frozenset[Path], tuple[dict[str, Any], bool]] = {}


def _emit_by_subtrees(paths: frozenset[Path]) -> dict[str, Any]:
    """The tree of :func:`_emit_and_check`."""
    return _emit_and_check(paths)[0]


def _element_round_trips(pe: PathElement) -> bool:
    return pe[0] == FIELD or _round_trips(pe)


def _emit_and_check(paths: frozenset[Path]) -> tuple[dict[str, Any], bool]:
    """``_emit(tree, include_self=False)`` of ``paths`` with the subtrees two levels down emitted
    once per distinct content; the result shares them, so it is for serializing only.

    A set that is new as a whole is mostly made of parts other sets had: a pod's status entry
    differs from its siblings' only below ``f:podIPs`` and ``f:hostIPs`` (keyed by the IPs), its
    conditions and container statuses are the same for every pod of a template. The paths are
    grouped by their first two elements; the two levels above the groups are emitted here as
    :func:`_emit` emits them (``.`` first for a member with children, then the children in
    :func:`_ordered` order), and each group's subtree is looked up by its relative paths.

    Also returns :func:`_decodes_to_itself` of ``paths``: the elements of the top two levels are
    checked here, those below them once per group (with its subtree), instead of every element
    of every path on every new set (a pod's conditions repeat their ``k:`` element in each of
    their paths).
    """
    top: dict[PathElement, dict[PathElement, list[Path]]] = {}
    members: set[PathElement] = set()  # the first-level nodes that are members
    round_trips = True
    for p in paths:
        if not p:
            round_trips = False  # the encoding cannot hold the empty path
            continue  # the root's own membership is not written (include_self=False)
        groups = top.get(p[0])
        if groups is None:
            groups = top[p[0]] = {}
        if len(p) == 1:
            members.add(p[0])
            continue
        rel = groups.get(p[1])
        if rel is None:
            rel = groups[p[1]] = []
        rel.append(p[2:])
    out: dict[str, Any] = {}
    for first in _ordered(top):
        if round_trips and not _element_round_trips(first):
            round_trips = False
        groups = top[first]
        if not groups:
            out[first.serialize()] = {}
            continue
        level: dict[str, Any] = {".": {}} if first in members else {}
        for second in _ordered(groups):
            rel_set = frozenset(groups[second])
            hit = _SUBTREES.get(rel_set)
            if hit is None:
                node = FieldSet._wrap(rel_set).tree()
                # a member without children is written ``{}``, as :func:`_emit` writes a leaf
                sub = _emit(node, include_self=node.member) if node.children else {}
                below = all(_element_round_trips(pe) for rel in rel_set for pe in rel)
                hit = (sub, below)
                _remember(_SUBTREES, rel_set, hit, _SET_CACHE_LIMIT)
            if round_trips and not (hit[1] and _element_round_trips(second)):
                round_trips = False
            level[second.serialize()] = hit[0]
        out[first.serialize()] = level
    return out, round_trips


def emit_fields_v1(paths: frozenset[Path]) -> tuple[dict[str, Any], bool]:
    """The tree :meth:`FieldSet.fields_v1_encoding` serializes for ``paths`` (its parts two levels
    down are shared: for serializing or copying only), and whether it decodes to ``paths``."""
    return _emit_and_check(paths)


def _emit(node: _TreeNode, include_self: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if include_self and node.children:
        out["."] = {}
    for pe in _ordered(node.children):
        child = node.children[pe]
        out[pe.serialize()] = _emit(child, include_self=child.member) if child.children else {}
    return out


# -- schema access ---------------------------------------------------------------------------

#: Key fields with a ``+default`` upstream that the 1.37 JSON schema data does not carry
#: (``ContainerPort.protocol`` and ``ServicePort.protocol`` default to TCP). Without them an
#: applied ``ports: [{containerPort: 80}]`` could not be keyed, which kube accepts.
_KEY_DEFAULTS: dict[tuple[tuple[str, ...], str], Any] = {
    (("containerPort", "protocol"), "protocol"): "TCP",
    (("port", "protocol"), "protocol"): "TCP",
}


def _ext(node: Node | None, name: str) -> Any:
    """An ``x-kubernetes-*`` extension on a property node or on the definition it refers to."""
    if not node:
        return None
    if name in node:
        return node[name]
    resolved = openapi.resolve(node)
    return resolved.get(name) if resolved else None


_ATOMIC: tuple[str, tuple[str, ...]] = ("atomic", ())
_UNSET: Any = object()


class _SchemaInfo:
    """The facts about one schema node that walks ask for, each computed on first use.

    ``resolve`` follows ``$ref``s through the definitions on every call, and a pod write asks
    for the schema of every field it visits several times over, so the answers are kept per
    node. Facts are computed lazily, by the same expressions as before, so a malformed schema
    fails exactly where it used to.
    """

    __slots__ = ("node", "props", "extra", "resolved", "atomic_map", "semantics", "items", "required")

    def __init__(self, node: Node) -> None:
        self.node = node  # keeps id(node) from being reused while this entry lives
        self.resolved: Any = _UNSET
        self.props: Any = None
        self.extra: Node | None = None
        self.atomic_map: Any = _UNSET
        self.semantics: Any = _UNSET
        self.items: Any = _UNSET
        self.required: Any = _UNSET


_INFOS: dict[int, _SchemaInfo] = {}


def _info(node: Node) -> _SchemaInfo:
    """The memo entry of a (truthy) schema node, keyed by identity: schemas are read-only."""
    info = _INFOS.get(id(node))
    if info is None or info.node is not node:
        info = _SchemaInfo(node)
        _remember(_INFOS, id(node), info)
    return info


def list_semantics(node: Node | None) -> tuple[str, tuple[str, ...]]:
    """``("atomic"|"set"|"map", keys)`` for a list schema, the way kube-openapi derives it.

    ``x-kubernetes-list-type`` wins; otherwise a strategic-merge ``merge`` patch strategy makes
    the list associative (keyed by the patch merge key if there is one); otherwise atomic.
    """
    if not node:
        return _ATOMIC
    info = _info(node)
    if info.semantics is _UNSET:
        info.semantics = _list_semantics(node)
    semantics: tuple[str, tuple[str, ...]] = info.semantics
    return semantics


def _list_semantics(node: Node) -> tuple[str, tuple[str, ...]]:
    list_type = _ext(node, "x-kubernetes-list-type")
    if list_type == "map":
        keys = _ext(node, "x-kubernetes-list-map-keys") or ()
        return ("map", tuple(keys)) if keys else ("set", ())
    if list_type == "set":
        return ("set", ())
    if list_type is None:
        strategy = _ext(node, "x-kubernetes-patch-strategy") or ""
        if "merge" in str(strategy).split(","):
            merge_key = _ext(node, "x-kubernetes-patch-merge-key")
            return ("map", (merge_key,)) if merge_key else ("set", ())
    return _ATOMIC


def map_is_atomic(node: Node | None) -> bool:
    if not node:
        return False
    info = _info(node)
    if info.atomic_map is _UNSET:
        info.atomic_map = _ext(node, "x-kubernetes-map-type") == "atomic"
    atomic: bool = info.atomic_map
    return atomic


def field_schema(node: Node | None, name: str) -> tuple[Node | None, bool]:
    """Schema of map entry ``name`` and whether it is a *declared* struct field.

    Declared fields are owned through their leaves; entries of granular maps
    (``additionalProperties``) and unknown fields are owned as entries.
    """
    if not node:
        return None, False
    info = _info(node)
    if info.resolved is _UNSET:
        resolved = openapi.resolve(node)
        if resolved:
            info.props = resolved.get("properties") or {}
            extra = resolved.get("additionalProperties")
            info.extra = extra if isinstance(extra, dict) else None
        info.resolved = bool(resolved)
    if not info.resolved:
        return None, False
    props = info.props
    if name in props:
        return props[name], True
    return info.extra, False


def item_schema(node: Node | None) -> Node | None:
    if not node:
        return None
    info = _info(node)
    if info.items is _UNSET:
        info.items = openapi.items_of(node)
    items: Node | None = info.items
    return items


def _required_item_fields(list_node: Node) -> frozenset[str]:
    info = _info(list_node)
    if info.required is _UNSET:
        info.required = frozenset((openapi.resolve(item_schema(list_node)) or {}).get("required") or ())
    required: frozenset[str] = info.required
    return required


def child_schema(node: Node | None, pe: PathElement) -> Node | None:
    """Schema one step down ``pe``: a property/map value for ``f:``, the items otherwise."""
    if pe.kind == FIELD:
        return field_schema(node, pe.raw)[0]
    return item_schema(node)


def _key_default(list_node: Node | None, keys: tuple[str, ...], name: str) -> tuple[bool, Any]:
    item = openapi.resolve(item_schema(list_node)) if list_node else None
    prop = ((item or {}).get("properties") or {}).get(name)
    if prop and "default" in prop:
        return True, prop["default"]
    if (keys, name) in _KEY_DEFAULTS:
        return True, _KEY_DEFAULTS[(keys, name)]
    return False, None


def list_item_element(
    item: Any, list_node: Node | None, semantics: tuple[str, tuple[str, ...]]
) -> PathElement:
    """The path element naming ``item`` in an associative list; raises :class:`FieldPathError`.

    A missing key field takes its schema default (or the built-in TCP default for ports); a
    missing key that the item schema does not require is left out of the key instead of failing,
    so optional keys such as ``ResourceClaimStatus.devices[].shareID`` work.
    """
    kind, keys = semantics
    if kind == "map":
        if item is None:
            raise FieldPathError("associative list with keys may not have a null element")
        if not isinstance(item, dict):
            raise FieldPathError("associative list with keys may not have non-map elements")
        required = _required_item_fields(list_node) if list_node else frozenset()
        fields: dict[str, Any] = {}
        for name in keys:
            if name in item:
                fields[name] = item[name]
                continue
            found, default = _key_default(list_node, keys, name)
            if found:
                fields[name] = default
            elif name in required or list_node is None:
                raise FieldPathError(
                    f"associative list with keys has an element that omits key field {json.dumps(name)} "
                    "(and doesn't have default value)"
                )
        return key(fields)
    if isinstance(item, dict):
        raise FieldPathError("associative list without keys has an element that's a map type")
    if isinstance(item, list):
        raise FieldPathError("not supported: associative list with lists as elements")
    if item is None:
        raise FieldPathError("associative list without keys has an element that's an explicit null")
    return value(item)


# -- the set an object sets -------------------------------------------------------------------


def fields_of(obj: Any, schema_node: Node | None, *, strict: bool = False) -> FieldSet:
    """The fields ``obj`` sets (structured-merge-diff's ``ToFieldSet``).

    ``strict`` is for applied configurations: an item that cannot be keyed or a duplicate key
    raises :class:`FieldPathError` with structured-merge-diff's message. Otherwise (live objects,
    which kube reads with ``AllowDuplicates``) such items are skipped, first occurrence wins.
    """
    out: set[Path] = set()
    errors: list[str] = []
    _collect(obj, schema_node, (), out, errors, strict)
    if errors:
        raise FieldPathError(
            errors[0] if len(errors) == 1 else "errors:\n" + "\n".join("  " + e for e in errors)
        )
    return FieldSet._wrap(frozenset(out))


def _collect(
    obj: Any, node: Node | None, path: Path, out: set[Path], errors: list[str], strict: bool
) -> None:
    if isinstance(obj, dict):
        if path and map_is_atomic(node):
            out.add(path)
            return
        for k, v in obj.items():
            child, declared = field_schema(node, k)
            p = path + (field(k),)
            _collect(v, child, p, out, errors, strict)
            if v is None or (isinstance(v, dict) and not v) or not declared:
                out.add(p)
        return
    if isinstance(obj, list):
        semantics = list_semantics(node)
        if semantics[0] == "atomic":
            out.add(path)
            return
        items = item_schema(node)
        seen: set[PathElement] = set()
        for i, item in enumerate(obj):
            try:
                pe = list_item_element(item, node, semantics)
            except FieldPathError as e:
                if strict:
                    errors.append(f"{path_string(path)}: element {i}: {e}")
                continue
            if pe in seen:
                if strict:
                    errors.append(f"{path_string(path)}: duplicate entries for key {pe}")
                continue
            seen.add(pe)
            p = path + (pe,)
            _collect(item, items, p, out, errors, strict)
            out.add(p)
        return
    if path:
        out.add(path)


def ensure_named_fields_are_members(fs: FieldSet, schema_node: Node | None) -> FieldSet:
    """Add every declared struct field that has owned children as a member of the set.

    structured-merge-diff does this before pruning so that a struct the applier no longer sets
    (``spec.strategy.rollingUpdate``) is removed as a whole rather than left behind empty.
    Entries of granular maps and list items are not promoted.
    """
    extra: set[Path] = set()
    schema_cache: dict[Path, Node | None] = {(): schema_node}

    def schema_at(p: Path) -> Node | None:
        if p not in schema_cache:
            schema_cache[p] = child_schema(schema_at(p[:-1]), p[-1])
        return schema_cache[p]

    for p in fs.paths:
        for i in range(1, len(p)):
            prefix = p[:i]
            if prefix in extra:
                continue
            pe = prefix[-1]
            if pe.kind == FIELD and field_schema(schema_at(prefix[:-1]), pe.raw)[1]:
                extra.add(prefix)
    return FieldSet(fs.paths | extra) if extra else fs

"""A ``/status`` write's new ``managedFields``, from a template per *transition* (issue #22).

The node agent's pod status write (one per pod of ``gang-1x1000-running``) spends about half
of its server CPU on its managed fields: decoding the stored entries, comparing the old and the
new object (``_compare_excluding``), taking the ownership of what changed and encoding the
entries (~45-100 µs of a ~200 µs write, ``bench/micro/update_path.py``). Yet the pods of a
template make the same *transition*: the stored pod and the new status differ from the previous
pod's only in the strings they hold (IPs, times, names), and the answer differs only where those
strings name list items (``k:{"ip":"10.0.3.7"}``, ``k:{"type":"Ready"}``).

A stored status write is recognised by a key that takes the strings out but keeps all the
general path can look at:

* the stored entries' exact JSON text, the manager, the API version and the time of the write;
* everything but ``status`` must be equal in the old and the new object, as JSON (the write
  touched nothing else: ``apiVersion``, ``kind``, ``metadata`` without ``managedFields``), and
  ``spec`` must be the stored object's very ``spec`` (a status write's reset field);
* the two statuses, serialized exactly (``EXACT_JSON``), as their *skeleton* — the text with
  every string *value* taken out: field names, structure, numbers, booleans and nulls stay —
  and the *equality pattern* of the values taken out (each replaced by the number of its first
  occurrence: two values are equal in one write exactly when they are in the other).

The general path is parametric in those strings: it compares them only for equality, orders
them only as Python orders ``str`` (``value_sort_key``), and puts them into the answer only
through the ``k:``/``v:`` elements of the field sets. So two writes with one key have the same
answer up to renaming the strings, provided the strings the answer names are in the same order.
A key is learnt from its second write (the first only marks it), after the general path, and
kept as a template when:

* no manager, the writer included, owns a ``status`` field (so nobody loses a field to the
  write, whichever strings it holds, and the other entries are the stored ones: constant per
  key; the writer's entry is then exactly what the write touched);
* the writer's field set, with each string of its ``k:``/``v:`` elements that differs between
  the key's first two writes replaced by a placeholder numbered in the strings' order (as
  :mod:`.updateentry` numbers IPs; the strings the two share, such as condition types, stay as
  they are), is emitted once, and that emission with the write's own strings put back equals
  the general path's encoding byte for byte, as does the tree built from it.

A later write of the key whose strings the template holds are the same, and whose named strings
are in the template's order, gets the other entries as the template holds them and the writer's
entry from the template, without decoding, comparing or encoding anything. The rest goes to the general path: a status whose JSON escapes
a character (a quote, a backslash, a control character) or holds non-ASCII text (the bytes
substitution would need escaping), a ``~`` (the placeholders' mark), a ``null`` in the new
status that is not one (``NaN`` and ``±Inf`` are written as ``null``: checked by decoding the
text back; the stored object holds neither), values ``orjson`` writes like others (tuples), a
``spec`` that is not the stored one. A write pays for its key only where its stored entries'
text was seen by an earlier status write (a StatefulSet's or a Node's entries name the object,
or change with every write; the pods of a template share theirs).
``test_status_entry_template.py`` compares both paths on random writes.

An owned object's stored entries name its owners' uids (each PodGroup its StatefulSet's and
Workload's), so no two texts were equal and the scheduler's condition write of every gang took
the general path. Such texts are keyed without the uids (:mod:`.owneruids`, which says why that
is exact), and their templates answer with the write's own stored entries around the writer's,
kept only where the learning write's general answer held them byte for byte. A stored object
without a status (a PodGroup as its controller made it) has the empty text as its old status
(no JSON text is empty). ``test_owned_status_entry.py`` compares both paths on random PodGroups.

The tables belong to the :class:`apiserver.patch.tracker.FieldTracker` (one per API server).
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import compress, pairwise
from operator import itemgetter, not_
from typing import Any

import orjson

from apiserver.api.types import Obj
from apiserver.patch.apply import decode_managed_fields
from apiserver.patch.bounded import keep
from apiserver.patch.fieldpath import (
    EXACT_JSON,
    FIELD,
    KEY,
    VALUE,
    FieldSet,
    Path,
    PathElement,
    emit_fields_v1,
)
from apiserver.patch.fieldpath import key as key_element
from apiserver.patch.fieldpath import value as value_element
from apiserver.patch.owneruids import without_owner_uids
from apiserver.patch.updateentry import Template, placeholder
from apiserver.storage.compact import canonical_json_built

#: remembered transitions per tracker (cleared when full: a miss costs one general write)
_TRANSITIONS = 256
#: stored entries lists whose key text is kept (the sets of a few seconds' creates), and old
#: status texts whose split is kept
_TEXTS = 64
_SPLITS = 64
#: strings an answer may name (placeholders of :class:`.updateentry.Template`)
_MAX_NAMED = 16
_MISSING: Any = object()
#: the first byte of a text between strings (a ``:`` after a key)
_FIRST = itemgetter(slice(0, 1))
_COLON = b":"
#: ``bytes.translate`` tables: a text's first byte to 1 where it makes the string before it a
#: key (``:``) or a value (anything else), 0 where not
_KEY_MASK = bytes(int(i == _COLON[0]) for i in range(256))
_VALUE_MASK = bytes(int(i != _COLON[0]) for i in range(256))

#: the table's key: stored entries' text, skeleton, equality pattern, manager, API version, time
_Key = tuple[bytes, bytes, tuple[int, ...], str, str, str]


class _Transition:
    """One key's answer: the stored entries it keeps, and the writer's entry as a template."""

    __slots__ = ("entries", "fixed", "named", "node", "ordered", "owned", "template", "writer_at")

    def __init__(
        self,
        node: Any,
        entries: list[Obj],
        writer_at: int,
        template: Template,
        named: tuple[int, ...],
        fixed: tuple[tuple[int, bytes], ...],
        ordered: tuple[int, ...],
        owned: bool = False,
    ) -> None:
        self.node = node  # held: compared by identity
        #: the answer's entries (the writer's at ``writer_at``); where ``owned``, the writer's
        #: only: the others are the write's own stored ones (they name the owners' uids)
        self.entries = entries
        self.owned = owned
        self.writer_at = writer_at
        self.template = template
        #: the numbers of the strings the placeholders stand for, in placeholder order
        self.named = named
        #: the strings the template holds as they are (the same in the two writes it was
        #: learnt from): their numbers and values
        self.fixed = fixed
        #: the numbers of all strings the answer names, in their order
        self.ordered = ordered

    def answer(self, strings: list[bytes], stored: list[Obj]) -> list[Obj] | None:
        """The entries of a write whose strings are ``strings`` and whose stored entries are
        ``stored``; None if a string the template holds differs, or the strings it names are
        not in the template's order (the general path then decides)."""
        for i, v in self.fixed:
            if strings[i] != v:
                return None
        ordered = [strings[i] for i in self.ordered]
        if any(a >= b for a, b in pairwise(ordered)):
            return None
        named = [strings[i] for i in self.named]
        template = self.template
        text = template.encoding(named)
        tree = canonical_json_built(text, lambda: template.build([s.decode() for s in named]))
        if self.owned:
            out = [dict(e) for e in stored]
            out.insert(self.writer_at, dict(self.entries[0]))
        else:
            out = [dict(e) for e in self.entries]
        out[self.writer_at]["fieldsV1"] = tree
        return out


class _Once:
    """A key seen once, with its strings (to tell which strings its writes share)."""

    __slots__ = ("strings",)

    def __init__(self, strings: list[bytes]) -> None:
        self.strings = strings


class StatusWriteTemplates:
    """``transition -> answer`` for stored ``/status`` writes (see the module docs).

    A write pays for its key only where a template can pay off: its stored entries' text must
    have been seen by an earlier status write (the pods of one template share theirs; a
    StatefulSet's or a Node's entries name the object or change with every write), and a key
    is learnt from its second write (a transition seen once is not worth a template).
    """

    __slots__ = ("_seen", "_splits", "_table", "_texts")

    def __init__(self) -> None:
        #: stored entries' texts seen (the gate before a key is made)
        self._seen: dict[bytes, None] = {}
        self._table: dict[_Key, Any] = {}
        #: per stored entries list that names no owner (by identity, held), its key text: a
        #: stored revision's list is never modified, and the creates of one template, manager
        #: and second share theirs (``ownedentry.EntryLists``: a second's StatefulSets), so
        #: their status writes serialize it once, and the key's text is one object whose hash
        #: is computed once. (An owned object's list names its owners: a PodGroup's is its own,
        #: so keeping it would only cost its write.)
        self._texts: dict[int, tuple[list[Obj], bytes]] = {}
        #: a status text's skeleton and strings (:func:`_split`), by the text: the stored statuses
        #: of one kind's first status write are alike (a new StatefulSet's zeroed counts)
        self._splits: dict[bytes, tuple[bytes, list[bytes]]] = {}

    def entries(
        self,
        old: Obj,
        new: Obj,
        manager: str,
        api_version: str,
        node: Any,
        now: str,
        general: Callable[[], list[Obj] | None],
    ) -> list[Obj] | None:
        """What ``general()`` (the tracker's ``updated_managed_fields`` of this write) returns,
        from the transition's template where there is one. ``old`` is the stored object."""
        md = old.get("metadata")
        stored = md.get("managedFields") if type(md) is dict else None
        if type(stored) is not list or not stored:
            return general()
        text = self._texts.get(id(stored))
        owned = False
        if text is not None and text[0] is stored:
            etext = text[1]
        else:
            try:
                etext = orjson.dumps(stored, option=EXACT_JSON)
            except TypeError:
                return general()
            # an owned object's entries name its owners: keyed without their uids (see .owneruids)
            without = without_owner_uids(etext)
            if without is not None:
                etext, owned = without, True
            else:
                # an exact copy: orjson's result holds its whole write buffer (4 KB at least)
                etext = bytes(memoryview(etext))
                keep(self._texts, id(stored), (stored, etext), _TEXTS)
        if etext not in self._seen:
            if len(self._seen) >= _TRANSITIONS:
                self._seen.clear()
            self._seen[bytes(memoryview(etext)) if owned else etext] = None
            return general()
        keyed = _key(etext, old, new, manager, api_version, now, self._splits)
        if keyed is None:
            return general()
        key, strings = keyed
        known = self._table.get(key, _MISSING)
        if known is _MISSING:  # the first write of this transition
            if len(self._table) >= _TRANSITIONS:
                self._table.clear()
            self._table[key] = _Once(strings)
            return general()
        if type(known) is _Once:  # the second: learn from it
            out = general()
            learnt = _learn(old, manager, api_version, node, now, strings, known.strings, out)
            if learnt is not None and owned:
                learnt = _owned(learnt, stored)
            self._table[key] = learnt
            return out
        if known is not None and known.node is node:
            out = known.answer(strings, stored)
            if out is not None:
                return out
        return general()

    def clear(self) -> None:
        self._seen.clear()
        self._table.clear()
        self._texts.clear()
        self._splits.clear()


def _rest(obj: Obj, md: Obj) -> Obj:
    """``obj`` without ``spec``, ``status`` and ``metadata.managedFields`` (for comparing only)."""
    rest = {k: v for k, v in obj.items() if k != "spec" and k != "status"}
    if "managedFields" in md:
        rest["metadata"] = {k: v for k, v in md.items() if k != "managedFields"}
    return rest


def _same_rest(old: Obj, new: Obj, old_md: Obj, new_md: Obj) -> bool:
    """A sufficient test that :func:`_rest` of the two is the same JSON: True means so, False
    "don't know" (the texts decide). A status write's ``metadata`` is a new map of the stored
    object's values (``registry.handoff``) and its other sections are the stored ones, so each
    value is the stored one itself, or an equal ``str`` (the registry sets the name and the
    namespace from the request): the same text, found without writing the two texts. Keys
    must come in the same order (the text's)."""
    keys = [k for k in new if k != "spec" and k != "status"]
    if keys != [k for k in old if k != "spec" and k != "status"]:
        return False
    md_keys = [k for k in new_md if k != "managedFields"]
    if md_keys != [k for k in old_md if k != "managedFields"]:
        return False
    keys.remove("metadata")  # compared key by key, in the second pass
    for values, before, names in ((new, old, keys), (new_md, old_md, md_keys)):
        for k in names:
            a, b = values[k], before[k]
            if a is b or (type(a) is str and type(b) is str and a == b):
                continue
            return False
    return True


def _key(
    etext: bytes,
    old: Obj,
    new: Obj,
    manager: str,
    api_version: str,
    now: str,
    splits: dict[bytes, tuple[bytes, list[bytes]]] | None = None,
) -> tuple[_Key, list[bytes]] | None:
    """The write's key (``etext``: its stored entries' text) and its strings by number; None:
    not for a template (see the module docs). ``splits``: the old statuses' splits by text,
    kept for the next write (read only: the lists are never modified)."""
    old_md, new_md = old.get("metadata"), new.get("metadata")
    if type(old_md) is not dict or type(new_md) is not dict:
        return None
    if new.get("spec", _MISSING) is not old.get("spec", _MISSING):
        return None
    # all but spec and status equal, as JSON (``==`` confuses ``true`` with ``1``: the bytes do
    # not; the stored object holds no NaN, so equal bytes are equal values)
    try:
        if not _same_rest(old, new, old_md, new_md):
            old_rest, new_rest = _rest(old, old_md), _rest(new, new_md)
            if old_rest != new_rest or orjson.dumps(old_rest, option=EXACT_JSON) != orjson.dumps(
                new_rest, option=EXACT_JSON
            ):
                return None
        old_status, new_status = old.get("status", _MISSING), new.get("status", _MISSING)
        if new_status is _MISSING:
            return None
        # a stored object without a status (a PodGroup as its controller made it): the empty
        # text, which no JSON text is
        otext = b"" if old_status is _MISSING else orjson.dumps(old_status, option=EXACT_JSON)
        ntext = orjson.dumps(new_status, option=EXACT_JSON)
    except TypeError:
        return None
    for text in (otext, ntext):
        if not text.isascii() or b"\\" in text or b"~" in text:
            return None
    # NaN and ±Inf are written as null; the stored object holds neither (it is decoded JSON)
    if b"null" in ntext and orjson.loads(ntext) != new_status:
        return None
    known = splits.get(otext) if splits is not None else None
    if known is None:
        known = _split(otext)
        if splits is not None:
            keep(splits, bytes(memoryview(otext)), known, _SPLITS)
    oskel, ofound = known
    nskel, nfound = _split(ntext)
    found = ofound + nfound
    strings = list(dict.fromkeys(found))
    pattern = tuple(map(strings.index, found))
    skeleton = oskel + b"\x02" + nskel
    return (etext, skeleton, pattern, manager, api_version, now), strings


def _split(text: bytes) -> tuple[bytes, list[bytes]]:
    """``text`` (``orjson`` output without a backslash, so every ``"`` delimits a string) as its
    skeleton and its string *values* in order.

    Splitting at the quotes gives the text between strings and the strings, alternately; a
    string followed by ``:`` is a key, any other a value. The skeleton is the text between
    strings with the keys (which the values' order then places back): the text is rebuilt from
    the skeleton and the values, so equal skeletons differ only in their values. The first
    bytes of the texts after the strings, mapped to 1/0 by ``translate``, select the keys and
    the values in C (a text after a string is never empty, but at the end of a bare string).
    """
    if not text:  # a stored object without a status (what the lines below make of it)
        return b"\x01", []
    parts = text.split(b'"')
    between = parts[0::2]
    inside = parts[1::2]
    firsts = b"".join(map(_FIRST, between[1:]))
    if len(firsts) != len(inside):  # a text after a string is empty: one by one
        keyed = [b[:1] == _COLON for b in between[1:]]
        keys = list(compress(inside, keyed))
        values = list(compress(inside, map(not_, keyed)))
    else:
        keys = list(compress(inside, firsts.translate(_KEY_MASK)))
        values = list(compress(inside, firsts.translate(_VALUE_MASK)))
    return b'"'.join(between) + b"\x01" + b"\x00".join(keys), values


def _learn(
    old: Obj,
    manager: str,
    api_version: str,
    node: Any,
    now: str,
    strings: list[bytes],
    first: list[bytes],
    out: list[Obj] | None,
) -> _Transition | None:
    """The template of a key whose first write answered ``out`` (None: the key is not templated)."""
    if not out:
        return None
    try:
        managers = decode_managed_fields(old["metadata"]["managedFields"], stored=True)
    except ValueError:
        return None
    # nobody (the writer included) owns a status field: nobody loses one to the write, and the
    # writer's entry is then what the write touched, whatever it held before
    for vs in managers.values():
        if any(p and p[0].kind == FIELD and p[0].raw == "status" for p in vs.fields):
            return None
    at = [
        i
        for i, e in enumerate(out)
        if e.get("manager") == manager and e.get("subresource") == "status" and e.get("time") == now
    ]
    if len(at) != 1 or len(out) != len(managers) + 1:
        return None
    entry = out[at[0]]
    tree = entry.get("fieldsV1")
    try:
        fields = FieldSet.from_fields_v1(tree)
        encoded = orjson.dumps(tree)
    except (ValueError, TypeError):
        return None
    # a string the first write of the key had too stays in the template as it is (a container
    # name, a condition type): only the others (the IPs) are placeholders
    same = {v.decode() for v, w in zip(strings, first, strict=True) if v == w}
    abstracted = _abstract(fields.paths, {s.decode() for s in strings}, same)
    if abstracted is None:
        return None
    paths, named, kept = abstracted
    emitted, round_trips = emit_fields_v1(paths)
    try:
        text = orjson.dumps(emitted)
    except TypeError:
        return None
    template = Template(bytes(memoryview(text)), round_trips, emitted, frozenset(), frozenset())
    if (
        template.encoding([s.encode() for s in named]) != encoded
        or orjson.dumps(template.build(named)) != encoded
    ):
        return None
    number = {s.decode(): i for i, s in enumerate(strings)}
    # copies: ``out`` is the first write's, stored with its object
    return _Transition(
        node,
        [dict(e) for e in out],
        at[0],
        template,
        tuple(number[s] for s in named),
        tuple((number[s], s.encode()) for s in kept),
        tuple(number[s] for s in sorted([*named, *kept])),
    )


def _owned(learnt: _Transition, stored: list[Obj]) -> _Transition | None:
    """``learnt`` (of a key whose stored entries name owners' uids) answering with each write's
    own stored entries: kept where its first write's answer holds them byte for byte, in their
    order, around the writer's."""
    at = learnt.writer_at
    others = [e for i, e in enumerate(learnt.entries) if i != at]
    try:
        same = orjson.dumps(others, option=EXACT_JSON) == orjson.dumps(stored, option=EXACT_JSON)
    except TypeError:
        return None
    if not same:
        return None
    learnt.entries = [learnt.entries[at]]
    learnt.owned = True
    return learnt


def _abstract(
    paths: frozenset[Path], known: set[str], same: set[str]
) -> tuple[frozenset[Path], list[str], list[str]] | None:
    """``paths`` with each string of their ``k:``/``v:`` elements not in ``same`` replaced by a
    placeholder numbered in the strings' order; those strings in placeholder order; the strings
    of ``same`` they hold. None where an element holds a string the views do not (it could not
    be renamed with them) or too many."""
    named: set[str] = set()
    for p in paths:
        for pe in p:
            if pe.kind == KEY:
                for v in orjson.loads(pe.raw).values():
                    if type(v) is str:
                        named.add(v)
            elif pe.kind == VALUE:
                v = orjson.loads(pe.raw)
                if type(v) is str:
                    named.add(v)
    if not named <= known:
        return None
    kept = sorted(named & same)
    order = sorted(named - same)
    if len(order) > _MAX_NAMED:
        return None
    sub = {s: placeholder(j) for j, s in enumerate(order)}
    memo: dict[PathElement, PathElement] = {}

    def abstract(pe: PathElement) -> PathElement:
        hit = memo.get(pe)
        if hit is None:
            if pe.kind == KEY:
                fields = orjson.loads(pe.raw)
                hit = key_element({k: sub.get(v, v) if type(v) is str else v for k, v in fields.items()})
            elif pe.kind == VALUE:
                v = orjson.loads(pe.raw)
                hit = value_element(sub.get(v, v)) if type(v) is str else pe
            else:
                hit = pe
            memo[pe] = hit
        return hit

    return frozenset(tuple(abstract(pe) for pe in p) for p in paths), order, kept


__all__ = ["StatusWriteTemplates"]

"""A write's new ``fieldsV1`` encoding, made from a template per shape of its field set.

The node agent's pod status write gives its manager a field set no other pod has: the set
names the pod's IPs (``f:status`` > ``f:podIPs`` > ``k:{"ip":"10.0.3.7"}``, the same under
``f:hostIPs``), so the encoder's table of encodings never answers it and every pod pays a whole
emission, its serialization, the round-trip check of its new elements and the shared tree of
the text (about 30 µs of a ~200 µs write: ``python -m bench.micro.update_entry_cpu``). Yet all that depends on the IPs only through where
they stand: the rest of the set (conditions, container statuses, phase...) is every pod's of a
template.

Here a set whose only unknown part is such IP keys is *abstracted*: each ``k:{"ip":"<ip>"}``
element becomes a placeholder element ``k:{"ip":"~NNNNNN"}``, numbered in the order of the IPs
(the order the encoder sorts them in). The abstract set's encoding (the template) is emitted once
per shape; a set of that shape is then encoded by replacing each placeholder's text by its IP in
the template's bytes, and its shared tree is the template's tree (canonical parts) with new dicts
only where a placeholder stood.

Why the substitution is exact: the encoder's output depends on an element only through its
serialized text and its place in the order of its siblings. An IP taken here is plain text
(hex digits, ``.``, ``:``: nothing JSON escapes, so it is written as it is, in the key's text
and in the bytes alike), so its text replaces the placeholder's one for one in the bytes; placeholders
are numbered in the IPs' order, so they sort among each other as the IPs do; and any sibling
that is not a placeholder sorts against them by something other than the IP (another kind of
element, or a key whose first field name is not ``ip``: a set with any other ``k:{"ip":…``
element is not abstracted). A template is kept only after its first instance was found equal,
byte for byte, to the general encoder's (:meth:`FieldSet.fields_v1_encoding`), the way
:mod:`.createentry` keeps a create's template; ``test_update_entry_template.py`` compares the two
on random sets.

The table belongs to the :class:`apiserver.patch.tracker.FieldTracker` (one per API server).
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from apiserver.api.types import Obj
from apiserver.patch.fieldpath import KEY, FieldSet, Path, PathElement, emit_fields_v1
from apiserver.patch.sharedtrees import shared_fields_v1
from apiserver.storage.compact import canonical_fields, canonical_json_built

#: remembered shapes per tracker (cleared when full: a miss costs one general encoding)
_TEMPLATES = 512
#: sets naming more IPs than this take the general path (a template per count)
_MAX_IPS = 16
#: the IP keys taken: a single ``ip`` key field with a plain value (see the module docs)
_IP_KEY = re.compile(r'\{"ip":"([0-9A-Fa-f.:]+)"\}')
_IP_PREFIX = '{"ip":'


def _placeholder(j: int) -> str:
    return f"~{j:06d}"


#: the placeholders' texts as the template's bytes hold them (constants)
_PLACEHOLDER_BYTES = tuple(_placeholder(j).encode() for j in range(_MAX_IPS))


class _Template:
    """One shape's encoding with placeholders, its shared tree, and which of its dicts hold one."""

    __slots__ = ("text", "round_trips", "tree", "varying", "rest", "marked")

    def __init__(
        self,
        text: bytes,
        round_trips: bool,
        tree: dict[str, Any],
        rest: frozenset[Path],
        marked: frozenset[Path],
    ) -> None:
        self.text = text
        self.round_trips = round_trips
        #: the shape: the paths naming no IP, the others with placeholders
        self.rest = rest
        self.marked = marked
        self.varying: set[int] = set()
        self.tree = self._canonical(tree)

    def _canonical(self, tree: dict[str, Any]) -> dict[str, Any]:
        """``tree`` with every part that holds no placeholder made canonical (once, here)."""
        if "~" not in orjson.dumps(tree).decode():
            return canonical_fields(tree)
        out = {k: self._canonical(v) for k, v in tree.items()}
        self.varying.add(id(out))
        return out

    def encoding(self, ips: list[bytes]) -> bytes:
        text = self.text
        for j, ip in enumerate(ips):
            text = text.replace(_PLACEHOLDER_BYTES[j], ip)
        return text

    def build(self, ips: list[str]) -> dict[str, Any]:
        """The instance's tree: the template's own parts, new dicts where a placeholder stood."""
        subs = [(_placeholder(j), ip) for j, ip in enumerate(ips)]
        return self._substituted(self.tree, subs)

    def _substituted(self, tree: dict[str, Any], subs: list[tuple[str, str]]) -> dict[str, Any]:
        if id(tree) not in self.varying:
            return tree
        out: dict[str, Any] = {}
        for k, v in tree.items():
            if "~" in k:
                for ph, ip in subs:
                    k = k.replace(ph, ip)
            out[k] = self._substituted(v, subs)
        return out


#: a shape: the set's paths that name no IP, and the others with placeholders for their IPs
Shape = tuple[frozenset[Path], frozenset[Path]]


class UpdatedEntryTemplates:
    """``shape -> template``: the stored writes' ``FieldsEncoder`` (see the module docs).

    The template used last is tried first: a gang's pods come one after another with the same
    shape, and it is recognized with set operations on the new set (whose paths carry their
    hashes) instead of scanning every element of every path for IP keys.
    """

    __slots__ = ("_table", "_placeholders", "_recent")

    def __init__(self) -> None:
        self._table: dict[Shape, _Template | None] = {}
        self._placeholders: list[PathElement] = []
        self._recent: _Template | None = None

    def fields_v1(self, fs: FieldSet) -> Obj:
        """:func:`shared_fields_v1` of ``fs``: the same tree, from a template where one fits."""
        if fs.known_encoding() is not None:
            return shared_fields_v1(fs)
        paths = fs.paths
        hit = self._recent_match(paths)
        if hit is None:
            split = self._split(paths)
            if split is None:
                return shared_fields_v1(fs)
            rest, marked, ips = split
            template = self._table.get((rest, marked))
            if template is None:
                if (rest, marked) in self._table:  # failed its verification: never templated
                    return shared_fields_v1(fs)
                return self._learn(fs, (rest, marked), ips)
            self._recent = template
        else:
            template, ips = hit
        encoded = template.encoding([ip.encode() for ip in ips])
        fs.adopt_encoding(encoded, template.round_trips)
        return canonical_json_built(encoded, lambda: template.build(ips))

    def _recent_match(self, paths: frozenset[Path]) -> tuple[_Template, list[str]] | None:
        """The last template used and ``paths``' IPs, when ``paths`` is of its shape: its rest,
        and beyond it only paths that are, with placeholders, its marked ones."""
        template = self._recent
        if template is None:
            return None
        rest = template.rest
        # (the sizes only answer a mismatch early: the split below decides)
        if len(paths) != len(rest) + len(template.marked) or not rest <= paths:
            return None
        # the rest holds no ``k:{"ip":…`` element, so every one of ``paths`` is in the others
        split = self._split(paths - rest)
        if split is None or split[0] or split[1] != template.marked:
            return None
        return template, split[2]

    def _split(self, paths: frozenset[Path]) -> tuple[frozenset[Path], frozenset[Path], list[str]] | None:
        """``paths`` as the ones naming no IP key, the others with placeholders for their IPs,
        and the IPs in placeholder order; ``None`` where there is none or one this cannot take."""
        found: list[tuple[str, PathElement]] = []
        for pe in frozenset().union(*paths):
            if pe[0] == KEY and pe[1].startswith(_IP_PREFIX):
                m = _IP_KEY.fullmatch(pe[1])
                if m is None:
                    return None
                found.append((m.group(1), pe))
        if not found or len(found) > _MAX_IPS:
            return None
        found.sort()  # a single string key sorts by its value (PathElement.sort_key)
        ph = self._placeholder_elements(len(found))
        sub = {pe: ph[j] for j, (_, pe) in enumerate(found)}
        mine = frozenset(sub)
        named = [p for p in paths if not mine.isdisjoint(p)]
        marked = frozenset([tuple([sub.get(pe, pe) for pe in p]) for p in named])
        return paths.difference(named), marked, [ip for ip, _ in found]

    def _placeholder_elements(self, n: int) -> list[PathElement]:
        ph = self._placeholders
        while len(ph) < n:
            ph.append(PathElement(KEY, '{"ip":"' + _placeholder(len(ph)) + '"}'))
        return ph

    def _learn(self, fs: FieldSet, shape: Shape, ips: list[str]) -> Obj:
        """The general path's tree; the shape's template is kept if it rebuilds it exactly."""
        tree = shared_fields_v1(fs)
        encoded = fs.known_encoding()
        template: _Template | None = None
        if encoded is not None:
            rest, marked = shape
            emitted, round_trips = emit_fields_v1(rest | marked)
            try:
                text = orjson.dumps(emitted)
            except TypeError:
                text = None
            if text is not None:
                candidate = _Template(bytes(memoryview(text)), round_trips, emitted, rest, marked)
                if (
                    candidate.encoding([ip.encode() for ip in ips]) == encoded
                    and orjson.dumps(candidate.build(ips)) == encoded
                    and fs.decodes_to_itself() == round_trips
                ):
                    template = candidate
        if len(self._table) >= _TEMPLATES:
            self._table.clear()
        self._table[shape] = template
        if template is not None:
            self._recent = template
        return tree

    def clear(self) -> None:
        self._table.clear()
        self._recent = None


#: the template and its placeholders, also used by :mod:`.statusentry`
Template = _Template
placeholder = _placeholder

__all__ = ["Template", "UpdatedEntryTemplates", "placeholder"]

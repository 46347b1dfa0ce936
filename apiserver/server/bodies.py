"""Request bodies: read within kube's size limit, decoded into plain JSON values within its bounds.

What a handler receives from here is what ``encoding/json`` would have produced in kube: objects
with string keys, arrays, strings (valid Unicode), numbers (integers beyond int64 become floats,
as kube's ``UnmarshalCaseSensitivePreserveInts`` does), booleans and nulls, nested at most
:data:`~apiserver.patch.limits.MAX_DEPTH` levels. Everything that would otherwise fail later
(an encoder refusing a value, a recursive walk running out of stack, an alias bomb expanding
while a response is written) fails here, as a 400/413, before anything is stored.

* **Size** is enforced while reading (``Content-Length`` first, then the bytes as they arrive),
  so a 64 MiB body is refused after 3 MiB, not after buffering it whole.
* **YAML** goes through go-yaml's rules as sigs.k8s.io/yaml applies them: timestamps stay
  strings, non-string keys become their string form, ``.inf``/``.nan`` cannot be converted to
  JSON, nesting and alias expansion are bounded (go-yaml's ``allowedAliasRatio``). ``\\uD83D\\uDCA5``
  escapes (what Python's ``json.dumps`` writes for an emoji) decode to the character, as a JSON
  decoder does; a lone surrogate becomes U+FFFD.
* Bodies above :data:`OFFLOAD_BYTES` are decoded on a worker thread so that parsing a large
  body does not stall every other request on the event loop.
"""

from __future__ import annotations

import asyncio
import datetime
import math
import re
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any, TypeVar

import orjson
import yaml

from apiserver import errors
from apiserver.patch.limits import (
    MANAGED_FIELDS_SLACK,
    MAX_DEPTH,
    MAX_REQUEST_BODY_BYTES,
    depth_exceeds,
    json_too_deep,
    yaml_too_deep,
)

JSON_TYPES = (
    "",
    "*/*",
    "application/json",
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
)
YAML_TYPES = ("application/apply-patch+yaml", "application/yaml", "application/x-yaml", "text/yaml")
PROTOBUF = "application/vnd.kubernetes.protobuf"
#: bodies at least this large are decoded off the event loop
OFFLOAD_BYTES = 256 * 1024

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_UINT64_MAX = 2**64 - 1
_SURROGATE = re.compile("[\ud800-\udfff]")
# go-yaml's allowedAliasRatio range (decode.go): 99% of decodes may come from aliases up to 400000
# decodes, 10% from 4000000, linearly in between.
_ALIAS_RATIO_LOW, _ALIAS_RATIO_HIGH = 400_000, 4_000_000
EXCESSIVE_ALIASING = "yaml: document contains excessive aliasing"


class BodyTooLarge(Exception):  # noqa: N818 - a signal mapped to kube's 413
    pass


def too_large(limit: int = MAX_REQUEST_BODY_BYTES) -> errors.StatusError:
    """kube's ``limitedReadBody`` answer: 413 ``RequestEntityTooLarge``, ``limit is <bytes>``."""
    return errors.request_entity_too_large(f"limit is {limit}")


async def read_limited(
    chunks: AsyncIterator[bytes], content_length: str | None, limit: int = MAX_REQUEST_BODY_BYTES
) -> bytes:
    """The body's bytes, or a 413 as soon as it is known to exceed ``limit``."""
    if content_length:
        try:
            declared = int(content_length)
        except ValueError:
            declared = -1
        if declared > limit:
            raise too_large(limit)
    parts: list[bytes] = []
    size = 0
    async for chunk in chunks:
        size += len(chunk)
        if size > limit:
            raise too_large(limit)
        if chunk:
            parts.append(chunk)
    return b"".join(parts)


# ------------------------------------------------------------------------------------------ JSON
def decode_json(raw: bytes) -> Any:
    """A JSON body (orjson), nested at most :data:`MAX_DEPTH` levels."""
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as e:
        if "depth limit exceeded" in str(e):
            raise json_too_deep() from e
        raise errors.bad_request(f"couldn't get version/kind; json parse error: {e}") from e
    if _json_too_deep(raw, value):
        raise json_too_deep()
    return value


def _too_deep(value: Any) -> bool:
    return depth_exceeds(value, MAX_DEPTH)


def _json_too_deep(raw: bytes, value: Any) -> bool:
    """:func:`_too_deep` for a value decoded from JSON ``raw``: a body with no more brackets than
    the limit cannot nest past it (counted in C, which spares the walk for nearly every body)."""
    if raw.count(b"{") + raw.count(b"[") <= MAX_DEPTH:
        return False
    return _too_deep(value)


# ------------------------------------------------------------------------------------------ YAML
class YAMLBodyError(ValueError):
    """A YAML body that decodes but cannot become JSON (the text follows sigs.k8s.io/yaml)."""


def _allowed_alias_ratio(decodes: int) -> float:
    if decodes <= _ALIAS_RATIO_LOW:
        return 0.99
    if decodes >= _ALIAS_RATIO_HIGH:
        return 0.10
    return 0.99 - 0.89 * (decodes - _ALIAS_RATIO_LOW) / (_ALIAS_RATIO_HIGH - _ALIAS_RATIO_LOW)


_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# libyaml refuses \uD800-\uDFFF escapes (as go-yaml does); PyYAML's own parser reads them.
_SURROGATE_ESCAPE = "found invalid Unicode character escape code"


def scan_yaml(raw: bytes, max_depth: int = MAX_DEPTH + MANAGED_FIELDS_SLACK, loader: Any = _LOADER) -> None:
    """Bound a YAML document's nesting and alias expansion without building it.

    One pass over the parser's events (iterative, in libyaml when available) counts the nodes a
    decoder would visit, the way go-yaml's decoder counts them: each alias re-decodes its
    anchor's whole subtree. Nesting is measured with aliases expanded, since the decoded value is
    what later code walks. Raises :class:`YAMLBodyError` with go-yaml's wording.
    """
    depth = 0
    decodes = 0
    aliased = 0
    # per open collection: [anchor, decodes at its start, its depth, deepest depth reached inside]
    open_nodes: list[list[Any]] = []
    anchors: dict[str, tuple[int, int]] = {}  # anchor -> (expanded node count, expanded depth)
    opened: set[str] = set()  # anchors of collections still open

    def reach(d: int) -> None:
        if d > max_depth:
            raise YAMLBodyError(yaml_too_deep(max_depth))
        if open_nodes and d > open_nodes[-1][3]:
            open_nodes[-1][3] = d  # handed to the parents as each collection ends

    for event in yaml.parse(raw, Loader=loader):
        tag = getattr(event, "tag", None)
        if tag is not None and tag != "!" and not _constructible(tag):
            # the loader would fail on it only after composing the whole document
            raise yaml.constructor.ConstructorError(
                None, None, f"could not determine a constructor for the tag {tag!r}", event.start_mark
            )
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            depth += 1
            reach(depth)
            open_nodes.append([event.anchor, decodes, depth, depth])
            if event.anchor is not None:
                opened.add(event.anchor)
            decodes += 1
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            anchor, start, at, reached = open_nodes.pop()
            depth -= 1
            if open_nodes and reached > open_nodes[-1][3]:
                open_nodes[-1][3] = reached
            if anchor is not None:
                opened.discard(anchor)
                anchors[anchor] = (decodes - start, reached - at + 1)
        elif isinstance(event, yaml.ScalarEvent):
            decodes += 1
            if event.anchor is not None:
                anchors[event.anchor] = (1, 0)
        elif isinstance(event, yaml.AliasEvent):
            if event.anchor in opened:
                raise YAMLBodyError(f"yaml: anchor '{event.anchor}' value contains itself")
            if event.anchor not in anchors:
                raise YAMLBodyError(f"yaml: unknown anchor '{event.anchor}' referenced")
            size, sub_depth = anchors[event.anchor]
            decodes += 1 + size
            aliased += size
            if sub_depth:
                reach(depth + sub_depth)
            if aliased > 100 and decodes > 1000 and aliased / decodes > _allowed_alias_ratio(decodes):
                raise YAMLBodyError(EXCESSIVE_ALIASING)


class _JSONableLoader(_LOADER):  # type: ignore[misc,valid-type]
    """The safe loader with go-yaml's JSON-facing scalar rules (see :func:`decode_yaml`)."""


class _PureJSONableLoader(yaml.SafeLoader):
    """:class:`_JSONableLoader`'s rules on PyYAML's Python classes: its scalar constructors are
    applied one scalar at a time by :func:`build_yaml` (``_helper``)."""


def _constructible(tag: str) -> bool:
    """Whether :class:`_JSONableLoader` has a constructor for ``tag``."""
    if tag in _JSONableLoader.yaml_constructors:
        return True
    return any(tag.startswith(prefix) for prefix in _JSONableLoader.yaml_multi_constructors)


def _keep_text(loader: Any, node: Any) -> Any:
    # go-yaml decodes a timestamp into interface{} as the string it was written as
    return loader.construct_scalar(node)


def _binary_text(loader: Any, node: Any) -> Any:
    data = yaml.SafeLoader.construct_yaml_binary(loader, node)
    return data.decode("utf-8", "replace")


_GO_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")


def _short_tag(tag: str) -> str:
    return "!!" + tag.rsplit(":", 1)[-1] if tag.startswith("tag:yaml.org,2002:") else tag


def _unreadable_number(text: str) -> Any:
    """A plain scalar that looks like an integer go-yaml cannot hold in 64 bits: a float when
    ``strconv.ParseFloat`` reads it, else the string it was written as (go-yaml's resolve)."""
    plain = text.replace("_", "")
    if _GO_FLOAT.fullmatch(plain):
        f = float(plain)
        if not math.isinf(f):
            return f
    return text


def _scalar_rule(kind: str, construct: Any) -> Any:
    """PyYAML's constructor for ``!!int``/``!!float``/``!!bool`` with go-yaml's outcomes where
    PyYAML would raise: a number too big to read is a float or a string; an explicit tag on text
    that is not of that kind (``!!int x``) is go-yaml's "cannot decode" error."""

    def constructor(loader: Any, node: Any) -> Any:
        text = loader.construct_scalar(node)
        implicit = loader.resolve(yaml.ScalarNode, text, (True, False))
        try:
            value = construct(loader, node)
        except (ValueError, KeyError, OverflowError) as e:
            if kind == "int" and implicit == node.tag:
                return _unreadable_number(text)
            raise YAMLBodyError(f"yaml: cannot decode {_short_tag(implicit)} `{text}` as a !!{kind}") from e
        if kind == "int" and not _INT64_MIN <= value <= _UINT64_MAX:
            return _unreadable_number(text)
        return value

    return constructor


for _cls in (_JSONableLoader, _PureJSONableLoader):
    _cls.add_constructor("tag:yaml.org,2002:timestamp", _keep_text)
    _cls.add_constructor("tag:yaml.org,2002:binary", _binary_text)
    _cls.add_constructor("tag:yaml.org,2002:int", _scalar_rule("int", yaml.SafeLoader.construct_yaml_int))
    _cls.add_constructor(
        "tag:yaml.org,2002:float", _scalar_rule("float", yaml.SafeLoader.construct_yaml_float)
    )
    _cls.add_constructor("tag:yaml.org,2002:bool", _scalar_rule("bool", yaml.SafeLoader.construct_yaml_bool))


def _key_string(k: Any) -> str:
    """sigs.k8s.io/yaml's ``convertToJSONableObject`` key rule."""
    if isinstance(k, str):
        return _fix_text(k)
    if isinstance(k, bool):
        return "true" if k else "false"
    if isinstance(k, int):
        return str(k)
    if isinstance(k, float):
        if math.isnan(k):
            return ".nan"
        if math.isinf(k):
            return ".inf" if k > 0 else "-.inf"
        return _go_float32_g(k)
    if isinstance(k, (datetime.date, datetime.datetime)):
        return k.isoformat()
    kind = "<nil>" if k is None else type(k).__name__
    raise YAMLBodyError(f"unsupported map key of type: {kind}, key: {k!r}")


def _go_float32_g(f: float) -> str:
    """``strconv.FormatFloat(f, 'g', -1, 32)``: shortest float32 text, Go's exponent form."""
    import struct

    f32 = struct.unpack("f", struct.pack("f", f))[0]
    for digits in range(1, 10):
        text = f"{f32:.{digits}g}"
        if struct.unpack("f", struct.pack("f", float(text)))[0] == f32:
            break
    if "e" in text:
        mant, exp = text.split("e")
        sign = exp[0]
        digits_exp = exp[1:].lstrip("0").rjust(2, "0")
        text = f"{mant}e{sign}{digits_exp}"
    return text


def _fix_text(s: str) -> str:
    """Join UTF-16 surrogate pairs into their character; a lone surrogate becomes U+FFFD."""
    if _SURROGATE.search(s) is None:
        return s
    return s.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def _convert_scalar(v: Any) -> Any:
    if isinstance(v, str):
        return _fix_text(v)
    if isinstance(v, bool) or v is None:
        return v
    if isinstance(v, int):
        return v if _INT64_MIN <= v <= _INT64_MAX else float(v)
    if isinstance(v, float):
        if math.isinf(v):
            raise YAMLBodyError(f"json: unsupported value: {'+Inf' if v > 0 else '-Inf'}")
        if math.isnan(v):
            raise YAMLBodyError("json: unsupported value: NaN")
        return v
    if isinstance(v, (datetime.date, datetime.datetime)):
        return v.isoformat()
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    return v


def _entries(src: Any) -> Any:
    if isinstance(src, Mapping):
        return src.items()
    if isinstance(src, set):
        return ((k, None) for k in src)  # !!set: a mapping of its members to nulls
    return src


def _jsonable(value: Any) -> Any:
    """The decoded YAML value as a tree of JSON values.

    Iterative (nesting is already bounded by :func:`scan_yaml`, but this must not depend on
    it). Aliases are expanded into copies, as go-yaml's decoder expands them, so that no later
    in-place change to one path shows through another; :func:`scan_yaml` bounded that expansion.
    """

    def fresh(v: Any) -> Any:
        if isinstance(v, (Mapping, set)):
            return {}
        if isinstance(v, (list, tuple)):
            return []
        return None

    root = fresh(value)
    if root is None:
        return _convert_scalar(value)
    stack: list[tuple[Any, Any]] = [(value, root)]
    while stack:
        src, dst = stack.pop()
        if isinstance(dst, dict):
            for k, v in _entries(src):
                out = fresh(v)
                if out is None:
                    out = _convert_scalar(v)
                else:
                    stack.append((v, out))
                dst[_key_string(k)] = out
            continue
        for v in src:
            if isinstance(v, tuple) and len(v) == 2 and isinstance(src, list):
                v = {v[0]: v[1]}  # a !!omap / !!pairs entry: a one-key mapping, like go-yaml's MapItem
            out = fresh(v)
            if out is None:
                out = _convert_scalar(v)
            else:
                stack.append((v, out))
            dst.append(out)
    return root


class _Unusual(Exception):  # noqa: N818 - a signal: build this document the general way
    pass


_MERGE = object()  # a ``<<`` merge key
_NO_KEY = object()
_T = "tag:yaml.org,2002:"
_SCALAR_TAGS = {_T + t for t in ("null", "bool", "int", "float", "str", "timestamp", "binary")}
_helper = _PureJSONableLoader("")  # its scalar constructors, applied to one scalar at a time


def _scalar(event: Any, resolver: Any) -> Any:
    tag = event.tag
    if tag is None or tag == "!":
        tag = resolver.resolve(yaml.ScalarNode, event.value, event.implicit)
    if tag == _T + "merge":
        return _MERGE
    if tag not in _SCALAR_TAGS:
        raise _Unusual
    if tag == _T + "str":
        return _fix_text(event.value)
    node = yaml.ScalarNode(tag, event.value)
    return _convert_scalar(_helper.yaml_constructors[tag](_helper, node))


def _copy(value: Any) -> Any:
    """An independent copy of an anchored value (JSON values only, nesting bounded)."""
    if isinstance(value, (dict, list)):
        return orjson.loads(orjson.dumps(value))
    return value


def build_yaml(raw: bytes, loader: Any = _LOADER, max_depth: int = MAX_DEPTH + MANAGED_FIELDS_SLACK) -> Any:
    """Decode one YAML document into JSON values in a single pass over the parser's events.

    It keeps :func:`scan_yaml`'s accounting (nesting with aliases expanded, go-yaml's alias
    ratio) while it builds the value, and resolves and constructs scalars with PyYAML's own
    resolver and safe constructors, which is several times faster than composing a node graph
    and constructing it. Documents using anything else (collection tags such as ``!!set``,
    complex keys, unknown tags) raise :class:`_Unusual` and take the general path.
    """
    resolver = _helper
    depth = decodes = aliased = 0
    # frames: [items, anchor, decodes at start, depth, deepest reached, pending key, merges, kind]
    frames: list[list[Any]] = []
    anchors: dict[str, tuple[Any, int, int]] = {}  # anchor -> (value, expanded nodes, depth)
    opened: set[str] = set()
    root: Any = None
    documents = 0
    first_mark: Any = None

    def reach(d: int) -> None:
        if d > max_depth:
            raise YAMLBodyError(yaml_too_deep(max_depth))
        if frames and d > frames[-1][4]:
            frames[-1][4] = d

    def put(value: Any) -> None:
        nonlocal root
        if not frames:
            if value is _MERGE:
                raise _Unusual
            root = value
            return
        top = frames[-1]
        container = top[0]
        if top[7] is list:
            if value is _MERGE:
                raise _Unusual
            container.append(value)
        elif top[5] is _NO_KEY:
            if isinstance(value, (dict, list)):
                raise _Unusual  # a complex key
            top[5] = value
        else:
            key, top[5] = top[5], _NO_KEY
            if value is _MERGE:
                raise _Unusual
            if key is _MERGE:
                if type(value) is dict:
                    top[6].append(value)
                elif type(value) is list and all(type(v) is dict for v in value):
                    top[6].extend(reversed(value))  # the first mapping listed takes precedence
                else:
                    raise _Unusual
            else:
                container.append((_key_string(key), value))

    for event in yaml.parse(raw, Loader=loader):
        cls = type(event)
        if cls is yaml.ScalarEvent:
            decodes += 1
            value = _scalar(event, resolver)
            if event.anchor is not None:
                anchors[event.anchor] = (value, 1, 0)
            put(value)
        elif cls is yaml.MappingStartEvent or cls is yaml.SequenceStartEvent:
            tag = event.tag
            if tag is not None and tag != "!" and tag not in (_T + "map", _T + "seq"):
                raise _Unusual
            depth += 1
            reach(depth)
            kind = list if cls is yaml.SequenceStartEvent else dict
            # a mapping collects its (key, value) pairs and merges; it becomes a dict as it ends
            frames.append([[], event.anchor, decodes, depth, depth, _NO_KEY, [], kind])
            if event.anchor is not None:
                opened.add(event.anchor)
            decodes += 1
        elif cls is yaml.MappingEndEvent or cls is yaml.SequenceEndEvent:
            container, anchor, start, at, reached, _, merges, kind = frames.pop()
            depth -= 1
            if frames and reached > frames[-1][4]:
                frames[-1][4] = reached
            if kind is dict:
                value = {}
                for m in merges:
                    value.update(m)
                for k, v in container:
                    value[k] = v
            else:
                value = container
            if anchor is not None:
                opened.discard(anchor)
                anchors[anchor] = (value, decodes - start, reached - at + 1)
            put(value)
        elif cls is yaml.AliasEvent:
            if event.anchor in opened:
                raise YAMLBodyError(f"yaml: anchor '{event.anchor}' value contains itself")
            got = anchors.get(event.anchor)
            if got is None:
                raise YAMLBodyError(f"yaml: unknown anchor '{event.anchor}' referenced")
            value, size, sub_depth = got
            decodes += 1 + size
            aliased += size
            if sub_depth:
                reach(depth + sub_depth)
            if aliased > 100 and decodes > 1000 and aliased / decodes > _allowed_alias_ratio(decodes):
                raise YAMLBodyError(EXCESSIVE_ALIASING)
            put(_copy(value))
        elif cls is yaml.DocumentStartEvent:
            documents += 1
            if documents > 1:
                raise yaml.composer.ComposerError(
                    "expected a single document in the stream",
                    first_mark,
                    "but found another document",
                    event.start_mark,
                )
            first_mark = event.start_mark
    return root


def decode_yaml(raw: bytes) -> Any:
    """A YAML body as the JSON value sigs.k8s.io/yaml would convert it to (400 on failure).

    A body that is JSON (the common case: clients serialize apply configurations as JSON) is
    read by the JSON decoder, which is faster and joins surrogate-pair escapes.
    """
    head = raw.lstrip()[:1]
    if head in (b"{", b"["):
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError:
            pass  # YAML flow syntax, not JSON: the YAML path below decides
        else:
            if _json_too_deep(raw, value):
                raise errors.bad_request(f"error converting YAML to JSON: {yaml_too_deep()}")
            return value
    try:
        try:
            value, raw = _past_surrogate_escapes(raw, build_yaml)
        except _Unusual:
            value = _decode_yaml_generally(raw)
    except YAMLBodyError as e:
        raise errors.bad_request(f"error converting YAML to JSON: {e}") from e
    except yaml.YAMLError as e:
        raise errors.bad_request(f"error converting YAML to JSON: yaml: {_yaml_problem(e)}") from e
    if _too_deep(value):
        raise errors.bad_request(f"error converting YAML to JSON: {yaml_too_deep()}")
    return value


def _decode_yaml_generally(raw: bytes) -> Any:
    """Bound the document (:func:`scan_yaml`), build it with PyYAML's loader, convert to JSON."""
    _, raw = _past_surrogate_escapes(raw, scan_yaml)
    return _jsonable(yaml.load(raw, Loader=_JSONableLoader))  # noqa: S506 - a safe loader subclass


_R = TypeVar("_R")

#: characters libyaml may read again (each retry reads up to the next escape), per character of the body, while
#: :func:`_past_surrogate_escapes` rewrites the escapes it refuses (plus a fixed allowance)
_ESCAPE_REPARSE_FACTOR = 4
_ESCAPE_REPARSE_ALLOWANCE = 1 << 20


def _past_surrogate_escapes(raw: bytes, parse: Callable[[bytes], _R]) -> tuple[_R, bytes]:
    """``parse(raw)``, with each ``\\uD800``-``\\uDFFF`` escape libyaml refuses rewritten as JSON
    decoding reads it: a high-low pair as the one ``\\U`` escape of its character, a lone
    surrogate as ``\\uFFFD``. Returns the result and the body as parsed.

    libyaml (like go-yaml) refuses these escapes, which Python's ``json.dumps`` writes for any
    character beyond the BMP; PyYAML's pure-Python parser reads them but about a hundred times
    slower, which a large body turns into minutes of CPU. libyaml says where it stopped (inside
    a double-quoted scalar, the only place such an escape is one), so the escape is rewritten
    where it stands and the parse retried. The retries are bounded by the work they cost: past
    :data:`_ESCAPE_REPARSE_FACTOR` parses of the body's size, the body gets the error go-yaml,
    and so kube, answers for it.
    """
    text: str | None = None
    budget = _ESCAPE_REPARSE_FACTOR * len(raw) + _ESCAPE_REPARSE_ALLOWANCE
    first: yaml.YAMLError | None = None
    while True:
        try:
            return parse(raw), raw
        except yaml.YAMLError as e:
            if _SURROGATE_ESCAPE not in str(e):
                raise
            first = first or e
            if text is None:
                text = raw.decode("utf-8", "surrogateescape")
            rewritten = _rewrite_escape(text, e)
            mark = getattr(e, "problem_mark", None)
            budget -= mark.index if mark is not None else len(text)  # what that parse read
            if rewritten is None or budget < 0:
                raise first from None
            text = rewritten
            raw = text.encode("utf-8", "surrogateescape")


def _rewrite_escape(text: str, err: yaml.YAMLError) -> str | None:
    """``text`` with the surrogate escape ``err`` stopped at rewritten; None if it is not one."""
    mark = getattr(err, "problem_mark", None)
    at = mark.index if mark is not None else -1
    if at < 2 or text[at - 2 : at] != "\\u" or not _HEX4.fullmatch(text, at, at + 4):
        return None
    code = int(text[at : at + 4], 16)
    end = at + 4
    low = int(text[end + 2 : end + 6], 16) if _LOW_ESCAPE.match(text, end) else 0
    if 0xD800 <= code < 0xDC00 and 0xDC00 <= low < 0xE000:
        point = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
        return f"{text[: at - 2]}\\U{point:08X}{text[end + 6 :]}"
    return f"{text[: at - 2]}\\uFFFD{text[end:]}"


_HEX4 = re.compile(r"[0-9A-Fa-f]{4}")
_LOW_ESCAPE = re.compile(r"\\u[dD][c-fC-F][0-9A-Fa-f]{2}")


def _yaml_problem(e: yaml.YAMLError) -> str:
    mark = getattr(e, "problem_mark", None)
    problem = getattr(e, "problem", None) or str(e)
    if mark is not None:
        return f"line {mark.line + 1}: {problem}"
    return problem


# ------------------------------------------------------------------------------------------ any
def decode(raw: bytes, media_type: str) -> Any:
    """Decode a body by its media type (the ones kube-apiserver reads; anything else is 415)."""
    if media_type in JSON_TYPES:
        return decode_json(raw)
    if media_type in YAML_TYPES:
        return decode_yaml(raw)
    if media_type == PROTOBUF:
        from apiserver.server.protobuf import decode_k8s_protobuf

        value = decode_k8s_protobuf(raw)
        if _too_deep(value):
            raise json_too_deep()
        return value
    raise errors.unsupported_media_type(
        "application/json, application/yaml, application/vnd.kubernetes.protobuf"
    )


class RawBody(bytes):
    """A request body's bytes with its duplicate-field paths found ahead of time.

    fieldValidation reports keys repeated within one object of the body, which takes another
    parse of the bytes; for a large body that parse is done on the worker thread with the
    decoding (``duplicates``), and :func:`apiserver.patch.fieldvalidation.duplicate_fields`
    uses it instead of parsing again on the event loop.
    """

    duplicates: list[str] | None = None


def _decode_large(raw: bytes, media_type: str) -> tuple[Any, RawBody]:
    from apiserver.patch.fieldvalidation import duplicate_fields

    value = decode(raw, media_type)
    kept = RawBody(raw)
    if media_type != PROTOBUF:
        kept.duplicates = duplicate_fields(raw)
    return value, kept


_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')


def json_has_no_duplicates(raw: bytes, value: Any) -> bool:
    """Whether JSON ``raw`` (which decoded to ``value``) repeats no key within an object.

    Outside its strings a JSON text has exactly one ``:`` per object member, and a decoder keeps
    one member per distinct key: the counts in the body and in the decoded value encoded again
    are equal exactly when no key repeats. Counted in C (an encode and two regular-expression
    passes), this spares nearly every body the second, hooked parse that finds which keys repeat.
    """
    members = _JSON_STRING.sub(b"", raw).count(b":")
    return members == _JSON_STRING.sub(b"", orjson.dumps(value)).count(b":")


async def decode_async(raw: bytes, media_type: str) -> tuple[Any, bytes]:
    """:func:`decode` and the bytes to keep for field validation; bodies of
    :data:`OFFLOAD_BYTES` or more are decoded on a worker thread so the event loop keeps serving."""
    if len(raw) >= OFFLOAD_BYTES:
        return await asyncio.to_thread(_decode_large, raw, media_type)
    value = decode(raw, media_type)
    if media_type in JSON_TYPES and json_has_no_duplicates(raw, value):
        kept = RawBody(raw)
        kept.duplicates = []
        return value, kept
    return value, raw


__all__ = [
    "EXCESSIVE_ALIASING",
    "RawBody",
    "JSON_TYPES",
    "OFFLOAD_BYTES",
    "YAML_TYPES",
    "decode",
    "decode_async",
    "decode_json",
    "decode_yaml",
    "read_limited",
    "scan_yaml",
    "too_large",
]

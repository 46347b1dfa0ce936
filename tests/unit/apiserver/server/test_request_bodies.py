"""The pure decoders of request bodies and their bounds (apiserver/server/bodies.py,
apiserver/patch/limits.py, the JSON/merge patch engines, DeleteOptions decoding, Warning headers)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from apiserver import errors
from apiserver.patch import limits
from apiserver.patch.fieldvalidation import duplicate_fields
from apiserver.patch.jsonpatch_merge import json_patch, merge_patch
from apiserver.patch.limits import MAX_DEPTH, depth_exceeds, max_depth
from apiserver.server import bodies, warnings
from apiserver.server.bodies import decode_json, decode_yaml, read_limited
from apiserver.server.deleteoptions import delete_options


def chain(levels: int) -> str:
    """JSON text of ``levels`` nested objects (``{}`` is one level)."""
    return '{"a":' * (levels - 1) + "{}" + "}" * (levels - 1)


def nested(levels: int) -> dict:
    v: dict = {}
    for _ in range(levels - 1):
        v = {"a": v}
    return v


def message(e: pytest.ExceptionInfo[errors.StatusError]) -> str:
    return e.value.message


# ----------------------------------------------------------------------------------- nesting depth
def test_depth_is_counted_like_json_nesting() -> None:
    assert max_depth(1) == 0
    assert max_depth({}) == 1
    assert max_depth([{"a": [1]}]) == 3
    assert not depth_exceeds(nested(MAX_DEPTH))
    assert depth_exceeds(nested(MAX_DEPTH + 1))


def test_managed_fields_may_nest_a_few_levels_deeper_than_the_object() -> None:
    # fieldsV1 mirrors the object five levels down: an object at the limit keeps its managed fields
    obj = {"metadata": {"managedFields": [{"fieldsV1": nested(MAX_DEPTH)}]}}
    assert not depth_exceeds(obj)
    obj = {"metadata": {"managedFields": [{"fieldsV1": nested(MAX_DEPTH + limits.MANAGED_FIELDS_SLACK)}]}}
    assert depth_exceeds(obj)
    assert depth_exceeds({"spec": {"managedFields": nested(MAX_DEPTH)}})


def test_json_bodies_are_bounded_in_depth() -> None:
    assert max_depth(decode_json(chain(MAX_DEPTH).encode())) == MAX_DEPTH
    for text in (chain(MAX_DEPTH + 1), "[" * 5000 + "]" * 5000):
        with pytest.raises(errors.StatusError) as e:
            decode_json(text.encode())
        assert e.value.code == 400
        assert message(e) == "couldn't get version/kind; json parse error: exceeded max depth"


def test_json_syntax_errors_are_400() -> None:
    with pytest.raises(errors.StatusError) as e:
        decode_json(b'{"a": ')
    assert e.value.code == 400 and message(e).startswith("couldn't get version/kind; json parse error: ")


# ----------------------------------------------------------------------------------- YAML
def test_yaml_scalars_become_the_json_sigs_yaml_makes_of_them() -> None:
    got = decode_yaml(
        b"when: 2001-12-14\n"
        b"bin: !!binary aGVsbG8=\n"
        b"1: int key\n"
        b"1.5: float key\n"
        b"false: bool key\n"
        b"big: 123456789012345678901234567890\n"
        b"set: !!set {a}\n"
        b"pairs: !!omap [{a: 1}, {b: 2}]\n"
    )
    assert got == {
        "when": "2001-12-14",
        "bin": "hello",
        "1": "int key",
        "1.5": "float key",
        "false": "bool key",
        "big": 1.2345678901234568e29,
        "set": {"a": None},
        "pairs": [{"a": 1}, {"b": 2}],
    }


@pytest.mark.parametrize(
    ("body", "text"),
    [
        (b"gracePeriodSeconds: .inf\n", "error converting YAML to JSON: json: unsupported value: +Inf"),
        (b"a: -.inf\n", "error converting YAML to JSON: json: unsupported value: -Inf"),
        (b"a: .nan\n", "error converting YAML to JSON: json: unsupported value: NaN"),
        (b"a: &x {b: *x}\n", "error converting YAML to JSON: yaml: anchor 'x' value contains itself"),
        (b"a: *nope\n", "error converting YAML to JSON: yaml: unknown anchor 'nope' referenced"),
    ],
)
def test_yaml_that_cannot_become_json_is_400(body: bytes, text: str) -> None:
    with pytest.raises(errors.StatusError) as e:
        decode_yaml(body)
    assert e.value.code == 400 and message(e) == text


def test_yaml_surrogate_pair_escapes_decode_like_json() -> None:
    # what Python's json.dumps writes for an emoji, in a YAML document and in a JSON one
    assert decode_yaml(b'a: "\\ud83d\\udca5"\n') == {"a": "\U0001f4a5"}
    assert decode_yaml(b'{"a": "\\ud83d\\udca5"}') == {"a": "\U0001f4a5"}
    assert decode_yaml(b'a: "x\\ud83dy"\n') == {"a": "x\ufffdy"}  # a lone surrogate: U+FFFD


def test_yaml_surrogate_escapes_are_read_by_libyaml_rewritten_where_they_stand(monkeypatch) -> None:
    import yaml.scanner

    def pure_python_parser(*args: object, **kw: object) -> None:
        raise AssertionError("PyYAML's pure-Python scanner parsed the body")

    monkeypatch.setattr(yaml.scanner.Scanner, "__init__", pure_python_parser)
    doc = b'a: "x\\ud83d\\udca5y"\nb: "\\udca5 \\ud83d"\nc: \'\\ud83d\'\nd: "\\U0001F4A5 \\u00f8"\ne: !!set {"\\ud83d\\udca5": null}\n'
    assert decode_yaml(doc) == {
        "a": "x\U0001f4a5y",
        "b": "\ufffd \ufffd",
        "c": "\\ud83d",  # single-quoted: no escapes, the text as written
        "d": "\U0001f4a5 \u00f8",
        "e": {"\U0001f4a5": None},
    }
    # a large body with an unknown tag is refused at the tag (found by the fuzz: 1.2 MB took 30 s)
    big = b'{"a": {"f": !foo bar, "\\ud83d\\udca5": [' + b"{}, " * 300_000 + b"{}]}}"
    with pytest.raises(errors.StatusError) as e:
        decode_yaml(big)
    assert message(e) == (
        "error converting YAML to JSON: yaml: line 1: could not determine a constructor for the tag '!foo'"
    )
    # rewriting is bounded by the parsing it costs: past it, go-yaml's (and kube's) answer
    many = b'a: "' + b"\\ud83d\\udca5" * 5000 + b'"\n' + b"b: c\n" * 200_000
    with pytest.raises(errors.StatusError) as e:
        decode_yaml(many)
    assert (
        message(e)
        == "error converting YAML to JSON: yaml: line 1: found invalid Unicode character escape code"
    )


def test_yaml_nesting_is_bounded_with_aliases_expanded() -> None:
    block = "".join("  " * i + "a:\n" for i in range(MAX_DEPTH)) + "  " * MAX_DEPTH + "b: 1\n"
    with pytest.raises(errors.StatusError) as e:
        decode_yaml(block.encode())
    assert message(e) == f"error converting YAML to JSON: yaml: exceeded max depth of {MAX_DEPTH}"
    ok = "".join("  " * i + "a:\n" for i in range(MAX_DEPTH - 1)) + "  " * (MAX_DEPTH - 1) + "b: 1\n"
    assert max_depth(decode_yaml(ok.encode())) == MAX_DEPTH
    # an anchor 150 deep, used 150 deep: 300 levels once expanded
    half = "x: &deep " + "[" * 150 + "]" * 150 + "\ny: " + "[" * 150 + "*deep" + "]" * 150 + "\n"
    with pytest.raises(errors.StatusError) as e:
        decode_yaml(half.encode())
    assert e.value.code == 400


def laughs(levels: int, fanout: int) -> bytes:
    lines = ["a0: &a0 [lol]"]
    for level in range(1, levels + 1):
        refs = ", ".join([f"*a{level - 1}"] * fanout)
        lines.append(f"a{level}: &a{level} [{refs}]")
    return ("\n".join(lines) + "\n").encode()


def test_yaml_alias_expansion_is_bounded_by_go_yamls_ratio() -> None:
    assert len(decode_yaml(laughs(3, 10))["a3"]) == 10
    for bomb in (laughs(4, 10), laughs(9, 9)):
        with pytest.raises(errors.StatusError) as e:
            decode_yaml(bomb)
        assert e.value.code == 400
        assert message(e) == "error converting YAML to JSON: yaml: document contains excessive aliasing"


def test_decoded_yaml_aliases_are_independent_copies() -> None:
    got = decode_yaml(b"a: &x {k: v}\nb: *x\n")
    got["a"]["k"] = "changed"
    assert got["b"] == {"k": "v"}


# ----------------------------------------------------------------------------------- reading
async def _chunks(n: int, size: int, taken: list[int]) -> AsyncIterator[bytes]:
    for _ in range(n):
        taken.append(size)
        yield b"x" * size


def test_body_limit_is_enforced_while_reading() -> None:
    taken: list[int] = []
    with pytest.raises(errors.StatusError) as e:
        asyncio.run(read_limited(_chunks(64, 1024 * 1024, taken), None))
    assert e.value.code == 413 and message(e) == "Request entity too large: limit is 3145728"
    assert sum(taken) <= limits.MAX_REQUEST_BODY_BYTES + 1024 * 1024  # stopped at the limit
    taken.clear()
    with pytest.raises(errors.StatusError):
        asyncio.run(read_limited(_chunks(64, 1024 * 1024, taken), str(64 * 1024 * 1024)))
    assert taken == []  # a declared Content-Length over the limit is refused before reading
    assert asyncio.run(read_limited(_chunks(3, 1024 * 1024, []), None)) == b"x" * 3 * 1024 * 1024


def test_large_bodies_decode_off_the_event_loop_with_their_duplicate_fields() -> None:
    raw = b'{"a": "' + b"x" * bodies.OFFLOAD_BYTES + b'", "b": 1, "b": 2}'
    value, kept = asyncio.run(bodies.decode_async(raw, "application/json"))
    assert value == {"a": "x" * bodies.OFFLOAD_BYTES, "b": 2}
    assert kept == raw and duplicate_fields(kept) == ["b"]
    small = b'{"b": 1, "b": 2}'
    assert asyncio.run(bodies.decode_async(small, "application/json")) == ({"b": 2}, small)


def test_unknown_media_types_are_415() -> None:
    with pytest.raises(errors.StatusError) as e:
        bodies.decode(b"{}", "text/plain")
    assert e.value.code == 415


# ----------------------------------------------------------------------------------- patches
def test_json_patch_copy_doublings_stop_at_kubes_accumulated_copy_limit() -> None:
    ops = [{"op": "add", "path": "/x", "value": {"v": "y" * 100}}]
    ops += [{"op": "copy", "from": "/x", "path": f"/x/c{i}"} for i in range(19)]
    with pytest.raises(errors.StatusError) as e:
        json_patch({"metadata": {}}, ops)
    assert e.value.code == 422
    assert "Unable to complete the copy, the accumulated size increase of copy is " in message(e)
    assert message(e).endswith(", exceeding the limit 3145728")
    # a few copies are fine
    assert json_patch({"a": {"b": 1}}, [{"op": "copy", "from": "/a", "path": "/c"}]) == {
        "a": {"b": 1},
        "c": {"b": 1},
    }


def test_json_patch_operation_count_is_bounded() -> None:
    ops = [{"op": "test", "path": "/a", "value": 1}] * (limits.MAX_JSON_PATCH_OPERATIONS + 1)
    with pytest.raises(errors.StatusError) as e:
        json_patch({"a": 1}, ops)
    assert e.value.code == 413
    assert message(e) == (
        "Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001"
    )


def test_json_patch_cannot_nest_an_object_past_the_limit() -> None:
    target = {"a": nested(MAX_DEPTH - 1)}
    deeper = [{"op": "copy", "from": "/a", "path": "/a/a"}]
    with pytest.raises(errors.StatusError) as e:
        json_patch(target, deeper * 3)
    assert e.value.code == 422 and "exceeded max depth" in message(e)
    add = [{"op": "add", "path": "/b" + "/a" * (MAX_DEPTH - 1), "value": {}}]
    with pytest.raises(errors.StatusError) as e:
        json_patch({"b": nested(MAX_DEPTH - 1)}, add)
    assert e.value.code == 422
    # a move nests without copying: its result is checked once, as every patch result is
    moved = json_patch(
        {"a": nested(120), "b": nested(120)}, [{"op": "move", "from": "/a", "path": "/b" + "/a" * 119 + "/x"}]
    )
    with pytest.raises(errors.StatusError) as e:
        limits.check_patch_result(moved)
    assert e.value.code == 422
    assert target == {"a": nested(MAX_DEPTH - 1)}  # the target is never changed


def test_merge_patch_is_rfc7386_at_any_depth() -> None:
    assert merge_patch({"a": {"b": 1, "c": 2}, "d": 1}, {"a": {"b": None, "e": [1]}, "d": None}) == {
        "a": {"c": 2, "e": [1]}
    }
    deep = nested(MAX_DEPTH)
    assert max_depth(merge_patch({}, deep)) == MAX_DEPTH


# ----------------------------------------------------------------------------------- DeleteOptions
class _Query(dict):
    def getlist(self, key: str) -> list[str]:
        v = self.get(key)
        return [] if v is None else [v]


@pytest.mark.parametrize(
    ("body", "text"),
    [
        (
            {"preconditions": 5},
            "json: cannot unmarshal number into Go struct field DeleteOptions.preconditions of type v1.Preconditions",
        ),
        (
            {"preconditions": {"uid": 5}},
            "json: cannot unmarshal number into Go struct field Preconditions.preconditions.uid of type types.UID",
        ),
        (
            {"gracePeriodSeconds": "5"},
            "json: cannot unmarshal string into Go struct field DeleteOptions.gracePeriodSeconds of type int64",
        ),
        (
            {"gracePeriodSeconds": 1.5},
            "json: cannot unmarshal number 1.5 into Go struct field DeleteOptions.gracePeriodSeconds of type int64",
        ),
        (
            {"gracePeriodSeconds": 1e30},
            "json: cannot unmarshal number 1e+30 into Go struct field DeleteOptions.gracePeriodSeconds of type int64",
        ),
        (
            {"propagationPolicy": ["Orphan"]},
            "json: cannot unmarshal array into Go struct field DeleteOptions.propagationPolicy of type v1.DeletionPropagation",
        ),
        (
            {"orphanDependents": "yes"},
            "json: cannot unmarshal string into Go struct field DeleteOptions.orphanDependents of type bool",
        ),
        (
            {"dryRun": "All"},
            "json: cannot unmarshal string into Go struct field DeleteOptions.dryRun of type []string",
        ),
        ([1], "json: cannot unmarshal array into Go value of type v1.DeleteOptions"),
    ],
)
def test_delete_options_are_type_checked_like_gos_decoder(body: object, text: str) -> None:
    with pytest.raises(errors.StatusError) as e:
        delete_options(body, _Query())
    assert e.value.code == 400 and message(e) == text


def test_delete_options_decode() -> None:
    opts = delete_options(
        {"kind": "DeleteOptions", "gracePeriodSeconds": 5.0, "preconditions": {"uid": "u"}}, _Query()
    )
    assert opts.grace_period_seconds == 5 and opts.preconditions == {"uid": "u"}
    opts = delete_options(None, _Query(gracePeriodSeconds="0", orphanDependents="true", dryRun="All"))
    assert (opts.grace_period_seconds, opts.orphan_dependents, opts.dry_run) == (0, True, True)
    with pytest.raises(errors.StatusError) as e:
        delete_options(None, _Query(gracePeriodSeconds="soon"))
    assert e.value.code == 400
    with pytest.raises(errors.StatusError) as e:
        delete_options({"dryRun": ["Maybe"]}, _Query())
    assert e.value.code == 422 and 'dryRun: Unsupported value: "Maybe"' in message(e)


# ----------------------------------------------------------------------------------- Warning headers
def test_warning_headers_are_kubes_quoted_utf8() -> None:
    assert warnings.warning_headers(['unknown field "a\\b"']) == [b'299 - "unknown field \\"a\\\\b\\""']
    assert warnings.warning_headers(['unknown field "d\u00e4t\u4e2d"']) == [
        '299 - "unknown field \\"d\u00e4t\u4e2d\\""'.encode()
    ]


def test_warnings_kube_cannot_send_are_dropped_not_fatal() -> None:
    texts = ['unknown field "a\x00b"', "line\nbreak", "c1\x85", "lone \ud83d", "kept", "kept"]
    assert warnings.warning_headers(texts) == [b'299 - "kept"']


def test_warnings_are_truncated_as_kubes_recorder_truncates(monkeypatch: pytest.MonkeyPatch) -> None:
    # kube's TestTruncation, with its limits of 25 runes in total and 5 per item
    monkeypatch.setattr(warnings, "TRUNCATE_AT_TOTAL_RUNES", 25)
    monkeypatch.setattr(warnings, "TRUNCATE_ITEM_RUNES", 5)
    texts = ["aaaaaaaaaa", "aaaaaaaaaa", "bb", "ccc", "I\u00f1t\u00ebrn\u00e2ti\u00f4"]
    assert warnings.warning_headers(texts) == [
        b'299 - "aaaaaaaaaa"',
        b'299 - "bb"',
        b'299 - "ccc"',
        '299 - "I\u00f1t\u00ebrn\u00e2ti\u00f4"'.encode(),
    ]
    # "e" passes the total: everything is cut to 5 runes from then on; "h" comes after the limit
    got = warnings.warning_headers([*texts, "e", "ffffffffff", "ffffffffff", "gggggggggg", "h"])
    assert got == [
        b'299 - "aaaaa"',
        b'299 - "bb"',
        b'299 - "ccc"',
        '299 - "I\u00f1t\u00ebr"'.encode(),
        b'299 - "e"',
        b'299 - "fffff"',
        b'299 - "ggggg"',
    ]


def test_a_status_quoting_text_the_encoder_refuses_is_still_sent() -> None:
    from apiserver.server.app import status_response

    resp = status_response(errors.bad_request("name \ud800 refused"), ["warned \ud800", "kept"])
    assert resp.status_code == 400
    assert b'"message":"name ? refused"' in resp.body
    assert [v for k, v in resp.raw_headers if k == b"warning"] == [b'299 - "kept"']


YAML_CASES = [
    b"a: &x {k: v}\nb: *x\nc: {<<: *x, k: w, z: 1}\n",
    b"a: &a {x: 1}\nb: &b {x: 2, y: 2}\nc: {<<: [*a, *b], y: 3}\n",
    b"<<: {a: 1}\nb: 2\n",
    b"x: 1:20\ny: 0x1f\nz: 1_000\nw: 0o17\nv: 017\nu: +12\nt: -0.5e3\ns: .5\nr: ~\nq: yes\np: No\n",
    b"o: 2001-12-14t21:59:43.10-05:00\nd: 2002-12-14\n",
    b"- !!str 5\n- !!int '7'\n- !!float 3\n- !!bool true\n- !!null ''\n- !!binary aGVsbG8=\n",
    b"'1': a\n1: b\n2.5: c\nnull: d\n",
    b'a: "x\\ud83d\\udca5"\nb: "\\ud83d"\n',
    b"",
    b"# a comment only\n",
    b"---\n",
    b"a: b\n---\nc: d\n",
    b"a: [1, 2\n",
    b"a: *nope\n",
    b"a: &x [1, *x]\n",
    b"a: {<<: [1]}\n",
    b"a: !!set {a}\n",
    b"? [a]\n: 1\n",
    b"a: !foo x\n",
    b"a:\n  - b: 1\n    c: [x, {d: e}, &s scalar, *s]\n  - |\n    block\n    text\n",
    b"big: 123456789012345678901234567890\nneg: -9223372036854775809\ninf: .inf\n",
]


def _yaml_examples() -> list[bytes]:
    from pathlib import Path

    root = Path(__file__).resolve().parents[4]
    out = []
    for path in sorted([*root.glob("examples/**/*.yaml"), *root.glob("tests/e2e/charts/**/*.yaml")]):
        out.extend(part for part in path.read_bytes().split(b"\n---") if b"{{" not in part)
    return out


@pytest.mark.parametrize("raw", YAML_CASES + _yaml_examples())
def test_the_one_pass_yaml_builder_agrees_with_pyyamls_loader(raw: bytes) -> None:
    """``build_yaml`` (events straight to values) and the general path (scan, PyYAML's loader,
    conversion) give the same value or the same 400 for every document both can build."""

    def outcome(fn: object) -> object:
        try:
            return ("value", fn(raw))  # type: ignore[operator]
        except bodies._Unusual:
            return "general path only"
        except (bodies.YAMLBodyError, bodies.yaml.YAMLError) as e:
            return ("error", str(e).splitlines()[0])

    def one_pass(r: bytes) -> object:
        try:
            return bodies.build_yaml(r)
        except bodies.yaml.YAMLError as e:
            if bodies._SURROGATE_ESCAPE not in str(e):
                raise
            return bodies.build_yaml(r, bodies.yaml.SafeLoader)

    fast = outcome(one_pass)
    if fast != "general path only":
        assert fast == outcome(bodies._decode_yaml_generally)


def test_delete_options_come_from_the_body_when_there_is_one_else_from_the_query() -> None:
    query = _Query(gracePeriodSeconds="0", propagationPolicy="Orphan", dryRun="All")
    opts = delete_options({"gracePeriodSeconds": 30}, query)  # kube decodes the body and ignores the query
    assert (opts.grace_period_seconds, opts.propagation_policy, opts.dry_run) == (30, None, False)
    opts = delete_options({}, query)
    assert (opts.grace_period_seconds, opts.propagation_policy, opts.dry_run) == (None, None, False)
    opts = delete_options(None, query)
    assert (opts.grace_period_seconds, opts.propagation_policy, opts.dry_run) == (0, "Orphan", True)

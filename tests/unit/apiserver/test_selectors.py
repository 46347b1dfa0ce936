"""Label and field selectors: parsing, canonical strings, matching, and upstream error texts."""

from __future__ import annotations

import pytest

from apiserver.selectors import (
    EVERYTHING,
    NOTHING,
    FieldSelector,
    escape_field_value,
    format_label_selector,
    label_selector_from_dict,
    label_selector_string,
    new_requirement,
    parse_field_selector,
    parse_label_selector,
    selector_from_set,
    unescape_field_value,
    unsupported_fields,
)

LABEL_KEY_NAME_REGEX = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
LABEL_VALUE_REGEX = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used "
    "for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("", ""),
        ("   ", ""),
        ("a=b", "a=b"),
        ("a==b", "a==b"),
        ("a!=b", "a!=b"),
        ("a", "a"),
        ("!a", "!a"),
        ("  ! a  ", "!a"),
        ("a in (x,y)", "a in (x,y)"),
        ("a in ( y , x , x )", "a in (x,y)"),
        ("a notin (x)", "a notin (x)"),
        ("a in ()", "a in ()"),
        ("x in (foo,,baz),y,z notin ()", "x in (,baz,foo),y,z notin ()"),
        ("b=1,a=2", "a=2,b=1"),
        ("a=", "a="),
        ("a=,b", "a=,b"),
        ("in in (in)", "in in (in)"),
        ("notin=x", "notin=x"),
        ("example.com/app=web", "example.com/app=web"),
        ("a>3,b<10", "a>3,b<10"),
        ("a\t=\tb", "a=b"),
        ("a=b \0garbage(", "a=b"),
    ],
)
def test_parse_label_selector_canonical(text: str, canonical: str) -> None:
    sel = parse_label_selector(text)
    assert str(sel) == canonical
    assert sel.empty == (canonical == "")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a b", "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"),
        ("a!b", "unable to parse requirement: found '!', expected: in, notin, =, ==, !=, gt, lt"),
        ("a in", "unable to parse requirement: found '' expected: '('"),
        ("a notin x", "unable to parse requirement: found 'x' expected: '('"),
        ("a in (x y)", "unable to parse requirement: found 'y', expected: ',' or ')'"),
        ("a in (x", "unable to parse requirement: found '', expected: ',' or ')'"),
        ("a in (=)", "unable to parse requirement: found '=', expected: ',', ')' or identifier"),
        ("a=(b)", "unable to parse requirement: found '(', expected: identifier"),
        ("!", "unable to parse requirement: found '', expected: identifier"),
        ("a=b=c", "found '=', expected: ',' or 'end of string'"),
        ("!a=b", "found '=', expected: ',' or 'end of string'"),
        ("a,", "found '', expected: identifier after ','"),
        ("a,,b", "found ',', expected: identifier after ','"),
        (",a", "found ',', expected: !, identifier, or 'end of string'"),
        ("(", "found '(', expected: !, identifier, or 'end of string'"),
        ("a=b\0garbage", "found 'garbage', expected: ',' or 'end of string'"),
        (
            "app:monolith",
            f'unable to parse requirement: <nil>: Invalid value: "app:monolith": {LABEL_KEY_NAME_REGEX}',
        ),
        (
            "a/b/c=x",
            'unable to parse requirement: <nil>: Invalid value: "a/b/c": a valid label key must consist of '
            "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character "
            "(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
            "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' "
            "(e.g. 'example.com/MyName')",
        ),
        ("a=-bad", f'unable to parse requirement: values[0][a]: Invalid value: "-bad": {LABEL_VALUE_REGEX}'),
        (
            "a>x",
            "unable to parse requirement: values[0]: Invalid value: \"x\": for 'Gt', 'Lt' operators, "
            "the value must be an integer",
        ),
        (
            "a=" + "v" * 64,
            'unable to parse requirement: values[0][a]: Invalid value: "'
            + "v" * 64
            + '": must be no more than 63 bytes',
        ),
    ],
)
def test_parse_label_selector_errors(text: str, message: str) -> None:
    with pytest.raises(ValueError) as ei:
        parse_label_selector(text)
    assert str(ei.value) == message


LABELS = {"app": "web", "tier": "frontend", "gen": "7", "empty": ""}


@pytest.mark.parametrize(
    ("text", "labels", "want"),
    [
        ("", LABELS, True),
        ("", None, True),
        ("app=web", LABELS, True),
        ("app==web", LABELS, True),
        ("app=api", LABELS, False),
        ("app=web", None, False),
        ("app=web,tier=frontend", LABELS, True),
        ("app=web,tier=backend", LABELS, False),
        ("app!=api", LABELS, True),
        ("app!=web", LABELS, False),
        ("missing!=x", LABELS, True),
        ("app in (api,web)", LABELS, True),
        ("app in (api,db)", LABELS, False),
        ("missing in (a)", LABELS, False),
        ("app notin (api,db)", LABELS, True),
        ("app notin (web)", LABELS, False),
        ("missing notin (a)", LABELS, True),
        ("app", LABELS, True),
        ("missing", LABELS, False),
        ("!missing", LABELS, True),
        ("!app", LABELS, False),
        ("empty=", LABELS, True),
        ("missing=", LABELS, False),
        ("empty in ()", LABELS, True),
        ("gen>6", LABELS, True),
        ("gen>7", LABELS, False),
        ("gen<8", LABELS, True),
        ("app>1", LABELS, False),
        ("missing<1", LABELS, False),
        ("app=web,!canary,tier in (frontend),gen", LABELS, True),
    ],
)
def test_label_selector_matches(text: str, labels: dict[str, str] | None, want: bool) -> None:
    assert parse_label_selector(text).matches(labels) is want


@pytest.mark.parametrize(
    ("sel", "canonical", "matches_web"),
    [
        (None, "", False),
        ({}, "", True),
        ({"matchLabels": {}, "matchExpressions": []}, "", True),
        ({"matchLabels": {"app": "web"}}, "app=web", True),
        ({"matchLabels": {"tier": "fe", "app": "web"}}, "app=web,tier=fe", False),
        (
            {"matchExpressions": [{"key": "app", "operator": "In", "values": ["web", "api"]}]},
            "app in (api,web)",
            True,
        ),
        (
            {"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["web"]}]},
            "app notin (web)",
            False,
        ),
        ({"matchExpressions": [{"key": "app", "operator": "Exists"}]}, "app", True),
        ({"matchExpressions": [{"key": "app", "operator": "DoesNotExist"}]}, "!app", False),
        (
            {"matchLabels": {"z": "1"}, "matchExpressions": [{"key": "a", "operator": "Exists"}]},
            "a,z=1",
            False,
        ),
    ],
)
def test_label_selector_from_dict(sel: dict | None, canonical: str, matches_web: bool) -> None:
    s = label_selector_from_dict(sel)
    assert str(s) == canonical
    assert s.matches({"app": "web"}) is matches_web
    assert s.nothing is (sel is None)
    assert s.empty is (sel is not None and canonical == "")


@pytest.mark.parametrize(
    ("sel", "message"),
    [
        (
            {"matchExpressions": [{"key": "a", "operator": "Equals"}]},
            '"Equals" is not a valid label selector operator',
        ),
        ({"matchExpressions": [{"key": "a"}]}, '"" is not a valid label selector operator'),
        (
            {"matchExpressions": [{"key": "a", "operator": "In", "values": []}]},
            "values: Invalid value: null: for 'in', 'notin' operators, values set can't be empty",
        ),
        (
            {"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]},
            'values: Invalid value: ["x"]: values set must be empty for exists and does not exist',
        ),
        ({"matchLabels": {"a": "-x"}}, f'values[0][a]: Invalid value: "-x": {LABEL_VALUE_REGEX}'),
        ({"matchLabels": {"-a": "x"}}, f'key: Invalid value: "-a": {LABEL_KEY_NAME_REGEX}'),
        (
            {"matchExpressions": [{"key": "-a", "operator": "In", "values": []}]},
            f'[key: Invalid value: "-a": {LABEL_KEY_NAME_REGEX}, values: Invalid value: null: '
            "for 'in', 'notin' operators, values set can't be empty]",
        ),
    ],
)
def test_label_selector_from_dict_errors(sel: dict, message: str) -> None:
    with pytest.raises(ValueError) as ei:
        label_selector_from_dict(sel)
    assert str(ei.value) == message


@pytest.mark.parametrize(
    ("sel", "formatted", "as_string"),
    [
        (None, "<none>", ""),
        ({}, "<none>", ""),
        ({"matchLabels": {"app": "web"}}, "app=web", "app=web"),
        (
            {"matchExpressions": [{"key": "app", "operator": "In", "values": ["b", "a"]}]},
            "app in (a,b)",
            "app in (a,b)",
        ),
        ({"matchExpressions": [{"key": "app", "operator": "Bogus"}]}, "<error>", None),
    ],
)
def test_format_label_selector(sel: dict | None, formatted: str, as_string: str | None) -> None:
    assert format_label_selector(sel) == formatted
    if as_string is None:
        with pytest.raises(ValueError):
            label_selector_string(sel)
    else:
        assert label_selector_string(sel) == as_string


def test_special_selectors_and_exact_match() -> None:
    assert EVERYTHING.empty and EVERYTHING.matches(None) and str(EVERYTHING) == ""
    assert not NOTHING.empty and not NOTHING.matches({"a": "b"}) and str(NOTHING) == ""
    assert NOTHING != EVERYTHING
    sel = parse_label_selector("b in (x),a=1,c!=2")
    assert [r.key for r in sel.requirements] == ["a", "b", "c"]
    assert [r.operator for r in sel.requirements] == ["=", "in", "!="]
    assert sel.requires_exact_match("a") == "1"
    assert sel.requires_exact_match("b") == "x"
    assert sel.requires_exact_match("c") is None
    assert sel.requires_exact_match("zzz") is None
    assert parse_label_selector("a=1,b in (x)") == sel.__class__(sel.requirements[:2])
    assert selector_from_set({"b": "2", "a": "1"}) == parse_label_selector("a=1,b=2")
    assert selector_from_set({}).empty
    assert parse_label_selector("a=b") is parse_label_selector("a=b")  # compiled once


def test_new_requirement_rejects_bad_operator() -> None:
    with pytest.raises(ValueError) as ei:
        new_requirement("a", "like", ["x"])
    assert str(ei.value).startswith('operator: Unsupported value: "like": supported values: "in", "notin"')


@pytest.mark.parametrize(
    ("text", "reqs", "canonical"),
    [
        ("", (), ""),
        ("a=b", (("a", "=", "b"),), "a=b"),
        ("a==b", (("a", "=", "b"),), "a=b"),
        ("a!=b", (("a", "!=", "b"),), "a!=b"),
        ("z=1,a=2", (("a", "=", "2"), ("z", "=", "1")), "a=2,z=1"),
        ("a=b,,c=d", (("a", "=", "b"), ("c", "=", "d")), "a=b,c=d"),
        ("spec.nodeName=", (("spec.nodeName", "=", ""),), "spec.nodeName="),
        (r"a=x\,y", (("a", "=", "x,y"),), r"a=x\,y"),
        (r"a=x\=y", (("a", "=", "x=y"),), r"a=x\=y"),
        (r"a=x\\y", (("a", "=", "x\\y"),), r"a=x\\y"),
        ("a = b", (("a ", "=", " b"),), "a = b"),
        ("a!==b", (("a", "!=", "=b"),), None),
    ],
)
def test_parse_field_selector(text: str, reqs: tuple, canonical: str | None) -> None:
    if canonical is None:
        with pytest.raises(ValueError):
            parse_field_selector(text)
        return
    sel = parse_field_selector(text)
    assert sel.requirements == reqs
    assert str(sel) == canonical
    assert sel.empty is (not reqs)
    assert parse_field_selector(str(sel)) == sel


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("abc", "invalid selector: 'abc'; can't understand 'abc'"),
        ("a=b,c", "invalid selector: 'a=b,c'; can't understand 'c'"),
        (r"a=b\x", r"invalid field selector: invalid escape sequence: \x"),
        ("a=b\\", "invalid field selector: invalid escape sequence: \\"),
        ("a==b=c", "invalid field selector: unescaped character in value: 61"),
    ],
)
def test_parse_field_selector_errors(text: str, message: str) -> None:
    with pytest.raises(ValueError) as ei:
        parse_field_selector(text)
    assert str(ei.value) == message


POD = {
    "metadata.name": "web-0",
    "metadata.namespace": "default",
    "spec.nodeName": "",
    "status.phase": "Running",
}


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("", True),
        ("metadata.name=web-0", True),
        ("metadata.name==web-1", False),
        ("metadata.name!=web-1", True),
        ("spec.nodeName=", True),
        ("spec.nodeName!=", False),
        ("status.phase=Running,metadata.namespace=default", True),
        ("status.phase=Running,metadata.namespace=kube-system", False),
        ("missing=", True),
        ("missing!=x", True),
    ],
)
def test_field_selector_matches(text: str, want: bool) -> None:
    assert parse_field_selector(text).matches(POD.get) is want


def test_field_selector_helpers() -> None:
    sel = parse_field_selector("spec.nodeName=n1,metadata.name!=a,bogus=1,bogus=2,other=x")
    assert sel.fields() == {"spec.nodeName", "metadata.name", "bogus", "other"}
    assert unsupported_fields(sel, {"metadata.name", "spec.nodeName"}) == ["bogus", "other"]
    assert sel.requires_exact_match("spec.nodeName") == "n1"
    assert sel.requires_exact_match("metadata.name") is None
    assert FieldSelector().empty
    assert escape_field_value("a,b=c\\") == "a\\,b\\=c\\\\"
    assert unescape_field_value(escape_field_value("a,b=c\\")) == "a,b=c\\"

"""Name/key validators return apimachinery's exact messages."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from apiserver.validation.names import (
    go_quote,
    is_dns1035_label,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_qualified_name,
    is_valid_label_value,
    is_valid_port_name,
    is_valid_port_num,
    mask_trailing_dash,
    name_is_dns1035_label,
    name_is_dns_label,
    name_is_dns_subdomain,
    name_is_path_segment,
    regex_error,
    validate_path_segment_name,
)

DNS_LABEL_ERR = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and "
    "end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
DNS_SUBDOMAIN_ERR = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
DNS1035_ERR = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
    "character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
    "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)
KEY_NAME_ERR = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
VALUE_ERR = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used "
    "for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)


@pytest.mark.parametrize(
    ("value", "want"),
    [
        ("a", []),
        ("my-name", []),
        ("123-abc", []),
        ("a" * 63, []),
        ("a" * 64, ["must be no more than 63 characters"]),
        ("", [DNS_LABEL_ERR]),
        ("-a", [DNS_LABEL_ERR]),
        ("a-", [DNS_LABEL_ERR]),
        ("A", [DNS_LABEL_ERR]),
        ("a_b", [DNS_LABEL_ERR]),
        ("a.b", ["must not contain dots"]),
        ("a\n", [DNS_LABEL_ERR]),
        ("-" * 64, ["must be no more than 63 characters", DNS_LABEL_ERR]),
        ("é", [DNS_LABEL_ERR]),
    ],
)
def test_is_dns1123_label(value: str, want: list[str]) -> None:
    assert is_dns1123_label(value) == want


@pytest.mark.parametrize(
    ("value", "want"),
    [
        ("example.com", []),
        ("web-0", []),
        ("a" * 253, []),
        ("a" * 254, ["must be no more than 253 characters"]),
        ("", [DNS_SUBDOMAIN_ERR]),
        ("a..b", [DNS_SUBDOMAIN_ERR]),
        (".a", [DNS_SUBDOMAIN_ERR]),
        ("Web", [DNS_SUBDOMAIN_ERR]),
        ("a.b-", [DNS_SUBDOMAIN_ERR]),
    ],
)
def test_is_dns1123_subdomain(value: str, want: list[str]) -> None:
    assert is_dns1123_subdomain(value) == want


@pytest.mark.parametrize(
    ("value", "want"),
    [("svc", []), ("a1-b", []), ("1abc", [DNS1035_ERR]), ("a" * 64, ["must be no more than 63 characters"])],
)
def test_is_dns1035_label(value: str, want: list[str]) -> None:
    assert is_dns1035_label(value) == want


@pytest.mark.parametrize(
    ("value", "want"),
    [
        ("app", []),
        ("App.Name_1", []),
        ("example.com/app", []),
        ("app.kubernetes.io/name", []),
        ("a", []),
        ("", ["name part must be non-empty", KEY_NAME_ERR]),
        ("-app", [KEY_NAME_ERR]),
        ("app:x", [KEY_NAME_ERR]),
        ("a" * 64, ["name part must be no more than 63 bytes"]),
        ("example.com/", ["name part must be non-empty", KEY_NAME_ERR]),
        ("/app", ["prefix part must be non-empty"]),
        (
            "Example.com/app",
            ["prefix part " + DNS_SUBDOMAIN_ERR],
        ),
        ("x" * 254 + "/a", ["prefix part must be no more than 253 bytes"]),
        (
            "a/b/c",
            [
                "a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and "
                "end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
                "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix "
                "and '/' (e.g. 'example.com/MyName')"
            ],
        ),
    ],
)
def test_is_qualified_name(value: str, want: list[str]) -> None:
    assert is_qualified_name(value) == want


@pytest.mark.parametrize(
    ("value", "want"),
    [
        ("", []),
        ("web", []),
        ("My_Value.1", []),
        ("v" * 63, []),
        ("v" * 64, ["must be no more than 63 bytes"]),
        ("é" * 32, ["must be no more than 63 bytes", VALUE_ERR]),  # 64 UTF-8 bytes
        ("-v", [VALUE_ERR]),
        ("a b", [VALUE_ERR]),
        ("a/b", [VALUE_ERR]),
    ],
)
def test_is_valid_label_value(value: str, want: list[str]) -> None:
    assert is_valid_label_value(value) == want


@pytest.mark.parametrize(
    ("name", "prefix", "want"),
    [
        ("ok", False, []),
        (".", False, ["may not be '.'"]),
        ("..", False, ["may not be '..'"]),
        (".", True, []),
        ("a/b", False, ["may not contain '/'"]),
        ("a%b", True, ["may not contain '%'"]),
        ("a/%", False, ["may not contain '/'", "may not contain '%'"]),
        ("", False, []),
    ],
)
def test_validate_path_segment_name(name: str, prefix: bool, want: list[str]) -> None:
    assert validate_path_segment_name(name, prefix) == want
    assert name_is_path_segment(name, prefix) == want


@pytest.mark.parametrize(
    ("fn", "name", "prefix", "ok"),
    [
        (name_is_dns_subdomain, "web-", True, True),
        (name_is_dns_subdomain, "web-", False, False),
        (name_is_dns_subdomain, "web.x-", True, True),
        (name_is_dns_subdomain, "Web-", True, False),
        (name_is_dns_subdomain, "-", True, False),
        (name_is_dns_label, "web-", True, True),
        (name_is_dns_label, "a.b-", True, False),
        (name_is_dns1035_label, "svc-", True, True),
        (name_is_dns1035_label, "1svc-", True, False),
    ],
)
def test_name_funcs_with_generate_name_prefix(
    fn: Callable[[str, bool], list[str]], name: str, prefix: bool, ok: bool
) -> None:
    assert (fn(name, prefix) == []) is ok


@pytest.mark.parametrize(("name", "masked"), [("web-", "wea"), ("a-", "a"), ("-", "-"), ("web", "web")])
def test_mask_trailing_dash(name: str, masked: str) -> None:
    assert mask_trailing_dash(name) == masked


@pytest.mark.parametrize(
    ("port", "want"),
    [
        (1, []),
        (65535, []),
        (0, ["must be between 1 and 65535, inclusive"]),
        (65536, ["must be between 1 and 65535, inclusive"]),
    ],
)
def test_is_valid_port_num(port: int, want: list[str]) -> None:
    assert is_valid_port_num(port) == want


@pytest.mark.parametrize(
    ("name", "want"),
    [
        ("http", []),
        ("h2c-web", []),
        ("a" * 15, []),
        ("a" * 16, ["must be no more than 15 characters"]),
        (
            "HTTP",
            [
                "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)",
                "must contain at least one letter (a-z)",
            ],
        ),
        ("8080", ["must contain at least one letter (a-z)"]),
        ("a--b", ["must not contain consecutive hyphens"]),
        ("-ab", ["must not begin or end with a hyphen"]),
        (
            "",
            [
                "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)",
                "must contain at least one letter (a-z)",
            ],
        ),
    ],
)
def test_is_valid_port_name(name: str, want: list[str]) -> None:
    assert is_valid_port_name(name) == want


@pytest.mark.parametrize(
    ("args", "want"),
    [
        (("msg", "re"), "msg (regex used for validation is 're')"),
        (("msg", "re", "x"), "msg (e.g. 'x', regex used for validation is 're')"),
        (("msg", "re", "x", "y"), "msg (e.g. 'x',  or 'y', regex used for validation is 're')"),
    ],
)
def test_regex_error(args: tuple[str, ...], want: str) -> None:
    assert regex_error(*args) == want


@pytest.mark.parametrize(
    ("s", "want"), [("a", '"a"'), ('a"b\\', '"a\\"b\\\\"'), ("a\nb", '"a\\nb"'), ("\x01é", '"\\x01é"')]
)
def test_go_quote(s: str, want: str) -> None:
    assert go_quote(s) == want

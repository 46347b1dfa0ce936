"""Name and key validation with apimachinery's exact messages.

Each ``is_*`` function returns a list of human-readable problems (empty when valid), like
``k8s.io/apimachinery/pkg/util/validation``; callers wrap each message in a field error.

Two message families coexist upstream (as of 1.37): DNS names go through
``util/validation`` whose length error says ``characters``, while label keys and values go
through ``api/validate/content`` whose length error says ``bytes``. Both count bytes, as Go's
``len`` does.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

ValidateNameFunc = Callable[[str, bool], list[str]]

DNS1123_LABEL_MAX_LENGTH = 63
DNS1123_SUBDOMAIN_MAX_LENGTH = 253
DNS1035_LABEL_MAX_LENGTH = 63
LABEL_KEY_NAME_MAX_LENGTH = 63
LABEL_VALUE_MAX_LENGTH = 63
PORT_NAME_MAX_LENGTH = 15

_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"
_DNS1035_LABEL_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
_LABEL_KEY_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_VALUE_FMT = "(" + _LABEL_KEY_FMT + ")?"

# fullmatch, never ``$``: Python's ``$`` also matches before a trailing newline, Go's does not.
_DNS1123_LABEL_RE = re.compile(_DNS1123_LABEL_FMT)
_DNS1123_SUBDOMAIN_RE = re.compile(_DNS1123_SUBDOMAIN_FMT)
_DNS1035_LABEL_RE = re.compile(_DNS1035_LABEL_FMT)
_LABEL_KEY_RE = re.compile(_LABEL_KEY_FMT)
_LABEL_VALUE_RE = re.compile(_LABEL_VALUE_FMT)
_PORT_NAME_CHARSET_RE = re.compile("[-a-z0-9]+")
_PORT_NAME_LETTER_RE = re.compile("[a-z]")

_DNS1123_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character"
)
_DNS1123_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character"
)
_DNS1035_LABEL_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', "
    "start with an alphabetic character, and end with an alphanumeric character"
)
_LABEL_KEY_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)
_LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)


#: how many distinct valid strings each checker remembers before it starts afresh
_VALID_CACHE_LIMIT = 16384


def remember_valid(check: Callable[[str], list[str]]) -> Callable[[str], list[str]]:
    """Memoize ``check`` for the strings it accepts, so a valid value is checked once.

    Every write validates the same names, namespaces, label keys and values again; only an
    empty answer is remembered, so a caller always gets a fresh list and invalid input is
    checked (and worded) anew each time. Only exact ``str`` values are remembered: a subclass
    could compare equal to a remembered string without being checked itself.
    """
    valid: set[str] = set()

    @functools.wraps(check)
    def checked(value: str) -> list[str]:
        if type(value) is str and value in valid:
            return []
        errs = check(value)
        if not errs and type(value) is str:
            if len(valid) >= _VALID_CACHE_LIMIT:
                valid.clear()
            valid.add(value)
        return errs

    # the remembered strings themselves, read only: a hot caller that has checked ``type(v) is
    # str`` already tests ``v in f.valid`` before calling ``f`` (a call saved per known value)
    checked.valid = valid  # type: ignore[attr-defined]
    return checked


def remembered(check: Callable[[str], list[str]]) -> set[str]:
    """The (live, read-only) set of strings a :func:`remember_valid` checker accepted so far."""
    valid: set[str] = getattr(check, "valid")  # noqa: B009 - set by remember_valid, untyped
    return valid


def byte_len(value: str) -> int:
    """Go's ``len(string)``: UTF-8 bytes, computed without encoding in the common ASCII case."""
    return len(value) if value.isascii() else len(value.encode("utf-8", "surrogatepass"))


def go_quote(s: str) -> str:
    """Go's ``%q`` (``strconv.Quote``), for messages that embed a quoted value."""
    out = ['"']
    for ch in s:
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ch in _GO_ESCAPES:
            out.append(_GO_ESCAPES[ch])
        elif ch.isprintable():
            out.append(ch)
        else:
            code = ord(ch)
            if code < 0x80:
                out.append(f"\\x{code:02x}")
            elif code < 0x10000:
                out.append(f"\\u{code:04x}")
            else:
                out.append(f"\\U{code:08x}")
    out.append('"')
    return "".join(out)


_GO_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}


def max_len_error(length: int) -> str:
    """``validation.MaxLenError`` (DNS names and other util/validation checks)."""
    return f"must be no more than {length} characters"


def max_len_bytes_error(length: int) -> str:
    """``content.MaxLenError`` (label keys and values)."""
    return f"must be no more than {length} bytes"


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    """``validation.RegexError``; the doubled space before ``or`` is upstream's."""
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    parts = " or ".join(f"'{e}', " for e in examples)
    return f"{msg} (e.g. {parts}regex used for validation is '{fmt}')"


def empty_error() -> str:
    return "must be non-empty"


def inclusive_range_error(lo: int, hi: int) -> str:
    return f"must be between {lo} and {hi}, inclusive"


_LABEL_KEY_REGEX_ERR = regex_error(_LABEL_KEY_MSG, _LABEL_KEY_FMT, "MyName", "my.name", "123-abc")
_DNS1123_LABEL_REGEX_ERR = regex_error(_DNS1123_LABEL_MSG, _DNS1123_LABEL_FMT, "my-name", "123-abc")
_DNS1123_SUBDOMAIN_REGEX_ERR = regex_error(_DNS1123_SUBDOMAIN_MSG, _DNS1123_SUBDOMAIN_FMT, "example.com")
_DNS1035_LABEL_REGEX_ERR = regex_error(_DNS1035_LABEL_MSG, _DNS1035_LABEL_FMT, "my-name", "abc-123")
_LABEL_VALUE_REGEX_ERR = regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345")


@remember_valid
def is_dns1123_label(value: str) -> list[str]:
    """``IsDNS1123Label``: namespace names, StatefulSet pod hostnames."""
    errs: list[str] = []
    if byte_len(value) > DNS1123_LABEL_MAX_LENGTH:
        errs.append(max_len_error(DNS1123_LABEL_MAX_LENGTH))
    if _DNS1123_LABEL_RE.fullmatch(value) is None:
        if _DNS1123_SUBDOMAIN_RE.fullmatch(value) is not None:
            # A valid subdomain but not a label: with length checked already, it must be the dots.
            errs.append("must not contain dots")
        else:
            errs.append(_DNS1123_LABEL_REGEX_ERR)
    return errs


@remember_valid
def is_dns1123_subdomain(value: str) -> list[str]:
    """``IsDNS1123Subdomain``: most object names and label-key prefixes."""
    errs: list[str] = []
    if byte_len(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        errs.append(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH))
    if _DNS1123_SUBDOMAIN_RE.fullmatch(value) is None:
        errs.append(_DNS1123_SUBDOMAIN_REGEX_ERR)
    return errs


def _content_dns1123_subdomain(value: str) -> list[str]:
    """``content.IsDNS1123Subdomain``: same rule, ``bytes`` wording (used for label-key prefixes)."""
    errs: list[str] = []
    if byte_len(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        errs.append(max_len_bytes_error(DNS1123_SUBDOMAIN_MAX_LENGTH))
    if _DNS1123_SUBDOMAIN_RE.fullmatch(value) is None:
        errs.append(_DNS1123_SUBDOMAIN_REGEX_ERR)
    return errs


@remember_valid
def is_dns1035_label(value: str) -> list[str]:
    """``IsDNS1035Label``: Service names."""
    errs: list[str] = []
    if byte_len(value) > DNS1035_LABEL_MAX_LENGTH:
        errs.append(max_len_error(DNS1035_LABEL_MAX_LENGTH))
    if _DNS1035_LABEL_RE.fullmatch(value) is None:
        errs.append(_DNS1035_LABEL_REGEX_ERR)
    return errs


@remember_valid
def is_qualified_name(value: str) -> list[str]:
    """``IsQualifiedName`` (= ``content.IsLabelKey``): label, annotation and finalizer keys."""
    parts = value.split("/")
    errs: list[str] = []
    if len(parts) == 1:
        name = value
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part " + empty_error())
        else:
            errs.extend("prefix part " + m for m in _content_dns1123_subdomain(prefix))
    else:
        return [
            "a valid label key "
            + _LABEL_KEY_REGEX_ERR
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part " + empty_error())
    elif byte_len(name) > LABEL_KEY_NAME_MAX_LENGTH:
        errs.append("name part " + max_len_bytes_error(LABEL_KEY_NAME_MAX_LENGTH))
    if _LABEL_KEY_RE.fullmatch(name) is None:
        errs.append("name part " + _LABEL_KEY_REGEX_ERR)
    return errs


@remember_valid
def is_valid_label_value(value: str) -> list[str]:
    """``IsValidLabelValue`` (= ``content.IsLabelValue``); the empty string is valid."""
    errs: list[str] = []
    if byte_len(value) > LABEL_VALUE_MAX_LENGTH:
        errs.append(max_len_bytes_error(LABEL_VALUE_MAX_LENGTH))
    if _LABEL_VALUE_RE.fullmatch(value) is None:
        errs.append(_LABEL_VALUE_REGEX_ERR)
    return errs


def is_valid_path_segment_prefix(name: str) -> list[str]:
    """``IsValidPathSegmentPrefix``: no '/' or '%', which would break the REST path."""
    errs: list[str] = []
    if "/" in name:
        errs.append("may not contain '/'")
    if "%" in name:
        errs.append("may not contain '%'")
    return errs


def is_valid_path_segment_name(name: str) -> list[str]:
    """``IsValidPathSegmentName``: a prefix check plus the exact names '.' and '..'."""
    if name == ".":
        return ["may not be '.'"]
    if name == "..":
        return ["may not be '..'"]
    return is_valid_path_segment_prefix(name)


def validate_path_segment_name(name: str, prefix: bool) -> list[str]:
    """``path.ValidatePathSegmentName``: the ``ValidateNameFunc`` for e.g. RBAC objects."""
    return is_valid_path_segment_prefix(name) if prefix else is_valid_path_segment_name(name)


def mask_trailing_dash(name: str) -> str:
    """``maskTrailingDash``: a generateName prefix may end in '-'.

    Upstream replaces the last *two* characters with ``a``; kept as-is for identical results.
    """
    if len(name) > 1 and name.endswith("-"):
        return name[:-2] + "a"
    return name


def name_is_dns_subdomain(name: str, prefix: bool) -> list[str]:
    """``NameIsDNSSubdomain``: prefix=True validates a generateName."""
    return is_dns1123_subdomain(mask_trailing_dash(name) if prefix else name)


def name_is_dns_label(name: str, prefix: bool) -> list[str]:
    """``NameIsDNSLabel`` (also ``ValidateNamespaceName``)."""
    return is_dns1123_label(mask_trailing_dash(name) if prefix else name)


def name_is_dns1035_label(name: str, prefix: bool) -> list[str]:
    """``NameIsDNS1035Label`` (Service names)."""
    return is_dns1035_label(mask_trailing_dash(name) if prefix else name)


def name_is_path_segment(name: str, prefix: bool) -> list[str]:
    """Alias of :func:`validate_path_segment_name` with the ``name_is_*`` spelling."""
    return validate_path_segment_name(name, prefix)


validate_namespace_name: ValidateNameFunc = name_is_dns_label


def is_valid_port_num(port: int) -> list[str]:
    """``IsValidPortNum``: 1..65535."""
    if 1 <= port <= 65535:
        return []
    return [inclusive_range_error(1, 65535)]


def is_valid_port_name(port: str) -> list[str]:
    """``IsValidPortName``: an IANA service name (RFC 6335), lower case only."""
    errs: list[str] = []
    if byte_len(port) > PORT_NAME_MAX_LENGTH:
        errs.append(max_len_error(PORT_NAME_MAX_LENGTH))
    if _PORT_NAME_CHARSET_RE.fullmatch(port) is None:
        errs.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if _PORT_NAME_LETTER_RE.search(port) is None:
        errs.append("must contain at least one letter (a-z)")
    if "--" in port:
        errs.append("must not contain consecutive hyphens")
    if port and (port[0] == "-" or port[-1] == "-"):
        errs.append("must not begin or end with a hyphen")
    return errs

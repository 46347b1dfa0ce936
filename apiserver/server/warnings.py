"""``Warning`` response headers, built the way kube-apiserver's warning recorder builds them.

Warnings quote user input (``unknown field "<name>"``), so their text can hold anything a body
can: non-Latin-1 characters, NUL, newlines. kube's recorder (``filters.WithWarningRecorder``)
never fails a response over that:

* ``net.NewWarningHeader`` writes ``299 - "<text>"`` with ``"`` and ``\\`` escaped and the text
  as UTF-8; a text that is not valid UTF-8 or holds a control character (C0, DEL, C1) makes no
  header at all (the warning is dropped, the response is not);
* identical texts are sent once;
* once the texts add up to more than 4096 runes, every warning (those already recorded too) is
  cut to 256 runes.

Headers come out as bytes, so nothing downstream re-encodes them (Starlette's header API would
encode as Latin-1 and raise on anything else).
"""

from __future__ import annotations

from collections.abc import Iterable

TRUNCATE_AT_TOTAL_RUNES = 4 * 1024
TRUNCATE_ITEM_RUNES = 256


def _is_control(ch: str) -> bool:
    """Go's ``unicode.IsControl``: U+0000–U+001F and U+007F–U+009F."""
    o = ord(ch)
    return o <= 0x1F or 0x7F <= o <= 0x9F


def warning_header(text: str, agent: str = "-", code: int = 299) -> bytes | None:
    """``net.NewWarningHeader``: the header value, or None where kube would refuse to build one."""
    if any(_is_control(ch) for ch in text):
        return None
    try:
        encoded = text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: not valid UTF-8
        return None
    quoted = encoded.replace(b"\\", b"\\\\").replace(b'"', b'\\"')
    return f"{code:03d} {agent} ".encode() + b'"' + quoted + b'"'


def warning_headers(texts: Iterable[str]) -> list[bytes]:
    """The ``Warning`` header values for ``texts``, as kube's recorder adds them one by one."""
    recorded: set[str] = set()
    ordered: list[str] = []
    headers: list[bytes] = []
    written = 0
    truncating = False
    for text in texts:
        if not text or (truncating and written >= TRUNCATE_AT_TOTAL_RUNES) or text in recorded:
            continue
        recorded.add(text)
        ordered.append(text)
        if truncating and len(text) > TRUNCATE_ITEM_RUNES:
            text = text[:TRUNCATE_ITEM_RUNES]
        header = warning_header(text)
        if header is None:
            continue
        if written + len(text) <= TRUNCATE_AT_TOTAL_RUNES or truncating:
            written += len(text)
            headers.append(header)
            continue
        # over the limit: from now on every warning, the recorded ones too, is cut to 256 runes
        truncating = True
        written = 0
        headers = []
        for earlier in ordered:
            cut = earlier[:TRUNCATE_ITEM_RUNES]
            h = warning_header(cut)
            if h is not None:
                written += len(cut)
                headers.append(h)
    return headers


__all__ = ["TRUNCATE_AT_TOTAL_RUNES", "TRUNCATE_ITEM_RUNES", "warning_header", "warning_headers"]

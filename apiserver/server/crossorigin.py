"""Refuse browser-originated cross-site writes: gangplane's own guard, beyond kube-apiserver.

kube-apiserver has no such check: it relies on credentials a web page cannot attach. gangplane
can run without them (``--no-tls --anonymous`` on a laptop), where any page the developer visits
could ``fetch(url, {mode: "no-cors", method: "POST", body})`` an object into the cluster: a
request without a preflight, whose answer the page cannot read but whose write happens.

The rule is the one Go 1.25's ``net/http.CrossOriginProtection`` applies, chosen because it
keys on what browsers send and what no other client does:

* GET, HEAD and OPTIONS pass (they change nothing; a page cannot read their answers without CORS
  headers, which gangplane never sends).
* ``Sec-Fetch-Site`` (every current browser sends it): ``same-origin`` or ``none`` (typed by the
  user, a bookmark) pass; ``cross-site`` or ``same-site`` is refused.
* Without it (an older browser): an ``Origin`` whose host is the request's ``Host`` passes, any
  other ``Origin`` (``null`` included) is refused; no ``Origin`` at all is not a browser's
  cross-site request (kubectl, client-go, curl send neither header) and passes.
* An origin named with ``--allow-origin`` (``scheme://host[:port]``, exactly as the browser sends
  it) passes in every case: a UI served from elsewhere that should be able to write.

The refusal is a 403 ``Forbidden`` Status naming the origin and the flag. :class:`CrossOriginGuard`
is used by the front door on every request, and by anything else that serves browsers.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Iterable

from apiserver import errors

#: the methods a page may send across sites: they write nothing
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def parse_origin(value: str) -> str:
    """A trusted origin as a browser sends it (``scheme://host[:port]``, lower-case); ValueError
    for anything else (a path, a query, a missing scheme), so a typo in the flag is found at start."""
    u = urllib.parse.urlsplit(value.strip())
    if u.scheme not in ("http", "https") or not u.netloc or u.path not in ("", "/") or u.query or u.fragment:
        raise ValueError(f"--allow-origin {value!r}: want scheme://host[:port], e.g. http://localhost:3000")
    if u.username or u.password:
        raise ValueError(f"--allow-origin {value!r}: an origin has no user or password")
    return f"{u.scheme}://{u.netloc}".lower()


def _origin_host(origin: str) -> str | None:
    try:
        u = urllib.parse.urlsplit(origin)
    except ValueError:
        return None
    return u.netloc.lower() if u.scheme and u.netloc else None


class CrossOriginGuard:
    """Decides whether a request is a browser's cross-site write (see the module docstring)."""

    def __init__(self, trusted_origins: Iterable[str] = ()) -> None:
        self.trusted = frozenset(parse_origin(o) for o in trusted_origins)

    def check(
        self, method: str, host: str, origin: str | None, sec_fetch_site: str | None
    ) -> errors.StatusError | None:
        """None when the request may go on; else the 403 to answer. ``host`` is the ``Host``
        header; ``origin`` and ``sec_fetch_site`` are None when the header is absent."""
        if method.upper() in SAFE_METHODS:
            return None
        if origin is not None and origin.strip().lower() in self.trusted:
            return None
        if sec_fetch_site is not None:
            site = sec_fetch_site.strip().lower()
            if site in ("same-origin", "none"):
                return None
            return _refused(origin, f"Sec-Fetch-Site: {site}")
        if origin is None:
            return None
        if _origin_host(origin) == host.strip().lower():
            return None
        return _refused(origin, "its Origin is not this server's")

    def check_headers(self, method: str, headers: Iterable[tuple[bytes, bytes]]) -> errors.StatusError | None:
        """:meth:`check` over raw ASGI headers (the first of a repeated header counts)."""
        if method.upper() in SAFE_METHODS:
            return None
        found: dict[bytes, str] = {}
        for k, v in headers:
            k = k.lower()
            if k in (b"host", b"origin", b"sec-fetch-site") and k not in found:
                found[k] = v.decode("latin-1")
        return self.check(method, found.get(b"host", ""), found.get(b"origin"), found.get(b"sec-fetch-site"))


def _refused(origin: str | None, why: str) -> errors.StatusError:
    shown = origin if origin is not None else "(none)"
    return errors.StatusError(
        403,
        "Forbidden",
        f"cross-site request refused: a write from a browser page of origin {shown!s} ({why}); "
        "gangplane accepts writes from browsers only from its own origin or from an origin named with "
        "--allow-origin",
    )

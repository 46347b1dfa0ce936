"""``gangplane serve --webhook-service NAMESPACE/NAME[:PORT]=HOST:PORT`` parsing."""

from __future__ import annotations

import pytest

from gangplane.cli import parse_webhook_services


def test_webhook_service_flag() -> None:
    assert parse_webhook_services(["hooks/op=127.0.0.1:9443", "hooks/op:8443=localhost:1"]) == {
        "hooks/op": "127.0.0.1:9443",
        "hooks/op:8443": "localhost:1",
    }
    for bad in ("op=127.0.0.1:9443", "hooks/op", "hooks/op=127.0.0.1", "hooks/op=host:x"):
        with pytest.raises(ValueError):
            parse_webhook_services([bad])

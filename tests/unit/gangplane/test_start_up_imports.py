"""What a started control plane has not imported: the modules of features it has not been asked
for yet (session 31: httpx for admission webhooks, the exec/attach/port-forward streams and the
simulated containers' shell). They
cost every ``gangplane serve`` its start-up time otherwise (issue #22's "cold start stays where it
is"); each is imported by the first request that needs it."""

from __future__ import annotations

import subprocess
import sys

#: modules a plane that has served no webhook call and no exec, attach, port-forward or log
#: request does not need
LAZY = (
    "httpx",
    "apiserver.server.remotecommand",
    "apiserver.server.streams",
    "apiserver.server.spdy",
    "apiserver.kubeletsim.shell",
    "tarfile",
    "numpy",
)

_CODE = """
import asyncio, sys
from apiserver.client.interface import PODS
from gangplane.controlplane import ControlPlane

async def main():
    plane = ControlPlane()
    await plane.start()
    try:
        await plane.client("test").list(PODS, "default")
    finally:
        await plane.stop()

asyncio.run(main())
loaded = [m for m in LAZY if m in sys.modules]
assert not loaded, f"imported at start-up: {loaded}"
"""


def test_a_started_plane_has_not_imported_the_features_it_was_not_asked_for() -> None:
    code = f"LAZY = {LAZY!r}\n" + _CODE
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_the_check_sees_a_module_that_was_imported() -> None:
    # the same check fails once one of them is imported (it can fail)
    code = f"LAZY = {LAZY!r}\nimport apiserver.server.streams\n" + _CODE
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert "imported at start-up: ['apiserver.server.streams'" in done.stderr

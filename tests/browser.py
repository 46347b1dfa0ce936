"""A real headless Chromium for the tests (Debian's ``chromium`` + ``chromium-driver``, driven by selenium).

Installed the way the etcd tests get etcd: when the binaries are missing and the tests run as
root on a Debian-like system, ``apt-get install`` fetches them once; anywhere that is impossible
the test skips and says why.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

CHROMIUM_FLAGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1500,950",
)
BINARIES = ("chromium", "chromedriver")


def _missing() -> list[str]:
    return [b for b in BINARIES if shutil.which(b) is None]


def ensure_chromium() -> tuple[str, str]:
    """Paths of chromium and chromedriver, installing Debian's packages if needed; skips if impossible."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        pytest.skip("selenium is not installed (pip install -e '.[test]')")
    if _missing():
        if os.name != "posix" or os.geteuid() != 0 or shutil.which("apt-get") is None:
            pytest.skip(
                f"{', '.join(_missing())} missing and cannot be installed here (needs root and apt-get): "
                "apt-get install chromium chromium-driver"
            )
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        for cmd in (["apt-get", "update"], ["apt-get", "install", "-y", "chromium", "chromium-driver"]):
            proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900)
            if proc.returncode != 0:
                pytest.skip(f"{' '.join(cmd)} failed: {proc.stderr.strip()[-500:]}")
        if _missing():
            pytest.skip(f"{', '.join(_missing())} still missing after apt-get install")
    return shutil.which("chromium") or "", shutil.which("chromedriver") or ""


@contextmanager
def chromium(*, insecure_certs: bool = True) -> Iterator[Any]:
    """A fresh headless Chromium (own profile directory), quit on exit."""
    binary, driver_path = ensure_chromium()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="gangplane-chromium-")
    options = webdriver.ChromeOptions()
    for flag in (*CHROMIUM_FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    options.binary_location = binary
    # the server's CA is generated at start and is in the kubeconfig, not in Chromium's NSS store
    options.accept_insecure_certs = insecure_certs
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(driver_path))
    try:
        yield driver
    finally:
        try:
            driver.quit()
        except Exception:  # a hung session (a test timed out in it): stop the driver regardless
            driver.service.stop()
        _kill_browser(profile)
        shutil.rmtree(profile, ignore_errors=True)


def _kill_browser(profile: str) -> None:
    """End the Chromium started with ``profile`` if ``quit`` left it behind (ours: its profile dir is unique)."""
    for entry in Path("/proc").iterdir() if Path("/proc").is_dir() else ():
        if not entry.name.isdigit():
            continue
        try:
            args = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if f"--user-data-dir={profile}".encode() in args and not any(a.startswith(b"--type=") for a in args):
            with contextlib.suppress(OSError):
                os.kill(int(entry.name), signal.SIGKILL)


# A condition checked on every animation frame of the page until it holds (or the time is up):
# the test waits on the page's own render loop, never on a sleep.
# (The check is pasted into the script: the page's CSP forbids ``new Function``.)
WAIT_JS = """
const [timeoutMs, done] = [arguments[0], arguments[arguments.length - 1]];
const check = (gp) => { BODY };
const start = performance.now();
const tick = () => {
  let value = null;
  try { value = check(window.gangplane); } catch (e) { value = null; }
  if (value) { done({ok: true, value, ms: performance.now() - start}); return; }
  if (performance.now() - start > timeoutMs) { done({ok: false, value: null, ms: performance.now() - start}); return; }
  requestAnimationFrame(tick);
};
tick();
"""


def wait_page(driver: Any, body: str, timeout: float = 20.0, what: str = "") -> Any:
    """Run JS ``body`` (``gp`` is ``window.gangplane``; return a truthy value when done) each frame."""
    driver.set_script_timeout(timeout + 5)
    res = driver.execute_async_script(WAIT_JS.replace("BODY", body), timeout * 1000)
    if not res["ok"]:
        logs = "\n".join(str(e) for e in driver.get_log("browser"))
        raise AssertionError(
            f"the page did not show {what or body!r} within {timeout}s\nbrowser log:\n{logs}"
        )
    return res["value"]

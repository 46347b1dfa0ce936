"""Helpers for the real-kubectl end-to-end tests (``tests/e2e/test_kubectl_*.py``).

Every kubectl run has a timeout; long-running commands (``get -w``, ``wait``, ``rollout status``)
run as subprocesses whose output is polled with a deadline. Namespaces are created over plain HTTP
(cheaper than a kubectl process) with a unique name per test.
"""

from __future__ import annotations

import json
import os
import queue
import re
import subprocess
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import Kubectl, Server

TIMEOUT = 30.0
_KLOG_INFO = re.compile(r"I\d{4} ")


def namespace(server: Server, prefix: str = "k") -> str:
    name = f"{prefix}-{uuid.uuid4().hex[:8]}"
    r = httpx.post(
        server.url + "/api/v1/namespaces",
        json={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}},
        timeout=TIMEOUT,
    )
    assert r.status_code == 201, r.text
    return name


def delete_namespace(server: Server, name: str) -> None:
    """Start deleting a test namespace (its pods would otherwise hold simulated node capacity)."""
    httpx.delete(f"{server.url}/api/v1/namespaces/{name}", timeout=TIMEOUT)


#: client-go's reflector logging the end of a watch that kubectl itself cancelled (the command
#: was done) when the cancel lands while a chunk is being read. kubectl prints it against real
#: clusters too (werf/kubedog#364 shows it from a kube-apiserver); it says nothing of the server.
_OWN_CANCEL = re.compile(r"^[IW]\d{4} .*watch (?:ended with error|of .* ended with).*context canceled")


def quiet(proc: subprocess.CompletedProcess[str]) -> str:
    """A successful run that printed no warning or error (as against a real cluster); its stdout."""
    assert proc.returncode == 0, f"rc={proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    low = "\n".join(line for line in proc.stderr.splitlines() if not _OWN_CANCEL.match(line)).lower()
    assert "warning" not in low and "error" not in low, proc.stderr
    return proc.stdout


def ok(kubectl: Kubectl, *args: str, input: str | None = None, timeout: float = TIMEOUT) -> str:
    return quiet(kubectl.run(*args, input=input, check=False, timeout=timeout))


def fails(
    kubectl: Kubectl, *args: str, input: str | None = None, timeout: float = TIMEOUT
) -> subprocess.CompletedProcess[str]:
    proc = kubectl.run(*args, input=input, check=False, timeout=timeout)
    assert proc.returncode != 0, f"expected a failure\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc


class Background:
    """A kubectl subprocess (``get -w``, ``wait``, ``rollout status``) read by two threads.

    Run it with ``-v=6`` and call :meth:`wait_request` to know when its watch is established.
    """

    def __init__(self, kubectl: Kubectl, *args: str, env: dict[str, str] | None = None) -> None:
        env = {
            "PATH": os.environ.get("PATH", ""),
            "HOME": str(kubectl.home),
            "KUBECONFIG": str(kubectl.server.kubeconfig),
            "KUBECTL_KUBERC": "false",
            **(env or {}),
        }
        self.proc = subprocess.Popen(
            [str(kubectl.binary), *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        self.lines: list[str] = []
        self._err: list[str] = []
        self._q: queue.Queue[str | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._err_reader = threading.Thread(target=self._read_err, daemon=True)
        self._err_reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._q.put(line.rstrip("\n"))
        self._q.put(None)

    def _read_err(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self._err.append(line)

    def wait_line(self, pred: Callable[[str], bool], timeout: float = TIMEOUT) -> str:
        """The first stdout line (seen so far or later) matching ``pred``; fails at the deadline."""
        for line in self.lines:
            if pred(line):
                return line
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            try:
                line = self._q.get(timeout=left)
            except queue.Empty:
                break
            if line is None:
                self._q.put(None)
                break
            self.lines.append(line)
            if pred(line):
                return line
        self.stop()
        raise AssertionError(
            f"no matching line within {timeout}s; stdout so far:\n"
            + "\n".join(self.lines)
            + f"\nstderr:\n{self.stderr}"
        )

    def finish(self, timeout: float = TIMEOUT) -> tuple[int, str, str]:
        """Wait for the process to exit: (returncode, stdout, stderr)."""
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.stop()
            raise AssertionError(
                f"kubectl did not finish within {timeout}s; stdout:\n" + "\n".join(self.lines)
            ) from None
        self._reader.join(5)
        self._err_reader.join(5)
        while True:
            try:
                line = self._q.get_nowait()
            except queue.Empty:
                break
            if line is not None:
                self.lines.append(line)
        return self.proc.returncode, "\n".join(self.lines), self.stderr

    @property
    def stderr(self) -> str:
        """stderr without kubectl's ``-v`` request logging (klog ``I`` lines)."""
        return "".join(line for line in self._err if not _KLOG_INFO.match(line))

    def wait_request(self, fragment: str, timeout: float = TIMEOUT) -> None:
        """With ``-v=6``: wait until kubectl logged a response for a URL containing ``fragment``
        (e.g. ``watch=true``: the watch is established, so later changes reach it)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(fragment in line and '"Response"' in line for line in list(self._err)):
                return
            if self.proc.poll() is not None and not self._err_reader.is_alive():
                break
            time.sleep(0.02)
        self.stop()
        raise AssertionError(f"kubectl sent no request with {fragment!r}; stderr:\n" + "".join(self._err))

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        self._reader.join(5)
        self._err_reader.join(5)

    def __enter__(self) -> Background:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()
        for s in (self.proc.stdout, self.proc.stderr):
            if s is not None:
                s.close()


def http_get(server: Server, path: str) -> httpx.Response:
    return httpx.get(server.url + path, timeout=TIMEOUT)


def http_patch(
    server: Server, path: str, body: Any, content_type: str = "application/merge-patch+json"
) -> httpx.Response:
    return httpx.patch(
        server.url + path, content=json.dumps(body), headers={"Content-Type": content_type}, timeout=TIMEOUT
    )


def ns_fixture(prefix: str) -> Any:
    """A per-test namespace fixture, deleted afterwards: ``ns = ns_fixture("kb")`` in a test module."""

    @pytest.fixture
    def ns(server: Server) -> Any:
        name = namespace(server, prefix)
        yield name
        delete_namespace(server, name)

    return ns

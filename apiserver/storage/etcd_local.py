"""A local etcd for tests and benchmarks (as kube's ``hack/lib/etcd.sh``): Debian's ``etcd-server``,
installed on demand, one or more members on loopback ports.

The etcd backend is exercised against the real server, never a fake: :func:`etcd_binary` finds
``etcd`` or installs the Debian package (as root, after ``apt-get update``); where neither works it
raises :class:`EtcdNotInstalled` saying why (tests skip with that reason). :class:`EtcdCluster`
starts the members on free loopback ports in a directory of the caller's and waits for each one to
log that it serves clients.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import threading
import uuid
from pathlib import Path

_INSTALL_LOCK = threading.Lock()
#: logged once the member has joined the cluster and accepts clients (etcd 3.4 and 3.5, zap logger)
READY_LINE = "serving client traffic"


class EtcdNotInstalled(RuntimeError):
    """No etcd binary, and none could be installed here (the message says why)."""


def etcd_binary() -> str:
    """The path of ``etcd``, installing Debian's ``etcd-server`` first if it is missing."""
    with _INSTALL_LOCK:
        found = shutil.which("etcd")
        if found:
            return found
        if shutil.which("apt-get") is None or os.geteuid() != 0:
            raise EtcdNotInstalled(
                "etcd is not installed and cannot be: apt-get etcd-server needs root on Debian"
            )
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        for cmd in (["apt-get", "update", "-q"], ["apt-get", "install", "-y", "-q", "etcd-server"]):
            done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
            if done.returncode != 0:
                raise EtcdNotInstalled(
                    f"cannot install etcd-server ({' '.join(cmd)}): {done.stderr.strip()[-400:]}"
                )
        found = shutil.which("etcd")
        if not found:
            raise EtcdNotInstalled("apt-get installed etcd-server but no etcd binary is on PATH")
        return found


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class _PortTaken(Exception):
    """A member could not bind its port: another process took it after it was picked."""


class _Member:
    def __init__(self, name: str, client_port: int, peer_port: int, data_dir: Path) -> None:
        self.name = name
        self.client_port = client_port
        self.peer_port = peer_port
        self.data_dir = data_dir
        self.proc: subprocess.Popen[str] | None = None
        self.ready = threading.Event()
        self.serving = False
        self.reader: threading.Thread | None = None
        self.log: list[str] = []

    @property
    def client_url(self) -> str:
        return f"http://127.0.0.1:{self.client_port}"

    @property
    def peer_url(self) -> str:
        return f"http://127.0.0.1:{self.peer_port}"

    def _drain(self) -> None:
        assert self.proc is not None and self.proc.stderr is not None
        for line in self.proc.stderr:
            self.log.append(line)
            if READY_LINE in line:
                self.serving = True
                self.ready.set()
        self.ready.set()  # the process is gone: whoever waits for it to be ready learns at once


class EtcdCluster:
    """``size`` etcd members forming one cluster; ``endpoints`` is what ``--etcd-servers`` takes."""

    def __init__(self, tmp: Path, size: int = 1) -> None:
        self.binary = etcd_binary()
        self.tmp = tmp
        self.size = size
        self.members: list[_Member] = []
        self._place()

    def _place(self) -> None:
        """Fresh free ports, data dirs and cluster token for every member."""
        attempt = uuid.uuid4().hex[:8]
        self.members = [
            _Member(f"m{i}", free_port(), free_port(), self.tmp / f"etcd-{attempt}-m{i}")
            for i in range(self.size)
        ]
        self.token = f"gangplane-test-{attempt}"

    @property
    def endpoints(self) -> str:
        return ",".join(m.client_url for m in self.members)

    def start(self, timeout: float = 60.0, attempts: int = 3) -> EtcdCluster:
        """Start the members; a port taken meanwhile by another process means new ports, up to
        ``attempts`` times (free ports are only free when they are picked)."""
        for attempt in range(attempts):
            try:
                return self._start(timeout)
            except _PortTaken:
                self.stop()
                if attempt == attempts - 1:
                    raise RuntimeError("etcd could not bind free loopback ports") from None
                self._place()
        return self

    def _start(self, timeout: float) -> EtcdCluster:
        for m in self.members:
            self._launch(m)
        for m in self.members:
            self._await(m, timeout)
        return self

    def _launch(self, m: _Member) -> None:
        initial = ",".join(f"{x.name}={x.peer_url}" for x in self.members)
        m.ready, m.serving, m.log = threading.Event(), False, []
        m.proc = subprocess.Popen(
            [
                self.binary,
                "--name",
                m.name,
                "--data-dir",
                str(m.data_dir),
                "--listen-client-urls",
                m.client_url,
                "--advertise-client-urls",
                m.client_url,
                "--listen-peer-urls",
                m.peer_url,
                "--initial-advertise-peer-urls",
                m.peer_url,
                "--initial-cluster",
                initial,
                "--initial-cluster-state",
                "new",
                "--initial-cluster-token",
                self.token,
                "--logger",
                "zap",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        m.reader = threading.Thread(target=m._drain, name=f"etcd-{m.name}-log", daemon=True)
        m.reader.start()

    def _await(self, m: _Member, timeout: float) -> None:
        if not (m.ready.wait(timeout) and m.serving):
            log = "".join(m.log[-20:])
            if "address already in use" in log:
                raise _PortTaken(m.name)
            self.stop()
            raise RuntimeError(f"etcd member {m.name} did not become ready in {timeout:g}s:\n{log}")

    def kill(self, index: int) -> None:
        """kill -9 one member (its data dir stays, for :meth:`restart`)."""
        m = self.members[index]
        if m.proc is not None and m.proc.poll() is None:
            m.proc.kill()
            m.proc.wait(15)
        if m.reader is not None:
            m.reader.join(15)
        if m.proc is not None and m.proc.stderr is not None:
            m.proc.stderr.close()

    def restart(self, index: int, timeout: float = 60.0) -> None:
        """Start a killed member again on its data dir and ports."""
        m = self.members[index]
        self._launch(m)
        self._await(m, timeout)

    def stop(self) -> None:
        """Kill the members: their data is throwaway, and a graceful stop of a member whose peers are
        gone waits for a leadership transfer that cannot happen."""
        for m in self.members:
            if m.proc is not None and m.proc.poll() is None:
                m.proc.kill()
        for m in self.members:
            if m.proc is None:
                continue
            m.proc.wait(15)
            if m.reader is not None:
                m.reader.join(15)  # it ends at the log's end, once the process is gone
            if m.proc.stderr is not None:
                m.proc.stderr.close()

    def __enter__(self) -> EtcdCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

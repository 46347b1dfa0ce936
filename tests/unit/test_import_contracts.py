"""The import-linter contracts in pyproject.toml hold, and a forbidden import really breaks them.

Each negative case copies the project's packages and pyproject.toml into a temporary directory,
adds one import the architecture forbids, and runs ``lint-imports`` there: the run must fail and
name the broken contract. This proves the contracts the README's test command checks are not
vacuous (a contract whose modules are misspelled, say, would pass everything).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("gangplane", "apiserver", "controllers", "scheduler", "resourceclaims", "featuregates", "bench")
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def run_lint_imports(cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(cwd)}
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", "--no-logo"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A copy of the project's packages (sources only) and its pyproject.toml."""
    for pkg in PACKAGES:
        shutil.copytree(ROOT / pkg, tmp_path / pkg, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def add_import(tree: Path, module: str, statement: str) -> None:
    path = tree / (module.replace(".", "/") + ".py")
    if not path.exists():
        path = tree / module.replace(".", "/") / "__init__.py"
    path.write_text(path.read_text() + f"\n{statement}\n")


def test_the_project_keeps_every_contract(tree: Path) -> None:
    res = run_lint_imports(tree)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "0 broken" in res.stdout


@pytest.mark.parametrize(
    ("module", "statement", "contract"),
    [
        (
            "controllers.base",
            "import apiserver.registry.generic  # noqa",
            "Components reach the API only through the client",
        ),
        (
            "scheduler.nodeinfo",
            "from apiserver.registry.strategies import podspec  # noqa",
            "Components reach the API only through the client",
        ),
        ("controllers.manager", "import gangplane.controlplane  # noqa", "Layers:"),
        ("apiserver.client.informer", "import controllers.base  # noqa", "Layers:"),
        ("apiserver.meta", "import apiserver.client.interface  # noqa", "Layers:"),
        ("controllers.statefulset.controller", "import scheduler.queue  # noqa", "Layers:"),
        (
            "apiserver.registry.generic",
            "import scheduler.scheduler  # noqa",
            "apiserver (the API server, its machinery and the client library) imports no",
        ),
        (
            "apiserver.server.app",
            "import gangplane.controlplane  # noqa",
            "apiserver (the API server, its machinery and the client library) imports no",
        ),
        (
            "scheduler.framework",
            "import scheduler.plugins.node_name  # noqa",
            "The scheduler framework never imports its plugins",
        ),
        (
            "featuregates.gates",
            "import apiserver.meta  # noqa",
            "featuregates imports nothing of the project",
        ),
        (
            "scheduler.interfaces",
            "import scheduler.framework  # noqa",
            "The scheduler's plugin interfaces import no runtime",
        ),
        (
            "apiserver.rest.resources",
            "import apiserver.registry.generic  # noqa",
            "apiserver.rest (the resource table and the strategy protocol) imports none",
        ),
        (
            "apiserver.client.http",
            "import apiserver.server.localclient  # noqa",
            "apiserver.client (protocol, HTTP client, informers, work queue) imports none",
        ),
        (
            "apiserver.apiextensions.printers",
            "import apiserver.server.tables  # noqa",
            "apiserver.apiextensions (CRDs and their printers) never imports the HTTP server",
        ),
        (
            "gangplane.standalone",
            "import gangplane.cli  # noqa",
            "Layers:",
        ),
    ],
)
def test_a_forbidden_import_breaks_its_contract(
    tree: Path, module: str, statement: str, contract: str
) -> None:
    add_import(tree, module, statement)
    res = run_lint_imports(tree)
    assert res.returncode != 0, res.stdout
    broken = [line for line in res.stdout.splitlines() if line.endswith("BROKEN") or "BROKEN" in line]
    assert broken, res.stdout
    assert contract in res.stdout.split("Broken contracts")[-1], res.stdout

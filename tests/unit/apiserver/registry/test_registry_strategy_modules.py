"""The strategy modules are a static import table: a module without ``STRATEGIES`` or a served resource
no module defines is an error when the API is built (``gangplane serve`` exits 2 naming it)."""

from __future__ import annotations

from types import ModuleType

import pytest

from apiserver.registry import builtin
from apiserver.registry.builtin import StrategyModuleError
from apiserver.registry.strategies import pod_defaults
from apiserver.server.instance import build_api
from gangplane import cli


def test_every_builtin_resource_has_a_strategy_from_an_imported_module() -> None:
    assert all(isinstance(m, ModuleType) for m in builtin._STRATEGY_MODULES)
    strategies = builtin._load_strategies()
    for rd in builtin.builtin_resources():
        assert strategies[(rd.group, rd.plural)] is rd.strategy


def test_a_module_without_a_strategies_table_is_rejected(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(builtin, "_STRATEGY_MODULES", (*builtin._STRATEGY_MODULES, pod_defaults))
    with pytest.raises(
        StrategyModuleError,
        match=r"^strategy module apiserver\.registry\.strategies\.pod_defaults defines no STRATEGIES table$",
    ):
        build_api()


def test_a_resource_no_module_defines_is_rejected(monkeypatch: pytest.MonkeyPatch) -> None:
    kept = tuple(m for m in builtin._STRATEGY_MODULES if not m.__name__.endswith(".batch"))
    monkeypatch.setattr(builtin, "_STRATEGY_MODULES", kept)
    with pytest.raises(StrategyModuleError, match=r"^no strategy for jobs\.batch in any of "):
        build_api()


def test_gangplane_serve_refuses_to_start_without_a_strategy(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    kept = tuple(m for m in builtin._STRATEGY_MODULES if not m.__name__.endswith(".batch"))
    monkeypatch.setattr(builtin, "_STRATEGY_MODULES", kept)
    assert cli.main(["serve", "--port", "0", "--kubeconfig", "unused.kubeconfig"]) == 2
    err = capsys.readouterr().err
    assert "gangplane: cannot build the API server: no strategy for jobs.batch in any of " in err

"""``pytest --gangplane-ui``: the plugin serves the live view of each test's plane and prints its URL."""

from __future__ import annotations

import re

import pytest

from tests.plugin.test_pytest_plugin import run

pytest_plugins = ["pytester"]

VIEW_TESTS = """
import ssl
import urllib.error
import urllib.request

def fetch(url, headers=None):
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()

def test_in_process(gangplane):
    url = gangplane.control_plane.url
    assert url.startswith("http://127.0.0.1:")
    code, page = fetch(url + "/ui/")
    assert code == 200 and '<canvas id="board"' in page
    # only the view's session opens the API of an in-process plane: no token was handed out
    assert fetch(url + "/api/v1/nodes")[0] == 401

def test_server(gangplane_server):
    code, page = fetch(gangplane_server.server + "/ui/")
    assert code == 200 and '<canvas id="board"' in page
"""


def test_gangplane_ui_prints_a_login_url_per_plane_and_serves_the_view(pytester: pytest.Pytester) -> None:
    result = run(pytester, VIEW_TESTS, "--gangplane-ui", "--gangplane-ui-port", "0")
    result.assert_outcomes(passed=2)
    out = result.stdout.str()
    links = re.findall(r"gangplane: live view \((test_user\.py::\w+)\) \(one-time login link\): (\S+)", out)
    assert [name for name, _ in links] == ["test_user.py::test_in_process", "test_user.py::test_server"], out
    assert all(re.fullmatch(r"http://127\.0\.0\.1:\d+/ui/login\?token=[\w-]+", url) for _, url in links)


def test_without_the_option_nothing_is_served(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
def test_it(gangplane):
    assert gangplane.control_plane.url == ""
""",
    )
    result.assert_outcomes(passed=1)
    assert "live view" not in result.stdout.str()

"""The front door of ``gangplane serve``: bearer token by default, Host check, 415, ``--anonymous``, ``--tls``.

Each test starts its own server (the shared e2e server runs with ``--anonymous`` for raw-HTTP
tests) and drives it as a user, a script or a hostile web page would.
"""

from __future__ import annotations

import base64
import ssl
import stat
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import yaml
from kubernetes import client as k8s
from kubernetes import config as k8s_config

from tests.e2e.conftest import Kubectl, Server, _start_server, _stop

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """Plain HTTP, token required: raw clients that send the token (the Python client does) get in."""
    s = _start_server(tmp_path_factory.mktemp("guarded"), ["--no-tls"])
    yield s
    _stop(s)


@pytest.fixture(scope="module")
def tls_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    s = _start_server(tmp_path_factory.mktemp("tls"), [])
    yield s
    _stop(s)


def _token(server: Server) -> str:
    cfg = yaml.safe_load(server.kubeconfig.read_text())
    return cfg["users"][0]["user"]["token"]


def test_without_the_token_401_with_it_200(guarded: Server) -> None:
    r = httpx.get(f"{guarded.url}/api/v1/namespaces")
    assert r.status_code == 401
    assert r.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "Unauthorized",
        "reason": "Unauthorized",
        "code": 401,
    }
    r = httpx.get(f"{guarded.url}/api/v1/namespaces", headers={"Authorization": f"Bearer {_token(guarded)}"})
    assert r.status_code == 200
    assert {i["metadata"]["name"] for i in r.json()["items"]} >= {"default", "kube-system"}


def test_a_wrong_token_or_scheme_is_401(guarded: Server) -> None:
    for auth in ("Bearer nope", "Basic YWRtaW46YWRtaW4=", _token(guarded)):
        assert httpx.get(f"{guarded.url}/api/v1/pods", headers={"Authorization": auth}).status_code == 401


@pytest.mark.parametrize("path", ["/healthz", "/livez", "/readyz", "/version"])
def test_public_info_stays_open(guarded: Server, path: str) -> None:
    assert httpx.get(f"{guarded.url}{path}").status_code == 200


def test_kubeconfig_is_private_and_names_the_token(guarded: Server) -> None:
    mode = stat.S_IMODE(guarded.kubeconfig.stat().st_mode)
    assert mode == 0o600
    assert len(_token(guarded)) >= 40


def test_cross_origin_text_plain_post_is_415_and_stores_nothing(guarded: Server) -> None:
    # what a web page's <form enctype="text/plain"> can send without a CORS preflight
    body = '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"pwned"}}'
    headers = {"Content-Type": "text/plain", "Origin": "http://evil.example"}
    r = httpx.post(f"{guarded.url}/api/v1/namespaces/default/configmaps", content=body, headers=headers)
    assert r.status_code == 403  # a foreign Origin's write: refused before anything is read
    assert "access-control-allow-origin" not in r.headers
    auth = {"Content-Type": "text/plain", "Authorization": f"Bearer {_token(guarded)}"}
    r = httpx.post(f"{guarded.url}/api/v1/namespaces/default/configmaps", content=body, headers=auth)
    assert r.status_code == 415
    assert "access-control-allow-origin" not in r.headers
    r = httpx.get(
        f"{guarded.url}/api/v1/namespaces/default/configmaps/pwned",
        headers={"Authorization": f"Bearer {_token(guarded)}"},
    )
    assert r.status_code == 404


def test_a_foreign_host_header_is_refused(guarded: Server) -> None:
    # DNS rebinding: the page's own name resolves to 127.0.0.1, the Host header still says so
    r = httpx.get(f"{guarded.url}/version", headers={"Host": "evil.example"})
    assert r.status_code == 403
    assert 'host "evil.example" is not served here' in r.json()["message"]
    r = httpx.get(
        f"{guarded.url}/api/v1/namespaces",
        headers={"Host": "evil.example:6443", "Authorization": f"Bearer {_token(guarded)}"},
    )
    assert r.status_code == 403
    for host in ("localhost", "127.0.0.1:1234", "[::1]:6443"):
        assert httpx.get(f"{guarded.url}/version", headers={"Host": host}).status_code == 200


def test_anonymous_mode_admits_requests_without_a_token(server: Server) -> None:
    r = httpx.get(f"{server.url}/api/v1/namespaces")
    assert r.status_code == 200
    assert (
        httpx.get(f"{server.url}/api/v1/namespaces", headers={"Authorization": "Bearer wrong"}).status_code
        == 401
    )


def test_no_tls_without_anonymous_warns_that_kubectl_cannot_authenticate(guarded: Server) -> None:
    log = (guarded.kubeconfig.parent / "serve.log").read_text()
    assert "kubectl sends no token over plain HTTP" in log


@pytest.mark.parametrize("version", ["1.35", "1.37"])
def test_kubectl_with_the_written_kubeconfig_is_quiet_over_the_default_tls(
    tls_server: Server, version: str, request: pytest.FixtureRequest
) -> None:
    """The default ``gangplane serve``: HTTPS with the generated CA and the bearer token."""
    assert tls_server.url.startswith("https://")
    binary = request.getfixturevalue("kubectl135" if version == "1.35" else "kubectl137")
    k = Kubectl(binary, tls_server, version)
    out = k.run("get", "nodes", "-o", "name")
    assert out.stdout.count("node/") == 22
    assert out.stderr == ""
    assert k.run("version").stderr == ""
    ns = f"fd-{version.replace('.', '')}"
    k.run("create", "namespace", ns)
    applied = k.run("apply", "-n", ns, "-f", "-", input=_CONFIGMAP)
    assert applied.stderr == "" and "configmap/cm created" in applied.stdout
    watched = k.run(
        "get", "configmaps", "-n", ns, "--watch", "--request-timeout=1s", "-o", "name", check=False
    )
    assert "configmap/cm" in watched.stdout
    assert k.run("auth", "can-i", "create", "pods", check=False).stdout.strip() in ("yes", "no")
    k.run("delete", "namespace", ns, "--wait=false")


_CONFIGMAP = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {a: b}\n"


def test_tls_kubeconfig_carries_the_ca_that_verifies_the_server(tls_server: Server, tmp_path: Path) -> None:
    cfg = yaml.safe_load(tls_server.kubeconfig.read_text())
    ca = base64.b64decode(cfg["clusters"][0]["cluster"]["certificate-authority-data"])
    (tmp_path / "ca.crt").write_bytes(ca)
    ctx = ssl.create_default_context(cafile=str(tmp_path / "ca.crt"))
    r = httpx.get(
        f"{tls_server.url}/api/v1/namespaces",
        verify=ctx,
        headers={"Authorization": f"Bearer {_token(tls_server)}"},
    )
    assert r.status_code == 200
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{tls_server.url}/version")  # the system trust store does not know gangplane's CA


def test_python_client_over_tls_with_the_token(tls_server: Server) -> None:
    api = k8s_config.new_client_from_config(str(tls_server.kubeconfig))
    try:
        names = [n.metadata.name for n in k8s.CoreV1Api(api).list_namespace().items]
    finally:
        api.close()
    assert "default" in names


@pytest.mark.parametrize("version", ["1.35", "1.37"])
def test_kubectl_auth_whoami_names_the_kubeconfig_user(
    tls_server: Server, version: str, request: pytest.FixtureRequest
) -> None:
    binary = request.getfixturevalue("kubectl135" if version == "1.35" else "kubectl137")
    out = Kubectl(binary, tls_server, version).run(
        "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}"
    )
    assert out.stdout == "kubernetes-admin"


def test_whoami_without_credentials_is_anonymous(server: Server) -> None:
    r = httpx.post(
        f"{server.url}/apis/authentication.k8s.io/v1/selfsubjectreviews",
        json={"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"},
    )
    assert r.status_code == 201
    assert r.json()["status"]["userInfo"] == {
        "username": "system:anonymous",
        "groups": ["system:unauthenticated"],
    }


def test_token_review_authenticates_the_servers_token(tls_server: Server) -> None:
    api = k8s_config.new_client_from_config(str(tls_server.kubeconfig))
    try:
        authn = k8s.AuthenticationV1Api(api)
        good = authn.create_token_review(
            k8s.V1TokenReview(spec=k8s.V1TokenReviewSpec(token=_token(tls_server)))
        )
        bad = authn.create_token_review(k8s.V1TokenReview(spec=k8s.V1TokenReviewSpec(token="forged")))
    finally:
        api.close()
    assert good.status.authenticated is True and good.status.user.username == "kubernetes-admin"
    # kubeadm's admin.conf identity: cluster-admin through the kubeadm:cluster-admins binding
    assert good.status.user.groups == ["kubeadm:cluster-admins", "system:authenticated"]
    assert bad.status.authenticated is False


ISSUE_CROSS_SITE = {"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}


@pytest.fixture(scope="module")
def ui_allowed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    s = _start_server(
        tmp_path_factory.mktemp("allow-origin"),
        ["--no-tls", "--anonymous", "--allow-origin", "http://localhost:3000"],
    )
    yield s
    _stop(s)


def test_a_cross_site_write_without_content_type_is_refused_in_anonymous_mode(server: Server) -> None:
    """Issue 25, S1: what ``fetch(url, {mode: "no-cors", method: "POST", body: new Blob([json])})``
    sends from another site (no Content-Type, no preflight) is a 403 and stores nothing."""
    cms = f"{server.url}/api/v1/namespaces/default/configmaps"
    body = b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cross-site"}}'
    r = httpx.post(cms, content=body, headers=ISSUE_CROSS_SITE)
    assert r.status_code == 403, r.text
    assert r.json()["reason"] == "Forbidden"
    assert "cross-site request refused" in r.json()["message"]
    assert "--allow-origin" in r.json()["message"]
    for site in ("same-site", "cross-site"):
        r = httpx.delete(f"{cms}/kube-root-ca.crt", headers={"Sec-Fetch-Site": site})
        assert r.status_code == 403
    assert httpx.get(f"{cms}/cross-site").status_code == 404
    assert httpx.get(cms, headers=ISSUE_CROSS_SITE).status_code == 200  # a read changes nothing
    r = httpx.post(cms, content=body, headers={"Content-Type": "application/json"})
    assert r.status_code == 201  # a client that is no browser page (kubectl, curl)
    assert httpx.delete(f"{cms}/cross-site").status_code == 200


def test_allow_origin_admits_a_ui_served_elsewhere(ui_allowed: Server) -> None:
    cms = f"{ui_allowed.url}/api/v1/namespaces/default/configmaps"
    body = b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"from-ui"}}'
    ui = {
        "Origin": "http://localhost:3000",
        "Sec-Fetch-Site": "same-site",
        "Content-Type": "application/json",
    }
    assert httpx.post(cms, content=body, headers=ui).status_code == 201
    assert httpx.post(cms, content=body, headers=ISSUE_CROSS_SITE).status_code == 403


def test_an_allow_origin_that_is_no_origin_stops_the_server(tmp_path: Path) -> None:
    import subprocess
    import sys

    r = subprocess.run(
        [sys.executable, "-m", "gangplane.cli", "serve", "--port", "0", "--allow-origin", "localhost:3000"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert r.returncode == 2
    assert "--allow-origin 'localhost:3000': want scheme://host[:port]" in r.stderr

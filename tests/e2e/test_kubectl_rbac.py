"""``gangplane serve --authorization-mode=RBAC`` driven by real kubectl 1.35 and 1.37.

What an operator author does to check the RBAC manifest they ship: a service account bound to a
Role allowing ``get,list pods``, a token from ``kubectl create token``, then kubectl as that
account — it lists pods, is forbidden to create them with kube's message, ``kubectl auth can-i``
answers as kube would, ``kubectl auth whoami`` names the account, escalation and impersonation
without permission are refused. The kubeconfig user is a cluster admin (``kubeadm:cluster-admins``).
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import Kubectl, Server, _start_server, _stop

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def rbac_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    s = _start_server(tmp_path_factory.mktemp("rbac"), ["--authorization-mode=RBAC"])
    yield s
    _stop(s)


@pytest.fixture(params=["1.35", "1.37"])
def k(request: pytest.FixtureRequest, rbac_server: Server) -> Kubectl:
    binary: Path = request.getfixturevalue("kubectl135" if request.param == "1.35" else "kubectl137")
    return Kubectl(binary, rbac_server, request.param)


def _namespace_with_reader(k: Kubectl) -> tuple[str, str, str]:
    """A fresh namespace, service account ``x`` bound to Role ``pod-reader`` there, and its token."""
    ns = f"rbac-{k.version.replace('.', '')}-{len(k.run('get', 'namespaces', '-o', 'name').stdout.splitlines())}"
    k.run("create", "namespace", ns)
    k.run("create", "serviceaccount", "x", "-n", ns)
    k.run("create", "role", "pod-reader", "--verb=get,list", "--resource=pods", "-n", ns)
    k.run("create", "rolebinding", "x", "--role=pod-reader", f"--serviceaccount={ns}:x", "-n", ns)
    token = k.run("create", "token", "x", "-n", ns).stdout.strip()
    return ns, token, f"system:serviceaccount:{ns}:x"


def test_the_role_lets_the_account_list_pods_and_not_create_them(k: Kubectl) -> None:
    ns, token, user = _namespace_with_reader(k)
    listed = k.run("--token", token, "get", "pods", "-n", ns)
    assert listed.stderr.strip() == f"No resources found in {ns} namespace."
    created = k.run("--token", token, "run", "p", "--image=busybox", "-n", ns, check=False)
    assert created.returncode == 1
    assert created.stderr.strip() == (
        f'Error from server (Forbidden): pods is forbidden: User "{user}" cannot create resource "pods" in API group "" '
        f'in the namespace "{ns}"'
    )
    nodes = k.run("--token", token, "get", "nodes", check=False)
    assert nodes.stderr.strip() == (
        f'Error from server (Forbidden): nodes is forbidden: User "{user}" cannot list resource "nodes" in API group "" '
        "at the cluster scope"
    )


def test_auth_can_i_answers_as_kube_would(k: Kubectl) -> None:
    ns, _, user = _namespace_with_reader(k)
    no = k.run("auth", "can-i", "create", "pods", f"--as={user}", "-n", ns, check=False)
    assert (no.stdout.strip(), no.returncode) == ("no", 1)
    yes = k.run("auth", "can-i", "list", "pods", f"--as={user}", "-n", ns, check=False)
    assert (yes.stdout.strip(), yes.returncode) == ("yes", 0)
    assert (
        k.run("auth", "can-i", "list", "pods", f"--as={user}", "-n", "default", check=False).stdout.strip()
        == "no"
    )
    assert k.run("auth", "can-i", "*", "*").stdout.strip() == "yes"  # the kubeconfig user is cluster-admin
    listed = k.run("auth", "can-i", "--list", f"--as={user}", "-n", ns).stdout
    # columns: Resources, Non-Resource URLs, Resource Names, Verbs (kubectl's compacted rules)
    rows = {" ".join(line.split()) for line in listed.splitlines()}
    assert rows >= {
        "pods [] [] [get list]",
        "selfsubjectaccessreviews.authorization.k8s.io [] [] [create]",
        "[/api/*] [] [get]",
        "[/healthz] [] [get]",
    }


def test_auth_whoami_names_the_service_account(k: Kubectl) -> None:
    ns, token, user = _namespace_with_reader(k)
    out = k.run("--token", token, "auth", "whoami").stdout
    lines = [" ".join(line.split()) for line in out.splitlines()]
    assert f"Username {user}" in lines
    assert f"Groups [system:serviceaccounts system:serviceaccounts:{ns} system:authenticated]" in lines
    assert any(line.startswith("Extra: authentication.kubernetes.io/credential-id [JTI=") for line in lines)
    admin = k.run("auth", "whoami", "-o", "jsonpath={.status.userInfo.groups}").stdout
    assert admin == '["kubeadm:cluster-admins","system:authenticated"]'


def test_escalation_is_denied(k: Kubectl) -> None:
    ns, token, user = _namespace_with_reader(k)
    k.run("create", "role", "role-writer", "--verb=create", "--resource=roles,rolebindings", "-n", ns)
    k.run("create", "rolebinding", "x-writes", "--role=role-writer", f"--serviceaccount={ns}:x", "-n", ns)
    held = k.run("--token", token, "create", "role", "reader2", "--verb=get", "--resource=pods", "-n", ns)
    assert held.stdout.strip() == "role.rbac.authorization.k8s.io/reader2 created"
    more = k.run(
        "--token",
        token,
        "create",
        "role",
        "creator",
        "--verb=create,delete",
        "--resource=pods",
        "-n",
        ns,
        check=False,
    )
    assert more.returncode == 1
    assert more.stderr.strip() == (
        f'Error from server (Forbidden): roles.rbac.authorization.k8s.io "creator" is forbidden: user "{user}" '
        f'(groups=["system:serviceaccounts" "system:serviceaccounts:{ns}" "system:authenticated"]) is attempting to '
        'grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["pods"], Verbs:["create" "delete"]}'
    )
    bind = k.run(
        "--token",
        token,
        "create",
        "rolebinding",
        "b",
        "--clusterrole=cluster-admin",
        f"--serviceaccount={ns}:x",
        "-n",
        ns,
        check=False,
    )
    assert bind.returncode == 1
    assert bind.stderr.strip() == (
        f'error: failed to create rolebinding: rolebindings.rbac.authorization.k8s.io "b" is forbidden: user "{user}" '
        f'(groups=["system:serviceaccounts" "system:serviceaccounts:{ns}" "system:authenticated"]) is attempting to '
        'grant RBAC permissions not currently held:\n{APIGroups:["*"], Resources:["*"], Verbs:["*"]}\n'
        '{NonResourceURLs:["*"], Verbs:["*"]}'
    )


def test_impersonation_without_permission_is_denied(k: Kubectl) -> None:
    ns, token, user = _namespace_with_reader(k)
    denied = k.run("--token", token, "get", "pods", "-n", ns, "--as=kubernetes-admin", check=False)
    assert denied.returncode == 1
    assert denied.stderr.strip().splitlines()[-1] == (
        f'Error from server (Forbidden): users "kubernetes-admin" is forbidden: User "{user}" cannot impersonate '
        'resource "users" in API group "" at the cluster scope'
    )
    as_group = k.run(
        "--token", token, "get", "pods", "-n", ns, f"--as={user}", "--as-group=system:masters", check=False
    )
    assert as_group.returncode == 1 and "cannot impersonate resource" in as_group.stderr
    # the admin may impersonate: kubectl then acts as the account
    as_x = k.run("get", "pods", "-n", ns, f"--as={user}")
    assert as_x.stderr.strip() == f"No resources found in {ns} namespace."


def test_a_service_account_token_secret_is_filled_and_its_token_is_the_account(k: Kubectl) -> None:
    """The long-lived token many charts still ship: a Secret the token controller fills."""
    ns, _, user = _namespace_with_reader(k)
    secret = f"""
apiVersion: v1
kind: Secret
metadata:
  name: x-token
  namespace: {ns}
  annotations: {{kubernetes.io/service-account.name: x}}
type: kubernetes.io/service-account-token
"""
    k.run("apply", "-f", "-", input=secret)
    k.run("wait", "--for=jsonpath={.data.token}", "secret/x-token", "-n", ns, "--timeout=30s")
    encoded = k.run("get", "secret", "x-token", "-n", ns, "-o", "jsonpath={.data.token}").stdout
    token = base64.b64decode(encoded).decode()
    assert (
        k.run("--token", token, "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}").stdout == user
    )
    assert (
        k.run("--token", token, "get", "pods", "-n", ns).stderr.strip()
        == f"No resources found in {ns} namespace."
    )
    described = k.run("describe", "secret", "x-token", "-n", ns).stdout
    assert "kubernetes.io/service-account.uid" in described and "ca.crt:" in described  # served over TLS
    # the token goes with its account
    k.run("delete", "serviceaccount", "x", "-n", ns)
    k.run("wait", "--for=delete", "secret/x-token", "-n", ns, "--timeout=30s")
    refused = k.run("--token", token, "get", "pods", "-n", ns, check=False)
    assert refused.returncode == 1
    assert "You must be logged in to the server" in refused.stderr


def test_exec_needs_create_on_pods_exec(k: Kubectl) -> None:
    """The WebSocket upgrade passes the front door like any request; kube authorizes it as
    ``create`` on ``pods/exec``, and kubectl's SPDY fallback (a POST) is refused the same way."""
    ns, token, user = _namespace_with_reader(k)
    k.run("run", "web", "--image=nginx", "-n", ns)
    k.run("wait", "--for=condition=Ready", "pod/web", "-n", ns, "--timeout=30s", timeout=40)
    assert k.run("exec", "web", "-n", ns, "--", "echo", "admin").stdout == "admin\n"
    denied = k.run("--token", token, "exec", "web", "-n", ns, "--", "echo", "hi", check=False)
    assert denied.returncode != 0
    assert (
        f'pods "web" is forbidden: User "{user}" cannot create resource "pods/exec" in API group "" '
        f'in the namespace "{ns}"'
    ) in denied.stderr

"""Reading a kubeconfig into a RESTConfig: the fields the HTTP client speaks, errors naming the field."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
import yaml

from apiserver.client.restconfig import KubeconfigError, load_kubeconfig


def write(path: Path, user: dict, cluster: dict | None = None, namespace: str = "") -> Path:
    ctx = {"cluster": "c", "user": "u"}
    if namespace:
        ctx["namespace"] = namespace
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": cluster or {"server": "https://127.0.0.1:6443"}}],
        "users": [{"name": "u", "user": user}],
        "contexts": [{"name": "ctx", "context": ctx}, {"name": "other", "context": {"cluster": "c"}}],
        "current-context": "ctx",
    }
    path.write_text(yaml.safe_dump(doc))
    return path


def test_token_ca_data_and_namespace(tmp_path: Path) -> None:
    cfg = load_kubeconfig(
        write(
            tmp_path / "kc",
            {"token": "abc"},
            {"server": "https://h:1/", "certificate-authority-data": base64.b64encode(b"PEM").decode()},
            namespace="team",
        )
    )
    assert (cfg.server, cfg.token, cfg.ca_pem, cfg.namespace) == ("https://h:1", "abc", b"PEM", "team")


def test_files_are_relative_to_the_kubeconfig(tmp_path: Path) -> None:
    (tmp_path / "tok").write_text("from-file\n")
    (tmp_path / "ca.crt").write_bytes(b"CA")
    cfg = load_kubeconfig(
        write(
            tmp_path / "kc",
            {"tokenFile": "tok"},
            {"server": "https://h:1", "certificate-authority": "ca.crt"},
        )
    )
    assert (cfg.token, cfg.ca_pem, cfg.namespace) == ("from-file", b"CA", "default")


def test_another_context_by_name(tmp_path: Path) -> None:
    cfg = load_kubeconfig(write(tmp_path / "kc", {"token": "abc"}), context="other")
    assert cfg.token == ""


@pytest.mark.parametrize(
    ("user", "cluster", "message"),
    [
        ({"exec": {"command": "aws"}}, None, "exec is not supported"),
        ({"username": "a", "password": "b"}, None, "username is not supported"),
        ({"client-certificate-data": "QQ=="}, None, "client-certificate needs client-key"),
        ({}, {"server": "127.0.0.1:6443"}, "is not an http(s) URL"),
        ({"tokenFile": "missing"}, None, "tokenFile"),
        (
            {},
            {"server": "https://h", "certificate-authority-data": "***"},
            "certificate-authority-data is not base64",
        ),
    ],
)
def test_what_cannot_be_used_is_an_error_naming_the_field(
    tmp_path: Path, user: dict, cluster: dict | None, message: str
) -> None:
    with pytest.raises(KubeconfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_kubeconfig(write(tmp_path / "kc", user, cluster))


def test_missing_file_and_missing_context(tmp_path: Path) -> None:
    with pytest.raises(KubeconfigError, match="No such file"):
        load_kubeconfig(tmp_path / "nope")
    with pytest.raises(KubeconfigError, match='no context named "x"'):
        load_kubeconfig(write(tmp_path / "kc", {}), context="x")

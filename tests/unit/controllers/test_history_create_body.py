"""``History.create`` sends the revision named and hash-labelled without deep-copying its data
(``history.named_revision``): the body is the one a full copy gave, and the caller's revision is
left as it was, through a name clash with other data (the collision count bumped)."""

from __future__ import annotations

import copy
from typing import Any

import orjson
import pytest

from apiserver import errors
from apiserver.api.types import Obj
from controllers import history
from controllers.statefulset import utils as su
from controllers.testing import statefulset

pytestmark = pytest.mark.anyio


class _Recording:
    """A client whose first ``create`` clashes with a stored revision of other data."""

    def __init__(self) -> None:
        self.sent: list[bytes] = []
        self.clash = True

    async def create(self, gvr: Any, obj: Obj, namespace: str = "", **_: Any) -> Obj:
        self.sent.append(orjson.dumps(obj))
        if self.clash:
            self.clash = False
            raise errors.already_exists("controllerrevisions", obj["metadata"]["name"], "apps")
        return {**orjson.loads(orjson.dumps(obj)), "stored": True}

    async def get(self, gvr: Any, name: str, namespace: str = "") -> Obj:
        return {"metadata": {"name": name}, "data": {"other": True}}


def _old_body(revision: Obj, parent: str, h: str) -> bytes:
    clone = orjson.loads(orjson.dumps(revision))
    clone["metadata"]["name"] = history.revision_name(parent, h)
    clone["metadata"].setdefault("labels", {})[history.HASH_LABEL] = h
    return orjson.dumps(clone)


@pytest.mark.parametrize("labels", [{"app": "web"}, {}, None])
async def test_the_body_is_the_full_copys_and_the_revision_is_untouched(labels: Any) -> None:
    sts = statefulset("web", 2)
    sts["metadata"]["uid"] = "uid-web"
    rev = history.new_controller_revision(sts, su.API_VERSION, su.KIND, {}, su.revision_data(sts), 3, 0)
    if labels is None:
        del rev["metadata"]["labels"]
    else:
        rev["metadata"]["labels"] = labels
    before = copy.deepcopy(rev)
    client = _Recording()
    stored, collision = await history.History(client).create(sts, rev, 0)  # type: ignore[arg-type]
    assert collision == 1 and stored["stored"]
    assert client.sent == [
        _old_body(before, "web", history.hash_revision(before["data"], 0)),
        _old_body(before, "web", history.hash_revision(before["data"], 1)),
    ]
    assert rev == before
    assert orjson.dumps(rev) == orjson.dumps(before)

"""The simulated container shell: what ``kubectl exec`` and the Python client's exec tests run."""

from __future__ import annotations

import asyncio
import gzip
import io
import tarfile

import pytest

from apiserver.kubeletsim import shell
from apiserver.kubeletsim.shell import Container, Input

pytestmark = pytest.mark.anyio


def box() -> Container:
    return Container(
        hostname="web-0",
        env={"PATH": "/usr/bin:/bin", "HOSTNAME": "web-0", "GREETING": "hello there"},
        files={"/etc/hostname": b"web-0\n", "/etc/config/mode": b"fast"},
        started=1_800_000_000.0,
        clock=lambda: 1_800_000_300.0,
    )


async def run(
    argv: list[str], stdin: bytes | None = None, c: Container | None = None
) -> tuple[int, bytes, bytes]:
    out, err = bytearray(), bytearray()
    code = await shell.run(argv, c or box(), Input(stdin or b""), out.extend, err.extend)
    return code, bytes(out), bytes(err)


async def sh(script: str, c: Container | None = None) -> tuple[int, str, str]:
    code, out, err = await run(["/bin/sh", "-c", script], c=c)
    return code, out.decode(), err.decode()


async def test_echo_exit_and_exit_codes() -> None:
    assert await run(["echo", "hi"]) == (0, b"hi\n", b"")
    assert (await sh("exit 3"))[0] == 3
    assert (await sh("sleep 0; exit 3"))[0] == 3
    assert (await run(["false"]))[0] == 1
    assert (await run(["true"]))[0] == 0
    assert await sh("false; echo $?") == (0, "1\n", "")
    assert await sh("false || echo no && echo yes") == (0, "no\nyes\n", "")


async def test_loops_substitution_pipes_and_redirections() -> None:
    code, out, _ = await sh("for i in $(seq 1 3); do date; done")
    assert code == 0 and len(out.splitlines()) == 3
    assert out.splitlines()[0] == "Fri Jan 15 08:05:00 UTC 2027"
    code, raw, _ = await run(["/bin/sh", "-c", 'echo -n "This is a test string" | gzip'])
    assert gzip.decompress(raw) == b"This is a test string"
    assert await sh("echo oops >&2") == (0, "", "oops\n")
    assert await sh('echo "$GREETING" and ${HOSTNAME}') == (0, "hello there and web-0\n", "")
    assert await sh("if [ -f /etc/hostname ]; then cat /etc/hostname; else echo none; fi") == (
        0,
        "web-0\n",
        "",
    )
    c = box()
    assert await sh("echo one > /tmp/f; echo two >> /tmp/f; cat /tmp/f | wc -l", c) == (0, "2\n", "")
    assert c.files["/tmp/f"] == b"one\ntwo\n"
    assert (await sh("ls /"))[1].split() == ["etc"]
    assert (await run(["uptime"]))[1].startswith(b" 08:05:00 up 5 min,")


async def test_unknown_commands_and_syntax_errors() -> None:
    assert await run(["rm-rf-the-host"]) == (
        127,
        b"",
        b'exec: "rm-rf-the-host": executable file not found in $PATH\n',
    )
    assert await sh("python -c 1") == (127, "", "sh: python: not found\n")
    code, _, err = await sh("for x in; do")
    assert code == 2 and "syntax error" in err


async def test_interactive_sh_reads_commands_from_stdin() -> None:
    q: asyncio.Queue[bytes | None] = asyncio.Queue()
    out, err = bytearray(), bytearray()
    task = asyncio.create_task(shell.run(["/bin/sh"], box(), Input(queue=q), out.extend, err.extend))
    q.put_nowait(b"echo test string 1\n")
    q.put_nowait(b"echo test string 2 >&2\n")
    q.put_nowait(b"exit\n")
    assert await task == 0
    assert (bytes(out), bytes(err)) == (b"test string 1\n", b"test string 2\n")
    q2: asyncio.Queue[bytes | None] = asyncio.Queue()
    out.clear()
    task = asyncio.create_task(shell.run(["sh", "-c", "cat"], box(), Input(queue=q2), out.extend, err.extend))
    q2.put_nowait(b"test-close\n")
    q2.put_nowait(None)  # stdin closed: cat ends
    assert await task == 0 and bytes(out) == b"test-close\n"


async def test_tar_round_trip_as_kubectl_cp_uses_it() -> None:
    c = box()
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        info = tarfile.TarInfo("data.txt")
        info.size = 5
        tf.addfile(info, io.BytesIO(b"12345"))
    code, _, err = await run(["tar", "-xmf", "-", "-C", "/work"], stdin=buf.getvalue(), c=c)
    assert (code, err) == (0, b"")
    assert c.files["/work/data.txt"] == b"12345"
    code, raw, err = await run(["tar", "cf", "-", "/work/data.txt"], c=c)
    assert (code, err) == (0, b"")
    with tarfile.open(fileobj=io.BytesIO(raw)) as tf:
        (m,) = tf.getmembers()
        assert m.name == "work/data.txt" and tf.extractfile(m).read() == b"12345"  # type: ignore[union-attr]
    code, _, _ = await run(
        ["tar", "--no-same-permissions", "--no-same-owner", "-xmf", "-", "-C", "/x"], stdin=raw, c=c
    )
    assert code == 0 and c.files["/x/work/data.txt"] == b"12345"


async def test_limits_stop_runaway_scripts() -> None:
    code, _, err = await sh("while true; do :; done")
    assert code == 2 and "too many steps" in err

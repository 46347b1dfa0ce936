"""A small, safe POSIX-shell subset that plays a simulated container's processes.

``kubectl exec``, ``attach`` and ``cp`` need *something* to answer inside a container gangplane
never runs. This interpreter is that something: it never starts a host process, never touches
the host's files, and knows only the commands written here, against a :class:`Container`'s
in-memory filesystem and environment. What it understands:

* lists (``;``, newlines, ``&&``, ``||``), pipelines (``|``, ``!``), ``for NAME in …; do …; done``,
  ``if …; then …; [else …;] fi``, ``while …; do …; done``, ``{ …; }``;
* words with single/double quotes, backslashes, ``$VAR``, ``${VAR}``, ``$?``, ``$$``, ``$#`` and
  ``$(…)``; ``NAME=value`` assignments (alone, or before a command);
* redirections ``> file``, ``>> file``, ``< file``, ``2> file``, ``>&2``, ``2>&1``;
* the commands of :data:`COMMANDS` (``echo``, ``cat``, ``env``, ``hostname``, ``exit``, ``sh -c``,
  ``tar`` for ``kubectl cp``, ``gzip``…). Anything else is "not found", exit 127.

Commands run one after another (a pipeline's stages too, each reading what the previous wrote),
which is all a simulated container needs.
"""

from __future__ import annotations

import asyncio
import gzip as gzip_lib
import io
import posixpath
import tarfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

#: how much one exec may produce or store (bytes): a runaway ``yes``-like loop ends here
OUTPUT_LIMIT = 64 << 20
FS_LIMIT = 64 << 20
#: loop iterations one script may run
STEP_LIMIT = 100_000


class ShellExit(Exception):  # noqa: N818 - control flow, not an error
    def __init__(self, code: int) -> None:
        self.code = code


class ShellError(Exception):
    """A syntax error or a limit reached; reported on stderr with exit code 2."""


# ============================================================================ the container


@dataclass
class Container:
    """What a process in a simulated container sees: environment, hostname, files, start time."""

    hostname: str
    env: dict[str, str]
    files: dict[str, bytes] = field(default_factory=dict)
    started: float = 0.0
    clock: Callable[[], float] = time.time

    def size(self) -> int:
        return sum(len(v) for v in self.files.values())

    def dirs(self) -> set[str]:
        out = {"/"}
        for path in self.files:
            d = posixpath.dirname(path)
            while d not in out:
                out.add(d)
                d = posixpath.dirname(d)
        return out


# ============================================================================ streams


class Input:
    """A command's standard input: bytes already known, or a queue fed by the client."""

    def __init__(self, data: bytes = b"", queue: asyncio.Queue[bytes | None] | None = None) -> None:
        self._buf = bytearray(data)
        self._queue = queue
        self._eof = queue is None

    async def _more(self) -> bool:
        if self._eof or self._queue is None:
            return False
        chunk = await self._queue.get()
        if chunk is None:
            self._eof = True
            return False
        self._buf.extend(chunk)
        return True

    async def read(self) -> bytes:
        while await self._more():
            pass
        data = bytes(self._buf)
        self._buf.clear()
        return data

    async def readline(self) -> bytes:
        while b"\n" not in self._buf:
            if not await self._more():
                break
        i = self._buf.find(b"\n")
        end = len(self._buf) if i < 0 else i + 1
        line = bytes(self._buf[:end])
        del self._buf[:end]
        return line


Output = Callable[[bytes], None]


@dataclass
class Proc:
    """One command's view: its arguments, streams, variables and container."""

    argv: list[str]
    stdin: Input
    out: Output
    err: Output
    shell: Shell

    def say(self, text: str) -> None:
        self.out(text.encode())

    def complain(self, text: str) -> None:
        self.err(text.encode())


# ============================================================================ lexer


OPERATORS = ("&&", "||", ";;", ">>", ">&", "<<", ";", "|", "&", "(", ")", "<", ">", "\n")
RESERVED = {"for", "in", "do", "done", "if", "then", "else", "elif", "fi", "while", "{", "}", "!"}


@dataclass
class Word:
    """A word before expansion: segments of (kind, text, quoted); kind is lit, var or cmd."""

    parts: list[tuple[str, str, bool]]

    def literal(self) -> str | None:
        """The word's text when it is one unquoted literal (a reserved word, a name)."""
        if len(self.parts) == 1 and self.parts[0][0] == "lit" and not self.parts[0][2]:
            return self.parts[0][1]
        return None


Token = Word | tuple[str, str]  # ("op", text) or ("redir", "2>&")


def _read_subst(src: str, i: int) -> tuple[str, int]:
    """The text of ``$(…)`` starting after ``$(``, nesting and quotes respected."""
    depth, j, quote = 1, i, ""
    while j < len(src):
        c = src[j]
        if quote:
            if c == quote:
                quote = ""
            elif c == "\\" and quote == '"':
                j += 1
        elif c in "'\"":
            quote = c
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return src[i:j], j + 1
        j += 1
    raise ShellError("syntax error: unterminated $(")


def _read_dollar(src: str, i: int, quoted: bool) -> tuple[tuple[str, str, bool], int]:
    """``$…`` at ``src[i] == '$'``: a variable or a command substitution segment."""
    nxt = src[i + 1] if i + 1 < len(src) else ""
    if nxt == "(":
        text, j = _read_subst(src, i + 2)
        return ("cmd", text, quoted), j
    if nxt == "{":
        end = src.find("}", i + 2)
        if end < 0:
            raise ShellError("syntax error: bad substitution")
        return ("var", src[i + 2 : end], quoted), end + 1
    if nxt and nxt in "?$#!0123456789":
        return ("var", nxt, quoted), i + 2
    j = i + 1
    while j < len(src) and (src[j].isalnum() or src[j] == "_"):
        j += 1
    if j == i + 1:
        return ("lit", "$", quoted), i + 1
    return ("var", src[i + 1 : j], quoted), j


def tokenize(src: str) -> list[Token]:
    out: list[Token] = []
    i = 0
    parts: list[tuple[str, str, bool]] = []
    lit: list[str] = []
    started = False

    def flush_lit(quoted: bool = False) -> None:
        if lit:
            parts.append(("lit", "".join(lit), quoted))
            lit.clear()

    def end_word() -> None:
        nonlocal started, parts
        flush_lit()
        if started:
            out.append(Word(parts))
        parts = []
        started = False

    while i < len(src):
        c = src[i]
        if c == "#" and not started:
            while i < len(src) and src[i] != "\n":
                i += 1
            continue
        if c in " \t":
            end_word()
            i += 1
            continue
        if c == "\\":
            if i + 1 < len(src) and src[i + 1] == "\n":
                i += 2
                continue
            started = True
            flush_lit()
            parts.append(("lit", src[i + 1 : i + 2], True))
            i += 2
            continue
        if c == "'":
            end = src.find("'", i + 1)
            if end < 0:
                raise ShellError("syntax error: unterminated quoted string")
            started = True
            flush_lit()
            parts.append(("lit", src[i + 1 : end], True))
            i = end + 1
            continue
        if c == '"':
            started = True
            flush_lit()
            j = i + 1
            buf: list[str] = []
            while True:
                if j >= len(src):
                    raise ShellError("syntax error: unterminated quoted string")
                d = src[j]
                if d == '"':
                    break
                if d == "\\" and j + 1 < len(src) and src[j + 1] in '"\\$`\n':
                    buf.append(src[j + 1])
                    j += 2
                    continue
                if d == "$":
                    if buf:
                        parts.append(("lit", "".join(buf), True))
                        buf = []
                    seg, j = _read_dollar(src, j, True)
                    parts.append(seg)
                    continue
                buf.append(d)
                j += 1
            parts.append(("lit", "".join(buf), True))
            i = j + 1
            continue
        if c == "$":
            started = True
            flush_lit()
            seg, i = _read_dollar(src, i, False)
            parts.append(seg)
            continue
        # a redirection with a file descriptor: 2> 2>> 2>&
        if c.isdigit() and not started and i + 1 < len(src) and src[i + 1] in "<>":
            op = ">&" if src[i + 1 : i + 3] == ">&" else ">>" if src[i + 1 : i + 3] == ">>" else src[i + 1]
            out.append(("redir", c + op))
            i += 1 + len(op)
            continue
        op = next((o for o in OPERATORS if src.startswith(o, i)), None)
        if op is not None:
            end_word()
            out.append(("redir", op) if op in ("<", ">", ">>", ">&", "<<") else ("op", op))
            i += len(op)
            continue
        started = True
        lit.append(c)
        i += 1
    end_word()
    return out


# ============================================================================ parser


@dataclass
class Simple:
    assigns: list[tuple[str, Word]]
    words: list[Word]
    redirs: list[tuple[str, Word]]


@dataclass
class For:
    var: str
    items: list[Word]
    body: list[Any]


@dataclass
class If:
    branches: list[tuple[list[Any], list[Any]]]
    orelse: list[Any] | None


@dataclass
class While:
    cond: list[Any]
    body: list[Any]


@dataclass
class Group:
    body: list[Any]


@dataclass
class Pipeline:
    commands: list[Any]
    negate: bool = False


@dataclass
class AndOr:
    first: Pipeline
    rest: list[tuple[str, Pipeline]]


class Parser:
    def __init__(self, tokens: list[Token]) -> None:
        self.toks = tokens
        self.i = 0

    def peek(self) -> Token | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def is_op(self, *ops: str) -> bool:
        t = self.peek()
        return isinstance(t, tuple) and t[0] == "op" and t[1] in ops

    def is_word(self, *words: str) -> bool:
        t = self.peek()
        return isinstance(t, Word) and t.literal() in words

    def expect_word(self, word: str) -> None:
        if not self.is_word(word):
            got = self.peek()
            shown = got.literal() if isinstance(got, Word) else (got[1] if got else "end of file")
            raise ShellError(f"syntax error: unexpected {shown!r} (expecting {word!r})")
        self.i += 1

    def skip_separators(self) -> None:
        while self.is_op(";", "\n"):
            self.i += 1

    def parse_list(self, *stop: str) -> list[AndOr]:
        items: list[AndOr] = []
        self.skip_separators()
        while self.peek() is not None and not self.is_word(*stop) and not self.is_op(")"):
            items.append(self.parse_and_or())
            if self.is_op("&"):
                self.i += 1  # run in the foreground all the same
            self.skip_separators()
        return items

    def parse_and_or(self) -> AndOr:
        first = self.parse_pipeline()
        rest: list[tuple[str, Pipeline]] = []
        while self.is_op("&&", "||"):
            op = self.toks[self.i][1]  # type: ignore[index]
            self.i += 1
            while self.is_op("\n"):
                self.i += 1
            rest.append((op, self.parse_pipeline()))  # type: ignore[arg-type]
        return AndOr(first, rest)

    def parse_pipeline(self) -> Pipeline:
        negate = False
        if self.is_word("!"):
            negate = True
            self.i += 1
        cmds = [self.parse_command()]
        while self.is_op("|"):
            self.i += 1
            while self.is_op("\n"):
                self.i += 1
            cmds.append(self.parse_command())
        return Pipeline(cmds, negate)

    def parse_command(self) -> Any:
        if self.is_word("for"):
            self.i += 1
            name = self.peek()
            if not isinstance(name, Word) or not name.literal():
                raise ShellError("syntax error: bad for loop variable")
            self.i += 1
            items: list[Word] = []
            if self.is_word("in"):
                self.i += 1
                while isinstance(self.peek(), Word) and not self.is_word("do"):
                    items.append(self.toks[self.i])  # type: ignore[arg-type]
                    self.i += 1
            self.skip_separators()
            self.expect_word("do")
            body = self.parse_list("done")
            self.expect_word("done")
            return For(name.literal() or "", items, body)
        if self.is_word("if"):
            self.i += 1
            branches = []
            cond = self.parse_list("then")
            self.expect_word("then")
            body = self.parse_list("elif", "else", "fi")
            branches.append((cond, body))
            orelse = None
            while self.is_word("elif"):
                self.i += 1
                cond = self.parse_list("then")
                self.expect_word("then")
                branches.append((cond, self.parse_list("elif", "else", "fi")))
            if self.is_word("else"):
                self.i += 1
                orelse = self.parse_list("fi")
            self.expect_word("fi")
            return If(branches, orelse)
        if self.is_word("while"):
            self.i += 1
            cond = self.parse_list("do")
            self.expect_word("do")
            body = self.parse_list("done")
            self.expect_word("done")
            return While(cond, body)
        if self.is_word("{"):
            self.i += 1
            body = self.parse_list("}")
            self.expect_word("}")
            return Group(body)
        if self.is_op("("):
            self.i += 1
            body = self.parse_list()
            if not self.is_op(")"):
                raise ShellError("syntax error: expecting ')'")
            self.i += 1
            return Group(body)
        assigns: list[tuple[str, Word]] = []
        words: list[Word] = []
        redirs: list[tuple[str, Word]] = []
        while True:
            t = self.peek()
            if isinstance(t, tuple) and t[0] == "redir":
                self.i += 1
                target = self.peek()
                if not isinstance(target, Word):
                    raise ShellError(f"syntax error: redirection {t[1]!r} without a target")
                self.i += 1
                redirs.append((t[1], target))
                continue
            if not isinstance(t, Word):
                break
            lit = t.parts[0][1] if t.parts and t.parts[0][0] == "lit" and not t.parts[0][2] else ""
            if not words and "=" in lit and lit.split("=", 1)[0].isidentifier():
                name, first = lit.split("=", 1)
                assigns.append((name, Word([("lit", first, False), *t.parts[1:]])))
                self.i += 1
                continue
            words.append(t)
            self.i += 1
        if not words and not assigns and not redirs:
            t = self.peek()
            shown = t.literal() if isinstance(t, Word) else (t[1] if t else "end of file")
            raise ShellError(f"syntax error: unexpected {shown!r}")
        return Simple(assigns, words, redirs)


def parse(src: str) -> list[AndOr]:
    p = Parser(tokenize(src))
    out = p.parse_list()
    if p.peek() is not None:
        t = p.peek()
        shown = t.literal() if isinstance(t, Word) else t[1]  # type: ignore[index,union-attr]
        raise ShellError(f"syntax error: unexpected {shown!r}")
    return out


# ============================================================================ the interpreter

Command = Callable[[Proc], Awaitable[int]]


class Shell:
    """One shell process: variables, the last status, the container it runs in."""

    def __init__(self, container: Container, env: dict[str, str] | None = None, name: str = "sh") -> None:
        self.container = container
        self.vars: dict[str, str] = dict(container.env if env is None else env)
        self.status = 0
        self.name = name
        self.steps = 0
        self.produced = 0

    def _step(self) -> None:
        self.steps += 1
        if self.steps > STEP_LIMIT:
            raise ShellError("too many steps: the simulated shell stops here")

    # ---- expansion
    async def expand(self, word: Word, stdin: Input, err: Output, split: bool = True) -> list[str]:
        fields: list[str] = [""]
        has_any = False
        for kind, text, quoted in word.parts:
            if kind == "lit":
                value = text
            elif kind == "var":
                value = self.var(text)
            else:
                value = (await self.capture(text, err)).rstrip("\n")
            if kind != "lit" and not quoted and split:
                pieces = value.split()
                if not pieces:
                    continue
                if value[:1].isspace() and fields[-1]:
                    fields.append("")
                fields[-1] += pieces[0]
                for p in pieces[1:]:
                    fields.append(p)
                if value[-1:].isspace():
                    fields.append("")
                has_any = True
                continue
            fields[-1] += value
            has_any = has_any or quoted or bool(value)
        if fields and fields[-1] == "" and len(fields) > 1:
            fields.pop()
        return fields if has_any else []

    def var(self, name: str) -> str:
        if name == "?":
            return str(self.status)
        if name == "$":
            return "1"
        if name == "#":
            return "0"
        if name == "0":
            return self.name
        return self.vars.get(name, "")

    async def capture(self, src: str, err: Output) -> str:
        buf = bytearray()
        sub = Shell(self.container, self.vars, self.name)
        sub.steps = self.steps
        await sub.run_source(src, Input(), buf.extend, err)
        self.steps = sub.steps
        return buf.decode(errors="replace")

    # ---- execution
    async def run_source(self, src: str, stdin: Input, out: Output, err: Output) -> int:
        try:
            tree = parse(src)
        except ShellError as e:
            err(f"{self.name}: {e}\n".encode())
            self.status = 2
            return 2
        try:
            return await self.run_list(tree, stdin, out, err)
        except ShellExit as e:
            self.status = e.code
            return e.code
        except ShellError as e:
            err(f"{self.name}: {e}\n".encode())
            self.status = 2
            return 2

    async def run_list(self, items: list[AndOr], stdin: Input, out: Output, err: Output) -> int:
        for item in items:
            self.status = await self.run_and_or(item, stdin, out, err)
        return self.status

    async def run_and_or(self, item: AndOr, stdin: Input, out: Output, err: Output) -> int:
        status = await self.run_pipeline(item.first, stdin, out, err)
        for op, pipe in item.rest:
            self.status = status
            if (op == "&&") == (status == 0):
                status = await self.run_pipeline(pipe, stdin, out, err)
        return status

    async def run_pipeline(self, pipe: Pipeline, stdin: Input, out: Output, err: Output) -> int:
        src = stdin
        status = 0
        for i, cmd in enumerate(pipe.commands):
            last = i == len(pipe.commands) - 1
            buf = bytearray()
            status = await self.run_command(cmd, src, out if last else buf.extend, err)
            src = Input(bytes(buf))
        if pipe.negate:
            status = 0 if status else 1
        self.status = status
        return status

    async def run_command(self, cmd: Any, stdin: Input, out: Output, err: Output) -> int:
        self._step()
        if isinstance(cmd, For):
            items: list[str] = []
            for w in cmd.items:
                items.extend(await self.expand(w, stdin, err))
            status = 0
            for item in items:
                self._step()
                self.vars[cmd.var] = item
                status = await self.run_list(cmd.body, stdin, out, err)
            return status
        if isinstance(cmd, If):
            for cond, body in cmd.branches:
                if await self.run_list(cond, stdin, out, err) == 0:
                    return await self.run_list(body, stdin, out, err)
            return await self.run_list(cmd.orelse, stdin, out, err) if cmd.orelse is not None else 0
        if isinstance(cmd, While):
            status = 0
            while await self.run_list(cmd.cond, stdin, out, err) == 0:
                self._step()
                status = await self.run_list(cmd.body, stdin, out, err)
            return status
        if isinstance(cmd, Group):
            return await self.run_list(cmd.body, stdin, out, err)
        return await self.run_simple(cmd, stdin, out, err)

    async def _redirect(
        self, redirs: list[tuple[str, Word]], stdin: Input, out: Output, err: Output
    ) -> tuple[Input, Output, Output, list[tuple[str, bytearray, bool]]]:
        files: list[tuple[str, bytearray, bool]] = []
        for op, target_word in redirs:
            target = " ".join(await self.expand(target_word, stdin, err))
            fd = op[0] if op[0].isdigit() else ("0" if op.startswith("<") else "1")
            kind = op.lstrip("0123456789")
            if kind == ">&":
                dest = out if target == "1" else err if target == "2" else None
                if dest is None:
                    raise ShellError(f"{target}: bad file descriptor")
                if fd == "2":
                    err = dest
                else:
                    out = dest
                continue
            if kind == "<":
                path = self.path(target)
                if path not in self.container.files:
                    raise ShellError(f"can't open {target}: no such file")
                stdin = Input(self.container.files[path])
                continue
            if kind == "<<":
                raise ShellError("here-documents are not simulated")
            path = self.path(target)
            sink = bytearray()
            if path != "/dev/null":
                files.append((path, sink, kind == ">>"))
            if fd == "2":
                err = sink.extend
            else:
                out = sink.extend
        return stdin, out, err, files

    def path(self, p: str) -> str:
        return posixpath.normpath(posixpath.join(self.vars.get("PWD", "/") or "/", p))

    def write_file(self, path: str, data: bytes, append: bool = False) -> None:
        files = self.container.files
        new = files.get(path, b"") + data if append else data
        if self.container.size() - len(files.get(path, b"")) + len(new) > FS_LIMIT:
            raise ShellError("no space left on device")
        files[path] = new

    async def run_simple(self, cmd: Simple, stdin: Input, out: Output, err: Output) -> int:
        argv: list[str] = []
        for w in cmd.words:
            argv.extend(await self.expand(w, stdin, err))
        values = [(name, "".join(await self.expand(w, stdin, err, split=False))) for name, w in cmd.assigns]
        stdin, out, err, files = await self._redirect(cmd.redirs, stdin, out, err)
        if not argv:
            for name, value in values:
                self.vars[name] = value
            status = 0
        else:
            saved = dict(self.vars)
            for name, value in values:
                self.vars[name] = value
            try:
                status = await self.call(argv, stdin, out, err)
            finally:
                if values:
                    self.vars = {**saved, **{k: v for k, v in self.vars.items() if k not in dict(values)}}
        for path, data, append in files:
            self.write_file(path, bytes(data), append)
        self.status = status
        return status

    async def call(self, argv: list[str], stdin: Input, out: Output, err: Output) -> int:
        name = posixpath.basename(argv[0])
        fn = COMMANDS.get(name)
        if fn is None:
            err(f"{self.name}: {argv[0]}: not found\n".encode())
            return 127

        def limited(sink: Output) -> Output:
            def write(data: bytes) -> None:
                self.produced += len(data)
                if self.produced > OUTPUT_LIMIT:
                    raise ShellError("output limit reached")
                sink(data)

            return write

        return await fn(Proc(argv, stdin, limited(out), limited(err), self))


# ============================================================================ commands


def _unescape(text: str) -> str:
    return text.encode("latin-1", "backslashreplace").decode("unicode_escape")


async def _echo(p: Proc) -> int:
    args = p.argv[1:]
    newline, escapes = True, False
    while args and args[0] in ("-n", "-e", "-E", "-ne", "-en"):
        flag = args.pop(0)
        newline = newline and "n" not in flag
        escapes = escapes or "e" in flag
    text = " ".join(args)
    p.say((_unescape(text) if escapes else text) + ("\n" if newline else ""))
    return 0


async def _printf(p: Proc) -> int:
    if len(p.argv) < 2:
        p.complain("printf: usage: printf format [arguments]\n")
        return 2
    fmt, args = _unescape(p.argv[1]), p.argv[2:]
    out: list[str] = []
    i = 0
    while True:
        j = 0
        while j < len(fmt):
            c = fmt[j]
            if c == "%" and j + 1 < len(fmt):
                spec = fmt[j + 1]
                j += 2
                if spec == "%":
                    out.append("%")
                    continue
                arg = args[i] if i < len(args) else ""
                i += 1
                if spec == "d":
                    try:
                        out.append(str(int(arg or "0")))
                    except ValueError:
                        p.complain(f"printf: {arg}: invalid number\n")
                        out.append("0")
                else:
                    out.append(arg)
                continue
            out.append(c)
            j += 1
        if i >= len(args):
            break
    p.say("".join(out))
    return 0


async def _cat(p: Proc) -> int:
    status = 0
    names = p.argv[1:] or ["-"]
    for name in names:
        if name == "-":
            while line := await p.stdin.readline():
                p.out(line)
            continue
        path = p.shell.path(name)
        if path in p.shell.container.files:
            p.out(p.shell.container.files[path])
        elif path in p.shell.container.dirs():
            p.complain("cat: read error: Is a directory\n")
            status = 1
        else:
            p.complain(f"cat: can't open '{name}': No such file or directory\n")
            status = 1
    return status


async def _env(p: Proc) -> int:
    if len(p.argv) > 1:
        env = dict(p.shell.vars)
        args = p.argv[1:]
        while args and "=" in args[0]:
            k, v = args.pop(0).split("=", 1)
            env[k] = v
        if args:
            sub = Shell(p.shell.container, env, p.shell.name)
            return await sub.call(args, p.stdin, p.out, p.err)
        p.say("".join(f"{k}={v}\n" for k, v in env.items()))
        return 0
    p.say("".join(f"{k}={v}\n" for k, v in p.shell.vars.items()))
    return 0


async def _printenv(p: Proc) -> int:
    if len(p.argv) == 1:
        return await _env(p)
    status = 0
    for name in p.argv[1:]:
        if name in p.shell.vars:
            p.say(p.shell.vars[name] + "\n")
        else:
            status = 1
    return status


async def _hostname(p: Proc) -> int:
    p.say(p.shell.container.hostname + "\n")
    return 0


async def _exit(p: Proc) -> int:
    code = p.shell.status
    if len(p.argv) > 1:
        try:
            code = int(p.argv[1]) & 0xFF
        except ValueError:
            p.complain(f"{p.shell.name}: exit: Illegal number: {p.argv[1]}\n")
            code = 2
    raise ShellExit(code)


async def _true(p: Proc) -> int:
    return 0


async def _false(p: Proc) -> int:
    return 1


async def _sleep(p: Proc) -> int:
    try:
        seconds = sum(float(a.rstrip("s")) for a in p.argv[1:])
    except ValueError:
        p.complain(f"sleep: invalid number '{' '.join(p.argv[1:])}'\n")
        return 1
    await asyncio.sleep(max(0.0, seconds))
    return 0


async def _seq(p: Proc) -> int:
    try:
        nums = [int(a) for a in p.argv[1:]]
    except ValueError:
        p.complain("seq: invalid argument\n")
        return 1
    if len(nums) == 1:
        first, step, last = 1, 1, nums[0]
    elif len(nums) == 2:
        first, step, last = nums[0], 1, nums[1]
    elif len(nums) == 3:
        first, step, last = nums
    else:
        p.complain("usage: seq [-w] [-s SEP] [FIRST [INC]] LAST\n")
        return 1
    if step == 0:
        return 1
    if (last - first) // step > STEP_LIMIT:
        raise ShellError("seq: too many numbers")
    p.say("".join(f"{n}\n" for n in range(first, last + (1 if step > 0 else -1), step)))
    return 0


async def _date(p: Proc) -> int:
    now = p.shell.container.clock()
    p.say(time.strftime("%a %b %e %H:%M:%S UTC %Y", time.gmtime(now)) + "\n")
    return 0


async def _uptime(p: Proc) -> int:
    c = p.shell.container
    now = c.clock()
    up = max(0, int(now - (c.started or now)))
    hours, minutes = divmod(up // 60, 60)
    span = f"{hours}:{minutes:02d}" if hours else f"{minutes} min"
    p.say(
        f" {time.strftime('%H:%M:%S', time.gmtime(now))} up {span},  0 users,  load average: 0.00, 0.00, 0.00\n"
    )
    return 0


async def _ls(p: Proc) -> int:
    args = [a for a in p.argv[1:] if not a.startswith("-")]
    long = any(a.startswith("-") and "l" in a for a in p.argv[1:])
    status = 0
    files, dirs = p.shell.container.files, p.shell.container.dirs()
    for name in args or ["."]:
        path = p.shell.path(name)
        if path in files:
            p.say(f"{name}\n")
            continue
        if path not in dirs:
            p.complain(f"ls: {name}: No such file or directory\n")
            status = 1
            continue
        entries = sorted(
            {
                posixpath.relpath(x, path).split("/")[0]
                for x in (*files, *dirs)
                if x.startswith(path.rstrip("/") + "/")
            }
            - {"."}
        )
        for e in entries:
            full = posixpath.join(path, e)
            if long:
                kind = "d" if full in dirs else "-"
                size = len(files.get(full, b""))
                p.say(f"{kind}rw-r--r--    1 root     root      {size:>8} {e}\n")
            else:
                p.say(e + "\n")
    return status


async def _pwd(p: Proc) -> int:
    p.say((p.shell.vars.get("PWD") or "/") + "\n")
    return 0


async def _cd(p: Proc) -> int:
    target = p.shell.path(p.argv[1] if len(p.argv) > 1 else p.shell.vars.get("HOME", "/"))
    if target not in p.shell.container.dirs():
        p.complain(f"{p.shell.name}: cd: can't cd to {p.argv[1]}: No such file or directory\n")
        return 2
    p.shell.vars["PWD"] = target
    return 0


async def _mkdir(p: Proc) -> int:
    for name in (a for a in p.argv[1:] if not a.startswith("-")):
        p.shell.container.files.setdefault(posixpath.join(p.shell.path(name), ".keep"), b"")
    return 0


async def _touch(p: Proc) -> int:
    for name in p.argv[1:]:
        path = p.shell.path(name)
        p.shell.container.files.setdefault(path, b"")
    return 0


async def _rm(p: Proc) -> int:
    files = p.shell.container.files
    status = 0
    force = any(a.startswith("-") and "f" in a for a in p.argv[1:])
    for name in (a for a in p.argv[1:] if not a.startswith("-")):
        path = p.shell.path(name)
        gone = [k for k in files if k == path or k.startswith(path.rstrip("/") + "/")]
        if not gone and not force:
            p.complain(f"rm: can't remove '{name}': No such file or directory\n")
            status = 1
        for k in gone:
            del files[k]
    return status


async def _head_tail(p: Proc) -> int:
    n = 10
    args = p.argv[1:]
    names: list[str] = []
    while args:
        a = args.pop(0)
        if a == "-n" and args:
            n = int(args.pop(0).lstrip("+-") or "10")
        elif a.startswith("-") and a[1:].isdigit():
            n = int(a[1:])
        else:
            names.append(a)
    data = b""
    if names:
        for name in names:
            data += p.shell.container.files.get(p.shell.path(name), b"")
    else:
        data = await p.stdin.read()
    lines = data.splitlines(keepends=True)
    p.out(b"".join(lines[:n] if p.argv[0].endswith("head") else lines[-n:] if n else []))
    return 0


async def _wc(p: Proc) -> int:
    data = await p.stdin.read()
    lines = data.count(b"\n")
    if "-l" in p.argv:
        p.say(f"{lines}\n")
    elif "-c" in p.argv:
        p.say(f"{len(data)}\n")
    else:
        p.say(f"{lines:>7} {len(data.split()):>7} {len(data):>7}\n")
    return 0


async def _grep(p: Proc) -> int:
    args = [a for a in p.argv[1:] if not a.startswith("-")]
    if not args:
        p.complain("usage: grep PATTERN [FILE]...\n")
        return 2
    pattern = args[0].encode()
    data = (
        b"".join(p.shell.container.files.get(p.shell.path(n), b"") for n in args[1:])
        if args[1:]
        else await p.stdin.read()
    )
    found = [line for line in data.splitlines(keepends=True) if pattern in line]
    p.out(b"".join(found))
    return 0 if found else 1


async def _test(p: Proc) -> int:
    args = p.argv[1:]
    if p.argv[0] == "[":
        if not args or args[-1] != "]":
            p.complain("[: missing ]\n")
            return 2
        args = args[:-1]
    negate = False
    if args and args[0] == "!":
        negate, args = True, args[1:]
    files, dirs = p.shell.container.files, p.shell.container.dirs()
    if not args:
        result = False
    elif len(args) == 1:
        result = args[0] != ""
    elif len(args) == 2:
        op, a = args
        result = {
            "-n": a != "",
            "-z": a == "",
            "-f": p.shell.path(a) in files,
            "-e": p.shell.path(a) in files or p.shell.path(a) in dirs,
            "-d": p.shell.path(a) in dirs,
        }.get(op, False)
    else:
        a, op, b = args[:3]
        try:
            result = {
                "=": a == b,
                "==": a == b,
                "!=": a != b,
                "-eq": int(a) == int(b),
                "-ne": int(a) != int(b),
                "-lt": int(a) < int(b),
                "-gt": int(a) > int(b),
                "-le": int(a) <= int(b),
                "-ge": int(a) >= int(b),
            }.get(op, False)
        except ValueError:
            p.complain(f"{p.argv[0]}: integer expression expected\n")
            return 2
    return 0 if result != negate else 1


async def _whoami(p: Proc) -> int:
    p.say("root\n")
    return 0


async def _id(p: Proc) -> int:
    p.say("uid=0(root) gid=0(root) groups=0(root)\n")
    return 0


async def _uname(p: Proc) -> int:
    if "-a" in p.argv:
        p.say(f"Linux {p.shell.container.hostname} 6.8.0-gangplane #1 SMP x86_64 GNU/Linux\n")
    else:
        p.say("Linux\n")
    return 0


async def _gzip(p: Proc) -> int:
    data = await p.stdin.read() if not [a for a in p.argv[1:] if not a.startswith("-")] else b""
    if "-d" in p.argv or p.argv[0] in ("gunzip", "zcat"):
        try:
            p.out(gzip_lib.decompress(data))
        except (OSError, EOFError):
            p.complain("gzip: stdin: not in gzip format\n")
            return 1
        return 0
    p.out(gzip_lib.compress(data, mtime=0))
    return 0


async def _tar(p: Proc) -> int:
    """``tar`` as ``kubectl cp`` drives it: ``tar cf - PATH…`` / ``tar -xmf - [-C DIR]`` (GNU tar's
    member names: the paths as given, leading ``/`` removed); long options are accepted and ignored."""
    flags = ""
    directory = p.shell.vars.get("PWD", "/") or "/"
    names: list[str] = []
    args = p.argv[1:]
    first = True
    while args:
        a = args.pop(0)
        if a.startswith("--"):
            continue
        if a == "-C" and args:
            directory = p.shell.path(args.pop(0))
        elif a.startswith("-") and a != "-":
            flags += a[1:]
            if a.endswith("f") and args:
                args.pop(0)  # the archive: always stdin/stdout here
        elif first and not flags:
            flags = a
            if "f" in a and args:
                args.pop(0)
        else:
            names.append(a)
        first = False
    files = p.shell.container.files
    if "x" in flags or "t" in flags:
        data = await p.stdin.read()
        try:
            with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as tf:
                for member in tf.getmembers():
                    name = posixpath.normpath("/" + member.name).lstrip("/")
                    if "t" in flags:
                        p.say(member.name + "\n")
                        continue
                    target = posixpath.normpath(posixpath.join(directory, name))
                    if member.isdir():
                        files.setdefault(posixpath.join(target, ".keep"), b"")
                    elif member.isfile():
                        fh = tf.extractfile(member)
                        p.shell.write_file(target, fh.read() if fh else b"")
        except tarfile.TarError as e:
            p.complain(f"tar: {e}\n")
            return 1
        return 0
    if "c" in flags:
        buf = io.BytesIO()
        status = 0
        with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as tf:
            for name in names:
                path = posixpath.normpath(posixpath.join(directory, name))
                chosen = [k for k in sorted(files) if k == path or k.startswith(path.rstrip("/") + "/")]
                if not chosen:
                    p.complain(f"tar: {name}: Cannot stat: No such file or directory\n")
                    status = 2
                    continue
                shown = (
                    posixpath.normpath(name).lstrip("/") if name.startswith("/") else posixpath.normpath(name)
                )
                for k in chosen:
                    if posixpath.basename(k) == ".keep":
                        continue
                    rel = posixpath.relpath(k, path)
                    member = shown if rel == "." else posixpath.join(shown, rel)
                    info = tarfile.TarInfo(member.lstrip("/") or ".")
                    info.size = len(files[k])
                    info.mode = 0o644
                    info.mtime = int(p.shell.container.clock())
                    tf.addfile(info, io.BytesIO(files[k]))
        p.out(buf.getvalue())
        return status
    p.complain("tar: only c, x and t are simulated\n")
    return 1


async def _sh(p: Proc) -> int:
    """``sh -c SCRIPT``, ``sh SCRIPT_FILE`` or an interactive ``sh`` reading commands from stdin."""
    sub = Shell(p.shell.container, p.shell.vars, posixpath.basename(p.argv[0]))
    args = p.argv[1:]
    while args and args[0] in ("-e", "-x", "-l", "-i", "-ex"):
        args.pop(0)
    if args and args[0] == "-c":
        if len(args) < 2:
            p.complain(f"{sub.name}: -c requires an argument\n")
            return 2
        return await sub.run_source(args[1], p.stdin, p.out, p.err)
    if args:
        path = p.shell.path(args[0])
        if path not in p.shell.container.files:
            p.complain(f"{sub.name}: can't open '{args[0]}': No such file or directory\n")
            return 2
        return await sub.run_source(
            p.shell.container.files[path].decode(errors="replace"), p.stdin, p.out, p.err
        )
    status = 0
    pending = ""
    while line := await p.stdin.readline():
        pending += line.decode(errors="replace")
        try:
            tree = parse(pending)
        except ShellError as e:
            if "unterminated" in str(e) or "expecting" in str(e):
                continue  # a command spanning lines
            p.err(f"{sub.name}: {e}\n".encode())
            pending, status = "", 2
            continue
        pending = ""
        try:
            status = await sub.run_list(tree, p.stdin, p.out, p.err)
        except ShellExit as e:
            return e.code
        except ShellError as e:
            p.err(f"{sub.name}: {e}\n".encode())
            status = 2
    return status


COMMANDS: dict[str, Command] = {
    "echo": _echo,
    "printf": _printf,
    "cat": _cat,
    "env": _env,
    "printenv": _printenv,
    "hostname": _hostname,
    "exit": _exit,
    "true": _true,
    ":": _true,
    "false": _false,
    "sleep": _sleep,
    "seq": _seq,
    "date": _date,
    "uptime": _uptime,
    "ls": _ls,
    "pwd": _pwd,
    "cd": _cd,
    "mkdir": _mkdir,
    "touch": _touch,
    "rm": _rm,
    "head": _head_tail,
    "tail": _head_tail,
    "wc": _wc,
    "grep": _grep,
    "test": _test,
    "[": _test,
    "whoami": _whoami,
    "id": _id,
    "uname": _uname,
    "gzip": _gzip,
    "gunzip": _gzip,
    "zcat": _gzip,
    "tar": _tar,
    "sh": _sh,
    "bash": _sh,
    "ash": _sh,
}


async def run(argv: list[str], container: Container, stdin: Input, out: Output, err: Output) -> int:
    """Run ``argv`` as a container runtime's exec would: the program itself, no shell around it.

    Returns the exit code; a program that does not exist is kube's exit 127 with the runtime's
    message on stderr.
    """
    if not argv:
        err(b"exec: no command\n")
        return 126
    shell = Shell(container)
    name = posixpath.basename(argv[0])
    if name not in COMMANDS:
        err(f'exec: "{argv[0]}": executable file not found in $PATH\n'.encode())
        return 127
    try:
        return await shell.call(argv, stdin, out, err)
    except ShellExit as e:
        return e.code
    except ShellError as e:
        err(f"{name}: {e}\n".encode())
        return 2


__all__ = ["COMMANDS", "Container", "Input", "Shell", "ShellError", "parse", "run", "tokenize"]

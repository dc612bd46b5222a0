# The Code Mode runner for the Python runtime.
#
# Started as `python3 -s -P -S -c <this file> MODE`, in an environment that holds only
# PYTHONHASHSEED=0 (isolated like `-I`, but with a fixed hash seed, so every process iterates a
# set of strings in the same order: the replay of a paused run needs it), with a private socket
# on file descriptor 3 (a stream socket for MODE "run", a SOCK_SEQPACKET control socket for
# MODE "zygote"):
#
#   MODE "run"     runs one program on fd 3 and exits (the spawn-per-run mode);
#   MODE "zygote"  warms up (one dry run of the runner's own machinery, then `gc.freeze()` so
#                  that children do not copy the heap when the collector runs), then waits on
#                  fd 3 (a control socket) for requests:
#                    fork     carries a fresh socket for a run (SCM_RIGHTS) and, where the host
#                             accounts a run's memory, the cgroup.procs of the run's cgroup (one
#                             per hierarchy); the zygote forks and answers with the child's pid.
#                             The child joins the cgroup and closes every other descriptor
#                             first, then prepares everything that does not depend on the
#                             program (event loop, bridge, log writer) as a batch task,
#                             rehearses a run if it has waited a while, and waits for its
#                             program: the host keeps such children ready as spares, so no
#                             fork is on a run's critical path. Once it has sent its outcome
#                             it waits for its release rather than exiting (`_linger`).
#                    release  kills the child's process tree and group and answers at once
#                             (run children are subreapers, so the tree holds every process
#                             the program started, even after setsid); the zygote
#                             reaps the child as soon as it has died (polling while any is
#                             dying), so a release never waits for a process to exit.
#                    reap     kills the child's process tree and group, waits for it and answers with its
#                             wait status (used when a child died without an outcome).
#                    ping     answers with the sandbox report; the first ping (the host's first
#                             request) carries the cgroup.procs the throwaway run child of the
#                             report joins, and is answered once that child is done.
#                  Under the sandbox (see the "sandbox" section below) a run child's only child
#                  is the first process of the run's PID namespace: release and reap kill that
#                  one (the kernel kills the rest of the namespace), and the run child ends by
#                  itself, the way that process ended.
#                  The zygote reaps a child only after the host released it, so a pid is never
#                  reused while the host still refers to it. When the control socket closes, the
#                  zygote kills every child and exits; children die with the zygote
#                  (PR_SET_PDEATHSIG). The zygote is a subreaper too: processes whose run child
#                  died before them come to it, and it kills them whenever it releases or reaps
#                  a run child.
#
# Frames on every socket are a 4-byte big-endian length and that many bytes of UTF-8 JSON.
# Nothing the program prints or writes reaches these sockets except through `log` frames.
import sys

# Before anything is imported: without `-P` (an interpreter older than 3.11), `-c` puts the
# working directory first on sys.path.
if not getattr(sys.flags, "safe_path", False) and sys.path[:1] == [""]:
    del sys.path[0]

import ast
import asyncio
import binascii
import builtins
import gc
import importlib.util
import io
import json
import json.encoder
import marshal
import math
import operator
import os
import resource
import select
import signal
import socket
import struct
import threading
import time

_HEADER = struct.Struct(">I")
# Bound once, before any program runs, so a program that replaces parts of the json module
# (json.dumps, json.JSONEncoder, json.encoder.encode_basestring, ...) or builtins the runner
# uses does not change what crosses to the host. Frames are written by this module's own JSON
# writer, with the json module's string quoting (C code) captured here. Nothing in CPython keeps
# a program from reaching this module itself: the host treats every frame as untrusted input
# (it bounds each frame by the run's limits and checks what it reads).
_quote = json.encoder.encode_basestring
_decode = json.JSONDecoder().decode
_float_repr = float.__repr__
_int_repr = int.__repr__
_isinf = math.isinf
_copysign = math.copysign
_type_name = type.__dict__["__name__"].__get__
_isascii = str.isascii
_sum = sum
_map = map
_dict_items = dict.items
_len = len
_type = type
MAX_DEPTH = 100
INT_MIN = -(2 ** 63)
INT_MAX = 2 ** 64 - 1
# How many characters of program-controlled text a message quotes (the host and the
# TypeScript runtime use the same length and marker).
CUT_LIMIT = 200


# The trace (`trace.rs`): descriptor 4 when the host traces phases, else None; the run child's pid
# as the host sees it, which every line carries.
_TRACE_FD = None
_trace_pid = 0


def _trace_at(ns, pid, label, cpu=None):
    # The writer's own pid and its CPU time, so a phase's CPU cost can be told from its wall time.
    if cpu is None:
        cpu = time.thread_time_ns()
    try:
        os.write(_TRACE_FD, b"%d %d %s %d %d\n" % (ns, pid, label, os.getpid(), cpu))
    except OSError:
        pass


def _trace_name(prctl, name):
    """When tracing, names this process (`zygote`, `run-a`, `run-b`) so a profiler can tell
    them apart."""
    if _TRACE_FD is not None and prctl is not None:
        try:
            prctl(15, name)  # PR_SET_NAME
        except Exception:  # noqa: BLE001
            pass


def _trace(label):
    """Records that this run child's phase `label` (bytes) happens now, when tracing."""
    if _TRACE_FD is not None:
        _trace_at(time.monotonic_ns(), _trace_pid, label)


def _cut(text):
    """`text` cut to CUT_LIMIT characters, with a marker saying how many UTF-8 bytes were left
    out."""
    if _len(text) <= CUT_LIMIT:
        return text
    rest = _len(text[CUT_LIMIT:].encode("utf-8", "surrogatepass"))
    return text[:CUT_LIMIT] + "\u2026 (%d more bytes)" % rest


def _recv_exact(sock, n):
    chunks = []
    while n > 0:
        chunk = sock.recv(min(n, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def recv_frame(sock):
    header = _recv_exact(sock, 4)
    if header is None:
        return None
    body = _recv_exact(sock, _HEADER.unpack(header)[0])
    if body is None:
        return None
    return _decode(body.decode("utf-8"))


def _int_or_null(value):
    return _int_repr(value) if _type(value) is int else "null"


class Channel:
    """Frames to and from the host on the run socket; sends are serialized by a lock. Each
    frame's JSON text is written here (strings quoted with the captured quoting); a lone
    surrogate that slipped into a message becomes U+FFFD."""

    def __init__(self, sock):
        self.sendall = sock.sendall
        self.pack = _HEADER.pack
        self.lock = threading.Lock()
        # The clock readings of a replayable run not sent yet (see `_replayable`); None in a
        # run that does not report them.
        self.readings = None
        # The draws of random bytes of a replayable run not sent yet, and how many bytes they
        # hold (see `_replayable`); None in a run that does not report them.
        self.draws = None
        self.drawn = 0

    def send_text(self, text):
        body = text.encode("utf-8", "replace")
        with self.lock:
            frame = self.pack(_len(body)) + body
            if self.readings:
                # The readings made before this frame reach the host before it.
                frame = self.readings_frame() + frame
            if self.draws:
                # So do the draws.
                self.send_draws()
            self.sendall(frame)

    def readings_frame(self):
        """The `clock` frame of the readings not sent yet, which it empties; called with the
        lock held."""
        readings = self.readings
        body = ('{"t":"clock","ms":[%s]}' % ",".join(_map(_float_repr, readings))).encode("ascii")
        readings.clear()
        return self.pack(_len(body)) + body

    def send_draws(self):
        """Writes the `entropy` frames of the draws not sent yet, which it empties; called with
        the lock held. A frame carries at most _DRAWN_PER_FRAME bytes drawn (twice as many
        characters of hexadecimal text, far below the frame limit); a draw larger than what is
        left of a frame goes on in the next (`"more": true`), so a draw of any size travels in
        frames of a bounded size, each made just before it is written."""
        draws = self.draws
        room = _DRAWN_PER_FRAME
        pieces = []
        for data in draws:
            n = _len(data)
            start = 0
            while True:
                end = start + room if n - start > room else n
                if end - start == n:
                    pieces.append(_hex(data))
                else:
                    # A piece of a large draw, without copying it first.
                    pieces.append(_memoryview_hex(_memoryview(data)[start:end]))
                room -= end - start
                start = end
                if start == n:
                    break
                self.entropy_frame(pieces, True)
                pieces = []
                room = _DRAWN_PER_FRAME
            if room == 0:
                self.entropy_frame(pieces, False)
                pieces = []
                room = _DRAWN_PER_FRAME
        if pieces:
            self.entropy_frame(pieces, False)
        draws.clear()
        self.drawn = 0

    def entropy_frame(self, pieces, more):
        text = '{"t":"entropy","draws":["%s"],"more":%s}' % ('","'.join(pieces), "true" if more else "false")
        body = text.encode("ascii")
        self.sendall(self.pack(_len(body)) + body)

    def ready(self):
        """Says the sandbox is in place; sent once, before the program is read. The host believes
        a sandbox refusal only before it (the program could forge one after)."""
        self.send_text('{"t":"ready"}')

    def call(self, call_id, name, args_text):
        self.send_text('{"t":"call","id":%s,"name":%s,"args":%s}' % (_int_repr(call_id), _quote(name), args_text))

    def log(self, text, end):
        self.send_text('{"t":"log","text":%s,"end":%s}' % (_quote(_clean(text)), "true" if end else "false"))

    def done(self, result_text=None):
        if result_text is None:
            self.send_text('{"t":"done"}')
        else:
            self.send_text('{"t":"done","result":%s}' % result_text)

    def error(self, kind, message, line=None, column=None):
        self.send_text(
            '{"t":"error","kind":%s,"message":%s,"line":%s,"column":%s}'
            % (_quote(kind), _quote(_clean(message)), _int_or_null(line), _int_or_null(column))
        )

    def reply(self, call_id, value_text):
        self.send_text('{"id":%s,"ok":true,"value":%s}' % (_int_repr(call_id), value_text))


# --- strict JSON ---------------------------------------------------------------------------


def _path(label, frames, count, extra=None):
    """A path: the label, the key the first `count` open containers are at, then `extra`."""
    out = label
    for i in range(count + 1):
        if i < count:
            frame = frames[i]
            key = frame[1][frame[2] - 1][0] if frame[0] else frame[2] - 1
        elif extra is not None:
            key = extra
        else:
            break
        if _type(key) is int:
            out += "[%d]" % key
        else:
            out += "[%s]" % _quote(_cut(key))
    return out


# No bound on the size of a text (the rehearsal's own values are small).
NO_LIMIT = 1 << 62
# The pieces of text `to_json` collects before it joins them into one string and counts it.
_PIECES = 4096
# Strings and keys up to this many characters are counted with the small pieces (at most 6
# characters of JSON text each once quoted); longer ones are measured before they are quoted.
_SHORT = 64


class TooLarge(ValueError):
    """The JSON text of a value would pass a size limit; raised before the text is built."""


def _not_json(label, frames, what):
    path = _path(label, frames, _len(frames))
    raise TypeError("%s %s; only plain JSON values can cross to the host" % (path, what))


def _too_large(label, frames, at_least, limit_text):
    # Every open container still needs its closing bracket.
    raise TooLarge(
        "%s is at least %d bytes of JSON text, more than %s; it passed that at %s"
        % (label, at_least + _len(frames), limit_text, _path(label, frames, _len(frames)))
    )


def to_json(root, label, limit=NO_LIMIT, limit_text=None):
    """The strict JSON text of `root`, or TypeError naming the path. Iterative (no recursion).

    Only exact built-in types cross (a subclass of dict, list, str, int or float is refused, so
    its methods never run), containers are read through the built-in dict and list code, and the
    text is written here: no method of the program's values and nothing the program replaced
    in the json module or in builtins is consulted. No code of the program runs during it.

    The text is counted as it is written, in characters (each at least one UTF-8 byte): once it
    passes `limit` the conversion stops with TooLarge (a ValueError) naming `limit_text` and the
    path where it passed, so a value whose expansion is huge (a list that repeats a list that
    repeats a list) costs about `limit` characters of work, never more. A string or a key
    longer than _SHORT characters is measured before it is quoted; the small pieces (numbers,
    punctuation, short strings) are counted when they are joined, every _PIECES of them, which
    also keeps the pieces' own memory small. Nesting
    deeper than MAX_DEPTH is a TypeError, like any other value that is not plain JSON."""
    # Joined text so far, its length, and the pieces since; `strings` is the length of the
    # strings and keys among those pieces (a lower bound of their length).
    chunks = []
    done = 0
    out = []
    append = out.append
    strings = 0
    # Open containers: [is_dict, items, index, n, container].
    frames = []
    value = root

    while True:
        if _len(out) >= _PIECES:
            text = "".join(out)
            out.clear()
            chunks.append(text)
            done += _len(text)
            strings = 0
            if done > limit:
                _too_large(label, frames, done, limit_text)
        kind = _type(value)
        if value is None:
            append("null")
        elif kind is bool:
            append("true" if value else "false")
        elif kind is int:
            if value < INT_MIN or value > INT_MAX:
                _not_json(label, frames, "is an integer too large for lossless JSON")
            append(_int_repr(value))
        elif kind is float:
            if value != value:
                _not_json(label, frames, "is NaN")
            if _isinf(value):
                _not_json(label, frames, "is infinite")
            if value == 0.0 and _copysign(1.0, value) < 0:
                _not_json(label, frames, "is -0.0")
            append(_float_repr(value))
        elif kind is str:
            if not _isascii(value):
                _check_str(value, label, frames, "is a string with an unpaired surrogate")
            if _len(value) <= _SHORT:
                append(_quote(value))
            else:
                # Quoting only adds characters: measure before building the quoted copy.
                if done + strings + _len(value) + 2 > limit:
                    at_least = done + _sum(_map(_len, out)) + _len(value) + 2
                    _too_large(label, frames, at_least, limit_text)
                text = _quote(value)
                append(text)
                strings += _len(text)
        elif kind is list or kind is tuple or kind is dict:
            if _len(frames) >= MAX_DEPTH:
                _not_json(label, frames, "nests deeper than %d levels" % MAX_DEPTH)
            for frame in frames:
                if frame[4] is value:
                    _not_json(label, frames, "is a cycle (it contains itself)")
            if kind is dict:
                items = [*_dict_items(value)]
                for k, _ in items:
                    if _type(k) is not str:
                        _not_json(label, frames, "has a key that is not a string (a %s)" % _cut(_type_name(_type(k))))
                    if not _isascii(k):
                        _check_str(k, label, frames, "has a key with an unpaired surrogate")
                    if _len(k) > _SHORT:
                        if done + strings + _len(k) + 3 > limit:
                            at_least = done + _sum(_map(_len, out)) + _len(k) + 3
                            _too_large(label, frames, at_least, limit_text)
                if items:
                    append("{")
                    frames.append([True, items, 0, _len(items), value])
                else:
                    append("{}")
            else:
                if value:
                    append("[")
                    frames.append([False, value, 0, _len(value), value])
                else:
                    append("[]")
        else:
            _not_json(label, frames, "is a %s, not a JSON value" % _cut(_type_name(kind)))
        # The next value to write, closing the containers that are done.
        while True:
            if not frames:
                chunks.append("".join(out))
                text = "".join(chunks)
                if _len(text) > limit:
                    _too_large(label, frames, _len(text), limit_text)
                return text
            frame = frames[-1]
            i = frame[2]
            if i == frame[3]:
                append("}" if frame[0] else "]")
                frames.pop()
                continue
            if i > 0:
                append(",")
            frame[2] = i + 1
            if frame[0]:
                k, value = frame[1][i]
                text = _quote(k)
                append(text)
                append(":")
                if _len(k) > _SHORT:
                    strings += _len(text)
            else:
                value = frame[1][i]
            break


def _check_str(s, label, frames, what):
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        _not_json(label, frames, what)


# --- the program's world -------------------------------------------------------------------


class ToolCallError(Exception):
    """A tool call failed; `tool_name` names the tool and `message` says why."""

    def __init__(self, tool_name, message):
        super().__init__(message)
        self.tool_name = tool_name
        self.message = message

    def __str__(self):
        return self.message


class LogWriter(io.TextIOBase):
    """Sends every line written to it as a log frame; long lines go in pieces."""

    CHUNK = 64 * 1024

    def __init__(self, channel):
        self.channel = channel
        self.buffer = ""

    def writable(self):
        return True

    def write(self, text):
        if not isinstance(text, str):
            raise TypeError("write() argument must be str, not %s" % type(text).__name__)
        self.buffer += text
        while True:
            newline = self.buffer.find("\n")
            if newline < 0:
                break
            line, self.buffer = self.buffer[:newline], self.buffer[newline + 1:]
            self.channel.log(line, True)
        while len(self.buffer) > self.CHUNK:
            piece, self.buffer = self.buffer[: self.CHUNK], self.buffer[self.CHUNK:]
            self.channel.log(piece, False)
        return len(text)

    def flush(self):
        pass

    def close_line(self):
        if self.buffer:
            line, self.buffer = self.buffer, ""
            self.channel.log(line, True)


def _clean(text):
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")


class Tools:
    """`tools.name(args)` and `tools["odd-name"](args)`; each call starts when it is made."""

    def __init__(self, names, bridge):
        object.__setattr__(self, "_Tools__bindings", {name: bridge.binding(name) for name in names})

    def __getattr__(self, name):
        try:
            return self.__bindings[name]
        except KeyError:
            raise AttributeError("no tool named %r" % _cut(name)) from None

    def __getitem__(self, name):
        try:
            return self.__bindings[name]
        except KeyError:
            raise KeyError("no tool named %r" % _cut(str(name))) from None

    def __setattr__(self, name, value):
        raise AttributeError("tools is read-only")

    def __dir__(self):
        return sorted(self.__bindings)


class Bridge:
    def __init__(self, channel, loop):
        self.channel = channel
        self.loop = loop
        self.pending = {}
        self.next_id = 0
        # The run's cap on one call's arguments, set when the program arrives.
        self.max_call_bytes = 16 << 20
        # Whether calls are traced (the program's, not a rehearsal's).
        self.traced = False

    def binding(self, name):
        def call(args=None, /):
            future = self.loop.create_future()
            limit = self.max_call_bytes
            limit_text = "the %d bytes one call may send (max_call_bytes)" % limit
            try:
                # Counted as it is written: stops once it passes the limit (ValueError).
                payload = to_json({} if args is None else args, "args", limit, limit_text)
            except TooLarge as error:
                future.set_exception(ValueError(str(error)))
                return future
            except TypeError as error:
                future.set_exception(error)
                return future
            # Within the limit in characters; a code point is at most four UTF-8 bytes.
            size = _len(payload)
            if size * 4 > limit:
                size = _len(payload.encode("utf-8"))
            if size > limit:
                future.set_exception(ValueError(
                    "args is %d bytes of JSON text, more than %s" % (size, limit_text)
                ))
                return future
            self.next_id += 1
            call_id = self.next_id
            self.pending[call_id] = (future, name)
            self.channel.call(call_id, name, payload)
            if self.traced:
                _trace(b"call_sent")
            return future

        call.__name__ = name if name.isidentifier() else "tool"
        return call

    def settle(self, message):
        entry = self.pending.pop(message.get("id"), None)
        if entry is None:
            return
        future, name = entry
        if self.traced:
            _trace(b"reply_received")
        if future.cancelled():
            return
        if message.get("ok"):
            future.set_result(message.get("value"))
        else:
            future.set_exception(ToolCallError(name, message.get("message", "")))


class Reader:
    """Reads reply frames on the event loop (no thread: a thread's malloc arena would distort
    the address-space accounting)."""

    def __init__(self, sock, bridge):
        self.recv = sock.recv
        self.bridge = bridge
        self.buffer = bytearray()

    def on_readable(self):
        try:
            data = self.recv(1 << 16, socket.MSG_DONTWAIT)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:
            # The host is gone: nobody wants this run any more.
            os._exit(3)
        self.buffer += data
        while len(self.buffer) >= 4:
            size = _HEADER.unpack_from(self.buffer)[0]
            if len(self.buffer) < 4 + size:
                break
            body = bytes(self.buffer[4 : 4 + size])
            del self.buffer[: 4 + size]
            self.bridge.settle(_decode(body.decode("utf-8")))


def _position(error):
    tb = error.__traceback__
    line = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "program.py":
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def _describe(error):
    """`Name: message` of an exception; the tool's name of a ToolCallError and the exception's
    class name are cut to CUT_LIMIT characters (the program chooses them)."""
    try:
        if isinstance(error, ToolCallError):
            return "ToolCallError from tool %r: %s" % (_cut(str(error.tool_name)), error.message)
        text = str(error)
    except Exception:  # noqa: BLE001 - a __str__ that fails still describes a failure
        text = "(the exception's text cannot be shown)"
    name = _cut(_type_name(_type(error)))
    return "%s: %s" % (name, text) if text else name


def compile_program(program):
    return compile_tree(ast.parse(program, filename="program.py", mode="exec"))


def compile_tree(tree):
    """The code of a parsed program: its statements as the body of `async def
    __code_main__()`, so that top-level `await` and `return` work, positions unchanged."""
    body = tree.body or [ast.Pass(lineno=1, col_offset=0, end_lineno=1, end_col_offset=0)]
    main = ast.AsyncFunctionDef(
        name="__code_main__",
        args=ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]),
        body=body,
        decorator_list=[],
        returns=None,
        type_comment=None,
        lineno=1,
        col_offset=0,
        end_lineno=body[-1].end_lineno,
        end_col_offset=body[-1].end_col_offset,
    )
    module = ast.Module(body=[main], type_ignores=[])
    return compile(module, "program.py", "exec")


def _read_proc(path):
    """The bytes of a small /proc file (plain os calls: a text-mode `open` costs several times
    more, on every run)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        return os.read(fd, 1 << 16)
    finally:
        os.close(fd)


def _vm_peak():
    """Peak virtual memory of this process in bytes, or None."""
    try:
        status = _read_proc("/proc/self/status")
        start = status.index(b"VmPeak:") + 7
        return int(status[start : status.index(b"kB", start)]) * 1024
    except (OSError, ValueError):
        return None


_PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")


def _address_space():
    """The current address space of this process in bytes, or 0."""
    try:
        return int(_read_proc("/proc/self/statm").split()[0]) * _PAGE_SIZE
    except (OSError, ValueError, IndexError):
        return 0


class Run:
    """What a run needs that does not depend on its program. A forked child builds it, and
    rehearses a run, while it waits for its program (it is the host's spare), so none of that
    is on the run's critical path."""

    def __init__(self, sock):
        self.sock = sock
        self.channel = Channel(sock)
        self.loop = asyncio.new_event_loop()
        asyncio.set_event_loop(self.loop)
        _trace(b"loop_built")
        waiting = select.poll()
        waiting.register(sock, select.POLLIN)
        # From here on the host may send the program: it wakes a normal task.
        _batch(False)
        # Rehearse only when idle: when runs come back to back, the next program arrives
        # within a few milliseconds of the fork, and a rehearsal under way would delay it.
        # And stop as soon as a program is waiting.
        if not waiting.poll(_REHEARSAL_DELAY_MS):
            _trace(b"rehearsal_start")
            _batch(True)
            try:
                _rehearse(self.loop, lambda: bool(waiting.poll(0)))
            except Exception:  # noqa: BLE001 - only a head start; the run does not need it
                pass
            _batch(False)
            _trace(b"rehearsal_end")
        self.bridge = Bridge(self.channel, self.loop)
        self.loop.add_reader(sock.fileno(), Reader(sock, self.bridge).on_readable)
        self.writer = LogWriter(self.channel)


class _Echo:
    """The host of a rehearsal: answers every call with its arguments, ignores the rest."""

    def __init__(self, channel):
        self.channel = channel

    def settle(self, message):
        if message.get("t") == "call":
            self.channel.reply(message["id"], to_json(message["args"], "args"))


# How long a spare waits for its program before it rehearses.
_REHEARSAL_DELAY_MS = 5

# The program of a rehearsal.
_REHEARSAL = "r = await tools.echo({'n': [1, 'two', 3.5, None, True]})\nfor i in range(3):\n    r['n'].append(i)\nreturn {'r': r}"


def _rehearse(loop, interrupted=lambda: False):
    """A whole run of a fixed program against an in-process echo host on a private socket pair:
    parse, compile, a tool call through the bridge, a log line, the result check and frame, the
    /proc reads. In the zygote it builds what CPython builds lazily on first use; in a forked
    child it copies, ahead of time, the pages a real run would otherwise copy on write (each a
    page fault) on its critical path. It touches nothing a program can see. It stops between
    steps once `interrupted()` says so."""
    a, b = socket.socketpair()
    try:
        channel = Channel(a)
        bridge = Bridge(channel, loop)
        loop.add_reader(a.fileno(), Reader(a, bridge).on_readable)
        loop.add_reader(b.fileno(), Reader(b, _Echo(Channel(b))).on_readable)
        if interrupted():
            return
        code = compile_program(_REHEARSAL)
        if interrupted():
            return
        namespace = {
            "__name__": "__code__",
            "__builtins__": builtins,
            "tools": Tools(["echo"], bridge),
            "ToolCallError": ToolCallError,
        }
        exec(code, namespace)
        result = loop.run_until_complete(namespace["__code_main__"]())
        if interrupted():
            return
        writer = LogWriter(channel)
        writer.write("rehearsal\n")
        writer.close_line()
        channel.done(to_json(result, "result"))
        _address_space()
        _vm_peak()
    finally:
        loop.remove_reader(a.fileno())
        loop.remove_reader(b.fileno())
        a.close()
        b.close()


# --- a replayable run ----------------------------------------------------------------------
#
# A run its host may replay (one that can pause for approval; the host's
# `CodeHost::determinism`) reads the same random numbers and wall clock when it runs again
# from the start: the `random` module's generator is seeded by the host, and the wall-clock
# readings give back those of the run replayed first, in order, then the live clock. Every
# reading, replayed or live, goes to the host, which journals it: pending readings travel in a
# `clock` frame written just before the next frame of any kind (so before the call that may
# pause the run), or on their own once _READINGS_PER_FRAME of them wait. A reading is whole
# microseconds, sent as milliseconds since the epoch: a float that any parse within one unit
# in the last place gives back the same microseconds, and every value the program sees
# (`time.time()`, `time.time_ns()`, a `datetime`) is computed from those microseconds in
# both runs alike. The system's random source is replayed the same way: `os.urandom` and
# `os.getrandom` (and with them `random.SystemRandom`, `secrets`, `uuid.uuid4`, and the seed
# of a generator made or seeded again without a seed, which the `random` module's C code would
# draw from the system itself) give back the draws of the run replayed first, in order, each
# to a request of its own size, then draw live; every draw goes to the host in `entropy`
# frames written just before the next frame of any kind, or on their own once
# _DRAWN_PER_FRAME bytes or _READINGS_PER_FRAME draws wait. Not replayed (the module doc of
# `python/mod.rs` says why): the monotonic clocks.

# The real clock, bound before any program runs.
_time_ns = time.time_ns
_localtime = time.localtime
_gmtime = time.gmtime
_ctime = time.ctime
_asctime = time.asctime
_strftime = time.strftime
_round = round
_isinstance = isinstance
_issubclass = issubclass
# The most readings one `clock` frame carries: a program that reads the clock in a loop sends
# them as it goes, in frames far below the frame limit.
_READINGS_PER_FRAME = 1024
# The most bytes drawn one `entropy` frame carries (128 KiB of hexadecimal text, within the
# frame limit's slack whatever the run's limits).
_DRAWN_PER_FRAME = 64 * 1024
# The real random source, bound before any program runs.
_urandom = os.urandom
_getrandom = getattr(os, "getrandom", None)
_hex = bytes.hex
_memoryview = memoryview
_memoryview_hex = memoryview.hex
_fromhex = bytes.fromhex
_from_bytes = int.from_bytes
_index = operator.index


def _replayable(channel, seed, clock, entropy):
    """Makes this run replayable, before its program starts: seeds the `random` module's
    generator with `seed`, and replaces `time.time`, `time.time_ns`, `time.localtime`,
    `time.gmtime`, `time.ctime`, `time.asctime`, `time.strftime` (those that read the clock when
    given no time) and `datetime.datetime` (a subclass whose `now` and `utcnow` read that clock;
    `date.today` and `datetime.today` call `time.time` themselves) with functions that answer
    from `clock` (milliseconds since the epoch) first, then from the live clock, and report
    every reading on `channel`; replaces the system's random source (`_replayable_entropy`)
    the same way with the draws of `entropy`. Both modules are preloaded in the zygote."""
    import datetime as datetime_module
    import random

    random.seed(int(seed))
    given = [float(ms) for ms in clock]
    count = _len(given)
    lock = channel.lock
    pending = channel.readings = []
    at = [0]
    _replayable_entropy(channel, random, entropy)

    def micros():
        """The next reading, in whole microseconds since the epoch."""
        with lock:
            i = at[0]
            if i < count:
                at[0] = i + 1
                ms = given[i]
                us = _round(ms * 1000)
            else:
                us = _time_ns() // 1000
                ms = us / 1000
            pending.append(ms)
            if _len(pending) >= _READINGS_PER_FRAME:
                channel.sendall(channel.readings_frame())
        return us

    def seconds(secs=None):
        return micros() / 1_000_000 if secs is None else secs

    def time_():
        return micros() / 1_000_000

    def time_ns():
        return micros() * 1000

    def localtime(secs=None, /):
        return _localtime(seconds(secs))

    def gmtime(secs=None, /):
        return _gmtime(seconds(secs))

    def ctime(secs=None, /):
        return _ctime(seconds(secs))

    def asctime(t=None, /):
        return _asctime(_localtime(seconds()) if t is None else t)

    def strftime(format, t=None, /):
        return _strftime(format, _localtime(seconds()) if t is None else t)

    for name, replacement in (
        ("time", time_),
        ("time_ns", time_ns),
        ("localtime", localtime),
        ("gmtime", gmtime),
        ("ctime", ctime),
        ("asctime", asctime),
        ("strftime", strftime),
    ):
        replacement.__name__ = replacement.__qualname__ = name
        replacement.__module__ = "time"
        replacement.__doc__ = getattr(time, name).__doc__
        setattr(time, name, replacement)

    real = datetime_module.datetime
    utc = datetime_module.timezone.utc

    class Real(type):
        """`isinstance` and `issubclass` against the replacement answer as against the real
        class: a `datetime` made elsewhere (by a module that bound the class before) is still a
        `datetime.datetime`. A subclass the program makes answers as usual."""

        def __instancecheck__(cls, value):
            if cls is replaced:
                return _isinstance(value, real)
            return type.__instancecheck__(cls, value)

        def __subclasscheck__(cls, sub):
            if cls is replaced:
                return _issubclass(sub, real)
            return type.__subclasscheck__(cls, sub)

    class replaced(real, metaclass=Real):
        __slots__ = ()

        @classmethod
        def now(cls, tz=None):
            us = micros()
            return cls.fromtimestamp(us // 1_000_000, tz).replace(microsecond=us % 1_000_000)

        @classmethod
        def utcnow(cls):
            us = micros()
            moment = cls.fromtimestamp(us // 1_000_000, utc)
            return moment.replace(microsecond=us % 1_000_000, tzinfo=None)

        def __repr__(self):
            # The real class's text names a subclass by its bare name.
            text = real.__repr__(self)
            return "datetime." + text if _type(self) is replaced else text

    replaced.__name__ = replaced.__qualname__ = "datetime"
    replaced.__module__ = "datetime"
    replaced.__doc__ = real.__doc__
    datetime_module.datetime = replaced


def _replayable_entropy(channel, random, entropy):
    """Replaces `os.urandom` and `os.getrandom` (and the `random` module's own binding of
    `os.urandom`, which `SystemRandom` and through it `secrets` draw from) with functions that
    give back the draws of `entropy` (hexadecimal texts) in order, each to a request of its own
    size, then draw live, and report every draw on `channel`. A request of another size than
    the next draw's ends the replay of draws: it and every later one draw live (a request the
    live source refuses, a negative size or one past memory, raises as it did and ends
    nothing). `random.Random.seed` given no seed (so a `Random()` made without one, which
    `tempfile` makes for its names, and `random.seed()`) seeds from 32 bytes of the replaced
    `os.urandom` instead of the system source the C code would read itself."""
    given = [_fromhex(text) for text in entropy]
    count = _len(given)
    lock = channel.lock
    pending = channel.draws = []
    at = [0]

    def draw(size, live, flags):
        size = _index(size)
        if size < 0:
            raise ValueError("negative argument not allowed")
        with lock:
            i = at[0]
            data = given[i] if i < count else None
            if data is not None and _len(data) == size:
                given[i] = None
                at[0] = i + 1
            else:
                data = live(size) if flags is None else live(size, flags)
                at[0] = count
            pending.append(data)
            channel.drawn += _len(data)
            if channel.drawn >= _DRAWN_PER_FRAME or _len(pending) >= _READINGS_PER_FRAME:
                channel.send_draws()
        return data

    def urandom(size, /):
        return draw(size, _urandom, None)

    replacements = [("urandom", urandom)]
    if _getrandom is not None:

        def getrandom(size, flags=0):
            return draw(size, _getrandom, flags)

        replacements.append(("getrandom", getrandom))
    for name, replacement in replacements:
        replacement.__name__ = replacement.__qualname__ = name
        replacement.__module__ = os.__name__
        replacement.__doc__ = getattr(os, name).__doc__
        setattr(os, name, replacement)
    random._urandom = urandom

    real_seed = random.Random.seed

    def seed(self, a=None, version=2):
        if a is None:
            a = _from_bytes(urandom(32), "big")
        real_seed(self, a, version)

    seed.__name__ = real_seed.__name__
    seed.__qualname__ = real_seed.__qualname__
    seed.__module__ = real_seed.__module__
    seed.__doc__ = real_seed.__doc__
    random.Random.seed = seed
    # The module's `seed` is the method of its generator bound when the module was imported.
    random.seed = random._inst.seed


def run_program(run, request):
    program = request["program"]
    names = request["tools"]
    limits = request["limits"]
    channel = run.channel
    loop = run.loop
    writer = run.writer

    run.bridge.max_call_bytes = int(limits.get("max_call_bytes", 16 << 20))
    run.bridge.traced = True
    stack_bytes = int(limits.get("stack_bytes", 1 << 20))
    sys.setrecursionlimit(max(100, stack_bytes // 512))
    memory = int(limits.get("memory_bytes", 256 << 20))
    max_output = int(limits.get("max_output_bytes", 64 << 20))

    ceiling = _address_space() + memory
    # A ceiling past what rlim_t takes is past any address space: no limit.
    limit = resource.RLIM_INFINITY if ceiling >= 1 << 63 else ceiling
    try:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (ValueError, OSError) as error:
        hard = resource.getrlimit(resource.RLIMIT_AS)[1]
        channel.error(
            "memory",
            "the memory limit cannot be set: RLIMIT_AS of %d bytes (this process's %d bytes of "
            "address space + memory_bytes %d) was refused (%s); the hard RLIMIT_AS this process "
            "inherited from the host is %d bytes" % (ceiling, ceiling - memory, memory, error, hard),
        )
        return
    # Read before the program arrived (`child_main`): the peak only grows, so a peak above it
    # now was reached by the program or by the receipt of its text, which the ceiling counts.
    peak_before = run.peak_before
    _trace(b"limits_set")

    sys.stdout = writer
    sys.stderr = writer

    try:
        code = _prepared_code(request.get("code"))
        if code is None:
            code = compile_program(program)
    except SyntaxError as error:
        channel.error("syntax", "%s: %s" % (type(error).__name__, error.msg), error.lineno, error.offset)
        return
    except (ValueError, MemoryError, RecursionError) as error:
        channel.error("syntax", _describe(error))
        return

    _trace(b"compiled")
    determinism = request.get("determinism")
    if determinism is not None:
        entropy = determinism.get("entropy", ())
        _replayable(channel, determinism["seed"], determinism["clock"], entropy)
    namespace = {
        "__name__": "__code__",
        "__builtins__": builtins,
        "tools": Tools(names, run.bridge),
        "ToolCallError": ToolCallError,
    }
    exec(code, namespace)
    try:
        result = loop.run_until_complete(namespace["__code_main__"]())
    except MemoryError as error:
        writer.close_line()
        channel.error("memory", _describe(error), _position(error))
        return
    except BaseException as error:  # noqa: BLE001 - every escape is the program's failure
        writer.close_line()
        channel.error("runtime", _describe(error), _position(error))
        return
    writer.close_line()
    _trace(b"program_returned")
    # A program that caught a MemoryError still reached its limit: the peak tells.
    peak = _vm_peak()
    if (
        peak is not None
        and peak_before is not None
        and peak > peak_before
        and peak + max(2 << 20, memory // 20) >= ceiling
    ):
        channel.error("memory", "the program reached its memory limit (and caught the MemoryError)")
        return
    if result is None:
        channel.done()
        return
    try:
        value = to_json(result, "result", max_output, "max_output_bytes")
    except TooLarge:
        # The host words this failure itself (its output budget).
        channel.error("output_limit", "")
        return
    except TypeError as error:
        channel.error("invalid_result", str(error))
        return
    channel.done(value)
    _trace(b"result_sent")


def child_main(sock):
    """Prepares a run, waits for its program, runs it and leaves with `os._exit` (no interpreter
    finalization: every frame is already sent, synchronously, when the run ends). Its first
    frame says it is ready: whatever set up its sandbox is done, and nothing of the program has
    run (frames after it may be the program's own)."""
    try:
        Channel(sock).ready()
    except OSError:
        # The host is gone already (a spare nobody needed).
        os._exit(2)
    _trace(b"ready_sent")
    run = Run(sock)
    # Off the run's critical path: reading /proc/self/status costs about as much as the rest
    # of the run's set-up.
    run.peak_before = _vm_peak()
    _trace(b"run_built")
    request = recv_frame(sock)
    if request is None:
        # The host dropped this child (a spare nobody needed).
        os._exit(2)
    _trace(b"program_received")
    channel = run.channel
    try:
        run_program(run, request)
    except MemoryError:
        try:
            channel.error("memory", "MemoryError")
        except BaseException:  # noqa: BLE001
            pass
    finally:
        try:
            sys.stdout = sys.__stdout__
            sys.stderr = sys.__stderr__
        except BaseException:  # noqa: BLE001
            pass
        # The run is over: what its program started goes now, while it is still in this
        # process's tree. (Once this process exits, its orphans would go to its parent's
        # subreaper, or to init when the host spawned it.)
        # As the first process of a PID namespace, its exit kills every other process of it.
        # A zygote's child leaves both to its release (see `_linger`).
        if os.getpid() != 1 and not _FORKED:
            try:
                _kill_tree(os.getpid())
            except BaseException:  # noqa: BLE001 - the host still kills by pid and group
                pass
    _trace(b"child_exit")
    if _FORKED:
        # Its teardown, when the release kills it, is background work.
        _batch(True)
        _linger()
    os._exit(0)


# Whether this process is a zygote's run child: it prepares as a batch task (see `_batch`) and
# waits to be killed once its outcome is sent instead of leaving by itself (see `_linger`).
_FORKED = False
_SCHED_PARAM = os.sched_param(0) if hasattr(os, "sched_param") else None


def _batch(on):
    """A zygote's run child makes itself a batch task (`SCHED_BATCH`) for what it does in the
    background, and a normal one (`SCHED_OTHER`, as it was forked) whenever the host may be
    waiting for it. A batch task's wakeups do not preempt the task running on a core, so the
    spare that is being made while a run goes (its fork's set-up, its rehearsal) and the
    teardown of the run that just ended leave the core to the run and to the host reading its
    outcome; they still get their fair share of the CPU. Changing between the two at the same
    nice value needs no privilege; where it fails, nothing changes."""
    if _FORKED:
        try:
            os.sched_setscheduler(0, os.SCHED_BATCH if on else os.SCHED_OTHER, _SCHED_PARAM)
        except (OSError, AttributeError):
            pass


def _linger():
    """Waits until the zygote kills this process. A zygote's run child that has sent its outcome
    is released by the host as soon as the host has read it: the zygote kills it with its
    process tree (or, under the sandbox, the run's PID namespace) and reaps it. Exiting by
    itself here instead put this process's teardown (its memory and, under the sandbox, its
    namespaces: a millisecond or more of CPU) on the machine at the moment the host reads the
    outcome, which is when the caller waits; killed by its release, it goes once the host has
    the outcome. It blocks at once (no Python work between the outcome and the wait: a core
    shared with the host would delay the host by that much). Nothing of the run is read after
    its outcome (the host stops reading), so what the program left running (another thread, a
    signal handler) changes nothing but the moments until the release."""
    while True:
        try:
            signal.pause()
        except BaseException:  # noqa: BLE001 - only the release ends it
            pass


def _warm_up():
    """One rehearsal in the zygote, so that what CPython builds lazily on first use is built
    once here instead of in every child."""
    loop = asyncio.new_event_loop()
    try:
        _rehearse(loop)
    except Exception:  # noqa: BLE001 - only a head start; the children do not need it
        pass
    finally:
        loop.close()
        asyncio.set_event_loop(None)


def _load_prctl():
    """`prctl` from libc, loaded once in the zygote (importing ctypes per run would be slow)."""
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl
    except Exception:  # noqa: BLE001 - best effort; the host still kills by pid
        return None


_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36


def _become_subreaper(prctl):
    """Orphaned descendants of this process are reparented to it (not to init), so they stay
    in its process tree where `_kill_tree` finds them. Best effort: False if it did not work."""
    if prctl is None:
        return False
    try:
        return prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except Exception:  # noqa: BLE001
        return False


def _die_with_parent(prctl, parent):
    """Arms the death signal (die if the zygote dies) and ends this process now if its parent
    (`parent`, a `_Parent`) died before it was armed."""
    _set_pdeathsig(prctl)
    # A run child keeps what its program starts in its own tree, even a process that left
    # the process group (setsid) and whose parent exited.
    _become_subreaper(prctl)
    if not parent.alive():
        os._exit(5)


class _Parent:
    """Whether the process that forked this one (the zygote, or the interpreter the host spawned
    for one run) is still alive, asked after the death signal is armed (a parent that died
    before cannot send it). A process cloned into a PID namespace of its own has no parent
    there (`getppid` is 0): it reads its parent's pid from its own `stat` in the /proc the
    parent sees (opened at the first question, before the run's own /proc is mounted over it,
    and kept until the last, see `Sandbox.enter_run`), against the parent's pid in that /proc."""

    def __init__(self, pid, cloned, joined=False):
        # The parent's pid: as `os.getpid()` gives it, or (cloned) as its /proc names it, None
        # when that could not be read (then nothing can be told, and the answer is yes).
        self.pid = pid
        self.cloned = cloned
        # Whether this process was cloned straight into the run's cgroup (v2).
        self.joined = joined
        self.fd = None

    def alive(self):
        if not self.cloned:
            return os.getppid() == self.pid
        if self.pid is None:
            return True
        try:
            if self.fd is None:
                self.fd = os.open("/proc/self/stat", os.O_RDONLY | os.O_CLOEXEC)
            else:
                os.lseek(self.fd, 0, os.SEEK_SET)
            stat = os.read(self.fd, 1024)
            return int(stat[stat.rindex(b")") + 2 :].split()[1]) == self.pid
        except (OSError, ValueError, IndexError):
            return True

    def close(self):
        if self.fd is not None:
            try:
                os.close(self.fd)
            except OSError:
                pass
            self.fd = None

    def outer_pid(self):
        """This process's pid as its parent (and the host) sees it."""
        if not self.cloned:
            return os.getpid()
        try:
            return int(os.readlink("/proc/self"))
        except (OSError, ValueError):
            return 0


# The zygote's children that it cloned into a PID namespace of their own (see `_fork_run`):
# killing one kills every process of its run.
_IN_PID_NAMESPACE = set()


def _fork_run(sandbox, into=None):
    """Forks a run's first process. Under the sandbox it is cloned straight into a PID namespace
    of its own (`Sandbox.clone_pid_namespace`), where it is PID 1; where that cannot be done (or
    the layer is disabled) it is forked with `os.fork`, and the run's `pid_namespace` layer
    reports why (`Sandbox.enter_run`). `into` is the open directory of the run's cgroup v2, if
    any, to clone the child straight into. Returns `(pid, parent)`: in the child, pid 0 and the
    `_Parent` to ask whether this process is still alive; in the parent, the child's pid and
    None."""
    if sandbox.on and "pid_namespace" not in sandbox.skip:
        try:
            mine = int(os.readlink("/proc/self"))
        except (OSError, ValueError):
            mine = None
        try:
            pid, joined = sandbox.clone_pid_namespace(into)
        except OSError as error:
            sandbox.clone_error = _cut(str(error))
        else:
            if pid == 0:
                return 0, _Parent(mine, True, joined)
            _IN_PID_NAMESPACE.add(pid)
            return pid, None
    global _ORPHANS_MAY_COME
    _ORPHANS_MAY_COME = True
    me = os.getpid()
    pid = os.fork()
    return pid, (_Parent(me, False) if pid == 0 else None)


# Whether a process a run started may come to the zygote (see `_reap_orphans`): only from a
# child forked without a PID namespace of its own. A process of a run's PID namespace whose
# parent dies goes to the namespace's first process, which reaps every one before it exits
# (the first process of a namespace may not clone a sibling for itself, CLONE_PARENT).
_ORPHANS_MAY_COME = False


def _children(pid):
    """The live (not zombie) children of `pid`, from /proc (every thread's list)."""
    found = []
    try:
        tasks = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return found
    for task in tasks:
        try:
            listed = _read_proc("/proc/%d/task/%s/children" % (pid, task)).split()
        except OSError:
            continue
        for child in listed:
            child = int(child)
            try:
                stat = _read_proc("/proc/%d/stat" % child)
                state = stat[stat.rindex(b")") + 2 : stat.rindex(b")") + 3]
            except (OSError, ValueError):
                continue
            if state != b"Z":
                found.append(child)
    return found


def _descendants(pid):
    """The live descendants of `pid`."""
    out = []
    stack = [pid]
    while stack:
        for child in _children(stack.pop()):
            out.append(child)
            stack.append(child)
    return out


def _kill_tree(pid):
    """Kills every live descendant of `pid` (a run child is a subreaper, so what its program
    started is in its tree, whatever process group or session it moved to), again until none
    is left (a process may fork while the tree is read), a bounded number of times."""
    for _ in range(1000):
        found = _descendants(pid)
        if not found:
            return
        for child in found:
            try:
                os.kill(child, signal.SIGKILL)
            except OSError:
                pass


def _kill_group(pid):
    """Kills the child, everything in its process tree and its whole process group. A child
    that is the first process of its run's PID namespace takes every process of the namespace
    with it (the kernel kills them, and tears the namespace down while the zygote goes on
    serving): one signal, no reading of the tree."""
    if pid not in _IN_PID_NAMESPACE:
        _kill_tree(pid)
    for kill in (os.killpg, os.kill):
        try:
            kill(pid, signal.SIGKILL)
        except OSError:
            pass


def _reap_orphans(known):
    """Kills and reaps the zygote's children that are not run children it knows: processes a
    run started whose run child died first (the zygote is a subreaper, so they came here).
    Their runs are over: every live run child is a subreaper that keeps its own orphans. None
    can come while every child was cloned into a PID namespace of its own: then nothing is
    read."""
    if not _ORPHANS_MAY_COME:
        return
    for task in _safe_listdir("/proc/self/task"):
        try:
            listed = _read_proc("/proc/self/task/%s/children" % task).split()
        except OSError:
            continue
        for child in listed:
            child = int(child)
            if child in known:
                continue
            _kill_group(child)
            try:
                os.waitpid(child, os.WNOHANG)
            except ChildProcessError:
                pass


def _safe_listdir(path):
    try:
        return os.listdir(path)
    except OSError:
        return []


def _reap_dead(dying):
    """Reaps the released children that have died, without waiting."""
    for pid in list(dying):
        usage = None
        try:
            done, _, usage = os.wait4(pid, os.WNOHANG)
        except ChildProcessError:
            done = pid
        if done:
            dying.discard(pid)
            _IN_PID_NAMESPACE.discard(pid)
            if _TRACE_FD is not None:
                _trace_at(time.monotonic_ns(), pid, b"zygote_reaped")
                if usage is not None:
                    # The run child's CPU time, whole, with its child's (the program's process).
                    cpu = int((usage.ru_utime + usage.ru_stime) * 1e9)
                    _trace_at(time.monotonic_ns(), pid, b"spare_rusage", cpu)


# --- pre-run analysis (served by the zygote; see `_serve_analysis`) -------------------------

# Names whose use can reach the program's namespace, or a tool, without naming it.
_ANALYSIS_ESCAPES = frozenset(
    ("getattr", "globals", "locals", "vars", "eval", "exec", "compile", "__import__",
     "__builtins__", "breakpoint")
)
# Attributes that lead to frames, and through them to any namespace.
_ANALYSIS_FRAME_ATTRS = frozenset(
    ("f_globals", "f_locals", "f_back", "f_builtins", "tb_frame", "cr_frame", "gi_frame",
     "ag_frame", "gi_yieldfrom", "cr_await")
)
# The deepest literal followed; deeper parts are unknown.
_ANALYSIS_DEPTH = 64


def _analysis_literal(node, depth=0):
    """What is known of an argument's value: ["u"] unknown, ["n"], ["b", v], ["i", v],
    ["f", v], ["s", v], ["a", [items]], ["o", [[key, value], ...]]."""
    if depth > _ANALYSIS_DEPTH:
        return ["u"]
    kind = type(node)
    if kind is ast.Constant:
        value = node.value
        vkind = type(value)
        if value is None:
            return ["n"]
        if vkind is bool:
            return ["b", value]
        if vkind is int:
            return ["i", value] if -(1 << 63) <= value < (1 << 63) else ["u"]
        if vkind is float:
            return ["f", value] if not (math.isinf(value) or math.isnan(value)) else ["u"]
        if vkind is str:
            return ["s", value]
        return ["u"]
    if kind is ast.UnaryOp and type(node.op) is ast.USub and type(node.operand) is ast.Constant:
        value = node.operand.value
        if type(value) is int or type(value) is float:
            negated = ast.Constant(value=-value)
            return _analysis_literal(negated, depth)
        return ["u"]
    if kind is ast.List or kind is ast.Tuple:
        items = []
        for item in node.elts:
            if type(item) is ast.Starred:
                return ["u"]
            items.append(_analysis_literal(item, depth + 1))
        return ["a", items]
    if kind is ast.Dict:
        entries = []
        for key, value in zip(node.keys, node.values):
            # `**spread` has no key; a key that is not a string literal is not known.
            if key is None or type(key) is not ast.Constant or type(key.value) is not str:
                return ["u"]
            entries.append([key.value, _analysis_literal(value, depth + 1)])
        return ["o", entries]
    return ["u"]


def _analysis_args(call):
    """The arguments a tool's binding receives from `call`, or None when not known at all."""
    if call.keywords:
        return None
    if not call.args:
        return ["o", []]
    first = call.args[0]
    if type(first) is ast.Starred:
        return None
    if type(first) is ast.Constant and first.value is None:
        return ["o", []]
    return _analysis_literal(first)


def _analysis_nodes(tree):
    """Every node of `tree`, each parent before its children (an explicit stack: no
    recursion, and about three times faster than `ast.walk`'s generators)."""
    nodes = []
    stack = [tree]
    node_type = ast.AST
    append = nodes.append
    push = stack.append
    pop = stack.pop
    while stack:
        node = pop()
        append(node)
        for name in node._fields:
            value = getattr(node, name, None)
            if type(value) is list:
                for item in value:
                    if isinstance(item, node_type):
                        push(item)
            elif isinstance(value, node_type):
                push(value)
    return nodes


# The bytecode format of this interpreter (what `.pyc` files carry): a prepared code object is
# tagged with it, and a run of another interpreter compiles the program itself.
_CODE_MAGIC = importlib.util.MAGIC_NUMBER.hex()


def _prepared_code(text):
    """The code object the zygote compiled for this program when it analysed it
    (`<magic>:<marshalled code, base64>`; the host took it from the analysis's answer by the
    program's exact text and sends it with the run), or None: then the run compiles the
    program itself."""
    if type(text) is not str:
        return None
    magic, _, blob = text.partition(":")
    if magic != _CODE_MAGIC:
        # Compiled by another interpreter (a runtime of another Python in this host).
        return None
    try:
        code = marshal.loads(binascii.a2b_base64(blob))
    except (ValueError, TypeError, EOFError, binascii.Error):
        return None
    return code if type(code) is type(compile_tree.__code__) else None


def analyse_program(program, keep_code=False):
    """The tool calls `program` can make, found without running it (the pre-run analysis of
    `run_code`; `tools-code/src/analysis/mod.rs` says what is found and refused).

    Returns {"uses": [[name, line, column, is_call, args], ...], "open": bool}, or
    {"syntax": {...}} with the failure the run reports for a program that does not parse.
    With `keep_code`, the answer also carries the program's code, compiled from the tree just
    analysed and marshalled as base64 ("code"; left out when it does not compile): the run
    takes it instead of parsing and compiling the program again, so a program is parsed once
    for both. Iterative, so a deep program does not recurse here."""
    try:
        tree = ast.parse(program, filename="program.py", mode="exec")
    except SyntaxError as error:
        return {"syntax": {"message": "%s: %s" % (type(error).__name__, error.msg),
                           "line": error.lineno, "column": error.offset}}
    except (ValueError, MemoryError, RecursionError) as error:
        return {"syntax": {"message": _describe(error)}}
    nodes = _analysis_nodes(tree)
    lines = program.split("\n")
    writes = {}
    candidates = []

    def write(name):
        writes[name] = writes.get(name, 0) + 1

    for node in nodes:
        kind = type(node)
        if kind is ast.Name:
            if type(node.ctx) is not ast.Load:
                write(node.id)
        elif kind is ast.FunctionDef or kind is ast.AsyncFunctionDef or kind is ast.ClassDef:
            write(node.name)
        elif kind is ast.arg:
            write(node.arg)
        elif kind is ast.alias:
            write((node.asname or node.name).split(".")[0])
        elif kind is ast.ExceptHandler:
            if node.name:
                write(node.name)
        elif kind is ast.Global or kind is ast.Nonlocal:
            for name in node.names:
                write(name)
        elif kind is ast.MatchAs or kind is ast.MatchStar:
            if node.name:
                write(node.name)
        elif kind is ast.MatchMapping:
            if node.rest:
                write(node.rest)
        if kind is ast.Assign:
            if len(node.targets) == 1 and type(node.targets[0]) is ast.Name and type(node.value) is ast.Name:
                candidates.append((node.targets[0].id, node.value))
        elif kind is ast.AnnAssign:
            if node.value is not None and type(node.target) is ast.Name and type(node.value) is ast.Name:
                candidates.append((node.target.id, node.value))

    is_open = False
    tools = set()
    if writes.get("tools", 0) == 0:
        tools.add("tools")
        grown = True
        while grown:
            grown = False
            for name, source in candidates:
                if name not in tools and source.id in tools and writes.get(name, 0) == 1:
                    tools.add(name)
                    grown = True
    else:
        is_open = True
    consumed = set()
    for name, source in candidates:
        if name in tools and source.id in tools:
            consumed.add(id(source))

    def column(line, offset):
        text = lines[line - 1] if 0 < line <= len(lines) else ""
        return len(text.encode("utf-8")[:offset].decode("utf-8", "replace")) + 1

    def member(node):
        """(name, line, column) of a static member of a tool object, or None."""
        if type(node) is ast.Attribute:
            line = node.end_lineno or node.lineno
            end = node.end_col_offset or 0
            return node.attr, line, column(line, max(0, end - len(node.attr.encode("utf-8"))))
        key = node.slice
        if type(key) is ast.Constant and type(key.value) is str:
            return key.value, key.lineno, column(key.lineno, key.col_offset)
        return None

    uses = []
    for node in nodes:
        kind = type(node)
        if kind is ast.Call:
            func = node.func
            if (type(func) is ast.Attribute or type(func) is ast.Subscript) and type(func.value) is ast.Name and func.value.id in tools:
                consumed.add(id(func))
                consumed.add(id(func.value))
                found = member(func)
                if found is None:
                    is_open = True
                elif found[0].startswith("_"):
                    # The object's own attributes (`__dir__`, its bindings): not a tool's name.
                    is_open = True
                    uses.append([found[0], found[1], found[2], False, None])
                else:
                    uses.append([found[0], found[1], found[2], True, _analysis_args(node)])
        elif kind is ast.Attribute or kind is ast.Subscript:
            if kind is ast.Attribute and (node.attr.startswith("__") or node.attr in _ANALYSIS_FRAME_ATTRS):
                is_open = True
            if id(node) in consumed:
                continue
            if type(node.value) is ast.Name and node.value.id in tools:
                consumed.add(id(node.value))
                found = member(node)
                if found is None:
                    is_open = True
                else:
                    if found[0].startswith("_"):
                        is_open = True
                    uses.append([found[0], found[1], found[2], False, None])
        elif kind is ast.Name:
            if id(node) in consumed or type(node.ctx) is not ast.Load:
                continue
            if node.id in tools or node.id in _ANALYSIS_ESCAPES:
                is_open = True
    uses.sort(key=lambda u: (u[1], u[2]))
    answer = {"uses": uses, "open": is_open}
    if keep_code:
        try:
            code = marshal.dumps(compile_tree(tree))
        except Exception:  # noqa: BLE001 - the run compiles the program itself and says why
            return answer
        answer["code"] = _CODE_MAGIC + ":" + binascii.b2a_base64(code, newline=False).decode("ascii")
    return answer


def _serve_analysis(fds):
    """One analysis for the host: a frame {"program": ...} in on the passed socket, a frame
    with `analyse_program`'s answer (or {"skip": true} when it could not be made) out."""
    if not fds:
        return
    for fd in fds[1:]:
        os.close(fd)
    sock = socket.socket(fileno=fds[0])
    try:
        sock.settimeout(5)
        request = recv_frame(sock)
        if request is None:
            return
        try:
            reply = analyse_program(request["program"], keep_code=True)
        except Exception:  # noqa: BLE001 - no analysis; the run decides
            reply = {"skip": True}
        try:
            body = json.dumps(reply).encode("utf-8")
        except (ValueError, TypeError):
            body = b'{"skip": true}'
        sock.sendall(_HEADER.pack(len(body)) + body)
    except (OSError, ValueError, KeyError, TypeError):
        pass
    finally:
        sock.close()


# --- the sandbox ---------------------------------------------------------------------------
#
# Layers, in the order they are set up (see the module doc of `python/mod.rs` for why here):
#   in the zygote, once:     user namespace, network namespace, mount namespace with the
#                            read-only view (pivot_root into it);
#   in each run child A:     a user namespace of its own, a PID namespace, a mount namespace,
#                            an IPC namespace, the process limit; then it forks B, the first
#                            process (PID 1) of the new PID namespace, which runs the program;
#   in B, before it waits:   a fresh /proc, an empty /tmp and /dev/shm, no_new_privs, Landlock,
#                            dropped capabilities, the seccomp filter.
# All of it happens before the program arrives (a spare is ready with every layer in place).

_CLONE_NEWNS = 0x00020000
_CLONE_NEWUTS = 0x04000000
_CLONE_NEWIPC = 0x08000000
_CLONE_NEWUSER = 0x10000000
_CLONE_NEWPID = 0x20000000
_CLONE_NEWNET = 0x40000000
_CLONE_INTO_CGROUP = 0x200000000
_MS_RDONLY = 1
_MS_NOSUID = 2
_MS_NODEV = 4
_MS_NOEXEC = 8
_MS_REMOUNT = 32
_MS_NOATIME = 1024
_MS_NODIRATIME = 2048
_MS_BIND = 4096
_MS_REC = 16384
_MS_PRIVATE = 1 << 18
_MS_RELATIME = 1 << 21
_MNT_DETACH = 2
_PR_SET_DUMPABLE = 4
_PR_CAPBSET_DROP = 24
_PR_SET_SECCOMP = 22
_PR_SET_NO_NEW_PRIVS = 38
_SECCOMP_MODE_FILTER = 2
# Landlock (the syscall numbers are the same on every architecture).
_LANDLOCK_CREATE_RULESET = 444
_LANDLOCK_ADD_RULE = 445
_LANDLOCK_RESTRICT_SELF = 446
_LL_EXECUTE = 1 << 0
_LL_WRITE_FILE = 1 << 1
_LL_READ_FILE = 1 << 2
_LL_READ_DIR = 1 << 3
_LL_TRUNCATE = 1 << 14
_LL_IOCTL_DEV = 1 << 15
_LL_FILE_RIGHTS = _LL_EXECUTE | _LL_WRITE_FILE | _LL_READ_FILE | _LL_TRUNCATE | _LL_IOCTL_DEV

# The layers, as the host names them.
LAYERS = (
    "user_namespace",
    "pid_namespace",
    "network_namespace",
    "mount_namespace",
    "landlock",
    "seccomp",
    "no_new_privileges",
    "capabilities",
    "process_limit",
    "memory_account",
)

# When the host runs as root: the user id inside the zygote's user namespace that run children
# switch to, and the host's user id it stands for ("nobody"). The kernel exempts root's
# processes from RLIMIT_NPROC, so a run must not be root outside its namespaces.
_RUN_ID = 1000
_NOBODY = 65534

# Device files the view keeps (read and write).
_DEVICES = ("/dev/null", "/dev/zero", "/dev/urandom", "/dev/random")


class SandboxError(Exception):
    """A layer that could not be set up: `layer` names it."""

    def __init__(self, layer, message):
        super().__init__("%s: %s" % (layer, message))
        self.layer = layer


class Sandbox:
    """The sandbox settings from the host and what holds: `status[layer]` is None when the
    layer is active, else why it is not."""

    def __init__(self, config):
        self.policy = config.get("policy", "off")
        self.skip = set(config.get("skip", ()))
        self.filter = bytes.fromhex(config.get("seccomp", ""))
        self.nproc = int(config.get("nproc", 64))
        self.tmp_bytes = int(config.get("tmp_bytes", 64 << 20))
        self.shm_bytes = int(config.get("shm_bytes", 16 << 20))
        self.tmp_inodes = int(config.get("tmp_inodes", 16384))
        self.pivot_root = config.get("pivot_root")
        self.clone_number = config.get("clone")
        self.clone3_number = config.get("clone3")
        # clone3, for a clone straight into the run's cgroup (v2); None once it failed.
        self._clone3 = None
        # Why the last clone into a PID namespace failed (see `_fork_run`).
        self.clone_error = None
        self._clone = None
        # Why there is no clone (see `clone_pid_namespace`).
        self._no_clone = None
        # libc's close_range(2), where it has it (see `_close_inherited`).
        self.close_range = None
        self.status = {}
        # The user id run children switch to in the zygote's user namespace (host root only).
        self.run_id = None
        self.host_uid = os.getuid()
        # The view's read-only paths (Landlock rules are built from them).
        self.view = []
        # Made once by `prepare`: the Landlock plan (or why there is none) and the seccomp
        # program.
        self._landlock_plan = None
        self._landlock_error = "Landlock was not prepared"
        self._program = None
        self._capbset = []
        self._capset = None
        self.libc = None
        if self.policy != "off":
            import ctypes

            self.ctypes = ctypes
            self.libc = ctypes.CDLL(None, use_errno=True)
            try:
                self.close_range = self.libc.close_range
                self.close_range.argtypes = [ctypes.c_uint, ctypes.c_uint, ctypes.c_int]
                self.close_range.restype = ctypes.c_int
            except AttributeError:
                self.close_range = None
            try:
                for name in ("PyOS_BeforeFork", "PyOS_AfterFork_Child", "PyOS_AfterFork_Parent"):
                    hook = getattr(ctypes.pythonapi, name)
                    hook.argtypes = []
                    hook.restype = None
                if self.clone_number is None:
                    self._no_clone = "no clone system call number for this architecture"
                else:
                    # Called holding the GIL, as `os.fork` calls `fork` (see
                    # `clone_pid_namespace`).
                    calls = ctypes.PyDLL(None, use_errno=True)
                    self._clone = calls["syscall"]
                    self._clone.argtypes = [ctypes.c_long] + [ctypes.c_ulong] * 5
                    self._clone.restype = ctypes.c_long
                    if self.clone3_number is not None:
                        self._clone3 = calls["syscall"]
                        self._clone3.argtypes = [ctypes.c_long, ctypes.c_char_p, ctypes.c_ulong]
                        self._clone3.restype = ctypes.c_long
            except AttributeError as error:
                # An interpreter that does not export its fork hooks (or a libc without syscall).
                self._clone = self._clone3 = None
                self._no_clone = "the interpreter's fork hooks cannot be called: %s" % _cut(str(error))

    @property
    def on(self):
        return self.policy != "off"

    def _check(self, rc, what):
        if rc is None or rc < 0:
            errno = self.ctypes.get_errno()
            raise OSError(errno, "%s: %s" % (what, os.strerror(errno)))
        return rc

    def _layer(self, layer, setup, needs=()):
        """Sets up `layer` with `setup()`, recording whether it holds. Under "require" a failure
        raises SandboxError; under "best_effort" it is recorded and the run goes on."""
        if layer in self.skip:
            self.status[layer] = "disabled for a test (pretend_missing)"
        else:
            missing = [n for n in needs if self.status.get(n, "not set up") is not None]
            if missing:
                self.status[layer] = "needs %s" % ", ".join(missing)
            else:
                try:
                    setup()
                    self.status[layer] = None
                    return True
                except Exception as error:  # noqa: BLE001 - recorded, and fatal under require
                    self.status[layer] = _cut(str(error))
        if self.policy == "require":
            raise SandboxError(layer, self.status[layer])
        return False

    # -- syscalls ----------------------------------------------------------------------------

    def _unshare(self, flags, what):
        self._check(self.libc.unshare(flags), "unshare(%s)" % what)

    def _write(self, path, text):
        fd = os.open(path, os.O_WRONLY)
        try:
            os.write(fd, text.encode())
        finally:
            os.close(fd)

    def _map_root(self, uid, gid):
        """Maps root in the new user namespace to `uid`/`gid` outside it."""
        try:
            self._write("/proc/self/setgroups", "deny")
        except FileNotFoundError:
            pass
        self._write("/proc/self/uid_map", "0 %d 1" % uid)
        self._write("/proc/self/gid_map", "0 %d 1" % gid)

    def _mount(self, source, target, fstype, flags, data=None):
        c = self.ctypes
        rc = self.libc.mount(
            c.c_char_p(None if source is None else source.encode()),
            c.c_char_p(target.encode()),
            c.c_char_p(None if fstype is None else fstype.encode()),
            c.c_ulong(flags),
            c.c_char_p(None if data is None else data.encode()),
        )
        self._check(rc, "mount %s on %s" % (source or fstype or "(remount)", target))

    def _prctl(self, *args):
        c = self.ctypes
        return self.libc.prctl(*[c.c_ulong(a) if _type(a) is int else a for a in args])

    # -- in each run child, first -------------------------------------------------------------

    def join_account(self, fds, joined=False):
        """Joins the run's cgroup (one per hierarchy): the host made it and passed its
        cgroup.procs, so this process and everything it starts are born inside, counted by the
        run's memory and process limits. Writing "0" moves the writer; the kernel checks the
        write against whoever opened the file (the host). A process `joined` already (cloned
        into the cgroup, v2) writes nothing. Closes the descriptors. Returns the SandboxError
        under "require", None otherwise (a failure is recorded)."""
        if not fds:
            return None

        def join():
            if not joined:
                for fd in fds:
                    os.write(fd, b"0")

        try:
            self._layer("memory_account", join)
        except SandboxError as error:
            return error
        finally:
            for fd in fds:
                try:
                    os.close(fd)
                except OSError:
                    pass
        return None

    # -- in the zygote, once -----------------------------------------------------------------

    def enter_zygote(self):
        """The layers every run shares: a user namespace (root inside is the host's user
        outside, with no capability over the host), a network namespace (only loopback, down),
        and a mount namespace whose root is the read-only view."""
        if not self.on:
            return
        uid, gid = os.getuid(), os.getgid()

        def user():
            if uid == 0:
                self._unshare_as_root()
            else:
                self._unshare(_CLONE_NEWUSER, "CLONE_NEWUSER")
                self._map_root(uid, gid)

        self._layer("user_namespace", user)
        self._layer("network_namespace", lambda: self._unshare(_CLONE_NEWNET, "CLONE_NEWNET"), ("user_namespace",))
        self._layer("mount_namespace", self._enter_view, ("user_namespace",))
        self.prepare()

    def _unshare_as_root(self):
        """A user namespace for a zygote the host's root started: a helper left outside it
        (with root's CAP_SETUID there) maps root inside to root outside, and _RUN_ID inside to
        nobody outside, the user run children switch to."""
        me = os.getpid()
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(w)
            code = 1
            try:
                if os.read(r, 1) == b"u":
                    for name in ("uid_map", "gid_map"):
                        self._write("/proc/%d/%s" % (me, name), "0 0 1\n%d %d 1\n" % (_RUN_ID, _NOBODY))
                    code = 0
            finally:
                os._exit(code)
        os.close(r)
        try:
            self._unshare(_CLONE_NEWUSER, "CLONE_NEWUSER")
            os.write(w, b"u")
        finally:
            os.close(w)
            _, status = os.waitpid(pid, 0)
        if status != 0:
            raise OSError("the helper outside the user namespace could not write its id maps")
        self.run_id = _RUN_ID

    def _view_paths(self):
        """The interpreter, its standard library and the directories of the shared libraries
        it has loaded, each resolved; nested paths are dropped (their parent is in)."""
        paths = {os.path.realpath(sys.executable), os.path.realpath(os.path.dirname(os.__file__))}
        try:
            maps = _read_proc("/proc/self/maps").decode("utf-8", "replace")
        except OSError:
            maps = ""
        for line in maps.splitlines():
            parts = line.split(None, 5)
            if _len(parts) == 6 and parts[5].startswith("/") and ".so" in parts[5]:
                path = parts[5].strip()
                if os.path.exists(path):
                    paths.add(os.path.dirname(os.path.realpath(path)))
        out = []
        for path in sorted(paths, key=lambda p: (_len(p), p)):
            if not any(path == kept or path.startswith(kept.rstrip("/") + "/") for kept in out):
                out.append(path)
        return out

    def _locked_flags(self, path):
        """The flags of the mount holding `path` that a remount inside a user namespace must
        keep (they are locked)."""
        flags = os.statvfs(path).f_flag
        out = _MS_NOSUID | _MS_NODEV
        for st, ms in ((8, _MS_NOEXEC), (1024, _MS_NOATIME), (2048, _MS_NODIRATIME), (4096, _MS_RELATIME)):
            if flags & st:
                out |= ms
        return out

    def _enter_view(self):
        # With their own IPC and UTS namespaces: no System V IPC object or host name shared
        # with the host.
        self._unshare(_CLONE_NEWNS | _CLONE_NEWIPC | _CLONE_NEWUTS, "CLONE_NEWNS|CLONE_NEWIPC|CLONE_NEWUTS")
        self._mount(None, "/", None, _MS_REC | _MS_PRIVATE)
        self.view = self._view_paths()

        def holds_view(d):
            # The tmpfs mounted on the staging directory would hide any view path beneath it
            # (an interpreter installed under /tmp, say) before it is bound into the view.
            return any(path == d or path.startswith(d + "/") for path in self.view)

        base = next((d for d in ("/tmp", "/mnt", "/var/tmp", "/run", "/opt", "/srv", "/media", "/home")
                     if os.path.isdir(d) and not holds_view(d)), None)
        if base is None:
            raise OSError("no directory to build the view in (/tmp, /mnt, ... all hold the interpreter)")
        self._mount("tmpfs", base, "tmpfs", _MS_NOSUID | _MS_NODEV, "size=1m,mode=0755")
        for path in self.view + [d for d in _DEVICES if os.path.exists(d)]:
            target = base + path
            if os.path.isdir(path):
                os.makedirs(target, exist_ok=True)
            else:
                os.makedirs(os.path.dirname(target), exist_ok=True)
                os.close(os.open(target, os.O_CREAT | os.O_WRONLY, 0o644))
            self._mount(path, target, None, _MS_BIND)
            if path not in _DEVICES:
                self._mount(None, target, None, _MS_BIND | _MS_REMOUNT | _MS_RDONLY | self._locked_flags(path))
        # /proc: the host's, for the zygote's own bookkeeping of its children; each run mounts
        # a fresh one over it that shows only the run's own processes.
        os.makedirs(base + "/proc", exist_ok=True)
        self._mount("/proc", base + "/proc", None, _MS_BIND | _MS_REC)
        os.makedirs(base + "/tmp", exist_ok=True)
        # Where each run mounts its own /dev/shm (POSIX shared memory and semaphores).
        os.makedirs(base + "/dev/shm", exist_ok=True)
        self._mount(None, base, None, _MS_BIND | _MS_REMOUNT | _MS_RDONLY | _MS_NOSUID | _MS_NODEV)
        os.chdir(base)
        c = self.ctypes
        rc = -1
        if self.pivot_root is not None:
            rc = self.libc.syscall(c.c_long(self.pivot_root), c.c_char_p(b"."), c.c_char_p(b"."))
        self._check(rc, "pivot_root")
        self._check(self.libc.umount2(c.c_char_p(b"."), _MNT_DETACH), "umount the old root")
        os.chdir("/")

    # -- in each run child, before the program ----------------------------------------------

    def clone_pid_namespace(self, into=None):
        """`os.fork`, but the child is the first process (PID 1) of a new PID namespace owned by
        this process's user namespace (the zygote's): a raw `clone(CLONE_NEWPID | SIGCHLD)`
        without a stack (fork semantics: the child goes on from here on a copy of this stack),
        wrapped in the interpreter's own fork hooks the way `os.fork` wraps `fork`
        (`PyOS_BeforeFork`, then `PyOS_AfterFork_Child` or `PyOS_AfterFork_Parent`, the call
        made holding the GIL: ctypes' `PyDLL`). It skips what libc's `fork` does besides the
        system call (its atfork handlers, resetting locks other threads may hold), which is
        sound only in a process with one thread: checked on every call. With `into`, the open
        directory of the run's cgroup v2, it is a `clone3` with `CLONE_INTO_CGROUP` first, so
        the child is born in the run's cgroup (no migration); where that fails (it is not
        tried again) the plain clone, and the child joins through `cgroup.procs`. Returns
        `(pid, joined)`: pid 0 in the child, the child's pid in this one; whether the child
        was born in the cgroup. Raises OSError where it cannot be done."""
        if self._clone is None:
            raise OSError(self._no_clone or "no clone system call")
        threads = _len(_safe_listdir("/proc/self/task"))
        if threads != 1:
            raise OSError("the zygote has %d threads, and a raw clone is safe with one only" % threads)
        args = None
        if into is not None and self._clone3 is not None:
            # struct clone_args: flags, pidfd, child_tid, parent_tid, exit_signal, stack,
            # stack_size, tls, set_tid, set_tid_size, cgroup.
            args = struct.pack("=11Q", _CLONE_NEWPID | _CLONE_INTO_CGROUP, 0, 0, 0, signal.SIGCHLD, 0, 0, 0, 0, 0, into)
        api = self.ctypes.pythonapi
        api.PyOS_BeforeFork()
        pid = -1
        if args is not None:
            pid = self._clone3(self.clone3_number, args, _len(args))
        joined = pid >= 0
        if not joined:
            pid = self._clone(self.clone_number, _CLONE_NEWPID | signal.SIGCHLD, 0, 0, 0, 0)
        if pid == 0:
            api.PyOS_AfterFork_Child()
            return 0, joined
        errno = self.ctypes.get_errno()
        api.PyOS_AfterFork_Parent()
        if args is not None and not joined:
            self._clone3 = None
        if pid < 0:
            raise OSError(errno, "clone(CLONE_NEWPID): %s" % os.strerror(errno))
        return pid, joined

    def enter_run(self, parent, prctl):
        """In B, a run's first process, before it waits for its program. B was cloned straight
        into a PID namespace of its own (`clone_pid_namespace`), owned by the zygote's user
        namespace, where B holds every capability, so first what takes them there: its mount
        and IPC namespaces and their file systems (a `proc` of the run's PID namespace takes
        CAP_SYS_ADMIN over the user namespace that owns it); then a user of its own (the run's
        user outside, when the host is root, and a user namespace, so that RLIMIT_NPROC counts
        this run's processes only) and the process limit; last the restrictions that cannot be
        undone (no_new_privs, Landlock, capabilities, seccomp). `parent` (a `_Parent`) tells
        whether the zygote died while the death signal was cleared by the change of user."""
        if not self.on:
            return

        def namespaces():
            if not parent.cloned:
                raise OSError(self.clone_error or "the run's first process is not in a PID namespace of its own")
            # The run's own IPC namespace: its System V objects and POSIX message queues die
            # with the run's last process.
            self._unshare(_CLONE_NEWNS | _CLONE_NEWIPC, "CLONE_NEWNS|CLONE_NEWIPC")

        self._layer("pid_namespace", namespaces)
        _trace(b"b_namespaces")
        if self.status.get("pid_namespace") is None and self.status.get("mount_namespace") is None:
            # The mount namespace is the run's alone: its /tmp and /proc go with the run.
            def mounts():
                # Capped in bytes and in files (a file's inode and dentry are kernel memory
                # that the size does not count), and owned by the user the run becomes.
                owner = "uid=%d,gid=%d" % ((self.run_id, self.run_id) if self.run_id is not None else (os.getuid(), os.getgid()))
                self._mount("tmpfs", "/tmp", "tmpfs", _MS_NOSUID | _MS_NODEV, "size=%d,nr_inodes=%d,mode=0700,%s" % (self.tmp_bytes, self.tmp_inodes, owner))
                self._mount("tmpfs", "/dev/shm", "tmpfs", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC, "size=%d,nr_inodes=%d,mode=0700,%s" % (self.shm_bytes, self.tmp_inodes, owner))
                self._mount("proc", "/proc", "proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC)
                os.chdir("/tmp")

            self._layer("mount_namespace", mounts)
            _trace(b"b_mounts")
        if self.status.get("pid_namespace") is None:
            self._layer("pid_namespace", self._own_user)
            # A change of user clears the parent-death signal: armed again here, and a parent
            # that died in between (the signal could not come) ends this process now.
            _set_pdeathsig(prctl)
            if not parent.alive():
                os._exit(5)
        parent.close()

        def nproc():
            if self.host_uid == 0 and self.run_id is None:
                raise OSError("the run's processes are the host's root, whom RLIMIT_NPROC does not bind")
            resource.setrlimit(resource.RLIMIT_NPROC, (self.nproc, self.nproc))

        self._layer("process_limit", nproc, ("pid_namespace",))
        _trace(b"b_user")
        self._layer("no_new_privileges", lambda: self._check(self._prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "PR_SET_NO_NEW_PRIVS"))
        self._layer("landlock", self._landlock, ("no_new_privileges",))
        _trace(b"b_landlock")
        self._layer("capabilities", self._drop_capabilities)
        _trace(b"b_capabilities")
        self._layer("seccomp", self._seccomp, ("no_new_privileges",))
        _trace(b"b_seccomp")

    def _own_user(self):
        """The run's own user: when the host is root, the user that stands for nobody outside
        (root's processes are exempt from RLIMIT_NPROC, and may write root's files); then a
        user namespace of the run's own, whose root is that user, so that RLIMIT_NPROC counts
        the run's processes only. It gives no capability over the zygote's user namespace, so
        none over the run's mounts, which that namespace owns."""
        if self.run_id is not None:
            os.setgroups([])
            os.setresgid(self.run_id, self.run_id, self.run_id)
            os.setresuid(self.run_id, self.run_id, self.run_id)
            # A change of user makes the process undumpable, and its /proc/self files
            # root's: its own id maps could not be written.
            self._check(self._prctl(_PR_SET_DUMPABLE, 1, 0, 0, 0), "PR_SET_DUMPABLE")
        uid, gid = os.getuid(), os.getgid()
        self._unshare(_CLONE_NEWUSER, "CLONE_NEWUSER")
        self._map_root(uid, gid)

    def _plan_landlock(self):
        """What the Landlock ruleset of a run holds, worked out once in the zygote: the
        accesses handled and each rule's path and accesses. The ruleset itself is made in each
        run's process: its /tmp and /proc are file systems of that run, and a rule on the
        directory they cover would not reach them (Landlock skips hidden mount points)."""
        c = self.ctypes
        abi = self.libc.syscall(c.c_long(_LANDLOCK_CREATE_RULESET), None, c.c_long(0), c.c_long(1))
        self._check(abi, "Landlock is not enabled in this kernel")
        handled = (1 << 13) - 1
        if abi >= 2:
            handled |= 1 << 13  # REFER
        if abi >= 3:
            handled |= _LL_TRUNCATE
        if abi >= 5:
            handled |= _LL_IOCTL_DEV
        net = 3 if abi >= 4 else 0  # BIND_TCP | CONNECT_TCP, with no rule allowing any
        scoped = 3 if abi >= 6 else 0  # abstract unix sockets and signals stay inside
        size = 8 if abi < 4 else 16 if abi < 6 else 24
        attr = c.create_string_buffer(struct.pack("=QQQ", handled, net, scoped)[:size], size)
        read = _LL_READ_FILE | _LL_READ_DIR | _LL_EXECUTE
        viewed = self.status.get("mount_namespace") is None
        # With the view, each run mounts its own /tmp over the view's: a view path beneath /tmp
        # (an interpreter installed there) is hidden from the run, and gets no rule.
        rules = [(path, read) for path in self.view
                 if not (viewed and (path == "/tmp" or path.startswith("/tmp/")))]
        rules += [(d, _LL_READ_FILE | _LL_WRITE_FILE) for d in _DEVICES if os.path.exists(d)]
        if viewed:
            rules += [("/tmp", handled), ("/dev/shm", handled), ("/proc", _LL_READ_FILE | _LL_READ_DIR)]
        planned = []
        for path, allowed in rules:
            if not os.path.isdir(path):
                allowed &= _LL_FILE_RIGHTS
            planned.append((path, allowed & handled))
        return attr, size, planned

    def prepare(self):
        """In the zygote, after its layers: what each run child's restrictions use, worked out
        once (the Landlock plan, the seccomp program)."""
        if not self.on:
            return
        try:
            self._landlock_plan = self._plan_landlock()
        except Exception as error:  # noqa: BLE001 - recorded; the layer reports it per child
            self._landlock_error = _cut(str(error))
        if self.filter and _len(self.filter) % 8 == 0:
            c = self.ctypes

            class Program(c.Structure):
                _fields_ = [("len", c.c_ushort), ("filter", c.c_char_p)]

            self._program = Program(_len(self.filter) // 8, self.filter)
        # The arguments of the calls that drop every capability, made once (a spare then
        # makes only the calls).
        c = self.ctypes
        try:
            last = int(_read_proc("/proc/sys/kernel/cap_last_cap"))
        except (OSError, ValueError):
            last = 40
        zero = c.c_ulong(0)
        self._capbset = [(c.c_int(_PR_CAPBSET_DROP), c.c_ulong(cap), zero, zero, zero) for cap in range(last + 1)]
        header = c.create_string_buffer(struct.pack("=Ii", 0x20080522, 0), 8)
        self._capset = (header, c.create_string_buffer(bytes(24), 24))

    def _landlock(self):
        if self._landlock_plan is None:
            raise OSError(self._landlock_error)
        attr, size, rules = self._landlock_plan
        c = self.ctypes
        syscall = self.libc.syscall
        ruleset = self._check(syscall(c.c_long(_LANDLOCK_CREATE_RULESET), attr, c.c_long(size), c.c_long(0)), "landlock_create_ruleset")
        try:
            for path, allowed in rules:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
                try:
                    rule = struct.pack("=Qi", allowed, fd)
                    self._check(syscall(c.c_long(_LANDLOCK_ADD_RULE), c.c_long(ruleset), c.c_long(1), rule, c.c_long(0)), "landlock_add_rule %s" % path)
                finally:
                    os.close(fd)
            self._check(syscall(c.c_long(_LANDLOCK_RESTRICT_SELF), c.c_long(ruleset), c.c_long(0)), "landlock_restrict_self")
        finally:
            os.close(ruleset)

    def _drop_capabilities(self):
        prctl = self.libc.prctl
        for args in self._capbset:
            if prctl(*args) < 0:
                self._check(-1, "PR_CAPBSET_DROP")
        self._check(self.libc.capset(*self._capset), "capset")

    def _seccomp(self):
        if self._program is None:
            raise OSError("no seccomp filter for this architecture")
        c = self.ctypes
        self._check(self._prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, c.byref(self._program), 0, 0), "PR_SET_SECCOMP")

    def report(self):
        return {layer: self.status.get(layer, "not set up") for layer in LAYERS}


def _refuse(sock, error):
    """Tells the host that this child could not set up its sandbox and leaves."""
    try:
        Channel(sock).error("sandbox", str(error))
    except BaseException:  # noqa: BLE001
        pass
    os._exit(7)


def _mirror(pid):
    """Waits for `pid` and ends this process the same way (exit code or signal)."""
    while True:
        try:
            _, status, usage = os.wait4(pid, 0)
            break
        except InterruptedError:
            continue
        except ChildProcessError:
            os._exit(0)
    if _TRACE_FD is not None:
        # The CPU time of the program's process, whole (its exit included), and this one's so
        # far.
        mine = resource.getrusage(resource.RUSAGE_SELF)
        now = time.monotonic_ns()
        _trace_at(now, _trace_pid, b"b_rusage", int((usage.ru_utime + usage.ru_stime) * 1e9))
        _trace_at(now, _trace_pid, b"a_rusage_before_exit", int((mine.ru_utime + mine.ru_stime) * 1e9))
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            signal.signal(sig, signal.SIG_DFL)
            os.kill(os.getpid(), sig)
        except (OSError, ValueError):
            pass
        os._exit(128 + sig)
    os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 1)


def run_sandboxed(sandbox, sock, prctl, parent):
    """In B, the run's first process: sets up the run's layers (`Sandbox.enter_run`, nothing
    under `Off`), refusing before `ready` under "require" when one does not hold, then runs
    the program (`child_main`)."""
    try:
        sandbox.enter_run(parent, prctl)
    except SandboxError as error:
        _refuse(sock, error)
    child_main(sock)
    os._exit(0)


def sandboxed_child(sandbox, sock, prctl):
    """A run the host spawned an interpreter for: that interpreter (which set up the zygote's
    layers) forks B, the run's first process (PID 1 of a new PID namespace, see `_fork_run`),
    and ends as B ended."""
    if not sandbox.on:
        child_main(sock)
        return
    pid, parent = _fork_run(sandbox)
    if pid == 0:
        _trace_name(prctl, b"py-run-b")
        _die_with_parent(prctl, parent)
        run_sandboxed(sandbox, sock, prctl, parent)
    sock.close()
    _mirror(pid)


def probe(sandbox, prctl, account=()):
    """Sets up a run's layers in a throwaway child, forked as a run's first process is, and
    returns the whole report. The child first joins the cgroup whose cgroup.procs are `account`
    (made for it by the host), under every policy: the memory account is a resource limit, not
    isolation."""
    if not sandbox.on and not account:
        return sandbox.report()
    r, w = os.pipe()
    pid, parent = _fork_run(sandbox)
    if pid == 0:
        os.close(r)
        try:
            if sandbox.on:
                sandbox.policy = "best_effort"  # record every layer; the zygote decides
            sandbox.join_account(account)
            _die_with_parent(prctl, parent)
            sandbox.enter_run(parent, prctl)
            os.write(w, json.dumps(sandbox.report()).encode())
            os._exit(0)
        finally:
            os._exit(1)
    os.close(w)
    chunks = []
    while True:
        chunk = os.read(r, 1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(r)
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass
    _IN_PID_NAMESPACE.discard(pid)
    try:
        status = json.loads(b"".join(chunks).decode("utf-8"))
    except ValueError:
        status = None
    if not isinstance(status, dict):
        status = sandbox.report()
        for layer in LAYERS:
            if status[layer] == "not set up":
                status[layer] = "the probe child could not report"
    return status


def _fd_ceiling():
    """One more than the highest descriptor this process may hold: the highest listed in
    /proc/self/fd, else the hard RLIMIT_NOFILE (capped), so a closing loop stays bounded where
    the interpreter was built without close_range."""
    try:
        return max(int(fd) for fd in os.listdir("/proc/self/fd")) + 1
    except (OSError, ValueError):
        hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
        return 1 << 20 if hard == resource.RLIM_INFINITY or hard > 1 << 20 else hard


def _close_inherited(keep, close_range=None):
    """Closes every descriptor but 0, 1, 2 (/dev/null) and those in `keep`: a descriptor the
    host held without close-on-exec (inherited from its own parent, or opened by a library
    without O_CLOEXEC) would reach the program, and Landlock and the mount namespace do not
    apply to files already open. With `close_range` (libc's, as `Sandbox` loads it), one call
    per gap up to the highest descriptor there can be; else, or where the kernel lacks it,
    `os.closerange` up to the highest descriptor /proc/self/fd lists (one close_range(2) per
    gap where the interpreter has it, a loop where not)."""
    gaps = []
    low = 3
    for fd in sorted(keep):
        if fd > low:
            gaps.append((low, fd - 1))
        if fd >= low:
            low = fd + 1
    if close_range is not None and all(close_range(first, last, 0) == 0 for first, last in gaps + [(low, 0xFFFFFFFF)]):
        return
    for first, last in gaps:
        os.closerange(first, last + 1)
    ceiling = _fd_ceiling()
    if low < ceiling:
        os.closerange(low, ceiling)


def _set_pdeathsig(prctl):
    """Dies with its parent (set again after each namespace change, to be sure it holds)."""
    if prctl is not None:
        try:
            prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        except Exception:  # noqa: BLE001
            pass


# The requests the host makes for every run, as it writes them (`process.rs`).
_FORK = b'{"op":"fork"}'
_FORK_INTO = b'{"op":"fork","into":true}'
_RELEASE = b'{"op":"release","pid":'


def _request(data):
    """The host's request (JSON). The two that every run makes, a fork and a release, are read
    without the json module: after each fork the newest child shares every page of the zygote,
    so each page the zygote touches afterwards is copied again, and what the zygote does per
    run costs it in pages (the json module's are many). Anything else, or a form this does not
    know, goes through `json.loads`."""
    if data == _FORK:
        return {"op": "fork"}
    if data == _FORK_INTO:
        return {"op": "fork", "into": True}
    if data.startswith(_RELEASE) and data.endswith(b"}") and data[_len(_RELEASE) : -1].isdigit():
        return {"op": "release", "pid": int(data[_len(_RELEASE) : -1])}
    return json.loads(data.decode("utf-8"))


def zygote_main(control, sandbox=None):
    children = set()  # forked and not released: the host may still signal them
    dying = set()  # released and killed, not reaped yet
    prctl = _load_prctl()
    _trace_name(prctl, b"py-zygote")
    # What a run starts and outlives its run child comes here rather than to init, where the
    # zygote finds it and kills it (see `_reap_orphans`).
    _become_subreaper(prctl)
    if sandbox is None:
        sandbox = Sandbox({})
    # The shared layers, recorded whatever the policy (the host decides from the report),
    # then one throwaway run child that tries the per-run layers.
    policy, sandbox.policy = sandbox.policy, ("best_effort" if sandbox.on else "off")
    sandbox.enter_zygote()
    sandbox.policy = policy
    # The throwaway run child is forked at the first request (the host's ping), which carries
    # the cgroup it joins.
    report = None
    global _trace_pid, _FORKED
    # Preloaded for a replayable run, which patches them before its program (`_replayable`);
    # programs import them often too.
    import datetime  # noqa: F401
    import random  # noqa: F401

    _warm_up()
    # Everything the zygote holds now is left alone by the collector in the children, so a
    # collection there does not copy the zygote's heap page by page.
    gc.collect()
    gc.freeze()
    poller = select.poll()
    poller.register(control, select.POLLIN)
    while True:
        if dying:
            _reap_dead(dying)
            _reap_orphans(children | dying)
            if dying and not poller.poll(5):
                continue
        try:
            data, fds, _flags, _addr = socket.recv_fds(control, 1 << 16, 4)
        except OSError:
            data, fds = b"", []
        if not data:
            for pid in children | dying:
                _kill_group(pid)
            _reap_orphans(children | dying)
            for pid in children | dying:
                try:
                    os.waitpid(pid, 0)
                except OSError:
                    pass
            os._exit(0)
        received = time.monotonic_ns() if _TRACE_FD is not None else 0
        received_cpu = time.thread_time_ns() if _TRACE_FD is not None else 0
        request = _request(data)
        op = request.get("op")
        if report is None:
            account = fds if op == "ping" else []
            report = probe(sandbox, prctl, account)
            for fd in account:
                os.close(fd)
            fds = [] if op == "ping" else fds
        if op == "fork":
            if not fds:
                control.send(json.dumps({"error": "no socket passed"}).encode())
                continue
            # cgroup v2: the run cgroup's directory comes last, to clone B straight into it.
            into = fds.pop() if request.get("into") is True and _len(fds) > 2 else None
            # The run's first process, B: under the sandbox PID 1 of a PID namespace of its
            # own (no process between the zygote and the run).
            pid, parent = _fork_run(sandbox, into)
            if pid == 0:
                _FORKED = True
                # Making a spare is background work (until it waits for its program).
                _batch(True)
                if _TRACE_FD is not None:
                    _trace_pid = parent.outer_pid()
                _trace(b"b_start")
                _trace_name(prctl, b"py-run-b")
                # Before anything else: into the run's cgroup (the descriptors after the
                # socket), then only the run's socket and /dev/null stay open (the control
                # socket, other requests' descriptors and anything else go).
                refused = sandbox.join_account(fds[1:], parent.joined)
                _trace(b"b_joined")
                _close_inherited((fds[0],) + _TRACE_KEEP, sandbox.close_range)
                control.detach()
                _die_with_parent(prctl, parent)
                os.setpgid(0, 0)
                _trace(b"b_ready_to_sandbox")
                sock = socket.socket(fileno=fds[0])
                sock.setblocking(True)
                if refused is not None:
                    _refuse(sock, refused)
                run_sandboxed(sandbox, sock, prctl, parent)
            try:
                # Also here, so the group exists before the host learns the pid.
                os.setpgid(pid, pid)
            except OSError:
                pass
            for fd in fds if into is None else fds + [into]:
                os.close(fd)
            children.add(pid)
            control.send(b'{"pid":%d}' % pid)
            if _TRACE_FD is not None:
                _trace_at(received, pid, b"zygote_fork_received", received_cpu)
                _trace_at(time.monotonic_ns(), pid, b"zygote_fork_answered")
        elif op == "release":
            pid = request.get("pid")
            if _TRACE_FD is not None:
                _trace_at(received, pid, b"zygote_release_received", received_cpu)
            if pid in children:
                children.discard(pid)
                _kill_group(pid)
                dying.add(pid)
                _reap_dead(dying)
                _reap_orphans(children | dying)
            for fd in fds:
                os.close(fd)
            control.send(b"{}")
        elif op == "reap":
            pid = request.get("pid")
            status = None
            if pid in children:
                # The run child is the program's process: a status it left is the program's.
                _kill_group(pid)
                try:
                    _, status = os.waitpid(pid, 0)
                except OSError:
                    status = None
                children.discard(pid)
                _IN_PID_NAMESPACE.discard(pid)
                _reap_orphans(children | dying)
            for fd in fds:
                os.close(fd)
            control.send(json.dumps({"status": status}).encode())
        elif op == "ping":
            control.send(json.dumps({"pong": os.getpid(), "sandbox": report}).encode())
        elif op == "analyse":
            _serve_analysis(fds)
            control.send(b"{}")


# The descriptors a process keeps for the trace (none unless tracing).
_TRACE_KEEP = ()


def main():
    global _TRACE_FD, _TRACE_KEEP
    # The hash seed was read when the interpreter started; a program sees an empty environment.
    os.environ.pop("PYTHONHASHSEED", None)
    if len(sys.argv) > 3 and sys.argv[3] == "trace":
        _TRACE_FD = 4
        _TRACE_KEEP = (4,)
    # Before anything else: the protocol socket (3) and /dev/null (0, 1, 2) are all this
    # process keeps of what it inherited.
    _close_inherited((3,) + _TRACE_KEEP)
    mode = sys.argv[1] if len(sys.argv) > 1 else "run"
    config = json.loads(sys.argv[2]) if len(sys.argv) > 2 else {}
    sandbox = Sandbox(config.get("sandbox", {}))
    sock = socket.socket(fileno=3)
    sock.setblocking(True)
    if mode == "zygote":
        zygote_main(sock, sandbox)
    else:
        # Spawned per run: what the program starts stays in this process's tree, where the
        # host finds it and kills it when the run ends.
        prctl = _load_prctl()
        _become_subreaper(prctl)
        try:
            sandbox.enter_zygote()
        except SandboxError as error:
            _refuse(sock, error)
        sandboxed_child(sandbox, sock, prctl)


main()

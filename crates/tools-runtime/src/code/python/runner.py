# The Code Mode runner for the Python runtime.
#
# Started as `python3 -I -S -c <this file> MODE`, with a private socket on file descriptor 3
# (a stream socket for MODE "run", a SOCK_SEQPACKET control socket for MODE "zygote"):
#
#   MODE "run"     runs one program on fd 3 and exits (the spawn-per-run mode);
#   MODE "zygote"  waits on fd 3 (a control socket) for fork requests. Each request carries a
#                  fresh socket for the run (SCM_RIGHTS); the zygote forks, the child runs one
#                  program on that socket and exits, and the zygote answers with the child's pid.
#                  The host later asks the zygote to kill and reap that pid, so a pid is never
#                  reused while the host still refers to it.
#
# Frames on every socket are a 4-byte big-endian length and that many bytes of UTF-8 JSON.
# Nothing the program prints or writes reaches these sockets except through `log` frames.
import ast
import asyncio
import builtins
import io
import json
import os
import resource
import signal
import socket
import struct
import sys
import threading

_HEADER = struct.Struct(">I")
# Bound once, so a program that replaces json.dumps or socket methods cannot break the bridge.
_dumps = json.dumps
_loads = json.loads
MAX_DEPTH = 100
INT_MIN = -(2 ** 63)
INT_MAX = 2 ** 64 - 1


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
    return _loads(body.decode("utf-8"))


class Channel:
    """Frames to and from the host on the run socket; sends are serialized by a lock."""

    def __init__(self, sock):
        self.sendall = sock.sendall
        self.pack = _HEADER.pack
        self.lock = threading.Lock()

    def send(self, message):
        body = _dumps(message, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8", "surrogatepass")
        with self.lock:
            self.sendall(self.pack(len(body)) + body)


# --- strict JSON ---------------------------------------------------------------------------


def _path(parts):
    out = parts[0]
    for key in parts[1:]:
        if isinstance(key, int):
            out += "[%d]" % key
        else:
            out += "[%s]" % json.dumps(key, ensure_ascii=False)
    return out


def _refuse(parts, what):
    raise TypeError("%s %s; only plain JSON values can cross to the host" % (_path(parts), what))


def _check_str(s, parts, what):
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        _refuse(parts, what)


def to_json(root, label):
    """A strict JSON copy of `root`, or TypeError naming the path. Iterative (no recursion)."""
    holder = [None]
    stack = [(root, holder, 0, (label,))]
    active = set()
    while stack:
        item = stack.pop()
        if len(item) == 1:
            active.discard(item[0])
            continue
        value, target, key, parts = item
        kind = type(value)
        if value is None or kind is bool:
            target[key] = value
        elif kind is int:
            if value < INT_MIN or value > INT_MAX:
                _refuse(parts, "is an integer too large for lossless JSON")
            target[key] = value
        elif kind is float:
            if value != value:
                _refuse(parts, "is NaN")
            if value in (float("inf"), float("-inf")):
                _refuse(parts, "is infinite")
            if value == 0.0 and str(value).startswith("-"):
                _refuse(parts, "is -0.0")
            target[key] = value
        elif kind is str:
            _check_str(value, parts, "is a string with an unpaired surrogate")
            target[key] = value
        elif kind is list or kind is tuple or kind is dict:
            if len(parts) > MAX_DEPTH:
                _refuse(parts, "nests deeper than %d levels" % MAX_DEPTH)
            if id(value) in active:
                _refuse(parts, "is a cycle (it contains itself)")
            active.add(id(value))
            stack.append((id(value),))
            if kind is dict:
                copy = {}
                entries = list(value.items())
                for k, _ in entries:
                    if type(k) is not str:
                        _refuse(parts, "has a key that is not a string (%r)" % (k,))
                    _check_str(k, parts, "has a key with an unpaired surrogate")
                    copy[k] = None
                target[key] = copy
                for k, v in reversed(entries):
                    stack.append((v, copy, k, parts + (k,)))
            else:
                copy = [None] * len(value)
                target[key] = copy
                for i in range(len(value) - 1, -1, -1):
                    stack.append((value[i], copy, i, parts + (i,)))
        else:
            _refuse(parts, "is a %s, not a JSON value" % kind.__name__)
    return holder[0]


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
            self.channel.send({"t": "log", "text": _clean(line), "end": True})
        while len(self.buffer) > self.CHUNK:
            piece, self.buffer = self.buffer[: self.CHUNK], self.buffer[self.CHUNK:]
            self.channel.send({"t": "log", "text": _clean(piece), "end": False})
        return len(text)

    def flush(self):
        pass

    def close_line(self):
        if self.buffer:
            line, self.buffer = self.buffer, ""
            self.channel.send({"t": "log", "text": _clean(line), "end": True})


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
            raise AttributeError("no tool named %r" % name) from None

    def __getitem__(self, name):
        try:
            return self.__bindings[name]
        except KeyError:
            raise KeyError("no tool named %r" % name) from None

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

    def binding(self, name):
        def call(args=None, /):
            future = self.loop.create_future()
            try:
                payload = to_json({} if args is None else args, "args")
            except TypeError as error:
                future.set_exception(error)
                return future
            self.next_id += 1
            call_id = self.next_id
            self.pending[call_id] = (future, name)
            self.channel.send({"t": "call", "id": call_id, "name": name, "args": payload})
            return future

        call.__name__ = name if name.isidentifier() else "tool"
        return call

    def settle(self, message):
        entry = self.pending.pop(message.get("id"), None)
        if entry is None:
            return
        future, name = entry
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
            self.bridge.settle(_loads(body.decode("utf-8")))


def _position(error):
    tb = error.__traceback__
    line = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "program.py":
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def _describe(error):
    if isinstance(error, ToolCallError):
        return "ToolCallError from tool %r: %s" % (error.tool_name, error.message)
    text = str(error)
    name = type(error).__name__
    return "%s: %s" % (name, text) if text else name


def compile_program(program):
    tree = ast.parse(program, filename="program.py", mode="exec")
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


def _vm_peak():
    """Peak virtual memory of this process in bytes, or None."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmPeak:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def run_program(channel, sock, request):
    program = request["program"]
    names = request["tools"]
    limits = request["limits"]

    stack_bytes = int(limits.get("stack_bytes", 1 << 20))
    sys.setrecursionlimit(max(100, stack_bytes // 512))
    memory = int(limits.get("memory_bytes", 256 << 20))

    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    bridge = Bridge(channel, loop)
    loop.add_reader(sock.fileno(), Reader(sock, bridge).on_readable)

    try:
        with open("/proc/self/statm") as f:
            baseline = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        baseline = 0
    ceiling = baseline + memory
    resource.setrlimit(resource.RLIMIT_AS, (ceiling, ceiling))
    peak_before = _vm_peak()

    writer = LogWriter(channel)
    sys.stdout = writer
    sys.stderr = writer

    try:
        code = compile_program(program)
    except SyntaxError as error:
        channel.send({
            "t": "error",
            "kind": "syntax",
            "message": "%s: %s" % (type(error).__name__, error.msg),
            "line": error.lineno,
            "column": error.offset,
        })
        return
    except (ValueError, MemoryError, RecursionError) as error:
        channel.send({"t": "error", "kind": "syntax", "message": _describe(error), "line": None, "column": None})
        return

    namespace = {
        "__name__": "__code__",
        "__builtins__": builtins,
        "tools": Tools(names, bridge),
        "ToolCallError": ToolCallError,
    }
    exec(code, namespace)
    try:
        result = loop.run_until_complete(namespace["__code_main__"]())
    except MemoryError as error:
        writer.close_line()
        channel.send({"t": "error", "kind": "memory", "message": _describe(error), "line": _position(error), "column": None})
        return
    except BaseException as error:  # noqa: BLE001 - every escape is the program's failure
        writer.close_line()
        channel.send({"t": "error", "kind": "runtime", "message": _describe(error), "line": _position(error), "column": None})
        return
    writer.close_line()
    # A program that caught a MemoryError still reached its limit: the peak tells.
    peak = _vm_peak()
    if (
        peak is not None
        and peak_before is not None
        and peak > peak_before
        and peak + max(2 << 20, memory // 20) >= ceiling
    ):
        channel.send({
            "t": "error",
            "kind": "memory",
            "message": "the program reached its memory limit (and caught the MemoryError)",
            "line": None,
            "column": None,
        })
        return
    if result is None:
        channel.send({"t": "done"})
        return
    try:
        value = to_json(result, "result")
    except TypeError as error:
        channel.send({"t": "error", "kind": "invalid_result", "message": str(error), "line": None, "column": None})
        return
    channel.send({"t": "done", "result": value})


def child_main(sock):
    channel = Channel(sock)
    request = recv_frame(sock)
    if request is None:
        os._exit(2)
    try:
        run_program(channel, sock, request)
    except MemoryError:
        try:
            channel.send({"t": "error", "kind": "memory", "message": "MemoryError", "line": None, "column": None})
        except BaseException:  # noqa: BLE001
            pass
    finally:
        try:
            sys.stdout = sys.__stdout__
            sys.stderr = sys.__stderr__
        except BaseException:  # noqa: BLE001
            pass
    os._exit(0)


def _load_prctl():
    """`prctl` from libc, loaded once in the zygote (importing ctypes per run would be slow)."""
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl
    except Exception:  # noqa: BLE001 - best effort; the host still kills by pid
        return None


def _die_with_parent(prctl):
    if prctl is not None:
        try:
            prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG: die if the zygote dies
        except Exception:  # noqa: BLE001
            pass


def zygote_main(control):
    children = set()
    prctl = _load_prctl()
    while True:
        try:
            data, fds, _flags, _addr = socket.recv_fds(control, 1 << 16, 4)
        except OSError:
            data, fds = b"", []
        if not data:
            for pid in children:
                try:
                    os.killpg(pid, signal.SIGKILL)
                except OSError:
                    pass
                try:
                    os.waitpid(pid, 0)
                except OSError:
                    pass
            os._exit(0)
        request = json.loads(data.decode("utf-8"))
        op = request.get("op")
        if op == "fork":
            if not fds:
                control.send(json.dumps({"error": "no socket passed"}).encode())
                continue
            pid = os.fork()
            if pid == 0:
                control.close()
                _die_with_parent(prctl)
                os.setpgid(0, 0)
                sock = socket.socket(fileno=fds[0])
                sock.setblocking(True)
                child_main(sock)
                os._exit(0)
            for fd in fds:
                os.close(fd)
            children.add(pid)
            control.send(json.dumps({"pid": pid}).encode())
        elif op == "reap":
            pid = request.get("pid")
            status = None
            if pid in children:
                # The whole process group: whatever the program started goes too.
                for kill in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
                    try:
                        kill()
                    except OSError:
                        pass
                try:
                    _, status = os.waitpid(pid, 0)
                except OSError:
                    status = None
                children.discard(pid)
            for fd in fds:
                os.close(fd)
            control.send(json.dumps({"status": status}).encode())
        elif op == "ping":
            control.send(json.dumps({"pong": os.getpid()}).encode())


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "run"
    sock = socket.socket(fileno=3)
    sock.setblocking(True)
    if mode == "zygote":
        zygote_main(sock)
    else:
        child_main(sock)


main()

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



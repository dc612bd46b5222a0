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



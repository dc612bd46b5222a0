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

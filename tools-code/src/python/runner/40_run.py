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



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



// The Code Mode prelude for the TypeScript runtime: the half every run evaluates. It runs in a
// fresh QuickJS context before the run is known (so before the program exists) and is called
// with the host functions the Rust side installed:
//
//   hostCall(index, argsJson)        starts a call of the run's tool at `index` (in the names
//                                    `run` was given) on the host: the result's JSON text
//                                    when it succeeded at once (a number as itself, a small
//                                    result as itself in an array of one),
//                                    `{ failure: message }` when it failed at once,
//                                    `{ tooLarge: message }` when the arguments pass
//                                    max_call_bytes, else `true`: `settle` answers it later,
//                                    under the next id (the host numbers these calls 1, 2, 3,
//                                    ... in the order they are made, and so does `bind`)
//   hostCall(index, args, objectProto, arrayProto)
//                                    the same for arguments the host can read itself (plain
//                                    JSON values: objects and arrays of scalars and of each
//                                    other, a few thousand values at most; `objectProto` and
//                                    `arrayProto` are Object.prototype and Array.prototype,
//                                    captured here): the same answers, or `undefined` when
//                                    the arguments are not that plain (then their text goes
//                                    through `hostCall(index, argsJson)`)
//   hostLog(values)                  appends the log line of a console call's values when
//                                    the host can write it itself (every value a primitive
//                                    other than a symbol or a BigInt, every string well
//                                    formed): true; false when it cannot (then the lazy half
//                                    writes the line)
//   hostResult(value, objectProto, arrayProto)
//                                    records the program's result when the host can read it
//                                    itself (as `hostCall` reads arguments): true; false when
//                                    it cannot (then the lazy half converts it)
//   hostFinish(kind, text, message)  records how the program ended (kinds in the lazy half,
//                                    at `finishThrown`)
//   hostLazy(B, S)                   the lazy half (`prelude_lazy.js`), read from its bytecode
//                                    and called with the host functions only it uses: the
//                                    object of its functions
//
// It leaves the functions the Rust side calls later (settle, run, track, reportUnhandled,
// errorText) on a frozen, non-writable `__codeModeHost` global; the host functions themselves
// are never reachable from the program. `run(main, toolNames, maxCallBytes, maxOutputBytes)`
// binds the run's tools (all of `toolNames`, or each at its first use when it is undefined)
// and starts the program, once. No JavaScript value is ever handed to Rust to keep: Rust only
// sees strings and numbers, and reads the simple values above in place.
//
// What most runs never need (the strict JSON conversion of values the host cannot read, the
// descriptions of logged values and thrown errors, binding on first use, unhandled
// rejections, the replayable clock) is the lazy half, loaded the first time it is needed: a
// run that calls its tools with plain arguments, logs primitive values and returns a plain
// result never loads it, and so never pays for reading, running and freeing it. It may be
// loaded in the middle of the program, after the program changed any global or prototype,
// so every built-in it uses is captured here, before the program exists, and handed to it in
// `B`. Capturing costs little: QuickJS creates a built-in method's function object on its
// first access in a context, and these are the methods the lazy half would use anyway.
(function (hostCall, hostLog, hostResult, hostFinish, hostLazy) {
  'use strict';
  const G = globalThis;
  const ObjectProto = Object.prototype;
  const ArrayProto = Array.prototype;
  const defineProperty = Object.defineProperty;
  const freeze = Object.freeze;
  const create = Object.create;
  // One native call (a bound `hasOwnProperty.call` takes three).
  const hasOwn = Object.hasOwn;
  const isArray = Array.isArray;
  const parse = JSON.parse;
  const PromiseCtor = Promise;
  const promiseResolve = PromiseCtor.resolve.bind(PromiseCtor);
  const promiseReject = PromiseCtor.reject.bind(PromiseCtor);
  const promiseThen = Function.prototype.call.bind(PromiseCtor.prototype.then);
  const ErrorCtor = Error;
  const RangeErrorCtor = RangeError;
  const TypeErrorCtor = TypeError;
  const StringCtor = String;

  // The run's state the lazy half reads: set by `run`.
  const S = create(null);
  S.outputLimit = 0;
  S.callLimit = 0;
  S.onFirstUse = false;

  // The direct prototypes of the built-in objects a value may be, for the lazy half to name
  // what it refused (its `builtinNames` lists their names in this order).
  const builtinProtos = [Date.prototype, Map.prototype, Set.prototype, WeakMap.prototype,
    WeakSet.prototype, WeakRef.prototype, FinalizationRegistry.prototype, RegExp.prototype,
    Promise.prototype, Error.prototype, TypeError.prototype, RangeError.prototype,
    SyntaxError.prototype, ReferenceError.prototype, EvalError.prototype, URIError.prototype,
    AggregateError.prototype, Boolean.prototype, Number.prototype, String.prototype,
    Symbol.prototype, BigInt.prototype];

  // The lazy half, once loaded.
  let lazyHalf = null;
  function lazy() {
    if (lazyHalf === null) lazyHalf = hostLazy(B, S);
    return lazyHalf;
  }

  // --- tools ------------------------------------------------------------------------------

  class ToolCallError extends ErrorCtor {
    constructor(toolName, message) {
      super(message);
      this.name = 'ToolCallError';
      this.toolName = toolName;
    }
  }

  // Pending calls by id - 1: the host numbers the calls it answers later 1, 2, 3, ... in the
  // order they are made, so this array only ever grows at its end and stays dense (fast in
  // QuickJS). Calls answered at once get no id and no entry.
  // Each entry is `{ promise, resolve, reject }` from Promise.withResolvers (no executor
  // closure per call); the tool's name is in `pendingNames` at the same index.
  const pending = [];
  // How many calls the host answers later: the id of the last one.
  let laterCalls = 0;
  const pendingNames = [];
  const deferred = PromiseCtor.withResolvers.bind(PromiseCtor);

  function bind(name, index) {
    return function (args) {
      const value = arguments.length === 0 ? {} : args;
      // Plain arguments the host reads without their text, exactly as it would read the text
      // written below.
      let answer = hostCall(index, value, ObjectProto, ArrayProto);
      if (answer === undefined) {
        let text;
        try {
          // Counted in UTF-8 bytes as it is written: arguments past the cap are refused where
          // they pass it, before their whole text exists (the host measures again).
          text = lazy().toJsonText(value, 'args', S.callLimit, 'one call may send (max_call_bytes)');
        } catch (error) {
          return promiseReject(error);
        }
        answer = hostCall(index, text);
      }
      if (typeof answer === 'number') return promiseResolve(answer);
      // The result itself, made by the host, in an array of one (its own element).
      if (isArray(answer)) return promiseResolve(answer[0]);
      if (typeof answer === 'string') {
        let value;
        try {
          value = parse(answer);
        } catch (error) {
          return promiseReject(error);
        }
        return promiseResolve(value);
      }
      if (typeof answer === 'object') {
        if (hasOwn(answer, 'tooLarge')) return promiseReject(new RangeErrorCtor(answer.tooLarge));
        return promiseReject(new ToolCallError(name, answer.failure));
      }
      // `true`: answered later, under the next id.
      const id = ++laterCalls;
      const entry = deferred();
      pending[id - 1] = entry;
      pendingNames[id - 1] = name;
      return entry.promise;
    };
  }

  // Every bound tool is reachable through `callTool(name, args)`; all but `then` are also
  // members of `tools`. A `then` member would make `tools` a thenable, so `await tools` (or
  // returning it) would call the tool: the generated SDK declares `then` through `callTool` only.
  // Filled by `run` (the names are known only then) and frozen before the program starts.
  const bindings = create(null);
  const tools = create(null);

  // Plain assignment creates enumerable data properties (the objects have no prototype, so no
  // setter such as `__proto__` is inherited); freezing makes them read-only.
  //
  // `bindings` is filled before `tools`, not beside it: QuickJS lets objects that gain the same
  // properties in the same order share one shape, and an object whose shape is shared copies
  // the whole shape to add a property. Filled side by side, the two objects shared every
  // shape, so each tool copied all the names before it (milliseconds for 1,000 tools).
  function bindTools(toolNames) {
    const n = toolNames.length;
    const fns = [];
    for (let i = 0; i < n; i++) {
      const fn = bind(toolNames[i], i);
      fns[i] = fn;
      bindings[toolNames[i]] = fn;
    }
    for (let i = 0; i < n; i++) {
      const name = toolNames[i];
      if (name !== 'then') tools[name] = fns[i];
    }
    freeze(bindings);
    freeze(tools);
  }

  // The binding of `key` (a string): bound already, or (in a run that binds on first use)
  // made now if the host has the tool; undefined when there is none.
  function lookup(key) {
    if (hasOwn(bindings, key)) return bindings[key];
    return S.onFirstUse ? lazy().lookup(key) : undefined;
  }

  function callTool(name, args) {
    const key = typeof name === 'string' ? name : StringCtor(name);
    if (lookup(key) === undefined) return lazy().noSuchTool(key);
    return arguments.length < 2 ? bindings[key]() : bindings[key](args);
  }

  function settle(id, ok, text) {
    const entry = pending[id - 1];
    if (entry === undefined) return;
    pending[id - 1] = undefined;
    if (!ok) {
      entry.reject(new ToolCallError(pendingNames[id - 1], text));
      return;
    }
    let value;
    try {
      value = parse(text);
    } catch (error) {
      entry.reject(error);
      return;
    }
    entry.resolve(value);
  }

  // --- console ----------------------------------------------------------------------------

  function logger() {
    return function (...values) {
      if (!hostLog(values)) lazy().log(values);
    };
  }
  const consoleObject = create(null);
  consoleObject.log = logger();
  consoleObject.info = logger();
  consoleObject.warn = logger();
  consoleObject.error = logger();
  consoleObject.debug = logger();
  consoleObject.trace = logger();
  freeze(consoleObject);

  // --- running ------------------------------------------------------------------------------

  // Rejections the engine reports (`track`): a rejection nobody handled is kept by the lazy
  // half; one handled later was kept there before, so there is nothing to drop while it has
  // not been loaded.
  function track(promise, reason, handled) {
    if (handled && lazyHalf === null) return;
    lazy().track(promise, reason, handled);
  }
  function reportUnhandled() {
    if (lazyHalf !== null) lazyHalf.reportUnhandled();
  }
  function errorText(e) {
    return lazy().errorText(e);
  }

  // What is recorded when the lazy half cannot be loaded to describe how the program ended
  // (only when the run is out of memory, or stopped: the host reports that instead).
  const NOT_DESCRIBED = '{"name":"InternalError","message":"","stack":"","toolName":null}';
  function finishThrown(error, kind) {
    let half;
    try {
      half = lazy();
    } catch (inner) {
      hostFinish(kind, NOT_DESCRIBED, 'the runtime could not describe how the program ended');
      return;
    }
    half.finishThrown(error, kind);
  }
  function finishWith(value) {
    if (value === undefined) {
      hostFinish(0, '', '');
      return;
    }
    if (hostResult(value, ObjectProto, ArrayProto)) return;
    let half;
    try {
      half = lazy();
    } catch (inner) {
      hostFinish(3, NOT_DESCRIBED, 'the runtime could not convert the result');
      return;
    }
    half.finishWith(value);
  }

  let started = false;
  function run(main, toolNames, maxCallBytes, maxOutputBytes, seedHigh, seedLow, clock) {
    if (started) throw new TypeErrorCtor('the program has already started');
    started = true;
    if (clock !== undefined) lazy().replayable(seedHigh, seedLow, clock);
    S.callLimit = maxCallBytes;
    S.outputLimit = maxOutputBytes;
    S.onFirstUse = toolNames === undefined;
    if (!S.onFirstUse) bindTools(toolNames);
    defineProperty(G, 'tools', {
      value: S.onFirstUse ? lazy().lazyTools : tools,
      enumerable: false,
      writable: false,
      configurable: false,
    });
    if (typeof main !== 'function') {
      hostFinish(3, '{"name":"SyntaxError","message":"","stack":"","toolName":null}', 'the program must be the body of a function');
      return;
    }
    let promise;
    try {
      promise = main();
    } catch (error) {
      finishThrown(error, 3);
      return;
    }
    promiseThen(promiseResolve(promise), finishWith, function (error) {
      finishThrown(error, 3);
    });
  }

  // What the lazy half gets: the built-ins it uses, captured now, and the core's own parts. An
  // array (it costs less to build than an object's properties), read by position: the lazy half
  // reads entry i into the name in its comment, and a unit test holds the two lists together.
  const callBound = Function.prototype.call;
  const B = [
    G, // G
    ObjectProto, // ObjectProto
    ArrayProto, // ArrayProto
    Object.getPrototypeOf, // getProto
    Object.keys, // keysOf
    defineProperty, // defineProperty
    freeze, // freeze
    Proxy, // ProxyCtor
    create, // create
    isArray, // isArray
    hasOwn, // hasOwn
    RegExp.prototype.exec, // builtinExec
    JSON.stringify, // stringify
    Number.isFinite, // isFiniteNumber
    String.prototype.isWellFormed, // wellFormed
    String.prototype.toWellFormed, // toWellFormedRaw
    Function.prototype.bind.bind(callBound), // uncurry
    promiseReject, // promiseReject
    Map, // MapCtor
    Map.prototype.set, // mapSetRaw
    Map.prototype.delete, // mapDeleteRaw
    Map.prototype.forEach, // mapForEachRaw
    Map.prototype.get, // mapGetRaw
    Map.prototype.has, // mapHasRaw
    Set, // SetCtor
    Set.prototype.add, // setAddRaw
    Set.prototype.has, // setHasRaw
    Set.prototype.delete, // setDeleteRaw
    String.prototype.trimEnd, // trimEndRaw
    String.prototype.substring, // substringRaw
    String.prototype.charCodeAt, // charCodeAtRaw
    TypeErrorCtor, // TypeErrorCtor
    RangeErrorCtor, // RangeErrorCtor
    ErrorCtor, // ErrorCtor
    StringCtor, // StringCtor
    builtinProtos, // builtinProtos
    Date, // RealDate
    ToolCallError, // ToolCallError
    bindings, // bindings
    bind, // bind
    hostFinish, // hostFinish
  ];

  defineProperty(G, 'callTool', { value: callTool, enumerable: false, writable: false, configurable: false });
  defineProperty(G, 'console', { value: consoleObject, enumerable: false, writable: true, configurable: true });
  defineProperty(G, 'ToolCallError', { value: ToolCallError, enumerable: false, writable: true, configurable: true });

  defineProperty(G, '__codeModeHost', {
    value: freeze({ settle, run, track, reportUnhandled, errorText }),
    enumerable: false,
    writable: false,
    configurable: false,
  });
})

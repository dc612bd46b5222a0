// The Code Mode prelude for the TypeScript runtime. It runs in a fresh QuickJS context before
// the run is known (so before the program exists) and is called with the host functions the
// Rust side installed:
//
//   hostCall(name, argsJson)         starts a tool call on the host: the result's JSON text
//                                    when it succeeded at once, `{ failure: message }` when it
//                                    failed at once, else the call's id (`settle` answers it
//                                    later)
//   hostLog(line)                    appends one log line
//   hostFinish(kind, text)           records how the program ended
//
// It leaves the functions the Rust side calls later (settle, run, track, firstUnhandled,
// errorText) on a frozen, non-writable `__codeModeHost` global; the host functions themselves
// are never reachable from the program. `run(main, toolNames)` binds the run's tools and
// starts the program, once. No JavaScript value is ever handed to Rust to keep: Rust only
// sees strings and numbers.
(function (hostCall, hostLog, hostFinish) {
  'use strict';
  const G = globalThis;
  const ObjectProto = Object.prototype;
  const ArrayProto = Array.prototype;
  const getProto = Object.getPrototypeOf;
  const keysOf = Object.keys;
  const defineProperty = Object.defineProperty;
  const freeze = Object.freeze;
  const create = Object.create;
  const isArray = Array.isArray;
  const hasOwn = Function.prototype.call.bind(ObjectProto.hasOwnProperty);
  const tagOf = Function.prototype.call.bind(ObjectProto.toString);
  // The regular expressions here are private, and each gets the built-in `exec` as an own,
  // read-only property: a program that patches `RegExp.prototype.exec` (which `test` and
  // `exec` would otherwise look up) cannot change what they match.
  const builtinExec = RegExp.prototype.exec;
  function sealed(re) {
    defineProperty(re, 'exec', { value: builtinExec, writable: false, configurable: false });
    return re;
  }
  const stringify = JSON.stringify;
  const parse = JSON.parse;
  const isFiniteNumber = Number.isFinite;
  const wellFormed = String.prototype.isWellFormed;
  const loneSurrogate = sealed(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
  const isWellFormed = wellFormed
    ? Function.prototype.call.bind(wellFormed)
    : (s) => loneSurrogate.exec(s) === null;
  const toWellFormed = String.prototype.toWellFormed
    ? Function.prototype.call.bind(String.prototype.toWellFormed)
    : (s) => s.replace(new RegExp(loneSurrogate.source, 'g'), '\uFFFD');
  const PromiseCtor = Promise;
  // Captured now: QuickJS creates a built-in method's function object on its first access in
  // a context, and this happens before the run (which then also cannot be misled by a patch).
  const promiseResolve = PromiseCtor.resolve.bind(PromiseCtor);
  const promiseReject = PromiseCtor.reject.bind(PromiseCtor);
  const promiseThen = Function.prototype.call.bind(PromiseCtor.prototype.then);
  const MapCtor = Map;
  const SetCtor = Set;
  const TypeErrorCtor = TypeError;
  const ErrorCtor = Error;
  const StringCtor = String;
  const identifier = sealed(/^[A-Za-z_$][A-Za-z0-9_$]*$/);
  const MAX_DEPTH = 100;

  // --- strict JSON snapshot ---------------------------------------------------------------

  function pathOf(node) {
    const parts = [];
    for (let n = node; n !== null; n = n.parent) parts.push(n);
    let out = '';
    for (let i = parts.length - 1; i >= 0; i--) {
      const key = parts[i].key;
      if (parts[i].parent === null) out = key;
      else if (typeof key === 'number') out += '[' + key + ']';
      else if (identifier.exec(key) !== null) out += '.' + key;
      else out += '[' + stringify(key) + ']';
    }
    return out;
  }

  function refuse(node, what) {
    throw new TypeErrorCtor(pathOf(node) + ' ' + what + '; only plain JSON values can cross to the host');
  }

  // Strings JSON writes as they are, between quotes: no quote, backslash, control character
  // or surrogate (strings with those take the general path).
  const verbatim = sealed(/^[^"\\\u0000-\u001f\ud800-\udfff]*$/);

  // The common case, a plain object of plain scalars, without the general walker's bookkeeping.
  // Each value is read once and written straight into the text (no copy, no JSON.stringify:
  // QuickJS's stringify has a high fixed cost per call). Returns undefined when `v` is
  // anything else; the general walker then decides (and names the path of whatever is wrong).
  // Keys come in `Object.keys` order, the order JSON.stringify uses.
  function flatJsonText(v) {
    if (v === null || typeof v !== 'object' || isArray(v)) return undefined;
    const proto = getProto(v);
    if (proto !== ObjectProto && proto !== null) return undefined;
    const keys = keysOf(v);
    let text = '{';
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i];
      if (verbatim.exec(k) === null) return undefined;
      const x = v[k];
      let part;
      switch (typeof x) {
        case 'string':
          if (verbatim.exec(x) === null) return undefined;
          part = '"' + x + '"';
          break;
        case 'number':
          if (!isFiniteNumber(x) || (x === 0 && 1 / x < 0)) return undefined;
          // A finite number's JSON text is its ToString.
          part = StringCtor(x);
          break;
        case 'boolean':
          part = x ? 'true' : 'false';
          break;
        default:
          if (x !== null) return undefined;
          part = 'null';
      }
      text += (i === 0 ? '"' : ',"') + k + '":' + part;
    }
    return text + '}';
  }

  // Copies `root` into a fresh plain JSON tree (or refuses it, naming the path) and returns its
  // JSON text. Iterative, so deep values cannot overflow the stack.
  function toJsonText(root, label) {
    const holder = [undefined];
    const rootNode = { parent: null, key: label, depth: 0 };
    const stack = [[root, holder, 0, rootNode]];
    const active = new SetCtor();
    while (stack.length > 0) {
      const item = stack.pop();
      if (item.length === 1) {
        active.delete(item[0]);
        continue;
      }
      const v = item[0];
      const node = item[3];
      switch (typeof v) {
        case 'string':
          if (!isWellFormed(v)) refuse(node, 'is a string with an unpaired UTF-16 surrogate');
          item[1][item[2]] = v;
          break;
        case 'number':
          if (v !== v) refuse(node, 'is NaN');
          if (!isFiniteNumber(v)) refuse(node, 'is ' + (v > 0 ? 'Infinity' : '-Infinity'));
          if (v === 0 && 1 / v < 0) refuse(node, 'is -0');
          item[1][item[2]] = v;
          break;
        case 'boolean':
          item[1][item[2]] = v;
          break;
        case 'undefined':
          refuse(node, 'is undefined');
          break;
        case 'bigint':
          refuse(node, 'is a BigInt');
          break;
        case 'symbol':
          refuse(node, 'is a symbol');
          break;
        case 'function':
          refuse(node, 'is a function');
          break;
        default: {
          if (v === null) {
            item[1][item[2]] = null;
            break;
          }
          if (node.depth >= MAX_DEPTH) refuse(node, 'nests deeper than ' + MAX_DEPTH + ' levels');
          if (active.has(v)) refuse(node, 'is a cycle (it contains itself)');
          const proto = getProto(v);
          if (isArray(v)) {
            if (proto !== ArrayProto) refuse(node, 'is an array subclass, not a plain array');
            const n = v.length;
            for (let i = 0; i < n; i++) {
              if (!hasOwn(v, i)) {
                refuse({ parent: node, key: i, depth: node.depth + 1 }, 'is a hole in a sparse array');
              }
            }
            const copy = [];
            for (let i = 0; i < n; i++) copy.push(null);
            item[1][item[2]] = copy;
            active.add(v);
            stack.push([v]);
            for (let i = n - 1; i >= 0; i--) {
              stack.push([v[i], copy, i, { parent: node, key: i, depth: node.depth + 1 }]);
            }
          } else {
            if (proto !== ObjectProto && proto !== null) {
              refuse(node, 'is ' + tagOf(v).slice(8, -1) + ' object, not a plain object');
            }
            const keys = keysOf(v);
            const copy = create(null);
            for (let i = 0; i < keys.length; i++) {
              const k = keys[i];
              if (!isWellFormed(k)) refuse(node, 'has a key with an unpaired UTF-16 surrogate');
              copy[k] = null;
            }
            item[1][item[2]] = copy;
            active.add(v);
            stack.push([v]);
            for (let i = keys.length - 1; i >= 0; i--) {
              const k = keys[i];
              stack.push([v[k], copy, k, { parent: node, key: k, depth: node.depth + 1 }]);
            }
          }
        }
      }
    }
    return stringify(holder[0]);
  }

  // --- console ----------------------------------------------------------------------------

  function describe(v) {
    switch (typeof v) {
      case 'string':
        return v;
      case 'number':
        return v === 0 && 1 / v < 0 ? '-0' : StringCtor(v);
      case 'bigint':
        return StringCtor(v) + 'n';
      case 'symbol':
        return v.toString();
      case 'function':
        return v.name ? '[Function: ' + v.name + ']' : '[Function (anonymous)]';
      case 'undefined':
        return 'undefined';
      case 'boolean':
        return StringCtor(v);
      default:
        break;
    }
    if (v === null) return 'null';
    if (v instanceof ErrorCtor) {
      const stack = typeof v.stack === 'string' ? v.stack : '';
      return StringCtor(v.name) + ': ' + StringCtor(v.message) + (stack ? '\n' + stack.replace(/\s+$/, '') : '');
    }
    const seen = new SetCtor();
    const text = stringify(v, function (key, value) {
      switch (typeof value) {
        case 'bigint':
          return StringCtor(value) + 'n';
        case 'function':
          return value.name ? '[Function: ' + value.name + ']' : '[Function (anonymous)]';
        case 'symbol':
          return value.toString();
        case 'undefined':
          return key === '' ? 'undefined' : undefined;
        case 'object':
          if (value === null) return null;
          if (seen.has(value)) return '[Circular]';
          seen.add(value);
          return value;
        default:
          return value;
      }
    });
    return text === undefined ? StringCtor(v) : text;
  }

  function logger() {
    return function (...values) {
      let line = '';
      for (let i = 0; i < values.length; i++) {
        if (i > 0) line += ' ';
        line += describe(values[i]);
      }
      hostLog(toWellFormed(line));
    };
  }

  const consoleObject = create(null);
  for (const level of ['log', 'info', 'warn', 'error', 'debug', 'trace']) {
    consoleObject[level] = logger();
  }
  freeze(consoleObject);

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
  const pendingNames = [];
  const deferred = PromiseCtor.withResolvers.bind(PromiseCtor);

  function bind(name) {
    return function (args) {
      const value = arguments.length === 0 ? {} : args;
      let text;
      try {
        text = flatJsonText(value);
        if (text === undefined) text = toJsonText(value, 'args');
      } catch (error) {
        return promiseReject(error);
      }
      const answer = hostCall(name, text);
      if (typeof answer === 'string') {
        let value;
        try {
          value = parse(answer);
        } catch (error) {
          return promiseReject(error);
        }
        return promiseResolve(value);
      }
      if (typeof answer === 'object') return promiseReject(new ToolCallError(name, answer.failure));
      const id = answer;
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
  function bindTools(toolNames) {
    for (let i = 0; i < toolNames.length; i++) {
      const name = toolNames[i];
      const fn = bind(name);
      bindings[name] = fn;
      if (name !== 'then') tools[name] = fn;
    }
    freeze(bindings);
    freeze(tools);
  }

  function callTool(name, args) {
    const key = typeof name === 'string' ? name : StringCtor(name);
    if (!hasOwn(bindings, key)) {
      return promiseReject(
        new ToolCallError(key, 'no tool named ' + stringify(key) + ' is bound in this run'),
      );
    }
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

  // --- unhandled rejections ---------------------------------------------------------------

  const unhandled = new MapCtor();
  function track(promise, reason, handled) {
    if (handled) unhandled.delete(promise);
    else unhandled.set(promise, reason);
  }

  // --- running ------------------------------------------------------------------------------

  // Finish kinds: 0 = returned nothing, 1 = returned JSON text, 2 = invalid result,
  // 3 = uncaught error (text is the JSON of {name, message, stack}).
  function errorText(e) {
    let name = 'Error';
    let message;
    let stack = '';
    let toolName = null;
    try {
      if (e instanceof ErrorCtor) {
        name = StringCtor(e.name);
        message = StringCtor(e.message);
        stack = typeof e.stack === 'string' ? e.stack : '';
        if (e instanceof ToolCallError) toolName = StringCtor(e.toolName);
      } else {
        name = 'Uncaught';
        message = 'the program threw a non-Error value: ' + describe(e);
      }
    } catch (inner) {
      message = 'the program threw a value that cannot be described';
    }
    return stringify({
      name: toWellFormed(name),
      message: toWellFormed(message),
      stack: toWellFormed(stack),
      toolName: toolName === null ? null : toWellFormed(toolName),
    });
  }

  function finishWith(value) {
    if (value === undefined) {
      hostFinish(0, '');
      return;
    }
    let text;
    try {
      text = flatJsonText(value);
      if (text === undefined) text = toJsonText(value, 'result');
    } catch (error) {
      hostFinish(2, StringCtor(error.message));
      return;
    }
    hostFinish(1, text);
  }

  let started = false;
  function run(main, toolNames) {
    if (started) throw new TypeErrorCtor('the program has already started');
    started = true;
    bindTools(toolNames);
    if (typeof main !== 'function') {
      hostFinish(3, stringify({ name: 'SyntaxError', message: 'the program must be the body of a function', stack: '', toolName: null }));
      return;
    }
    let promise;
    try {
      promise = main();
    } catch (error) {
      hostFinish(3, errorText(error));
      return;
    }
    promiseThen(promiseResolve(promise), finishWith, function (error) {
      hostFinish(3, errorText(error));
    });
  }

  function firstUnhandled() {
    for (const reason of unhandled.values()) return errorText(reason);
    return undefined;
  }

  defineProperty(G, 'tools', { value: tools, enumerable: false, writable: false, configurable: false });
  defineProperty(G, 'callTool', { value: callTool, enumerable: false, writable: false, configurable: false });
  defineProperty(G, 'console', { value: consoleObject, enumerable: false, writable: true, configurable: true });
  defineProperty(G, 'ToolCallError', { value: ToolCallError, enumerable: false, writable: true, configurable: true });

  defineProperty(G, '__codeModeHost', {
    value: freeze({ settle, run, track, firstUnhandled, errorText }),
    enumerable: false,
    writable: false,
    configurable: false,
  });
})

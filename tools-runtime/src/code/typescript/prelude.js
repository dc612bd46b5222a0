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
//   isProxy(value)                   whether a value is a Proxy (asked without running a trap)
//
// It leaves the functions the Rust side calls later (settle, run, track, firstUnhandled,
// errorText) on a frozen, non-writable `__codeModeHost` global; the host functions themselves
// are never reachable from the program. `run(main, toolNames)` binds the run's tools and
// starts the program, once. No JavaScript value is ever handed to Rust to keep: Rust only
// sees strings and numbers.
(function (hostCall, hostLog, hostFinish, isProxy) {
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
  const mapSet = Function.prototype.call.bind(MapCtor.prototype.set);
  const mapDelete = Function.prototype.call.bind(MapCtor.prototype.delete);
  const mapForEach = Function.prototype.call.bind(MapCtor.prototype.forEach);
  const SetCtor = Set;
  const TypeErrorCtor = TypeError;
  const RangeErrorCtor = RangeError;
  const ErrorCtor = Error;
  const StringCtor = String;
  const substring = Function.prototype.call.bind(String.prototype.substring);
  const identifier = sealed(/^[A-Za-z_$][A-Za-z0-9_$]*$/);
  const MAX_DEPTH = 100;

  // --- strict JSON text --------------------------------------------------------------------
  //
  // The conversion of arguments and results consults nothing the program can change: only the
  // built-ins captured above (before any program exists), own properties of the values, and
  // private bookkeeping in objects without a prototype (so no getter or setter the program puts
  // on Object.prototype or Array.prototype is involved). `toJSON`, replaced globals such as
  // `JSON`, `Array.isArray` or `Object.keys`, and getters on prototypes are never looked at.
  // Proxies are refused without running any of their traps. An own getter is called once, and
  // its value is converted; symbol-keyed and non-enumerable properties are left out, and so is
  // a property an own getter deleted before it was read.

  // How many characters of a program-controlled string a message quotes; the rest is replaced
  // by a marker that says how many UTF-8 bytes were left out.
  const CUT_LIMIT = 200;
  function cutText(s) {
    if (s.length <= CUT_LIMIT) return s;
    let end = 0;
    for (let chars = 0; chars < CUT_LIMIT && end < s.length; chars++) {
      const c = s.charCodeAt(end);
      end += c >= 0xd800 && c <= 0xdbff && end + 1 < s.length ? 2 : 1;
    }
    if (end >= s.length) return s;
    let bytes = 0;
    for (let i = end; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c < 0x80) bytes += 1;
      else if (c < 0x800) bytes += 2;
      else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
        const d = s.charCodeAt(i + 1);
        if (d >= 0xdc00 && d <= 0xdfff) {
          bytes += 4;
          i++;
        } else bytes += 3;
      } else bytes += 3;
    }
    return substring(s, 0, end) + '\u2026 (' + bytes + ' more bytes)';
  }

  // The direct prototypes of the built-in objects a value may be, for naming what was refused.
  const builtinProtos = create(null);
  const builtinNames = create(null);
  let builtinCount = 0;
  const builtinNamesList = ['Date', 'Map', 'Set', 'WeakMap', 'WeakSet', 'WeakRef',
    'FinalizationRegistry', 'RegExp', 'Promise', 'Error', 'TypeError', 'RangeError', 'SyntaxError',
    'ReferenceError', 'EvalError', 'URIError', 'AggregateError', 'Boolean', 'Number', 'String',
    'Symbol', 'BigInt'];
  for (let i = 0; i < builtinNamesList.length; i++) {
    const ctor = G[builtinNamesList[i]];
    if (typeof ctor !== 'function') continue;
    builtinProtos[builtinCount] = ctor.prototype;
    builtinNames[builtinCount] = builtinNamesList[i];
    builtinCount++;
  }
  function kindOf(proto) {
    for (let i = 0; i < builtinCount; i++) {
      if (builtinProtos[i] === proto) return 'is ' + builtinNames[i] + ' object, not a plain object';
    }
    return 'is an instance of a class (its prototype is not Object.prototype), not a plain object';
  }

  // Strings JSON writes as they are, between quotes: no quote, backslash, control character
  // or surrogate (strings with those are quoted by the captured JSON.stringify, which looks
  // nothing up for a string).
  const verbatim = sealed(/^[^"\\\u0000-\u001f\ud800-\udfff]*$/);
  function quote(s) {
    return verbatim.exec(s) !== null ? '"' + s + '"' : stringify(s);
  }

  // The JSON text of a scalar (string, finite number, boolean, null), or undefined for
  // anything else, and for values the general path refuses (it names them).
  function scalarText(x) {
    switch (typeof x) {
      case 'string':
        if (verbatim.exec(x) !== null) return '"' + x + '"';
        return isWellFormed(x) ? stringify(x) : undefined;
      case 'number':
        if (!isFiniteNumber(x) || (x === 0 && 1 / x < 0)) return undefined;
        return StringCtor(x);
      case 'boolean':
        return x ? 'true' : 'false';
      default:
        return x === null ? 'null' : undefined;
    }
  }

  // A path: the label, the key the first `count` open containers are at, then `extra` if given.
  function pathOf(label, frames, count, extra) {
    let out = label;
    for (let i = 0; i <= count; i++) {
      let key;
      if (i < count) {
        const frame = frames[i];
        key = frame.array ? frame.index - 1 : frame.items[frame.index - 1];
      } else if (extra !== undefined) key = extra;
      else break;
      if (typeof key === 'number') out += '[' + key + ']';
      else if (identifier.exec(key) !== null) out += '.' + cutText(key);
      else out += '[' + stringify(cutText(key)) + ']';
    }
    return out;
  }

  // The TypeError for a value that cannot cross: `count` open containers lead to it.
  function refusal(label, frames, count, what, extra) {
    return new TypeErrorCtor(
      pathOf(label, frames, count, extra) + ' ' + what + '; only plain JSON values can cross to the host',
    );
  }

  // Marks a key whose property was gone when its value was to be read.
  const LEFT_OUT = create(null);

  // The JSON text of `root`, or a TypeError naming the path of what cannot cross. Iterative
  // (deep values cannot overflow the stack): `frames` holds the open arrays and objects.
  function toJsonText(root, label) {
    let frames = null;
    let depth = 0;
    let out = '';
    let v = root;
    for (;;) {
      switch (typeof v) {
        case 'string':
          if (verbatim.exec(v) !== null) out += '"' + v + '"';
          else if (isWellFormed(v)) out += stringify(v);
          else throw refusal(label, frames, depth, 'is a string with an unpaired UTF-16 surrogate');
          break;
        case 'number':
          if (v !== v) throw refusal(label, frames, depth, 'is NaN');
          if (!isFiniteNumber(v)) throw refusal(label, frames, depth, 'is ' + (v > 0 ? 'Infinity' : '-Infinity'));
          if (v === 0 && 1 / v < 0) throw refusal(label, frames, depth, 'is -0');
          // A finite number's JSON text is its ToString.
          out += StringCtor(v);
          break;
        case 'boolean':
          out += v ? 'true' : 'false';
          break;
        case 'undefined':
          throw refusal(label, frames, depth, 'is undefined');
          break;
        case 'bigint':
          throw refusal(label, frames, depth, 'is a BigInt');
          break;
        case 'symbol':
          throw refusal(label, frames, depth, 'is a symbol');
          break;
        case 'function':
          throw refusal(label, frames, depth, 'is a function');
          break;
        default: {
          if (v === null) {
            out += 'null';
            break;
          }
          if (isProxy(v)) throw refusal(label, frames, depth, 'is a Proxy');
          if (depth >= MAX_DEPTH) throw refusal(label, frames, depth, 'nests deeper than ' + MAX_DEPTH + ' levels');
          for (let i = 0; i < depth; i++) {
            if (frames[i].object === v) throw refusal(label, frames, depth, 'is a cycle (it contains itself)');
          }
          const proto = getProto(v);
          if (isArray(v)) {
            if (proto !== ArrayProto) throw refusal(label, frames, depth, 'is an array subclass, not a plain array');
            const n = v.length;
            if (n === 0) {
              out += '[]';
              break;
            }
            out += '[';
            if (frames === null) frames = create(null);
            frames[depth++] = { array: true, object: v, items: v, index: 0, n };
          } else {
            if (proto !== ObjectProto && proto !== null) throw refusal(label, frames, depth, kindOf(proto));
            // Every value is read once, right after checking that its key is still an own
            // property (an own getter read before may have deleted it: then it is left out,
            // and nothing on the prototype stands in for it). Scalars under plain keys are
            // written as they are read; from the first other value on, the values are kept
            // for the general path.
            const keys = keysOf(v);
            const n = keys.length;
            let text = '{';
            let written = 0;
            let i = 0;
            let first;
            for (; i < n; i++) {
              const k = keys[i];
              if (!hasOwn(v, k)) continue;
              const x = v[k];
              const t = verbatim.exec(k) !== null ? scalarText(x) : undefined;
              if (t === undefined) {
                first = x;
                break;
              }
              text += (written === 0 ? '"' : ',"') + k + '":' + t;
              written++;
            }
            out += text;
            if (i === n) {
              out += '}';
              break;
            }
            const values = create(null);
            values[i] = first;
            for (let j = i + 1; j < n; j++) {
              const k = keys[j];
              values[j] = hasOwn(v, k) ? v[k] : LEFT_OUT;
            }
            if (frames === null) frames = create(null);
            frames[depth++] = { array: false, object: v, items: keys, values, index: i, n, written };
          }
        }
      }
      // The next value to write, closing the containers that are done.
      for (;;) {
        if (depth === 0) return out;
        const frame = frames[depth - 1];
        if (frame.index === frame.n) {
          out += frame.array ? ']' : '}';
          frames[--depth] = undefined;
          continue;
        }
        const i = frame.index;
        if (frame.array) {
          if (i > 0) out += ',';
          // Read at once after the check: no program code runs in between.
          if (!hasOwn(frame.items, i)) throw refusal(label, frames, depth - 1, 'is a hole in a sparse array', i);
          frame.index = i + 1;
          v = frame.items[i];
        } else {
          frame.index = i + 1;
          const x = frame.values[i];
          if (x === LEFT_OUT) continue;
          if (frame.written > 0) out += ',';
          frame.written++;
          const k = frame.items[i];
          if (verbatim.exec(k) !== null) out += '"' + k + '":';
          else if (isWellFormed(k)) out += stringify(k) + ':';
          else throw refusal(label, frames, depth - 1, 'has a key with an unpaired UTF-16 surrogate');
          v = x;
        }
        break;
      }
    }
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
  // The run's cap on one call's arguments, set by `run`.
  let callLimit = 0;
  const pendingNames = [];
  const deferred = PromiseCtor.withResolvers.bind(PromiseCtor);

  function bind(name) {
    return function (args) {
      const value = arguments.length === 0 ? {} : args;
      let text;
      try {
        text = toJsonText(value, 'args');
      } catch (error) {
        return promiseReject(error);
      }
      // A UTF-16 length is at most the UTF-8 length: longer text is too long for sure (the
      // host measures the exact bytes before it copies anything).
      if (text.length > callLimit) {
        return promiseReject(new RangeErrorCtor(
          'args is at least ' + text.length + ' bytes of JSON text, more than the ' + callLimit +
            ' bytes one call may send (max_call_bytes)',
        ));
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
      if (typeof answer === 'object') {
        if (hasOwn(answer, 'tooLarge')) return promiseReject(new RangeErrorCtor(answer.tooLarge));
        return promiseReject(new ToolCallError(name, answer.failure));
      }
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
  //
  // `bindings` is filled before `tools`, not beside it: QuickJS lets objects that gain the same
  // properties in the same order share one shape, and an object whose shape is shared copies
  // the whole shape to add a property. Filled side by side, the two objects shared every
  // shape, so each tool copied all the names before it (milliseconds for 1,000 tools).
  function bindTools(toolNames) {
    const n = toolNames.length;
    const fns = [];
    for (let i = 0; i < n; i++) {
      const fn = bind(toolNames[i]);
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

  function callTool(name, args) {
    const key = typeof name === 'string' ? name : StringCtor(name);
    if (!hasOwn(bindings, key)) {
      return promiseReject(
        new ToolCallError(key, 'no tool named ' + stringify(cutText(key)) + ' is bound in this run'),
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
    if (handled) mapDelete(unhandled, promise);
    else mapSet(unhandled, promise, reason);
  }

  // --- running ------------------------------------------------------------------------------

  // The first position in the program a stack trace names (all the host needs of a stack).
  const programPosition = sealed(/program\.ts:\d+:\d+/);

  // The JSON text of {name, message, stack, toolName}, written without JSON.stringify on an
  // object (the program may have patched what that consults).
  function thrownText(name, message, stack, toolName) {
    return '{"name":' + quote(toWellFormed(name)) + ',"message":' + quote(toWellFormed(message)) +
      ',"stack":' + quote(toWellFormed(stack)) + ',"toolName":' +
      (toolName === null ? 'null' : quote(toWellFormed(toolName))) + '}';
  }

  // Finish kinds: 0 = returned nothing, 1 = returned JSON text, 2 = invalid result,
  // 3 = uncaught error (text is the JSON of {name, message, stack, toolName}). The name and
  // the tool's name are cut to CUT_LIMIT characters, a thrown value that is not an Error is
  // quoted cut too, and the stack is reduced to the program's first position.
  function errorText(e) {
    let name = 'Error';
    let message;
    let stack = '';
    let toolName = null;
    try {
      if (e instanceof ErrorCtor) {
        name = cutText(StringCtor(e.name));
        message = StringCtor(e.message);
        const trace = e.stack;
        if (typeof trace === 'string') {
          const found = programPosition.exec(trace);
          if (found !== null) stack = found[0];
        }
        if (e instanceof ToolCallError) toolName = cutText(StringCtor(e.toolName));
      } else {
        name = 'Uncaught';
        message = 'the program threw a non-Error value: ' + cutText(describe(e));
      }
    } catch (inner) {
      name = 'Error';
      message = 'the program threw a value that cannot be described';
      stack = '';
      toolName = null;
    }
    return thrownText(name, message, stack, toolName);
  }

  // The message of an error thrown while converting a result (ours, or a getter's).
  function messageOf(error) {
    try {
      if (error instanceof ErrorCtor) return toWellFormed(StringCtor(error.message));
      return 'a getter threw a non-Error value: ' + cutText(toWellFormed(describe(error)));
    } catch (inner) {
      return 'a getter threw a value that cannot be described';
    }
  }

  function finishWith(value) {
    if (value === undefined) {
      hostFinish(0, '');
      return;
    }
    let text;
    try {
      text = toJsonText(value, 'result');
    } catch (error) {
      hostFinish(2, messageOf(error));
      return;
    }
    hostFinish(1, text);
  }

  let started = false;
  function run(main, toolNames, maxCallBytes) {
    if (started) throw new TypeErrorCtor('the program has already started');
    started = true;
    callLimit = maxCallBytes;
    bindTools(toolNames);
    if (typeof main !== 'function') {
      hostFinish(3, thrownText('SyntaxError', 'the program must be the body of a function', '', null));
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
    let first;
    let found = false;
    mapForEach(unhandled, function (reason) {
      if (!found) {
        found = true;
        first = reason;
      }
    });
    return found ? errorText(first) : undefined;
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

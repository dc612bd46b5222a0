// The lazy half of the Code Mode prelude for the TypeScript runtime (`prelude.js` is the half
// every run evaluates). It holds what most runs never need: the strict JSON conversion of
// arguments and results the host cannot read itself, the descriptions of logged values and
// thrown errors, binding on first use, the unhandled rejections and the replayable clock.
// The core asks the host for it (`hostLazy`) the first time one of those is needed, which may
// be in the middle of the program, after the program has replaced any global, patched any
// prototype or filled `Object.prototype` with getters and setters. So nothing here looks up a
// global or a prototype's method: every built-in it uses comes in `B`, captured by the core
// before the program existed (the array's own elements, so reading them consults no
// prototype), and every object literal whose properties the engine reads (property
// descriptors) has no prototype.
//
// It is called as `(B, S, isProxy, jsonSize, utf8Size, hostBind, hostNames, hostLine,
// hostClock)`:
//
//   B                              the core's captures and its own functions, an array read
//                                  by position (the names below, in the core's order)
//   S                              the run's state the core keeps (outputLimit, callLimit,
//                                  onFirstUse), read here each time it is needed
//   isProxy(value)                 whether a value is a Proxy (asked without running a trap)
//   jsonSize(string)               the UTF-8 size of the string's JSON text, -1 when it
//                                  has an unpaired surrogate (read in place, nothing built)
//   utf8Size(string)               the string's size in UTF-8 bytes (an unpaired surrogate
//                                  counts 3), read in place
//   hostBind(name)                 binds `name` for a run that binds on first use: the
//                                  index `hostCall` takes for it from now on, or -1 when
//                                  the host has no such tool (only ever asked once a name)
//   hostNames()                    every name the host binds, in its order (asked when a
//                                  program that binds on first use enumerates `tools`)
//   hostLine(line)                 appends one log line; `null` for a line refused as
//                                  longer than the output may be
//   hostClock(ms)                  reports a clock reading of a replayable run
//
// and returns the functions the core calls (at the end). Nothing here builds a text past the
// limit it is for: arguments are measured against max_call_bytes and results against
// max_output_bytes as they are written, log lines and messages are refused once their length
// passes max_output_bytes, and no pattern runs over a string the program controls unless the
// pattern keeps no state per character.
(function (B, S, isProxy, jsonSize, utf8Size, hostBind, hostNames, hostLine, hostClock) {
  'use strict';
  const G = B[0];
  const ObjectProto = B[1];
  const ArrayProto = B[2];
  const getProto = B[3];
  const keysOf = B[4];
  const defineProperty = B[5];
  const freeze = B[6];
  const ProxyCtor = B[7];
  const create = B[8];
  const isArray = B[9];
  const hasOwn = B[10];
  const builtinExec = B[11];
  const stringify = B[12];
  const isFiniteNumber = B[13];
  const wellFormed = B[14];
  const toWellFormedRaw = B[15];
  const uncurry = B[16];
  const promiseReject = B[17];
  const MapCtor = B[18];
  const mapSetRaw = B[19];
  const mapDeleteRaw = B[20];
  const mapForEachRaw = B[21];
  const mapGetRaw = B[22];
  const mapHasRaw = B[23];
  const SetCtor = B[24];
  const setAddRaw = B[25];
  const setHasRaw = B[26];
  const setDeleteRaw = B[27];
  const trimEndRaw = B[28];
  const substringRaw = B[29];
  const charCodeAtRaw = B[30];
  const TypeErrorCtor = B[31];
  const RangeErrorCtor = B[32];
  const ErrorCtor = B[33];
  const StringCtor = B[34];
  const builtinProtos = B[35];
  const RealDate = B[36];
  const ToolCallError = B[37];
  const bindings = B[38];
  const bind = B[39];
  const hostFinish = B[40];
  // The regular expressions here are private, and each gets the built-in `exec` as an own,
  // read-only property: a program that patches `RegExp.prototype.exec` (which `test` and
  // `exec` would otherwise look up) cannot change what they match.
  function sealed(re) {
    defineProperty(re, 'exec', { __proto__: null, value: builtinExec, writable: false, configurable: false });
    return re;
  }
  // Both are in the QuickJS this crate builds (the core captured them).
  const isWellFormed = uncurry(wellFormed);
  const toWellFormed = uncurry(toWellFormedRaw);
  const mapSet = uncurry(mapSetRaw);
  const mapDelete = uncurry(mapDeleteRaw);
  const mapForEach = uncurry(mapForEachRaw);
  const mapGet = uncurry(mapGetRaw);
  const mapHas = uncurry(mapHasRaw);
  const setAdd = uncurry(setAddRaw);
  const setHas = uncurry(setHasRaw);
  const setDelete = uncurry(setDeleteRaw);
  const trimEnd = uncurry(trimEndRaw);
  const substring = uncurry(substringRaw);
  const charCodeAt = uncurry(charCodeAtRaw);
  const identifierStart = sealed(/^[A-Za-z_$]/);
  const notIdentifierPart = sealed(/[^A-Za-z0-9_$]/);
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
  // by a marker that says how many UTF-8 bytes were left out (measured by the host, in place).
  const CUT_LIMIT = 200;
  function cutText(s) {
    if (s.length <= CUT_LIMIT) return s;
    let end = 0;
    for (let chars = 0; chars < CUT_LIMIT && end < s.length; chars++) {
      const c = charCodeAt(s, end);
      end += c >= 0xd800 && c <= 0xdbff && end + 1 < s.length ? 2 : 1;
    }
    if (end >= s.length) return s;
    const head = substring(s, 0, end);
    return head + '\u2026 (' + (utf8Size(s) - utf8Size(head)) + ' more bytes)';
  }

  // The direct prototypes of the built-in objects a value may be (captured by the core), for
  // naming what was refused.
  const builtinNames = ['Date', 'Map', 'Set', 'WeakMap', 'WeakSet', 'WeakRef',
    'FinalizationRegistry', 'RegExp', 'Promise', 'Error', 'TypeError', 'RangeError', 'SyntaxError',
    'ReferenceError', 'EvalError', 'URIError', 'AggregateError', 'Boolean', 'Number', 'String',
    'Symbol', 'BigInt'];
  function kindOf(proto) {
    for (let i = 0; i < builtinNames.length; i++) {
      if (builtinProtos[i] === proto) return 'is ' + builtinNames[i] + ' object, not a plain object';
    }
    return 'is an instance of a class (its prototype is not Object.prototype), not a plain object';
  }


  // The size of a string's JSON text (its quotes and escapes included) in UTF-8 bytes, or -1
  // when the string has an unpaired UTF-16 surrogate. Short strings of printable ASCII without
  // a quote or a backslash are measured here; every other string by the host (`jsonSize`),
  // which reads it in place (QuickJS hands out ASCII text without copying it) and builds
  // nothing. No pattern is ever run over a long string: a pattern's backtracking state grows
  // with the text it matches, so a long string would exhaust the engine's memory.
  const SHORT = 256;
  const plainAscii = sealed(/^[\x20\x21\x23-\x5b\x5d-\x7e]*$/);
  function jsonSizeOf(s) {
    if (s.length <= SHORT && plainAscii.exec(s) !== null) return s.length + 2;
    return jsonSize(s);
  }
  // The JSON text of a string whose size `jsonSizeOf` gave: two bytes more than its length
  // means printable ASCII without escapes (an escape or a non-ASCII character adds bytes).
  // Strings with escapes are quoted by the captured JSON.stringify, which looks nothing up
  // for a string.
  function jsonTextOf(s, size) {
    return size === s.length + 2 ? '"' + s + '"' : stringify(s);
  }

  // Whether a key is short printable ASCII without a quote or a backslash (its JSON text is
  // itself in quotes). Programs use few keys, many times: the answers for the first
  // PLAIN_KEYS_MAX keys of at most PLAIN_KEY_CHARS characters are kept (in an object without a
  // prototype, which no program reaches; a few KiB of the run's heap at most).
  const PLAIN_KEYS_MAX = 256;
  const PLAIN_KEY_CHARS = 32;
  const plainKeys = create(null);
  let plainKeyCount = 0;
  function isPlainKey(k) {
    if (k.length > PLAIN_KEY_CHARS) return k.length <= SHORT && plainAscii.exec(k) !== null;
    const known = plainKeys[k];
    if (known !== undefined) return known;
    const plain = plainAscii.exec(k) !== null;
    if (plainKeyCount < PLAIN_KEYS_MAX) {
      plainKeys[k] = plain;
      plainKeyCount++;
    }
    return plain;
  }

  // The JSON text of a scalar the object fast path writes as it reads (a finite number, a
  // boolean, null, a short plain string), all of it ASCII; undefined for anything else, which
  // the general path measures before it writes (and refuses, naming it, if it must).
  function scalarText(x) {
    switch (typeof x) {
      case 'string':
        return x.length <= SHORT && plainAscii.exec(x) !== null ? '"' + x + '"' : undefined;
      case 'number':
        if (!isFiniteNumber(x) || (x === 0 && 1 / x < 0)) return undefined;
        return StringCtor(x);
      case 'boolean':
        return x ? 'true' : 'false';
      default:
        return x === null ? 'null' : undefined;
    }
  }

  // Whether a key is an identifier (written `.key` in a path). Neither pattern repeats, so
  // neither keeps backtracking state for a long key.
  function isIdentifier(key) {
    return identifierStart.exec(key) !== null && notIdentifierPart.exec(key) === null;
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
      else if (isIdentifier(key)) out += '.' + cutText(key);
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

  // What a result's conversion throws when its text would pass the output limit: the host
  // reports the run's `output_limit` failure. Private: no program code can catch it.
  const OUTPUT_FULL = create(null);

  // The error for a text that would pass `limit` bytes once the value at the path is written:
  // `atLeast` is what is written so far, that value, and one closing bracket per open
  // container. `what` names the limit; without it this is a result (OUTPUT_FULL).
  function overLimit(label, frames, count, atLeast, limit, what, extra) {
    if (what === undefined) return OUTPUT_FULL;
    return new RangeErrorCtor(
      label + ' is at least ' + atLeast + ' bytes of JSON text, more than the ' + limit + ' bytes ' +
        what + '; it passes the limit at ' + pathOf(label, frames, count, extra),
    );
  }

  // Marks a key whose property was gone when its value was to be read.
  const LEFT_OUT = create(null);

  // Containers whose text is at least this long are remembered by `toJsonText`: met again,
  // their text is reused instead of read and written again.
  const MEMO_MIN = 256;

  // The JSON text of `root`, or a TypeError naming the path of what cannot cross, or (once the
  // text would pass `limit` UTF-8 bytes) the error of `overLimit`. Iterative (deep values
  // cannot overflow the stack): `frames` holds the open arrays and objects (each with the
  // text written before it), `open` the same objects for the cycle check.
  //
  // The size is counted as the text is written, each string measured before it is copied, so
  // a value whose text would be huge stops where it passes the limit: the text never grows
  // past it. The work is bounded too: a container met again (a graph that refers to the same
  // objects many times, whose text is far larger than the graph) reuses the text written the
  // first time (`done`), so a value costs time in proportion to its objects and references,
  // not to its text. A container met again is not read again: its getters ran once. (It
  // cannot be on a cycle: a cycle through it was met, and refused, the first time.)
  function toJsonText(root, label, limit, what) {
    let frames = null;
    let open = null;
    let done = null;
    let depth = 0;
    let out = '';
    let bytes = 0;
    let v = root;
    for (;;) {
      switch (typeof v) {
        case 'string': {
          const size = jsonSizeOf(v);
          if (size < 0) throw refusal(label, frames, depth, 'is a string with an unpaired UTF-16 surrogate');
          if (bytes + size + depth > limit) throw overLimit(label, frames, depth, bytes + size + depth, limit, what);
          out += jsonTextOf(v, size);
          bytes += size;
          break;
        }
        case 'number': {
          if (v !== v) throw refusal(label, frames, depth, 'is NaN');
          if (!isFiniteNumber(v)) throw refusal(label, frames, depth, 'is ' + (v > 0 ? 'Infinity' : '-Infinity'));
          if (v === 0 && 1 / v < 0) throw refusal(label, frames, depth, 'is -0');
          // A finite number's JSON text is its ToString.
          const t = StringCtor(v);
          if (bytes + t.length + depth > limit) throw overLimit(label, frames, depth, bytes + t.length + depth, limit, what);
          out += t;
          bytes += t.length;
          break;
        }
        case 'boolean': {
          const t = v ? 'true' : 'false';
          if (bytes + t.length + depth > limit) throw overLimit(label, frames, depth, bytes + t.length + depth, limit, what);
          out += t;
          bytes += t.length;
          break;
        }
        case 'undefined':
          throw refusal(label, frames, depth, 'is undefined');
        case 'bigint':
          throw refusal(label, frames, depth, 'is a BigInt');
        case 'symbol':
          throw refusal(label, frames, depth, 'is a symbol');
        case 'function':
          throw refusal(label, frames, depth, 'is a function');
        default: {
          if (v === null) {
            if (bytes + 4 + depth > limit) throw overLimit(label, frames, depth, bytes + 4 + depth, limit, what);
            out += 'null';
            bytes += 4;
            break;
          }
          if (v === lazyTools) {
            // `tools` bound on first use reads as the object it stands for.
            bindAll();
            v = toolsTarget;
          }
          if (isProxy(v)) throw refusal(label, frames, depth, 'is a Proxy');
          if (done !== null) {
            const seen = mapGet(done, v);
            // Reused unless it would now nest too deep (then it is walked, and refused where
            // it passes the depth limit).
            if (seen !== undefined && depth + seen.height <= MAX_DEPTH) {
              if (bytes + seen.bytes + depth > limit) {
                throw overLimit(label, frames, depth, bytes + seen.bytes + depth, limit, what);
              }
              out += seen.text;
              bytes += seen.bytes;
              if (depth > 0 && frames[depth - 1].height < seen.height) frames[depth - 1].height = seen.height;
              break;
            }
          }
          if (depth >= MAX_DEPTH) throw refusal(label, frames, depth, 'nests deeper than ' + MAX_DEPTH + ' levels');
          if (open !== null && setHas(open, v)) throw refusal(label, frames, depth, 'is a cycle (it contains itself)');
          const proto = getProto(v);
          // An empty container and an opened one both need two bytes (its brackets).
          if (bytes + 2 + depth > limit) throw overLimit(label, frames, depth, bytes + 2 + depth, limit, what);
          if (isArray(v)) {
            if (proto !== ArrayProto) throw refusal(label, frames, depth, 'is an array subclass, not a plain array');
            const n = v.length;
            if (n === 0) {
              out += '[]';
              bytes += 2;
              if (depth > 0 && frames[depth - 1].height < 1) frames[depth - 1].height = 1;
              break;
            }
            if (frames === null) {
              frames = create(null);
              open = new SetCtor();
              done = new MapCtor();
            }
            frames[depth++] = { array: true, object: v, items: v, index: 0, n, before: out, start: bytes, height: 0 };
            setAdd(open, v);
            out = '[';
            bytes += 1;
          } else {
            if (proto !== ObjectProto && proto !== null) throw refusal(label, frames, depth, kindOf(proto));
            // Every value is read once, right after checking that its key is still an own
            // property (an own getter read before may have deleted it: then it is left out,
            // and nothing on the prototype stands in for it). Short scalars under short plain
            // keys are written as they are read (all ASCII: their size is their length);
            // from the first other value on, the values are kept for the general path.
            const keys = keysOf(v);
            const n = keys.length;
            let text = '{';
            let size = 1;
            let written = 0;
            let i = 0;
            let first;
            for (; i < n; i++) {
              const k = keys[i];
              if (!hasOwn(v, k)) continue;
              const x = v[k];
              const t = isPlainKey(k) ? scalarText(x) : undefined;
              if (t === undefined) {
                first = x;
                break;
              }
              const piece = (written === 0 ? '"' : ',"') + k + '":' + t;
              // One more byte for the closing brace.
              if (bytes + size + piece.length + 1 + depth > limit) {
                throw overLimit(label, frames, depth, bytes + size + piece.length + 1 + depth, limit, what, k);
              }
              text += piece;
              size += piece.length;
              written++;
            }
            if (i === n) {
              out += text + '}';
              bytes += size + 1;
              if (depth > 0 && frames[depth - 1].height < 1) frames[depth - 1].height = 1;
              break;
            }
            const values = create(null);
            values[i] = first;
            for (let j = i + 1; j < n; j++) {
              const k = keys[j];
              values[j] = hasOwn(v, k) ? v[k] : LEFT_OUT;
            }
            if (frames === null) {
              frames = create(null);
              open = new SetCtor();
              done = new MapCtor();
            }
            frames[depth++] = {
              array: false, object: v, items: keys, values, index: i, n, written,
              before: out, start: bytes, height: 0,
            };
            setAdd(open, v);
            out = text;
            bytes += size;
          }
        }
      }
      // The next value to write, closing the containers that are done (their closing
      // brackets were counted when they were opened). Scalars in arrays are written here.
      for (;;) {
        if (depth === 0) return out;
        const frame = frames[depth - 1];
        if (frame.index === frame.n) {
          const text = out + (frame.array ? ']' : '}');
          bytes += 1;
          const height = frame.height + 1;
          const size = bytes - frame.start;
          if (size >= MEMO_MIN) mapSet(done, frame.object, { text, bytes: size, height });
          setDelete(open, frame.object);
          out = frame.before + text;
          frames[--depth] = undefined;
          if (depth > 0 && frames[depth - 1].height < height) frames[depth - 1].height = height;
          continue;
        }
        const i = frame.index;
        if (frame.array) {
          if (i > 0) {
            if (bytes + 1 + depth > limit) throw overLimit(label, frames, depth - 1, bytes + 1 + depth, limit, what, i);
            out += ',';
            bytes += 1;
          }
          // Read at once after the check: no program code runs in between.
          if (!hasOwn(frame.items, i)) throw refusal(label, frames, depth - 1, 'is a hole in a sparse array', i);
          frame.index = i + 1;
          const x = frame.items[i];
          const t = scalarText(x);
          if (t !== undefined) {
            if (bytes + t.length + depth > limit) throw overLimit(label, frames, depth, bytes + t.length + depth, limit, what);
            out += t;
            bytes += t.length;
            continue;
          }
          v = x;
        } else {
          frame.index = i + 1;
          const x = frame.values[i];
          if (x === LEFT_OUT) continue;
          const k = frame.items[i];
          const keySize = jsonSizeOf(k);
          if (keySize < 0) throw refusal(label, frames, depth - 1, 'has a key with an unpaired UTF-16 surrogate');
          // The key, its colon, and the comma before it.
          const add = keySize + 1 + (frame.written > 0 ? 1 : 0);
          if (bytes + add + depth > limit) throw overLimit(label, frames, depth, bytes + add + depth, limit, what);
          if (frame.written > 0) out += ',';
          frame.written++;
          out += jsonTextOf(k, keySize) + ':';
          bytes += add;
          v = x;
        }
        break;
      }
    }
  }

  // --- console ----------------------------------------------------------------------------

  // Thrown by `describe` once a description is sure to pass the room it was given: the line
  // (or message) is refused before it is built. Private: no program code can catch it.
  const TOO_LONG = create(null);

  // The run's output limit is `S.outputLimit`, set by `run`: no line or message is ever built
  // past it.

  // A value as a log line shows it: strings as they are, other values as compact JSON (with
  // `[Circular]` for an object met again, `[Array]` or `[Object]` past MAX_DEPTH levels, and
  // errors as `Name: message` and their stack). Throws TOO_LONG once the text is sure to be
  // longer than `room` UTF-16 units: it counts a lower bound of the text as JSON.stringify
  // asks for each value, so a value whose text would be huge (the same long string many
  // times) stops early.
  function describe(v, room) {
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
      const name = StringCtor(v.name);
      const message = StringCtor(v.message);
      const stack = typeof v.stack === 'string' ? v.stack : '';
      if (name.length + message.length + stack.length > room) throw TOO_LONG;
      return name + ': ' + message + (stack ? '\n' + trimEnd(stack) : '');
    }
    // Each object written, with its depth (the holder of the root is in no map: depth 0).
    const depths = new MapCtor();
    let count = 0;
    const text = stringify(v, function (key, value) {
      const holderDepth = mapGet(depths, this);
      const depth = holderDepth === undefined ? 0 : holderDepth;
      const inObject = holderDepth !== undefined && !isArray(this);
      let out = value;
      switch (typeof value) {
        case 'bigint':
          out = StringCtor(value) + 'n';
          break;
        case 'function':
          out = value.name ? '[Function: ' + value.name + ']' : '[Function (anonymous)]';
          break;
        case 'symbol':
          out = value.toString();
          break;
        case 'object':
          if (value === null) break;
          if (mapHas(depths, value)) out = '[Circular]';
          else if (depth >= MAX_DEPTH) out = isArray(value) ? '[Array]' : '[Object]';
          else mapSet(depths, value, depth + 1);
          break;
        default:
          break;
      }
      // At least: a string's characters and quotes, one character for any other value (an
      // undefined one is left out of an object), an object's key with its quotes and colon.
      if (out !== undefined || !inObject) {
        count += (typeof out === 'string' ? out.length + 2 : 1) + (inObject ? key.length + 3 : 0);
        if (count > room) throw TOO_LONG;
      }
      return out;
    });
    return text === undefined ? StringCtor(v) : text;
  }

  // One log line from the values of a console call the host could not write itself (see
  // `hostLog` in the core).
  function log(values) {
    let line = '';
    try {
      for (let i = 0; i < values.length; i++) {
        const gap = i > 0 ? 1 : 0;
        const text = describe(values[i], S.outputLimit - line.length - gap);
        if (line.length + gap + text.length > S.outputLimit) throw TOO_LONG;
        if (gap) line += ' ';
        line += text;
      }
    } catch (error) {
      if (error !== TOO_LONG) throw error;
      // Longer than the whole output may be (a UTF-16 unit is at least one UTF-8 byte):
      // refused without building it.
      hostLine(null);
      return;
    }
    hostLine(isWellFormed(line) ? line : toWellFormed(line));
  }

  // --- binding on first use ---------------------------------------------------------------
  //
  // A run whose host has many tools (a scope of thousands, of which a program calls one or two)
  // binds each name the first time the program reads it, instead of all before the program
  // starts. `tools` is then a Proxy over an empty object without a prototype (`toolsTarget`),
  // and `bindings` fills as names are read. The program cannot tell the two apart: reading a
  // name, `in`, `callTool`, enumerating (`Object.keys`, `for ... in`, `JSON.stringify`) and
  // asking whether `tools` is frozen or extensible all answer as they do for the frozen object.
  // An enumeration, or a question about the object as a whole, binds every name first (in the
  // host's order, keys ordered as an object orders them) and freezes the target, so the
  // Proxy's invariants hold. The handler is private: no program can reach it or its traps.
  const toolsTarget = create(null);
  let allBound = false;
  let toolKeys = null;

  // The binding of `key` (a string), made now if the host has the tool, else undefined.
  function lookup(key) {
    if (hasOwn(bindings, key)) return bindings[key];
    if (!S.onFirstUse || allBound) return undefined;
    const index = hostBind(key);
    if (index < 0) return undefined;
    const fn = bind(key, index);
    defineProperty(bindings, key, { __proto__: null, value: fn, writable: false, enumerable: true, configurable: false });
    return fn;
  }

  // A member of `tools`: every binding but `then`.
  function member(key) {
    return typeof key === 'string' && key !== 'then' ? lookup(key) : undefined;
  }

  // The member `key` as an own property of the target (a non-configurable property must
  // exist on the target before the Proxy may report it).
  function onTarget(key, fn) {
    if (!hasOwn(toolsTarget, key)) {
      defineProperty(toolsTarget, key, { __proto__: null, value: fn, writable: false, enumerable: true, configurable: false });
    }
  }

  // Binds every name the host has, puts every member on the target, and freezes both. The
  // members are listed in the host's order (then any name bound earlier that the host has
  // dropped since), keys ordered as an object orders them.
  function bindAll() {
    if (allBound) return;
    const names = hostNames();
    const order = create(null);
    for (let i = 0; i < names.length; i++) {
      const name = names[i];
      if (lookup(name) !== undefined && name !== 'then') order[name] = true;
    }
    allBound = true;
    const bound = keysOf(bindings);
    for (let i = 0; i < bound.length; i++) {
      const name = bound[i];
      if (name === 'then') continue;
      onTarget(name, bindings[name]);
      order[name] = true;
    }
    freeze(bindings);
    freeze(toolsTarget);
    toolKeys = keysOf(order);
  }

  const lazyHandler = freeze({
    __proto__: null,
    get(target, key) {
      return member(key);
    },
    has(target, key) {
      return member(key) !== undefined;
    },
    getOwnPropertyDescriptor(target, key) {
      const fn = member(key);
      if (fn === undefined) return undefined;
      onTarget(key, fn);
      return { __proto__: null, value: fn, writable: false, enumerable: true, configurable: false };
    },
    ownKeys() {
      bindAll();
      return toolKeys;
    },
    isExtensible() {
      bindAll();
      return false;
    },
    preventExtensions() {
      bindAll();
      return true;
    },
    defineProperty() {
      return false;
    },
    set() {
      return false;
    },
    deleteProperty(target, key) {
      return member(key) === undefined;
    },
    setPrototypeOf(target, proto) {
      return proto === null;
    },
  });
  const lazyTools = new ProxyCtor(toolsTarget, lazyHandler);

  // The rejection `callTool` gives for a name no tool of the run has.
  function noSuchTool(key) {
    return promiseReject(
      new ToolCallError(key, 'no tool named ' + stringify(cutText(key)) + ' is bound in this run'),
    );
  }

  // --- unhandled rejections ---------------------------------------------------------------

  const unhandled = new MapCtor();
  function track(promise, reason, handled) {
    if (handled) mapDelete(unhandled, promise);
    else mapSet(unhandled, promise, reason);
  }

  // --- running ------------------------------------------------------------------------------

  // The first position in the program a stack trace names (all the host needs of a stack).
  // Bounded repeats: a function name the program chose (`program.ts:` and a million digits)
  // cannot make the pattern keep state per character.
  const programPosition = sealed(/program\.ts:\d{1,10}:\d{1,10}/);

  // The JSON text of {name, message, stack, toolName}, written without JSON.stringify on an
  // object (the program may have patched what that consults).
  function thrownText(name, message, stack, toolName) {
    return '{"name":' + stringify(toWellFormed(name)) + ',"message":' + stringify(toWellFormed(message)) +
      ',"stack":' + stringify(toWellFormed(stack)) + ',"toolName":' +
      (toolName === null ? 'null' : stringify(toWellFormed(toolName))) + '}';
  }

  // The parts of a thrown value's description, set by `readThrown`: the name and the tool's
  // name are cut to CUT_LIMIT characters, a thrown value that is not an Error is quoted cut
  // too, and the stack is reduced to the program's first position. The message of an Error
  // is the program's own text, whole (it counts against the output limit).
  let thrownName = 'Error';
  let thrownMessage = '';
  let thrownStack = '';
  let thrownTool = null;
  function readThrown(e) {
    thrownName = 'Error';
    thrownStack = '';
    thrownTool = null;
    try {
      if (e instanceof ErrorCtor) {
        thrownName = cutText(StringCtor(e.name));
        thrownMessage = StringCtor(e.message);
        const trace = e.stack;
        if (typeof trace === 'string') {
          const found = programPosition.exec(trace);
          if (found !== null) thrownStack = found[0];
        }
        if (e instanceof ToolCallError) thrownTool = cutText(StringCtor(e.toolName));
      } else {
        thrownName = 'Uncaught';
        thrownMessage = 'the program threw a non-Error value: ' + describeCut(e);
      }
    } catch (inner) {
      thrownName = 'Error';
      thrownMessage = 'the program threw a value that cannot be described';
      thrownStack = '';
      thrownTool = null;
    }
  }

  // A value's description cut to CUT_LIMIT characters, or a note when even describing it
  // would pass the output limit.
  function describeCut(v) {
    let text;
    try {
      text = describe(v, S.outputLimit);
    } catch (error) {
      if (error !== TOO_LONG) throw error;
      return 'a value whose description is longer than the output may be (max_output_bytes = ' + S.outputLimit + ' bytes)';
    }
    return cutText(text);
  }

  // The JSON description of a thrown value, message included (the host describes an
  // exception the engine raised outside the run with it).
  function errorText(e) {
    readThrown(e);
    return thrownText(thrownName, thrownMessage, thrownStack, thrownTool);
  }

  // Finish kinds (hostFinish(kind, text, message)): 0 = returned nothing, 1 = returned JSON
  // text, 2 = invalid result (text is the message), 3 = uncaught error and 5 = unhandled
  // rejection (text is the JSON of {name, stack, toolName}, message the error's message),
  // 4 = the result or the message would pass the output limit (refused before it was built).
  function finishThrown(e, kind) {
    readThrown(e);
    const message = thrownMessage;
    thrownMessage = '';
    // A UTF-16 unit is at least one UTF-8 byte: a longer message is over the limit for sure.
    if (message.length > S.outputLimit) {
      hostFinish(4, '', '');
      return;
    }
    hostFinish(kind, thrownText(thrownName, '', thrownStack, thrownTool),
      isWellFormed(message) ? message : toWellFormed(message));
  }

  // The message of an error thrown while converting a result (ours, or a getter's).
  function messageOf(error) {
    try {
      if (error instanceof ErrorCtor) {
        const message = StringCtor(error.message);
        return isWellFormed(message) ? message : toWellFormed(message);
      }
      return 'a getter threw a non-Error value: ' + toWellFormed(describeCut(error));
    } catch (inner) {
      return 'a getter threw a value that cannot be described';
    }
  }

  function finishWith(value) {
    if (value === undefined) {
      hostFinish(0, '', '');
      return;
    }
    let text;
    try {
      text = toJsonText(value, 'result', S.outputLimit, undefined);
    } catch (error) {
      if (error === OUTPUT_FULL) hostFinish(4, '', '');
      else {
        const message = messageOf(error);
        if (message.length > S.outputLimit) hostFinish(4, '', '');
        else hostFinish(2, message, '');
      }
      return;
    }
    hostFinish(1, text, '');
  }

  // A run its host may replay (one that can pause for approval) reads the same random numbers
  // and clock on replay: `Math.random` is a generator seeded by the host (sfc32), and
  // `Date.now()`, `new Date()` and `Date()` give back the readings of the run replayed first,
  // then the live clock; every reading goes to the host, which journals it. `run` calls this
  // before the program starts, so the built-ins read here are still the engine's own.
  function replayable(seedHigh, seedLow, clock) {
    const realNow = RealDate.now;
    const realParse = RealDate.parse;
    const realUTC = RealDate.UTC;
    const construct = G.Reflect.construct;
    const MathObject = G.Math;
    let a = seedHigh | 0;
    let b = seedLow | 0;
    let c = 0x9e3779b9 | 0;
    let d = (seedHigh ^ seedLow ^ 0x6d2b79f5) | 0;
    function random() {
      const t = (((a + b) | 0) + d) | 0;
      d = (d + 1) | 0;
      a = b ^ (b >>> 9);
      b = (c + (c << 3)) | 0;
      c = (c << 21) | (c >>> 11);
      c = (c + t) | 0;
      return (t >>> 0) / 4294967296;
    }
    for (let i = 0; i < 15; i++) random();
    let at = 0;
    function now() {
      const ms = at < clock.length ? clock[at++] : realNow();
      hostClock(ms);
      return ms;
    }
    function ReplayedDate(...args) {
      if (new.target === undefined) return new RealDate(now()).toString();
      if (args.length === 0) return construct(RealDate, [now()], new.target);
      return construct(RealDate, args, new.target);
    }
    ReplayedDate.prototype = RealDate.prototype;
    defineProperty(ReplayedDate, 'now', { __proto__: null, value: now, writable: true, configurable: true });
    defineProperty(ReplayedDate, 'parse', { __proto__: null, value: realParse, writable: true, configurable: true });
    defineProperty(ReplayedDate, 'UTC', { __proto__: null, value: realUTC, writable: true, configurable: true });
    defineProperty(RealDate.prototype, 'constructor', { __proto__: null, value: ReplayedDate, writable: true, configurable: true });
    defineProperty(G, 'Date', { __proto__: null, value: ReplayedDate, enumerable: false, writable: true, configurable: true });
    defineProperty(MathObject, 'random', { __proto__: null, value: random, enumerable: false, writable: true, configurable: true });
  }

  // Reports the first rejection nobody handled (kind 5), if there is one.
  function reportUnhandled() {
    let first;
    let found = false;
    mapForEach(unhandled, function (reason) {
      if (!found) {
        found = true;
        first = reason;
      }
    });
    if (found) finishThrown(first, 5);
  }

  return {
    __proto__: null, toJsonText, log, lookup, lazyTools, noSuchTool, track, reportUnhandled,
    errorText, finishThrown, finishWith, replayable,
  };
})

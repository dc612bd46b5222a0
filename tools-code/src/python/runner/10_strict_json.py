# --- strict JSON ---------------------------------------------------------------------------


def _path(label, frames, count, extra=None):
    """A path: the label, the key the first `count` open containers are at, then `extra`."""
    out = label
    for i in range(count + 1):
        if i < count:
            frame = frames[i]
            key = frame[1][frame[2] - 1][0] if frame[0] else frame[2] - 1
        elif extra is not None:
            key = extra
        else:
            break
        if _type(key) is int:
            out += "[%d]" % key
        else:
            out += "[%s]" % _quote(_cut(key))
    return out


# No bound on the size of a text (the rehearsal's own values are small).
NO_LIMIT = 1 << 62
# The pieces of text `to_json` collects before it joins them into one string and counts it.
_PIECES = 4096
# Strings and keys up to this many characters are counted with the small pieces (at most 6
# characters of JSON text each once quoted); longer ones are measured before they are quoted.
_SHORT = 64


class TooLarge(ValueError):
    """The JSON text of a value would pass a size limit; raised before the text is built."""


def _not_json(label, frames, what):
    path = _path(label, frames, _len(frames))
    raise TypeError("%s %s; only plain JSON values can cross to the host" % (path, what))


def _too_large(label, frames, at_least, limit_text):
    # Every open container still needs its closing bracket.
    raise TooLarge(
        "%s is at least %d bytes of JSON text, more than %s; it passed that at %s"
        % (label, at_least + _len(frames), limit_text, _path(label, frames, _len(frames)))
    )


def to_json(root, label, limit=NO_LIMIT, limit_text=None):
    """The strict JSON text of `root`, or TypeError naming the path. Iterative (no recursion).

    Only exact built-in types cross (a subclass of dict, list, str, int or float is refused, so
    its methods never run), containers are read through the built-in dict and list code, and the
    text is written here: no method of the program's values and nothing the program replaced
    in the json module or in builtins is consulted. No code of the program runs during it.

    The text is counted as it is written, in characters (each at least one UTF-8 byte): once it
    passes `limit` the conversion stops with TooLarge (a ValueError) naming `limit_text` and the
    path where it passed, so a value whose expansion is huge (a list that repeats a list that
    repeats a list) costs about `limit` characters of work, never more. A string or a key
    longer than _SHORT characters is measured before it is quoted; the small pieces (numbers,
    punctuation, short strings) are counted when they are joined, every _PIECES of them, which
    also keeps the pieces' own memory small. Nesting
    deeper than MAX_DEPTH is a TypeError, like any other value that is not plain JSON."""
    # Joined text so far, its length, and the pieces since; `strings` is the length of the
    # strings and keys among those pieces (a lower bound of their length).
    chunks = []
    done = 0
    out = []
    append = out.append
    strings = 0
    # Open containers: [is_dict, items, index, n, container].
    frames = []
    value = root

    while True:
        if _len(out) >= _PIECES:
            text = "".join(out)
            out.clear()
            chunks.append(text)
            done += _len(text)
            strings = 0
            if done > limit:
                _too_large(label, frames, done, limit_text)
        kind = _type(value)
        if value is None:
            append("null")
        elif kind is bool:
            append("true" if value else "false")
        elif kind is int:
            if value < INT_MIN or value > INT_MAX:
                _not_json(label, frames, "is an integer too large for lossless JSON")
            append(_int_repr(value))
        elif kind is float:
            if value != value:
                _not_json(label, frames, "is NaN")
            if _isinf(value):
                _not_json(label, frames, "is infinite")
            if value == 0.0 and _copysign(1.0, value) < 0:
                _not_json(label, frames, "is -0.0")
            append(_float_repr(value))
        elif kind is str:
            if not _isascii(value):
                _check_str(value, label, frames, "is a string with an unpaired surrogate")
            if _len(value) <= _SHORT:
                append(_quote(value))
            else:
                # Quoting only adds characters: measure before building the quoted copy.
                if done + strings + _len(value) + 2 > limit:
                    at_least = done + _sum(_map(_len, out)) + _len(value) + 2
                    _too_large(label, frames, at_least, limit_text)
                text = _quote(value)
                append(text)
                strings += _len(text)
        elif kind is list or kind is tuple or kind is dict:
            if _len(frames) >= MAX_DEPTH:
                _not_json(label, frames, "nests deeper than %d levels" % MAX_DEPTH)
            for frame in frames:
                if frame[4] is value:
                    _not_json(label, frames, "is a cycle (it contains itself)")
            if kind is dict:
                items = [*_dict_items(value)]
                for k, _ in items:
                    if _type(k) is not str:
                        _not_json(label, frames, "has a key that is not a string (a %s)" % _cut(_type_name(_type(k))))
                    if not _isascii(k):
                        _check_str(k, label, frames, "has a key with an unpaired surrogate")
                    if _len(k) > _SHORT:
                        if done + strings + _len(k) + 3 > limit:
                            at_least = done + _sum(_map(_len, out)) + _len(k) + 3
                            _too_large(label, frames, at_least, limit_text)
                if items:
                    append("{")
                    frames.append([True, items, 0, _len(items), value])
                else:
                    append("{}")
            else:
                if value:
                    append("[")
                    frames.append([False, value, 0, _len(value), value])
                else:
                    append("[]")
        else:
            _not_json(label, frames, "is a %s, not a JSON value" % _cut(_type_name(kind)))
        # The next value to write, closing the containers that are done.
        while True:
            if not frames:
                chunks.append("".join(out))
                text = "".join(chunks)
                if _len(text) > limit:
                    _too_large(label, frames, _len(text), limit_text)
                return text
            frame = frames[-1]
            i = frame[2]
            if i == frame[3]:
                append("}" if frame[0] else "]")
                frames.pop()
                continue
            if i > 0:
                append(",")
            frame[2] = i + 1
            if frame[0]:
                k, value = frame[1][i]
                text = _quote(k)
                append(text)
                append(":")
                if _len(k) > _SHORT:
                    strings += _len(text)
            else:
                value = frame[1][i]
            break


def _check_str(s, label, frames, what):
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        _not_json(label, frames, what)



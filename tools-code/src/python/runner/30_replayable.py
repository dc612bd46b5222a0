# --- a replayable run ----------------------------------------------------------------------
#
# A run its host may replay (one that can pause for approval; the host's
# `CodeHost::determinism`) reads the same random numbers and wall clock when it runs again
# from the start: the `random` module's generator is seeded by the host, and the wall-clock
# readings give back those of the run replayed first, in order, then the live clock. Every
# reading, replayed or live, goes to the host, which journals it: pending readings travel in a
# `clock` frame written just before the next frame of any kind (so before the call that may
# pause the run), or on their own once _READINGS_PER_FRAME of them wait. A reading is whole
# microseconds, sent as milliseconds since the epoch: a float that any parse within one unit
# in the last place gives back the same microseconds, and every value the program sees
# (`time.time()`, `time.time_ns()`, a `datetime`) is computed from those microseconds in
# both runs alike. The system's random source is replayed the same way: `os.urandom` and
# `os.getrandom` (and with them `random.SystemRandom`, `secrets`, `uuid.uuid4`, and the seed
# of a generator made or seeded again without a seed, which the `random` module's C code would
# draw from the system itself) give back the draws of the run replayed first, in order, each
# to a request of its own size, then draw live; every draw goes to the host in `entropy`
# frames written just before the next frame of any kind, or on their own once
# _DRAWN_PER_FRAME bytes or _READINGS_PER_FRAME draws wait. Not replayed (the module doc of
# `python/mod.rs` says why): the monotonic clocks.

# The real clock, bound before any program runs.
_time_ns = time.time_ns
_localtime = time.localtime
_gmtime = time.gmtime
_ctime = time.ctime
_asctime = time.asctime
_strftime = time.strftime
_round = round
_isinstance = isinstance
_issubclass = issubclass
# The most readings one `clock` frame carries: a program that reads the clock in a loop sends
# them as it goes, in frames far below the frame limit.
_READINGS_PER_FRAME = 1024
# The most bytes drawn one `entropy` frame carries (128 KiB of hexadecimal text, within the
# frame limit's slack whatever the run's limits).
_DRAWN_PER_FRAME = 64 * 1024
# The real random source, bound before any program runs.
_urandom = os.urandom
_getrandom = getattr(os, "getrandom", None)
_hex = bytes.hex
_memoryview = memoryview
_memoryview_hex = memoryview.hex
_fromhex = bytes.fromhex
_from_bytes = int.from_bytes
_index = operator.index


def _replayable(channel, seed, clock, entropy):
    """Makes this run replayable, before its program starts: seeds the `random` module's
    generator with `seed`, and replaces `time.time`, `time.time_ns`, `time.localtime`,
    `time.gmtime`, `time.ctime`, `time.asctime`, `time.strftime` (those that read the clock when
    given no time) and `datetime.datetime` (a subclass whose `now` and `utcnow` read that clock;
    `date.today` and `datetime.today` call `time.time` themselves) with functions that answer
    from `clock` (milliseconds since the epoch) first, then from the live clock, and report
    every reading on `channel`; replaces the system's random source (`_replayable_entropy`)
    the same way with the draws of `entropy`. Both modules are preloaded in the zygote."""
    import datetime as datetime_module
    import random

    random.seed(int(seed))
    given = [float(ms) for ms in clock]
    count = _len(given)
    lock = channel.lock
    pending = channel.readings = []
    at = [0]
    _replayable_entropy(channel, random, entropy)

    def micros():
        """The next reading, in whole microseconds since the epoch."""
        with lock:
            i = at[0]
            if i < count:
                at[0] = i + 1
                ms = given[i]
                us = _round(ms * 1000)
            else:
                us = _time_ns() // 1000
                ms = us / 1000
            pending.append(ms)
            if _len(pending) >= _READINGS_PER_FRAME:
                channel.sendall(channel.readings_frame())
        return us

    def seconds(secs=None):
        return micros() / 1_000_000 if secs is None else secs

    def time_():
        return micros() / 1_000_000

    def time_ns():
        return micros() * 1000

    def localtime(secs=None, /):
        return _localtime(seconds(secs))

    def gmtime(secs=None, /):
        return _gmtime(seconds(secs))

    def ctime(secs=None, /):
        return _ctime(seconds(secs))

    def asctime(t=None, /):
        return _asctime(_localtime(seconds()) if t is None else t)

    def strftime(format, t=None, /):
        return _strftime(format, _localtime(seconds()) if t is None else t)

    for name, replacement in (
        ("time", time_),
        ("time_ns", time_ns),
        ("localtime", localtime),
        ("gmtime", gmtime),
        ("ctime", ctime),
        ("asctime", asctime),
        ("strftime", strftime),
    ):
        replacement.__name__ = replacement.__qualname__ = name
        replacement.__module__ = "time"
        replacement.__doc__ = getattr(time, name).__doc__
        setattr(time, name, replacement)

    real = datetime_module.datetime
    utc = datetime_module.timezone.utc

    class Real(type):
        """`isinstance` and `issubclass` against the replacement answer as against the real
        class: a `datetime` made elsewhere (by a module that bound the class before) is still a
        `datetime.datetime`. A subclass the program makes answers as usual."""

        def __instancecheck__(cls, value):
            if cls is replaced:
                return _isinstance(value, real)
            return type.__instancecheck__(cls, value)

        def __subclasscheck__(cls, sub):
            if cls is replaced:
                return _issubclass(sub, real)
            return type.__subclasscheck__(cls, sub)

    class replaced(real, metaclass=Real):
        __slots__ = ()

        @classmethod
        def now(cls, tz=None):
            us = micros()
            return cls.fromtimestamp(us // 1_000_000, tz).replace(microsecond=us % 1_000_000)

        @classmethod
        def utcnow(cls):
            us = micros()
            moment = cls.fromtimestamp(us // 1_000_000, utc)
            return moment.replace(microsecond=us % 1_000_000, tzinfo=None)

        def __repr__(self):
            # The real class's text names a subclass by its bare name.
            text = real.__repr__(self)
            return "datetime." + text if _type(self) is replaced else text

    replaced.__name__ = replaced.__qualname__ = "datetime"
    replaced.__module__ = "datetime"
    replaced.__doc__ = real.__doc__
    datetime_module.datetime = replaced


def _replayable_entropy(channel, random, entropy):
    """Replaces `os.urandom` and `os.getrandom` (and the `random` module's own binding of
    `os.urandom`, which `SystemRandom` and through it `secrets` draw from) with functions that
    give back the draws of `entropy` (hexadecimal texts) in order, each to a request of its own
    size, then draw live, and report every draw on `channel`. A request of another size than
    the next draw's ends the replay of draws: it and every later one draw live (a request the
    live source refuses, a negative size or one past memory, raises as it did and ends
    nothing). `random.Random.seed` given no seed (so a `Random()` made without one, which
    `tempfile` makes for its names, and `random.seed()`) seeds from 32 bytes of the replaced
    `os.urandom` instead of the system source the C code would read itself."""
    given = [_fromhex(text) for text in entropy]
    count = _len(given)
    lock = channel.lock
    pending = channel.draws = []
    at = [0]

    def draw(size, live, flags):
        size = _index(size)
        if size < 0:
            raise ValueError("negative argument not allowed")
        with lock:
            i = at[0]
            data = given[i] if i < count else None
            if data is not None and _len(data) == size:
                given[i] = None
                at[0] = i + 1
            else:
                data = live(size) if flags is None else live(size, flags)
                at[0] = count
            pending.append(data)
            channel.drawn += _len(data)
            if channel.drawn >= _DRAWN_PER_FRAME or _len(pending) >= _READINGS_PER_FRAME:
                channel.send_draws()
        return data

    def urandom(size, /):
        return draw(size, _urandom, None)

    replacements = [("urandom", urandom)]
    if _getrandom is not None:

        def getrandom(size, flags=0):
            return draw(size, _getrandom, flags)

        replacements.append(("getrandom", getrandom))
    for name, replacement in replacements:
        replacement.__name__ = replacement.__qualname__ = name
        replacement.__module__ = os.__name__
        replacement.__doc__ = getattr(os, name).__doc__
        setattr(os, name, replacement)
    random._urandom = urandom

    real_seed = random.Random.seed

    def seed(self, a=None, version=2):
        if a is None:
            a = _from_bytes(urandom(32), "big")
        real_seed(self, a, version)

    seed.__name__ = real_seed.__name__
    seed.__qualname__ = real_seed.__qualname__
    seed.__module__ = real_seed.__module__
    seed.__doc__ = real_seed.__doc__
    random.Random.seed = seed
    # The module's `seed` is the method of its generator bound when the module was imported.
    random.seed = random._inst.seed



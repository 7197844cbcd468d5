"""Kernels written in Python (sdk/README.md, "Write it in Python"): the ``tl`` a kernel gets, and its runs.

    @kbsim.kernel("py-scale", "z = x * factor")
    def scale(tl, x, z, rows, cols, factor):
        pe = tl.program_id(0)
        ...

A kernel runs as a greenlet on the simulation's thread (never on the PE's own stack): each ``tl`` call hands the
PE a TlCall and waits until the PE has made it, exactly as the C++ call of the same name does (same commands, same
simulated times). Values of compute results are pending in the timing pass, as in C++; ``--verify-data`` computes
them in the data pass.
"""

try:
    import greenlet as _greenlet
except ImportError:  # start_kernel says what to install
    _greenlet = None

from . import _kbsim

_C = _kbsim.TlCall if hasattr(_kbsim, "TlCall") else None  # only inside a kbsim process


def _issue(call):
    """Hand ``call`` to the PE and wait until it is made; returns it done."""
    return _greenlet.getcurrent().parent.switch(call)


def _c(t):
    if isinstance(t, Tensor):
        return t._c
    raise TypeError("a tl call takes a kernel Tensor (from tl.load, tl.dot, ...), not {}".format(type(t).__name__))


def _shape(shape):
    return [int(d) for d in (shape if isinstance(shape, (tuple, list)) else (shape,))]


class Tensor:
    """A tensor as a kernel sees it: ``shape``, ``dtype``, ``addr``, ``space``, ``pending`` (a compute result,
    whose values exist only in the data pass), ``item(i)``; ``+ - * /`` issue math commands."""

    __slots__ = ("_c",)

    def __init__(self, c):
        self._c = c

    shape = property(lambda self: self._c.shape)
    dtype = property(lambda self: self._c.dtype)
    addr = property(lambda self: self._c.addr)
    space = property(lambda self: self._c.space)
    pending = property(lambda self: self._c.pending)
    pinned = property(lambda self: self._c.pinned)
    nbytes = property(lambda self: self._c.nbytes)

    def item(self, i):
        return self._c.item(int(i))

    def __add__(self, other):
        return _math("add", [self, other])

    def __sub__(self, other):
        return _math("sub", [self, other])

    def __mul__(self, other):
        return _math("mul", [self, other])

    def __truediv__(self, other):
        return _math("div", [self, other])

    def __repr__(self):
        return "tl.Tensor(shape={}, dtype={}, space={}{})".format(self.shape, self.dtype, self.space,
                                                                 ", pending" if self.pending else "")


def _tensor(call):
    return Tensor(_issue(call).tensor)


def _math(op, inputs, axis=-1):
    return _tensor(_C.math(op, [_c(t) for t in inputs], int(axis)))


class Tl:
    """The kernel API: the same calls, with the same arguments, as the C++ ``tl::Program`` (kbsim/tl/tl.hpp)."""

    def program_id(self, axis):
        return _issue(_C.program_id(int(axis))).value

    def num_programs(self, axis):
        return _issue(_C.num_programs(int(axis))).value

    def load(self, ptr, shape, dtype="f16", row_stride=None):
        """DMA_READ of ``shape`` at ``ptr``; with ``row_stride`` (elements from one row's start to the next, at
        least the columns), a 2-D DMA of a (rows, cols) block of a wider matrix, packed in TCM."""
        return _tensor(_C.load(int(ptr), _shape(shape), dtype, int(row_stride or 0)))

    def ref(self, ptr, shape, dtype="f16"):
        return _tensor(_C.ref(int(ptr), _shape(shape), dtype))

    def store(self, ptr, value, row_stride=None):
        """DMA_WRITE of ``value`` to ``ptr``; with ``row_stride``, its rows that many elements apart (2-D DMA)."""
        _issue(_C.store(int(ptr), _c(value), int(row_stride or 0)))

    def dot(self, a, b):
        return _tensor(_C.dot(_c(a), _c(b)))

    def math(self, op, *inputs, axis=-1):
        return _math(op, inputs, axis)

    def composite(self, a, b=None, out_ptr=0, out_dtype="f16", op="gemm", math_op="exp", epilogue=(), tiles=()):
        """A tiled composite: op "gemm" (out = a x b, ``epilogue`` as (op, scope, factor, operand) tuples) or
        "math" (out = math_op(a)); returns its handle for :meth:`wait`."""
        if op == "gemm":
            ep = [(e[0], e[1] if len(e) > 1 else "output_tile", float(e[2]) if len(e) > 2 else 1.0,
                   _c(e[3]) if len(e) > 3 and e[3] is not None else None) for e in epilogue]
            return _Handle(_issue(_C.composite_gemm(_c(a), _c(b), int(out_ptr), out_dtype, ep,
                                                    [int(t) for t in tiles])).handle)
        if op == "math":
            return _Handle(_issue(_C.composite_math(math_op, _c(a), int(out_ptr), out_dtype)).handle)
        raise ValueError("a composite's op is gemm or math, not {!r}".format(op))

    def send(self, dir, src, shape=None, dtype="f16", space="tcm"):
        """Send a tensor, or (``src`` an address, with ``shape``) raw memory, to the peer in direction ``dir``."""
        if isinstance(src, Tensor):
            _issue(_C.send(str(dir), src._c))
        else:
            _issue(_C.send_raw(str(dir), int(src), _shape(shape), dtype, space))

    def recv(self, dir, shape, dtype="f16", dst_addr=None, dst_space="hbm"):
        if dst_addr is None:
            return _tensor(_C.recv(str(dir), _shape(shape), dtype))
        return _tensor(_C.recv_to(str(dir), _shape(shape), dtype, int(dst_addr), dst_space))

    def recv_async(self, dir, shape, dtype="f16"):
        return _Future(_issue(_C.recv_async(str(dir), _shape(shape), dtype)).future)

    def wait(self, what=None):
        """Wait for a recv_async's future (returns what it received), a composite's handle, or (no argument) every
        outstanding composite."""
        if what is None:
            _issue(_C.wait_all())
        elif isinstance(what, _Future):
            return _tensor(_C.wait_future(what.id))
        elif isinstance(what, _Handle):
            _issue(_C.wait_handle(what.id))
        else:
            raise TypeError("tl.wait takes a recv_async future or a composite handle, not {}".format(
                type(what).__name__))
        return None

    def recv_no_consume(self, dir, shape, dtype="f16"):
        _issue(_C.recv_no_consume(str(dir), _shape(shape), dtype))

    def phase(self, name):
        _issue(_C.phase(str(name)))

    def cycles(self, n):
        _issue(_C.cycles(int(n)))

    def full(self, shape, value, dtype="f16"):
        return _tensor(_C.full(_shape(shape), float(value), dtype))

    def zeros(self, shape, dtype="f16"):
        return self.full(shape, 0.0, dtype)

    def arange(self, start, end, dtype="i32"):
        return _tensor(_C.arange(int(start), int(end), dtype))

    def trans(self, x):
        return _tensor(_C.trans(_c(x)))

    def free(self, *tensors):
        """Give the TCM scratch of compute results or constants back to this kernel run (no command); they must not
        be used afterwards."""
        for t in tensors:
            _issue(_C.free(_c(t)))

    def reshape(self, x, shape):
        """The same elements, row-major, under another shape (no command)."""
        return _tensor(_C.reshape(_c(x), _shape(shape)))

    @staticmethod
    def cdiv(a, b):
        return -(-int(a) // int(b))


# Elementwise math and reductions by name, as the C++ conveniences: tl.exp(x), tl.add(a, b), tl.sum(x, axis=1), ...
def _named(op, reduction):
    if reduction:
        def call(self, x, axis=-1):
            return _math(op, [x], axis)
    else:
        def call(self, *inputs):
            return _math(op, inputs)
    call.__name__ = op
    return call


for _op in ("exp", "log", "sqrt", "abs", "sigmoid", "cos", "sin", "relu", "add", "sub", "mul", "div", "maximum",
            "minimum", "fma", "clamp", "where"):
    setattr(Tl, _op, _named(_op, False))
for _op in ("softmax", "sum", "max", "min"):
    setattr(Tl, _op, _named(_op, True))


class _Handle:
    __slots__ = ("id",)

    def __init__(self, id):
        self.id = id


class _Future:
    __slots__ = ("id",)

    def __init__(self, id):
        self.id = id


class _KernelRun:
    """One PE's run of a Python kernel: its greenlet, stepped by the PE (python_kernel.cpp)."""

    def __init__(self, fn, args, describe):
        if _greenlet is None:
            raise ImportError("Python kernels run as greenlets: install python3-greenlet (scripts/setup.sh does)")
        self.greenlet = _greenlet.greenlet(lambda: fn(Tl(), *args))
        self.describe = describe

    def step(self, done):
        """Run the kernel until its next tl call (returned) or its end (None); ``done`` is the call just made. What
        the kernel raises comes out as one line naming its file, line and function."""
        try:
            call = self.greenlet.switch(done) if done is not None else self.greenlet.switch()
        except BaseException as e:  # noqa: the PE reports it
            raise KernelError(self.describe(e)) from None
        return None if self.greenlet.dead else call


    def fail(self, message):
        """The call just made was a misuse of the API: raise it in the kernel, where it was made."""
        try:
            call = self.greenlet.throw(TlError(message))
        except BaseException as e:  # noqa: the PE reports it
            raise KernelError(self.describe(e)) from None
        return None if self.greenlet.dead else call


class TlError(Exception):
    """A misuse of the kernel API a tl call made (a bad shape, a wrong argument), raised where it was made. (Reading
    a pending value with ``item`` raises RuntimeError there and then.)"""


class KernelError(Exception):
    """What a Python kernel raised, as one line."""

"""Plugins written in Python (sdk/README.md, "Write it in Python").

A ``.py`` file in a plugin directory (``kbsim run --plugins DIR``) is a plugin: kbsim's builtin plugin
``python_plugins`` runs it in an interpreter embedded in the kbsim process, and registers what it declares::

    import kbsim

    @kbsim.bench("py-hello", "says hello from a Python bench",
                 params=[kbsim.Param("n", 4, "how many tensors")])
    def hello(ctx):
        x = ctx.runtime.zeros((64, 64))
        ctx.metrics["elements"] = ctx.params["n"] * x.numel

A bench's function runs on a thread of its own, and every call it makes into the simulation runs on the bench's
thread, as a kbsim.Session's calls do (kbsim/_session.py): the same calls give the same simulated times as a C++
bench's. Files whose name starts with ``_`` are not plugins (a plugin's helpers: import them from its files).
"""

import os
import sys
import threading
import traceback
import importlib.util
import inspect

from . import _kbsim
from ._blocks import Block, _Component, make as _make_block
from ._errors import _BY_CODE, Error
from ._session import _CLOSE, Distributed, Runtime, Session

_TYPES = {bool: "bool", int: "int", float: "float", str: "string"}


class Param:
    """A declared parameter: its name, default, help line, and type (from the default unless given: bool, int,
    float or str). ``kbsim run --param NAME=VALUE`` sets it; the value is checked as a C++ bench's."""

    def __init__(self, name, default, help="", type=None):
        self.name = str(name)
        self.type = type if type is not None else builtins_type(default)
        if self.type not in _TYPES:
            raise TypeError("parameter {!r}: a bool, int, float or str, not {}".format(name, self.type))
        self.default = self.type(default)
        self.help = str(help)

    def __repr__(self):
        return "Param({!r}, {!r})".format(self.name, self.default)


def builtins_type(value):
    return bool if isinstance(value, bool) else type(value)


class _Bench:
    def __init__(self, name, summary, params, fn):
        self.name, self.summary, self.params, self.fn = name, summary, list(params), fn
        self.file = os.path.realpath(fn.__code__.co_filename)


class _Kernel:
    def __init__(self, name, summary, fn):
        self.name, self.summary, self.fn = name, summary, fn
        self.file = os.path.realpath(fn.__code__.co_filename)


class _Algorithm:
    def __init__(self, name, summary, params, sip_topologies, buffer_kinds, cls):
        self.name, self.summary, self.params, self.cls = name, summary, list(params), cls
        self.sip_topologies, self.buffer_kinds = [str(t) for t in sip_topologies], [str(k) for k in buffer_kinds]
        self.file = _file_of(cls)


def _file_of(cls):
    file = getattr(sys.modules.get(cls.__module__), "__file__", None)
    return os.path.realpath(file) if file else "<{}>".format(cls.__module__)


_declared = []    # what the file being loaded declares (or, imported from a script, every declaration)
_benches = {}     # (file, name) -> _Bench, for the files kbsim loaded
_kernels = {}     # (file, name) -> _Kernel
_algorithms = {}  # (file, name) -> _Algorithm
_components = {}  # (file, type) -> kbsim._blocks._Component


def _check_params(what, name, params):
    for p in params:
        if not isinstance(p, Param):
            raise TypeError("{} {!r}: params are kbsim.Param, not {}".format(what, name, type(p).__name__))


def bench(name, summary="", params=()):
    """Declare a bench: a function of its :class:`BenchContext`, run on the configured system (``--topology``,
    ``--set``). name: as ``kbsim run --bench NAME`` takes it. params: :class:`Param` s."""
    _check_params("bench", name, params)

    def declare(fn):
        _declared.append(_Bench(str(name), str(summary), params, fn))
        return fn
    return declare


def kernel(name, summary=""):
    """Declare a kernel: a function ``fn(tl, *args)`` of the kernel API (kbsim/_kernels.py: ``tl.load``,
    ``tl.dot``, ``tl.composite``, ``tl.send``, ...) and the launch's arguments (a tensor's ``ptr``, ``shape``,
    ``dtype``; ints; floats), launched by name as a C++ kernel is (``runtime.launch(name, ...)``)."""
    def declare(fn):
        _declared.append(_Kernel(str(name), str(summary), fn))
        return fn
    return declare


def algorithm(name, summary="", params=(), sip_topologies=(), buffer_kinds=()):
    """Declare a CCL algorithm: a class with ``wiring(setup)`` and ``launch(collective)`` (and, if it needs one,
    ``min_slot_size(collective)``), made once per process group (kbsim/_ccl.py). name: as ``ccl.yaml`` and
    ``--set ccl.algorithm=NAME`` take it. params: its own :class:`Param` s, beside the shared ones (``ccl.yaml``'s
    ``algorithms: {NAME: {...}}``). sip_topologies, buffer_kinds: what it supports (empty: any)."""
    _check_params("algorithm", name, params)

    def declare(cls):
        if not isinstance(cls, type) or not callable(getattr(cls, "wiring", None)) or \
                not callable(getattr(cls, "launch", None)):
            raise TypeError("algorithm {!r}: declare a class with wiring(setup) and launch(collective)".format(name))
        _declared.append(_Algorithm(str(name), str(summary), params, sip_topologies, buffer_kinds, cls))
        return cls
    return declare


def component(type, summary="", params=(), ports=(), stats=()):
    """Declare a hardware block: a class derived from :class:`kbsim.Block` (kbsim/_blocks.py). type: its component
    type (a components file maps an implementation name to it, with the file as its library). params:
    :class:`Param` s, checked as a C++ component's; ports: :class:`kbsim.Port` s; stats: :class:`kbsim.Stat` s."""
    _check_params("component", type, params)

    def declare(cls):
        if not inspect.isclass(cls) or not issubclass(cls, Block):
            raise TypeError("component {!r}: declare a class derived from kbsim.Block".format(type))
        decl = _Component(str(type), str(summary), params, ports, stats, cls)
        decl.file = _file_of(cls)
        _declared.append(decl)
        return cls
    return declare



class PluginFileError(Exception):
    """A plugin file that cannot be loaded: its one-line message names the file, line and column."""


def _where(error, file=None):
    """``file:line in function`` of the innermost frame of ``file`` in the traceback (else the innermost one)."""
    frames = traceback.extract_tb(error.__traceback__)
    inside = [f for f in frames if file is not None and os.path.realpath(f.filename) == file]
    f = (inside or frames or [None])[-1]
    return "{}:{} in {}".format(f.filename, f.lineno, f.name) if f is not None else (file or "?")


def _one_line(error):
    text = " ".join(str(error).split())
    return "{}: {}".format(type(error).__name__, text) if text else type(error).__name__


def load_file(path):
    """Run a plugin file and return what it declares, as (kind, name, summary, params) tuples with params as (name,
    type, default, help). Raises PluginFileError with file:line:column."""
    path = os.path.realpath(path)
    name = "kbsim_plugin_" + "".join(c if c.isalnum() else "_" for c in os.path.basename(path)[:-3])
    folder = os.path.dirname(path)
    if folder not in sys.path:
        sys.path.append(folder)  # its helpers (_name.py) import as plain modules (the standard library's first)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # as an import does while the module runs (dataclasses, pickling look it up)
    start = len(_declared)
    try:
        spec.loader.exec_module(module)
    except SyntaxError as e:
        del sys.modules[name]
        raise PluginFileError("{}:{}:{}: {}: {}".format(e.filename or path, e.lineno, e.offset,
                                                        type(e).__name__, e.msg)) from None
    except BaseException as e:
        del sys.modules[name]
        raise PluginFileError("{}: {}".format(_where(e, path), _one_line(e))) from None
    finally:
        found = _declared[start:]
        del _declared[start:]
    out = []
    for b in found:
        if b.file != path:
            continue  # declared by a module this one imports (another plugin file is loaded as itself)
        params = _param_listing(getattr(b, "params", ()))
        if isinstance(b, _Kernel):
            _kernels[(path, b.name)] = b
            out.append(("kernel", b.name, b.summary, [], ()))
        elif isinstance(b, _Component):
            _components[(path, b.name)] = b
            out.append(_component_listing(b))
        elif isinstance(b, _Algorithm):
            _algorithms[(path, b.name)] = b
            out.append(("algorithm", b.name, b.summary, params, (b.sip_topologies, b.buffer_kinds)))
        else:
            _benches[(path, b.name)] = b
            out.append(("bench", b.name, b.summary, params, ()))
    return out


def _param_listing(params):
    return [(p.name, _TYPES[p.type], p.default, p.help) for p in params]


def _component_listing(b):
    return ("component", b.name, b.summary, _param_listing(b.params),
            ([tuple(p) for p in b.ports], [tuple(s) for s in b.stats]))


def declared_component(cls):
    """The declaration of block class ``cls`` (kbsim.testing.Harness.block): its file and its listing."""
    for b in reversed(_declared):
        if isinstance(b, _Component) and b.cls is cls:
            _components[(b.file, b.name)] = b
            return b.file, _component_listing(b)
    raise TypeError("{} is not a block declared with @kbsim.component".format(getattr(cls, "__name__", cls)))


def fault(error, file):
    """What a Python error raised in a plugin's code says to kbsim: (one line naming ``file.py:line in function``,
    the exit code of the kbsim error it is, or 0 for any other: the plugin's fault)."""
    from ._ccl import _BadReturn
    if isinstance(error, _BadReturn):
        return str(error), 0
    text = str(error) if isinstance(error, Error) else _one_line(error)
    code = error.exit_code if isinstance(error, Error) else 0
    if text.startswith("t="):  # a block's fail(): the time and the node come first, as a C++ component's do
        return "{} ({})".format(text, _where(error, file)), code
    return "{}: {}".format(_where(error, file), text), code


def make_block(file, type, core):
    """A new block of component ``type`` of ``file``, for its component ``core``."""
    return _make_block(_components[(file, type)], core)


def make_algorithm(file, name):
    """A new object of algorithm ``name`` of ``file``, as the distributed runtime calls it."""
    from ._ccl import _Instance
    return _Instance(_algorithms[(file, name)])


def start_kernel(file, name, args):
    """One PE's run of kernel ``name`` of ``file`` with the launch's ``args`` (stepped by the PE)."""
    from ._kernels import _KernelRun
    k = _kernels[(file, name)]
    return _KernelRun(k.fn, args, lambda e: "{}: {}".format(_where(e, k.file), _one_line(e)))


class BenchContext:
    """What a Python bench is given: ``params`` (dict), ``flags`` (the run's flags, e.g. ``verify-data``),
    ``runtime`` and ``dist`` (the configured system's host and distributed runtimes, as a kbsim.Session's),
    ``metrics`` (a dict of scalars, dicts and lists: the run's results.json ``metrics``, taken when the function
    ends, however it ends: an interrupted run keeps what it had), :meth:`note`,
    :meth:`write_file`, :meth:`run_bench` and :meth:`run_points`."""

    def __init__(self, driver, params, flags):
        self._d = driver
        self.params = dict(params)
        self.flags = dict(flags)
        self.verify_data = bool(self.flags.get("verify-data", False))
        self.metrics = {}
        self.runtime = driver.runtime
        self.dist = driver.dist

    def stat(self, node, name):
        """A statistic of a node of the configured system, as ``(count, value)``."""
        v = self._d._submit(_kbsim.Call.stat(str(node), str(name))).values
        return int(v[0]), float(v[1])

    def param(self, node, name):
        """A numeric parameter of a node of the configured system, as it was built (the topology's value, else
        its component's default): e.g. ``ctx.param("sip0.cube0.pe0.pe_gemm", "macs_per_cycle")``."""
        return self._d._submit(_kbsim.Call.param(str(node), str(name))).values[0]

    def route_bw(self, src, dst):
        """The bandwidth (GB/s) of the narrowest link on the route the system gives a message from node ``src`` to
        node ``dst`` (0: no link on it is limited)."""
        return self._d._submit(_kbsim.Call.route_bw(str(src), str(dst))).values[0]

    def link_bytes(self, kind):
        """Bytes carried so far by every link of ``kind`` (a topology's link kind, e.g. ``"pcie"``), both ways."""
        return self._d._submit(_kbsim.Call.link_bytes(str(kind))).values[0]

    def system_attr(self, name):
        """A numeric attribute the system's topology published (``kbsim probe`` lists them, e.g.
        ``"ahbm.hbm_channels_per_pe"``), or None when it published none of that name."""
        v = self._d._submit(_kbsim.Call.system_attr(str(name))).values
        return v[0] if v else None

    def note(self, line):
        """A line of the run's printed summary."""
        self._d._submit(_kbsim.Call.note(str(line)))

    def write_file(self, name, content):
        """A file of the run's output folder (str or bytes), written with results.json when the run succeeds."""
        self._d._submit(_kbsim.Call.write_file(str(name), content))

    def run_bench(self, name, params=None, set=None):
        """Run another bench on this run's topology (with ``set`` overrides after the run's) and return its
        metrics; its failure ends this bench."""
        call = self._d._submit(_kbsim.Call.run_bench(str(name), _words(params), _words(set)))
        return call.points[0][2]

    def run_points(self, points):
        """Run independent points in parallel as the run was told (``-j N``, mpirun), as :func:`kbsim.sweep` takes
        them: ``(bench, params, set)`` tuples or dicts; returns, in order, each one's metrics, or a
        :class:`kbsim.PointError` for a point that failed."""
        from ._sweep import PointError, _point
        given = [_point(p) for p in points]
        calls = [(bench, _words(params), _words(overrides)) for bench, params, overrides in given]
        out = []
        for (ok, error, metrics), p in zip(self._d._submit(_kbsim.Call.run_points(calls)).points, given):
            out.append(metrics if ok else PointError(error, *p))
        return out


def _words(values):
    return ["{}={}".format(k, _text(v)) for k, v in dict(values or {}).items()]


def _text(v):
    return ("true" if v else "false") if isinstance(v, bool) else str(v)


class _Driver(Session):
    """A Session's machinery over the channel of a Python bench's run (no run of its own to start or close)."""

    def __init__(self, channel):  # noqa: super().__init__ would start a run
        self._c = channel
        self._closed = False
        self._result = None
        self._ranks = {}
        self._cancelled = set()
        self.metrics = {}
        self.verify_data = False
        self.runtime = Runtime(self)
        self.dist = Distributed(self)

    def _ended(self, ev):
        self._closed = True
        raise _BY_CODE.get(ev.code, Error)(ev.message or "the run ended with exit code {}".format(ev.code), ev.code)

    def _abandon(self):
        self._closed = True


class _Run:
    """A Python bench's run: its thread, and its context (whose metrics the bench's thread takes at the end)."""

    def __init__(self, b, params, flags, channel):
        self.bench, self.params, self.flags, self.channel = b, params, flags, channel
        self.context = None
        self.thread = threading.Thread(target=self._main, name="kbsim bench " + b.name, daemon=True)

    @property
    def metrics(self):
        return self.context.metrics if self.context is not None else {}

    def join(self):
        self.thread.join()
        sys.stdout.flush()
        sys.stderr.flush()

    def _main(self):
        channel = self.channel
        try:
            channel.start()
        except Error:
            return  # the run ended before the bench started: it says why
        try:
            driver = _Driver(channel)
            self.context = BenchContext(driver, self.params, self.flags)
            driver.verify_data = self.context.verify_data
            self.bench.fn(self.context)
            channel.order(_CLOSE, _kbsim.DRIVER)
        except BaseException as e:  # noqa: the bench's thread reports it
            if not channel.ended:  # (else the run's own error ended it, and says so)
                # A kbsim error the bench raises itself (kbsim.BenchError: it failed its checks) keeps its exit code.
                text = str(e) if isinstance(e, Error) else _one_line(e)
                channel.abandon("{}: {}".format(_where(e, self.bench.file), text),
                                e.exit_code if isinstance(e, Error) else 0)
        finally:
            if not channel.ended:  # whatever happened, the bench's thread is told this one is done
                channel.abandon("the bench's Python thread ended without closing its run", 0)


def start_bench(file, name, params, flags, channel):
    """Run bench ``name`` of ``file`` on a thread of its own, driving ``channel``; returns its :class:`_Run`."""
    run = _Run(_benches[(file, name)], params, flags, channel)
    run.thread.start()
    return run

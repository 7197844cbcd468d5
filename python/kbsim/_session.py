"""kbsim.Session: a configured system kept open, driven from Python through its host runtime and its distributed
runtime (docs/python.md, "A live system").

    with kbsim.Session() as s:
        x = s.runtime.tensor(np.ones((64, 64), np.float16), kbsim.Placement(pe="row", num_pes=4))
        s.runtime.launch("my-kernel", x, 64, 64).wait()
        y = x.numpy()

Every call runs on the session's own thread, in the simulation, while Python waits (the interpreter's lock released);
``spawn`` runs a Python function per rank as a greenlet, each rank's calls on that rank's worker of the distributed
runtime, so a worker that waits yields to the others exactly as the C++ runtime's workers do.
"""

import atexit
import os
import tempfile
import weakref

import numpy as np

from . import _kbsim
from ._errors import _BY_CODE, Error, InterruptedRun, UsageError
from ._run import command_args, read_result

try:
    import greenlet as _greenlet
except ImportError:  # spawn says what to install
    _greenlet = None

# The session's events and orders (python/src/session.hpp).
_DONE, _START, _CANCELLED, _ENDED = _kbsim.EVENT_DONE, _kbsim.EVENT_START, _kbsim.EVENT_CANCELLED, _kbsim.EVENT_ENDED
_CALL, _RETURN, _RAISE, _ACK, _CLOSE = (_kbsim.ORDER_CALL, _kbsim.ORDER_RETURN, _kbsim.ORDER_RAISE, _kbsim.ORDER_ACK,
                                        _kbsim.ORDER_CLOSE)
_open_sessions = weakref.WeakSet()  # closed at exit, so a session left open does not hold the process

_DTYPES = {"float16": "f16", "float32": "f32", "float64": "f64", "int8": "i8", "uint8": "u8", "int16": "i16",
           "int32": "i32", "int64": "i64"}
_NUMPY = {v: np.dtype(k) for k, v in _DTYPES.items()}
_new_set = set  # Session's keyword argument `set` (as kbsim.run's) hides the builtin there


class Placement:
    """Where a tensor's shards go (the C++ runtime's DPPolicy): split over the cubes (``cube``), then over the PEs of
    each cube (``pe``), each ``"replicate"``, ``"row"``, ``"column"``, ``"tiled_row_major"`` or
    ``"tiled_column_major"``; ``num_pes`` PEs per cube and ``num_cubes`` cubes used (0 = all); ``space`` ``"hbm"``
    (each shard in its PE's HBM slice) or ``"tcm"`` (in its PE's TCM)."""

    def __init__(self, cube="replicate", pe="replicate", num_pes=1, num_cubes=1, space="hbm"):
        self.cube, self.pe, self.num_pes, self.num_cubes, self.space = cube, pe, num_pes, num_cubes, space
        self._c = _kbsim.Placement(cube, pe, int(num_pes), int(num_cubes), space)

    def __repr__(self):
        return "Placement(cube={!r}, pe={!r}, num_pes={}, num_cubes={}, space={!r})".format(
            self.cube, self.pe, self.num_pes, self.num_cubes, self.space)


def _placement(p):
    if p is None:
        return Placement()._c
    if isinstance(p, Placement):
        return p._c
    if isinstance(p, dict):
        return Placement(**p)._c
    raise TypeError("placement must be a kbsim.Placement or a dict of its arguments, not {}".format(type(p).__name__))


class Tensor:
    """A tensor on the session's device: ``name``, ``shape``, ``dtype`` (kbsim's: ``"f16"``, ``"f32"``, ...),
    ``nbytes``, ``placement``, ``shards`` (where each piece is: sip, cube, pe, addresses), ``freed``."""

    def __init__(self, runtime, c):
        self._rt, self._c = runtime, c

    name = property(lambda self: self._c.name)
    shape = property(lambda self: self._c.shape)
    dtype = property(lambda self: self._c.dtype)
    nbytes = property(lambda self: self._c.nbytes)
    placement = property(lambda self: self._c.placement)
    shards = property(lambda self: self._c.shards)
    freed = property(lambda self: self._c.freed)

    def numpy(self):
        """Its values, read back from the device (:meth:`Runtime.read`)."""
        return self._rt.read(self)

    def free(self):
        self._rt.free(self)

    def __repr__(self):
        return "<kbsim.Tensor {!r} {} {}{}>".format(self.name, self.shape, self.dtype, " freed" if self.freed else "")


class LaunchResult(dict):
    """A finished launch, as a dict: kernel, ok, error, t_submit_ns, t_done_ns, pe_exec_ns, dma_ns, compute_ns
    (maxima over the PEs) and pes (one dict per PE: sip, cube, pe, start_ns, end_ns, ..., phases)."""

    @property
    def elapsed_ns(self):
        return self["t_done_ns"] - self["t_submit_ns"]


class Launch:
    """A submitted launch: :meth:`wait` runs the simulation until it has finished and returns its LaunchResult."""

    def __init__(self, runtime, handle, kernel):
        self._rt, self.handle, self.kernel = runtime, handle, kernel

    def wait(self):
        return self._rt.wait(self)

    def __repr__(self):
        return "<kbsim.Launch {} of {!r}>".format(self.handle, self.kernel)


class Runtime:
    """The host runtime of a session's system (the C++ rt::Runtime): tensors, data, launches, the device."""

    def __init__(self, session):
        self._s = session

    def _tensor(self, call):
        return Tensor(self, self._s._submit(call).tensor)

    # --- tensors ---
    def tensor(self, array, placement=None, dtype=None, name=""):
        """A tensor holding ``array``'s values (a numpy array or anything np.asarray takes), placed as ``placement``
        says. Its dtype is the array's (float16, float32, float64, int8, uint8, int16, int32, int64) unless
        ``dtype`` names another kbsim dtype (e.g. ``"bf16"``), to which the values are converted."""
        a = np.ascontiguousarray(array)
        _placeable(a.shape)
        own = _DTYPES.get(a.dtype.name)
        if dtype is None:
            if own is None:
                raise TypeError("a tensor cannot hold numpy {} values (float16, float32, float64, int8, uint8, int16, "
                                "int32, int64; or give dtype=)".format(a.dtype.name))
            dtype = own
        if dtype in _NUMPY and a.dtype.kind in "fiub":
            data = a.astype(_NUMPY[dtype], copy=False)
            return self._tensor(_kbsim.Call.from_bytes(list(a.shape), dtype, data.tobytes(), _placement(placement),
                                                       name))
        if a.dtype.kind not in "fiub":
            raise TypeError("a tensor holds numbers, not numpy {} values".format(a.dtype.name))
        return self._tensor(_kbsim.Call.from_values(list(a.shape), dtype, a.astype(np.float64).ravel(),
                                                    _placement(placement), name))

    def empty(self, shape, dtype="f16", placement=None, name=""):
        """A tensor of ``shape`` and kbsim ``dtype``, its memory mapped but not written."""
        return self._tensor(_kbsim.Call.empty(_placeable(shape), dtype, _placement(placement), name, False))

    def zeros(self, shape, dtype="f16", placement=None, name=""):
        """:meth:`empty`, then zeros written to every shard."""
        return self._tensor(_kbsim.Call.empty(_placeable(shape), dtype, _placement(placement), name, True))

    def free(self, t):
        self._s._submit(_kbsim.Call.free(_c(t)))

    # --- data ---
    def read(self, t):
        """``t``'s values as a numpy array of its shape (bf16 as float32), once the launches on its SIP are done."""
        c = _c(t)
        if c.dtype in _NUMPY:
            raw = self._s._submit(_kbsim.Call.read(c)).bytes
            return np.frombuffer(raw, dtype=_NUMPY[c.dtype]).reshape(c.shape).copy()
        return self._s._submit(_kbsim.Call.read_values(c)).values.astype(np.float32).reshape(c.shape)

    def write(self, t, array):
        """Write ``array`` (``t``'s shape; converted to its dtype) over the whole tensor; the transfer's timing."""
        c = _c(t)
        a = np.asarray(array)
        if tuple(a.shape) != tuple(c.shape):
            raise ValueError("tensor {!r} is {}, the array {}".format(c.name, tuple(c.shape), tuple(a.shape)))
        if c.dtype not in _NUMPY:
            raise TypeError("write to a {} tensor: use write_slice or a tensor of a numpy dtype".format(c.dtype))
        data = np.ascontiguousarray(a).astype(_NUMPY[c.dtype], copy=False).tobytes()
        return self._s._submit(_kbsim.Call.write(c, data)).transfer

    def copy(self, dst, src):
        """Copy ``src`` into ``dst`` (same shape and dtype, any placements); the transfer's timing."""
        return self._s._submit(_kbsim.Call.copy(_c(dst), _c(src))).transfer

    def read_slice(self, t, row, col, rows, cols):
        """The (rows, cols) region at (row, col) of ``t``'s 2-D view, as a float64 array (one shard's only)."""
        v = self._s._submit(_kbsim.Call.read_slice(_c(t), row, col, rows, cols)).values
        return v.reshape(rows, cols)

    def write_slice(self, t, row, col, values):
        """Write a 2-D array (or one number, for a 1 x 1 region) at (row, col) of ``t``'s 2-D view."""
        a = np.atleast_2d(np.asarray(values, dtype=np.float64))
        return self._s._submit(_kbsim.Call.write_slice(_c(t), row, col, a.shape[0], a.shape[1],
                                                       a.ravel().tolist())).transfer

    def summary(self, t):
        """A printable summary: name, shape, dtype, placement and the values (read back)."""
        return self._s._submit(_kbsim.Call.summary(_c(t))).text

    # --- kernels ---
    def launch(self, kernel, *args, sip=None, grid_pes=0, grid_cubes=0, auto_dim_remap=True,
               failure_policy="fail_fast"):
        """Submit a launch of the registered kernel ``kernel`` (``kbsim list kernels``) with ``args`` (tensors,
        ints, floats); returns a :class:`Launch` to wait for. sip: the SIP (default: the current device); grid_pes,
        grid_cubes: the PEs per cube and cubes it runs on (0: the largest placement among its tensors);
        auto_dim_remap: an int equal to a split global dim becomes the local one; failure_policy: ``"fail_fast"`` or
        ``"collect_all"``."""
        if not isinstance(kernel, str):
            raise TypeError("kernel must be a str (a kernel name), not {}".format(type(kernel).__name__))
        c = _kbsim.Call.launch(kernel, [_arg(a) for a in args], -1 if sip is None else int(sip), int(grid_pes),
                               int(grid_cubes), bool(auto_dim_remap), failure_policy)
        return Launch(self, self._s._submit(c).handle, kernel)

    def wait(self, launch):
        """Run the simulation until ``launch`` has finished; its :class:`LaunchResult` (a failed kernel ends the
        session with kbsim.SimulationError)."""
        if not isinstance(launch, Launch):
            raise TypeError("wait takes the Launch that launch() returned, not {}".format(type(launch).__name__))
        return LaunchResult(self._s._submit(_kbsim.Call.wait(launch.handle)).launch_result)

    def wait_all(self):
        self._s._submit(_kbsim.Call.wait_all())

    # --- the device ---
    def set_device(self, sip):
        """The SIP this caller's (the session's, or a spawn worker's) tensors and launches go to."""
        self._s._submit(_kbsim.Call.set_device(int(sip)))

    def _device(self):
        return self._s._submit(_kbsim.Call.device()).device_state

    @property
    def device(self):
        return self._device()["device"]

    @property
    def cubes_per_sip(self):
        return self._device()["cubes_per_sip"]

    @property
    def pes_per_cube(self):
        return self._device()["pes_per_cube"]

    @property
    def now_ps(self):
        """The simulated time so far, in ps (kbsim's tick): an int, so differences are exact."""
        return self._device()["now_ps"]

    @property
    def now_ns(self):
        """The simulated time so far, in ns (``now_ps / 1000``)."""
        return self.now_ps / 1000.0


class Distributed:
    """The distributed runtime of a session's system (the C++ rt::Distributed), after torch.distributed: rank = SIP."""

    def __init__(self, session):
        self._s = session

    def init_process_group(self, backend="ahbm", fit_n_elem=0):
        """Start the default process group with the session's CCL configuration (ccl.yaml, ``set={"ccl.…": …}``).
        ``fit_n_elem``: raise the configured IPCQ slot size to what the algorithm needs to all_reduce shards of that
        many f16 elements (as ccl-allreduce's fit_slot does), saying so in the run's notes."""
        self._s._submit(_kbsim.Call.init_process_group(backend, int(fit_n_elem)))

    def _group(self):
        return self._s._submit(_kbsim.Call.process_group()).group_state

    def is_initialized(self):
        return self._group()["initialized"]

    def get_rank(self):
        """The calling worker's rank (0 outside spawn)."""
        return self._group()["rank"]

    def get_world_size(self):
        g = self._group()
        if not g["initialized"]:
            raise RuntimeError("get_world_size before init_process_group")
        return g["world_size"]

    def all_reduce(self, t, op="sum"):
        """Sum ``t`` over the ranks, in place (each rank passes its own tensor)."""
        self._s._submit(_kbsim.Call.all_reduce(_c(t), op))

    def barrier(self):
        """Wait until every live worker has reached the barrier (no simulated time)."""
        self._s._submit(_kbsim.Call.barrier())

    def collectives(self):
        """Every all_reduce completed so far: dicts of algorithm, kernel, n_elem and ranks (a LaunchResult each)."""
        out = self._s._submit(_kbsim.Call.collectives()).collective_results
        for c in out:
            c["ranks"] = [LaunchResult(r) for r in c["ranks"]]
        return out

    def spawn(self, fn, nprocs):
        """Run ``fn(rank)`` for ranks 0..nprocs-1, each a greenlet whose calls run on that rank's worker, until all
        return. A worker that raises ends the others and the session; its exception is raised here."""
        return self._s._spawn(fn, nprocs)


def _placeable(shape):
    """The runtime places rank-1 and rank-2 tensors (its placements cut rows and columns): checked before the call."""
    dims = list(shape)
    if not 1 <= len(dims) <= 2:
        raise ValueError("a tensor is 1-D or 2-D (placements split rows and columns), not {}-D".format(len(dims)))
    return dims


def _c(t):
    if isinstance(t, Tensor):
        return t._c
    raise TypeError("expected a kbsim.Tensor, not {}".format(type(t).__name__))


def _arg(a):
    if isinstance(a, Tensor):
        return a._c
    if isinstance(a, (bool, np.bool_)):
        return int(a)
    if isinstance(a, (int, np.integer)):
        return int(a)
    if isinstance(a, (float, np.floating)):
        return float(a)
    raise TypeError("a kernel argument is a kbsim.Tensor, an int or a float, not {}".format(type(a).__name__))


class Session:
    """A configured system kept open (``kbsim run`` of the host bench python-session), driven from Python.

    topology, set, plugins, verify_data, trace, op_log, flags: as for :func:`kbsim.run`. out: where results.json goes
    when the session closes (default: a temporary folder that lives as long as the Result). ``runtime`` is its host
    runtime, ``dist`` its distributed runtime, ``verify_data`` whether the data pass runs (without it, tensors read back
hold no computed values); ``metrics`` (a dict) goes into its results.json.
    :meth:`close` (or leaving a ``with`` block) ends the run and returns its :class:`kbsim.Result`.

    A kbsim error inside a call ends the session (as it would end a bench) and is raised; wrong Python input raises
    TypeError or ValueError and leaves the session open. One session (or run) at a time per process.
    """

    def __init__(self, topology=None, set=None, plugins=(), verify_data=False, trace=None, op_log=None, out=None,
                 flags=None):
        self._keep = tempfile.TemporaryDirectory(prefix="kbsim-session-") if out is None else None
        self._out = self._keep.name if self._keep is not None else os.fspath(out)
        args = command_args(topology, plugins, set, verify_data, trace, op_log, flags) + ["--out", self._out]
        self.verify_data = bool(verify_data)
        self._c = _kbsim.Session(args)
        _open_sessions.add(self)
        self._closed = False
        self._result = None
        self._ranks = {}  # greenlet -> rank, while a spawn runs
        self._cancelled = _new_set()
        self.metrics = {}
        self.runtime = Runtime(self)
        self.dist = Distributed(self)

    @property
    def now_ns(self):
        return self.runtime.now_ns

    def close(self):
        """End the run: results.json (and the observers' files) are written; returns its :class:`kbsim.Result`."""
        if self._closed or self._c.ended:  # (ended under a signal handler's exception: nothing more to close)
            self._closed = True
            return self._result
        if self._ranks:
            raise RuntimeError("close() inside a spawn worker")
        if self.metrics:
            self._submit(_kbsim.Call.metrics({str(k): v for k, v in self.metrics.items()}))
        ev = self._c.order(_CLOSE, _kbsim.DRIVER)
        return self._ended(ev)

    def __enter__(self):
        return self

    def __exit__(self, kind, value, tb):
        if self._closed:
            return False
        if kind is None:
            self.close()
        else:
            self._abandon()
        return False

    def __del__(self):
        if not getattr(self, "_closed", True):
            self._abandon()

    def _abandon(self):
        """End the run without raising (an exception left the with block; the interpreter exits)."""
        self._closed = True
        try:
            ev = self._c.order(_CLOSE, _kbsim.DRIVER)
            if ev.kind == _ENDED and ev.code == 0:
                self._result = read_result(self._out, self._keep)
        except Error:
            pass

    def _ended(self, ev):
        """The session's run ended: its Result, or its error raised."""
        self._closed = True
        if ev.code in (0, InterruptedRun.exit_code) and os.path.exists(os.path.join(self._out, "results.json")):
            self._result = read_result(self._out, self._keep)
        if ev.code == 0:
            return self._result
        if ev.code == InterruptedRun.exit_code:
            message = "the session was interrupted at sim time {} ns; the results so far are in {}".format(
                self._result.sim_time_ns if self._result else "?", self._out)
        else:
            message = ev.message or "the session ended with exit code {}".format(ev.code)
        e = _BY_CODE.get(ev.code, Error)(message, ev.code)
        e.result = self._result
        raise e

    # --- handing calls over ---
    def _submit(self, call):
        """Run ``call`` for the caller (the driver, or the spawn worker whose greenlet this is); returns it done."""
        if self._closed:
            raise UsageError("this kbsim.Session has ended")
        if self._ranks and _greenlet is not None:
            g = _greenlet.getcurrent()
            rank = self._ranks.get(g)
            if rank is not None:
                if rank in self._cancelled:
                    raise _greenlet.GreenletExit()
                g.parent.switch(call)  # the scheduler runs it on the rank's worker and switches back when done
                return call
            raise RuntimeError("a kbsim call from outside the spawn workers while they run")
        ev = self._c.order(_CALL, _kbsim.DRIVER, call)
        if ev.kind == _ENDED:
            self._ended(ev)
        if ev.kind != _DONE or ev.executor != _kbsim.DRIVER:
            raise Error("kbsim.Session: unexpected event {} of worker {}".format(ev.kind, ev.executor), 1)
        return call

    def _spawn(self, fn, nprocs):
        if _greenlet is None:
            raise ImportError("spawn runs its workers as greenlets: install python3-greenlet (scripts/setup.sh does)")
        if not callable(fn):
            raise TypeError("spawn takes a function of the rank, not {}".format(type(fn).__name__))
        if self._ranks:
            raise RuntimeError("spawn: workers cannot spawn workers")
        if self._closed:
            raise UsageError("this kbsim.Session has ended")
        nprocs = int(nprocs)
        if nprocs < 1:
            raise ValueError("spawn: nprocs must be at least 1")
        workers = {}
        failure = None
        try:
            ev = self._c.order(_CALL, _kbsim.DRIVER, _kbsim.Call.spawn(nprocs))
            while True:
                if ev.kind == _ENDED:
                    self._cancelled.update(workers)
                    self._kill(workers)
                    if isinstance(failure, KeyboardInterrupt) and ev.code == InterruptedRun.exit_code:
                        failure = None  # Ctrl-C in a worker's Python code: the run was interrupted, and says so
                    if failure is not None:
                        self._closed = True
                        if hasattr(failure, "add_note"):
                            failure.add_note("in kbsim spawn worker {} (the session has ended)".format(failure._rank))
                        raise failure
                    self._ended(ev)
                if ev.kind == _DONE and ev.executor == _kbsim.DRIVER:
                    return None
                r = ev.executor
                if ev.kind == _CANCELLED:
                    self._cancelled.add(r)
                    self._kill({r: workers[r]})
                    ev = self._c.order(_ACK, r)
                    continue
                if ev.kind == _START:
                    g = _greenlet.greenlet(lambda r=r: fn(r))
                    workers[r] = g
                    self._ranks[g] = r
                g = workers[r]
                try:
                    call = g.switch()
                except BaseException as e:  # the worker's function raised: the spawn ends, the session with it
                    e._rank = r
                    failure = e
                    ev = self._c.order(_RAISE, r, None, "{}: {}".format(type(e).__name__, e))
                    continue
                if g.dead:
                    ev = self._c.order(_RETURN, r)
                elif isinstance(call, _kbsim.Call):
                    ev = self._c.order(_CALL, r, call)
                else:
                    raise RuntimeError("a spawn worker switched out of its greenlet with {!r}".format(call))
        except BaseException as e:
            ended = self._unwind(e, workers)
            if isinstance(e, KeyboardInterrupt) and not isinstance(e, InterruptedRun) and ended is not None:
                self._ended(ended)  # the run was interrupted: InterruptedRun, with the results so far
            raise
        finally:
            self._ranks.clear()
            self._cancelled.clear()

    def _unwind(self, error, workers):
        """Python leaves a spawn part way (Ctrl-C, an error outside the workers): end it on the session's side too,
        answering what it waits for until the run has ended."""
        message = "{}: {}".format(type(error).__name__, error)
        ended = None
        ev = None if self._closed else self._c.unanswered()
        while ev is not None and ev.executor != _kbsim.DRIVER:  # a worker waits (the driver's turn: nothing to undo)
            if ev.kind == _CANCELLED:
                ev = self._c.order(_ACK, ev.executor)
            else:
                ev = self._c.order(_RAISE, ev.executor, None, message)
            if ev.kind == _ENDED:
                self._closed = True
                ended = ev
                break
        self._cancelled.update(workers)
        self._kill(workers)
        return ended

    @staticmethod
    def _kill(workers):
        """End the workers' greenlets (each was marked cancelled: a kbsim call in its cleanup raises at once)."""
        for g in workers.values():
            for _ in range(100):
                if g.dead:
                    break
                try:
                    g.throw(_greenlet.GreenletExit)
                except _greenlet.GreenletExit:
                    pass


@atexit.register
def _close_open_sessions():
    for s in list(_open_sessions):
        if not s._closed:
            s._abandon()

"""CCL algorithms written in Python (sdk/README.md, "Write it in Python").

An algorithm is a class declared with :func:`kbsim.algorithm`: ``wiring(setup)`` says which PE sends to which in
which direction, ``launch(collective)`` which kernel every rank's all_reduce runs, on which grid, with which
arguments after the runtime's four (tensor, rank, world size, n_elem)::

    @kbsim.algorithm("py_ring_allreduce", "a ring through pe0 of every cube")
    class Ring:
        def wiring(self, setup):
            ring = [kbsim.Pe(r, c, 0) for r in range(setup.world_size) for c in range(setup.system.cubes)]
            return [kbsim.Wire(a, "next", b) for a, b in zip(ring, ring[1:] + ring[:1])]

        def launch(self, c):
            return kbsim.Launch("py-ring-allreduce", grid_cubes=c.cube_w * c.cube_h,
                                args=[c.setup.params["slot_size"]])

The distributed runtime calls it as it calls a C++ ``ccl::Algorithm`` (the same queues, the same launches), so the
same algorithm gives the same simulated times in either language.
"""

import collections
import numbers

from . import _kbsim

Pe = collections.namedtuple("Pe", "sip cube pe")
Pe.__doc__ = "A PE: SIP (= rank), cube of the SIP, PE of the cube."
Wire = collections.namedtuple("Wire", "src dir dst")
Wire.__doc__ = ("A queue: PE ``src`` sends in direction ``dir`` (a name its kernel uses) to PE ``dst``; the "
                "receiving side's direction is found by the reverse-direction rule (docs/model.md).")
Launch = collections.namedtuple("Launch", "kernel grid_cubes grid_pes args", defaults=(1, 1, ()))
Launch.__doc__ = ("What one rank's all_reduce launches: a registered kernel, on cubes 0..grid_cubes-1 x PEs "
                  "0..grid_pes-1 of the rank's SIP, with ``args`` (ints and floats) after the runtime's four.")


class SystemShape:
    """The system a collective runs on: ``sips``, ``sip_w``, ``sip_h``, ``topology`` (ring_1d, torus_2d,
    mesh_2d_no_wrap), ``cube_w``, ``cube_h``, ``pes_per_cube``, ``cubes``."""

    def __init__(self, sips, sip_w, sip_h, topology, cube_w, cube_h, pes_per_cube):
        self.sips, self.sip_w, self.sip_h, self.topology = sips, sip_w, sip_h, topology
        self.cube_w, self.cube_h, self.pes_per_cube = cube_w, cube_h, pes_per_cube

    @property
    def cubes(self):
        return self.cube_w * self.cube_h

    def sip_neighbors(self, world, rank):
        """``rank``'s SIP neighbours by the SIP topology: {"global_E": rank, "global_W", "global_S", "global_N"}
        (ranks row-major on the SIP grid; torus_2d wraps, mesh_2d_no_wrap does not)."""
        return _kbsim.sip_neighbors(self.topology, self.sip_w, self.sip_h, world, rank)

    def __repr__(self):
        return "SystemShape({} SIPs {}x{} {}, cubes {}x{}, {} PEs per cube)".format(
            self.sips, self.sip_w, self.sip_h, self.topology, self.cube_w, self.cube_h, self.pes_per_cube)


class Setup:
    """What the runtime asks for when it installs the queues: ``system`` (a :class:`SystemShape`),
    ``world_size`` (ranks: SIPs 0..world_size-1) and ``params`` (the algorithm's ccl.yaml parameters, its own and
    the shared ones, by name)."""

    def __init__(self, system, world_size, params):
        self.system, self.world_size, self.params = system, world_size, params


class Collective:
    """One all_reduce on one rank: ``setup``, ``rank``, ``n_elem`` (elements per shard), ``dtype``, and the cube grid
    ``cube_w`` x ``cube_h`` the tensor's shards cover (one shard per cube's pe0; a tensor on one cube: 1 x 1)."""

    def __init__(self, setup, rank, n_elem, dtype, cube_w, cube_h):
        self.setup, self.rank, self.n_elem, self.dtype, self.cube_w, self.cube_h = (setup, rank, n_elem, dtype,
                                                                                   cube_w, cube_h)


class _BadReturn(Exception):
    """A method of the algorithm returned something the runtime cannot use (the message says all)."""


class _Instance:
    """One algorithm object, as the runtime calls it (python_plugins' PythonAlgorithm): plain values in and out."""

    def __init__(self, decl):
        self.decl = decl
        self.obj = decl.cls()
        self.setup = None

    def _setup(self, shape, world, params):
        return Setup(SystemShape(*shape), world, dict(params))

    def _bad(self, method, what, got):
        return _BadReturn("{}: {}.{} returned {}; it must return {}".format(
            self.decl.file, self.decl.cls.__name__, method, _short(got), what))

    def wiring(self, shape, world, params):
        got = self.obj.wiring(self._setup(shape, world, params))
        what = "a list of kbsim.Wire(src, dir, dst), src and dst as kbsim.Pe(sip, cube, pe)"
        out = []
        try:
            for w in got:
                src, d, dst = w
                if not isinstance(d, str):
                    raise TypeError
                out.append((*_pe(src), d, *_pe(dst)))
        except (TypeError, ValueError):
            raise self._bad("wiring", what, got) from None
        return out

    def _collective(self, shape, world, params, rank, n_elem, dtype, cube_w, cube_h):
        return Collective(self._setup(shape, world, params), rank, n_elem, dtype, cube_w, cube_h)

    def launch(self, *collective):
        got = self.obj.launch(self._collective(*collective))
        try:
            kernel, grid_cubes, grid_pes, args = Launch(*got) if isinstance(got, tuple) else (None, 0, 0, ())
            if not isinstance(kernel, str) or not _count(grid_cubes) or not _count(grid_pes):
                raise TypeError
            args = [a if isinstance(a, float) else _int(a) for a in args]
        except (TypeError, ValueError):
            raise self._bad("launch", "a kbsim.Launch(kernel, grid_cubes, grid_pes, args) with ints and floats "
                            "as args", got) from None
        return kernel, int(grid_cubes), int(grid_pes), args

    def min_slot_size(self, *collective):
        if not hasattr(self.obj, "min_slot_size"):
            return 0
        got = self.obj.min_slot_size(self._collective(*collective))
        if not isinstance(got, numbers.Integral) or isinstance(got, bool) or got < 0:
            raise self._bad("min_slot_size", "a number of bytes (an int >= 0)", got)
        return int(got)


def _short(v):
    text = repr(v)
    return text if len(text) <= 80 else text[:77] + "..."


def _int(v, lo=-2 ** 63, hi=2 ** 63 - 1):
    if isinstance(v, bool) or not isinstance(v, numbers.Integral) or not lo <= v <= hi:
        raise TypeError
    return int(v)


def _count(v):
    return isinstance(v, numbers.Integral) and not isinstance(v, bool) and 1 <= v < 2 ** 32


def _pe(v):
    sip, cube, pe = v
    return tuple(_int(x, 0, 2 ** 32 - 1) for x in (sip, cube, pe))

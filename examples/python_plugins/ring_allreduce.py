"""py_ring_allreduce: the C++ CCL algorithm ring_allreduce and its kernel written in Python, a plugin file
(sdk/README.md, "Write it in Python").

    kbsim run --bench ccl-allreduce --plugins examples/python_plugins --set ccl.algorithm=py_ring_allreduce \\
        --param n_elem=4096 --verify-data

A reduce-scatter then an all-gather over R members, pe0 of every cube of every rank, on a ring: a serpentine through
each SIP's cube mesh, SIP after SIP. The shard of n elements is cut into R chunks (chunk c covers elements
[c*n/R, (c+1)*n/R)), sent in pieces of at most one slot; every receive is posted before the step's sends, so up to
n_slots pieces are in flight per direction. The queues, the calls and so the simulated times and the values are the
C++ algorithm's (the tests check it); change the ring's order or the pieces and run again.
"""

import kbsim


def serpentine(cube, w):
    """A cube's place in the serpentine order of its SIP's cube mesh (rows alternate direction)."""
    x, y = cube % w, cube // w
    return y * w + (w - 1 - x if y % 2 else x)


def cube_at(pos, w):
    """The cube at place ``pos`` of the serpentine."""
    y, k = pos // w, pos % w
    return y * w + (w - 1 - k if y % 2 else k)


@kbsim.algorithm("py_ring_allreduce",
                 "ring_allreduce in Python: reduce-scatter + all-gather on a ring through pe0 of every cube "
                 "(serpentine per SIP, SIP after SIP); chunks pipelined over the slots")
class Ring:
    def wiring(self, setup):
        s = setup.system
        ring = [kbsim.Pe(r, cube_at(k, s.cube_w), 0) for r in range(setup.world_size) for k in range(s.cubes)]
        if len(ring) < 2:
            return []
        wires = []
        for i, pe in enumerate(ring):
            wires.append(kbsim.Wire(pe, "next", ring[(i + 1) % len(ring)]))
            wires.append(kbsim.Wire(pe, "prev", ring[i - 1]))
        return wires

    def launch(self, c):
        if c.cube_w * c.cube_h != c.setup.system.cubes:
            raise kbsim.BenchError("py_ring_allreduce: the tensor must have a shard on every cube's pe0 (the "
                                   "wiring covers every cube)")
        return kbsim.Launch("py-ring-allreduce", grid_cubes=c.cube_w * c.cube_h, grid_pes=1,
                            args=[c.cube_w, c.cube_h, c.setup.params["slot_size"]])


@kbsim.kernel("py-ring-allreduce",
              "py_ring_allreduce's kernel: (tensor, rank, world, n_elem, cube_w, cube_h, slot_size)")
def ring_kernel(tl, t, rank, world, n, cube_w, cube_h, slot_size):
    if tl.program_id(0) != 0:
        return
    cube = tl.program_id(1)
    shard = t.shard(cube, 0)
    if shard is None:
        raise ValueError("the tensor has no shard on cube {} pe0".format(cube))
    size = kbsim.dtype_size(t.dtype)
    slot = max(1, slot_size // size)
    R = world * cube_w * cube_h
    me = rank * cube_w * cube_h + serpentine(cube, cube_w)
    if R < 2:
        return

    def pieces(chunk):
        chunk %= R
        lo, hi = n * chunk // R, n * (chunk + 1) // R
        return [(at, min(slot, hi - at)) for at in range(lo, hi, slot)]

    def load(p):
        return tl.load(shard["ptr"] + p[0] * size, [p[1]], t.dtype)

    def store(p, v):
        tl.store(shard["ptr"] + p[0] * size, v)

    def post(ps):
        return [tl.recv_async("prev", [p[1]], t.dtype) for p in ps]

    # Reduce-scatter: at step s, send chunk me-s (own values at s = 0), receive chunk me-s-1 and add own.
    tl.phase("reduce_scatter")
    out = [load(p) for p in pieces(me)]
    for s in range(R - 1):
        incoming = pieces(me - s - 1)
        futures = post(incoming)
        for v in out:
            tl.send("next", v)
        out = []
        for p, f in zip(incoming, futures):
            got = tl.wait(f)  # the piece's arrival, then own values (ring_allreduce's order)
            out.append(load(p) + got)
    # out = chunk me+1, fully reduced. All-gather: pass the reduced chunks around.
    tl.phase("all_gather")
    for p, v in zip(pieces(me + 1), out):
        store(p, v)
    for s in range(R - 1):
        incoming = pieces(me - s)
        futures = post(incoming)
        for v in out:
            tl.send("next", v)
        out = []
        for p, f in zip(incoming, futures):
            out.append(tl.wait(f))
            store(p, out[-1])

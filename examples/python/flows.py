"""Two of kbsim's C++ benches written as Python drivers of a kbsim.Session (tp_mlp is the Python bench py-tp-mlp's,
examples/python_plugins/tp_mlp.py): the same runtime calls in the same order,
so the same simulated times and values as ``kbsim run --bench ccl-allreduce`` and ``--bench tp-mlp``
(python/tests/test_session.py checks it).

    import kbsim, flows
    with kbsim.Session(verify_data=True) as s:
        print(flows.ccl_allreduce(s, n_elem=4096))
"""

import os
import sys

import numpy as np

import kbsim


def ccl_allreduce(session, n_elem=49152):
    """all_reduce of one f16 shard of ``n_elem`` per cube's pe0 on every rank (rank = SIP), as ccl-allreduce runs it
    (without its fit_slot: give ccl.yaml's slot_size with ``set=``). Returns the critical path (the slowest PE's
    kernel time over every rank), the algorithm, and each rank's reduced values."""
    rt, dist = session.runtime, session.dist
    dist.init_process_group()
    world, cubes = dist.get_world_size(), rt.cubes_per_sip
    i = np.arange(n_elem)
    values = {r: np.stack([((r * 7 + c * 3 + i % 8) % 8) / 8.0 for c in range(cubes)]) for r in range(world)}
    reduced = {}

    def worker(rank):
        rt.set_device(rank)
        # A shard per cube's pe0: rows split over every cube, one PE each.
        t = rt.tensor(values[rank], kbsim.Placement(cube="row", pe="replicate", num_pes=1, num_cubes=0),
                      dtype="f16", name="t{}".format(rank))
        dist.barrier()  # every rank's data is in place: the collectives start together
        dist.all_reduce(t)
        if session.verify_data:
            reduced[rank] = t.numpy()

    dist.spawn(worker, world)
    collective = dist.collectives()[0]
    return {"algorithm": collective["algorithm"], "world_size": world,
            "critical_path_ns": max(r["pe_exec_ns"] for r in collective["ranks"]),
            "expected": sum(values.values()).sum(axis=0), "reduced": reduced}


# tp-mlp's driver is the Python bench py-tp-mlp's own (one definition): a plugin file is an ordinary module too.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python_plugins"))
from tp_mlp import forward as tp_mlp  # noqa: E402,F401

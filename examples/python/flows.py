"""Two of kbsim's C++ benches written as Python drivers of a kbsim.Session: the same runtime calls in the same order,
so the same simulated times and values as ``kbsim run --bench ccl-allreduce`` and ``--bench tp-mlp``
(python/tests/test_session.py checks it).

    import kbsim, flows
    with kbsim.Session(verify_data=True) as s:
        print(flows.ccl_allreduce(s, n_elem=4096))
"""

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


def _value(n, salt):
    """Small values k/64, k in -8..8 (exact in f16), by position and salt: the weights and input tp-mlp uses."""
    i = np.arange(n)
    return ((i * 7 + salt * 13) % 17 - 8) / 64.0


def tp_mlp(session, B=1, D_in=512, D_hidden=2048, D_out=512):
    """Megatron's tensor-parallel MLP, as tp-mlp runs it: fc1 column-parallel (D_in -> D_hidden), fc2 row-parallel
    (D_hidden -> D_out) with an all_reduce, over every rank, f16, forward only. Returns the layer times (maxima over
    the ranks) and, with verify_data, every rank's output (B, D_out)."""
    rt, dist = session.runtime, session.dist
    dist.init_process_group()
    ws = dist.get_world_size()
    if D_hidden % ws:
        raise ValueError("D_hidden must be a multiple of the world size {}".format(ws))
    k = D_hidden // ws
    x = _value(B * D_in, 1).reshape(B, D_in)
    w1 = _value(D_in * D_hidden, 2).reshape(D_in, D_hidden)
    w2 = _value(D_hidden * D_out, 3).reshape(D_hidden, D_out)
    every_pe = kbsim.Placement("replicate", "replicate", 0, 0)
    columns = kbsim.Placement("column", "column", 0, 0)
    times = {"fc1_gemm_ns": [], "fc2_partial_gemm_ns": [], "forward_ns": []}
    out = {}

    def worker(rank):
        rt.set_device(rank)
        cubes = rt.cubes_per_sip
        # The layers' weights, as ColumnParallelLinear and RowParallelLinear make them: zeros, then this rank's slice.
        w1_local = rt.zeros((D_in, k), "f16", columns, "col_parallel_w")
        w2_local = rt.zeros((k, D_out), "f16", kbsim.Placement("row", "row", 0, 0), "row_parallel_w")
        rt.write(w1_local, w1[:, rank * k:(rank + 1) * k])
        rt.write(w2_local, w2[rank * k:(rank + 1) * k, :])
        inp = rt.tensor(x, every_pe, dtype="f16", name="x")
        dist.barrier()  # every rank's weights and input are in place: the layers start together
        t0 = rt.now_ps
        h = rt.empty((B, k), "f16", columns, "col_parallel_out")
        fc1 = rt.launch("tp-column-gemm", inp, w1_local, h).wait()
        y = rt.empty((cubes, B * D_out), "f16", kbsim.Placement("row", "replicate", 1, 0), "row_parallel_partial")
        fc2 = rt.launch("tp-row-partial-gemm", h, w2_local, y, B, grid_pes=1, grid_cubes=cubes,
                        auto_dim_remap=False).wait()
        dist.all_reduce(y)  # every cube's row now holds the whole output
        times["fc1_gemm_ns"].append(fc1["pe_exec_ns"])
        times["fc2_partial_gemm_ns"].append(fc2["pe_exec_ns"])
        times["forward_ns"].append((rt.now_ps - t0) / 1000.0)
        if session.verify_data:
            out[rank] = y.numpy()[0].reshape(B, D_out)

    dist.spawn(worker, ws)
    allreduce = dist.collectives()[0]
    result = {name: max(v) for name, v in times.items()}
    result["allreduce_crit_ns"] = max(r["pe_exec_ns"] for r in allreduce["ranks"])
    result["world_size"] = ws
    result["allreduce_algorithm"] = allreduce["algorithm"]
    h = (x.astype(np.float16).astype(np.float32) @ w1.astype(np.float16).astype(np.float32)).astype(np.float16)
    result["expected"] = h.astype(np.float32) @ w2.astype(np.float16).astype(np.float32)
    result["outputs"] = out
    return result

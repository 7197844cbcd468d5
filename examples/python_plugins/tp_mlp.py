"""py-tp-mlp: the C++ bench tp-mlp written in Python, a plugin file (sdk/README.md, "Write it in Python").

    kbsim run --bench py-tp-mlp --plugins examples/python_plugins --verify-data

The same runtime calls in the same order as tp-mlp, so the same simulated times, metrics and values (the tests
check it). ``forward`` drives a kbsim.Session as well (examples/python/flows.py): a plugin file is a module too.
"""

import numpy as np

import kbsim


def _value(n, salt):
    """Small values k/64, k in -8..8 (exact in f16), by position and salt: the weights and input tp-mlp uses."""
    i = np.arange(n)
    return ((i * 7 + salt * 13) % 17 - 8) / 64.0


def forward(session, B=1, D_in=512, D_hidden=2048, D_out=512):
    """Megatron's tensor-parallel MLP, as tp-mlp runs it, on a kbsim.Session or a bench's context: fc1 column-parallel (D_in -> D_hidden), fc2 row-parallel
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


@kbsim.bench("py-tp-mlp",
             "tp-mlp in Python: Megatron tensor-parallel MLP, ColumnParallelLinear then RowParallelLinear "
             "(all_reduce) over every rank; --verify-data checks the output against the MLP computed directly",
             params=[kbsim.Param("B", 1, "batch rows"), kbsim.Param("D_in", 512, "input features"),
                     kbsim.Param("D_hidden", 2048,
                                 "hidden features (split over the ranks by fc1's columns and fc2's rows)"),
                     kbsim.Param("D_out", 512, "output features")])
def py_tp_mlp(ctx):
    p = ctx.params
    for name in ("B", "D_in", "D_hidden", "D_out"):
        if not 1 <= p[name] <= 65536:
            raise kbsim.ConfigError("parameter '{}' must be in 1..65536".format(name))
    r = forward(ctx, p["B"], p["D_in"], p["D_hidden"], p["D_out"])
    m = ctx.metrics
    for key in ("world_size", "fc1_gemm_ns", "fc2_partial_gemm_ns", "allreduce_crit_ns", "forward_ns",
                "allreduce_algorithm"):
        m[key] = r[key]
    ctx.note("py_tp_mlp: {} ranks, ({}, {}) -> ({}, {}) -> ({}, {}): fc1 GEMM {:.1f} ns, fc2 partial GEMM {:.1f} ns, "
             "all_reduce {:.1f} ns, forward {:.1f} ns".format(
                 r["world_size"], p["B"], p["D_in"], p["B"], p["D_hidden"], p["B"], p["D_out"], r["fc1_gemm_ns"],
                 r["fc2_partial_gemm_ns"], r["allreduce_crit_ns"], r["forward_ns"]))
    if not ctx.verify_data:
        return
    # The device sums the output as f16 partials: each addition rounds to half an f16 unit in the last place of the
    # running sum; allow 4 such units (tp-mlp's tolerance).
    want = r["expected"]
    peak = max(float(np.abs(want).max()), 1e-3)
    tol = 4 * 2.0 ** (np.floor(np.log2(peak)) - 10) + 1e-3
    worst = max(float(np.abs(out - want).max()) for out in r["outputs"].values())
    m["max_abs_error"] = worst
    if worst > tol:
        raise kbsim.BenchError("py-tp-mlp: an output is {:.5f} off the MLP computed directly".format(worst))
    ctx.note("verified: every rank's {} outputs within {:.4f} of the MLP computed directly (max error {:.5f})".format(
        p["B"] * p["D_out"], tol, worst))

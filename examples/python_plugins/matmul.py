"""py-matmul-composite: the C++ bench matmul-composite and its kernel written in Python, a plugin file
(sdk/README.md, "Write it in Python").

    kbsim run --bench py-matmul-composite --plugins examples/python_plugins --param M=128 --param K=128 \\
        --param N=128 --verify-data

The kernel issues the same tl calls as the C++ kernel matmul_composite, and the bench makes the same runtime calls
as matmul-composite, so the simulated times, the op log and the values are the same (the tests check it). Edit the
kernel (its tiles, its operand staging) and run again: nothing to build.
"""

import numpy as np

import kbsim

VARIANTS = {"load_ref": 0, "pinned": 1, "ref_ref": 2}


@kbsim.kernel("py_matmul_composite", "C = A x B as one tiled composite GEMM (matmul_composite in Python)")
def matmul_composite(tl, a, b, c, variant, relu=0):
    # Operand staging: A loaded into TCM (or streamed), B streamed (or loaded): the composite tiles what it streams.
    a_t = tl.ref(a.ptr, a.shape, a.dtype) if variant == VARIANTS["ref_ref"] else tl.load(a.ptr, a.shape, a.dtype)
    b_t = tl.load(b.ptr, b.shape, b.dtype) if variant == VARIANTS["pinned"] else tl.ref(b.ptr, b.shape, b.dtype)
    epilogue = [("relu", "output_tile")] if relu else []
    tl.wait(tl.composite(a_t, b_t, out_ptr=c.ptr, out_dtype=c.dtype, epilogue=epilogue))


def operand_codes(n, seed):
    """matmul-composite's operand stream: codes 0..2047 from xorshift32, value code / 1024 - 1 (exact in f16)."""
    x = (2463534242 ^ seed) & 0xFFFFFFFF
    codes = np.empty(n, np.int64)
    for i in range(n):
        x ^= (x << 13) & 0xFFFFFFFF
        x ^= x >> 17
        x ^= (x << 5) & 0xFFFFFFFF
        codes[i] = x % 2048
    return codes


def operand(n, seed):
    return (operand_codes(n, seed) / 1024.0 - 1.0).astype(np.float16)


@kbsim.bench("py-matmul-composite",
             "matmul-composite in Python, its kernel too: a tiled composite GEMM on PE 0 of cube 0; reports the "
             "composite and kernel windows and stage busy times",
             params=[kbsim.Param("M", 32, "rows of A and C"), kbsim.Param("K", 3072, "columns of A, rows of B"),
                     kbsim.Param("N", 32, "columns of B and C"),
                     kbsim.Param("variant", "load_ref", "operand staging: load_ref, pinned or ref_ref"),
                     kbsim.Param("epilogue", "none", "fused output-tile epilogue: none or relu"),
                     kbsim.Param("kernel", "py_matmul_composite",
                                 "the kernel launched: py_matmul_composite, or the C++ matmul_composite")])
def py_matmul_composite(ctx):
    p = ctx.params
    m, k, n = p["M"], p["K"], p["N"]
    for name in ("M", "K", "N"):
        if not 0 < p[name] <= 1 << 24:
            raise kbsim.ConfigError("parameter '{}' must be in 1..16777216".format(name))
    if p["variant"] not in VARIANTS:
        raise kbsim.ConfigError("parameter 'variant' must be load_ref, pinned or ref_ref")
    if p["epilogue"] not in ("none", "relu"):
        raise kbsim.ConfigError("parameter 'epilogue' must be none or relu")
    relu = p["epilogue"] == "relu"
    rt = ctx.runtime
    one_pe = kbsim.Placement()  # replicate on PE 0 of cube 0
    a = rt.empty((m, k), "f16", one_pe, "A")
    b = rt.empty((k, n), "f16", one_pe, "B")
    c = rt.empty((m, n), "f16", one_pe, "C")
    av, bv = operand(m * k, 1), operand(k * n, 2)
    rt.write(a, av.reshape(m, k))
    rt.write(b, bv.reshape(k, n))
    rt.write(c, np.zeros((m, n), np.float16))
    res = rt.launch(p["kernel"], a, b, c, VARIANTS[p["variant"]], int(relu)).wait()
    pe = res["pes"][0]
    out = ctx.metrics
    out.update({"M": m, "K": k, "N": n, "kernel_window_ns": pe["pe_exec_ns"],
                "composite_window_ns": pe["composite_window_ns"], "dma_ns": pe["dma_ns"],
                "compute_ns": pe["compute_ns"], "stage_busy_ns": pe["stage_busy_ns"], "commands": pe["commands"]})
    sched = "sip0.cube0.pe0.pe_scheduler"
    tiles, commands, composites = (ctx.stat(sched, s)[0] for s in ("tiles", "commands", "composite_commands"))
    out["composite_tiles"] = tiles - (commands - composites)
    out["launch_ns"] = res["launch_ns"]
    flops = 2.0 * m * k * n
    out["gemm_tflops_in_kernel_window"] = flops / pe["pe_exec_ns"] / 1e3 if pe["pe_exec_ns"] > 0 else 0.0
    ctx.note("{}x{}x{}: kernel window {:.2f} ns, composite window {:.2f} ns, GEMM busy {:.2f} ns, DMA {:.2f} ns".format(
        m, k, n, pe["pe_exec_ns"], pe["composite_window_ns"], list(pe["stage_busy_ns"].values())[2], pe["dma_ns"]))
    if not ctx.verify_data:
        return
    want = (av.reshape(m, k).astype(np.float32) @ bv.reshape(k, n).astype(np.float32))
    if relu:
        want = np.maximum(want, 0)
    want = want.astype(np.float16).astype(np.float64)  # stored as f16
    got = c.numpy().astype(np.float64)
    # matmul-composite's check: |got - want| <= atol + rtol |want|, the f16 tolerance (atol 1e-3, rtol 1e-3).
    bad = np.argwhere(np.abs(got - want) > 1e-3 + 1e-3 * np.abs(want))
    if len(bad):
        r, col = bad[0]
        raise kbsim.BenchError("DATA_MISMATCH: C element ({}, {}): got {}, expected {}".format(
            r, col, got[r, col], want[r, col]))
    ctx.note("verified C ({}, {}) f16 against numpy: all {} elements within the f16 tolerance".format(m, n, m * n))

"""llama-layer: one transformer decoder layer (Llama-70B's shape by default), prefill or one decode step, tensor
parallel over the SIPs (docs/evaluations.md, "A decoder layer").

    kbsim run --bench llama-layer --param phase=decode --param context=4096
    kbsim run --bench llama-layer --param scale=validation --verify-data

The layer, on every rank (one per SIP), Megatron's layout: RMSNorm; the fused QKV projection, column-parallel (the
rank's query heads and KV heads); rotary embedding; GQA attention against the KV cache in HBM (prefill writes it,
decode reads it and appends the new token); the output projection, row-parallel, then an all_reduce; the residual;
RMSNorm; the SwiGLU MLP (gate and up column-parallel, down row-parallel) and an all_reduce; the residual.

Inside a SIP every GEMM is split over all its PEs by output columns, each PE streaming its slice of the weight from
its own HBM slice with a composite GEMM; activations are kept per cube (each cube has a copy, on its pe0's HBM
slice), so a PE reads them from its own cube. Heads are gathered with 2-D DMAs (tl.load/tl.store with a row stride).
The kernels, in Python too, are in llama_kernels.py; every time and byte count comes from the model's events.
"""

import math

import numpy as np

import kbsim

# Llama-70B, and a small shape the data pass checks in seconds.
HEADLINE = {"hidden": 8192, "heads": 64, "kv_heads": 8, "head_dim": 128, "ffn": 28672}
VALIDATION = {"hidden": 512, "heads": 8, "kv_heads": 4, "head_dim": 64, "ffn": 1024, "context": 48, "seq": 32}
PHASES = ("norm1", "qkv", "attention", "out_proj", "allreduce1", "norm2", "mlp", "allreduce2", "residual")
EPS = 1e-5  # RMSNorm's epsilon (the kernels take it as an argument)
MASKED = -1.0e4  # a score the causal mask takes away (exp of it is 0 in f16)
BLOCKS = kbsim.Placement("row", "row", 0, 0)  # block q = cube * PEs + pe: every PE can reach every block
REPLICA = kbsim.Placement("replicate", "replicate", 0, 0)  # read-only tables, a copy on every PE


class Plan:
    """Who does what, from the layer's shape, the phase and the system: a rank's heads and FFN slice, each PE's
    columns, and the attention items (a KV head, a sequence and a block of its tokens) with the PE that runs each."""

    def __init__(self, p, world, cubes, pes):
        self.H, self.nq, self.nkv, self.D, self.F = (p["hidden"], p["heads"], p["kv_heads"], p["head_dim"],
                                                     p["ffn"])
        self.t, self.C, self.P = world, cubes, pes
        self.N = cubes * pes
        self.decode = p["phase"] == "decode"
        self.B = p["batch"]
        self.S = 1 if self.decode else p["seq"]
        self.ctx = p["context"] if self.decode else 0
        self.T = self.B * self.S
        self.Tb = max(1, min(self.T, p["bucket_kib"] * 1024 // (self.H * 2)))  # token rows per all_reduce bucket
        self.buckets = [min(self.Tb, self.T - r) for r in range(0, self.T, self.Tb)]
        t, N = self.t, self.N
        need(self.nq % self.nkv == 0, "heads must be a multiple of kv_heads")
        need(self.nq % t == 0, "heads ({}) must be a multiple of the SIPs used ({})".format(self.nq, t))
        need(t <= self.nkv or t % self.nkv == 0, "with more SIPs than KV heads, SIPs must be a multiple of them")
        self.group = self.nq // self.nkv
        self.nq_l = self.nq // t
        self.nkv_l = max(1, self.nkv // t)  # beyond nkv SIPs a KV head is replicated (Megatron)
        self.G = min(self.group, self.nq_l)  # query heads of the rank per KV head
        self.K_o = self.nq_l * self.D
        self.n_qkv = self.cols((self.nq_l + 2 * self.nkv_l) * self.D, "the rank's Q, K and V columns")
        need(self.n_qkv % 2 == 0 and self.D % 2 == 0, "rotary pairs: each PE's QKV columns must be even")
        need(self.F % t == 0, "ffn must be a multiple of the SIPs used")
        self.F_l = self.F // t
        self.n_f = self.cols(self.F_l, "the rank's FFN columns")
        self.n_o = self.cols(self.H, "hidden")
        need(self.H % pes == 0, "hidden must be a multiple of the PEs per cube")
        per_seq = max(1, N // (self.nkv_l * self.B))  # attention items per (KV head, sequence)
        if self.decode:
            self.L = -(-(self.ctx + 1) // per_seq)  # cache rows per chunk
            self.chunks = -(-(self.ctx + 1) // self.L)
        else:
            self.chunks = max(d for d in range(1, min(per_seq, self.S) + 1) if self.S % d == 0)
            self.L = self.S // self.chunks
        self.items = self.nkv_l * self.B * self.chunks
        self.slots = -(-self.items // N)
        self.seqs = self.nkv_l * self.B  # decode merges, one per (KV head, sequence)

    def cols(self, n, what):
        need(n % self.N == 0, "{} ({}) must split evenly over the SIP's {} PEs".format(what, n, self.N))
        return n // self.N

    def item(self, j, b, k):
        """The PE (block) and slot of chunk k of KV head j's cache for sequence b, and of its attention item (as the
        kernels' _item places them)."""
        i = (j * self.B + b) * self.chunks + k
        return i % self.N, i // self.N


def need(ok, what):
    if not ok:
        raise kbsim.ConfigError("llama-layer: " + what)


# --- the host side: tensors, the phases, the counters, the check ---

def values(shape, salt, scale):
    """Deterministic small values k/64 * scale, k in -8..8, by position and salt."""
    i = np.arange(int(np.prod(shape)), dtype=np.int64)
    return (((i * 7 + salt * 13) % 17 - 8) / 64.0 * scale).reshape(shape)


class Weights:
    """The whole model's layer, as the host knows it (f16 values): what each rank's slices are cut from."""

    def __init__(self, pl):
        H, D, F = pl.H, pl.D, pl.F
        s = 1.0 / math.sqrt(H)
        self.wq = values((H, pl.nq * D), 2, 4 * s)
        self.wk = values((H, pl.nkv * D), 3, 4 * s)
        self.wv = values((H, pl.nkv * D), 4, 4 * s)
        self.wo = values((pl.nq * D, H), 5, 4 / math.sqrt(pl.nq * D))
        self.wg = values((H, F), 6, 4 * s)
        self.wu = values((H, F), 7, 4 * s)
        self.wd = values((F, H), 8, 4 / math.sqrt(F))
        self.g1 = 1.0 + values((1, H), 9, 0.5)
        self.g2 = 1.0 + values((1, H), 10, 0.5)
        self.x = values((pl.T, H), 1, 16.0)
        ctx = max(pl.ctx, 1)
        self.kc = values((pl.nkv, pl.B, ctx, D), 11, 4.0)  # the cache before this step (decode)
        self.vc = values((pl.nkv, pl.B, ctx, D), 12, 4.0)

    def kv_heads(self, pl, rank):
        first = rank * pl.nkv_l if pl.t <= pl.nkv else rank * pl.nq_l // pl.group
        return list(range(first, first + pl.nkv_l))


def f16(a):
    return np.asarray(a, np.float64).astype(np.float16).astype(np.float64)


def rope_tables(pl):
    pos = np.full(pl.T, pl.ctx, np.float32) if pl.decode else np.tile(np.arange(pl.S, dtype=np.float32), pl.B)
    freq = (10000.0 ** (-(np.arange(pl.D) // 2 * 2) / pl.D)).astype(np.float32)
    rot = np.zeros((pl.D, pl.D))
    for i in range(0, pl.D, 2):
        rot[i + 1, i], rot[i, i + 1] = -1.0, 1.0  # (y R)[2i] = -y[2i+1], (y R)[2i+1] = y[2i]
    return pos.reshape(-1, 1), freq.reshape(1, -1), rot


def rope_ref(y, pos, freq):
    """Rotary embedding of every head of y (T, heads * D), as the kernel computes it (angles in f32)."""
    ang = np.tile((pos * freq).astype(np.float32).astype(np.float64), (1, y.shape[1] // freq.shape[1]))
    sw = np.empty_like(y)
    sw[:, 0::2], sw[:, 1::2] = -y[:, 1::2], y[:, 0::2]
    return f16(f16(y * f16(np.cos(ang))) + f16(f16(sw) * f16(np.sin(ang))))


def reference(pl, w):
    """The whole layer computed directly (f16 operands, f32-or-better accumulation, f16 where the device stores)."""
    D, G = pl.D, pl.group

    def norm(x, g):
        return f16(x / np.sqrt((x * x).mean(axis=1, keepdims=True) + EPS) * f16(g))

    pos, freq, _ = rope_tables(pl)
    x = f16(w.x)
    xn = norm(x, w.g1)
    q = f16(rope_ref(f16(xn @ f16(w.wq)), pos, freq))
    k = f16(rope_ref(f16(xn @ f16(w.wk)), pos, freq))
    v = f16(xn @ f16(w.wv))
    o = np.zeros((pl.T, pl.nq * D))
    for h in range(pl.nq):
        kvh = h // G
        for b in range(pl.B):
            rows = slice(b * pl.S, (b + 1) * pl.S)
            kk, vv = k[rows, kvh * D:(kvh + 1) * D], v[rows, kvh * D:(kvh + 1) * D]
            if pl.decode:
                kk = np.vstack([f16(w.kc[kvh, b, :pl.ctx]), kk])
                vv = np.vstack([f16(w.vc[kvh, b, :pl.ctx]), vv])
            s = q[rows, h * D:(h + 1) * D] @ kk.T / math.sqrt(D)
            if not pl.decode:
                s = s + np.triu(np.full((pl.S, pl.S), -np.inf), 1)
            e = np.exp(s - s.max(axis=1, keepdims=True))
            o[rows, h * D:(h + 1) * D] = f16(e @ vv / e.sum(axis=1, keepdims=True))
    x1 = f16(x + f16(o @ f16(w.wo)))
    xn2 = norm(x1, w.g2)
    g, u = f16(xn2 @ f16(w.wg)), f16(xn2 @ f16(w.wu))
    h = f16(f16(g / (1 + np.exp(-g))) * u)
    return f16(x1 + f16(h @ f16(w.wd)))


def blocks_of(a, N):
    """(R, N * n) -> (N * R, n): block q holds columns q*n.. of every row (a PE's column slice, stored whole)."""
    R, W = a.shape
    return a.reshape(R, N, W // N).transpose(1, 0, 2).reshape(N * R, W // N)


class RankTensors:
    """One rank's tensors: activations (a copy per cube, on its pe0's block), weight slices (a block per PE),
    scratch, the KV cache's chunks (on the PEs that attend to them) and the constant tables."""

    def __init__(self, rt, pl, w, rank, verify):
        N, T, H, D, G = pl.N, pl.T, pl.H, pl.D, pl.G
        self.rt = rt

        def blocks(rows, cols, name, dtype="f16"):
            return rt.empty((N * rows, cols), dtype, BLOCKS, name)

        def table(a, name, dtype="f16"):
            return rt.tensor(np.asarray(a, np.float64), REPLICA, dtype=dtype, name=name)

        self.X, self.XN = blocks(T, H, "x"), blocks(T, H, "xn")
        self.QB, self.OB = blocks(T, G * D, "q"), blocks(T, pl.K_o, "attn_out")
        self.KC, self.VC = blocks(pl.slots * pl.L, D, "k_cache"), blocks(pl.slots * pl.L, D, "v_cache")
        self.SCR, self.SO = blocks(T, pl.n_qkv, "qkv_scratch"), blocks(T, pl.n_o, "out_scratch")
        self.SG, self.SU, self.SH = blocks(T, pl.n_f, "gate"), blocks(T, pl.n_f, "up"), blocks(T, pl.n_f, "h")
        self.SD = blocks(T, H, "down_partial")
        # The all_reduces' tensors: one row per cube (on its pe0's block), a tensor per bucket of Tb tokens.
        self.AR1 = [rt.empty((N, rows * H), "f16", BLOCKS, "allreduce1") for rows in pl.buckets]
        self.AR2 = [rt.empty((N, rows * H), "f16", BLOCKS, "allreduce2") for rows in pl.buckets]
        self.Wqkv, self.Wo = blocks(H, pl.n_qkv, "w_qkv"), blocks(pl.K_o, pl.n_o, "w_o")
        self.Wg, self.Wu, self.Wd = blocks(H, pl.n_f, "w_gate"), blocks(H, pl.n_f, "w_up"), blocks(pl.n_f, H, "w_down")
        pos, freq, rot = rope_tables(pl)
        self.POS, self.FREQ, self.ROT = table(pos, "pos", "f32"), table(freq, "freq", "f32"), table(rot, "rot")
        self.G1, self.G2 = table(w.g1 if verify else np.ones((1, H)), "g1"), table(
            w.g2 if verify else np.ones((1, H)), "g2")
        if pl.decode:
            merges = (pl.seqs - 1) * pl.chunks // N + 1
            self.PO = blocks(merges * pl.chunks, G * D, "partial_o")
            self.PM, self.PL = blocks(merges * pl.chunks, G, "partial_m"), blocks(merges * pl.chunks, G, "partial_l")
            self.EXPAND = table(np.kron(np.eye(G), np.ones((1, D))), "expand")
        else:
            s = np.arange(pl.L).repeat(G).reshape(-1, 1)
            self.MASK = table(np.where(np.arange(pl.L).reshape(1, -1) <= s, 0.0, MASKED), "causal_mask")
        if verify:  # timing runs leave values unset: the model's timing does not depend on them
            self.fill(pl, w, rank)

    def fill(self, pl, w, rank):
        rt, N, D, P = self.rt, pl.N, pl.D, pl.P
        qh = list(range(rank * pl.nq_l, (rank + 1) * pl.nq_l))
        kv = w.kv_heads(pl, rank)
        cols = lambda m, heads: np.hstack([m[:, h * D:(h + 1) * D] for h in heads])  # noqa: E731
        rt.write(self.Wqkv, f16(blocks_of(np.hstack([cols(w.wq, qh), cols(w.wk, kv), cols(w.wv, kv)]), N)))
        rt.write(self.Wo, f16(blocks_of(w.wo[rank * pl.K_o:(rank + 1) * pl.K_o], N)))
        f = slice(rank * pl.F_l, (rank + 1) * pl.F_l)
        rt.write(self.Wg, f16(blocks_of(w.wg[:, f], N)))
        rt.write(self.Wu, f16(blocks_of(w.wu[:, f], N)))
        rt.write(self.Wd, f16(w.wd[f]))
        for c in range(pl.C):
            rt.write_slice(self.X, c * P * pl.T, 0, f16(w.x))
        if pl.decode and pl.ctx:
            kc, vc = np.zeros((N * pl.slots * pl.L, D)), np.zeros((N * pl.slots * pl.L, D))
            for j, head in enumerate(kv):
                for b in range(pl.B):
                    for k in range(pl.chunks):
                        q, slot = pl.item(j, b, k)
                        n = max(0, min(pl.L, pl.ctx - k * pl.L))
                        at = (q * pl.slots + slot) * pl.L
                        kc[at:at + n], vc[at:at + n] = w.kc[head, b, k * pl.L:k * pl.L + n], w.vc[
                            head, b, k * pl.L:k * pl.L + n]
            rt.write(self.KC, f16(kc))
            rt.write(self.VC, f16(vc))

    def output(self, pl, cube):
        return self.rt.read_slice(self.X, cube * pl.P * pl.T, 0, pl.T, pl.H)


class Counters:
    """The model's own counts, summed over the SIPs used: HBM bytes (every controller), GEMM MACs and MATH elements
    (every PE)."""

    def __init__(self, ctx, pl):
        self.ctx = ctx
        self.pes = ["sip{}.cube{}.pe{}".format(s, c, p) for s in range(pl.t) for c in range(pl.C)
                    for p in range(pl.P)]
        self.hbm = ["sip{}.cube{}.hbm_ctrl.pe{}".format(s, c, p) for s in range(pl.t) for c in range(pl.C)
                    for p in range(pl.P)]

    def read(self):
        st = self.ctx.stat
        return {"hbm_bytes": sum(st(n, "bytes")[0] for n in self.hbm),
                "macs": sum(st(n + ".pe_gemm", "macs")[0] for n in self.pes),
                "math_elements": sum(st(n + ".pe_math", "elements")[0] for n in self.pes),
                "link_bytes": self.ctx.link_bytes("pcie")}


def peaks(ctx, pl):
    """The configured peaks, per ns: one PE's GEMM MACs and its HBM slice's bytes, and the bytes of the narrowest
    link between two SIPs (None with one SIP)."""
    gemm, hbm = "sip0.cube0.pe0.pe_gemm", "sip0.cube0.hbm_ctrl.pe0"
    macs = ctx.param(gemm, "macs_per_cycle") * ctx.param(gemm, "clock_ghz")
    pcs = ctx.param(hbm, "num_pcs") or ctx.system_attr("ahbm.hbm_channels_per_pe")
    pc_bw = ctx.param(hbm, "pc_bw_gbs") or ctx.system_attr("ahbm.hbm_channel_bw_gbs")
    if pcs is None or pc_bw is None:
        raise kbsim.ConfigError("llama-layer: the topology publishes no HBM channels (an AHBM system is needed)")
    link = ctx.route_bw("sip0.cube0.pe0.pe_dma", "sip1.cube0.pe0.pe_dma") if pl.t > 1 else None
    return macs, pcs * pc_bw * ctx.param(hbm, "efficiency"), link


def run_layer(ctx, pl, w):
    """Every rank runs the layer; a barrier at each phase's edge. Returns the edges' times (ps), the counters at
    each edge, the launches' windows by phase and, with verify, every rank's output (one per cube)."""
    rt, dist = ctx.runtime, ctx.dist
    counters = Counters(ctx, pl)
    marks, counts, outputs = [], [], {}
    scale = 1.0 / math.sqrt(pl.D)
    ints = (pl.D, pl.G, pl.B)

    passed = {}

    def edge(rank):
        dist.barrier()
        k = passed[rank] = passed.get(rank, -1) + 1
        if len(marks) == k:  # the first rank on from the barrier: no simulated time has passed since it opened
            marks.append(rt.now_ps)
            counts.append(counters.read())

    def go(kernel, *args):
        rt.launch(kernel, *args, auto_dim_remap=False).wait()

    def all_reduce_then_residual(rank, r, buckets, norm):
        """Two phases: the all_reduce of a row-parallel output (bucket by bucket), then the residual (and a norm)."""
        for t in buckets:
            dist.all_reduce(t)
        edge(rank)
        go("llama-residual-norm", r.X, r.XN, r.G2, pl.T, pl.H, norm, EPS, pl.Tb, *buckets)
        edge(rank)

    def worker(rank):
        rt.set_device(rank)
        r = RankTensors(rt, pl, w, rank, ctx.verify_data)
        edge(rank)  # the layer starts on every rank at once, its tensors in place
        go("llama-rmsnorm", r.X, r.XN, r.G1, pl.T, pl.H, EPS, pl.Tb)
        edge(rank)
        go("llama-qkv", r.XN, r.Wqkv, r.SCR, r.QB, r.KC, r.VC, r.POS, r.FREQ, r.ROT, pl.H, pl.D, pl.nq_l, pl.nkv_l,
           pl.G, pl.n_qkv, pl.T, pl.B, pl.S, pl.ctx, pl.L, pl.chunks, int(pl.decode))
        edge(rank)
        if pl.decode:
            go("llama-attend-decode", r.QB, r.KC, r.VC, r.PO, r.PM, r.PL, *ints, pl.ctx, pl.L, pl.chunks, pl.nkv_l,
               scale)
            go("llama-merge-decode", r.PO, r.PM, r.PL, r.EXPAND, r.OB, *ints, pl.chunks, pl.nkv_l, pl.K_o)
            go("llama-broadcast", r.OB, pl.T, pl.K_o)
        else:
            go("llama-attend-prefill", r.QB, r.KC, r.VC, r.MASK, r.OB, *ints, pl.S, pl.L, pl.chunks, pl.nkv_l,
               pl.K_o, scale)
        edge(rank)
        go("llama-out-proj", r.OB, r.Wo, r.SO, pl.T, pl.K_o, pl.n_o, pl.H, pl.Tb, *r.AR1)
        edge(rank)
        all_reduce_then_residual(rank, r, r.AR1, norm=1)  # allreduce1; norm2 (with the residual)
        go("llama-mlp", r.XN, r.Wg, r.Wu, r.Wd, r.SG, r.SU, r.SH, r.SD, pl.T, pl.H, pl.n_f)
        go("llama-reduce", r.SD, pl.T, pl.H, pl.H // pl.P, pl.Tb, *r.AR2)
        edge(rank)
        all_reduce_then_residual(rank, r, r.AR2, norm=0)  # allreduce2; residual
        if ctx.verify_data:
            outputs[rank] = [r.output(pl, c) for c in range(pl.C)]

    dist.init_process_group(fit_n_elem=pl.Tb * pl.H)
    need(dist.get_world_size() == pl.t, "tp={} but the system has {} SIPs in the process group: set "
         "system.sips.count (or ccl.world_size) to tp".format(pl.t, dist.get_world_size()))
    dist.spawn(worker, pl.t)
    return marks, counts, outputs


def attribute(pl, marks, counts, macs_per_ns, hbm_per_ns, link_per_ns):
    """Per phase: time on the critical path, the model's counts, the roofline bound and what sets it. An all_reduce's
    bound is also what its data needs on the link between SIPs: each rank receives at least (t - 1) / t of it."""
    pes = pl.t * pl.N
    out = {}
    for k, name in enumerate(PHASES):
        ns = (marks[k + 1] - marks[k]) / 1000.0
        d = {key: counts[k + 1][key] - counts[k][key] for key in counts[k]}
        compute_ns = d["macs"] / (pes * macs_per_ns)
        hbm_ns = d["hbm_bytes"] / (pes * hbm_per_ns)
        link_ns = (pl.t - 1) / pl.t * pl.T * pl.H * 2 / link_per_ns if link_per_ns and name.startswith(
            "allreduce") else 0.0
        bound = max(compute_ns, hbm_ns, link_ns)
        if name.startswith("allreduce"):
            what = "inter-SIP link" if pl.t > 1 else "IPCQ (between the SIP's cubes)"
        elif bound <= 0 or ns > 4 * bound:
            what = "latency (launch, DMA round trips, IPCQ)"
        else:
            what = "compute" if compute_ns >= hbm_ns else "HBM"
        out[name] = {"ns": ns, "hbm_bytes": d["hbm_bytes"], "flops": 2 * d["macs"], "math_elements": d["math_elements"],
                     "link_bytes": d["link_bytes"],
                     "bound_ns": bound, "ratio": ns / bound if bound > 0 else None, "bottleneck": what,
                     "hbm_gbs": d["hbm_bytes"] / ns if ns > 0 else 0.0,
                     "gemm_util": d["macs"] / (ns * pes * macs_per_ns) if ns > 0 else 0.0}
        if bound > ns * (1 + 1e-9):
            raise kbsim.BenchError("llama-layer: phase {} took {:.1f} ns, below its roofline bound {:.1f} ns (a model "
                                   "error)".format(name, ns, bound))
    return out


@kbsim.bench("llama-layer",
             "one transformer decoder layer (Llama-70B by default), prefill or a decode step, tensor parallel over "
             "the SIPs: latency, per-phase critical-path times with their HBM bytes, FLOPs and roofline bound; "
             "--verify-data (scale=validation) checks every rank's output against the layer computed directly",
             params=[kbsim.Param("phase", "decode", "prefill (the prompt; writes the KV cache) or decode (one token "
                                                    "per sequence; reads the cache and appends to it)"),
                     kbsim.Param("batch", 1, "sequences"),
                     kbsim.Param("seq", 128, "prefill: tokens per sequence"),
                     kbsim.Param("context", 4096, "decode: tokens already in the KV cache"),
                     kbsim.Param("tp", 0, "tensor-parallel degree = SIPs used, 1-16 (0: every SIP of the system)"),
                     kbsim.Param("scale", "headline", "headline (the shape below) or validation (hidden 512, 8 "
                                                      "heads, 4 KV heads of 64, FFN 1024, context 48, seq 32)"),
                     kbsim.Param("hidden", HEADLINE["hidden"], "model width"),
                     kbsim.Param("heads", HEADLINE["heads"], "query heads"),
                     kbsim.Param("kv_heads", HEADLINE["kv_heads"], "KV heads (GQA)"),
                     kbsim.Param("head_dim", HEADLINE["head_dim"], "head size"),
                     kbsim.Param("ffn", HEADLINE["ffn"], "SwiGLU hidden size"),
                     kbsim.Param("dtype", "f16", "operand type (f16: weights, activations and the cache)"),
                     kbsim.Param("bucket_kib", 128, "all_reduce buckets of at most this many KiB per cube (the "
                                                    "default algorithm sums a whole shard in TCM scratch)")])
def llama_layer(ctx):
    p = dict(ctx.params)
    need(p["phase"] in ("prefill", "decode"), "phase must be prefill or decode")
    need(p["scale"] in ("headline", "validation"), "scale must be headline or validation")
    need(p["dtype"] == "f16", "dtype: only f16 is modelled")
    if p["scale"] == "validation":
        p.update(VALIDATION)
    for k in ("batch", "seq", "hidden", "heads", "kv_heads", "head_dim", "ffn"):
        need(1 <= p[k] <= 1 << 20, "{} must be in 1..1048576".format(k))
    need(0 <= p["context"] <= 1 << 20, "context must be in 0..1048576")
    need(0 <= p["tp"] <= 16, "tp must be in 0..16")
    need(1 <= p["bucket_kib"] <= 1024, "bucket_kib must be in 1..1024")
    rt = ctx.runtime
    sips = int(ctx.system_attr("ahbm.sips") or 1)
    world = p["tp"] or sips
    need(world <= sips, "tp={} but the system has {} SIPs: set system.sips.count".format(world, sips))
    pl = Plan(p, world, rt.cubes_per_sip, rt.pes_per_cube)
    need(pl.nkv_l <= pl.C, "a rank's KV heads must not outnumber its cubes")
    w = Weights(pl) if ctx.verify_data else None
    if w is None:
        w = type("NoWeights", (), {"g1": None, "g2": None})()
    macs_per_ns, hbm_per_ns, link_per_ns = peaks(ctx, pl)
    marks, counts, outputs = run_layer(ctx, pl, w)
    phases = attribute(pl, marks, counts, macs_per_ns, hbm_per_ns, link_per_ns)
    m = ctx.metrics
    latency = (marks[-1] - marks[0]) / 1000.0
    total = {k: sum(ph[k] for ph in phases.values()) for k in ("hbm_bytes", "flops")}
    m.update({"latency_ns": latency, "phases": {k: v["ns"] for k, v in phases.items()}, "phase_detail": phases,
              "tp": pl.t, "tokens": pl.T, "hbm_bytes": total["hbm_bytes"], "flops": total["flops"],
              "hbm_gbs": total["hbm_bytes"] / latency, "hbm_peak_gbs": pl.t * pl.N * hbm_per_ns,
              "gemm_util": total["flops"] / 2 / (latency * pl.t * pl.N * macs_per_ns),
              "layout": {"q_heads_per_sip": pl.nq_l, "kv_heads_per_sip": pl.nkv_l, "ffn_per_sip": pl.F_l,
                         "qkv_cols_per_pe": pl.n_qkv, "ffn_cols_per_pe": pl.n_f, "out_cols_per_pe": pl.n_o,
                         "attention_items": pl.items, "cache_rows_per_item": pl.L}})
    streaming = [phases[k] for k in ("qkv", "out_proj", "mlp")]  # the phases that stream the weights
    m["weights_hbm_gbs"] = sum(d["hbm_bytes"] for d in streaming) / sum(d["ns"] for d in streaming)
    if pl.decode:
        m["tokens_per_s"] = pl.B / latency * 1e9
    worst = max(phases.values(), key=lambda v: v["ns"])
    ctx.note("llama-layer {}: {} SIPs, {} tokens: {:.1f} ns ({} phases; longest {} {:.1f} ns, {}); HBM {:.0f} GB/s "
             "of {:.0f}".format(p["phase"], pl.t, pl.T, latency, len(phases),
                                [k for k, v in phases.items() if v is worst][0], worst["ns"], worst["bottleneck"],
                                m["hbm_gbs"], m["hbm_peak_gbs"]))
    if ctx.verify_data:
        check(ctx, pl, w, outputs)


def check(ctx, pl, w, outputs):
    want = reference(pl, w)
    tol = 0.01 * float(np.abs(want).max()) + 1e-3  # 1% of the largest output
    worst = 0.0
    for rank, cubes in outputs.items():
        for c, got in enumerate(cubes):
            err = float(np.abs(np.asarray(got, np.float64).reshape(want.shape) - want).max())
            worst = max(worst, err)
            if err > tol:
                raise kbsim.BenchError("llama-layer: rank {} cube {}'s output is {:.4f} off the layer computed "
                                       "directly (tolerance {:.4f})".format(rank, c, err, tol))
    ctx.metrics["max_abs_error"] = worst
    ctx.note("verified: every rank's output on every cube within {:.4f} of the layer computed directly (max error "
             "{:.4f})".format(tol, worst))

"""The kernels of llama-layer (llama_layer.py; docs/evaluations.md, "A decoder layer"), in Python: each runs on
every PE of a rank's SIP (pe = program_id(0), cube = program_id(1)), PE q = cube * PEs + pe.

Tensors they share are "blocks" (a (PEs * rows, cols) tensor split by rows over every PE: block q is PE q's, and
every PE can reach every block) and "cube copies" (the block of each cube's pe0). Heads and cache rows are gathered
and scattered with 2-D DMAs (tl.load / tl.store with a row stride).
"""

import kbsim

STEP = 64  # rows a rotary pass takes at a time


def block(t, q, P):
    return t.shard(q // P, q % P)["ptr"]


def cube_copy(t, cube):
    return t.shard(cube, 0)["ptr"]


def my_rows(tl, T):
    """The token rows of its cube's copy this PE handles: a contiguous share."""
    P = tl.num_programs(0)
    per = -(-T // P)
    r0 = tl.program_id(0) * per
    return r0, max(0, min(T, r0 + per) - r0)


def steps(r0, n, Tb):
    """Rows r0 .. r0 + n in steps that stay inside one all_reduce bucket of Tb rows: (row, rows, bucket, its row)."""
    row = r0
    while row < r0 + n:
        b, at = divmod(row, Tb)
        k = min(r0 + n - row, Tb - at)
        yield row, k, b, at
        row += k


def rms(tl, x, gamma, H, eps):
    """RMSNorm(x) * gamma; what it makes on the way is freed (a kernel normalises its rows a step at a time)."""
    xx = tl.mul(x, x)
    ss = tl.sum(xx, axis=1)
    ms = ss * tl.full((1, 1), 1.0 / H, "f32")
    var = ms + tl.full((1, 1), eps, "f32")
    root = tl.sqrt(var)
    rstd = tl.full((1, 1), 1.0, "f32") / root
    y = x * rstd
    out = y * gamma
    tl.free(xx, ss, ms, var, root, rstd, y)
    return out


@kbsim.kernel("llama-rmsnorm", "xn = RMSNorm(x) * gamma on each cube's copy, rows shared by its PEs, Tb at a time "
              "(args X, XN, GAMMA, T, H, eps, Tb)")
def rmsnorm(tl, X, XN, GAMMA, T, H, eps, Tb):
    cube, pe = tl.program_id(1), tl.program_id(0)
    r0, n = my_rows(tl, T)
    gamma = tl.load(GAMMA.shard(cube, pe)["ptr"], (1, H)) if n else None
    for row, k, _, _ in steps(r0, n, Tb):
        y = rms(tl, tl.load(cube_copy(X, cube) + row * H * 2, (k, H)), gamma, H, eps)
        tl.store(cube_copy(XN, cube) + row * H * 2, y)
        tl.free(y)


@kbsim.kernel("llama-residual-norm", "x += y (the all_reduce's sum, one tensor per bucket of Tb rows), then (norm 1) "
              "xn = RMSNorm(x) * gamma, on each cube's copy (args X, XN, GAMMA, T, H, norm, eps, Tb, Y buckets...)")
def residual_norm(tl, X, XN, GAMMA, T, H, norm, eps, Tb, *Y):
    cube, pe = tl.program_id(1), tl.program_id(0)
    r0, n = my_rows(tl, T)
    gamma = tl.load(GAMMA.shard(cube, pe)["ptr"], (1, H)) if n and norm else None
    for row, k, b, at in steps(r0, n, Tb):
        x = tl.load(cube_copy(X, cube) + row * H * 2, (k, H)) + tl.load(cube_copy(Y[b], cube) + at * H * 2, (k, H))
        tl.store(cube_copy(X, cube) + row * H * 2, x)
        if norm:
            y = rms(tl, x, gamma, H, eps)
            tl.store(cube_copy(XN, cube) + row * H * 2, y)
            tl.free(y)
        tl.free(x)


def rotate(tl, y, pos, freq, rot, c, p, rows, d0, n):
    """Rotary embedding of y (rows, n), columns d0.. of a head, pairs (2i, 2i+1): y cos + (y R) sin, the angles
    position x frequency computed here (f32)."""
    angle = tl.load(pos.shard(c, p)["ptr"] + rows * 4, (y.shape[0], 1), "f32") * \
        tl.load(freq.shard(c, p)["ptr"] + d0 * 4, (1, n), "f32")
    r = tl.load(rot.shard(c, p)["ptr"] + (d0 * rot.shape[1] + d0) * 2, (n, n), "f16", rot.shape[1])
    cos, sin, swapped = tl.cos(angle), tl.sin(angle), tl.dot(y, r)
    a, b = y * cos, swapped * sin
    out = a + b
    tl.free(angle, cos, sin, swapped, a, b)
    return out


@kbsim.kernel("llama-qkv", "the fused QKV projection over every PE's columns, rotary, Q to its group's buffer and "
              "K, V into the KV cache (args XN, W, SCR, QB, KC, VC, POS, FREQ, ROT, plan ints)")
def qkv(tl, XN, W, SCR, QB, KC, VC, POS, FREQ, ROT, H, D, nq_l, nkv_l, G, n, T, B, S, ctx, L, chunks, decode):
    cube, pe, P = tl.program_id(1), tl.program_id(0), tl.num_programs(0)
    q = cube * P + pe
    C = tl.num_programs(1)
    xn = tl.load(cube_copy(XN, cube), (T, H))
    scr = block(SCR, q, P)
    tl.wait(tl.composite(xn, tl.ref(block(W, q, P), (H, n)), out_ptr=scr, out_dtype="f16"))
    lo = q * n
    while lo < (q + 1) * n:  # the PE's columns, a piece per head
        head, d0 = divmod(lo, D)
        hi = min((q + 1) * n, (head + 1) * D)
        w = hi - lo
        src = scr + (lo - q * n) * 2
        if head < nq_l:  # a query head: rotary, into its group's buffer (on the group's cube)
            j, h = divmod(head, G)
            for row in range(0, T, STEP):
                k = min(STEP, T - row)
                y = rotate(tl, tl.load(src + row * n * 2, (k, w), "f16", n), POS, FREQ, ROT, cube, pe, row, d0, w)
                tl.store(cube_copy(QB, j % C) + (row * G * D + h * D + d0) * 2, y, G * D)
                tl.free(y)
        else:  # K (rotary) or V, into the cache chunks
            j = (head - nq_l) % nkv_l
            cache = KC if head < nq_l + nkv_l else VC
            for b in range(B):
                for c in ([ctx // L] if decode else range(chunks)):
                    blk, slot = _item(j, b, c, B, chunks, P * C)
                    first = ctx % L if decode else 0  # the chunk's first row written
                    for r in range(0, 1 if decode else L, STEP):
                        k = min(STEP, (1 if decode else L) - r)
                        tok = b * S + (0 if decode else c * L + r)
                        y = tl.load(src + tok * n * 2, (k, w), "f16", n)
                        if cache is KC:
                            y = rotate(tl, y, POS, FREQ, ROT, cube, pe, tok, d0, w)
                        tl.store(block(cache, blk, P) + ((slot * L + first + r) * D + d0) * 2, y, D)
                        if cache is KC:
                            tl.free(y)
        lo = hi


def _item(j, b, k, B, chunks, N):
    i = (j * B + b) * chunks + k
    return i % N, i // N


@kbsim.kernel("llama-attend-decode", "decode attention, one chunk of the cache per item: partial (m, l, o) to its "
              "merge (args QB, KC, VC, PO, PM, PL, plan ints, scale)")
def attend_decode(tl, QB, KC, VC, PO, PM, PL, D, G, B, ctx, L, chunks, nkv_l, scale):
    cube, pe, P, C = tl.program_id(1), tl.program_id(0), tl.num_programs(0), tl.num_programs(1)
    N, q = P * C, cube * P + pe
    for i in range(q, nkv_l * B * chunks, N):
        slot = i // N
        jb, k = divmod(i, chunks)
        j, b = divmod(jb, B)
        rows = min(L, ctx + 1 - k * L)
        qg = tl.load(cube_copy(QB, j % C) + b * G * D * 2, (G, D))
        kt = tl.load(block(KC, q, P) + slot * L * D * 2, (rows, D))
        v = tl.load(block(VC, q, P) + slot * L * D * 2, (rows, D))
        s = tl.dot(qg, tl.trans(kt)) * tl.full((1, 1), scale)
        m = tl.max(s, axis=1)
        e = tl.exp(s - m)
        mq, row = (jb * chunks) % N, (jb * chunks // N) * chunks + k  # the merge's block, and its row there
        tl.store(block(PO, mq, P) + row * G * D * 2, tl.dot(e, v))
        tl.store(block(PM, mq, P) + row * G * 2, m)
        tl.store(block(PL, mq, P) + row * G * 2, tl.sum(e, axis=1))


@kbsim.kernel("llama-merge-decode", "decode attention's merge of a sequence's chunks, on the PE holding their "
              "partials, into cube 0's copy of the attention output (args PO, PM, PL, EXPAND, OB, plan ints)")
def merge_decode(tl, PO, PM, PL, EXPAND, OB, D, G, B, chunks, nkv_l, K_o):
    cube, pe, P, C = tl.program_id(1), tl.program_id(0), tl.num_programs(0), tl.num_programs(1)
    N, q = P * C, cube * P + pe
    for jb in range(nkv_l * B):
        mq, at = (jb * chunks) % N, (jb * chunks // N) * chunks  # the partials' block, and their first row there
        if mq != q:
            continue
        j, b = divmod(jb, B)
        o = tl.load(block(PO, q, P) + at * G * D * 2, (chunks, G * D))
        m = tl.load(block(PM, q, P) + at * G * 2, (chunks, G))
        l_ = tl.load(block(PL, q, P) + at * G * 2, (chunks, G))
        w = tl.exp(m - tl.max(m, axis=0))
        expand = tl.load(EXPAND.shard(cube, pe)["ptr"], (G, G * D))
        out = tl.sum(tl.dot(w, expand) * o, axis=0) / tl.dot(tl.sum(w * l_, axis=0), expand)
        tl.store(cube_copy(OB, 0) + (b * K_o + j * G * D) * 2, out)


@kbsim.kernel("llama-broadcast", "cube 0's copy of a (T, K) activation to every other cube's, rows shared by each "
              "cube's PEs (args A, T, K)")
def broadcast(tl, A, T, K):
    cube = tl.program_id(1)
    r0, n = my_rows(tl, T)
    if cube == 0 or n == 0:
        return
    tl.store(cube_copy(A, cube) + r0 * K * 2, tl.load(cube_copy(A, 0) + r0 * K * 2, (n, K)))


@kbsim.kernel("llama-attend-prefill", "causal prefill attention, one block of a sequence's queries per item against "
              "its cache chunks so far, online softmax, into every cube's copy (args QB, KC, VC, MASK, OB, plan ints, "
              "scale)")
def attend_prefill(tl, QB, KC, VC, MASK, OB, D, G, B, S, L, chunks, nkv_l, K_o, scale):
    cube, pe, P, C = tl.program_id(1), tl.program_id(0), tl.num_programs(0), tl.num_programs(1)
    N, q = P * C, cube * P + pe
    for i in range(q, nkv_l * B * chunks, N):
        jb, r = divmod(i, chunks)
        j, b = divmod(jb, B)
        tok = b * S + r * L
        qg = tl.load(cube_copy(QB, j % C) + tok * G * D * 2, (L * G, D))
        sc = tl.full((1, 1), scale)
        m = l_ = o = None
        for k in range(r + 1):  # the chunks so far, an online softmax over them (what a step is done with, freed)
            blk, slot = _item(j, b, k, B, chunks, N)
            kt = tl.load(block(KC, blk, P) + slot * L * D * 2, (L, D))
            v = tl.load(block(VC, blk, P) + slot * L * D * 2, (L, D))
            raw = tl.dot(qg, tl.trans(kt))
            s = raw * sc
            tl.free(raw)
            if k == r:  # the diagonal chunk: the causal mask
                masked = s + tl.load(MASK.shard(cube, pe)["ptr"], (L * G, L))
                tl.free(s)
                s = masked
            mb = tl.max(s, axis=1)
            m2 = mb if m is None else tl.maximum(m, mb)
            shifted = s - m2
            e = tl.exp(shifted)
            se, pv = tl.sum(e, axis=1), tl.dot(e, v)
            tl.free(s, shifted, e)
            if m is None:
                l_, o = se, pv
            else:
                t = m - m2
                a = tl.exp(t)
                la, oa = l_ * a, o * a
                l2, o2 = la + se, oa + pv
                tl.free(t, a, la, oa, se, pv, l_, o, m, mb)
                l_, o = l2, o2
            m = m2
        y = o / l_
        out = tl.reshape(y, (L, G * D))
        for c in range(C):
            tl.store(cube_copy(OB, c) + (tok * K_o + j * G * D) * 2, out, K_o)
        tl.free(y, l_, o, m, sc)


@kbsim.kernel("llama-out-proj", "the output projection's columns on every PE, into its cube's row of each all_reduce "
              "bucket of Tb rows (args OB, W, SCR, T, K, n, H, Tb, AR buckets...)")
def out_proj(tl, OB, W, SCR, T, K, n, H, Tb, *AR):
    cube, pe, P = tl.program_id(1), tl.program_id(0), tl.num_programs(0)
    q = cube * P + pe
    o = tl.load(cube_copy(OB, cube), (T, K))
    tl.wait(tl.composite(o, tl.ref(block(W, q, P), (K, n)), out_ptr=block(SCR, q, P), out_dtype="f16"))
    for row, k, b, _ in steps(0, T, Tb):
        tl.store(cube_copy(AR[b], cube) + q * n * 2, tl.load(block(SCR, q, P) + row * n * 2, (k, n)), H)


@kbsim.kernel("llama-mlp", "SwiGLU's gate and up columns on every PE, h = silu(gate) * up (STEP rows at a time), then "
              "the down projection's partial over its h columns (args XN, WG, WU, WD, SG, SU, SH, SD, T, H, n)")
def mlp(tl, XN, WG, WU, WD, SG, SU, SH, SD, T, H, n):
    cube, pe, P = tl.program_id(1), tl.program_id(0), tl.num_programs(0)
    q = cube * P + pe
    xn = tl.load(cube_copy(XN, cube), (T, H))
    tl.composite(xn, tl.ref(block(WG, q, P), (H, n)), out_ptr=block(SG, q, P), out_dtype="f16")
    tl.composite(xn, tl.ref(block(WU, q, P), (H, n)), out_ptr=block(SU, q, P), out_dtype="f16")
    tl.wait()
    for row in range(0, T, STEP):
        k = min(STEP, T - row)
        g = tl.load(block(SG, q, P) + row * n * 2, (k, n))
        sg = tl.sigmoid(g)
        silu = g * sg
        h = silu * tl.load(block(SU, q, P) + row * n * 2, (k, n))
        tl.store(block(SH, q, P) + row * n * 2, h)
        tl.free(sg, silu, h)
    h = tl.load(block(SH, q, P), (T, n))
    tl.wait(tl.composite(h, tl.ref(block(WD, q, P), (n, H)), out_ptr=block(SD, q, P), out_dtype="f16"))


@kbsim.kernel("llama-reduce", "each cube's PEs sum the cube's down-projection partials, a column slice each, into "
              "the cube's row of each all_reduce bucket (args SD, T, H, w, Tb, AR buckets...)")
def reduce_cube(tl, SD, T, H, w, Tb, *AR):
    cube, pe, P = tl.program_id(1), tl.program_id(0), tl.num_programs(0)
    for row, k, b, _ in steps(0, T, Tb):
        acc = None
        for p in range(P):
            part = tl.load(block(SD, cube * P + p, P) + (row * H + pe * w) * 2, (k, w), "f16", H)
            if acc is None:
                acc = part
            else:
                total = acc + part
                if p > 1:
                    tl.free(acc)
                acc = total
        tl.store(cube_copy(AR[b], cube) + pe * w * 2, acc, H)
        if P > 1:
            tl.free(acc)

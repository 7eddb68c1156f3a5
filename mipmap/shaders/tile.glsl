// The tile pass shared by the fast tiled kernel and the single-pass downsampler
// (model: mipmap/tiled_model.py, tile_pass).
shared VAL exchange[256];

uvec2 morton(uint i) {
    uint x = (i & 1u) | ((i >> 1) & 2u) | ((i >> 2) & 4u) | ((i >> 3) & 8u);
    uint y = ((i >> 1) & 1u) | ((i >> 2) & 2u) | ((i >> 3) & 4u) | ((i >> 4) & 8u);
    return uvec2(x, y);
}

// reduce4 of the four level-`src` texels under output o; partners past the edge replaced
VAL combine(uint src, ivec2 o, VAL tl, VAL tr, VAL bl, VAL br) {
#if CLAMP_EDGES
    if (clampLevel(src)) {
        ivec2 s = levelSize(src);
        if (2 * o.x + 1 >= s.x) { tr = tl; br = bl; }
        if (2 * o.y + 1 >= s.y) { bl = tl; br = tr; }
    }
#endif
    return reduce4(tl, tr, bl, br);
}

VAL quadAt(uint level, ivec2 p1) {
    ivec2 b = 2 * p1;
    return reduce4(loadTexel(level, b), loadTexel(level, b + ivec2(1, 0)),
                   loadTexel(level, b + ivec2(0, 1)), loadTexel(level, b + ivec2(1, 1)));
}

// Levels L+1 .. L+M of the tile at `origin`, a 2^M square of level L (M <= 5: the fast
// kernel's team of 4^(M-1) invocations, one level-L+1 texel each). i: index in the team (a
// power-of-4 run of invocations); every invocation must call this.
void tilePass(uint L, uint M, uint i, ivec2 origin, bool live, uint local) {
    ivec2 c = (origin >> 1) + ivec2(morton(i));
    CODE k;
    VAL cur = quantise(quadAt(L, c), k);
    if (live) storeCode(L + 1u, c, k);
    uint cl = L + 1u;
    for (uint s = 0u; s + 1u < M; ++s) {
        uint step = 1u << (2u * s);
        VAL n1, n2, n3;
#if USE_SHUFFLE
        if (4u * step <= SUBGROUP_SIZE) {
            n1 = subgroupShuffleXor(cur, step);
            n2 = subgroupShuffleXor(cur, 2u * step);
            n3 = subgroupShuffleXor(cur, 3u * step);
        } else
#endif
        {
            barrier();
            exchange[local] = cur;
            barrier();
            n1 = exchange[local ^ step];
            n2 = exchange[local ^ (2u * step)];
            n3 = exchange[local ^ (3u * step)];
        }
        c >>= 1;
        VAL v = quantise(combine(cl, c, cur, n1, n2, n3), k);
        cl += 1u;
        if ((i & (4u * step - 1u)) == 0u) {
            cur = v;
            if (live) storeCode(cl, c, k);
        }
    }
}

// 16 x 16 quadrant k (0..3) of a 32 x 32 square
ivec2 quadrant(uint k) { return ivec2(int(k & 1u), int(k >> 1)) << 4; }

VAL pick4(VAL a, VAL b, VAL c, VAL d, uint k) {
    return k == 0u ? a : (k == 1u ? b : (k == 2u ? c : d));
}

// Levels L+1 .. L+M (M <= 6) of the 64 x 64 tile of level L at `origin`, by the 256
// invocations of a workgroup (the fast kernel's M = 6 pass and the single-pass
// downsampler), in the manner of AMD's SPD (model: mipmap/tiled_model.py, tile64_pass):
// * L+1: invocation l, at t = morton(l) in a 16 x 16 square, makes texel t of each of the
//   four 16 x 16 quadrants of the 32 x 32 level-L+1 tile: a warp's load covers a compact
//   block (a 4x4 block per invocation, as before, spread a warp's loads over a 32 x 16
//   region), and all 16 loads come before the first store, which could alias them;
// * L+2: each of four lanes l ^ 0..3 (a 2x2 of t) holds a 2x2 of every quadrant; lane
//   j = l & 3 makes quadrant j's texel from its partners' quadrant-j values, so every
//   invocation makes one texel and nothing is computed twice;
// * L+3: the usual xor stage over lanes l ^ 4, 8, 12;
// * L+4 .. L+6: the level-L+3 texels go to shared memory once; 16 invocations of one
//   subgroup make L+4 from there and L+5, L+6 by shuffles among themselves, with no
//   further barrier (without shuffles, or in subgroups under 16: the invocations a level
//   needs, 16, 4, 1, read their children in shared memory, a barrier per level). No lane
//   rounds a value another lane also rounds (8-bit encodes are the expensive part).
void tile64Pass(uint L, uint M, ivec2 origin, bool live, uint local) {
    ivec2 t = ivec2(morton(local));
    ivec2 o1 = origin >> 1;
    VAL q0 = quadAt(L, o1 + quadrant(0u) + t);
    VAL q1 = quadAt(L, o1 + quadrant(1u) + t);
    VAL q2 = quadAt(L, o1 + quadrant(2u) + t);
    VAL q3 = quadAt(L, o1 + quadrant(3u) + t);
    CODE k0, k1, k2, k3;
    q0 = quantise(q0, k0);
    q1 = quantise(q1, k1);
    q2 = quantise(q2, k2);
    q3 = quantise(q3, k3);
    if (live) {
        storeCode(L + 1u, o1 + quadrant(0u) + t, k0);
        storeCode(L + 1u, o1 + quadrant(1u) + t, k1);
        storeCode(L + 1u, o1 + quadrant(2u) + t, k2);
        storeCode(L + 1u, o1 + quadrant(3u) + t, k3);
    }
    if (M < 2u) return;
    // L+2: g[m], the quadrant-j value of lane l ^ m, is the child at position j ^ m
    uint j = local & 3u;
    VAL g0 = pick4(q0, q1, q2, q3, j), g1, g2, g3;
#if USE_SHUFFLE
    if (4u <= SUBGROUP_SIZE) {
        g1 = subgroupShuffleXor(pick4(q0, q1, q2, q3, j ^ 1u), 1u);
        g2 = subgroupShuffleXor(pick4(q0, q1, q2, q3, j ^ 2u), 2u);
        g3 = subgroupShuffleXor(pick4(q0, q1, q2, q3, j ^ 3u), 3u);
    } else
#endif
    {
        // one round per quadrant k: every lane publishes its quadrant-k value, lane k of
        // each group of four takes its partners'
        g1 = g0; g2 = g0; g3 = g0;
        for (uint k = 0u; k < 4u; ++k) {
            barrier();
            exchange[local] = pick4(q0, q1, q2, q3, k);
            barrier();
            if (j == k) {
                g1 = exchange[local ^ 1u];
                g2 = exchange[local ^ 2u];
                g3 = exchange[local ^ 3u];
            }
        }
    }
    ivec2 c = (origin >> 2) + (quadrant(j) >> 1) + ivec2(morton(local >> 2));
    CODE k;
    VAL cur = quantise(combine(L + 1u, c, pick4(g0, g1, g2, g3, j), pick4(g0, g1, g2, g3, j ^ 1u),
                               pick4(g0, g1, g2, g3, j ^ 2u), pick4(g0, g1, g2, g3, j ^ 3u)), k);
    if (live) storeCode(L + 2u, c, k);
    if (M < 3u) return;
    // L+3: partners l ^ 4 (right), l ^ 8 (below), l ^ 12; writers: bits 2 and 3 clear
    VAL n1, n2, n3;
#if USE_SHUFFLE
    if (16u <= SUBGROUP_SIZE) {
        n1 = subgroupShuffleXor(cur, 4u);
        n2 = subgroupShuffleXor(cur, 8u);
        n3 = subgroupShuffleXor(cur, 12u);
    } else
#endif
    {
        barrier();
        exchange[local] = cur;
        barrier();
        n1 = exchange[local ^ 4u];
        n2 = exchange[local ^ 8u];
        n3 = exchange[local ^ 12u];
    }
    c >>= 1;
    cur = quantise(combine(L + 2u, c, cur, n1, n2, n3), k);
    bool writer = (local & 12u) == 0u;
    if (live && writer) storeCode(L + 3u, c, k);
    if (M < 4u) return;
    // L+4 ..: gather. The level-L+3 texel at p (8 x 8 tile) goes to exchange[p.y * 8 + p.x];
    // level n's texel p (tile edge e) is made by invocation p.y * e + p.x from the children
    // in the previous level's slots (offset `src`); results go to offset `dst`.
    barrier();
    if (writer) {
        ivec2 p = c - (origin >> 3);
        exchange[p.y * 8 + p.x] = cur;
    }
#if USE_SHUFFLE
    if (SUBGROUP_SIZE >= 16u) {
        // one subgroup finishes: 16 invocations make L+4 from shared memory, L+5 and L+6
        // by shuffles among them (l ^ 1, 2, 3, then l ^ 4, 8, 12); no further barrier
        barrier();
        if (local < 16u) {
            ivec2 p = ivec2(morton(local));
            uint b = uint(16 * p.y + 2 * p.x);
            ivec2 o = (origin >> 4) + p;
            VAL v = quantise(combine(L + 3u, o, exchange[b], exchange[b + 1u], exchange[b + 8u], exchange[b + 9u]), k);
            if (live) storeCode(L + 4u, o, k);
            if (M >= 5u) {
                VAL n1 = subgroupShuffleXor(v, 1u), n2 = subgroupShuffleXor(v, 2u), n3 = subgroupShuffleXor(v, 3u);
                o >>= 1;
                v = quantise(combine(L + 4u, o, v, n1, n2, n3), k);
                if (live && (local & 3u) == 0u) storeCode(L + 5u, o, k);
                if (M >= 6u) {
                    n1 = subgroupShuffleXor(v, 4u); n2 = subgroupShuffleXor(v, 8u); n3 = subgroupShuffleXor(v, 12u);
                    o >>= 1;
                    v = quantise(combine(L + 5u, o, v, n1, n2, n3), k);
                    if (live && local == 0u) storeCode(L + 6u, o, k);
                }
            }
        }
        return;
    }
#endif
    uint src = 0u, dst = 64u;
    for (uint n = 4u; n <= M; ++n) {
        barrier();
        int e = 64 >> int(n);           // this level's tile edge: 4, 2, 1
        if (local < uint(e * e)) {
            ivec2 p = ivec2(int(local) % e, int(local) / e);
            uint b = src + uint(2 * p.y * 2 * e + 2 * p.x);
            ivec2 o = (origin >> int(n)) + p;
            VAL v = quantise(combine(L + n - 1u, o, exchange[b], exchange[b + 1u],
                                     exchange[b + uint(2 * e)], exchange[b + uint(2 * e) + 1u]), k);
            if (live) storeCode(L + n, o, k);
            exchange[dst + local] = v;
        }
        uint tmp = src; src = dst; dst = tmp;
    }
}

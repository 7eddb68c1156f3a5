// The tile pass shared by the fast tiled kernel and the single-pass downsampler
// (model: mipmap/tiled_model.py, tile_pass).
shared vec4 exchange[256];

uvec2 morton(uint i) {
    uint x = (i & 1u) | ((i >> 1) & 2u) | ((i >> 2) & 4u) | ((i >> 3) & 8u);
    uint y = ((i >> 1) & 1u) | ((i >> 2) & 2u) | ((i >> 3) & 4u) | ((i >> 4) & 8u);
    return uvec2(x, y);
}

// reduce4 of the four level-`src` texels under output o; partners past the edge replaced
vec4 combine(uint src, ivec2 o, vec4 tl, vec4 tr, vec4 bl, vec4 br) {
#if CLAMP_EDGES
    ivec2 s = levelSize(src);
    if (2 * o.x + 1 >= s.x) { tr = tl; br = bl; }
    if (2 * o.y + 1 >= s.y) { bl = tl; br = tr; }
#endif
    return reduce4(tl, tr, bl, br);
}

vec4 quadAt(uint level, ivec2 p1) {
    ivec2 b = 2 * p1;
    return reduce4(loadTexel(level, b), loadTexel(level, b + ivec2(1, 0)),
                   loadTexel(level, b + ivec2(0, 1)), loadTexel(level, b + ivec2(1, 1)));
}

// Levels L+1 .. L+M of the tile at `origin` (a 2^M square of level L, or 64x64 for pre 2).
// i: index in the team (a power-of-4 run of invocations); every invocation must call this.
void tilePass(uint L, uint M, uint pre, uint i, ivec2 origin, bool live, uint local) {
    ivec2 t = ivec2(morton(i));
    vec4 cur = vec4(0.0);
    ivec2 c;
    uint cl;
    if (pre == 1u) {
        c = (origin >> 1) + t;
        cur = roundtrip(quadAt(L, c));
        if (live) storeTexel(L + 1u, c, cur);
        cl = L + 1u;
    } else {
        c = (origin >> 2) + t;
        vec4 s00 = roundtrip(quadAt(L, 2 * c));
        vec4 s10 = roundtrip(quadAt(L, 2 * c + ivec2(1, 0)));
        vec4 s01 = roundtrip(quadAt(L, 2 * c + ivec2(0, 1)));
        vec4 s11 = roundtrip(quadAt(L, 2 * c + ivec2(1, 1)));
        if (live) {
            storeTexel(L + 1u, 2 * c, s00);
            storeTexel(L + 1u, 2 * c + ivec2(1, 0), s10);
            storeTexel(L + 1u, 2 * c + ivec2(0, 1), s01);
            storeTexel(L + 1u, 2 * c + ivec2(1, 1), s11);
        }
        cl = L + 1u;
        if (M >= 2u) {
            cur = roundtrip(combine(cl, c, s00, s10, s01, s11));
            cl += 1u;
            if (live) storeTexel(cl, c, cur);
        }
    }
    for (uint s = 0u; s + pre < M; ++s) {
        uint step = 1u << (2u * s);
        vec4 n1, n2, n3;
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
        vec4 v = roundtrip(combine(cl, c, cur, n1, n2, n3));
        cl += 1u;
        if ((i & (4u * step - 1u)) == 0u) {
            cur = v;
            if (live) storeTexel(cl, c, v);
        }
    }
}

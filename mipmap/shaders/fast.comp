#version 450
#extension GL_GOOGLE_include_directive : require
// Fast tiled kernel: M = MAIN_LEVELS levels from 2^M x 2^M tiles of level pc.inputLevel;
// then, with HAS_TAIL, the last workgroup makes the remaining levels.
#define LOCAL_SIZE 256u
layout(local_size_x = 256) in;
#define CLAMP_EDGES 0
#include "common.glsl"
#include "tile.glsl"

// v from the invocation local ^ m (m < 32: the same 32-invocation run): a subgroup shuffle
// where the subgroup holds both, else through shared memory. Uniform control flow only.
vec4 xorPartner(vec4 v, uint m, uint local) {
#if USE_SHUFFLE
    if (m < SUBGROUP_SIZE) return subgroupShuffleXor(v, m);
#endif
    barrier();
    exchange[local] = v;
    barrier();
    return exchange[local ^ m];
}

// The 2x2 box of an output from its two columns: a = (TL + BL) / 2 in the left invocation,
// (TR + BR) / 2 in its partner local ^ m. reduce4's arithmetic exactly ((x + y) == (y + x)
// in IEEE arithmetic, so both partners get the same value).
vec4 across(vec4 a, uint m, uint local) {
    precise vec4 r = (a + xorPartner(a, m, local)) * 0.5;
    return r;
}
vec4 down(vec4 top, vec4 bottom) {
    precise vec4 r = (top + bottom) * 0.5;
    return r;
}

// M = 6, the same outputs as tilePass(L, 6, 2, ...) (model: tiled_model.tile_pass), with
// coalesced level-L reads: 32 invocations read 32 consecutive texels of a row (tilePass's
// 4x4 blocks per invocation touch four times the cache sectors per load instruction).
// Warp w covers columns (w & 1) * 32 .. + 31 and rows (w >> 1) * 16 .. + 15 of the 64x64
// tile; each invocation reduces its column pair vertically and its partners (lane ^ 1, 2, 4, 8)
// complete each level horizontally; levels L+5 and L+6 through shared memory.
void rowsPass(uint L, ivec2 origin, bool live, uint local) {
    uint lane = local & 31u, warp = local >> 5;
    ivec2 base = origin + ivec2(int((warp & 1u) * 32u + lane), int((warp >> 1) * 16u));
    vec4 v3[2];
    vec4 v2prev = vec4(0.0);
    for (uint k = 0u; k < 4u; ++k) {
        vec4 v1[2];
        for (uint j = 0u; j < 2u; ++j) {
            uint r = 2u * k + j;
            ivec2 p = base + ivec2(0, int(2u * r));
            v1[j] = roundtrip(across(down(loadTexel(L, p), loadTexel(L, p + ivec2(0, 1))), 1u, local));
            if (live && (lane & 1u) == 0u) storeTexel(L + 1u, ivec2(base.x >> 1, (base.y >> 1) + int(r)), v1[j]);
        }
        vec4 v2 = roundtrip(across(down(v1[0], v1[1]), 2u, local));
        if (live && (lane & 3u) == 0u) storeTexel(L + 2u, ivec2(base.x >> 2, (base.y >> 2) + int(k)), v2);
        if ((k & 1u) == 1u) {
            v3[k >> 1] = roundtrip(across(down(v2prev, v2), 4u, local));
            if (live && (lane & 7u) == 0u)
                storeTexel(L + 3u, ivec2(base.x >> 3, (base.y >> 3) + int(k >> 1)), v3[k >> 1]);
        }
        v2prev = v2;
    }
    vec4 v4 = roundtrip(across(down(v3[0], v3[1]), 8u, local));
    ivec2 p4 = ivec2(base.x >> 4, base.y >> 4);
    if (live && (lane & 15u) == 0u) storeTexel(L + 4u, p4, v4);
    // level L+4 of the tile is 4x4: row warp >> 1, columns (warp & 1) * 2 + lane / 16
    barrier();
    if ((lane & 15u) == 0u) exchange[(warp >> 1) * 4u + (warp & 1u) * 2u + (lane >> 4)] = v4;
    barrier();
    vec4 v5 = vec4(0.0);
    if (local < 4u) {
        uint px = local & 1u, py = local >> 1;
        uint t = 2u * py * 4u + 2u * px;
        v5 = roundtrip(reduce4(exchange[t], exchange[t + 1u], exchange[t + 4u], exchange[t + 5u]));
        if (live) storeTexel(L + 5u, (origin >> 5) + ivec2(int(px), int(py)), v5);
        exchange[16u + local] = v5;
    }
    barrier();
    if (local == 0u) {
        vec4 v6 = roundtrip(reduce4(exchange[16], exchange[17], exchange[18], exchange[19]));
        if (live) storeTexel(L + 6u, origin >> 6, v6);
    }
}

void main() {
    loadTables();
    uint L = pc.inputLevel;
    const uint M = MAIN_LEVELS;
    const uint pre = M == 6u ? 2u : 1u;
    const uint teamLog = 2u * (M - pre);
    uint gid = flatWorkgroup() * 256u + gl_LocalInvocationIndex;
    uint team = gid >> teamLog;
    uint i = gid & ((1u << teamLog) - 1u);
    ivec2 size = levelSize(L);
    uint tilesX = uint(size.x) >> M;
    uint tilesY = uint(size.y) >> M;
    ivec2 origin = ivec2(team % tilesX, team / tilesX) << M;
    bool live = team / tilesX < tilesY;
    if (M == 6u) rowsPass(L, origin, live, gl_LocalInvocationIndex);
    else tilePass(L, M, pre, i, origin, live, gl_LocalInvocationIndex);
    if (HAS_TAIL != 0u && arriveLast()) tailChain(L + M, pc.tailLevels);
}

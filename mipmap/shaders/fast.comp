#version 450
#extension GL_GOOGLE_include_directive : require
// Fast tiled kernel: M = MAIN_LEVELS levels from 2^M x 2^M tiles of level INPUT_LEVEL;
// then, with HAS_TAIL, the last workgroup makes the remaining levels.
#define LOCAL_SIZE 256u
layout(local_size_x = 256) in;
#define CLAMP_EDGES 0
// the 2x2 box is this kernel's only filter: RGBA8 computes on packed codes (common.glsl)
#define PACKED_BOX 1
#include "common.glsl"
#include "tile.glsl"

void main() {
    loadTables();
    uint L = INPUT_LEVEL;
    const uint M = MAIN_LEVELS;
    // a team of 4^(M-1) invocations per 2^M tile; M = 6: the workgroup's 64 x 64 tile
    const uint teamLog = M == 6u ? 8u : 2u * (M - 1u);
    uint gid = flatWorkgroup() * 256u + gl_LocalInvocationIndex;
    uint team = gid >> teamLog;
    uint i = gid & ((1u << teamLog) - 1u);
    ivec2 size = levelSize(L);
    uint tilesX = uint(size.x) >> M;
    uint tilesY = uint(size.y) >> M;
    ivec2 origin = ivec2(team % tilesX, team / tilesX) << M;
    bool live = team / tilesX < tilesY;
    if (M == 1u) {
        // one output texel per invocation, 16x16 outputs per workgroup (not a row of 256):
        // the access pattern of bench/mipmap_sol.py's down1
        uint blocksX = (tilesX + 15u) >> 4;
        uint wg = flatWorkgroup();
        uint l = gl_LocalInvocationIndex;
        uvec2 o = uvec2((wg % blocksX) * 16u + (l & 15u), (wg / blocksX) * 16u + (l >> 4));
        origin = ivec2(o) << 1;
        live = o.x < tilesX && o.y < tilesY;
    }
    if (M == 6u && PERSISTENT != 0u) {
        // tiles g, g + G, ... (uniform in the workgroup); whole tiles only
        for (uint t = flatWorkgroup(); t < tilesX * tilesY; t += groupCount())
            tile64Pass(L, M, ivec2(int(t % tilesX), int(t / tilesX)) << 6, true, gl_LocalInvocationIndex);
    } else if (M == 6u)
        tile64Pass(L, M, origin, live, gl_LocalInvocationIndex);
    else
        tilePass(L, M, i, origin, live, gl_LocalInvocationIndex);
    if (HAS_TAIL != 0u && arriveLast(false)) tailChain(L + M, pc.tailLevels);
}

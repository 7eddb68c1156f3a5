#version 450
#extension GL_GOOGLE_include_directive : require
// Fast tiled kernel: M = MAIN_LEVELS levels from 2^M x 2^M tiles of level pc.inputLevel;
// then, with HAS_TAIL, the last workgroup makes the remaining levels.
#define LOCAL_SIZE 256u
layout(local_size_x = 256) in;
#define CLAMP_EDGES 0
#include "common.glsl"
#include "tile.glsl"

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
    tilePass(L, M, pre, i, origin, team / tilesX < tilesY, gl_LocalInvocationIndex);
    if (HAS_TAIL != 0u && arriveLast()) tailChain(L + M, pc.tailLevels);
}

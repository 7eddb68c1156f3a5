#version 450
#extension GL_GOOGLE_include_directive : require
// Single-pass downsampler: one dispatch of ceil(w/64) x ceil(h/64) workgroups; the last
// workgroup to finish level 6 makes levels 7.. (model: mipmap/spd_model.py).
layout(local_size_x = 256) in;
#define COHERENT coherent
#define CLAMP_EDGES 1
#include "common.glsl"
#include "tile.glsl"

layout(set = 0, binding = 2, std430) coherent buffer Counter { uint arrived; };
shared uint lastGroup;

void main() {
    uint local = gl_LocalInvocationIndex;
    uint mainLevels = min(6u, pc.levelCount);
    uint tailLevels = pc.levelCount - mainLevels;
    tilePass(0u, mainLevels, 2u, local, ivec2(gl_WorkGroupID.xy) * 64, true, local);
    if (tailLevels == 0u) return;
    memoryBarrierImage();
    barrier();
    if (local == 0u) {
        uint groups = gl_NumWorkGroups.x * gl_NumWorkGroups.y;
        lastGroup = atomicAdd(arrived, 1u) == groups - 1u ? 1u : 0u;
    }
    barrier();
    if (lastGroup == 0u) return;
    memoryBarrierImage();
    tilePass(6u, tailLevels, 2u, local, ivec2(0), true, local);
}

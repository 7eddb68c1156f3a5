#version 450
#extension GL_GOOGLE_include_directive : require
// The quad kernel of the tiled plan (plan.tiled_plan's quad): seven levels of a 128 x 128
// tile of level INPUT_LEVEL per workgroup of 1024 invocations: each quarter of the workgroup
// makes the six levels of one 64 x 64 tile (the single pass's 64 x 64 pass), and invocation 0
// makes the seventh from the four tiles' last texels in shared memory, behind a barrier.
#define LOCAL_SIZE 1024u
layout(local_size_x = 1024) in;
#define CLAMP_EDGES 1
#define PACKED_BOX 1
#define QUADS 4
#include "common.glsl"
#include "tile.glsl"

void main() {
    loadTables();
    uint q = gl_LocalInvocationIndex >> 8;
    xbase = q << 8;
    ivec2 wg = ivec2(gl_WorkGroupID.xy);
    tile64Pass(INPUT_LEVEL, MAIN_LEVELS, wg * 128 + ivec2(int(q & 1u), int(q >> 1)) * 64, true,
               gl_LocalInvocationIndex & 255u);
    barrier();
    if (gl_LocalInvocationIndex == 0u) {
        CODE k;
        quantise(reduce4(quadLast[0], quadLast[1], quadLast[2], quadLast[3]), k);
        storeCode(INPUT_LEVEL + MAIN_LEVELS + 1u, wg, k);
    }
}

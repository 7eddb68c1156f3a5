#version 450
#extension GL_GOOGLE_include_directive : require
// Single-pass downsampler: one dispatch of ceil(w/64) x ceil(h/64) workgroups; the last
// workgroup to finish level 6 makes levels 7.. (model: mipmap/spd_model.py). Also the tiled
// plan's small fast dispatches of whole 64 x 64 tiles that hand off (gpu.record_tiled).
// Only level 6 and beyond go through the coherent binding (pc.handoff = 6).
#define LOCAL_SIZE 256u
layout(local_size_x = 256) in;
#define CLAMP_EDGES 1
// the 2x2 box is this kernel's only filter: RGBA8 computes on packed codes (common.glsl)
#define PACKED_BOX 1
#include "common.glsl"
#include "tile.glsl"

void main() {
    loadTables();
    uint local = gl_LocalInvocationIndex;
    // INPUT_LEVEL 0; 6 in spd-split's second dispatch (one workgroup: level 6 as one tile)
    if (PERSISTENT != 0u) {
        // tiles g, g + G, ...: the loop bound depends on the workgroup only (uniform)
        ivec2 s = levelSize(INPUT_LEVEL);
        uint tilesX = (uint(s.x) + 63u) >> 6;
        uint tiles = tilesX * ((uint(s.y) + 63u) >> 6);
        for (uint t = flatWorkgroup(); t < tiles; t += groupCount())
            tile64Pass(INPUT_LEVEL, MAIN_LEVELS, ivec2(int(t % tilesX), int(t / tilesX)) * 64, true, local);
    } else {
        tile64Pass(INPUT_LEVEL, MAIN_LEVELS, ivec2(gl_WorkGroupID.xy) * 64, true, local);
    }
    // the last workgroup: the level after the main pass (at most 64 x 64) as one tile
    if (HAS_TAIL != 0u && arriveLast(true))
        tile64Pass(INPUT_LEVEL + MAIN_LEVELS, pc.tailLevels, ivec2(0), true, local);
}

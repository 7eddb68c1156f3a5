#version 450
#extension GL_GOOGLE_include_directive : require
// General kernel (any size): MAIN_LEVELS = 1 or 2 levels of the exact box filter; then,
// with HAS_TAIL, the last workgroup makes the remaining levels
// (model: mipmap/tiled_model.py, general_pass and tail_pass).
#define LOCAL_SIZE 128u
layout(local_size_x = 128) in;
#define CLAMP_EDGES 0
#include "common.glsl"

#define TILE 8
#define SHARED_EDGE 17
shared VAL tileL1[SHARED_EDGE * SHARED_EDGE];

VAL sharedAt(int x, int y) { return tileL1[min(y, SHARED_EDGE - 1) * SHARED_EDGE + min(x, SHARED_EDGE - 1)]; }

// one level: one invocation per output texel
void onePass(uint L, uint wg, uint local) {
    ivec2 s1 = levelSize(L + 1u);
    uint gid = wg * 128u + local;
    if (gid < uint(s1.x * s1.y)) {
        ivec2 p = ivec2(gid % uint(s1.x), gid / uint(s1.x));
        storeTexel(L + 1u, p, filterAt(L, p));
    }
}

// two levels: the 8x8 tile of L+2 from the (up to) 17x17 tile of L+1 under it
void twoPass(uint L, uint wg, uint local) {
    ivec2 s1 = levelSize(L + 1u);
    ivec2 s2 = levelSize(L + 2u);
    uint gx = (uint(s2.x) + TILE - 1u) / TILE;
    uint gy = (uint(s2.y) + TILE - 1u) / TILE;
    bool inGrid = wg < gx * gy;  // padding workgroups of a 2D grid do nothing (but still arrive)
    ivec2 o2 = ivec2(wg % gx, wg / gx) * TILE;
    ivec2 o1 = 2 * o2;
    uint kx1 = kernelSize(s1.x), ky1 = kernelSize(s1.y);
    int rx = 2 * (TILE - 1) + int(kx1), ry = 2 * (TILE - 1) + int(ky1);
    for (uint idx = local; inGrid && idx < SHARED_EDGE * SHARED_EDGE; idx += 128u) {
        int ix = int(idx % SHARED_EDGE), iy = int(idx / SHARED_EDGE);
        ivec2 p = o1 + ivec2(ix, iy);
        if (ix < rx && iy < ry && p.x < s1.x && p.y < s1.y) {
            CODE k;
            VAL v = quantise(filterAt(L, p), k);
            storeCode(L + 1u, p, k);
            tileL1[idx] = v;
        }
    }
    barrier();
    if (inGrid && local < TILE * TILE) {
        int ox = int(local % TILE), oy = int(local / TILE);
        ivec2 p2 = o2 + ivec2(ox, oy);
        if (p2.x < s2.x && p2.y < s2.y) {
            int bx = kx1 > 1u ? 2 * ox : ox, by = ky1 > 1u ? 2 * oy : oy;
            VAL col[3];
            for (uint c = 0u; c < 3u; ++c) {
                if (c < kx1) {
                    VAL v0 = sharedAt(bx + int(c), by);
                    VAL v1 = ky1 > 1u ? sharedAt(bx + int(c), by + 1) : v0;
                    VAL v2 = ky1 > 2u ? sharedAt(bx + int(c), by + 2) : v0;
                    col[c] = taps(v0, v1, v2, ky1, p2.y, s1.y);
                } else {
                    col[c] = col[0];
                }
            }
            storeTexel(L + 2u, p2, taps(col[0], col[1], col[2], kx1, p2.x, s1.x));
        }
    }
}

void main() {
    loadTables();
    uint L = INPUT_LEVEL;
    uint wg = flatWorkgroup();
    if (MAIN_LEVELS == 1u) onePass(L, wg, gl_LocalInvocationIndex);
    else twoPass(L, wg, gl_LocalInvocationIndex);
    if (HAS_TAIL != 0u && arriveLast(false)) tailChain(L + MAIN_LEVELS, pc.tailLevels);
}

#version 450
#extension GL_GOOGLE_include_directive : require
// General kernel (any size): 1 or 2 levels of the exact box filter
// (model: mipmap/tiled_model.py, general_pass).
layout(local_size_x = 128) in;
#define COHERENT
#define CLAMP_EDGES 0
#include "common.glsl"

#define TILE 8
#define SHARED_EDGE 17
shared vec4 tileL1[SHARED_EDGE * SHARED_EDGE];

vec4 filterAt(uint L, ivec2 p) {
    ivec2 d = levelSize(L);
    uint kx = kernelSize(d.x), ky = kernelSize(d.y);
    ivec2 s = ivec2(kx > 1u ? 2 * p.x : p.x, ky > 1u ? 2 * p.y : p.y);
    vec4 col[3];
    for (uint c = 0u; c < 3u; ++c) {
        if (c < kx) {
            ivec2 q = s + ivec2(c, 0);
            vec4 v0 = loadTexel(L, q);
            vec4 v1 = ky > 1u ? loadTexel(L, q + ivec2(0, 1)) : v0;
            vec4 v2 = ky > 2u ? loadTexel(L, q + ivec2(0, 2)) : v0;
            col[c] = taps(v0, v1, v2, ky, p.y, d.y);
        } else {
            col[c] = col[0];
        }
    }
    return taps(col[0], col[1], col[2], kx, p.x, d.x);
}

vec4 sharedAt(int x, int y) { return tileL1[min(y, SHARED_EDGE - 1) * SHARED_EDGE + min(x, SHARED_EDGE - 1)]; }

void main() {
    uint L = pc.inputLevel;
    uint local = gl_LocalInvocationIndex;
    uint wg = flatWorkgroup();
    ivec2 s1 = levelSize(L + 1u);
    if (pc.levelCount == 1u) {
        uint gid = wg * 128u + local;
        if (gid >= uint(s1.x * s1.y)) return;
        ivec2 p = ivec2(gid % uint(s1.x), gid / uint(s1.x));
        storeTexel(L + 1u, p, roundtrip(filterAt(L, p)));
        return;
    }
    ivec2 s2 = levelSize(L + 2u);
    uint gx = (uint(s2.x) + TILE - 1u) / TILE;
    uint gy = (uint(s2.y) + TILE - 1u) / TILE;
    if (wg >= gx * gy) return;  // padding workgroup of a 2D grid: the whole group leaves
    ivec2 o2 = ivec2(wg % gx, wg / gx) * TILE;
    ivec2 o1 = 2 * o2;
    uint kx1 = kernelSize(s1.x), ky1 = kernelSize(s1.y);
    int rx = 2 * (TILE - 1) + int(kx1), ry = 2 * (TILE - 1) + int(ky1);
    for (uint idx = local; idx < SHARED_EDGE * SHARED_EDGE; idx += 128u) {
        int ix = int(idx % SHARED_EDGE), iy = int(idx / SHARED_EDGE);
        ivec2 p = o1 + ivec2(ix, iy);
        if (ix < rx && iy < ry && p.x < s1.x && p.y < s1.y) {
            vec4 v = roundtrip(filterAt(L, p));
            storeTexel(L + 1u, p, v);
            tileL1[idx] = v;
        }
    }
    barrier();
    if (local < TILE * TILE) {
        int ox = int(local % TILE), oy = int(local / TILE);
        ivec2 p2 = o2 + ivec2(ox, oy);
        if (p2.x < s2.x && p2.y < s2.y) {
            int bx = kx1 > 1u ? 2 * ox : ox, by = ky1 > 1u ? 2 * oy : oy;
            vec4 col[3];
            for (uint c = 0u; c < 3u; ++c) {
                if (c < kx1) {
                    vec4 v0 = sharedAt(bx + int(c), by);
                    vec4 v1 = ky1 > 1u ? sharedAt(bx + int(c), by + 1) : v0;
                    vec4 v2 = ky1 > 2u ? sharedAt(bx + int(c), by + 2) : v0;
                    col[c] = taps(v0, v1, v2, ky1, p2.y, s1.y);
                } else {
                    col[c] = col[0];
                }
            }
            storeTexel(L + 2u, p2, roundtrip(taps(col[0], col[1], col[2], kx1, p2.x, s1.x)));
        }
    }
}

#version 450
// pseudo-random level-0 contents (a hash of the coordinates), written on the GPU so that no
// 512 MiB upload is needed; floats in [0.05, 0.95] as mipmap.formats.random_level0
#extension GL_GOOGLE_include_directive : require
#include "sol.glsl"
layout(set = 0, binding = 0, QUAL) uniform writeonly IMAGE dst;

uint hash(uint x) {
    x ^= x >> 16; x *= 0x7feb352du; x ^= x >> 15; x *= 0x846ca68bu; x ^= x >> 16;
    return x;
}

void main() {
    uvec2 p = gl_GlobalInvocationID.xy;
    if (any(greaterThanEqual(p, pc.grid))) return;
    uint h = hash(p.x * 0x9E3779B1u ^ hash(p.y + 0x632BE5ABu));
    uvec4 bytes = (uvec4(h) >> uvec4(0u, 8u, 16u, 24u)) & 255u;
#if defined(FMT_RGBA8)
    imageStore(dst, ivec2(p), bytes);
#else
    imageStore(dst, ivec2(p), vec4(bytes) * (0.9 / 255.0) + 0.05);
#endif
}

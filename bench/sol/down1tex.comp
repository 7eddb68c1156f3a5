#version 450
// down1 with the reads through the texture path: texelFetch of a combined image sampler
// (NEAREST; texelFetch ignores it), the write an imageStore as in down1
#extension GL_GOOGLE_include_directive : require
#include "sol.glsl"
layout(set = 0, binding = 0) uniform SAMPLER src;
layout(set = 0, binding = 1, QUAL) uniform writeonly IMAGE dst;

void main() {
    uvec2 p = gl_GlobalInvocationID.xy;
    if (any(greaterThanEqual(p, pc.grid))) return;
    ivec2 q = ivec2(2u * p);
    TEXEL a = texelFetch(src, q, 0);
    TEXEL b = texelFetch(src, q + ivec2(1, 0), 0);
    TEXEL c = texelFetch(src, q + ivec2(0, 1), 0);
    TEXEL d = texelFetch(src, q + ivec2(1, 1), 0);
    imageStore(dst, ivec2(p), AVG4(a, b, c, d));
}

#version 450
// level 0 -> level 1 by the 2x2 box filter, one output texel per invocation, four imageLoads
#extension GL_GOOGLE_include_directive : require
#include "sol.glsl"
layout(set = 0, binding = 0, QUAL) uniform readonly IMAGE src;
layout(set = 0, binding = 1, QUAL) uniform writeonly IMAGE dst;

void main() {
    uvec2 p = gl_GlobalInvocationID.xy;
    if (any(greaterThanEqual(p, pc.grid))) return;
    ivec2 q = ivec2(2u * p);
    TEXEL a = imageLoad(src, q);
    TEXEL b = imageLoad(src, q + ivec2(1, 0));
    TEXEL c = imageLoad(src, q + ivec2(0, 1));
    TEXEL d = imageLoad(src, q + ivec2(1, 1));
    imageStore(dst, ivec2(p), AVG4(a, b, c, d));
}

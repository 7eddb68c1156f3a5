#version 450
// image -> image of the same size, one texel per invocation (imageLoad, imageStore)
#extension GL_GOOGLE_include_directive : require
#include "sol.glsl"
layout(set = 0, binding = 0, QUAL) uniform readonly IMAGE src;
layout(set = 0, binding = 1, QUAL) uniform writeonly IMAGE dst;

void main() {
    uvec2 p = gl_GlobalInvocationID.xy;
    if (any(greaterThanEqual(p, pc.grid))) return;
    imageStore(dst, ivec2(p), imageLoad(src, ivec2(p)));
}

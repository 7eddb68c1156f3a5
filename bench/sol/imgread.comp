#version 450
// read every texel of level 0, each invocation the 2x2 block down1 reads, summed in registers;
// one sum per workgroup goes to a buffer (subgroupAdd, then the subgroups' sums in shared memory)
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#include "sol.glsl"
layout(set = 0, binding = 0, QUAL) uniform readonly IMAGE src;
layout(set = 0, binding = 1, std430) writeonly buffer Sums { TEXEL sums[]; };
shared TEXEL partial[64];

void main() {
    uvec2 p = gl_GlobalInvocationID.xy;
    TEXEL s = ZERO;
    if (all(lessThan(p, pc.grid))) {
        ivec2 q = ivec2(2u * p);
        s = imageLoad(src, q) + imageLoad(src, q + ivec2(1, 0)) + imageLoad(src, q + ivec2(0, 1))
            + imageLoad(src, q + ivec2(1, 1));
    }
    s = subgroupAdd(s);
    if (subgroupElect()) partial[gl_SubgroupID] = s;
    barrier();
    if (gl_LocalInvocationIndex == 0u) {
        TEXEL t = ZERO;
        for (uint i = 0u; i < gl_NumSubgroups; ++i) t += partial[i];
        sums[gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x] = t;
    }
}

#version 450
// A streaming kernel with a mip chain's traffic mix: every invocation reads three 16-byte
// words (one from each third of the source) and writes one, so it reads 3 bytes for each
// byte written, as a chain does (level 0 read; levels 1.. written: a third of level 0).
// Grid-stride as copy.comp. The bound of any one-kernel chain of the same bytes: what the
// memory reaches with this read/write mix at that size (bench/mipmap_breakdown.py).
layout(local_size_x = 256) in;
layout(set = 0, binding = 0, std430) readonly buffer Src { uvec4 src[]; };
layout(set = 0, binding = 1, std430) writeonly buffer Dst { uvec4 dst[]; };
layout(push_constant) uniform Push { uint count; } pc;

void main() {
    uint stride = gl_NumWorkGroups.x * 256u;
    for (uint i = gl_GlobalInvocationID.x; i < pc.count; i += stride)
        dst[i] = src[i] ^ src[i + pc.count] ^ src[i + 2u * pc.count];
}

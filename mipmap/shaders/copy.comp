#version 450
// Buffer-to-buffer copy by compute invocations, 16 bytes each, grid-stride: the bandwidth
// reference of the benchmark (beside vkCmdCopyBuffer).
layout(local_size_x = 256) in;
layout(set = 0, binding = 0, std430) readonly buffer Src { uvec4 src[]; };
layout(set = 0, binding = 1, std430) writeonly buffer Dst { uvec4 dst[]; };
layout(push_constant) uniform Push { uint count; } pc;

void main() {
    uint stride = gl_NumWorkGroups.x * 256u;
    for (uint i = gl_GlobalInvocationID.x; i < pc.count; i += stride) dst[i] = src[i];
}

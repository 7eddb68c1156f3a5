#version 450
// Does this device evaluate fma() with one rounding? fma is free to round twice (Vulkan:
// its precision is inherited from a multiply followed by an add), and the 8-bit decode of
// common.glsl (decodeUnorm, FUSED_DECODE) is exact only if it rounds once. Invocation k
// writes the fused decode of code k, as common.glsl computes it; mipmap/gpu.py compares
// the 256 values with mipmap/formats.py's table and enables the fused form only if all agree.
layout(local_size_x = 256) in;
layout(set = 0, binding = 0, std430) writeonly buffer Out { float v[]; };

void main() {
    uint k = gl_LocalInvocationIndex;
    float s = uintBitsToFloat(0x3b808081u);
    precise float u = fma(uintBitsToFloat(k | 0x4b000000u), s, -8388608.0 * s);
    v[k] = u;
}

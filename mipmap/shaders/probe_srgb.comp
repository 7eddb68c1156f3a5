#version 450
// Does this device's sampler decode sRGB8 exactly as mipmap/formats.py does? The texture unit
// decodes an R8G8B8A8_SRGB texel for free, where the shaders otherwise look every colour
// channel up in a shared-memory table (the sRGB kernels' bottleneck on the H100); the chain
// stays exact only if the hardware's value of every code is the table's float32, bit for bit.
// Texel (k & 15, k >> 4) holds code k in all four channels; invocation k writes what
// texelFetch gives for it, with alpha replaced by the code it rounds back to (common.glsl,
// loadValue, recovers alpha's code that way and decodes it as UNORM_SCALE * k).
// mipmap/gpu.py compares colour with formats.srgb_lut and the alpha codes with k.
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) uniform sampler2D codes;
layout(set = 0, binding = 1, std430) writeonly buffer Out { vec4 v[]; };

void main() {
    uint k = gl_LocalInvocationIndex;
    vec4 f = texelFetch(codes, ivec2(int(k & 15u), int(k >> 4)), 0);
    v[k] = vec4(f.xyz, float(uint(f.w * 255.0 + 0.5)));
}

#version 450
// Sampling a subsampled image the way turnip's shaders do (vk_tests/replay_subsampled.py):
// tu_get_subsampled_coordinates (src/freedreno/vulkan/tu_subsampled_image.cc) with the float32
// metadata exactly as tu_emit_subsampled_metadata writes it (per layer 514 vec4: header
// (scale.xy, offset.xy), (bin_stride as uint, pad), then the bins (scale.xy, offset.xy)):
//   bin = f2u(c * hdr.scale + hdr.offset); idx = bin.y * stride + bin.x + 514 * layer + 2;
//   c' = c * bins[idx].scale + bins[idx].offset   (fma, as nir_ffma)
// then texture() of the subsampled image at c' and of the expanded (non-subsampled) image at c,
// with the same sampler settings.  Result i: res[2i] subsampled, res[2i + 1] expanded.
layout(local_size_x = 64) in;

layout(set = 0, binding = 0) uniform sampler2D sub_tex;
layout(set = 0, binding = 1) uniform sampler2D exp_tex;
layout(set = 0, binding = 2, std140) uniform Metadata { vec4 md[1028]; };  // 2 layers
layout(set = 0, binding = 3, std430) readonly buffer Points { vec2 pts[]; };
layout(set = 0, binding = 4, std430) writeonly buffer Results { vec4 res[]; };

layout(push_constant) uniform Params {
    uint count;
    uint layer;
} pc;

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= pc.count) return;
    vec2 c = pts[i];
    uint base = pc.layer * 514u;
    vec4 hdr = md[base];
    uint stride = floatBitsToUint(md[base + 1u].x);
    uvec2 bin = uvec2(fma(c, hdr.xy, hdr.zw));
    vec4 bd = md[bin.y * stride + bin.x + base + 2u];
    vec2 s = fma(c, bd.xy, bd.zw);
    res[2u * i] = textureLod(sub_tex, s, 0.0);
    res[2u * i + 1u] = textureLod(exp_tex, c, 0.0);
}

#version 450
// B18 of the fdm backend (vk_tests/fdm_backend_sampling.py): each output pixel (x, 2r + k) takes
// point i = r * 256 + x of the list, in normalized coordinates, and samples it with
// OpImageSampleImplicitLod (the only sampling defined for a subsampled sampler, no offsets):
// k = 0 the subsampled image through its immutable subsampled sampler, k = 1 the device's own
// non-subsampled image through an immutable plain sampler of the same filter and addressing.
layout(set = 0, binding = 0) uniform sampler2D subsampled;
layout(set = 0, binding = 1) uniform sampler2D expanded;
layout(set = 0, binding = 2) readonly buffer Points { vec2 pts[]; };
layout(push_constant) uniform Params {
    uint count;
} pc;

layout(location = 0) in vec2 v_viewport;
layout(location = 0) out uvec4 o_sample;  // the sample in 1/65535 (RGBA16_UINT target)

void main() {
    if (v_viewport.x < -1.0e30) discard;  // never: consumes the vertex output
    uint x = uint(gl_FragCoord.x);
    uint y = uint(gl_FragCoord.y);
    uint i = (y / 2u) * 256u + x;
    if (i >= pc.count) {
        o_sample = uvec4(0u);
        return;
    }
    vec2 p = pts[i];
    // every invocation samples both images (implicit derivatives stay defined); the row picks one
    vec4 s = texture(subsampled, p);
    vec4 e = texture(expanded, p);
    o_sample = uvec4(round(clamp((y % 2u == 0u) ? s : e, 0.0, 1.0) * 65535.0));
}

#version 450
// Readback path (b) of the fdm backend: a subsampled image cannot be copied, so a plain pass
// samples it through an immutable NEAREST / CLAMP_TO_EDGE sampler created with
// VK_SAMPLER_CREATE_SUBSAMPLED_BIT_EXT, at every pixel centre, in normalized coordinates
// (subsampled samplers forbid unnormalized ones, VUID-VkSamplerCreateInfo-flags-02580), with
// OpImageSampleImplicitLod (the only sampling instructions defined for them).
layout(set = 0, binding = 0) uniform usampler2DArray src;
layout(push_constant) uniform Params {
    vec2 size;    // the subsampled image's extent in pixels
    float layer;  // the view
} pc;

layout(location = 0) out uvec4 o_color;

void main() {
    o_color = texture(src, vec3(gl_FragCoord.xy / pc.size, pc.layer));
}

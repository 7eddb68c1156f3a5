#version 450
// fsr_coord.frag without VK_KHR_fragment_shading_rate (the rate is 1x1, encoded 0): the same
// outputs, so that the fsr backend's render pass, multiview, MSAA resolve and readback run on
// devices without the extension (tests/vk/test_fsr.py, on lavapipe).  Never used by a case.
#extension GL_EXT_multiview : require

layout(push_constant) uniform Params {
    vec2 size;  // framebuffer width, height
} pc;

// the vertex shader's viewport-relative position, within [0, 1] for every drawn fragment: read
// (ids.z, always 0) only so that the interfaces match
layout(location = 0) in vec2 v_viewport;

layout(location = 0) out uvec4 o_coord;
layout(location = 1) out uvec4 o_ids;
layout(location = 2) out vec4 o_gradient;

void main() {
    o_coord = uvec4(uvec2(gl_FragCoord.xy * 2.0), 1u, 1u);
    o_ids = uvec4(0u, uint(gl_ViewIndex), uint(v_viewport.x < 0.0), 0u);
    o_gradient = vec4(gl_FragCoord.xy / pc.size, 0.25 + 0.5 * float(gl_ViewIndex), 1.0);
}

#version 450
// The fsr backend (vk_tests/fsr.py): what a coarse fragment of VK_KHR_fragment_shading_rate
// sees.  Attachment 0 matches the replay backend's layout (vk_tests/shaders/fdm_coord.frag),
// so the same large-fragment oracle judges it:
//   0: (2 * FragCoord.xy, w, h): FragCoord doubled (a fragment centre is a multiple of 1/2,
//      so the integers are exact) and the fragment size decoded from gl_ShadingRateEXT
//      (SPIR-V ShadingRateKHR: bits 0-1 log2 height, bits 2-3 log2 width, the encoding of
//      the shading-rate attachment's texels);
//   1: (gl_ShadingRateEXT, gl_ViewIndex, 0, 0): the raw rate and the view;
//   2: a gradient, FragCoord / framebuffer size (blue: 0.25 + 0.5 * view), UNORM8.
#extension GL_EXT_fragment_shading_rate : require
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
    int r = gl_ShadingRateEXT;
    uvec2 fa = uvec2(1u << uint((r >> 2) & 3), 1u << uint(r & 3));
    o_coord = uvec4(uvec2(gl_FragCoord.xy * 2.0), fa);
    o_ids = uvec4(uint(r), uint(gl_ViewIndex), uint(v_viewport.x < 0.0), 0u);
    o_gradient = vec4(gl_FragCoord.xy / pc.size, 0.25 + 0.5 * float(gl_ViewIndex), 1.0);
}

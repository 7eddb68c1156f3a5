#version 450
// Two measurements of the framebuffer position of a fragment's centre in an FDM bin:
//
// 0: turnip's lower_fdm_instr (src/freedreno/vulkan/tu_shader.cc) replayed with push
//    constants: FragCoord_fb = (FragCoord_hw - frag_offset) * frag_size, where FragCoord_hw
//    is the rendering-space (GMEM) coordinate and (frag_size, frag_offset) the FS params;
// 1: the geometry: the viewport-relative position interpolated from the full-screen
//    triangle, mapped through the application's (unpatched) viewport.  It moves with the
//    patched viewport, so it measures the viewport transform the way a real mesh would.
//
// Both write (2 * position, frag_size) as integers: half-pixel centres are exact, and the
// interpolated one is rounded to the nearest half pixel.
layout(push_constant) uniform Params {
    vec2 frag_size;
    vec2 frag_offset;
    vec4 user_viewport;  // x, y, width, height
} pc;

layout(location = 0) in vec2 v_viewport;
layout(location = 0) out uvec4 o_fragcoord;
layout(location = 1) out uvec4 o_geometry;

void main() {
    uvec2 fa = uvec2(ivec2(pc.frag_size));
    vec2 fb2 = (gl_FragCoord.xy - pc.frag_offset) * pc.frag_size * 2.0;
    o_fragcoord = uvec4(uvec2(ivec2(fb2)), fa);
    vec2 geo2 = (pc.user_viewport.xy + v_viewport * pc.user_viewport.zw) * 2.0;
    o_geometry = uvec4(uvec2(ivec2(round(geo2))), fa);
}

#version 450
#extension GL_EXT_fragment_invocation_density : require
// The fdm backend's fragment shader: the same two attachments as the replay's fdm_coord.frag,
// measured by a real FDM rasterizer instead of turnip's lowering:
//
// 0: (2 * gl_FragCoord.xy, gl_FragSizeEXT): the framebuffer position of the fragment's centre
//    (the spec: FragCoord is the centre of the whole fragment) and its area;
// 1: the geometry: the viewport-relative position interpolated from the full-screen triangle,
//    mapped through the application's viewport, rounded to the nearest half pixel.
//
// Half-pixel centres are exact integers after doubling.
layout(push_constant) uniform Params {
    vec4 user_viewport;  // x, y, width, height
} pc;

layout(location = 0) in vec2 v_viewport;
layout(location = 0) out uvec4 o_fragcoord;
layout(location = 1) out uvec4 o_geometry;

void main() {
    uvec2 fa = uvec2(gl_FragSizeEXT);
    o_fragcoord = uvec4(uvec2(ivec2(gl_FragCoord.xy * 2.0)), fa);
    vec2 geo2 = (pc.user_viewport.xy + v_viewport * pc.user_viewport.zw) * 2.0;
    o_geometry = uvec4(uvec2(ivec2(round(geo2))), fa);
}

#version 450
#extension GL_EXT_fragment_invocation_density : require
// The fdm backend's depth scene (B15, vk_tests/fdm_backend_more.py): quad_id.frag's output
// (quad id, 2·c.x, 2·c.y, 16·fa.x + fa.y) measured by a real FDM rasterizer: c is
// gl_FragCoord (the centre of the whole fragment), fa is gl_FragSizeEXT.  The push constants
// are quad.vert's (frag_size and frag_offset unused here).
layout(push_constant) uniform Params {
    vec2 frag_size;
    vec2 frag_offset;
    vec4 rect;
    float z;
    uint id;
} pc;

layout(location = 0) out uvec4 o_colour;

void main() {
    uvec2 fa = uvec2(gl_FragSizeEXT);
    o_colour = uvec4(pc.id, uvec2(ivec2(gl_FragCoord.xy * 2.0)), 16u * fa.x + fa.y);
}

#version 450
// The depth replay's fragment output (vk_tests/replay_depth.py): (quad id, 2·c.x, 2·c.y,
// 16·fa.x + fa.y) with c the fragment centre lowered like lower_fdm_instr
// (src/freedreno/vulkan/tu_shader.cc): c = (FragCoord_hw - frag_offset) * frag_size.
layout(push_constant) uniform Params {
    vec2 frag_size;
    vec2 frag_offset;
    vec4 rect;
    float z;
    uint id;
} pc;

layout(location = 0) out uvec4 o_colour;

void main() {
    uvec2 fa = uvec2(ivec2(pc.frag_size));
    vec2 fb2 = (gl_FragCoord.xy - pc.frag_offset) * pc.frag_size * 2.0;
    o_colour = uvec4(pc.id, uvec2(ivec2(fb2)), 16u * fa.x + fa.y);
}

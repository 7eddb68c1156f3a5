#version 450
// The colour scene of the subsampled-layout replay (vk_tests/replay_subsampled.py): every
// fragment of an FDM bin is coloured from the framebuffer position of its centre, lowered like
// turnip's lower_fdm_instr (src/freedreno/vulkan/tu_shader.cc): c = (FragCoord_hw - frag_offset)
// * frag_size.  The colour is integer arithmetic on 2c (exact: centres lie on half pixels), so
// the CPU oracle (replay_subsampled.scene_colour) gives the same bytes:
//   R = 16 + 2c.x * 224 / 2W, G = 16 + 2c.y * 224 / 2H (smooth gradients),
//   B = 40, + 140 inside a disc around (5W/8, 3H/8) of radius H/4, + 60 in a stripe
//       2c.x in [6W/10, 6W/10 + 2W/30) (sharp edges for LINEAR seams),
//   A = 255.
layout(push_constant) uniform Params {
    vec2 frag_size;
    vec2 frag_offset;
    vec4 user_viewport;  // x, y, width, height (unused here)
    vec2 fb_size;        // W, H
} pc;

layout(location = 0) in vec2 v_viewport;
layout(location = 0) out vec4 o_colour;

void main() {
    if (v_viewport.x < -1.0e30) discard;  // never: consumes the vertex output (no validation warning)
    vec2 fb2 = (gl_FragCoord.xy - pc.frag_offset) * pc.frag_size * 2.0;
    ivec2 c2 = ivec2(fb2);
    ivec2 wh2 = ivec2(pc.fb_size) * 2;
    int r = 16 + c2.x * 224 / wh2.x;
    int g = 16 + c2.y * 224 / wh2.y;
    int dx = c2.x - wh2.x * 5 / 8;
    int dy = c2.y - wh2.y * 3 / 8;
    int rr = wh2.y / 4;
    int b = 40;
    if (dx * dx + dy * dy < rr * rr) b += 140;
    int s0 = wh2.x * 3 / 10;
    if (c2.x >= s0 && c2.x < s0 + wh2.x / 30) b += 60;
    o_colour = vec4(float(r), float(g), float(b), 255.0) / 255.0;
}

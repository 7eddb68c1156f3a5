#version 450
// B18 of the fdm backend (vk_tests/fdm_backend_sampling.py): the subsampled-layout replay's
// colour scene (scene_color.frag, replay_subsampled.scene_colour) in a real FDM pass. There
// gl_FragCoord is the centre of the whole fragment in framebuffer space, so 2c = 2 * FragCoord
// is an exact integer; the colour is the same integer formula. Written to two attachments: a
// subsampled one (sampled afterwards through a subsampled sampler) and a non-subsampled one
// (the device's own expanded image, the reference).
layout(push_constant) uniform Params {
    vec2 fb_size;  // W, H
} pc;

layout(location = 0) in vec2 v_viewport;
layout(location = 0) out vec4 o_subsampled;
layout(location = 1) out vec4 o_expanded;

void main() {
    if (v_viewport.x < -1.0e30) discard;  // never: consumes the vertex output (no validation warning)
    ivec2 c2 = ivec2(gl_FragCoord.xy * 2.0);
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
    vec4 colour = vec4(float(r), float(g), float(b), 255.0) / 255.0;
    o_subsampled = colour;
    o_expanded = colour;
}

#version 450
// One triangle given in clip space by push constants (vk_tests/replay_msaa.py).
layout(push_constant) uniform Params {
    vec4 p01;     // x0, y0, x1, y1
    vec4 p2;      // x2, y2, unused
    vec4 colour;
} pc;

void main() {
    vec2 p = gl_VertexIndex == 0 ? pc.p01.xy : (gl_VertexIndex == 1 ? pc.p01.zw : pc.p2.xy);
    gl_Position = vec4(p, 0.0, 1.0);
}

#version 450
// A flat colour from push constants (vk_tests/replay_msaa.py).
layout(push_constant) uniform Params {
    vec4 p01;
    vec4 p2;
    vec4 colour;
} pc;

layout(location = 0) out vec4 o_colour;

void main() {
    o_colour = pc.colour;
}

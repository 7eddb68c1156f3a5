#version 450
// A gradient for RGBA8_UNORM targets: red and green go from 0 to 1 across the viewport.
layout(location = 0) in vec2 v_viewport;
layout(location = 0) out vec4 o_color;

void main() {
    o_color = vec4(v_viewport, 0.0, 1.0);
}

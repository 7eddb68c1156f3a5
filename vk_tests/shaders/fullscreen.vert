#version 450
// A triangle that covers the whole viewport, without vertex buffers:
// vertex 0 -> (-1,-1), 1 -> (3,-1), 2 -> (-1,3) in clip space.
// v_viewport is the position as a fraction of the viewport: (0,0) at its first corner,
// (1,1) at the opposite one.
layout(location = 0) out vec2 v_viewport;

void main() {
    vec2 p = vec2(float((gl_VertexIndex << 1) & 2), float(gl_VertexIndex & 2));
    v_viewport = p;
    gl_Position = vec4(p * 2.0 - 1.0, 0.0, 1.0);
}

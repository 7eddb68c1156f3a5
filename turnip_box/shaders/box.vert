#version 450
// A full-screen triangle; turnip-fdm box: the driver's per-bin programming needs one draw.
void main() {
    vec2 p = vec2((gl_VertexIndex << 1) & 2, gl_VertexIndex & 2);
    gl_Position = vec4(p * 2.0 - 1.0, 0.5, 1.0);
}

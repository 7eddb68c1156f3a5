#version 450
#extension GL_ARB_shader_viewport_layer_array : require
// As box.vert, writing gl_ViewportIndex: turnip then takes the shared-viewport path.
void main() {
    vec2 p = vec2((gl_VertexIndex << 1) & 2, gl_VertexIndex & 2);
    gl_Position = vec4(p * 2.0 - 1.0, 0.5, 1.0);
    gl_ViewportIndex = 0;
}

#version 450
#extension GL_ARB_shader_viewport_layer_array : require
// fullscreen.vert that also writes gl_ViewportIndex (always 0: one application viewport), for the
// fdm backend's B9 / C5 cases (vk_tests/fdm_backend.py).  Turnip keys its shared-viewport
// fallback on the shader *writing* the index (tu_pipeline.cc: per_view_viewport needs
// !writes_viewport), not on its value; the CTS multiviewport cases write gl_ViewIndex.
// Capability ShaderViewportIndexLayerEXT: needs VK_EXT_shader_viewport_index_layer.
layout(location = 0) out vec2 v_viewport;

void main() {
    vec2 p = vec2(float((gl_VertexIndex << 1) & 2), float(gl_VertexIndex & 2));
    v_viewport = p;
    gl_Position = vec4(p * 2.0 - 1.0, 0.0, 1.0);
    gl_ViewportIndex = 0;
}

#version 450
// An axis-aligned quad (two triangles, six vertices from gl_VertexIndex) at depth z, given in
// clip space by push constants (vk_tests/replay_depth.py): rect = (x0, y0, x1, y1).
layout(push_constant) uniform Params {
    vec2 frag_size;
    vec2 frag_offset;
    vec4 rect;
    float z;
    uint id;
} pc;

void main() {
    const int corner[6] = int[6](0, 1, 2, 2, 1, 3);
    int c = corner[gl_VertexIndex];
    vec2 p = vec2((c & 1) != 0 ? pc.rect.z : pc.rect.x, (c & 2) != 0 ? pc.rect.w : pc.rect.y);
    gl_Position = vec4(p, pc.z, 1.0);
}

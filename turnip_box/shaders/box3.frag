#version 450
// 3 colour outputs; reads gl_FragCoord, so turnip loads the FDM FragCoord constants (o and the fragment area).
layout(location = 0) out vec4 c0;
layout(location = 1) out vec4 c1;
layout(location = 2) out vec4 c2;
void main() {
    vec4 v = vec4(fract(gl_FragCoord.xy / 64.0), 0.0, 1.0);
    c0 = v;
    c1 = v;
    c2 = v;
}

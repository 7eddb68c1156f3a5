#version 450
// 0 colour outputs; reads gl_FragCoord, so turnip loads the FDM FragCoord constants (o and the fragment area).
void main() {
    vec4 v = vec4(fract(gl_FragCoord.xy / 64.0), 0.0, 1.0);
    if (v.x > 2.0) discard;
}

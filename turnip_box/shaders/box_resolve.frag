#version 450
// The custom-resolve subpass's shader: reads the main subpass's colour attachment 0 as an input
// attachment (so turnip loads the GMEM FragCoord constants: gmem scale and offset) and
// gl_FragCoord (the FDM FragCoord constants), and writes the resolve destination.
layout(input_attachment_index = 0, set = 0, binding = 0) uniform subpassInput src;
layout(location = 0) out vec4 c0;
void main() {
    c0 = subpassLoad(src) + vec4(fract(gl_FragCoord.xy / 64.0), 0.0, 0.0);
}

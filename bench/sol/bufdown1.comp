#version 450
// down1 over linear storage buffers (row-major, no image tiling): the same 2x2 box filter and
// the same traffic, to separate the image path from the read-4/write-1 pattern
#extension GL_GOOGLE_include_directive : require
#include "sol.glsl"
#if defined(FMT_RGBA8) || defined(FMT_RGBA8N)
#define ELEM uint
#define LOADF(v) unpackUnorm4x8(v)
#define STOREF(f) packUnorm4x8(f)
#elif defined(FMT_R32F)
#define ELEM float
#define LOADF(v) vec4(v)
#define STOREF(f) (f).x
#else
#define ELEM uvec2
#define LOADF(v) vec4(unpackHalf2x16((v).x), unpackHalf2x16((v).y))
#define STOREF(f) uvec2(packHalf2x16((f).xy), packHalf2x16((f).zw))
#endif
layout(set = 0, binding = 0, std430) readonly buffer Src { ELEM src[]; };
layout(set = 0, binding = 1, std430) writeonly buffer Dst { ELEM dst[]; };

void main() {
    uvec2 p = gl_GlobalInvocationID.xy;
    if (any(greaterThanEqual(p, pc.grid))) return;
    uint w = 2u * pc.grid.x;
    uint i = 2u * p.y * w + 2u * p.x;
    vec4 a = LOADF(src[i]), b = LOADF(src[i + 1u]), c = LOADF(src[i + w]), d = LOADF(src[i + w + 1u]);
    dst[p.y * pc.grid.x + p.x] = STOREF((((a + b) + c) + d) * 0.25);
}

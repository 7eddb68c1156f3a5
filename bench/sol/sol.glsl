// Speed-of-light kernels of bench/mipmap_sol.py: the format of the storage view, chosen by a
// -D at compile time (glslangValidator -DFMT_...), as in the mip generator's shaders.
#extension GL_EXT_shader_explicit_arithmetic_types : enable
#if defined(FMT_RGBA8)          // R8G8B8A8_UNORM image, R8G8B8A8_UINT view (what mipmap/ uses)
#define QUAL rgba8ui
#define IMAGE uimage2D
#define SAMPLER usampler2D
#define TEXEL uvec4
#define ZERO uvec4(0u)
#define AVG4(a, b, c, d) (((a) + (b) + (c) + (d) + uvec4(2u)) >> 2u)
#elif defined(FMT_RGBA8N)       // R8G8B8A8_UNORM image and view, no format change
#define QUAL rgba8
#define IMAGE image2D
#define SAMPLER sampler2D
#define TEXEL vec4
#define ZERO vec4(0.0)
#define AVG4(a, b, c, d) ((((a) + (b)) + (c) + (d)) * 0.25)
#elif defined(FMT_R32F)
#define QUAL r32f
#define IMAGE image2D
#define SAMPLER sampler2D
#define TEXEL vec4
#define ZERO vec4(0.0)
#define AVG4(a, b, c, d) ((((a) + (b)) + (c) + (d)) * 0.25)
#elif defined(FMT_RGBA16F)
#define QUAL rgba16f
#define IMAGE image2D
#define SAMPLER sampler2D
#define TEXEL vec4
#define ZERO vec4(0.0)
#define AVG4(a, b, c, d) ((((a) + (b)) + (c) + (d)) * 0.25)
#else
#error "define FMT_RGBA8, FMT_RGBA8N, FMT_R32F or FMT_RGBA16F"
#endif

// workgroup size: specialisation constants 0 and 1 (default 16 x 16)
layout(local_size_x = 16, local_size_y = 16, local_size_z = 1) in;
layout(local_size_x_id = 0, local_size_y_id = 1) in;

// the grid, in invocations: a bounds check, as every real kernel has one
layout(push_constant) uniform Push { uvec2 grid; } pc;

// Shared declarations of the mipmap compute shaders (see mipmap/formats.py for the rules).
// Build-time macros: one of FMT_R32F, FMT_RGBA16F, FMT_RGBA8, FMT_SRGBA8; USE_SHUFFLE 0/1;
// CLAMP_EDGES 1 where a kernel may address past a level's edge (reads clamp, writes are
// dropped), 0 where its sizes divide exactly; LOCAL_SIZE, the workgroup size.
// Specialisation constant 0: the device's subgroup size.
//
// Hand-off (last-workgroup continuation): levels >= pc.handoff are read and written only
// through the `coherent` binding 3 (the same views), because the last workgroup reads what
// the others wrote; every other level goes through the plain binding 0, so that loads keep
// the L1 cache (a `coherent` load bypasses it). Without HAS_TAIL no access is coherent.
#extension GL_KHR_shader_subgroup_basic : require
#if USE_SHUFFLE
#extension GL_KHR_shader_subgroup_shuffle : require
#endif

#define MAX_LEVELS 16
#define TAB_UNORM 0
#define TAB_SRGB 256
#define TAB_THRESH 512
#define TAB_RCP 768

#if defined(FMT_RGBA8) || defined(FMT_SRGBA8)
// 8-bit formats through R32_UINT views of the RGBA8 image (same 32-bit texel block): a load
// is one register until it is decoded instead of four, which keeps a lane's 16 loads in
// flight at a quarter of the registers; the shader unpacks and packs the four codes.
#define QUANT8 1
layout(set = 0, binding = 0, r32ui) uniform uimage2D levels[MAX_LEVELS];
layout(set = 0, binding = 3, r32ui) uniform coherent uimage2D shared_levels[MAX_LEVELS];
#elif defined(FMT_RGBA16F)
layout(set = 0, binding = 0, rgba16f) uniform image2D levels[MAX_LEVELS];
layout(set = 0, binding = 3, rgba16f) uniform coherent image2D shared_levels[MAX_LEVELS];
#else
layout(set = 0, binding = 0, r32f) uniform image2D levels[MAX_LEVELS];
layout(set = 0, binding = 3, r32f) uniform coherent image2D shared_levels[MAX_LEVELS];
#endif

layout(set = 0, binding = 1, std430) readonly buffer Tables { float tab[]; };
#ifdef FMT_SRGBA8
// binding 4: the image through an R8G8B8A8_SRGB view of every level, with a nearest sampler:
// the main pass reads its input level there when HW_SRGB_DECODE (below)
layout(set = 0, binding = 4) uniform sampler2D srgbView;
#endif
// binding 5: every level through a sampled view in the storage views' format (R32_SFLOAT,
// R32_UINT, R16G16B16A16_SFLOAT), with a nearest sampler: with TEX_INPUT the main pass reads
// its input level by texelFetch, through the texture path and its cache, instead of imageLoad.
// texelFetch returns the texel unfiltered: the word itself, the float32, or the float16
// widened, which is exact (tests/vk/test_mipmap_gpu.py checks every format bit for bit).
#if QUANT8
layout(set = 0, binding = 5) uniform usampler2D inputView;
#else
layout(set = 0, binding = 5) uniform sampler2D inputView;
#endif
// the hand-off counter: every workgroup adds 1; the last one resets it to 0
layout(set = 0, binding = 2, std430) coherent buffer Counter { uint arrived; };

// tailLevels: levels the last workgroup makes after the main pass (from level INPUT_LEVEL +
// MAIN_LEVELS); handoff: see above; width, height: level 0's size (level k is
// max(1, size >> k): no image-size queries)
layout(push_constant) uniform Push {
    uint tailLevels; uint handoff; uint width; uint height;
} pc;

// Specialisation constants. The level count and whether a continuation follows are fixed
// per pipeline, so that loops unroll and unused paths (the continuation, the other
// pre-reduction) leave the compiled kernel: with them as push constants the H100 ran the
// same plans 7-14% slower (bench/results/h100.md, closing note).
layout(constant_id = 0) const uint SUBGROUP_SIZE = 32;
layout(constant_id = 1) const uint MAIN_LEVELS = 1;  // M, levels of the main pass
layout(constant_id = 2) const uint HAS_TAIL = 0;     // 1: hand-off and continuation
// The main pass's input level, a constant too: every level index of the main pass is then
// known when the pipeline is made, and the switch that picks a level's image (below) folds
// away instead of branching around each of the 16 loads and 5 stores of an invocation.
layout(constant_id = 3) const uint INPUT_LEVEL = 0;
// Kernels with CLAMP_EDGES (the single-pass downsampler): 1 when width and height are
// multiples of 64, so that levels 0..6 split into whole 64 x 64 tiles and only the last
// workgroup's levels (6 and up) can be addressed past an edge; the main pass then does
// without the clamp of every load, the bounds test of every store and the edge partners.
layout(constant_id = 4) const uint WHOLE_TILES = 0;
bool clampLevel(uint level) { return WHOLE_TILES == 0u || level >= 6u; }
// 1 where fma rounds once on this device (mipmap/gpu.py runs shaders/probe.comp): the 8-bit
// decode is then one fused operation instead of a subtraction and a product.
layout(constant_id = 5) const uint FUSED_DECODE = 0;
// 1 where the sampler decodes sRGB8 to the float32 of formats.srgb_lut for every code
// (mipmap/gpu.py runs shaders/probe_srgb.comp): the sRGB kernels then read their input level
// through the texture unit, which decodes for free, instead of looking each colour channel
// up in the shared-memory table (three look-ups per texel were the sRGB kernels' limit:
// bench/results/h100.breakdown.md). Only the input level: a level written in the same
// dispatch is read through the storage views, coherent where it is handed between workgroups.
layout(constant_id = 6) const uint HW_SRGB_DECODE = 0;
// 1: the main pass reads its input level through binding 5 (texelFetch) instead of binding 0.
// Only the input level: the dispatch writes every other level it reads.
layout(constant_id = 7) const uint TEX_INPUT = 0;
// 1: the 64 x 64 passes place their tiles by a loop: in a dispatch of G workgroups (any
// G >= 1), workgroup g makes tiles g, g + G, g + 2G, ... in row-major order; the hand-off
// counts G arrivals. With one workgroup per tile (G = tiles, the default where it is on:
// mipmap/gpu.py, tile_loop) the loop runs once, on the tile the grid gives it, and the NVIDIA
// compiler fits RGBA16F's single pass in fewer registers; G < tiles: persistent workgroups.
layout(constant_id = 8) const uint PERSISTENT = 0;

// Levels are selected with constant indices (a switch): lavapipe lacks
// shaderStorageImageArrayDynamicIndexing.
#define FOR_LEVELS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15)

ivec2 levelSize(uint level) {
    return max(ivec2(1), ivec2(int(pc.width), int(pc.height)) >> int(level));
}

#if QUANT8
#define RAW uvec4
#else
#define RAW vec4
#endif
// VAL: the values the kernels compute on. r32f computes on one float: the other three
// channels of its loads are constants, and vec4 arithmetic on them was a quarter of the
// kernel's float instructions spent on nothing.
#ifdef FMT_R32F
#define FVAL float
#define TO_RAW(v) vec4(v)
#define FROM_RAW(r) (r).x
#else
#define FVAL vec4
#define TO_RAW(v) (v)
#define FROM_RAW(r) (r)
#endif
// PACKED8 (RGBA8 in the kernels that define PACKED_BOX: the tile passes, whose only filter
// is the 2x2 box): the tile passes compute on the stored word itself, four codes in a uint.
// For UNORM8 the float32 box of four decoded codes, encoded, is (a + b + c + d + 2) >> 2 for
// every a, b, c, d (tests/mipmap/test_formats.py proves it over all inputs), so the decode,
// the float arithmetic and the encode of every channel become a few integer operations on
// two channels at a time, and a shuffle or a shared-memory slot carries one word instead
// of four floats. FVAL is the float form, used where a filter has other weights.
#if defined(FMT_RGBA8) && defined(PACKED_BOX)
#define PACKED8 1
#define VAL uint
#else
#define PACKED8 0
#define VAL FVAL
#endif
RAW rawLoad(uint level, ivec2 p) {
    if (TEX_INPUT != 0u && level == INPUT_LEVEL) return RAW(texelFetch(inputView, p, int(level)));
    if (HAS_TAIL != 0u && level >= pc.handoff) {
        switch (level) {
#define CLOAD_CASE(k) case k: return imageLoad(shared_levels[k], p);
            FOR_LEVELS(CLOAD_CASE)
        }
    } else {
        switch (level) {
#define LOAD_CASE(k) case k: return imageLoad(levels[k], p);
            FOR_LEVELS(LOAD_CASE)
        }
    }
    return RAW(0);
}
void rawStore(uint level, ivec2 p, RAW v) {
    if (HAS_TAIL != 0u && level >= pc.handoff) {
        switch (level) {
#define CSTORE_CASE(k) case k: imageStore(shared_levels[k], p, v); return;
            FOR_LEVELS(CSTORE_CASE)
        }
    } else {
        switch (level) {
#define STORE_CASE(k) case k: imageStore(levels[k], p, v); return;
            FOR_LEVELS(STORE_CASE)
        }
    }
}

#ifdef FMT_SRGBA8
// The sRGB tables in shared memory (a storage-buffer look-up per channel made the sRGB
// kernels bound by load instructions): decode values and the 255 encode thresholds.
shared float srgbLut[256];
shared float srgbThresh[256];
#endif

// Every kernel calls this first, in uniform control flow.
void loadTables() {
#ifdef FMT_SRGBA8
    for (uint i = gl_LocalInvocationIndex; i < 256u; i += LOCAL_SIZE) {
        srgbLut[i] = tab[TAB_SRGB + i];
        srgbThresh[i] = tab[TAB_THRESH + i];
    }
    barrier();
#endif
}

#if QUANT8
uint encodeUnorm(float v) {
    precise float t = clamp(v, 0.0, 1.0) * 255.0 + 0.5;
    return uint(t);
}
#ifdef FMT_SRGBA8
// The code is the number of thresholds t <= v (thresholds: the linear values of the code
// mid-points). A guess from the sRGB curve: y = s * 255 + 0.5 is within 1e-3 of its exact
// value even at the Vulkan precision bounds of pow (exp2 3 + 2|x| ulp, log2 3 ulp or
// 2^-21; tests/mipmap/test_formats.py), so g = floor(y - 1/16) is the code or the code
// minus one, and threshold g decides.
uint srgbGuess(float v) {
    float c = clamp(v, 0.0, 1.0);
    float s = c <= 0.0031308 ? c * 12.92 : 1.055 * pow(c, 1.0 / 2.4) - 0.055;
    return uint(clamp(s * 255.0 + (0.5 - 0.0625), 0.0, 254.0));
}
uint encodeSrgb(float v) {
    uint g = srgbGuess(v);
    return srgbThresh[g] <= v ? g + 1u : g;
}
#endif
uvec4 encode(vec4 v) {
#ifdef FMT_SRGBA8
    return uvec4(encodeSrgb(v.x), encodeSrgb(v.y), encodeSrgb(v.z), encodeUnorm(v.w));
#else
    return uvec4(encodeUnorm(v.x), encodeUnorm(v.y), encodeUnorm(v.z), encodeUnorm(v.w));
#endif
}
// 1/255 rounded to float32 (0x3b808081): decode is one rounded product, as in formats.py
#define UNORM_SCALE uintBitsToFloat(0x3b808081u)
// float(k) for k < 2^23 without an int-to-float conversion (a quarter-rate instruction on
// NVIDIA): 2^23 + k is the float with mantissa k, and subtracting 2^23 is exact.
vec4 codeToFloat(uvec4 k) {
    precise vec4 f = uintBitsToFloat(k | 0x4b000000u) - 8388608.0;
    return f;
}
// float(k) * UNORM_SCALE rounded once. Fused: f = 2^23 + k exactly, and
// f * s - 2^23 s = k s exactly (2^23 s is a float), so one rounding of it is the product.
vec4 decodeUnorm(uvec4 k) {
    if (FUSED_DECODE != 0u) {
        precise vec4 u = fma(uintBitsToFloat(k | 0x4b000000u), vec4(UNORM_SCALE), vec4(-8388608.0 * UNORM_SCALE));
        return u;
    }
    precise vec4 u = codeToFloat(k) * UNORM_SCALE;
    return u;
}
vec4 decode(uvec4 k) {
#ifdef FMT_SRGBA8
    return vec4(srgbLut[k.x], srgbLut[k.y], srgbLut[k.z], decodeUnorm(k).w);
#else
    return decodeUnorm(k);
#endif
}
#endif

#ifdef FMT_RGBA16F
// float32 -> nearest float16 value (ties to even). packHalf2x16's rounding is
// implementation-defined (the NVIDIA driver's is not to nearest even, even under the
// RoundingModeRTE execution mode: bench/results/h100.experiments.md, sixth round), so the
// shader rounds itself, by a magic number: for |x| in [2^e, 2^(e+1)), e >= -14, the float16
// values are the multiples of g = 2^(e-10) (below 2^-14: of g = 2^-24). m = 2^max(e, -14) * 12288
// = 3 * 2^12 g keeps x + m in [2^13 g, 2^14 g), where float32's spacing is g, so the one rounding
// of x + m (to nearest, ties to even: m / g is even) puts x on the float16 grid, and subtracting
// m is exact. The sign goes back on afterwards (a tiny negative x gives -0.0, as numpy's
// conversion does). Three float operations where the integer rounding and its range tests took
// most of RGBA16F's instructions (same call: 4096² tiled 75.3 -> 71.7 µs). The result is exactly
// representable in float16, so the image store converts it without rounding.
float toHalf(float x) {
    uint u = floatBitsToUint(x);
    uint a = u & 0x7fffffffu;
    // nan: itself; inf and finite values from 65520 on (they round past 65504): signed inf
    if (a >= 0x477ff000u) return a > 0x7f800000u ? x : uintBitsToFloat((u & 0x80000000u) | 0x7f800000u);
    float m = uintBitsToFloat(max(a & 0x7f800000u, 0x38800000u)) * 12288.0;
    precise float y = (x + m) - m;
    return uintBitsToFloat(floatBitsToUint(y) | (u & 0x80000000u));
}
#endif

// CODE: what a level stores, before packing: the four 8-bit codes, the float16 values
// (as float32), or the float32 value. toCode quantises, fromCode gives back the value the
// next level sees (what a store followed by a load gives back); a kernel keeps the code of
// a value it stores, so that nothing is quantised twice.
#if PACKED8
// the code is the packed word, and the value is the code
#define CODE uint
uint packCodes(uvec4 k) { return k.x | (k.y << 8) | (k.z << 16) | (k.w << 24); }
uvec4 unpackCodes(uint x) { return uvec4(x, x >> 8, x >> 16, x >> 24) & 0xffu; }
CODE toCode(FVAL v) { return packCodes(encode(v)); }
VAL fromCode(CODE k) { return k; }
#elif QUANT8
#define CODE uvec4
CODE toCode(VAL v) { return encode(v); }
VAL fromCode(CODE k) { return decode(k); }
uint packCodes(uvec4 k) { return k.x | (k.y << 8) | (k.z << 16) | (k.w << 24); }
uvec4 unpackCodes(uint x) { return uvec4(x, x >> 8, x >> 16, x >> 24) & 0xffu; }
#elif defined(FMT_RGBA16F)
#define CODE VAL
CODE toCode(VAL v) { return vec4(toHalf(v.x), toHalf(v.y), toHalf(v.z), toHalf(v.w)); }
VAL fromCode(CODE k) { return k; }
#else
#define CODE VAL
CODE toCode(VAL v) { return v; }
VAL fromCode(CODE k) { return k; }
#endif

// quantise v: the value the next level sees, and in `code` what to store
#if PACKED8
VAL quantise(VAL v, out CODE code) {
    code = v;  // already a code: the packed box rounds as the encode does
    return v;
}
#else
VAL quantise(VAL v, out CODE code) {
    code = toCode(v);
    return fromCode(code);
}
#endif

// a texel's value as the float filters see it
FVAL loadValue(uint level, ivec2 p) {
#if CLAMP_EDGES
    if (clampLevel(level)) p = min(p, levelSize(level) - 1);
#endif
#ifdef FMT_SRGBA8
    if (HW_SRGB_DECODE != 0u && level == INPUT_LEVEL) {
        vec4 f = texelFetch(srgbView, p, int(level));
        // alpha is UNORM: its code, rounded back from the sampler's value (within far less
        // than half a code of k / 255), decoded as every other UNORM8 value is
        uint a = uint(f.w * 255.0 + 0.5);
        return vec4(f.xyz, decodeUnorm(uvec4(a)).w);
    }
#endif
#if QUANT8
    return decode(unpackCodes(rawLoad(level, p).x));
#else
    return FROM_RAW(rawLoad(level, p));
#endif
}

// a texel as the tile passes carry it
VAL loadTexel(uint level, ivec2 p) {
#if PACKED8
#if CLAMP_EDGES
    if (clampLevel(level)) p = min(p, levelSize(level) - 1);
#endif
    return rawLoad(level, p).x;
#else
    return loadValue(level, p);
#endif
}

void storeCode(uint level, ivec2 p, CODE code) {
#if CLAMP_EDGES
    ivec2 s = levelSize(level);
    if (clampLevel(level) && (p.x >= s.x || p.y >= s.y)) return;
#endif
#if PACKED8
    rawStore(level, p, uvec4(code, 0u, 0u, 0u));
#elif QUANT8
    rawStore(level, p, uvec4(packCodes(code), 0u, 0u, 0u));
#else
    rawStore(level, p, TO_RAW(code));
#endif
}

void storeTexel(uint level, ivec2 p, FVAL v) { storeCode(level, p, toCode(v)); }

// 2x2 box, vertical pairs first: ((TL + BL) / 2 + (TR + BR) / 2) / 2 (mipmap/formats.py).
// Halving is exact while a value stays normal, and rounding commutes with it, so for the
// quantised formats, whose values are 0 or at least 2^-24 (and their means at least
// 2^-26, far from float32's subnormals at 2^-126), ((TL + BL) + (TR + BR)) / 4 gives the
// same bits with two operations less per channel (tests/mipmap/test_formats.py). r32f
// takes any float, subnormals included: the defining form.
#if PACKED8
// The packed box: channels 0 and 2 in the low bytes of two 16-bit lanes, channels 1 and 3
// in the other word; a lane's sum of four codes plus 2 is at most 1022, so no carry crosses
// into the next lane, and >> 2 then the mask rounds each lane as encodeUnorm rounds the
// float box (ties up: tests/mipmap/test_formats.py, test_unorm_box_is_the_code_sum).
VAL reduce4(VAL tl, VAL tr, VAL bl, VAL br) {
    const uint m = 0x00ff00ffu;
    uint lo = (((tl & m) + (bl & m)) + ((tr & m) + (br & m))) + 0x00020002u;
    uint hi = ((((tl >> 8) & m) + ((bl >> 8) & m)) + (((tr >> 8) & m) + ((br >> 8) & m))) + 0x00020002u;
    return ((lo >> 2) & m) | (((hi >> 2) & m) << 8);
}
#else
VAL reduce4(VAL tl, VAL tr, VAL bl, VAL br) {
#ifdef FMT_R32F
    precise VAL r = ((tl + bl) * 0.5 + (tr + br) * 0.5) * 0.5;
#else
    precise VAL r = ((tl + bl) + (tr + br)) * 0.25;
#endif
    return r;
}
#endif

// kernel size of one axis: 1 (copy), 2 (even) or 3 (odd)
uint kernelSize(int d) { return d == 1 ? 1u : ((d & 1) == 0 ? 2u : 3u); }

// one axis: output j of an input of size d with k taps
FVAL taps(FVAL v0, FVAL v1, FVAL v2, uint k, int j, int d) {
    if (k == 1u) return v0;
    if (k == 2u) {
        precise FVAL r2 = (v0 + v1) * 0.5;
        return r2;
    }
    uint n = uint(d) >> 1;
    float rcp = tab[TAB_RCP + n];
    precise float w0 = rcp * float(n - uint(j));
    precise float w1 = rcp * float(n);
    precise float w2 = (1.0 - w0) - w1;
    precise FVAL r3 = (w0 * v0 + w1 * v1) + w2 * v2;
    return r3;
}

uint flatWorkgroup() { return gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x; }

// workgroups of the dispatch
uint groupCount() { return gl_NumWorkGroups.x * gl_NumWorkGroups.y; }

// The exact box filter at output p of level L+1, from level L (vertical pass first).
FVAL filterAt(uint L, ivec2 p) {
    ivec2 d = levelSize(L);
    uint kx = kernelSize(d.x), ky = kernelSize(d.y);
    ivec2 s = ivec2(kx > 1u ? 2 * p.x : p.x, ky > 1u ? 2 * p.y : p.y);
    FVAL col[3];
    for (uint c = 0u; c < 3u; ++c) {
        if (c < kx) {
            ivec2 q = s + ivec2(c, 0);
            FVAL v0 = loadValue(L, q);
            FVAL v1 = ky > 1u ? loadValue(L, q + ivec2(0, 1)) : v0;
            FVAL v2 = ky > 2u ? loadValue(L, q + ivec2(0, 2)) : v0;
            col[c] = taps(v0, v1, v2, ky, p.y, d.y);
        } else {
            col[c] = col[0];
        }
    }
    return taps(col[0], col[1], col[2], kx, p.x, d.x);
}

shared uint lastGroup;

// Called by every invocation of every workgroup, in uniform control flow, after the
// workgroup's last store of level pc.handoff: true in the workgroup that arrives last.
// Release: the stores (through the coherent binding) are made visible before the atomic;
// acquire: the last workgroup makes the others' stores visible before it reads.
// soleWriter: invocation 0 alone stored level pc.handoff (the 64 x 64 pass's last level),
// so it alone fences before its atomic, and the other invocations do not wait for their
// own stores to drain (every workgroup of the single-pass downsampler lives that much less).
bool arriveLast(bool soleWriter) {
    if (!soleWriter) {
        memoryBarrierImage();
        barrier();
    }
    if (gl_LocalInvocationIndex == 0u) {
        if (soleWriter) memoryBarrierImage();
        uint groups = groupCount();
        bool last = atomicAdd(arrived, 1u) == groups - 1u;
        if (last) atomicExchange(arrived, 0u);  // ready for the next dispatch
        lastGroup = last ? 1u : 0u;
    }
    barrier();
    bool last = lastGroup != 0u;
    if (last) memoryBarrierImage();
    return last;
}

// The last workgroup's continuation of the tiled kernels: levels L+1 .. L+count, one level
// at a time (the exact box filter), every invocation making outputs local, local + LOCAL_SIZE, ...
// (model: mipmap/tiled_model.py, tail_pass).
void tailChain(uint L, uint count) {
    for (uint k = L; k < L + count; ++k) {
        ivec2 s = levelSize(k + 1u);
        uint n = uint(s.x * s.y);
        for (uint idx = gl_LocalInvocationIndex; idx < n; idx += LOCAL_SIZE) {
            ivec2 p = ivec2(idx % uint(s.x), idx / uint(s.x));
            storeTexel(k + 1u, p, filterAt(k, p));
        }
        memoryBarrierImage();
        barrier();
    }
}

#version 450
// shaders/mix.comp followed by the least a single-pass chain adds to its traffic: its last
// levels depend on every workgroup's output, so each workgroup publishes a word (a tile's
// last level: invocation 0's, after its loads), releases it and counts itself in with an
// atomic; the workgroup that arrives last acquires, reads every workgroup's word (one
// dependent round of loads) and stores one result. No level is computed: a single pass whose
// hand-off is a counter costs at least this much (bench/mipmap_breakdown.py, "mix + hand-off").
// FANIN (specialisation constant 0): 0, one counter for every workgroup (the mip kernels'
// arriveLast); N > 0, two levels: the last of each N consecutive workgroups counts their group
// in on the top counter, so the atomics on one address are at most N and G / N instead of G.
// The last arrivals reset their counters, as arriveLast does.
layout(local_size_x = 256) in;
layout(constant_id = 0) const uint FANIN = 0;
layout(set = 0, binding = 0, std430) readonly buffer Src { uvec4 src[]; };
layout(set = 0, binding = 1, std430) writeonly buffer Dst { uvec4 dst[]; };
// arrived: the top counter; sub: one counter per group of FANIN workgroups
layout(set = 0, binding = 2, std430) coherent buffer Counter { uint arrived; uint sub[]; };
// one word per workgroup, then the last workgroup's result
layout(set = 0, binding = 3, std430) coherent buffer Words { uint words[]; };
layout(push_constant) uniform Push { uint count; } pc;
shared uint lastGroup;
shared uint acc;

// one arrival on counter `c` (0: the top one, else sub[c - 1]) of `n` expected: whether it was the last
bool arrive(uint c, uint n) {
    bool last = (c == 0u ? atomicAdd(arrived, 1u) : atomicAdd(sub[c - 1u], 1u)) == n - 1u;
    if (last) {
        if (c == 0u) atomicExchange(arrived, 0u); else atomicExchange(sub[c - 1u], 0u);
    }
    return last;
}

void main() {
    uint stride = gl_NumWorkGroups.x * 256u;
    uint x = 0u;
    for (uint i = gl_GlobalInvocationID.x; i < pc.count; i += stride) {
        uvec4 v = src[i] ^ src[i + pc.count] ^ src[i + 2u * pc.count];
        dst[i] = v;
        x ^= v.x;
    }
    uint groups = gl_NumWorkGroups.x;
    if (gl_LocalInvocationIndex == 0u) {
        uint g = gl_WorkGroupID.x;
        words[g] = x;
        memoryBarrierBuffer();
        bool last;
        if (FANIN == 0u) {
            last = arrive(0u, groups);
        } else {
            uint team = g / FANIN;
            last = arrive(team + 1u, min(FANIN, groups - team * FANIN));
            if (last) {
                // acquire the team's words, release them with this arrival
                memoryBarrierBuffer();
                last = arrive(0u, (groups + FANIN - 1u) / FANIN);
            }
        }
        lastGroup = last ? 1u : 0u;
        acc = 0u;
    }
    barrier();
    if (lastGroup == 0u) return;
    memoryBarrierBuffer();
    uint y = 0u;
    for (uint g = gl_LocalInvocationIndex; g < groups; g += 256u) y ^= words[g];
    atomicXor(acc, y);
    barrier();
    if (gl_LocalInvocationIndex == 0u) words[groups] = acc;
}

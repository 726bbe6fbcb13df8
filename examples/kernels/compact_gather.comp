// compact_gather.comp — step 3 of a compaction step in examples/compact.c (GLSL twin of
// compact_gather_cpu): one invocation per survivor j, run indirectly on the counts the scan wrote.
// It finds the chunk holding survivor j (the last chunk whose first slot is <= j: a binary search over
// part), walks that chunk to its survivor, and writes dst[j] = hash(src[i] + salt).
#version 450

layout(local_size_x = 64, local_size_x_id = 0) in;
layout(local_size_y_id = 1, local_size_z_id = 2) in;

layout(set = 0, binding = 0, std430) writeonly buffer Dst { uint dst[]; };
layout(set = 0, binding = 1, std430) readonly buffer Src { uint src[]; };
layout(set = 0, binding = 2, std430) readonly buffer Part { uint part[]; };
layout(set = 0, binding = 3, std430) readonly buffer Next { uint next[]; };

layout(push_constant) uniform Constants {
    uint k;       // items with src[i] % k != 0 survive
    uint chunk;   // items per chunk
    uint salt;    // mixed into the hash: the step
} pc;

uint ex_hash(uint x) {            // same as ex_hash in examples/common.h
    x ^= x >> 16; x *= 0x7feb352du;
    x ^= x >> 15; x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

void main() {
    uint j = gl_GlobalInvocationID.x;
    if (j >= next[3]) return;
    uint n = next[7], lo = 0u, hi = (n + pc.chunk - 1u) / pc.chunk - 1u;
    while (lo < hi) {                 // the last chunk c with part[c] <= j
        uint mid = (lo + hi + 1u) / 2u;
        if (part[mid] <= j) lo = mid; else hi = mid - 1u;
    }
    uint rank = j - part[lo], end = min(n, (lo + 1u) * pc.chunk);
    for (uint i = lo * pc.chunk; i < end; i++) {
        if (src[i] % pc.k == 0u) continue;
        if (rank == 0u) { dst[j] = ex_hash(src[i] + pc.salt); return; }
        rank--;
    }
}

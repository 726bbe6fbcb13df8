// compact_count.comp — step 1 of a compaction step in examples/compact.c (GLSL twin of compact_count_cpu):
// one invocation per chunk of `chunk` items: part[c] = how many items of chunk c survive (in % k != 0).
// The item count n is meta[3], written on the device by the step before; the exec is indirect on
// meta's words 4..6 (the chunk groups). Binding layout of every accel program: set 0, storage buffers
// at bindings 0..n-1 in exec order, the exec constants as 32-bit push-constant words.
#version 450

layout(local_size_x = 64, local_size_x_id = 0) in;   // the example's group size; spec constants 0..2
layout(local_size_y_id = 1, local_size_z_id = 2) in;

layout(set = 0, binding = 0, std430) readonly buffer In { uint src[]; };
layout(set = 0, binding = 1, std430) writeonly buffer Part { uint part[]; };
layout(set = 0, binding = 2, std430) readonly buffer Meta { uint meta[]; };

layout(push_constant) uniform Constants {
    uint k;       // items with src[i] % k != 0 survive
    uint chunk;   // items per chunk
} pc;

void main() {
    uint c = gl_GlobalInvocationID.x, n = meta[3];
    if (c >= (n + pc.chunk - 1u) / pc.chunk) return;
    uint end = min(n, (c + 1u) * pc.chunk), count = 0u;
    for (uint i = c * pc.chunk; i < end; i++) count += src[i] % pc.k != 0u ? 1u : 0u;
    part[c] = count;
}

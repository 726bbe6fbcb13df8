// compact_scan.comp — step 2 of a compaction step in examples/compact.c (GLSL twin of compact_scan_cpu):
// one invocation turns the chunks' survivor counts into their first output slots (an exclusive prefix
// sum, in place), and writes the next step's meta: the groups of the gather (survivors / group size,
// rounded up; 1, 1), the survivor count, the groups of the next count step, this step's item count.
#version 450

layout(local_size_x = 1, local_size_x_id = 0) in;
layout(local_size_y_id = 1, local_size_z_id = 2) in;

layout(set = 0, binding = 0, std430) buffer Part { uint part[]; };
layout(set = 0, binding = 1, std430) readonly buffer Meta { uint meta[]; };
layout(set = 0, binding = 2, std430) writeonly buffer Next { uint next[]; };
layout(set = 0, binding = 3, std430) writeonly buffer Log { uint survivors[]; };

layout(push_constant) uniform Constants {
    uint step_index;   // which word of survivors[] this step fills
    uint group;        // the group size of the indirect execs
    uint chunk;        // items per chunk
} pc;

void main() {
    if (gl_GlobalInvocationID != uvec3(0u)) return;
    uint n = meta[3], chunks = (n + pc.chunk - 1u) / pc.chunk, sum = 0u;
    for (uint c = 0u; c < chunks; c++) {
        uint count = part[c];
        part[c] = sum;
        sum += count;
    }
    uint next_chunks = (sum + pc.chunk - 1u) / pc.chunk;
    next[0] = (sum + pc.group - 1u) / pc.group; next[1] = 1u; next[2] = 1u;
    next[3] = sum;
    next[4] = (next_chunks + pc.group - 1u) / pc.group; next[5] = 1u; next[6] = 1u;
    next[7] = n;
    survivors[pc.step_index] = sum;
}

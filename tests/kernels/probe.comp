#version 450
// Records what a work group sees (the CPU version records accel_dispatch; see tests/kernels.h).
// Group 0 writes out[0..2] = group count, out[3..5] = group size; every group g writes out[16 + g] = 1
// (the CPU version writes worker + 1). constants: c0 (written to out[13]).
layout(local_size_x = 1, local_size_x_id = 0) in;
layout(local_size_y_id = 1, local_size_z_id = 2) in;
layout(set = 0, binding = 0) buffer Out { uint data[]; };
layout(push_constant) uniform Constants { uint c0; } pc;
void main() {
    if (gl_LocalInvocationIndex != 0u) return;
    uvec3 g = gl_WorkGroupID, n = gl_NumWorkGroups;
    if (g == uvec3(0u)) {
        data[0] = n.x; data[1] = n.y; data[2] = n.z;
        data[3] = gl_WorkGroupSize.x; data[4] = gl_WorkGroupSize.y; data[5] = gl_WorkGroupSize.z;
        data[13] = pc.c0;
    }
    data[16u + (g.z * n.y + g.y) * n.x + g.x] = 1u;
}

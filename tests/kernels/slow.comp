#version 450
// A deliberately slow kernel: out[i] = slow_hash(i ^ seed, iters) for i < n. constants: n, iters, seed.
// slow_hash: x = x * 1664525 + 1013904223; x ^= x >> 13; repeated iters times.
layout(local_size_x = 64, local_size_x_id = 0) in;
layout(local_size_y_id = 1, local_size_z_id = 2) in;
layout(set = 0, binding = 0) buffer Out { uint data[]; };
layout(push_constant) uniform Constants { uint n; uint iters; uint seed; } pc;
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= pc.n) return;
    uint x = i ^ pc.seed;
    for (uint k = 0u; k < pc.iters; k++) { x = x * 1664525u + 1013904223u; x ^= x >> 13; }
    data[i] = x;
}

#version 450
// y[i] += a * x[i] for i < n. constants: a (float bits), n.
layout(local_size_x = 64, local_size_x_id = 0) in;
layout(local_size_y_id = 1, local_size_z_id = 2) in;
layout(set = 0, binding = 0) buffer Y { float y[]; };
layout(set = 0, binding = 1) readonly buffer X { float x[]; };
layout(push_constant) uniform Constants { uint a_bits; uint n; } pc;
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < pc.n) y[i] += uintBitsToFloat(pc.a_bits) * x[i];
}

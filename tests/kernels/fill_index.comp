#version 450
// out[i] = i + c for i < n. constants: c, n.
layout(local_size_x = 64, local_size_x_id = 0) in;
layout(local_size_y_id = 1, local_size_z_id = 2) in;
layout(set = 0, binding = 0) buffer Out { uint data[]; };
layout(push_constant) uniform Constants { uint c; uint n; } pc;
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < pc.n) data[i] = i + pc.c;
}

#version 450
// One invocation writes out[at] = x, out[at + 1] = y, out[at + 2] = z: the group counts of an indirect
// exec, decided on the device. constants: at, x, y, z.
layout(local_size_x = 1, local_size_x_id = 0) in;
layout(local_size_y_id = 1, local_size_z_id = 2) in;
layout(set = 0, binding = 0) buffer Out { uint data[]; };
layout(push_constant) uniform Constants { uint at; uint x; uint y; uint z; } pc;
void main() {
    if (gl_GlobalInvocationID != uvec3(0u)) return;
    data[pc.at] = pc.x;
    data[pc.at + 1u] = pc.y;
    data[pc.at + 2u] = pc.z;
}

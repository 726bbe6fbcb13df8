#version 450
// dst[i] = src[i] for i < n. constants: n.
layout(local_size_x = 64, local_size_x_id = 0) in;
layout(local_size_y_id = 1, local_size_z_id = 2) in;
layout(set = 0, binding = 0) writeonly buffer Dst { uint dst[]; };
layout(set = 0, binding = 1) readonly buffer Src { uint src[]; };
layout(push_constant) uniform Constants { uint n; } pc;
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < pc.n) dst[i] = src[i];
}

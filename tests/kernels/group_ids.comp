#version 450
// For every item (x, y, z) inside the global size (gx, gy, gz):
//   out[(z * gy + y) * gx + x] = 0x80000000 | group.x | group.y << 10 | group.z << 20
// constants: gx, gy, gz.
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(set = 0, binding = 0) buffer Out { uint data[]; };
layout(push_constant) uniform Constants { uint gx; uint gy; uint gz; } pc;
void main() {
    uvec3 id = gl_GlobalInvocationID;
    if (id.x >= pc.gx || id.y >= pc.gy || id.z >= pc.gz) return;
    uvec3 g = gl_WorkGroupID;
    data[(id.z * pc.gy + id.y) * pc.gx + id.x] = 0x80000000u | g.x | (g.y << 10) | (g.z << 20);
}

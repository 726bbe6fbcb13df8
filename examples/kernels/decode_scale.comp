// decode_scale.comp — step 2 of a decoder step in examples/replay.c (GLSL twin of decode_scale_cpu):
// buf[i] = buf[i] * 3 + w[i], integer math so every backend gives identical bits.
#version 450

layout(local_size_x = 256, local_size_x_id = 0) in;
layout(local_size_y_id = 1, local_size_z_id = 2) in;

layout(set = 0, binding = 0, std430) buffer Buf { uint buf[]; };
layout(set = 0, binding = 1, std430) readonly buffer W { uint w[]; };

layout(push_constant) uniform Constants { uint n; } pc;

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < pc.n) buf[i] = buf[i] * 3u + w[i];
}

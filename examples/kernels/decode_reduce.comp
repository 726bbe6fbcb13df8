// decode_reduce.comp — step 3 of a decoder step in examples/replay.c (GLSL twin of decode_reduce_cpu):
// tokens[step] += the wrapping sum of buf[0..n): the step's "token".
#version 450

layout(local_size_x = 256, local_size_x_id = 0) in;
layout(local_size_y_id = 1, local_size_z_id = 2) in;

layout(set = 0, binding = 0, std430) readonly buffer Buf { uint buf[]; };
layout(set = 0, binding = 1, std430) buffer Tokens { uint tokens[]; };

layout(push_constant) uniform Constants {
    uint step_index;   // the decoder step (patched per replay): which token
    uint n;
} pc;

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < pc.n) atomicAdd(tokens[pc.step_index], buf[i]);
}

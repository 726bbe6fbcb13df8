// decode_mix.comp — step 1 of a decoder step in examples/replay.c (GLSL twin of decode_mix_cpu):
// dst[i] = hash(src[i] ^ step * 0x9E3779B9 ^ i). src is the previous step's ring slot, dst this one's.
// Binding layout of every accel program: set 0, storage buffers at bindings 0..n-1 in exec order,
// the exec constants as 32-bit push-constant words.
#version 450

layout(local_size_x = 256, local_size_x_id = 0) in;   // the example's group size; spec constants 0..2
layout(local_size_y_id = 1, local_size_z_id = 2) in;

layout(set = 0, binding = 0, std430) readonly buffer Src { uint src[]; };
layout(set = 0, binding = 1, std430) writeonly buffer Dst { uint dst[]; };

layout(push_constant) uniform Constants {
    uint step_index;   // the decoder step (patched per replay)
    uint n;            // elements
} pc;

uint ex_hash(uint x) {            // same as ex_hash in examples/common.h
    x ^= x >> 16; x *= 0x7feb352du;
    x ^= x >> 15; x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < pc.n) dst[i] = ex_hash(src[i] ^ (pc.step_index * 0x9E3779B9u) ^ i);
}

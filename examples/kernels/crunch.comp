// crunch.comp — the compute stage of examples/pipeline.c (GLSL twin of crunch_cpu):
// out[chunk*n + i] = rounds x hash(src[i]), integer math so every backend gives identical bits.
// Binding layout of every accel program: set 0, storage buffers at bindings 0..n-1 in exec order,
// the exec constants as 32-bit push-constant words.
// Build: glslc -fshader-stage=compute examples/kernels/crunch.comp -o build/crunch.spv
#version 450

layout(local_size_x = 256, local_size_x_id = 0) in;   // the example's group size; spec constants 0..2
layout(local_size_y_id = 1, local_size_z_id = 2) in;

layout(set = 0, binding = 0, std430) readonly buffer Src { uint src[]; };
layout(set = 0, binding = 1, std430) writeonly buffer Out { uint out_words[]; };

layout(push_constant) uniform Constants {
    uint chunk;    // which chunk: its results go to out_words[chunk*n ..]
    uint n;        // elements per chunk
    uint rounds;   // hash rounds per element
} pc;

uint ex_hash(uint x) {            // same as ex_hash in examples/common.h
    x ^= x >> 16; x *= 0x7feb352du;
    x ^= x >> 15; x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= pc.n) return;
    uint v = src[i];
    for (uint r = 0u; r < pc.rounds; r++) v = ex_hash(v + r);
    out_words[pc.chunk * pc.n + i] = v;
}

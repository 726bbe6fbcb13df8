/* examples/crunch.h — the "crunch" kernel of examples/pipeline.c and examples/devices.c, in every form
   the backends run: crunch_cpu (CPU), examples/kernels/crunch.comp (GLSL, compiled by the build into
   crunch.spv.inc for -DACCEL_EXAMPLE_HAVE_VULKAN), crunch_cuda (CUDA C, compiled by NVRTC).
   out[chunk * n + i] = rounds x ex_hash(src[i]); buffers { src, out }, constants { chunk, n, rounds }.
   Include it after common.h. */
#ifndef ACCEL_EXAMPLE_CRUNCH_H
#define ACCEL_EXAMPLE_CRUNCH_H

#ifdef ACCEL_EXAMPLE_HAVE_VULKAN
static const uint32_t ex_crunch_spv[] =
#include "crunch.spv.inc"
;
#endif

/* The per-element computation, shared by the CPU kernel and the host check. */
static uint32_t crunch_value(uint32_t v, uint32_t rounds) {
    for (uint32_t r = 0; r < rounds; r++) v = ex_hash(v + r);
    return v;
}

static void crunch_cpu(const accel_dispatch* d) {
    const uint32_t* src = (const uint32_t*)d->buffers[0];
    uint32_t* out = (uint32_t*)d->buffers[1];
    uint32_t chunk = d->constants[0], n = d->constants[1], rounds = d->constants[2];
    uint32_t begin = d->group_id[0] * d->group_size[0];
    uint32_t end = begin + d->group_size[0];
    if (end > n) end = n;
    for (uint32_t i = begin; i < end; i++) out[(size_t)chunk * n + i] = crunch_value(src[i], rounds);
}

static const char crunch_cuda[] =
    "__device__ unsigned ex_hash(unsigned x) {\n"
    "    x ^= x >> 16; x *= 0x7feb352du;\n"
    "    x ^= x >> 15; x *= 0x846ca68bu;\n"
    "    x ^= x >> 16;\n"
    "    return x;\n"
    "}\n"
    "extern \"C\" __global__ void crunch(const unsigned* src, unsigned* out,\n"
    "                                   unsigned chunk, unsigned n, unsigned rounds) {\n"
    "    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i >= n) return;\n"
    "    unsigned v = src[i];\n"
    "    for (unsigned r = 0; r < rounds; r++) v = ex_hash(v + r);\n"
    "    out[(unsigned long long)chunk * n + i] = v;\n"
    "}\n";

#endif /* ACCEL_EXAMPLE_CRUNCH_H */

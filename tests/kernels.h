/* tests/kernels.h — the test kernels, each in three forms side by side:
     - GLSL compute shader tests/kernels/NAME.comp, compiled by the build with
       `glslc -fshader-stage=compute -mfmt=c` into build/kernels/NAME.spv.inc (add -Ibuild/kernels);
     - its CPU function (one work group per call; skips items with id >= global_size);
     - its CUDA C source (NVRTC; extern "C", buffers first, then the 32-bit constants).
   Binding layout (all formats): buffers are set 0, bindings 0..n-1 / the first n params; constants are
   32-bit push constants / the next params. GPU kernels cannot see the global size, so every kernel takes
   its bounds as constants too; the CPU functions deliberately use accel_dispatch.global_size instead,
   which is what the CPU backend promises.
   The shaders declare local_size_{x,y,z}_id = 0, 1, 2 so a backend can specialise the group size.
   Define ACCEL_TEST_NO_SPIRV to build without the generated .spv.inc files (CPU-only checks).

   test_kernel_desc(K) returns the full accel_program_desc; test_program_create(dev, K, &prog). */
#ifndef ACCEL_TEST_KERNELS_H_INCLUDED
#define ACCEL_TEST_KERNELS_H_INCLUDED

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

typedef enum test_kernel {
    TK_SAXPY,       /* buffers y, x;  constants a (float bits), n */
    TK_FILL_INDEX,  /* buffers out;   constants c, n               out[i] = i + c */
    TK_ADD_ONE,     /* buffers buf;   constants n                  buf[i] += 1 */
    TK_COPY_U32,    /* buffers dst, src; constants n               dst[i] = src[i] */
    TK_GROUP_IDS,   /* buffers out;   constants gx, gy, gz         see group_ids.comp */
    TK_SLOW,        /* buffers out;   constants n, iters, seed     out[i] = test_slow_hash(i ^ seed, iters) */
    TK_PROBE,       /* buffers out;   constants c0                 records accel_dispatch (CPU) */
    TK_SET_COUNTS,  /* buffers out;   constants at, x, y, z        out[at..at+2] = x, y, z (one item) */
    TK_COUNT
} test_kernel;

/* ==== saxpy ==== */
static inline void test_k_saxpy(const accel_dispatch* d) {
    float* y = (float*)d->buffers[0];
    const float* x = (const float*)d->buffers[1];
    float a;
    memcpy(&a, &d->constants[0], sizeof a);
    uint32_t i0 = d->group_id[0] * d->group_size[0];
    for (uint32_t l = 0; l < d->group_size[0]; l++) {
        uint32_t i = i0 + l;
        if (i >= d->global_size[0]) break;
        y[i] += a * x[i];
    }
}
static const char test_k_saxpy_cuda[] =
    "extern \"C\" __global__ void saxpy(float* y, const float* x, unsigned a_bits, unsigned n) {\n"
    "    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) y[i] += __uint_as_float(a_bits) * x[i];\n"
    "}\n";

/* ==== fill_index ==== */
static inline void test_k_fill_index(const accel_dispatch* d) {
    uint32_t* out = (uint32_t*)d->buffers[0];
    uint32_t c = d->constants[0];
    uint32_t i0 = d->group_id[0] * d->group_size[0];
    for (uint32_t l = 0; l < d->group_size[0]; l++) {
        uint32_t i = i0 + l;
        if (i >= d->global_size[0]) break;
        out[i] = i + c;
    }
}
static const char test_k_fill_index_cuda[] =
    "extern \"C\" __global__ void fill_index(unsigned* out, unsigned c, unsigned n) {\n"
    "    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) out[i] = i + c;\n"
    "}\n";

/* ==== add_one ==== */
static inline void test_k_add_one(const accel_dispatch* d) {
    uint32_t* buf = (uint32_t*)d->buffers[0];
    uint32_t i0 = d->group_id[0] * d->group_size[0];
    for (uint32_t l = 0; l < d->group_size[0]; l++) {
        uint32_t i = i0 + l;
        if (i >= d->global_size[0]) break;
        buf[i] += 1;
    }
}
static const char test_k_add_one_cuda[] =
    "extern \"C\" __global__ void add_one(unsigned* buf, unsigned n) {\n"
    "    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) buf[i] += 1u;\n"
    "}\n";

/* ==== copy_u32 ==== */
static inline void test_k_copy_u32(const accel_dispatch* d) {
    uint32_t* dst = (uint32_t*)d->buffers[0];
    const uint32_t* src = (const uint32_t*)d->buffers[1];
    uint32_t i0 = d->group_id[0] * d->group_size[0];
    for (uint32_t l = 0; l < d->group_size[0]; l++) {
        uint32_t i = i0 + l;
        if (i >= d->global_size[0]) break;
        dst[i] = src[i];
    }
}
static const char test_k_copy_u32_cuda[] =
    "extern \"C\" __global__ void copy_u32(unsigned* dst, const unsigned* src, unsigned n) {\n"
    "    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) dst[i] = src[i];\n"
    "}\n";

/* ==== group_ids ==== */
static inline uint32_t test_group_code(uint32_t gx, uint32_t gy, uint32_t gz) {
    return 0x80000000u | gx | (gy << 10) | (gz << 20);
}
static inline void test_k_group_ids(const accel_dispatch* d) {
    uint32_t* out = (uint32_t*)d->buffers[0];
    const uint32_t* n = d->global_size;
    uint32_t code = test_group_code(d->group_id[0], d->group_id[1], d->group_id[2]);
    for (uint32_t lz = 0; lz < d->group_size[2]; lz++) {
        uint32_t z = d->group_id[2] * d->group_size[2] + lz;
        if (z >= n[2]) break;
        for (uint32_t ly = 0; ly < d->group_size[1]; ly++) {
            uint32_t y = d->group_id[1] * d->group_size[1] + ly;
            if (y >= n[1]) break;
            for (uint32_t lx = 0; lx < d->group_size[0]; lx++) {
                uint32_t x = d->group_id[0] * d->group_size[0] + lx;
                if (x >= n[0]) break;
                out[((size_t)z * n[1] + y) * n[0] + x] = code;
            }
        }
    }
}
static const char test_k_group_ids_cuda[] =
    "extern \"C\" __global__ void group_ids(unsigned* out, unsigned gx, unsigned gy, unsigned gz) {\n"
    "    unsigned x = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    unsigned y = blockIdx.y * blockDim.y + threadIdx.y;\n"
    "    unsigned z = blockIdx.z * blockDim.z + threadIdx.z;\n"
    "    if (x >= gx || y >= gy || z >= gz) return;\n"
    "    out[(z * gy + y) * gx + x] = 0x80000000u | blockIdx.x | (blockIdx.y << 10) | (blockIdx.z << 20);\n"
    "}\n";

/* ==== slow ==== */
static inline uint32_t test_slow_hash(uint32_t x, uint32_t iters) {
    for (uint32_t k = 0; k < iters; k++) { x = x * 1664525u + 1013904223u; x ^= x >> 13; }
    return x;
}
static inline void test_k_slow(const accel_dispatch* d) {
    uint32_t* out = (uint32_t*)d->buffers[0];
    uint32_t iters = d->constants[1], seed = d->constants[2];
    uint32_t i0 = d->group_id[0] * d->group_size[0];
    for (uint32_t l = 0; l < d->group_size[0]; l++) {
        uint32_t i = i0 + l;
        if (i >= d->global_size[0]) break;
        out[i] = test_slow_hash(i ^ seed, iters);
    }
}
static const char test_k_slow_cuda[] =
    "extern \"C\" __global__ void slow(unsigned* out, unsigned n, unsigned iters, unsigned seed) {\n"
    "    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i >= n) return;\n"
    "    unsigned x = i ^ seed;\n"
    "    for (unsigned k = 0; k < iters; k++) { x = x * 1664525u + 1013904223u; x ^= x >> 13; }\n"
    "    out[i] = x;\n"
    "}\n";

/* ==== probe ==== */
/* CPU layout of out (uint32): [0..2] group_count, [3..5] group_size, [6..8] global_size,
   [9] buffer_count, [10] constant_count, [11] buffer_sizes[0], [12] buffers[0] non-NULL,
   [13] constants[0]; out[16 + linear group id] = worker + 1. Group 0 writes the header.
   test_probe_overlap counts work groups that found their `worker` lane busy (must stay 0). */
#define TEST_PROBE_LANES 256
static atomic_int test_probe_busy[TEST_PROBE_LANES];
static atomic_int test_probe_overlap;
static inline void test_k_probe(const accel_dispatch* d) {
    uint32_t* out = (uint32_t*)d->buffers[0];
    if (d->worker < TEST_PROBE_LANES && atomic_exchange(&test_probe_busy[d->worker], 1) != 0)
        atomic_fetch_add(&test_probe_overlap, 1);
    uint32_t linear = (d->group_id[2] * d->group_count[1] + d->group_id[1]) * d->group_count[0] + d->group_id[0];
    if (linear == 0) {
        for (int k = 0; k < 3; k++) {
            out[0 + k] = d->group_count[k];
            out[3 + k] = d->group_size[k];
            out[6 + k] = d->global_size[k];
        }
        out[9] = d->buffer_count;
        out[10] = d->constant_count;
        out[11] = (uint32_t)d->buffer_sizes[0];
        out[12] = d->buffers[0] != NULL;
        out[13] = d->constants[0];
    }
    out[16 + linear] = d->worker + 1;
    /* a little work so that groups overlap in time */
    volatile uint32_t sink = test_slow_hash(linear, 200);
    (void)sink;
    if (d->worker < TEST_PROBE_LANES) atomic_store(&test_probe_busy[d->worker], 0);
}
static const char test_k_probe_cuda[] =
    "extern \"C\" __global__ void probe(unsigned* out, unsigned c0) {\n"
    "    if (threadIdx.x + threadIdx.y + threadIdx.z != 0) return;\n"
    "    unsigned g = (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;\n"
    "    if (g == 0) {\n"
    "        out[0] = gridDim.x; out[1] = gridDim.y; out[2] = gridDim.z;\n"
    "        out[3] = blockDim.x; out[4] = blockDim.y; out[5] = blockDim.z; out[13] = c0;\n"
    "    }\n"
    "    out[16 + g] = 1;\n"
    "}\n";

/* ==== set_counts ==== */
/* The group counts of an indirect exec, written on the device by item 0. */
static inline void test_k_set_counts(const accel_dispatch* d) {
    uint32_t* out = (uint32_t*)d->buffers[0];
    if (d->group_id[0] | d->group_id[1] | d->group_id[2]) return;
    for (uint32_t k = 0; k < 3; k++) out[d->constants[0] + k] = d->constants[1 + k];
}
static const char test_k_set_counts_cuda[] =
    "extern \"C\" __global__ void set_counts(unsigned* out, unsigned at, unsigned x, unsigned y, unsigned z) {\n"
    "    if (blockIdx.x + blockIdx.y + blockIdx.z + threadIdx.x + threadIdx.y + threadIdx.z != 0) return;\n"
    "    out[at] = x; out[at + 1] = y; out[at + 2] = z;\n"
    "}\n";

/* ==== SPIR-V (generated by the build) ==== */
#ifndef ACCEL_TEST_NO_SPIRV
static const uint32_t test_k_saxpy_spv[] =
#include "saxpy.spv.inc"
;
static const uint32_t test_k_fill_index_spv[] =
#include "fill_index.spv.inc"
;
static const uint32_t test_k_add_one_spv[] =
#include "add_one.spv.inc"
;
static const uint32_t test_k_copy_u32_spv[] =
#include "copy_u32.spv.inc"
;
static const uint32_t test_k_group_ids_spv[] =
#include "group_ids.spv.inc"
;
static const uint32_t test_k_slow_spv[] =
#include "slow.spv.inc"
;
static const uint32_t test_k_probe_spv[] =
#include "probe.spv.inc"
;
static const uint32_t test_k_set_counts_spv[] =
#include "set_counts.spv.inc"
;
#  define TEST_K_SPV(name) test_k_##name##_spv, sizeof test_k_##name##_spv
#else
#  define TEST_K_SPV(name) NULL, 0
#endif

/* ==== table ==== */
static inline accel_program_desc test_kernel_desc_make(const char* name, accel_cpu_kernel cpu, const uint32_t* spirv,
                                                       size_t spirv_size, const char* cuda, uint32_t buffers,
                                                       uint32_t constants) {
    accel_program_desc d;
    memset(&d, 0, sizeof d);
    d.name = name;
    d.cpu = cpu;
    d.spirv = spirv;
    d.spirv_size = spirv_size;
    d.cuda_source = cuda;
    d.buffer_count = buffers;
    d.constant_count = constants;
    return d;
}
/* The full program desc (CPU function + SPIR-V + CUDA C) of kernel k. */
static inline accel_program_desc test_kernel_desc(test_kernel k) {
    switch (k) {
    case TK_SAXPY:      return test_kernel_desc_make("saxpy", test_k_saxpy, TEST_K_SPV(saxpy), test_k_saxpy_cuda, 2, 2);
    case TK_FILL_INDEX: return test_kernel_desc_make("fill_index", test_k_fill_index, TEST_K_SPV(fill_index), test_k_fill_index_cuda, 1, 2);
    case TK_ADD_ONE:    return test_kernel_desc_make("add_one", test_k_add_one, TEST_K_SPV(add_one), test_k_add_one_cuda, 1, 1);
    case TK_COPY_U32:   return test_kernel_desc_make("copy_u32", test_k_copy_u32, TEST_K_SPV(copy_u32), test_k_copy_u32_cuda, 2, 1);
    case TK_GROUP_IDS:  return test_kernel_desc_make("group_ids", test_k_group_ids, TEST_K_SPV(group_ids), test_k_group_ids_cuda, 1, 3);
    case TK_SLOW:       return test_kernel_desc_make("slow", test_k_slow, TEST_K_SPV(slow), test_k_slow_cuda, 1, 3);
    case TK_PROBE:      return test_kernel_desc_make("probe", test_k_probe, TEST_K_SPV(probe), test_k_probe_cuda, 1, 1);
    case TK_SET_COUNTS: return test_kernel_desc_make("set_counts", test_k_set_counts, TEST_K_SPV(set_counts), test_k_set_counts_cuda, 1, 4);
    case TK_COUNT:      break;
    }
    return test_kernel_desc_make(NULL, NULL, NULL, 0, NULL, 0, 0);
}
static inline accel_result test_program_create(accel_device* dev, test_kernel k, accel_program** out) {
    accel_program_desc d = test_kernel_desc(k);
    return accel_program_create(dev, &d, out);
}

/* CUDA: an out-of-bounds store, which loses the context (sticky), as after a real bug; the mock's
   "oob" kernel does the same to its context. A function: most tests do not use it. */
static inline const char* test_oob_ptx(void) {
    return ".version 7.0\n.target sm_70\n.address_size 64\n"
           ".visible .entry oob(.param .u64 p)\n{\n"
           "    .reg .u64 %a;\n    .reg .u32 %v;\n"
           "    ld.param.u64 %a, [p];\n    cvta.to.global.u64 %a, %a;\n"
           "    add.u64 %a, %a, 0x100000000000;\n    mov.u32 %v, 7;\n    st.global.u32 [%a], %v;\n    ret;\n}\n";
}

#endif /* ACCEL_TEST_KERNELS_H_INCLUDED */

/* native.c — other libraries in a queue's order (accel_queue_native, DESIGN.md 7.1): one step of a small
   two-layer MLP, out = relu(x W1 + b1) W2 + b2, where the GEMMs are a library's, bias and activation are
   accel kernels, and all of it runs in one queue's order with no host round trip between the steps:

     native  h = x W1          the GEMM, enqueued by fn on the queue's own native queue
     exec    h = relu(h + b1)  mlp_bias_act (an accel kernel)
     native  y = h W2
     exec    y = y + b2        mlp_bias_act without the ReLU
     native  out = y           the engine's own copy into its readback buffer
     signal  done

   fn runs once the commands before it are *enqueued* (GPU) or *completed* (CPU), so what it enqueues
   runs between its neighbours. Per backend:
     cpu     the GEMM is cblas_sgemm from a BLAS found at run time (libopenblas.so.0, else any CBLAS such
             as libblas.so.3), else a plain C loop, so the example needs only a compiler; the copy is a
             memcpy. fn runs on the queue's executor once the commands before it completed.
     cuda    cublasSgemm on the stream fn receives (libcublas loaded at run time, no CUDA headers; env
             ACCEL_EXAMPLE_CUBLAS_LIBRARY names it, as for examples/nccl_allreduce.c: make test runs
             this with tests/mock_nccl.c's stand-in on the mock driver); the copy is cuMemcpyDtoDAsync. Where cuBLAS cannot be loaded or cannot start (no libcublas, or
             the mock driver of `make test`), the example says why and runs the GEMM as an accel kernel
             (mlp_matmul, which accumulates) behind a native cuMemsetD32Async that zeroes its output.
     vulkan  no GEMM library here: the GEMM is the accel kernel mlp_matmul, and the native steps are the
             engine's own vkCmdFillBuffer (zeroing the accumulator between two dispatches) and
             vkCmdCopyBuffer (the readback copy), recorded into accel's command buffer between the
             barriers accel puts between its own commands.
   The result is checked against a plain C reference; the program exits 1 on a mismatch.

   Then, on CUDA only, a stream accel does not own (one the example creates with the driver, as a
   framework would have) joins the order through accel signals:
     queue   fill t with 1.0, signal ready = 1
     stream  accel_cuda_stream_wait(ready >= 1), cuMemsetD32Async (its "work": half of t = 2.0),
             accel_cuda_stream_signal(produced = 1)
     queue   wait produced >= 1, exec t = t + b1, signal done
   On the other backends it says why it skips that part.

   Build and run (from the repository root):
     mkdir -p build && cc -std=gnu11 -O2 -I. examples/native.c -o build/native -lpthread -lm -ldl && ./build/native [cpu|any]
   With the CUDA backend add -DACCEL_EXAMPLE_HAVE_CUDA (make examples does) and run `./build/native cuda`;
   with Vulkan, `make run-vulkan` (kernels examples/kernels/mlp_*.comp). */
#define ACCEL_IMPLEMENTATION
#include "accel.h"
#include "common.h"

#include <math.h>
#include <stdlib.h>

#if defined(__unix__) && !defined(__wasi__) && !defined(__EMSCRIPTEN__)
#  include <dlfcn.h>
#  define EX_HAVE_DLOPEN 1
#else
#  define EX_HAVE_DLOPEN 0     /* WASI, Emscripten, Windows: the CPU GEMM is the C loop */
#endif

#ifdef ACCEL_EXAMPLE_HAVE_VULKAN
static const uint32_t ex_mlp_matmul_spv[] =
#include "mlp_matmul.spv.inc"
;
static const uint32_t ex_mlp_bias_act_spv[] =
#include "mlp_bias_act.spv.inc"
;
#endif

enum { BATCH = 32, D_IN = 64, D_HID = 128, D_OUT = 16, STEPS = 10 };

/* ==== the accel kernels ==== */
/* y[i] = act(y[i] + bias[i % cols]) for i < count; constants { count, cols, relu } */
static void mlp_bias_act_cpu(const accel_dispatch* d) {
    float* y = (float*)d->buffers[0];
    const float* bias = (const float*)d->buffers[1];
    uint32_t count = d->constants[0], cols = d->constants[1], relu = d->constants[2];
    uint32_t begin = d->group_id[0] * d->group_size[0], end = begin + d->group_size[0];
    for (uint32_t i = begin; i < end && i < count; i++) {
        float v = y[i] + bias[i % cols];
        y[i] = relu && v < 0.0f ? 0.0f : v;
    }
}
static const char mlp_bias_act_cuda[] =
    "extern \"C\" __global__ void mlp_bias_act(float* y, const float* bias, unsigned count, unsigned cols,\n"
    "                                          unsigned relu) {\n"
    "    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i >= count) return;\n"
    "    float v = y[i] + bias[i % cols];\n"
    "    y[i] = relu && v < 0.0f ? 0.0f : v;\n"
    "}\n";
/* C += A B, row-major (C rows x cols, A rows x inner, B inner x cols); constants { rows, cols, inner }.
   The GPU fallback where no GEMM library is at hand (no CPU twin: the CPU's GEMM is the native step). */
static const char mlp_matmul_cuda[] =
    "extern \"C\" __global__ void mlp_matmul(float* c, const float* a, const float* b, unsigned rows,\n"
    "                                        unsigned cols, unsigned inner) {\n"
    "    unsigned col = blockIdx.x * blockDim.x + threadIdx.x, row = blockIdx.y * blockDim.y + threadIdx.y;\n"
    "    if (row >= rows || col >= cols) return;\n"
    "    float sum = 0.0f;\n"
    "    for (unsigned i = 0; i < inner; i++) sum += a[row * inner + i] * b[i * cols + col];\n"
    "    c[row * cols + col] += sum;\n"
    "}\n";

/* ==== the libraries, found at run time ==== */
typedef void (*ex_cblas_sgemm_fn)(int order, int ta, int tb, int m, int n, int k, float alpha, const float* a,
                                  int lda, const float* b, int ldb, float beta, float* c, int ldc);
typedef int (*ex_cublas_create_fn)(void** handle);
typedef int (*ex_cublas_destroy_fn)(void* handle);
typedef int (*ex_cublas_stream_fn)(void* handle, void* stream);
typedef int (*ex_cublas_sgemm_fn)(void* handle, int ta, int tb, int m, int n, int k, const float* alpha,
                                  const float* a, int lda, const float* b, int ldb, const float* beta,
                                  float* c, int ldc);
/* the driver calls of the native steps and of the foreign stream (CUDA's ABI: int results) */
typedef struct ex_cu {
    int (*CtxSetCurrent)(void* ctx);
    int (*StreamCreate)(void** stream, unsigned flags);
    int (*StreamDestroy)(void* stream);
    int (*StreamSynchronize)(void* stream);
    int (*MemsetD32Async)(uint64_t dptr, unsigned value, size_t count, void* stream);
    int (*MemcpyDtoDAsync)(uint64_t dst, uint64_t src, size_t bytes, void* stream);
} ex_cu;

typedef struct mlp {
    ex_cblas_sgemm_fn cblas;             /* CPU */
    void* cublas;                        /* CUDA: a cuBLAS handle, or NULL (then mlp_matmul) */
    ex_cublas_stream_fn cublas_stream;
    ex_cublas_sgemm_fn cublas_sgemm;
    ex_cublas_destroy_fn cublas_destroy;
    ex_cu cu;
    bool have_cu;
    void (*vk_fill)(void* cb, uint64_t buffer, uint64_t offset, uint64_t size, uint32_t data);
    void (*vk_copy)(void* cb, uint64_t src, uint64_t dst, uint32_t count, const void* regions);
    char error[200];                     /* the first failure inside a native step ("" when none) */
} mlp;

/* One native step's work: c = a b (GEMM), c = 0 (ZERO), c = a (COPY); rows x cols floats of c. */
typedef enum { MLP_GEMM, MLP_ZERO, MLP_COPY } mlp_kind;
typedef struct mlp_op { mlp* m; mlp_kind kind; accel_buffer *c, *a, *b; uint32_t rows, cols, inner; } mlp_op;

#if EX_HAVE_DLOPEN
static void* ex_sym(const char* const* libs, const char* name, const char** found) {
    for (; *libs; libs++) {
        void* h = dlopen(*libs, RTLD_NOW | RTLD_LOCAL);
        void* sym = h ? dlsym(h, name) : NULL;
        if (sym) { *found = *libs; return sym; }
        if (h) dlclose(h);
    }
    return NULL;
}
#endif

/* CPU: a CBLAS if one is installed (libopenblas0 / libblas3 on Debian), else the C loop. */
static const char* mlp_open_cblas(mlp* m) {
#if EX_HAVE_DLOPEN
    static const char* const libs[] = { "libopenblas.so.0", "libopenblas.so", "libblas.so.3", NULL };
    const char* found = NULL;
    void* sym = ex_sym(libs, "cblas_sgemm", &found);
    memcpy(&m->cblas, &sym, sizeof sym);
    if (m->cblas) return found;
#endif
    (void)m;
    return NULL;
}

#if defined(ACCEL_EXAMPLE_HAVE_CUDA) && EX_HAVE_DLOPEN
/* The driver, through cuGetProcAddress as accel resolves it (the _v2 of CUDA 12, else the 11.3 one). */
static bool mlp_open_driver(mlp* m) {
    static const struct { const char* name; int version; size_t at; } want[] = {
        { "cuCtxSetCurrent", 4000, offsetof(ex_cu, CtxSetCurrent) },
        { "cuStreamCreate", 2000, offsetof(ex_cu, StreamCreate) },
        { "cuStreamDestroy", 4000, offsetof(ex_cu, StreamDestroy) },
        { "cuStreamSynchronize", 2000, offsetof(ex_cu, StreamSynchronize) },
        { "cuMemsetD32Async", 3020, offsetof(ex_cu, MemsetD32Async) },
        { "cuMemcpyDtoDAsync", 3020, offsetof(ex_cu, MemcpyDtoDAsync) },
    };
    const char* path = getenv("ACCEL_CUDA_LIBRARY");
    void* lib = dlopen(path && path[0] ? path : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    void* get2 = lib ? dlsym(lib, "cuGetProcAddress_v2") : NULL;
    void* get1 = lib ? dlsym(lib, "cuGetProcAddress") : NULL;
    int (*gpa2)(const char*, void**, int, unsigned long long, int*);
    int (*gpa1)(const char*, void**, int, unsigned long long);
    memcpy(&gpa2, &get2, sizeof get2);
    memcpy(&gpa1, &get1, sizeof get1);
    if (!get2 && !get1) return false;
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        void* fn = NULL;
        int status = 0;
        int r = get2 ? gpa2(want[i].name, &fn, want[i].version, 0, &status)
                     : gpa1(want[i].name, &fn, want[i].version, 0);
        if (r != 0 || !fn) return false;
        memcpy((unsigned char*)&m->cu + want[i].at, &fn, sizeof fn);
    }
    return m->have_cu = true;
}
/* cuBLAS: loaded and started, or why not (then the GEMM is mlp_matmul). */
static const char* mlp_open_cublas(mlp* m, accel_device* dev, char* why, size_t cap) {
    const char* env = getenv("ACCEL_EXAMPLE_CUBLAS_LIBRARY");   /* as examples/nccl_allreduce.c */
    const char* const libs[] = {
        env && env[0] ? env : "libcublas.so.13", "libcublas.so.12", "libcublas.so.11", "libcublas.so", NULL
    };
    const char* found = NULL;
    void* create = ex_sym(libs, "cublasCreate_v2", &found);
    ex_cublas_create_fn create_fn;
    void *s1, *s2, *s3;
    int r;
    if (!create) {
        snprintf(why, cap, "no libcublas.so.13/.12/.11 could be loaded");
        return NULL;
    }
    s1 = ex_sym(libs, "cublasSetStream_v2", &found);
    s2 = ex_sym(libs, "cublasSgemm_v2", &found);
    s3 = ex_sym(libs, "cublasDestroy_v2", &found);
    memcpy(&create_fn, &create, sizeof create);
    memcpy(&m->cublas_stream, &s1, sizeof s1);
    memcpy(&m->cublas_sgemm, &s2, sizeof s2);
    memcpy(&m->cublas_destroy, &s3, sizeof s3);
    if (!s1 || !s2 || !s3) {
        snprintf(why, cap, "%s lacks cublasSetStream_v2/cublasSgemm_v2/cublasDestroy_v2", found);
        return NULL;
    }
    /* cuBLAS works in the current context: accel's, the device's primary context (the runtime's too) */
    if ((r = m->cu.CtxSetCurrent(accel_cuda_device_context(dev))) != 0) {
        snprintf(why, cap, "cuCtxSetCurrent returned %d", r);
        return NULL;
    }
    if ((r = create_fn(&m->cublas)) != 0) {
        m->cublas = NULL;
        snprintf(why, cap, "%s: cublasCreate_v2 returned status %d (its runtime found no GPU it can use)",
                 found, r);
        return NULL;
    }
    return found;
}
#endif

/* ==== the native steps ==== */
static void mlp_fail(mlp* m, const char* what, int code) {
    if (!m->error[0]) snprintf(m->error, sizeof m->error, "%s returned %d", what, code);
}
static void mlp_step_cpu(const mlp_op* op) {
    float* c = (float*)accel_buffer_map(op->c);
    const float* a = (const float*)accel_buffer_map(op->a);
    const float* b = op->b ? (const float*)accel_buffer_map(op->b) : NULL;
    if (op->kind == MLP_COPY) { memcpy(c, a, (size_t)op->rows * op->cols * sizeof *c); return; }
    if (op->m->cblas) {   /* CblasRowMajor = 101, CblasNoTrans = 111 */
        op->m->cblas(101, 111, 111, (int)op->rows, (int)op->cols, (int)op->inner, 1.0f, a, (int)op->inner, b,
                     (int)op->cols, 0.0f, c, (int)op->cols);
        return;
    }
    for (uint32_t r = 0; r < op->rows; r++)
        for (uint32_t j = 0; j < op->cols; j++) {
            float sum = 0.0f;
            for (uint32_t i = 0; i < op->inner; i++) sum += a[r * op->inner + i] * b[i * op->cols + j];
            c[r * op->cols + j] = sum;
        }
}
#ifdef ACCEL_EXAMPLE_HAVE_CUDA
static void mlp_step_cuda(const mlp_op* op, void* stream) {
    mlp* m = op->m;
    uint64_t c = accel_cuda_buffer_pointer(op->c), a = accel_cuda_buffer_pointer(op->a);
    int r;
    if (op->kind == MLP_ZERO) {
        if ((r = m->cu.MemsetD32Async(c, 0u, (size_t)op->rows * op->cols, stream)) != 0)
            mlp_fail(m, "cuMemsetD32Async", r);
    } else if (op->kind == MLP_COPY) {
        if ((r = m->cu.MemcpyDtoDAsync(c, a, (size_t)op->rows * op->cols * 4u, stream)) != 0)
            mlp_fail(m, "cuMemcpyDtoDAsync", r);
    } else {   /* row-major C = A B is column-major C^T = B^T A^T: cuBLAS gets B first */
        const float one = 1.0f, zero = 0.0f;
        uint64_t b = accel_cuda_buffer_pointer(op->b);
        if ((r = m->cublas_stream(m->cublas, stream)) != 0) { mlp_fail(m, "cublasSetStream_v2", r); return; }
        r = m->cublas_sgemm(m->cublas, 0, 0, (int)op->cols, (int)op->rows, (int)op->inner, &one,
                            (const float*)(uintptr_t)b, (int)op->cols, (const float*)(uintptr_t)a,
                            (int)op->inner, &zero, (float*)(uintptr_t)c, (int)op->cols);
        if (r != 0) mlp_fail(m, "cublasSgemm_v2", r);
    }
}
#endif
#ifdef ACCEL_EXAMPLE_HAVE_VULKAN
static void mlp_step_vulkan(const mlp_op* op, void* cb) {
    uint64_t c = (uint64_t)(uintptr_t)accel_vulkan_buffer_handle(op->c);
    uint64_t bytes = (uint64_t)op->rows * op->cols * 4u;
    if (op->kind == MLP_ZERO) {
        op->m->vk_fill(cb, c, 0, bytes, 0u);
    } else {   /* MLP_COPY: a GEMM never comes here (no library on Vulkan) */
        VkBufferCopy region = { 0, 0, bytes };
        op->m->vk_copy(cb, (uint64_t)(uintptr_t)accel_vulkan_buffer_handle(op->a), c, 1, &region);
    }
}
#endif
/* fn of every native step: the backend tells by the pointers it hands over */
static void mlp_native(const accel_native* n, void* user) {
    const mlp_op* op = (const mlp_op*)user;
#ifdef ACCEL_EXAMPLE_HAVE_CUDA
    if (n->cuda_stream) { mlp_step_cuda(op, n->cuda_stream); return; }
#endif
#ifdef ACCEL_EXAMPLE_HAVE_VULKAN
    if (n->vulkan_command_buffer) { mlp_step_vulkan(op, n->vulkan_command_buffer); return; }
#endif
    if (n->cuda_stream || n->vulkan_command_buffer) mlp_fail(op->m, "a step of a backend not built in", -1);
    else mlp_step_cpu(op);
}

/* c = a b: the library's GEMM in a native step, or (no library) a native zero fill, then mlp_matmul */
static void mlp_gemm(accel_queue* q, mlp_op ops[2], bool library, accel_program* matmul) {
    if (library) { accel_queue_native(q, mlp_native, &ops[0]); return; }
    accel_queue_native(q, mlp_native, &ops[1]);
    accel_queue_exec(q, matmul, (accel_buffer*[]){ ops[0].c, ops[0].a, ops[0].b }, 3,
                     (uint32_t[]){ ops[0].rows, ops[0].cols, ops[0].inner }, 3,
                     accel_exec_2d(ops[0].cols, ops[0].rows, 16, 16));
}

/* ==== the plain C reference ==== */
static void ref_layer(const float* in, const float* w, const float* bias, float* out, uint32_t rows,
                      uint32_t cols, uint32_t inner, bool relu) {
    for (uint32_t r = 0; r < rows; r++)
        for (uint32_t j = 0; j < cols; j++) {
            float sum = 0.0f;
            for (uint32_t i = 0; i < inner; i++) sum += in[r * inner + i] * w[i * cols + j];
            sum += bias[j];
            out[r * cols + j] = relu && sum < 0.0f ? 0.0f : sum;
        }
}
static float ex_value(uint32_t i, uint32_t salt, float scale) {   /* deterministic, in [-scale, scale) */
    return ((float)(ex_hash(i * 2654435761u + salt) >> 8) / 8388608.0f - 1.0f) * scale;
}

/* ==== a stream accel does not own (CUDA) ==== */
#if defined(ACCEL_EXAMPLE_HAVE_CUDA) && EX_HAVE_DLOPEN
/* Returns 0 when t came out right, 1 otherwise. */
static int foreign_stream(accel_device* dev, mlp* m, accel_program* bias_act, accel_buffer* b1) {
    enum { N = 8 * D_HID };
    accel_queue* q = NULL;
    accel_signal *ready = NULL, *produced = NULL, *done = NULL;
    accel_buffer* t = NULL;
    void* stream = NULL;
    float got[N], one = 1.0f, two = 2.0f, bias[D_HID];
    uint32_t one_bits, two_bits;
    int bad = 1;
    memcpy(&one_bits, &one, 4);
    memcpy(&two_bits, &two, 4);
    if (m->cu.CtxSetCurrent(accel_cuda_device_context(dev)) != 0 || m->cu.StreamCreate(&stream, 1u) != 0) {
        fprintf(stderr, "native: cuStreamCreate failed\n");
        return 1;
    }
    EX_CHECK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
    EX_CHECK(accel_signal_create(dev, 0, &ready));
    EX_CHECK(accel_signal_create(dev, 0, &produced));
    EX_CHECK(accel_signal_create(dev, 0, &done));
    EX_CHECK(accel_buffer_create(dev, &(accel_buffer_desc){ .size = sizeof got, .label = "t" }, &t));
    accel_queue_fill(q, t, 0, sizeof got, one_bits);
    accel_queue_signal(q, ready, 1);
    EX_CHECK(accel_queue_submit(q));
    /* the framework's stream: waits for accel on the GPU, does its work, raises accel's signal */
    EX_CHECK(accel_cuda_stream_wait(stream, ready, 1));
    if (m->cu.MemsetD32Async(accel_cuda_buffer_pointer(t) + N / 2 * 4, two_bits, N / 2, stream) != 0) {
        fprintf(stderr, "native: cuMemsetD32Async on the foreign stream failed\n");
        goto done;
    }
    EX_CHECK(accel_cuda_stream_signal(stream, produced, 1));
    accel_queue_wait(q, produced, 1);
    accel_queue_exec(q, bias_act, (accel_buffer*[]){ t, b1 }, 2, (uint32_t[]){ N, D_HID, 0 }, 3,
                     accel_exec_1d(N, 256));
    accel_queue_signal(q, done, 1);
    EX_CHECK(accel_queue_submit(q));
    EX_CHECK(accel_signal_wait(done, 1, ACCEL_WAIT_FOREVER));
    EX_CHECK(accel_buffer_read(t, 0, got, sizeof got));
    EX_CHECK(accel_buffer_read(b1, 0, bias, sizeof bias));
    bad = 0;
    for (uint32_t i = 0; i < N; i++) bad |= got[i] != (i < N / 2 ? 1.0f : 2.0f) + bias[i % D_HID];
    printf("native: foreign stream: waited for accel's signal on the GPU, filled half of t, raised the "
           "signal the queue waited for: %s\n", bad ? "WRONG" : "OK");
done:
    if (stream) {
        m->cu.StreamSynchronize(stream);
        m->cu.StreamDestroy(stream);
    }
    accel_queue_destroy(q);
    accel_signal_destroy(ready);
    accel_signal_destroy(produced);
    accel_signal_destroy(done);
    accel_buffer_destroy(t);
    return bad;
}
#endif

/* ==== main ==== */
typedef struct mlp_data {
    float x[BATCH * D_IN], w1[D_IN * D_HID], b1[D_HID], w2[D_HID * D_OUT], b2[D_OUT];
} mlp_data;

int main(int argc, char** argv) {
    accel_device* dev = NULL;
    accel_device_info info;
    accel_queue* q = NULL;
    accel_signal* done = NULL;
    accel_program *bias_act = NULL, *matmul = NULL;
    accel_buffer *x = NULL, *w1 = NULL, *b1 = NULL, *w2 = NULL, *b2 = NULL, *h = NULL, *y = NULL, *out = NULL;
    mlp m;
    mlp_op gemm1[2], gemm2[2], copy;
    mlp_data* d = (mlp_data*)malloc(sizeof *d);
    float *hid = (float*)malloc(BATCH * D_HID * sizeof(float)), want[BATCH * D_OUT], got[BATCH * D_OUT];
    const char* gemm_by = "a plain C loop (no CBLAS found)";
    char why[200] = "";
    bool library = false, cpu;
    double t0, worst = 0.0;
    int exit_code = 1;

    memset(&m, 0, sizeof m);
    if (!d || !hid) { fprintf(stderr, "native: out of host memory\n"); goto done; }
    if ((exit_code = ex_open_device(argc, argv, NULL, &dev, &info)) != 0) goto done;
    exit_code = 1;
    cpu = !strcmp(info.backend, "cpu");

    /* the GEMM per backend (see the top) */
    if (cpu) {
        const char* lib = mlp_open_cblas(&m);
        library = true;
        if (lib) {
            gemm_by = "cblas_sgemm";
            snprintf(why, sizeof why, " from %s", lib);
        }
    }
#ifdef ACCEL_EXAMPLE_HAVE_CUDA
    if (!strcmp(info.backend, "cuda")) {
#  if EX_HAVE_DLOPEN
        const char* lib;
        if (!mlp_open_driver(&m)) {
            fprintf(stderr, "native: the CUDA driver's entry points not found\n");
            goto done;
        }
        lib = mlp_open_cublas(&m, dev, why, sizeof why);
        library = lib != NULL;
        gemm_by = library ? "cublasSgemm" : "the accel kernel mlp_matmul behind a native cuMemsetD32Async";
        if (library) {
            snprintf(why, sizeof why, " from %s, on the queue's stream", lib);
        } else {
            printf("native: cuBLAS skipped: %s\n", why);
            why[0] = '\0';
        }
#  else
        fprintf(stderr, "native: this build cannot load the driver's entry points\n");
        goto done;
#  endif
    }
#endif
#ifdef ACCEL_EXAMPLE_HAVE_VULKAN
    if (!strcmp(info.backend, "vulkan")) {
#  if EX_HAVE_DLOPEN
        void* lib = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);   /* the loader's vkCmd* trampolines */
        void* fill = lib ? dlsym(lib, "vkCmdFillBuffer") : NULL;
        void* cpy = lib ? dlsym(lib, "vkCmdCopyBuffer") : NULL;
        memcpy(&m.vk_fill, &fill, sizeof fill);
        memcpy(&m.vk_copy, &cpy, sizeof cpy);
        if (!fill || !cpy) {
            fprintf(stderr, "native: vkCmdFillBuffer/vkCmdCopyBuffer not found\n");
            goto done;
        }
        gemm_by = "the accel kernel mlp_matmul behind a native vkCmdFillBuffer (no GEMM library on Vulkan)";
#  else
        fprintf(stderr, "native: this build cannot look up vkCmdFillBuffer\n");
        goto done;
#  endif
    }
#endif

    for (uint32_t i = 0; i < BATCH * D_IN; i++) d->x[i] = ex_value(i, 1, 1.0f);
    for (uint32_t i = 0; i < D_IN * D_HID; i++) d->w1[i] = ex_value(i, 2, 0.125f);
    for (uint32_t i = 0; i < D_HID; i++) d->b1[i] = ex_value(i, 3, 0.25f);
    for (uint32_t i = 0; i < D_HID * D_OUT; i++) d->w2[i] = ex_value(i, 4, 0.09f);
    for (uint32_t i = 0; i < D_OUT; i++) d->b2[i] = ex_value(i, 5, 0.25f);
    ref_layer(d->x, d->w1, d->b1, hid, BATCH, D_HID, D_IN, true);
    ref_layer(hid, d->w2, d->b2, want, BATCH, D_OUT, D_HID, false);

#define EX_BUF(var, count, name) \
    EX_CHECK(accel_buffer_create(dev, &(accel_buffer_desc){ .size = (count) * sizeof(float), \
                                                            .label = name }, &var))
    EX_BUF(x, BATCH * D_IN, "x"); EX_BUF(w1, D_IN * D_HID, "W1"); EX_BUF(b1, D_HID, "b1");
    EX_BUF(w2, D_HID * D_OUT, "W2"); EX_BUF(b2, D_OUT, "b2"); EX_BUF(h, BATCH * D_HID, "h");
    EX_BUF(y, BATCH * D_OUT, "y"); EX_BUF(out, BATCH * D_OUT, "readback");
    EX_CHECK(accel_buffer_write(x, 0, d->x, sizeof d->x));
    EX_CHECK(accel_buffer_write(w1, 0, d->w1, sizeof d->w1));
    EX_CHECK(accel_buffer_write(b1, 0, d->b1, sizeof d->b1));
    EX_CHECK(accel_buffer_write(w2, 0, d->w2, sizeof d->w2));
    EX_CHECK(accel_buffer_write(b2, 0, d->b2, sizeof d->b2));
    EX_CHECK(accel_program_create(dev, &(accel_program_desc){
        .name = "mlp_bias_act", .cpu = mlp_bias_act_cpu, EX_SPIRV(mlp_bias_act)
        .cuda_source = mlp_bias_act_cuda, .buffer_count = 2, .constant_count = 3 }, &bias_act));
    if (!library)
        EX_CHECK(accel_program_create(dev, &(accel_program_desc){
            .name = "mlp_matmul", EX_SPIRV(mlp_matmul) .cuda_source = mlp_matmul_cuda,
            .buffer_count = 3, .constant_count = 3 }, &matmul));
    EX_CHECK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
    EX_CHECK(accel_signal_create(dev, 0, &done));

    /* the native steps' work (kept alive until the step ran: here, the whole program) */
    gemm1[0] = (mlp_op){ &m, MLP_GEMM, h, x, w1, BATCH, D_HID, D_IN };
    gemm1[1] = (mlp_op){ &m, MLP_ZERO, h, NULL, NULL, BATCH, D_HID, 0 };
    gemm2[0] = (mlp_op){ &m, MLP_GEMM, y, h, w2, BATCH, D_OUT, D_HID };
    gemm2[1] = (mlp_op){ &m, MLP_ZERO, y, NULL, NULL, BATCH, D_OUT, 0 };
    copy = (mlp_op){ &m, MLP_COPY, out, y, NULL, BATCH, D_OUT, 0 };

    t0 = 0.0;
    for (uint32_t step = 1; step <= 1 + STEPS; step++) {   /* one warm-up, then STEPS timed */
        if (step == 2) t0 = ex_seconds();
        mlp_gemm(q, gemm1, library, matmul);
        accel_queue_exec(q, bias_act, (accel_buffer*[]){ h, b1 }, 2,
                         (uint32_t[]){ BATCH * D_HID, D_HID, 1 }, 3, accel_exec_1d(BATCH * D_HID, 256));
        mlp_gemm(q, gemm2, library, matmul);
        accel_queue_exec(q, bias_act, (accel_buffer*[]){ y, b2 }, 2,
                         (uint32_t[]){ BATCH * D_OUT, D_OUT, 0 }, 3, accel_exec_1d(BATCH * D_OUT, 256));
        accel_queue_native(q, mlp_native, &copy);
        accel_queue_signal(q, done, step);
        EX_CHECK(accel_queue_submit(q));
        EX_CHECK(accel_signal_wait(done, step, ACCEL_WAIT_FOREVER));
    }
    t0 = ex_seconds() - t0;
    if (m.error[0]) { fprintf(stderr, "native: a native step failed: %s\n", m.error); goto done; }
    EX_CHECK(accel_buffer_read(out, 0, got, sizeof got));
    for (uint32_t i = 0; i < BATCH * D_OUT; i++) {
        double err = fabs((double)got[i] - (double)want[i]) / fmax(1.0, fabs((double)want[i]));
        if (!(err <= worst)) worst = err;   /* NaN counts as worst */
    }
    printf("native: MLP step %ux%u -> %u -> %u on %s (%s), GEMMs by %s%s\n", BATCH, D_IN, D_HID, D_OUT,
           info.name, info.backend, gemm_by, why);
    printf("native: %.3f ms per step (submit to signal, %u steps), max relative error %g against plain C: "
           "%s\n", t0 * 1e3 / STEPS, STEPS, worst, worst <= 1e-4 ? "OK" : "WRONG");
    exit_code = worst <= 1e-4 ? 0 : 1;

#if defined(ACCEL_EXAMPLE_HAVE_CUDA) && EX_HAVE_DLOPEN
    if (!strcmp(info.backend, "cuda")) exit_code |= foreign_stream(dev, &m, bias_act, b1);
    else
#endif
        printf("native: foreign stream: skipped (a stream accel does not own is a CUstream: cuda only)\n");

done:
#if defined(ACCEL_EXAMPLE_HAVE_CUDA) && EX_HAVE_DLOPEN
    if (m.cublas) m.cublas_destroy(m.cublas);   /* before the device releases its context */
#endif
    accel_device_destroy(dev);   /* waits, then releases everything made on it */
    free(d);
    free(hid);
    return exit_code;
}

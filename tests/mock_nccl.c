/* tests/mock_nccl.c — a stand-in for NCCL and cuBLAS on top of tests/mock_cuda.c, so that CI without a GPU
   runs examples/nccl_allreduce.c's queue plumbing (native steps on accel's stream, the kernels around
   them, the host check, the raw-stream comparison).

   Built as one shared library (gcc -shared -fPIC) and named by both overrides, ACCEL_EXAMPLE_NCCL_LIBRARY
   and ACCEL_EXAMPLE_CUBLAS_LIBRARY=build/mock/libnccl_mock.so,
   beside ACCEL_CUDA_LIBRARY=build/mock/libcuda_mock.so, whose calls it makes (looked up through the mock
   driver's cuGetProcAddress_v2). One rank only: the all-reduce of one rank is a copy, enqueued on the
   stream like NCCL's kernel; cublasSgemm_v2 (column-major, no transposes, alpha 1, beta 0) launches the
   mock's "mock_sgemm" kernel on the stream set by cublasSetStream_v2 (examples/native.c's rectangular
   GEMMs too). Anything else returns an error. It proves nothing about NCCL or cuBLAS: only that the
   examples put them in queue order. */
#define _GNU_SOURCE 1
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MOCK_API __attribute__((visibility("default")))
typedef struct { char internal[128]; } nccl_unique_id;

/* ==== the mock driver's calls ==== */
typedef int (*get_proc_fn)(const char* name, void** fn, int version, unsigned long long flags, int* status);
static int (*drv_copy)(uint64_t dst, uint64_t src, size_t n, void* stream);
static int (*drv_load)(void** module, const void* image, unsigned n, int* options, void** values);
static int (*drv_function)(void** fn, void* module, const char* name);
static int (*drv_unload)(void* module);
static int (*drv_launch)(void* fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                         unsigned bz, unsigned shared, void* stream, void** params, void** extra);

static void* lookup(get_proc_fn get, const char* name) {
    void* fn = NULL;
    int status = 0;
    return get(name, &fn, 12000, 0, &status) == 0 ? fn : NULL;
}
/* 1 when the mock driver's calls are at hand */
static int driver(void) {
    const char* path = getenv("ACCEL_CUDA_LIBRARY");
    void* lib = path ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;   /* the copy accel loaded */
    void* get = lib ? dlsym(lib, "cuGetProcAddress_v2") : NULL;
    void* p;
    get_proc_fn getproc;
    if (!get) return 0;
    if (drv_copy) return 1;
    memcpy(&getproc, &get, sizeof get);
    p = lookup(getproc, "cuMemcpyDtoDAsync"); memcpy(&drv_copy, &p, sizeof p);
    p = lookup(getproc, "cuModuleLoadDataEx"); memcpy(&drv_load, &p, sizeof p);
    p = lookup(getproc, "cuModuleGetFunction"); memcpy(&drv_function, &p, sizeof p);
    p = lookup(getproc, "cuModuleUnload"); memcpy(&drv_unload, &p, sizeof p);
    p = lookup(getproc, "cuLaunchKernel"); memcpy(&drv_launch, &p, sizeof p);
    return drv_copy && drv_load && drv_function && drv_unload && drv_launch;
}

/* ==== NCCL, one rank ==== */
typedef struct mock_comm { int nranks; } mock_comm;
MOCK_API int ncclGetVersion(int* version);
MOCK_API int ncclGetVersion(int* version) { *version = 0; return 0; }
MOCK_API int ncclGetUniqueId(nccl_unique_id* id);
MOCK_API int ncclGetUniqueId(nccl_unique_id* id) { memset(id, 0, sizeof *id); return 0; }
MOCK_API int ncclCommInitRank(mock_comm** comm, int nranks, nccl_unique_id id, int rank);
MOCK_API int ncclCommInitRank(mock_comm** comm, int nranks, nccl_unique_id id, int rank) {
    (void)id;
    if (nranks != 1 || rank != 0 || !driver()) return 4;             /* ncclInvalidArgument */
    *comm = (mock_comm*)calloc(1, sizeof **comm);
    if (!*comm) return 1;
    (*comm)->nranks = 1;
    return 0;
}
MOCK_API int ncclAllReduce(const void* send, void* recv, size_t count, int type, int op, mock_comm* comm,
                           void* stream);
MOCK_API int ncclAllReduce(const void* send, void* recv, size_t count, int type, int op, mock_comm* comm,
                           void* stream) {
    if (!comm || type != 7 || op != 0) return 4;                     /* float32 sums only */
    if (send == recv) return 0;
    return drv_copy((uint64_t)(uintptr_t)recv, (uint64_t)(uintptr_t)send, count * 4, stream) ? 1 : 0;
}
MOCK_API int ncclCommDestroy(mock_comm* comm);
MOCK_API int ncclCommDestroy(mock_comm* comm) { free(comm); return 0; }
MOCK_API const char* ncclGetErrorString(int result);
MOCK_API const char* ncclGetErrorString(int result) { return result ? "mock NCCL error" : "no error"; }

/* ==== cuBLAS: SGEMM without transposes, alpha 1, beta 0 ==== */
typedef struct mock_blas { void* module; void* sgemm; void* stream; } mock_blas;
MOCK_API int cublasCreate_v2(mock_blas** handle);
MOCK_API int cublasCreate_v2(mock_blas** handle) {
    mock_blas* h = (mock_blas*)calloc(1, sizeof *h);
    if (!h || !driver()) { free(h); return 1; }
    if (drv_load(&h->module, "mock_sgemm", 0, NULL, NULL) != 0 ||
        drv_function(&h->sgemm, h->module, "mock_sgemm") != 0) {
        free(h);
        return 1;
    }
    *handle = h;
    return 0;
}
MOCK_API int cublasDestroy_v2(mock_blas* handle);
MOCK_API int cublasDestroy_v2(mock_blas* handle) {
    drv_unload(handle->module);
    free(handle);
    return 0;
}
MOCK_API int cublasSetStream_v2(mock_blas* handle, void* stream);
MOCK_API int cublasSetStream_v2(mock_blas* handle, void* stream) { handle->stream = stream; return 0; }
MOCK_API int cublasSgemm_v2(mock_blas* h, int transa, int transb, int m, int n, int k, const float* alpha,
                            const float* a, int lda, const float* b, int ldb, const float* beta, float* c,
                            int ldc);
MOCK_API int cublasSgemm_v2(mock_blas* h, int transa, int transb, int m, int n, int k, const float* alpha,
                            const float* a, int lda, const float* b, int ldb, const float* beta, float* c,
                            int ldc) {
    uint64_t pa = (uint64_t)(uintptr_t)a, pb = (uint64_t)(uintptr_t)b, pc = (uint64_t)(uintptr_t)c;
    uint32_t dims[6] = { (uint32_t)m, (uint32_t)n, (uint32_t)k, (uint32_t)lda, (uint32_t)ldb, (uint32_t)ldc };
    void* params[9] = { &pa, &pb, &pc, &dims[0], &dims[1], &dims[2], &dims[3], &dims[4], &dims[5] };
    if (transa || transb || m <= 0 || n <= 0 || k <= 0 || lda < m || ldb < k || ldc < m || *alpha != 1.0f ||
        *beta != 0.0f)
        return 7;                                                    /* CUBLAS_STATUS_INVALID_VALUE */
    int rc = drv_launch(h->sgemm, (dims[0] * dims[1] + 255) / 256, 1, 1, 256, 1, 1, 0, h->stream, params, NULL);
    return rc ? 13 : 0;                                              /* CUBLAS_STATUS_EXECUTION_FAILED */
}

/* nccl_allreduce.c — NCCL and cuBLAS in an accel queue's order on the CUDA backend (DESIGN.md 7.3).

   One rank per process, one GPU per rank. On one queue:

       exec produce        x[i] = (rank + 1) * (i % 7 + 1)              (an accel kernel)
       native step         ncclAllReduce(x -> y, sum) on the queue's CUstream
       native step         cublasSgemm: C = Y * B (Y = y as a 256 x 256 matrix, B a fixed 256 x 256)
       exec consume        z[i] = C[i] * 0.5 + 1                        (an accel kernel)
       signal done

   No host round trip between the four: the native steps only enqueue on the stream accel gives them
   (accel_queue_native), so NCCL's and cuBLAS's kernels run after `produce` and before `consume`. The host
   checks z exactly (small integers). Then it times a 64 MiB all-reduce, 20 in a row, as native steps of
   an accel queue and as raw ncclAllReduce calls on a stream of its own, and prints the ratio.

   NCCL (libnccl.so.2), cuBLAS (libcublas.so.13/.12/.11) and the driver are loaded at run time: no CUDA
   header or library is needed to build; the few types and prototypes used are declared below. Overrides:
   ACCEL_EXAMPLE_NCCL_LIBRARY, ACCEL_EXAMPLE_CUBLAS_LIBRARY (and accel's ACCEL_CUDA_LIBRARY,
   ACCEL_NVRTC_LIBRARY: the two kernels are CUDA C, compiled by NVRTC). Without NCCL or a CUDA device it
   says why and exits 0; without cuBLAS it skips the GEMM (consume reads y) and says so. --bench-mib N
   sets the timed all-reduce's size (default 64). On the mock driver, tests/mock_nccl.c stands in for
   both libraries (`make test`).

   Build and run (from the repository root):
     mkdir -p build && cc -std=gnu11 -O2 -I. examples/nccl_allreduce.c -o build/nccl_allreduce -lpthread -lm -ldl && ./build/nccl_allreduce [cpu|cuda]

   (`cpu` only says that this example needs the CUDA backend.) More ranks, one process and GPU each:
   rank 0 writes the ncclUniqueId to a file the others read (a shared file system across machines; with
   MPI one would MPI_Bcast it):
     for r in 0 1; do CUDA_VISIBLE_DEVICES=$r ./build/nccl_allreduce --rank $r --nranks 2 \
                      --id-file /tmp/nccl.id & done; wait
   Exit 0 when the check passed (or the run was skipped), 1 when it failed, 2 on bad usage. */
#ifndef _POSIX_C_SOURCE
#  define _POSIX_C_SOURCE 200809L      /* nanosleep under -std=c11 */
#endif
#define ACCEL_IMPLEMENTATION
#define ACCEL_CUDA_IMPLEMENTATION
#include "accel.h"
#include "accel_cuda.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ==== the few NCCL, cuBLAS and driver declarations used (values from their public headers) ==== */
typedef struct { char internal[128]; } nccl_unique_id;       /* ncclUniqueId */
typedef void* nccl_comm;                                      /* ncclComm_t */
enum { NCCL_SUCCESS = 0, NCCL_FLOAT32 = 7, NCCL_SUM = 0, CUBLAS_OP_N = 0 };
typedef struct nccl_api {
    int (*get_version)(int* version);
    int (*get_unique_id)(nccl_unique_id* id);
    int (*comm_init_rank)(nccl_comm* comm, int nranks, nccl_unique_id id, int rank);
    int (*all_reduce)(const void* send, void* recv, size_t count, int type, int op, nccl_comm comm,
                      void* stream);
    int (*comm_destroy)(nccl_comm comm);
    const char* (*error_string)(int result);
} nccl_api;
typedef struct cublas_api {
    int (*create)(void** handle);
    int (*destroy)(void* handle);
    int (*set_stream)(void* handle, void* stream);
    int (*sgemm)(void* handle, int transa, int transb, int m, int n, int k, const float* alpha,
                 const float* a, int lda, const float* b, int ldb, const float* beta, float* c, int ldc);
} cublas_api;
typedef struct cuda_api {
    int (*ctx_set_current)(void* ctx);
    int (*stream_create)(void** stream, unsigned flags);
    int (*stream_synchronize)(void* stream);
    int (*stream_destroy)(void* stream);
} cuda_api;

/* dlsym into a function pointer without a cast between object and function pointers */
static int sym(void* lib, const char* name, void* fn_ptr) {
    void* p = lib ? dlsym(lib, name) : NULL;
    memcpy(fn_ptr, &p, sizeof p);
    return p != NULL;
}
static void* open_first(const char* env, const char* const* names, const char** opened) {
    const char* path = getenv(env);
    if (path && path[0]) { *opened = path; return dlopen(path, RTLD_NOW | RTLD_LOCAL); }
    for (; *names; names++) {
        void* lib = dlopen(*names, RTLD_NOW | RTLD_LOCAL);
        *opened = *names;
        if (lib) return lib;
    }
    return NULL;
}
static int load_nccl(nccl_api* n, const char** why) {
    static const char* const names[] = { "libnccl.so.2", "libnccl.so", NULL };
    const char* path = NULL;
    void* lib = open_first("ACCEL_EXAMPLE_NCCL_LIBRARY", names, &path);
    *why = path;
    return lib && sym(lib, "ncclGetVersion", &n->get_version) &&
           sym(lib, "ncclGetUniqueId", &n->get_unique_id) &&
           sym(lib, "ncclCommInitRank", &n->comm_init_rank) &&
           sym(lib, "ncclAllReduce", &n->all_reduce) && sym(lib, "ncclCommDestroy", &n->comm_destroy) &&
           sym(lib, "ncclGetErrorString", &n->error_string);
}
static int load_cublas(cublas_api* c, const char** why) {
    static const char* const names[] = { "libcublas.so.13", "libcublas.so.12", "libcublas.so.11",
                                         "libcublas.so", NULL };
    const char* path = NULL;
    void* lib = open_first("ACCEL_EXAMPLE_CUBLAS_LIBRARY", names, &path);
    *why = path;
    return lib && sym(lib, "cublasCreate_v2", &c->create) && sym(lib, "cublasDestroy_v2", &c->destroy) &&
           sym(lib, "cublasSetStream_v2", &c->set_stream) && sym(lib, "cublasSgemm_v2", &c->sgemm);
}
static int load_cuda(cuda_api* d) {
    const char* path = getenv("ACCEL_CUDA_LIBRARY");
    void* lib = dlopen(path && path[0] ? path : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    return lib && sym(lib, "cuCtxSetCurrent", &d->ctx_set_current) &&
           sym(lib, "cuStreamCreate", &d->stream_create) &&
           sym(lib, "cuStreamSynchronize", &d->stream_synchronize) &&
           sym(lib, "cuStreamDestroy_v2", &d->stream_destroy);
}

/* ==== the accel kernels (CUDA C, compiled by NVRTC) ==== */
static const char produce_cuda[] =
    "extern \"C\" __global__ void produce(float* x, unsigned rank, unsigned n) {\n"
    "    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) x[i] = (float)((rank + 1u) * (i % 7u + 1u));\n"
    "}\n";
static const char consume_cuda[] =
    "extern \"C\" __global__ void consume(float* z, const float* c, unsigned n) {\n"
    "    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) z[i] = c[i] * 0.5f + 1.0f;\n"
    "}\n";

enum { DIM = 256, COUNT = DIM * DIM, BENCH_ITERS = 20, BENCH_REPS = 5 };

/* ==== the run ==== */
typedef struct run_state {
    int rank, nranks, gemm;
    size_t bench_count;               /* floats per bench all-reduce (--bench-mib, default 64 MiB) */
    nccl_api nccl;
    cublas_api blas;
    cuda_api cu;
    nccl_comm comm;
    void* blas_handle;
    accel_device* dev;
    accel_queue* q;
    accel_buffer *x, *y, *b, *c, *z, *big_in, *big_out;
    int nccl_rc, blas_rc;             /* the first error a native step saw */
} run_state;

/* native step: the all-reduce of x into y (or of the bench buffers) on the queue's stream */
typedef struct reduce_step { run_state* st; accel_buffer *in, *out; size_t count; } reduce_step;
static void all_reduce_step(const accel_native* n, void* user) {
    reduce_step* r = (reduce_step*)user;
    int rc = r->st->nccl.all_reduce((const void*)(uintptr_t)accel_cuda_buffer_pointer(r->in),
                                    (void*)(uintptr_t)accel_cuda_buffer_pointer(r->out), r->count,
                                    NCCL_FLOAT32, NCCL_SUM, r->st->comm, n->cuda_stream);
    if (rc != NCCL_SUCCESS && !r->st->nccl_rc) r->st->nccl_rc = rc;
}
/* native step: C = Y * B with cuBLAS on the queue's stream (column-major, DIM x DIM) */
static void gemm_step(const accel_native* n, void* user) {
    run_state* st = (run_state*)user;
    const float one = 1.0f, zero = 0.0f;
    int rc = st->blas.set_stream(st->blas_handle, n->cuda_stream);
    if (rc == 0)
        rc = st->blas.sgemm(st->blas_handle, CUBLAS_OP_N, CUBLAS_OP_N, DIM, DIM, DIM, &one,
                            (const float*)(uintptr_t)accel_cuda_buffer_pointer(st->y), DIM,
                            (const float*)(uintptr_t)accel_cuda_buffer_pointer(st->b), DIM, &zero,
                            (float*)(uintptr_t)accel_cuda_buffer_pointer(st->c), DIM);
    if (rc != 0 && !st->blas_rc) st->blas_rc = rc;
}

static float b_value(int k, int j) { return (float)((k + 2 * j) % 5 - 2); }

/* What z must hold: exact in float (small integers and halves). */
static int check(run_state* st, const float* z) {
    double total = st->nranks * (st->nranks + 1) / 2.0;
    for (int j = 0; j < DIM; j++)
        for (int r = 0; r < DIM; r++) {
            double v = 0;
            if (!st->gemm) v = (double)((r + j * DIM) % 7 + 1) * total;
            else
                for (int k = 0; k < DIM; k++) v += (double)((r + k * DIM) % 7 + 1) * total * b_value(k, j);
            if ((double)z[r + j * DIM] != v * 0.5 + 1.0) {
                fprintf(stderr, "nccl_allreduce: z[%d] = %g, expected %g\n", r + j * DIM, z[r + j * DIM],
                        v * 0.5 + 1.0);
                return 0;
            }
        }
    return 1;
}

static accel_result make_buffer(run_state* st, size_t bytes, accel_buffer** out) {
    accel_buffer_desc bd;
    memset(&bd, 0, sizeof bd);
    bd.size = bytes;
    return accel_buffer_create(st->dev, &bd, out);
}
static accel_result make_program(run_state* st, const char* name, const char* src, uint32_t nbuf,
                                 uint32_t nconst, accel_program** out) {
    accel_program_desc pd;
    memset(&pd, 0, sizeof pd);
    pd.name = name;
    pd.cuda_source = src;
    pd.buffer_count = nbuf;
    pd.constant_count = nconst;
    return accel_program_create(st->dev, &pd, out);
}

#define TRY(call) do { accel_result r_ = (call); if (r_ != ACCEL_OK) { \
    fprintf(stderr, "nccl_allreduce: %s -> %s\n", #call, accel_result_string(r_)); goto out; } } while (0)

/* produce -> all-reduce -> GEMM -> consume on one queue, then the check. 1 when it passed. */
static int pipeline(run_state* st) {
    accel_program *produce, *consume;
    accel_signal* done;
    accel_buffer* bind[2];
    uint32_t k[2] = { (uint32_t)st->rank, COUNT };
    float* host = (float*)malloc(COUNT * sizeof(float));
    reduce_step rs = { st, NULL, NULL, COUNT };
    int ok = 0;
    if (!host) return 0;
    for (int j = 0; j < DIM; j++)
        for (int i = 0; i < DIM; i++) host[i + j * DIM] = b_value(i, j);
    TRY(make_program(st, "produce", produce_cuda, 1, 2, &produce));
    TRY(make_program(st, "consume", consume_cuda, 2, 1, &consume));
    TRY(accel_signal_create(st->dev, 0, &done));
    TRY(accel_buffer_write(st->b, 0, host, COUNT * sizeof(float)));
    rs.in = st->x;
    rs.out = st->y;
    accel_queue_exec(st->q, produce, &st->x, 1, k, 2, accel_exec_1d(COUNT, 256));
    accel_queue_native(st->q, all_reduce_step, &rs);
    if (st->gemm) accel_queue_native(st->q, gemm_step, st);
    bind[0] = st->z;
    bind[1] = st->gemm ? st->c : st->y;
    accel_queue_exec(st->q, consume, bind, 2, &k[1], 1, accel_exec_1d(COUNT, 256));
    accel_queue_signal(st->q, done, 1);
    TRY(accel_queue_submit(st->q));
    TRY(accel_signal_wait(done, 1, ACCEL_WAIT_FOREVER));
    if (st->nccl_rc)
        fprintf(stderr, "nccl_allreduce: ncclAllReduce: %s\n", st->nccl.error_string(st->nccl_rc));
    if (st->blas_rc) fprintf(stderr, "nccl_allreduce: cublasSgemm: status %d\n", st->blas_rc);
    TRY(accel_buffer_read(st->z, 0, host, COUNT * sizeof(float)));
    ok = !st->nccl_rc && !st->blas_rc && check(st, host);
    printf("nccl_allreduce: rank %d of %d: produce -> ncclAllReduce -> %s -> consume in one queue: %s\n",
           st->rank, st->nranks, st->gemm ? "cublasSgemm" : "(no cuBLAS: GEMM skipped)",
           ok ? "matches the host" : "WRONG");
out:                                   /* the programs and the signal go with the device */
    free(host);
    return ok;
}

static double seconds(void) { return (double)accel_host_time_ns() * 1e-9; }
static int cmp_double(const void* a, const void* b) {
    double x = *(const double*)a, y = *(const double*)b;
    return x < y ? -1 : x > y;
}

/* All-reduces of bench_count floats: BENCH_ITERS native steps in a row vs the same raw calls on a stream of
   our own. */
static void bench(run_state* st) {
    double raw[BENCH_REPS], queued[BENCH_REPS];
    void* stream = NULL;
    accel_signal* s;
    reduce_step rs = { st, st->big_in, st->big_out, st->bench_count };
    uint64_t v = 0;
    if (st->cu.ctx_set_current(accel_cuda_device_context(st->dev)) != 0 ||
        st->cu.stream_create(&stream, 1) != 0 || accel_signal_create(st->dev, 0, &s) != ACCEL_OK) {
        printf("nccl_allreduce: bench skipped (no stream of our own)\n");
        return;
    }
    for (int rep = 0; rep < BENCH_REPS; rep++) {
        double t0 = seconds();
        for (int i = 0; i < BENCH_ITERS; i++)
            st->nccl.all_reduce((const void*)(uintptr_t)accel_cuda_buffer_pointer(st->big_in),
                                (void*)(uintptr_t)accel_cuda_buffer_pointer(st->big_out), st->bench_count,
                                NCCL_FLOAT32, NCCL_SUM, st->comm, stream);
        st->cu.stream_synchronize(stream);
        raw[rep] = seconds() - t0;
        t0 = seconds();
        for (int i = 0; i < BENCH_ITERS; i++) accel_queue_native(st->q, all_reduce_step, &rs);
        accel_queue_signal(st->q, s, ++v);
        accel_queue_submit(st->q);
        accel_signal_wait(s, v, ACCEL_WAIT_FOREVER);
        queued[rep] = seconds() - t0;
    }
    st->cu.stream_destroy(stream);
    qsort(raw, BENCH_REPS, sizeof raw[0], cmp_double);
    qsort(queued, BENCH_REPS, sizeof queued[0], cmp_double);
    printf("nccl_allreduce: %d x %zu MiB all-reduce (%d ranks), median of %d: raw stream %.3f ms, accel "
           "native steps %.3f ms: ratio %.3f (target <= 1.05)\n", BENCH_ITERS, st->bench_count >> 18,
           st->nranks, BENCH_REPS,
           raw[BENCH_REPS / 2] * 1e3, queued[BENCH_REPS / 2] * 1e3,
           queued[BENCH_REPS / 2] / raw[BENCH_REPS / 2]);
}

/* rank 0 writes the id (atomically: a rename), the others wait for it (60 s) */
static int share_id(run_state* st, const char* file, nccl_unique_id* id) {
    if (st->nranks == 1 || st->rank == 0) {
        int rc = st->nccl.get_unique_id(id);
        if (rc != NCCL_SUCCESS) {
            fprintf(stderr, "nccl_allreduce: ncclGetUniqueId: %s\n", st->nccl.error_string(rc));
            return 0;
        }
        if (st->nranks > 1) {
            char tmp[4096];
            FILE* f;
            snprintf(tmp, sizeof tmp, "%s.tmp", file);
            f = fopen(tmp, "wb");
            if (!f || fwrite(id, sizeof *id, 1, f) != 1 || fclose(f) != 0 || rename(tmp, file) != 0) {
                fprintf(stderr, "nccl_allreduce: cannot write %s\n", file);
                return 0;
            }
        }
        return 1;
    }
    for (int tries = 0; tries < 600; tries++) {
        FILE* f = fopen(file, "rb");
        if (f) {
            size_t got = fread(id, sizeof *id, 1, f);
            fclose(f);
            if (got == 1) return 1;
        }
        struct timespec pause = { 0, 100000000 };
        nanosleep(&pause, NULL);
    }
    fprintf(stderr, "nccl_allreduce: rank %d: no id in %s after 60 s (is rank 0 running?)\n", st->rank, file);
    return 0;
}

static int skip(const char* why) {
    printf("nccl_allreduce: skipped: %s\n", why);
    return 0;
}

int main(int argc, char** argv) {
    run_state st;
    accel_device_desc dd;
    nccl_unique_id id;
    const char *id_file = NULL, *where = NULL;
    char why[512];
    int code = 1;
    memset(&st, 0, sizeof st);
    st.nranks = 1;
    st.bench_count = (size_t)64 << 18;
    for (int i = 1; i < argc; i++) {
        const char* v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(argv[i], "cpu")) return skip("NCCL and cuBLAS need the CUDA backend (run it with cuda)");
        else if (!strcmp(argv[i], "cuda")) continue;
        else if (!strcmp(argv[i], "--rank") && v) st.rank = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--nranks") && v) st.nranks = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--id-file") && v) id_file = argv[++i];
        else if (!strcmp(argv[i], "--bench-mib") && v && atoi(v) > 0)
            st.bench_count = (size_t)atoi(argv[++i]) << 18;   /* MiB of floats */
        else {
            fprintf(stderr, "usage: %s [cpu|cuda] [--rank R --nranks N --id-file PATH] [--bench-mib N]\n",
                    argv[0]);
            return 2;
        }
    }
    if (st.nranks < 1 || st.rank < 0 || st.rank >= st.nranks || (st.nranks > 1 && !id_file)) {
        fprintf(stderr, "%s: --rank must be in 0..nranks-1; more than one rank needs --id-file\n", argv[0]);
        return 2;
    }
    if (!load_nccl(&st.nccl, &where)) {
        const char* err = dlerror();
        snprintf(why, sizeof why, "NCCL not found (%s; set ACCEL_EXAMPLE_NCCL_LIBRARY)", err ? err : where);
        return skip(why);
    }
    memset(&dd, 0, sizeof dd);
    dd.backend = accel_cuda_backend();
    if (accel_device_create(&dd, &st.dev) != ACCEL_OK)
        return skip("no CUDA device (accel's warning above says why)");
    if (!load_cuda(&st.cu)) {
        accel_device_destroy(st.dev);
        return skip("the CUDA driver's cuCtxSetCurrent / cuStream* not found");
    }
    st.gemm = load_cublas(&st.blas, &where);
    if (!st.gemm)
        printf("nccl_allreduce: cuBLAS not found (%s; set ACCEL_EXAMPLE_CUBLAS_LIBRARY): no GEMM\n", where);
    /* NCCL and cuBLAS use the CUDA runtime, which takes the thread's current context: accel's */
    if (st.cu.ctx_set_current(accel_cuda_device_context(st.dev)) != 0)
        fprintf(stderr, "nccl_allreduce: cuCtxSetCurrent failed\n");
    if (st.gemm && st.blas.create(&st.blas_handle) != 0) {
        printf("nccl_allreduce: cublasCreate failed: no GEMM step\n");
        st.gemm = 0;
    }
    if (share_id(&st, id_file, &id)) {
        int rc = st.nccl.comm_init_rank(&st.comm, st.nranks, id, st.rank), version = 0;
        if (st.nranks > 1 && st.rank == 0) remove(id_file);   /* every rank has read it: init is collective */
        st.nccl.get_version(&version);
        if (rc != NCCL_SUCCESS)
            fprintf(stderr, "nccl_allreduce: ncclCommInitRank: %s\n", st.nccl.error_string(rc));
        else
            printf("nccl_allreduce: NCCL %d, rank %d of %d\n", version, st.rank, st.nranks);
        if (rc == NCCL_SUCCESS && accel_queue_create(st.dev, ACCEL_QUEUE_COMPUTE, &st.q) == ACCEL_OK &&
            make_buffer(&st, COUNT * sizeof(float), &st.x) == ACCEL_OK &&
            make_buffer(&st, COUNT * sizeof(float), &st.y) == ACCEL_OK &&
            make_buffer(&st, COUNT * sizeof(float), &st.b) == ACCEL_OK &&
            make_buffer(&st, COUNT * sizeof(float), &st.c) == ACCEL_OK &&
            make_buffer(&st, COUNT * sizeof(float), &st.z) == ACCEL_OK &&
            make_buffer(&st, st.bench_count * sizeof(float), &st.big_in) == ACCEL_OK &&
            make_buffer(&st, st.bench_count * sizeof(float), &st.big_out) == ACCEL_OK) {
            code = pipeline(&st) ? 0 : 1;
            if (code == 0) bench(&st);
        } else if (rc == NCCL_SUCCESS) {
            fprintf(stderr, "nccl_allreduce: queue or buffers could not be created\n");
        }
        if (st.q) accel_queue_finish(st.q, ACCEL_WAIT_FOREVER);
        if (st.comm) st.nccl.comm_destroy(st.comm);
    }
    if (st.blas_handle) st.blas.destroy(st.blas_handle);
    accel_device_destroy(st.dev);
    printf("%s\n", code == 0 ? "OK" : "FAILED");
    return code;
}

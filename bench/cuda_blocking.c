/* bench/cuda_blocking.c — which CUDA driver calls block the host while a stream waits on the GPU.

   Build and run (no CUDA headers, no -lcuda: the driver is loaded at run time, as by accel_cuda.h):
       make cuda-blocking        (= gcc -std=gnu11 -O1 -I. bench/cuda_blocking.c -lpthread -lm -ldl)
   Without a driver it prints why and exits 0.

   accel's GPU-side waits (cuStreamWaitValue64 on a word the host or another queue raises later) are
   only safe if nothing accel calls meanwhile waits for that stream. This program parks a stream in
   cuStreamWaitValue64 on a pinned host word, makes one driver call (or a short sequence) on a second
   thread, and reports whether the call returned within a second; then it raises the word and the call
   completes either way. Each call is tried behind a wait on another stream and behind a wait on its own
   stream. On an H100 (driver 580, 2026-11-23): cuMemFree, cuMemFreeHost and cuModuleUnload blocked behind
   a wait on any stream; a copy with host memory on both sides (into a HOST buffer's mapped pointer)
   blocked behind a wait on its own stream; allocations, launches, fills, device-side copies, event and
   stream calls, graph instantiation, launch and exec updates did not. accel_cuda.h's "cuda: releases"
   and its host-to-host copy kernel rest on these answers: run this on a new driver before trusting them.
   cuModuleLoadDataEx is asked too: on an H200 (driver 580, 2026-11-29) examples/failure.c hung in the
   step that makes a program while a queue waited on the GPU for the host (inferred, not measured).
   tests/mock_cuda.c emulates the same answers (CI checks that this program reads 5 on it), so that the
   suite on the mock hangs where accel would hang on a GPU.
   The last line is "cuda_blocking: N calls block".

   --contexts asks the question accel_cuda.h's process-wide release rule leaves open (cuda: releases):
   does a release in one context wait for a stream of ANOTHER context that sits in a GPU wait? The
   other context is the second GPU's primary context where the machine has two, else a context of its
   own on the same GPU (cuCtxCreate). It also asks whether a stream of the other context waits on a
   pinned, portable word of this one and is released by a host write (what waits between two GPUs,
   DESIGN.md 7.2, would rest on). The last line is then "cuda_blocking: across contexts: N calls block"
   (the mock, with MOCK_CUDA_DEVICES=2, waits for every stream: 3).
*/
#define _GNU_SOURCE 1
#define ACCEL_IMPLEMENTATION
#include "accel.h"
#define ACCEL_CUDA_IMPLEMENTATION
#include "accel_cuda.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

/* one kernel with one 32-bit parameter (the mock knows it by this name) */
static const char cb_ptx[] =
    ".version 6.0\n.target sm_50\n.address_size 64\n.visible .entry bench_const(.param .u32 bench_const_param_0)\n{\n    ret;\n}\n";

typedef struct cb_state {
    accel_cu_context ctx;
    accel_cu_stream waiting, other, target;   /* target: the stream the probed call uses */
    volatile uint64_t* word;
    accel_cu_deviceptr word_dptr;
    accel_cu_function fn;
    accel_cu_graph graph;
    accel_cu_graph_node node;
    accel_cu_graph_exec exec;
    void *pinned, *mapped;                    /* 1 MiB pinned; 4 KiB pinned and device-mapped */
    accel_cu_deviceptr mapped_dptr, dbuf, spare_dbuf;
    void* spare_pinned;
    accel_cu_module spare_module;
    uint32_t param;
} cb_state;
static cb_state cb;

typedef void (*cb_op)(void);
static volatile int cb_done;
static cb_op cb_current;

static void* cb_thread(void* arg) {
    (void)arg;
    accel_i_cu.CtxSetCurrent(cb.ctx);
    cb_current();
    cb_done = 1;
    return NULL;
}
/* The stream parked in the GPU wait, its context and its word (cb_blocks: cb.waiting on cb.word). */
typedef struct cb_park {
    accel_cu_context ctx;
    accel_cu_stream stream;
    volatile uint64_t* word;
    accel_cu_deviceptr dptr;
} cb_park;
/* Runs op on a thread (cb.ctx current) while pk's stream sits in a GPU wait; true when op had not
   returned after 1 s. */
static bool cb_blocks_behind(const cb_park* pk, cb_op op) {
    pthread_t t;
    uint64_t t0;
    accel_cu_result cr;
    *pk->word = 0;
    __sync_synchronize();
    accel_i_cu.CtxSetCurrent(pk->ctx);
    cr = accel_i_cu.StreamWaitValue64(pk->stream, pk->dptr, 1, ACCEL_CU_STREAM_WAIT_VALUE_GEQ);
    accel_i_cu.CtxSetCurrent(cb.ctx);
    if (cr != ACCEL_CU_SUCCESS) return false;
    cb_done = 0;
    cb_current = op;
    if (pthread_create(&t, NULL, cb_thread, NULL) != 0) { *pk->word = 1; return false; }
    t0 = accel_i_now_ns();
    while (!cb_done && accel_i_now_ns() - t0 < 1000000000u) usleep(1000);
    bool blocked = !cb_done;
    *pk->word = 1;
    __sync_synchronize();
    pthread_join(t, NULL);
    accel_i_cu.CtxSetCurrent(pk->ctx);
    accel_i_cu.StreamSynchronize(pk->stream);
    accel_i_cu.CtxSetCurrent(cb.ctx);
    accel_i_cu.StreamSynchronize(cb.waiting);
    accel_i_cu.StreamSynchronize(cb.other);
    return blocked;
}
static bool cb_blocks(cb_op op) {
    cb_park pk = { cb.ctx, cb.waiting, cb.word, cb.word_dptr };
    return cb_blocks_behind(&pk, op);
}

static void op_mem_alloc(void) { accel_cu_deviceptr p; if (accel_i_cu.MemAlloc(&p, 1 << 20) == ACCEL_CU_SUCCESS) cb.spare_dbuf = p; }
static void op_mem_free(void) { accel_i_cu.MemFree(cb.spare_dbuf); cb.spare_dbuf = 0; }
static void op_host_alloc(void) { accel_i_cu.MemHostAlloc(&cb.spare_pinned, 1 << 20, ACCEL_CU_MEMHOSTALLOC_PORTABLE); }
static void op_host_free(void) { accel_i_cu.MemFreeHost(cb.spare_pinned); cb.spare_pinned = NULL; }
/* a program made while a queue waits on the GPU (accel_program_create): the module stays loaded */
static void op_module_load(void) { accel_cu_module m = NULL; accel_i_cu.ModuleLoadDataEx(&m, cb_ptx, 0, NULL, NULL); }
static void op_module_unload(void) { accel_i_cu.ModuleUnload(cb.spare_module); cb.spare_module = NULL; }
static void op_stream(void) { accel_cu_stream s; if (accel_i_cu.StreamCreate(&s, ACCEL_CU_STREAM_NON_BLOCKING) == ACCEL_CU_SUCCESS) accel_i_cu.StreamDestroy(s); }
static void op_event(void) {
    accel_cu_event e;
    if (accel_i_cu.EventCreate(&e, ACCEL_CU_EVENT_DISABLE_TIMING) != ACCEL_CU_SUCCESS) return;
    accel_i_cu.EventRecord(e, cb.target);
    accel_i_cu.EventDestroy(e);
}
static void op_launch(void) { void* p[1] = { &cb.param }; accel_i_cu.LaunchKernel(cb.fn, 1, 1, 1, 1, 1, 1, 0, cb.target, p, NULL); }
static void op_memset(void) { accel_i_cu.MemsetD32Async(cb.dbuf, 7, 64, cb.target); }
static void op_htod(void) { accel_i_cu.MemcpyHtoDAsync(cb.dbuf, cb.pinned, 4096, cb.target); }
static void op_dtoh(void) { accel_i_cu.MemcpyDtoHAsync(cb.pinned, cb.dbuf, 4096, cb.target); }
static void op_dtod(void) { accel_i_cu.MemcpyDtoDAsync(cb.dbuf + 4096, cb.dbuf, 4096, cb.target); }
static void op_htoh(void) { accel_i_cu.MemcpyHtoDAsync(cb.mapped_dptr, cb.pinned, 64, cb.target); }
static void op_mapped_to_mapped(void) { accel_i_cu.MemcpyDtoDAsync(cb.mapped_dptr + 64, cb.mapped_dptr, 64, cb.target); }
static void op_instantiate(void) { accel_cu_graph_exec e; if (accel_i_cu.GraphInstantiateWithFlags(&e, cb.graph, 0) == ACCEL_CU_SUCCESS) accel_i_cu.GraphExecDestroy(e); }
static void op_graph_launch(void) { accel_i_cu.GraphLaunch(cb.exec, cb.target); accel_i_cu.GraphLaunch(cb.exec, cb.target); }
static void op_graph_update(void) {
    void* p[1] = { &cb.param };
    accel_cu_kernel_node_params kp;
    memset(&kp, 0, sizeof kp);
    kp.func = cb.fn;
    kp.grid[0] = kp.grid[1] = kp.grid[2] = kp.block[0] = kp.block[1] = kp.block[2] = 1;
    kp.params = p;
    accel_i_cu.GraphLaunch(cb.exec, cb.target);
    cb.param++;
    accel_i_cu.GraphExecKernelNodeSetParams(cb.exec, cb.node, &kp);
    accel_i_cu.GraphLaunch(cb.exec, cb.target);
}

/* The objects a call releases, made before each try. */
static void cb_refill(void) {
    if (!cb.spare_dbuf) accel_i_cu.MemAlloc(&cb.spare_dbuf, 1 << 20);
    if (!cb.spare_pinned) accel_i_cu.MemHostAlloc(&cb.spare_pinned, 1 << 20, ACCEL_CU_MEMHOSTALLOC_PORTABLE);
    if (!cb.spare_module) accel_i_cu.ModuleLoadDataEx(&cb.spare_module, cb_ptx, 0, NULL, NULL);
}

static bool cb_setup(void) {
    accel_cu_module m;
    accel_cu_kernel_node_params kp;
    void* word = NULL;
    void* p[1] = { &cb.param };
    accel_cu_result cr = ACCEL_CU_SUCCESS;
    cr |= accel_i_cu.StreamCreate(&cb.waiting, ACCEL_CU_STREAM_NON_BLOCKING);
    cr |= accel_i_cu.StreamCreate(&cb.other, ACCEL_CU_STREAM_NON_BLOCKING);
    cr |= accel_i_cu.MemHostAlloc(&word, 64, ACCEL_CU_MEMHOSTALLOC_PORTABLE | ACCEL_CU_MEMHOSTALLOC_DEVICEMAP);
    if (cr != ACCEL_CU_SUCCESS || !word) return false;
    cb.word = (volatile uint64_t*)word;
    cr |= accel_i_cu.MemHostGetDevicePointer(&cb.word_dptr, word, 0);
    cr |= accel_i_cu.MemHostAlloc(&cb.pinned, 1 << 20, ACCEL_CU_MEMHOSTALLOC_PORTABLE);
    cr |= accel_i_cu.MemHostAlloc(&cb.mapped, 4096, ACCEL_CU_MEMHOSTALLOC_PORTABLE | ACCEL_CU_MEMHOSTALLOC_DEVICEMAP);
    if (cr != ACCEL_CU_SUCCESS) return false;
    cr |= accel_i_cu.MemHostGetDevicePointer(&cb.mapped_dptr, cb.mapped, 0);
    cr |= accel_i_cu.MemAlloc(&cb.dbuf, 1 << 16);
    cr |= accel_i_cu.ModuleLoadDataEx(&m, cb_ptx, 0, NULL, NULL);
    if (cr != ACCEL_CU_SUCCESS) return false;
    cr |= accel_i_cu.ModuleGetFunction(&cb.fn, m, "bench_const");
    memset(&kp, 0, sizeof kp);
    kp.func = cb.fn;
    kp.grid[0] = kp.grid[1] = kp.grid[2] = kp.block[0] = kp.block[1] = kp.block[2] = 1;
    kp.params = p;
    cr |= accel_i_cu.GraphCreate(&cb.graph, 0);
    if (cr != ACCEL_CU_SUCCESS) return false;
    cr |= accel_i_cu.GraphAddKernelNode(&cb.node, cb.graph, NULL, 0, &kp);
    cr |= accel_i_cu.GraphInstantiateWithFlags(&cb.exec, cb.graph, 0);
    return cr == ACCEL_CU_SUCCESS;
}

/* ==== --contexts: the calls of this context behind a wait in another ==== */
typedef int (*cb_ctx_create_fn)(accel_cu_context* ctx, unsigned int flags, accel_cu_device dev);
typedef int (*cb_ctx_destroy_fn)(accel_cu_context ctx);
static void* cb_lib;   /* the driver again, for what accel does not load (cuCtxCreate, cuCtxDestroy) */
static void* cb_sym(const char* name) {
    const char* path = getenv("ACCEL_CUDA_LIBRARY");
    if (!cb_lib) cb_lib = dlopen(path && path[0] ? path : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    return cb_lib ? dlsym(cb_lib, name) : NULL;
}
/* The other context: the second GPU's (an accel device of its own, *dev2), else one of its own on the
   same GPU (*made, by cuCtxCreate); NULL when neither can be had. cb.ctx is current again after. */
static accel_cu_context cb_other_context(accel_device** dev2, bool* made) {
    int n = 0;
    accel_cu_context c = NULL;
    accel_cu_device d0;
    cb_ctx_create_fn create;
    if (accel_i_cu.DeviceGetCount(&n) == ACCEL_CU_SUCCESS && n >= 2 &&
        accel_device_create(&(accel_device_desc){ .backend = accel_cuda_backend(), .device_index = 1 }, dev2) ==
            ACCEL_OK) {
        c = (accel_cu_context)accel_cuda_device_context(*dev2);
    } else {
        *(void**)&create = cb_sym("cuCtxCreate_v2");
        if (create && accel_i_cu.DeviceGet(&d0, 0) == ACCEL_CU_SUCCESS && create(&c, 0, d0) == 0) *made = true;
        else c = NULL;
    }
    accel_i_cu.CtxSetCurrent(cb.ctx);
    return c;
}
/* Does a stream of pk's context, waiting on cb.word (this context's pinned, portable word) at cross,
   pass once the host writes it? */
static const char* cb_cross_word(const cb_park* pk, accel_cu_deviceptr cross, bool* stuck) {
    accel_cu_result cr;
    uint64_t t0;
    *cb.word = 0;
    __sync_synchronize();
    accel_i_cu.CtxSetCurrent(pk->ctx);
    cr = accel_i_cu.StreamWaitValue64(pk->stream, cross, 1, ACCEL_CU_STREAM_WAIT_VALUE_GEQ);
    if (cr == ACCEL_CU_SUCCESS) {
        usleep(10000);
        *cb.word = 1;
        __sync_synchronize();
        t0 = accel_i_now_ns();
        while ((cr = accel_i_cu.StreamQuery(pk->stream)) == ACCEL_CU_ERROR_NOT_READY &&
               accel_i_now_ns() - t0 < 1000000000u)
            usleep(1000);
    }
    accel_i_cu.CtxSetCurrent(cb.ctx);
    *stuck = cr == ACCEL_CU_ERROR_NOT_READY;
    return cr == ACCEL_CU_SUCCESS ? "released by a host write" : *stuck ? "NOT released in 1 s" : "refused";
}
static int cb_contexts(void) {
    static const struct { const char* name; cb_op op; } calls[] = {
        { "cuMemFree", op_mem_free }, { "cuMemFreeHost", op_host_free }, { "cuModuleUnload", op_module_unload },
        { "cuMemAlloc (1 MiB)", op_mem_alloc }, { "cuMemHostAlloc (1 MiB)", op_host_alloc },
        { "cuModuleLoadDataEx (PTX)", op_module_load },
    };
    accel_device* dev2 = NULL;
    bool made = false, stuck = false;
    void* word = NULL;
    accel_cu_deviceptr cross = 0;
    accel_cu_result cr = ACCEL_CU_SUCCESS;
    cb_park pk;
    int blocking = 0;
    memset(&pk, 0, sizeof pk);
    if ((pk.ctx = cb_other_context(&dev2, &made)) == NULL) {
        printf("cuda_blocking: one GPU and no cuCtxCreate: no second context to probe\n");
        return 0;
    }
    accel_i_cu.CtxSetCurrent(pk.ctx);
    cr |= accel_i_cu.StreamCreate(&pk.stream, ACCEL_CU_STREAM_NON_BLOCKING);
    cr |= accel_i_cu.MemHostAlloc(&word, 64, ACCEL_CU_MEMHOSTALLOC_PORTABLE | ACCEL_CU_MEMHOSTALLOC_DEVICEMAP);
    if (cr == ACCEL_CU_SUCCESS) cr |= accel_i_cu.MemHostGetDevicePointer(&pk.dptr, word, 0);
    if (cr == ACCEL_CU_SUCCESS) cr |= accel_i_cu.MemHostGetDevicePointer(&cross, (void*)cb.word, 0);
    accel_i_cu.CtxSetCurrent(cb.ctx);
    if (cr != ACCEL_CU_SUCCESS) {
        printf("cuda_blocking: the other context's stream and word could not be made: nothing to probe\n");
        if (dev2) accel_device_destroy(dev2);   /* a context of its own goes with the process */
        return 1;
    }
    pk.word = (volatile uint64_t*)word;
    printf("the other context: %s\n", made ? "cuCtxCreate on the same GPU" : "the second GPU's primary context");
    printf("%-48s | %s\n", "call (in this context)", "a wait in the other context");
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
        bool b;
        cb_refill();
        b = cb_blocks_behind(&pk, calls[i].op);
        blocking += b;
        printf("%-48s | %s\n", calls[i].name, b ? "BLOCKS" : "returns");
        fflush(stdout);
    }
    printf("%-48s | %s\n", "its stream waits on this context's pinned word", cb_cross_word(&pk, cross, &stuck));
    if (!stuck) {   /* else the stream may never leave its wait: the process ends with it */
        cb_ctx_destroy_fn destroy;
        accel_i_cu.CtxSetCurrent(pk.ctx);
        accel_i_cu.StreamDestroy(pk.stream);
        accel_i_cu.MemFreeHost(word);
        accel_i_cu.CtxSetCurrent(cb.ctx);
        *(void**)&destroy = made ? cb_sym("cuCtxDestroy_v2") : NULL;
        if (destroy) destroy(pk.ctx);
        if (dev2) accel_device_destroy(dev2);
    }
    printf("cuda_blocking: across contexts: %d calls block\n", blocking);
    return stuck;
}

int main(int argc, char** argv) {
    static const struct { const char* name; cb_op op; bool on_stream; } calls[] = {
        { "cuMemAlloc (1 MiB)", op_mem_alloc, false }, { "cuMemFree", op_mem_free, false },
        { "cuMemHostAlloc (1 MiB)", op_host_alloc, false }, { "cuMemFreeHost", op_host_free, false },
        { "cuModuleUnload", op_module_unload, false }, { "cuModuleLoadDataEx (PTX)", op_module_load, false }, { "cuStreamCreate + cuStreamDestroy", op_stream, false },
        { "cuEventRecord + cuEventDestroy", op_event, true }, { "cuLaunchKernel", op_launch, true },
        { "cuMemsetD32Async", op_memset, true }, { "cuMemcpyHtoDAsync (pinned -> device)", op_htod, true },
        { "cuMemcpyDtoHAsync (device -> pinned)", op_dtoh, true }, { "cuMemcpyDtoDAsync (device -> device)", op_dtod, true },
        { "cuMemcpyHtoDAsync (pinned -> mapped host)", op_htoh, true },
        { "cuMemcpyDtoDAsync (mapped host -> mapped host)", op_mapped_to_mapped, true },
        { "cuGraphInstantiate", op_instantiate, false }, { "cuGraphLaunch twice", op_graph_launch, true },
        { "cuGraphLaunch, exec update, cuGraphLaunch", op_graph_update, true },
    };
    accel_device* dev = NULL;
    int blocking = 0;
    if (accel_device_create(&(accel_device_desc){ .backend = accel_cuda_backend() }, &dev) != ACCEL_OK) {
        printf("cuda_blocking: no CUDA device here (see the log above); nothing to probe\n");
        return 0;
    }
    cb.ctx = (accel_cu_context)accel_cuda_device_context(dev);
    accel_i_cu.CtxSetCurrent(cb.ctx);
    if (!accel_i_cu.StreamWaitValue64 || !cb_setup()) {
        printf("cuda_blocking: no 64-bit stream memory operations, or the setup failed: nothing to probe\n");
        accel_device_destroy(dev);
        return 0;
    }
    if (argc > 1 && strcmp(argv[1], "--contexts") == 0) {
        int r = cb_contexts();
        if (r == 0) accel_device_destroy(dev);
        return r;
    }
    printf("%-48s | %-26s | %s\n", "call", "a wait on another stream", "a wait on its own stream");
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
        bool other, own = false;
        cb_refill();
        cb.target = cb.other;
        other = cb_blocks(calls[i].op);
        if (calls[i].on_stream) {
            cb_refill();
            cb.target = cb.waiting;
            own = cb_blocks(calls[i].op);
        }
        blocking += other || own;
        printf("%-48s | %-26s | %s\n", calls[i].name, other ? "BLOCKS" : "returns", !calls[i].on_stream ? "-" : own ? "BLOCKS" : "returns");
        fflush(stdout);
    }
    printf("cuda_blocking: %d calls block\n", blocking);
    accel_device_destroy(dev);   /* the probe's objects go with the primary context's last release */
    return 0;
}

/* test_cuda.c — the CUDA backend where there is no GPU: the precise UNAVAILABLE reasons (library missing,
   the toolkit's stub through the override, a stub found by the default search refused), NVRTC compiling
   every CUDA C kernel of tests/kernels.h to PTX without a device, an NVRTC compile error, and
   accel_device_create_any falling back to the CPU. On a machine with a driver the suite itself runs on
   CUDA (ACCEL_TEST_BACKEND=cuda); these tests force the unavailable paths with the library override.
   Tests that need the CUDA toolkit's files (the stub libcuda, NVRTC) skip when they are absent. */
#if defined(__linux__)
#  define _POSIX_C_SOURCE 200809L   /* setenv, unsetenv (the foreign-stream tests' ring mode) */
#endif
#define ACCEL_IMPLEMENTATION
#include "accel.h"
#ifndef ACCEL_TEST_HAVE_CUDA
#  define ACCEL_TEST_HAVE_CUDA
#endif
#include "test.h"
#include "kernels.h"

#if defined(__linux__) && !defined(ACCEL_NO_THREADS) && !defined(__wasi__)
#  include <dlfcn.h>
#  define TEST_CUDA_LOADER 1
#else
#  define TEST_CUDA_LOADER 0
#endif

static int test_file_exists(const char* path) {
    FILE* f = fopen(path, "rb");
    if (!f) return 0;
    fclose(f);
    return 1;
}
/* The first existing file among $CUDA_HOME/<rel> (or $CUDA_PATH), /usr/local/cuda/<rel>. */
static const char* test_toolkit_file(const char* rel, char* buf, size_t cap) {
    const char* roots[3] = { getenv("CUDA_HOME"), getenv("CUDA_PATH"), "/usr/local/cuda" };
    for (int i = 0; i < 3; i++) {
        if (!roots[i] || !roots[i][0]) continue;
        snprintf(buf, cap, "%s/%s", roots[i], rel);
        if (test_file_exists(buf)) return buf;
    }
    return NULL;
}
#if TEST_CUDA_LOADER
static const char* test_stub_path(char* buf, size_t cap) {
    const char* p = test_toolkit_file("lib64/stubs/libcuda.so", buf, cap);
    return p ? p : test_toolkit_file("targets/x86_64-linux/lib/stubs/libcuda.so", buf, cap);
}
#endif
/* NVRTC: env ACCEL_NVRTC_LIBRARY, else the toolkit's, else NULL (the backend's default search). */
static const char* test_nvrtc_path(char* buf, size_t cap) {
    const char* env = getenv("ACCEL_NVRTC_LIBRARY");
    const char* p;
    if (env && env[0]) return env;
    if ((p = test_toolkit_file("lib64/libnvrtc.so", buf, cap)) != NULL) return p;
    return NULL;
}

static accel_device_desc test_cuda_desc(void) {
    accel_device_desc d;
    memset(&d, 0, sizeof d);
    d.backend = accel_cuda_backend();
    d.logger = test_logger();
    return d;
}

TEST(backend_name_and_table) {
    CHECK_EQ_STR(accel_backend_name(accel_cuda_backend()), "cuda");
    CHECK(accel_cuda_backend() == accel_cuda_backend());
    CHECK(accel_cuda_backend() != accel_cpu_backend());
}

TEST(library_missing_is_unavailable) {
    accel_device_desc d = test_cuda_desc();
    accel_device* dev = (accel_device*)&d;
    uint32_t count = 99;
    accel_cuda_set_library("/nonexistent/accel-test/libcuda.so.1", NULL);
    CHECK_RESULT(accel_device_create(&d, &dev), ACCEL_ERROR_UNAVAILABLE);
    CHECK(dev == NULL);
    CHECK(test_log_count(ACCEL_LOG_WARN) >= 1);
#if !defined(ACCEL_I_CU_NO_LOADER)   /* dlopen, or LoadLibrary on Windows (run under wine in CI) */
    CHECK(test_log_contains("/nonexistent/accel-test/libcuda.so.1"));
    CHECK(test_log_contains("cannot be loaded"));
#else
    CHECK(test_log_contains("no dynamic loading"));
#endif
    CHECK_RESULT(accel_backend_device_count(accel_cuda_backend(), &count), ACCEL_ERROR_UNAVAILABLE);
    CHECK_EQ_U64(count, 0);
    CHECK_RESULT(accel_backend_device_count(accel_cuda_backend(), NULL), ACCEL_ERROR_INVALID_ARGUMENT);
    accel_cuda_set_library(NULL, NULL);
#if defined(_WIN32)
    /* the default search: nvcuda.dll; where there is none (wine), the reason names it */
    test_log_reset();
    if (accel_device_create(&d, &dev) == ACCEL_OK) { accel_device_destroy(dev); return; }
    CHECK(test_log_contains("the CUDA driver library (nvcuda.dll) was not found"));
#endif
}

/* accel_cuda_set_library keeps a path of any length: the driver of ACCEL_CUDA_LIBRARY (the mock's in
   `make test`) reached through 300 "./" components, a path of over 600 characters, loads (the override
   was cut at 511 characters, which named no file). Meaningful only while no driver is loaded yet (a
   loaded one stays): it runs after the unavailable paths and before the tests that load the driver. */
TEST(long_library_path_is_kept_whole) {
#if TEST_CUDA_LOADER && !defined(_WIN32)
    static char path[4096];
    const char* lib = getenv("ACCEL_CUDA_LIBRARY");
    accel_device_desc d = test_cuda_desc();
    accel_device* dev = NULL;
    size_t n = 0;
    if (!lib || !lib[0] || strlen(lib) > 2000) SKIP("ACCEL_CUDA_LIBRARY does not name a driver (the mock run sets it)");
    if (lib[0] == '/') path[n++] = '/';
    for (int i = 0; i < 300; i++) { path[n++] = '.'; path[n++] = '/'; }
    memcpy(path + n, lib[0] == '/' ? lib + 1 : lib, strlen(lib) + 1);
    accel_cuda_set_library(path, NULL);
    accel_result r = accel_device_create(&d, &dev);
    accel_cuda_set_library(NULL, NULL);
    if (r == ACCEL_ERROR_UNAVAILABLE && test_log_contains("no CUDA device")) SKIP("the driver has no device");
    CHECK_OK(r);
    accel_device_destroy(dev);
#else
    SKIP("no dynamic loading in this build (or Windows)");
#endif
}

TEST(stub_through_override_is_reported_as_stub) {
#if TEST_CUDA_LOADER
    char buf[512];
    const char* stub = test_stub_path(buf, sizeof buf);
    accel_device_desc d = test_cuda_desc();
    accel_device* dev = NULL;
    if (!stub) SKIP("the CUDA toolkit's stub libcuda.so is not installed (/usr/local/cuda/lib64/stubs)");
    accel_cuda_set_library(stub, NULL);
    CHECK_RESULT(accel_device_create(&d, &dev), ACCEL_ERROR_UNAVAILABLE);
    CHECK(dev == NULL);
    CHECK(test_log_contains("stub library"));
    CHECK(test_log_contains("CUDA_ERROR_STUB_LIBRARY"));
    CHECK(!test_log_contains("not found"));
    accel_cuda_set_library(NULL, NULL);
#else
    SKIP("no dynamic loading in this build");
#endif
}

/* The default search must not accept a libcuda that lives under stubs/. The stub is loaded first by the
   test, so the backend's dlopen("libcuda.so.1") finds it by its soname. */
TEST(stub_found_by_search_is_refused) {
#if TEST_CUDA_LOADER
    char buf[512];
    const char* stub = test_stub_path(buf, sizeof buf);
    void* preloaded;
    accel_device_desc d = test_cuda_desc();
    accel_device* dev = NULL;
    if (!stub) SKIP("the CUDA toolkit's stub libcuda.so is not installed (/usr/local/cuda/lib64/stubs)");
    if (getenv("ACCEL_CUDA_LIBRARY")) SKIP("ACCEL_CUDA_LIBRARY is set: the default search is not used");
    preloaded = dlopen(stub, RTLD_NOW | RTLD_LOCAL);
    if (!preloaded) SKIP("the stub libcuda.so cannot be loaded here");
    accel_cuda_set_library(NULL, NULL);
    if (accel_device_create(&d, &dev) == ACCEL_OK) {   /* a real driver was found as libcuda.so */
        accel_device_destroy(dev);
        dlclose(preloaded);
        SKIP("a real CUDA driver is installed beside the stub");
    }
    CHECK(dev == NULL);
    CHECK(test_log_contains("refusing libcuda.so.1"));
    CHECK(test_log_contains("/stubs/"));
    CHECK(test_log_contains("only the CUDA toolkit's stub library was found"));
    dlclose(preloaded);
#else
    SKIP("no dynamic loading in this build");
#endif
}

TEST(create_any_falls_back_to_cpu) {
    const accel_backend* order[2] = { accel_cuda_backend(), accel_cpu_backend() };
    accel_device_desc d = test_cuda_desc();
    accel_device* dev = NULL;
    accel_device_info info;
    accel_buffer* buf;
    accel_cuda_set_library("/nonexistent/accel-test/libcuda.so.1", NULL);
    d.backend = NULL;
    d.cpu_threads = 2;
    REQUIRE_OK(accel_device_create_any(order, 2, &d, &dev));
    REQUIRE(dev != NULL);
    REQUIRE_OK(accel_device_info_get(dev, &info));
    CHECK_EQ_STR(info.backend, "cpu");
    CHECK(test_log_contains("skipping backend 'cuda': ACCEL_ERROR_UNAVAILABLE"));
#if TEST_CUDA_LOADER
    CHECK(test_log_contains("cannot be loaded"));
#endif
    /* the CPU device works */
    REQUIRE_OK(test_buffer_create(dev, 64, ACCEL_MEMORY_DEVICE, &buf));
    CHECK_OK(test_buffer_set_u32(buf, 16, 0x5a5a5a5au));
    CHECK_EQ_U64(test_buffer_u32(buf, 15), 0x5a5a5a5au);
    accel_device_destroy(dev);
    /* only CUDA in the list: UNAVAILABLE */
    CHECK_RESULT(accel_device_create_any(order, 1, &d, &dev), ACCEL_ERROR_UNAVAILABLE);
    CHECK(dev == NULL);
    accel_cuda_set_library(NULL, NULL);
}

/* Every CUDA C kernel of the suite compiles to PTX with NVRTC, for the default target and for sm_75
   and sm_90, through accel_cuda_compile_source (the backend's own compile path). */
TEST(nvrtc_compiles_every_test_kernel) {
    char buf[512];
    test_alloc_state st;
    accel_allocator a;
    accel_logger lg = test_logger();
    const uint32_t ccs[3] = { 0, 75, 90 };
    char* ptx = NULL;
    size_t size = 0;
    accel_result r;
    test_alloc_init(&st);
    a = test_allocator(&st);
    accel_cuda_set_library(NULL, test_nvrtc_path(buf, sizeof buf));
    r = accel_cuda_compile_source(test_k_add_one_cuda, "add_one.cu", 0, &a, &lg, &ptx, &size);
    if (r == ACCEL_ERROR_UNAVAILABLE) { accel_cuda_set_library(NULL, NULL); SKIP(TEST_CUDA_LOADER ? "NVRTC (libnvrtc.so) is not installed" : "no dynamic loading in this build"); }
    CHECK_OK(r);
    accel_cuda_free_ptx(&a, ptx, size);
    for (int k = 0; k < TK_COUNT; k++) {
        accel_program_desc d = test_kernel_desc((test_kernel)k);
        char entry[64];
        snprintf(entry, sizeof entry, ".entry %s(", d.name);
        for (int c = 0; c < 3; c++) {
            ptx = NULL;
            size = 0;
            r = accel_cuda_compile_source(d.cuda_source, d.name, ccs[c], &a, &lg, &ptx, &size);
            if (!CHECK_OK(r)) { fprintf(stderr, "    kernel %s, cc %u\n", d.name, ccs[c]); continue; }
            CHECK(ptx != NULL);
            CHECK(size > 1 && ptx[size - 1] == '\0' && strlen(ptx) == size - 1);
            CHECK(strstr(ptx, ".version") != NULL);
            CHECK(strstr(ptx, entry) != NULL);
            if (ccs[c]) {
                char target[32];
                snprintf(target, sizeof target, ".target sm_%u", ccs[c]);
                CHECK(strstr(ptx, target) != NULL);
            }
            /* every parameter is there: buffers as 64-bit pointers, then 32-bit constants */
            for (uint32_t p = 0; p < d.buffer_count + d.constant_count; p++) {
                char param[96];
                snprintf(param, sizeof param, ".param .%s %s_param_%u", p < d.buffer_count ? "u64" : "u32", d.name, p);
                if (!CHECK(strstr(ptx, param) != NULL)) fprintf(stderr, "    kernel %s: no '%s'\n", d.name, param);
            }
            accel_cuda_free_ptx(&a, ptx, size);
        }
    }
    CHECK_EQ_INT(atomic_load(&st.outstanding), 0);
    CHECK_EQ_INT(atomic_load(&st.size_mismatch), 0);
    accel_cuda_set_library(NULL, NULL);
}

TEST(nvrtc_compile_error_is_reported) {
    char buf[512];
    test_alloc_state st;
    accel_allocator a;
    accel_logger lg = test_logger();
    char* ptx = (char*)buf;
    size_t size = 7;
    accel_result r;
    static const char bad[] =
        "extern \"C\" __global__ void broken(unsigned* out) {\n"
        "    out[threadIdx.x] = undeclared_thing + 1;\n"
        "}\n";
    test_alloc_init(&st);
    a = test_allocator(&st);
    accel_cuda_set_library(NULL, test_nvrtc_path(buf, sizeof buf));
    r = accel_cuda_compile_source(bad, "broken.cu", 0, &a, &lg, &ptx, &size);
    if (r == ACCEL_ERROR_UNAVAILABLE) { accel_cuda_set_library(NULL, NULL); SKIP(TEST_CUDA_LOADER ? "NVRTC (libnvrtc.so) is not installed" : "no dynamic loading in this build"); }
    CHECK_RESULT(r, ACCEL_ERROR_COMPILE);
    CHECK(ptx == NULL);
    CHECK_EQ_U64(size, 0);
    CHECK(test_log_count(ACCEL_LOG_ERROR) >= 2);
    CHECK(test_log_contains("undeclared_thing"));           /* the compiler's own words */
    CHECK(test_log_contains("broken.cu"));
    CHECK(test_log_contains("nvrtcCompileProgram"));
    CHECK_EQ_INT(atomic_load(&st.outstanding), 0);
    /* bad arguments */
    CHECK_RESULT(accel_cuda_compile_source(NULL, "x", 0, &a, &lg, &ptx, &size), ACCEL_ERROR_INVALID_ARGUMENT);
    CHECK_RESULT(accel_cuda_compile_source(bad, "x", 0, &a, &lg, NULL, &size), ACCEL_ERROR_INVALID_ARGUMENT);
    CHECK_RESULT(accel_cuda_compile_source(bad, "x", 0, &a, &lg, &ptx, NULL), ACCEL_ERROR_INVALID_ARGUMENT);
    accel_cuda_set_library(NULL, NULL);
}

TEST(nvrtc_missing_is_unavailable) {
    accel_logger lg = test_logger();
    char* ptx = NULL;
    size_t size = 0;
    accel_cuda_set_library(NULL, "/nonexistent/accel-test/libnvrtc.so");
    accel_result r = accel_cuda_compile_source(test_k_add_one_cuda, NULL, 0, NULL, &lg, &ptx, &size);
    accel_cuda_set_library(NULL, NULL);
    /* a process that already loaded NVRTC keeps it (the override applies to the next load) */
    if (r == ACCEL_OK) { accel_cuda_free_ptx(NULL, ptx, size); SKIP("NVRTC was already loaded by an earlier test"); }
    CHECK_RESULT(r, ACCEL_ERROR_UNAVAILABLE);
    CHECK(ptx == NULL);
    CHECK(test_log_contains("NVRTC unavailable"));
}

/* ==== with a driver only (skip elsewhere) ==== */
/* A CUDA device from the default search, or NULL (the test then skips). */
static accel_device* test_cuda_device(void) {
    accel_device_desc d = test_cuda_desc();
    accel_device* dev = NULL;
    accel_cuda_set_library(NULL, NULL);
    if (accel_device_create(&d, &dev) != ACCEL_OK) return NULL;
    test_log_reset();
    return dev;
}

static const char test_bad_ptx[] =
    ".version 7.0\n.target sm_70\n.address_size 64\n"
    ".visible .entry bad()\n{\n    this_is_not_ptx %r1;\n    ret;\n}\n";

TEST(ptx_jit_error_goes_to_the_log) {
    accel_device* dev = test_cuda_device();
    accel_program* p = NULL;
    accel_device_info info;
    if (!dev) SKIP("no CUDA device here");
    REQUIRE_OK(accel_device_info_get(dev, &info));
    CHECK_EQ_STR(info.backend, "cuda");
    CHECK(info.separate_copy_queue);
    CHECK(info.compute_capability >= 50);
    CHECK(info.formats & ACCEL_FORMAT_PTX);
    CHECK(info.max_group_invocations >= 256);
    CHECK_RESULT(accel_program_create(dev, &(accel_program_desc){ .name = "bad", .ptx = test_bad_ptx }, &p), ACCEL_ERROR_COMPILE);
    CHECK(p == NULL);
    CHECK(test_log_contains("cuModuleLoadDataEx(PTX)"));
    /* a program with only a CPU function cannot run here */
    CHECK_RESULT(accel_program_create(dev, &(accel_program_desc){ .name = "x", .cpu = test_k_add_one, .buffer_count = 1, .constant_count = 1 }, &p),
                 ACCEL_ERROR_UNSUPPORTED);
    /* the same CUDA C source twice: both work (the second comes from the cache) */
    if (info.formats & ACCEL_FORMAT_CUDA_SOURCE) {
        accel_program *a = NULL, *b = NULL;
        CHECK_OK(test_program_create(dev, TK_ADD_ONE, &a));
        CHECK_OK(test_program_create(dev, TK_ADD_ONE, &b));
        accel_program_destroy(a);
        accel_program_destroy(b);
    }
    accel_device_destroy(dev);
}

/* A cubin in the program desc (as a program built offline with nvcc carries it): NVRTC makes one for
   the device's own architecture, the program runs and computes. Skips where NVRTC cannot make a cubin
   for this device (no NVRTC, or the mock's, which makes PTX only). */
#if !defined(ACCEL_I_CU_NO_LOADER)
static void test_cubin_run(accel_device* dev) {
    accel_device_info info;
    accel_program* p = NULL;
    accel_buffer* buf = NULL;
    accel_queue* q = NULL;
    accel_signal* done = NULL;
    accel_allocator a;
    accel_logger lg = test_logger();
    test_alloc_state st;
    char* image = NULL;
    size_t size = 0;
    bool is_cubin = false;
    uint32_t n = 1000, host[1000];
    test_alloc_init(&st);
    a = test_allocator(&st);
    REQUIRE_OK(accel_device_info_get(dev, &info));
    if (accel_i_nvrtc_compile(test_k_add_one_cuda, "add_one", info.compute_capability, true, &a, &lg, &image, &size, &is_cubin) != ACCEL_OK ||
        !is_cubin) {
        if (image) accel_i_free(&a, image, size);
        SKIP("NVRTC made no cubin for this device");
    }
    CHECK(size > 4 && memcmp(image, "\177ELF", 4) == 0);
    CHECK_OK(accel_program_create(dev, &(accel_program_desc){ .name = "add_one", .cubin = image, .cubin_size = size,
                                                               .buffer_count = 1, .constant_count = 1 }, &p));
    accel_i_free(&a, image, size);   /* the driver copied the image */
    CHECK_EQ_INT(atomic_load(&st.outstanding), 0);
    for (uint32_t i = 0; i < n; i++) host[i] = 3u * i;
    if (p && CHECK_OK(test_buffer_create(dev, sizeof host, ACCEL_MEMORY_DEVICE, &buf)) && CHECK_OK(accel_buffer_write(buf, 0, host, sizeof host)) &&
        CHECK_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q)) && CHECK_OK(accel_signal_create(dev, 0, &done))) {
        accel_queue_exec(q, p, &buf, 1, &n, 1, accel_exec_1d(n, 128));
        accel_queue_signal(q, done, 1);
        CHECK_OK(accel_queue_submit(q));
        CHECK_OK(accel_signal_wait(done, 1, 10000000000ull));
        CHECK_OK(accel_buffer_read(buf, 0, host, sizeof host));
        for (uint32_t i = 0; i < n; i++)
            if (!CHECK_EQ_U64(host[i], 3u * i + 1u)) break;
    }
}
#endif
TEST(cubin_from_the_desc_runs) {
    accel_device* dev = test_cuda_device();
    if (!dev) SKIP("no CUDA device here");
#if !defined(ACCEL_I_CU_NO_LOADER)
    test_cubin_run(dev);
#endif
    accel_device_destroy(dev);   /* and what the test made on it */
}

#if !defined(ACCEL_I_CU_NO_LOADER)
/* Word i of a HOST buffer that a stream may be writing meanwhile (a GPU's fill lands a word at a time;
   the mock's stores each word atomically, so that a poll of one is no data race under TSan). */
static uint32_t test_seen(const volatile uint32_t* seen, size_t i) {
    return atomic_load_explicit((const volatile _Atomic uint32_t*)(seen + i), memory_order_acquire);
}
/* Holds q's points unapplied (held) or lets them apply: takes q's reap lock as a reaper does, waiting
   while one holds it (a plain store of 1 then would be undone by that reaper's release), or releases it. */
static void test_reap_hold(accel_queue* q, bool held) {
    accel_i_a32* lock = &((accel_i_cu_queue*)q)->reap_lock;
    if (!held) { atomic_store(lock, 0u); return; }
    while (atomic_exchange(lock, 1u)) accel_i_yield();
}
/* Polls a HOST buffer's first word (written by a GPU fill) until it reads v, for up to 10 s. */
static bool test_cuda_lands(volatile uint32_t* seen, uint32_t v) {
    for (uint64_t t0 = test_now_ns(); test_now_ns() - t0 < 10000000000ull;)
        if (test_seen(seen, 0) == v) return true;
    return false;
}
#endif

/* A long wait's nap (cuda: naps in long waits) is sized from the fastest pace the point's progress word
   has moved at from one move to the next: a stream that stood still at first (1 ms to its first 10
   points, as behind a host gate or while a queue's worker caught up) and then ran at 100 ns a point has
   10,000 points, 1 ms, left; a nap sized from the pace since the first look (1.01 ms for 110 points)
   slept 46 ms, far past the end. The estimate is a pure function of the looks: no device needed. */
TEST(nap_follows_the_fastest_pace_seen) {
#if !defined(ACCEL_I_CU_NO_LOADER)
    accel_i_a64 word;
    accel_i_cu_nap n;
    uint64_t ns;
    atomic_init(&word, 10u);
    memset(&n, 0, sizeof n);
    n.word = &word;
    n.seq = 10110u;
    n.p0 = 0;
    n.t0 = 0;                                               /* found while the stream stood still */
    CHECK_EQ_U64(accel_i_cu_nap_ns(&n, NULL, 0, 1000000u), 0);   /* its first move: no pace from it */
    atomic_store(&word, 110u);                              /* 100 points in 10 us */
    ns = accel_i_cu_nap_ns(&n, NULL, 0, 1010000u);
    CHECK(ns > 0);
    CHECK(ns <= 500000u);                                   /* half of 10,000 points at 100 ns */
    atomic_store(&word, 111u);                              /* a slow point after it changes nothing */
    CHECK(accel_i_cu_nap_ns(&n, NULL, 0, 1510000u) <= 500000u);
    atomic_store(&word, 10110u);                            /* reached: poll */
    CHECK_EQ_U64(accel_i_cu_nap_ns(&n, NULL, 0, 1520000u), 0);
#else
    SKIP("no CUDA backend in this build");
#endif
}

/* Signal a reached 1 on the GPU and no thread applied the point (its queue's reap lock is held): the host
   word is still 0. Where the GPU's value is readable (a mark's progress word or the mirror, not an
   event), a poll and accel_signal_value see 1 all the same (accel_i_cu_signal_settle, and the poll's
   last look, accel_i_cu_wait_last), the poll first: the value's read raises the host word. */
#if !defined(ACCEL_I_CU_NO_LOADER)
static void test_cuda_reached_unapplied(accel_signal* a, bool readable) {
    CHECK_EQ_U64(accel_i_host_signal_value(a), 0u);
    if (!readable) return;
    CHECK_OK(accel_signal_wait(a, 1, 0));
    CHECK_EQ_U64(accel_signal_value(a), 1u);
}
#endif
#if !defined(ACCEL_I_CU_NO_LOADER) && !defined(_WIN32)
/* The mock's count of driver calls of a kind (tests/mock_cuda.c, mock_cuda_calls), ~0 on a driver. */
enum { TEST_MOCK_EVENT_CALLS = 2 };   /* event records and stream waits on events */
static unsigned long long test_mock_calls(int kind) {
    void* f = accel_i_dl_sym(accel_i_cu_g.handle, "mock_cuda_calls");
    unsigned long long (*calls)(int);
    if (!f) return ~0ull;
    memcpy(&calls, &f, sizeof f);
    return calls(kind);
}
#endif
/* A function the mock exports (tests/mock_cuda.c), or NULL on a driver or before the library is
   loaded (which stays loaded: accel holds it). */
static void* test_mock_fn(const char* name) {
#if TEST_CUDA_LOADER && !defined(_WIN32)
    const char* path = getenv("ACCEL_CUDA_LIBRARY");
    void* lib = path && path[0] ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : NULL;
    void* f = lib ? dlsym(lib, name) : NULL;
    if (lib) dlclose(lib);
    return f;
#else
    (void)name;
    return NULL;
#endif
}
/* One of the mock's counts: `name` is mock_cuda_live (its live driver objects), mock_cuda_live_memory
   (its live memory blocks) or mock_cuda_out_of_memory (allocations its limit refused); -1 on a driver. */
static long long test_mock_count(const char* name) {
    void* f = test_mock_fn(name);
    long long (*count)(void);
    if (!f) return -1;
    memcpy(&count, &f, sizeof f);
    return count();
}
static long long test_mock_live(void) { return test_mock_count("mock_cuda_live"); }
/* A device whose driver cannot say its block and grid limits is not created (it would refuse every exec:
   limits of 0): BACKEND, a log line naming the query, and no driver object left behind. On the mock only
   (MOCK_CUDA_ATTR_FAILS: attributes 1 threads per block, 2 block x, 7 grid z, 75 compute capability
   major). */
TEST(device_without_its_limits_is_not_created) {
#if !defined(ACCEL_I_CU_NO_LOADER) && !defined(_WIN32)
    static const char* const attrs[] = { "1", "2", "7", "75" };
    accel_device* dev = test_cuda_device();
    accel_device_desc d = test_cuda_desc();
    long long before;
    accel_device_info info;
    if (!dev) SKIP("no CUDA device here");
    accel_device_destroy(dev);
    if ((before = test_mock_live()) < 0) SKIP("on the mock only (MOCK_CUDA_ATTR_FAILS)");
    for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++) {
        char want[64];
        dev = NULL;
        test_log_reset();
        setenv("MOCK_CUDA_ATTR_FAILS", attrs[i], 1);
        CHECK_RESULT(accel_device_create(&d, &dev), ACCEL_ERROR_BACKEND);
        unsetenv("MOCK_CUDA_ATTR_FAILS");
        CHECK(dev == NULL);
        snprintf(want, sizeof want, "cuDeviceGetAttribute(attribute %s)", attrs[i]);
        CHECK(test_log_contains(want));
        CHECK_EQ_U64((uint64_t)test_mock_live(), (uint64_t)before);
    }
    REQUIRE_OK(accel_device_create(&d, &dev));
    CHECK_OK(accel_device_info_get(dev, &info));
    CHECK(info.max_group_invocations > 0 && info.max_group_size[0] > 0 && info.max_group_count[2] > 0);
    accel_device_destroy(dev);
#else
    SKIP("no dynamic loading (or setenv) in this build");
#endif
}
/* A read whose cuStreamSynchronize fails returns its error only once its copy no longer writes the
   caller's memory: the io stream is queried until idle (the copy ran on into memory the caller had back,
   corrupting its stack in a hunt). On the mock only (MOCK_CUDA_SYNC_FAILS: the synchronize fails at once). */
TEST(failed_read_is_done_with_the_callers_memory) {
#if !defined(ACCEL_I_CU_NO_LOADER) && !defined(_WIN32)
    const size_t n = (size_t)32 << 20;
    accel_device* dev = test_cuda_device();
    accel_buffer* b = NULL;
    unsigned char *host = NULL, *seen = NULL, last;
    accel_result r;
    struct timespec pause = { 0, 50000000 };
    if (!dev) SKIP("no CUDA device here");
    if (test_mock_calls(0) == ~0ull) {
        accel_device_destroy(dev);
        SKIP("on the mock only (MOCK_CUDA_SYNC_FAILS)");
    }
    host = (unsigned char*)malloc(n);
    seen = (unsigned char*)malloc(n);
    if (host && seen && CHECK_OK(test_buffer_create(dev, n, ACCEL_MEMORY_DEVICE, &b))) {
        memset(host, 0x5a, n);
        CHECK_OK(accel_buffer_write(b, 0, host, n));
        memset(host, 0, n);
        setenv("MOCK_CUDA_SYNC_FAILS", "1", 1);
        r = accel_buffer_read(b, 0, host, n);
        unsetenv("MOCK_CUDA_SYNC_FAILS");
        last = host[n - 1];   /* at once: a copy still under way has not got there yet */
        memcpy(seen, host, n);
        nanosleep(&pause, NULL);
        CHECK_EQ_INT(host[n - 1], last);
        CHECK(memcmp(seen, host, n) == 0);   /* nothing landed after the return */
        CHECK_RESULT(r, ACCEL_ERROR_BACKEND);
        CHECK(test_log_contains("cuStreamSynchronize"));
    }
    free(host);
    free(seen);
    accel_device_destroy(dev);
#else
    SKIP("no dynamic loading (or setenv) in this build");
#endif
}
/* With points in flight and no GPU wait that needs the host to apply a point, a queue's worker is only
   the backstop, and its pauses double from ACCEL_CUDA_POLL_MAX_NS up to 8 times that
   (accel_i_cu_backstop). A chain over two queues (each step's GPU wait watches the other queue's
   progress word) is kept in flight for 200 ms, the host waiting every 32 steps for the step 16 back
   (so the streams never fill); the two workers sleep at most 500 times then (2.5 a millisecond, where a
   loaded machine makes it take longer): about 200 with the backoff, over 1,000 with a pause of 250 us
   throughout (the threads' sleeps from /proc, less the mock's
   stream threads: its "GPU"). On the mock only: a GPU driver's own threads sleep too. */
TEST(workers_back_off_while_they_are_only_the_backstop) {
#if TEST_CUDA_LOADER && TEST_HAVE_THREAD_SLEEPS
    accel_device* dev = test_cuda_device();
    accel_queue* q[2] = { NULL, NULL };
    accel_signal* s[2] = { NULL, NULL };
    accel_buffer* buf = NULL;
    uint64_t v = 0, t0;
    long before, after;
    if (!dev) SKIP("no CUDA device here");
    if (test_mock_calls(0) == ~0ull) {
        accel_device_destroy(dev);
        SKIP("on the mock only: a GPU driver's own threads sleep too");
    }
    for (int i = 0; i < 2; i++) {
        REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q[i]));
        REQUIRE_OK(accel_signal_create(dev, 0, &s[i]));
    }
    REQUIRE_OK(test_buffer_create(dev, 256, ACCEL_MEMORY_DEVICE, &buf));
    if ((before = test_thread_sleeps("mock-stream")) < 0) { accel_device_destroy(dev); SKIP("no /proc/self/task"); }
    t0 = test_now_ns();
    while (test_now_ns() - t0 < 200000000ull && !TEST_FAILED_SO_FAR()) {
        accel_queue* x = q[v & 1u];
        accel_queue_wait(x, s[(v + 1u) & 1u], v);
        accel_queue_fill(x, buf, 128u * (v & 1u), 128, (uint32_t)v);
        accel_queue_signal(x, s[v & 1u], v + 1u);
        CHECK_OK(accel_queue_submit(x));
        if (++v % 32u == 0) CHECK_OK(accel_signal_wait(s[(v - 16u) & 1u], v - 16u, ACCEL_WAIT_FOREVER));
    }
    after = test_thread_sleeps("mock-stream");
    t0 = (test_now_ns() - t0) / 1000000u;   /* ms: a loaded machine stretches the last host wait */
    fprintf(stderr, "    %llu steps in %llu ms; the workers slept %ld times\n", (unsigned long long)v,
            (unsigned long long)t0, after - before);
    CHECK((uint64_t)(after - before) <= 500u * t0 / 200u);
    CHECK_OK(accel_signal_wait(s[(v - 1u) & 1u], v, ACCEL_WAIT_FOREVER));
    CHECK_EQ_U64(accel_signal_value(s[(v - 1u) & 1u]), v);
    accel_device_destroy(dev);
#else
    SKIP("no CUDA backend in this build");
#endif
}
#if !defined(ACCEL_I_CU_NO_LOADER)
/* The scene of the tests below, where c's work must land while no thread applies p's points (p's reap
   lock held: test_reap_hold): queues p and c, signals a and b, a DEVICE buffer `work` and a HOST buffer
   `out` (seen: its words, 7 once c's fill landed). */
typedef struct test_hop {
    accel_queue *p, *c;
    accel_signal *a, *b;
    accel_buffer *work, *out;
    volatile uint32_t* seen;
} test_hop;
static bool test_hop_make(accel_device* dev, test_hop* h) {
    memset(h, 0, sizeof *h);
    if (!CHECK_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &h->p)) ||
        !CHECK_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &h->c)) ||
        !CHECK_OK(accel_signal_create(dev, 0, &h->a)) || !CHECK_OK(accel_signal_create(dev, 0, &h->b)) ||
        !CHECK_OK(test_buffer_create(dev, 256, ACCEL_MEMORY_DEVICE, &h->work)) ||
        !CHECK_OK(test_buffer_create(dev, 256, ACCEL_MEMORY_HOST, &h->out)) ||
        !CHECK((h->seen = (volatile uint32_t*)accel_buffer_map(h->out)) != NULL))
        return false;
    h->seen[0] = 0;
    return true;
}
/* c's fill lands while p's points are not applied (a's host word reads 0; readable: a poll reads a's
   value from what the GPU reached), then everything finishes once they may apply (a reaches a_value). */
static void test_hop_lands(test_hop* h, bool readable, uint64_t a_value) {
    CHECK(test_cuda_lands(h->seen, 7u));
    test_cuda_reached_unapplied(h->a, readable);
    test_reap_hold(h->p, false);
    CHECK_OK(accel_signal_wait(h->b, 1, 10000000000ull));
    CHECK_OK(accel_signal_wait(h->a, a_value, 10000000000ull));
    CHECK_EQ_U64(test_seen(h->seen, 255 / 4), 7u);
}
#endif
/* A hop of a pipeline behind a host gate runs GPU to GPU: p waits for a gate the host sets, then signals
   a; c, submitted while p still waits (so c's wait watches a's mirror word, not p's progress), fills a
   HOST buffer. With p's points reaped by no one (its reap lock held here), c's fill must still land
   once the gate is set: the GPU writes a's mirror at p's point. Before, only the host's raise of the
   mirror (when it reaped p's point) released c. */
TEST(gated_hop_is_released_on_the_gpu) {
#if !defined(ACCEL_I_CU_NO_LOADER)
    accel_device* dev = test_cuda_device();
    accel_signal* gate;
    test_hop h;
    if (!dev) SKIP("no CUDA device here");
    if (!accel_i_cu_dev(dev)->memops) { accel_device_destroy(dev); SKIP("no stream memory operations: such waits are gated on the host"); }
    REQUIRE_OK(accel_signal_create(dev, 0, &gate));
    REQUIRE(test_hop_make(dev, &h));
    accel_queue_wait(h.p, gate, 1);
    accel_queue_fill(h.p, h.work, 0, 256, 1);
    accel_queue_signal(h.p, h.a, 1);
    CHECK_OK(accel_queue_submit(h.p));
    accel_queue_wait(h.c, h.a, 1);
    accel_queue_fill(h.c, h.out, 0, 256, 7);
    accel_queue_signal(h.c, h.b, 1);
    CHECK_OK(accel_queue_submit(h.c));
    test_reap_hold(h.p, true);   /* from here no thread applies p's points */
    CHECK_OK(accel_signal_set(gate, 1));
    test_hop_lands(&h, true, 1);   /* p's point was not applied: c went on the GPU's word */
    accel_device_destroy(dev);
#else
    SKIP("no dynamic loading in this build");
#endif
}

/* A host wait sees a value as soon as the GPU wrote it to the signal's mirror (a point behind a host gate
   writes the mirror from the GPU), not only once some thread applied the point: with no thread
   applying q's points, a 2 s wait returns at once. Before, it polled the host word only and returned
   OK at its deadline (its last look reads the mirror). */
TEST(host_wait_sees_the_mirror_the_gpu_wrote) {
#if !defined(ACCEL_I_CU_NO_LOADER)
    accel_device* dev = test_cuda_device();
    accel_signal *gate, *a;
    accel_queue* q;
    accel_buffer* work;
    uint64_t t0, took;
    if (!dev) SKIP("no CUDA device here");
    if (!accel_i_cu_dev(dev)->memops) {
        accel_device_destroy(dev);
        SKIP("no stream memory operations: such waits are gated on the host");
    }
    REQUIRE_OK(accel_signal_create(dev, 0, &gate));
    REQUIRE_OK(accel_signal_create(dev, 0, &a));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
    REQUIRE_OK(test_buffer_create(dev, 256, ACCEL_MEMORY_DEVICE, &work));
    accel_queue_wait(q, gate, 1);
    accel_queue_fill(q, work, 0, 256, 1);
    accel_queue_signal(q, a, 1);
    CHECK_OK(accel_queue_submit(q));
    test_reap_hold(q, true);   /* from here no thread applies q's points */
    CHECK_OK(accel_signal_set(gate, 1));
    t0 = test_now_ns();
    CHECK_OK(accel_signal_wait(a, 1, 2000000000ull));
    took = test_now_ns() - t0;
    CHECK(took < 1000000000ull);
    CHECK_EQ_U64(accel_signal_value(a), 1u);
    test_reap_hold(q, false);
    CHECK_OK(accel_queue_finish(q, 10000000000ull));
    accel_device_destroy(dev);
#else
    SKIP("no dynamic loading in this build");
#endif
}

/* A GPU wait enqueued before any point promised its value (the promise comes later, from another
   queue that no host gate holds): the wait watches the signal's mirror, and the point that reaches the
   value has the GPU write the mirror, so the waiter goes on GPU to GPU. With p's points applied by no
   one (its reap lock held here), c's fill must still land; before, only the host's raise of the mirror
   when it applied p's point released c (a worker's poll, a waiter's reap). */
TEST(wait_before_its_promise_is_released_on_the_gpu) {
#if !defined(ACCEL_I_CU_NO_LOADER)
    accel_device* dev = test_cuda_device();
    test_hop h;
    if (!dev) SKIP("no CUDA device here");
    if (!accel_i_cu_dev(dev)->memops) { accel_device_destroy(dev); SKIP("no stream memory operations: such waits are gated on the host"); }
    REQUIRE(test_hop_make(dev, &h));
    accel_queue_wait(h.c, h.a, 1);                 /* no point of a yet: the mirror */
    accel_queue_fill(h.c, h.out, 0, 256, 7);
    accel_queue_signal(h.c, h.b, 1);
    CHECK_OK(accel_queue_submit(h.c));
    test_reap_hold(h.p, true);   /* from here no thread applies p's points */
    accel_queue_fill(h.p, h.work, 0, 256, 1);
    accel_queue_signal(h.p, h.a, 1);
    CHECK_OK(accel_queue_submit(h.p));
    test_hop_lands(&h, true, 1);   /* p's point was not applied: c went on the GPU's write */
    CHECK_EQ_U64(atomic_load(((accel_i_cu_signal*)h.a)->mirror.host), 1u);
    accel_device_destroy(dev);
#else
    SKIP("no dynamic loading in this build");
#endif
}

/* The event-ring mode (ACCEL_CUDA_NO_MEMOPS=1) waits on the GPU too for a value a point of the device's
   queues promised (cuStreamWaitEvent on the point's event; a point of the waiting queue's own: stream
   order). p signals a at its points 1..n; with p's points applied by no one (its reap lock held here),
   c's wait for a >= w, then its fill, must still land: a wait gated on the host would wait for the
   apply. And it must wait: p's stream first stands still behind a host gate (accel_cuda_stream_wait on
   the raw stream, before any of p's work), and c's fill must not land until the gate opens, as it
   would where c's wait was dropped. w = n: the newest point (its mark); w = 1 with n = 20: a point whose
   mark left the signal's 16 (found in p's ring). Own: p itself waits for a >= n behind its point, then
   fills. Peer: c, b and out are of a second accel device on the same CUDA device (its wait finds the
   point among the first one's queues), and the first device is destroyed before c's point is applied
   (c's reap lock held till then), whose apply raises p's progress word: it must still be there. */
#if !defined(ACCEL_I_CU_NO_LOADER) && !defined(_WIN32)
static void test_ring_wait_lands(uint32_t n, uint32_t w, bool own, bool peer) {
    accel_device *dev, *dev2 = NULL;
    accel_signal* gate;
    test_hop h, h2;
    unsigned long long events;
    setenv("ACCEL_CUDA_NO_MEMOPS", "1", 1);
    dev = test_cuda_device();
    if (dev && peer) dev2 = test_cuda_device();
    unsetenv("ACCEL_CUDA_NO_MEMOPS");
    if (!dev || (peer && !dev2)) { accel_device_destroy(dev); SKIP("no CUDA device here"); }
    if (accel_i_cu_dev(dev)->memops || !accel_i_cu.StreamWaitEvent) {
        accel_device_destroy(dev);
        accel_device_destroy(dev2);
        SKIP("the driver has no cuStreamWaitEvent, or the ring mode was not taken");
    }
    REQUIRE(test_hop_make(dev, &h));
    if (peer) {   /* the waiting side on the second device, whose points wait too */
        REQUIRE(test_hop_make(dev2, &h2));
        h.c = h2.c; h.b = h2.b; h.out = h2.out; h.seen = h2.seen;
        test_reap_hold(h.c, true);
    }
    REQUIRE_OK(accel_signal_create(dev, 0, &gate));
    REQUIRE_OK(accel_cuda_stream_wait(accel_cuda_queue_stream(h.p), gate, 1));   /* p's stream stands still */
    test_reap_hold(h.p, true);   /* from here no thread applies p's points */
    for (uint32_t i = 1; i <= n; i++) {
        accel_queue_fill(h.p, h.work, 0, 256, i);
        accel_queue_signal(h.p, h.a, i);
        CHECK_OK(accel_queue_submit(h.p));
    }
    if (own) h.c = h.p;
    events = test_mock_calls(TEST_MOCK_EVENT_CALLS);
    accel_queue_wait(h.c, h.a, w);
    accel_queue_fill(h.c, h.out, 0, 256, 7);
    accel_queue_signal(h.c, h.b, 1);
    CHECK_OK(accel_queue_submit(h.c));
    /* the mock counts event calls: the point's record, and cuStreamWaitEvent unless the wait is p's own */
    if (events != ~0ull) CHECK_EQ_U64(test_mock_calls(TEST_MOCK_EVENT_CALLS) - events, (own ? 1u : 2u));
    for (uint64_t t0 = test_now_ns(); test_now_ns() - t0 < 50000000u;)   /* 50 ms: c waits for p */
        if (!CHECK_EQ_U64(test_seen(h.seen, 0), 0u)) break;
    CHECK_EQ_U64(accel_signal_value(h.a), 0u);
    CHECK_OK(accel_signal_set(gate, 1));
    if (peer) {   /* c lands with p's points unapplied; then the first device goes before c's applies */
        CHECK(test_cuda_lands(h.seen, 7u));
        test_reap_hold(h.p, false);
        accel_device_destroy(dev);
        dev = NULL;
        test_reap_hold(h.c, false);
        CHECK_OK(accel_signal_wait(h.b, 1, 10000000000ull));
        CHECK_EQ_U64(test_seen(h.seen, 255 / 4), 7u);
    } else {
        test_hop_lands(&h, false, n);   /* p's points were not applied: c waited on the GPU */
    }
    accel_device_destroy(dev);
    accel_device_destroy(dev2);
}
#else
#  define test_ring_wait_lands(n, w, own, peer) SKIP("no dynamic loading (or setenv) in this build")
#endif
TEST(ring_mode_waits_on_the_gpu_for_another_queue) { test_ring_wait_lands(3, 3, false, false); }
TEST(ring_mode_waits_on_the_gpu_for_a_point_past_the_marks) { test_ring_wait_lands(20, 1, false, false); }
TEST(ring_mode_wait_on_the_queue_own_point_is_stream_order) { test_ring_wait_lands(3, 3, true, false); }
TEST(ring_mode_waits_on_the_gpu_for_another_device_on_its_gpu) { test_ring_wait_lands(3, 3, false, true); }

/* The GPU's write of a mirror stores a value: when the host raised the signal past it meanwhile (a set
   above the point's value, or a failure), the write lowers the mirror, and the host must raise it again
   when it applies the point, or a later GPU wait for a value the host already gave would wait for ever. */
TEST(gpu_mirror_write_never_leaves_a_host_raise_lowered) {
#if !defined(ACCEL_I_CU_NO_LOADER)
    for (int fail = 0; fail < 2; fail++) {
        accel_device* dev = test_cuda_device();
        accel_queue* p;
        accel_signal *gate, *a;
        accel_buffer* work;
        if (!dev) SKIP("no CUDA device here");
        if (!accel_i_cu_dev(dev)->memops) { accel_device_destroy(dev); SKIP("no stream memory operations: no mirror is written by the GPU"); }
        REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &p));
        REQUIRE_OK(accel_signal_create(dev, 0, &gate));
        REQUIRE_OK(accel_signal_create(dev, 0, &a));
        REQUIRE_OK(test_buffer_create(dev, 256, ACCEL_MEMORY_DEVICE, &work));
        accel_queue_wait(p, gate, 1);
        accel_queue_fill(p, work, 0, 256, 1);
        accel_queue_signal(p, a, 1);            /* behind the gate: the GPU writes a's mirror = 1 */
        CHECK_OK(accel_queue_submit(p));
        if (fail) CHECK_OK(accel_signal_fail(a, ACCEL_ERROR_BACKEND));
        else CHECK_OK(accel_signal_set(a, 5));
        CHECK_OK(accel_signal_set(gate, 1));
        CHECK_OK(accel_queue_finish(p, 10000000000ull));
        CHECK_EQ_U64(atomic_load(((accel_i_cu_signal*)a)->mirror.host), fail ? ACCEL_SIGNAL_MAX : 5u);
        accel_device_destroy(dev);
    }
#else
    SKIP("no dynamic loading in this build");
#endif
}

/* A queue lists its GPU waits on host-raised values (mirror words) until it knows them released, and
   holds back work once 256 operations wait behind the oldest (its "stream full"). A signal destroyed
   after such a wait gives its mirror word to the next signal, which starts lower: the listed wait must
   still count as released (the queue passed it), or the queue holds back its work for ever (seen in
   bench/cuda.c: figure 13's signal took figure 12's gate's word). */
TEST(gate_on_a_reused_mirror_word_is_released) {
#if !defined(ACCEL_I_CU_NO_LOADER)
    accel_device* dev = test_cuda_device();
    accel_queue* q;
    accel_signal *gate, *a, *s2;
    accel_buffer* work;
    const accel_i_a64* word;
    if (!dev) SKIP("no CUDA device here");
    if (!accel_i_cu_dev(dev)->memops) { accel_device_destroy(dev); SKIP("no stream memory operations: no GPU waits"); }
    REQUIRE_OK(accel_signal_create(dev, 0, &gate));   /* first: the lowest free mirror word */
    REQUIRE_OK(accel_signal_create(dev, 0, &a));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
    REQUIRE_OK(test_buffer_create(dev, 256, ACCEL_MEMORY_DEVICE, &work));
    word = ((accel_i_cu_signal*)gate)->mirror.host;
    accel_queue_wait(q, gate, 5);                       /* a GPU wait on the mirror, listed */
    accel_queue_fill(q, work, 0, 256, 1);
    accel_queue_signal(q, a, 1);
    CHECK_OK(accel_queue_submit(q));
    CHECK_OK(accel_signal_set(gate, 5));
    CHECK_OK(accel_queue_finish(q, 10000000000ull));
    accel_signal_destroy(gate);
    REQUIRE_OK(accel_signal_create(dev, 0, &s2));
    REQUIRE(((accel_i_cu_signal*)s2)->mirror.host == word);   /* the word came back, now at 0 */
    test_reap_hold(q, true);                                  /* the queue never looks idle meanwhile */
    for (uint64_t i = 2; i <= 200; i++) {                     /* 600 operations behind the old wait */
        accel_queue_fill(q, work, 0, 256, (uint32_t)i);
        accel_queue_fill(q, work, 0, 256, (uint32_t)i + 1);
        accel_queue_signal(q, a, i);
        CHECK_OK(accel_queue_submit(q));
    }
    test_reap_hold(q, false);
    CHECK_OK(accel_signal_wait(a, 200, 10000000000ull));
    CHECK_EQ_U64(accel_signal_value(s2), 0u);
    if (accel_signal_value(a) != 200) accel_signal_set(s2, 5);   /* unstick it, so that teardown returns */
    accel_device_destroy(dev);
#else
    SKIP("no dynamic loading in this build");
#endif
}

/* A host wait for work that takes long sleeps between its polls: the yielding poll that keeps a short
   wait quick (a pipeline round of ~200 us) lasts only the wait's first ACCEL_I_CU_YIELD_NS; past it a
   thread waiting on a GPU wait that the host releases 300 ms later spends a small part of that on the
   CPU, whether it waits for one signal or for two. */
#if !defined(ACCEL_I_CU_NO_LOADER) && defined(__linux__) && defined(CLOCK_THREAD_CPUTIME_ID)
typedef struct test_late_set { accel_signal* s; uint64_t value; uint64_t after_ns; } test_late_set;
static void test_late_set_main(void* p) {
    test_late_set* t = (test_late_set*)p;
    uint64_t until = test_now_ns() + t->after_ns;
    while (test_now_ns() < until) {
        struct timespec ts = { 0, 1000000 };
        nanosleep(&ts, NULL);
    }
    accel_signal_set(t->s, t->value);
}
#endif
TEST(long_wait_sleeps_between_polls) {
#if !defined(ACCEL_I_CU_NO_LOADER) && defined(__linux__) && defined(CLOCK_THREAD_CPUTIME_ID)
    accel_device* dev = test_cuda_device();
    accel_queue* q;
    accel_signal *gate, *done[2];
    accel_buffer* work;
    if (!dev) SKIP("no CUDA device here");
    if (!accel_i_cu_dev(dev)->memops) {
        accel_device_destroy(dev);
        SKIP("no stream memory operations: no GPU waits");
    }
    REQUIRE_OK(accel_signal_create(dev, 0, &gate));
    REQUIRE_OK(accel_signal_create(dev, 0, &done[0]));
    REQUIRE_OK(accel_signal_create(dev, 0, &done[1]));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
    REQUIRE_OK(test_buffer_create(dev, 256, ACCEL_MEMORY_DEVICE, &work));
    for (uint64_t round = 1; round <= 2; round++) {   /* one signal, then two */
        test_late_set late = { gate, round, 300000000u };
        const uint64_t want[2] = { round, round };
        test_thread t;
        uint64_t wall, cpu;
        accel_queue_wait(q, gate, round);              /* a GPU wait on the mirror: a point in flight */
        accel_queue_fill(q, work, 0, 256, (uint32_t)round);
        accel_queue_signal(q, done[0], round);
        accel_queue_signal(q, done[1], round);
        REQUIRE_OK(accel_queue_submit(q));
        wall = test_now_ns();   /* before the setter's start: it sets the gate 300 ms after it began */
        REQUIRE(test_thread_start(&t, test_late_set_main, &late));
        cpu = test_cpu_ns(CLOCK_THREAD_CPUTIME_ID);
        if (round == 1) CHECK_OK(accel_signal_wait(done[0], round, 10000000000ull));
        else CHECK_OK(accel_signal_wait_many(done, want, 2, true, 10000000000ull, NULL));
        cpu = test_cpu_ns(CLOCK_THREAD_CPUTIME_ID) - cpu;
        wall = test_now_ns() - wall;
        test_thread_join(&t);
        CHECK(wall >= 250000000u);
        if (!CHECK(cpu * 4u < wall))                    /* under a quarter of the time waited */
            fprintf(stderr, "  round %llu: %llu ms on the CPU of %llu ms waited\n", (unsigned long long)round,
                    (unsigned long long)(cpu / 1000000u), (unsigned long long)(wall / 1000000u));
    }
    accel_device_destroy(dev);
#else
    SKIP("no dynamic loading or no thread CPU clock in this build");
#endif
}

/* Every pinned word (queues' progress words, signals' mirrors) has a 64-byte line of its own, on the
   host and on the device: a stream writing one word never moves the line of another (tests/mock_cuda.c's
   streams, CPU threads, ran a two-queue pipeline ~10% slower with the words packed 8 to a line). */
TEST(pinned_words_have_a_line_each) {
#if !defined(ACCEL_I_CU_NO_LOADER)
    enum { NQ = 3, NS = 5 };
    accel_device* dev = test_cuda_device();
    accel_queue* q[NQ] = { NULL };
    accel_signal* s[NS] = { NULL };
    const accel_i_cu_word* w[NQ + NS];
    if (!dev) SKIP("no CUDA device here");
    for (int i = 0; i < NQ; i++) REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q[i]));
    for (int i = 0; i < NS; i++) REQUIRE_OK(accel_signal_create(dev, (uint64_t)i, &s[i]));
    for (int i = 0; i < NQ; i++) w[i] = &((accel_i_cu_queue*)q[i])->progress;
    for (int i = 0; i < NS; i++) w[NQ + i] = &((accel_i_cu_signal*)s[i])->mirror;
    for (int i = 0; i < NQ + NS; i++) {
        CHECK_EQ_U64((uintptr_t)(const void*)w[i]->host % 64u, 0u);
        CHECK_EQ_U64(w[i]->dptr % 64u, 0u);
        for (int j = 0; j < i; j++) {
            uintptr_t a = (uintptr_t)(const void*)w[i]->host, b = (uintptr_t)(const void*)w[j]->host;
            CHECK((a > b ? a - b : b - a) >= 64u);
            CHECK((w[i]->dptr > w[j]->dptr ? w[i]->dptr - w[j]->dptr : w[j]->dptr - w[i]->dptr) >= 64u);
        }
    }
    for (int i = 0; i < NS; i++) CHECK_EQ_U64(atomic_load(w[NQ + i]->host), (uint64_t)i);   /* initial */
    for (int i = 0; i < NS; i++) accel_signal_destroy(s[i]);
    for (int i = 0; i < NQ; i++) accel_queue_destroy(q[i]);
    accel_device_destroy(dev);
#else
    SKIP("no dynamic loading in this build");
#endif
}

/* ==== foreign streams: accel_cuda_stream_wait / _signal on streams accel does not own ==== */
#if TEST_CUDA_LOADER
/* The driver calls a framework would make on its own stream, looked up like any library does. */
typedef struct test_raw_stream {
    int (*CtxSetCurrent)(void* ctx);
    int (*StreamCreate)(void** stream, unsigned flags);
    int (*StreamDestroy)(void* stream);
    int (*StreamSynchronize)(void* stream);
    int (*MemsetD32Async)(uint64_t dptr, unsigned value, size_t n, void* stream);
} test_raw_stream;
static bool test_raw_sym(int (*get)(const char*, void**, int, unsigned long long, int*), const char* name,
                         int version, void* fn_ptr) {
    void* sym = NULL;
    int status = 0;
    if (get(name, &sym, version, 0, &status) != 0 || !sym) return false;
    memcpy(fn_ptr, &sym, sizeof sym);
    return true;
}
static bool test_raw_stream_open(test_raw_stream* c) {
    const char* path = getenv("ACCEL_CUDA_LIBRARY");
    void* lib = dlopen(path && path[0] ? path : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    void* sym = lib ? dlsym(lib, "cuGetProcAddress_v2") : NULL;
    int (*get)(const char*, void**, int, unsigned long long, int*);
    memset(c, 0, sizeof *c);
    if (!sym) return false;
    memcpy(&get, &sym, sizeof sym);
    return test_raw_sym(get, "cuCtxSetCurrent", 4000, &c->CtxSetCurrent) &&
           test_raw_sym(get, "cuStreamCreate", 2000, &c->StreamCreate) &&
           test_raw_sym(get, "cuStreamDestroy", 4000, &c->StreamDestroy) &&
           test_raw_sym(get, "cuStreamSynchronize", 2000, &c->StreamSynchronize) &&
           test_raw_sym(get, "cuMemsetD32Async", 3020, &c->MemsetD32Async);
}
/* A CUDA device in one signal-point mode (ring: the event ring, as ACCEL_CUDA_NO_MEMOPS=1 asks) and a
   stream of the caller's own on it; NULL when there is no driver. */
static accel_device* test_foreign_setup(test_raw_stream* c, bool ring, void** stream) {
    accel_device* dev;
    *stream = NULL;
    if (!test_raw_stream_open(c)) return NULL;
    if (ring) setenv("ACCEL_CUDA_NO_MEMOPS", "1", 1);
    dev = test_cuda_device();
    if (ring) unsetenv("ACCEL_CUDA_NO_MEMOPS");
    if (!dev) return NULL;
    if (c->CtxSetCurrent(accel_cuda_device_context(dev)) != 0 || c->StreamCreate(stream, 1) != 0) {
        accel_device_destroy(dev);
        return NULL;
    }
    return dev;
}
static void test_foreign_teardown(test_raw_stream* c, accel_device* dev, void* stream) {
    CHECK_EQ_INT(c->StreamSynchronize(stream), 0);
    CHECK_EQ_INT(c->StreamDestroy(stream), 0);
    accel_device_destroy(dev);
}
static void test_spin_ms(uint32_t ms) {
    for (uint64_t t0 = test_now_ns(); test_now_ns() - t0 < ms * 1000000ull;) accel_i_yield();
}
/* A foreign stream waits for a value nothing has promised yet; its fill must not land before the host
   sets the signal, and must land after. A buffer destroyed meanwhile must not make the host wait for
   the stream (a release that waits for the whole device would wait for ever: the wait holds it back).
   Also: the argument errors, and a reached value (nothing to wait for). */
static void test_foreign_wait_host_set(bool ring) {
    test_raw_stream c;
    void* f;
    accel_device* dev = test_foreign_setup(&c, ring, &f);
    accel_device* cpu = NULL;
    accel_signal *s, *cs, *reached;
    accel_buffer *out, *spare;
    volatile uint32_t* seen;
    if (!dev) SKIP("no CUDA device (or no cuGetProcAddress_v2) here");
    REQUIRE_OK(accel_signal_create(dev, 0, &s));
    REQUIRE_OK(accel_signal_create(dev, 3, &reached));
    REQUIRE_OK(test_buffer_create(dev, 256, ACCEL_MEMORY_HOST, &out));
    REQUIRE_OK(test_buffer_create(dev, 256, ACCEL_MEMORY_DEVICE, &spare));
    REQUIRE_OK(accel_device_create(&(accel_device_desc){ .logger = test_logger() }, &cpu));
    REQUIRE_OK(accel_signal_create(cpu, 0, &cs));
    REQUIRE((seen = (volatile uint32_t*)accel_buffer_map(out)) != NULL);
    seen[0] = 0;
    test_log_reset();
    CHECK_RESULT(accel_cuda_stream_wait(NULL, s, 1), ACCEL_ERROR_INVALID_ARGUMENT);
    CHECK(test_log_contains("accel_cuda_stream_wait: stream is NULL"));
    CHECK_RESULT(accel_cuda_stream_wait(f, NULL, 1), ACCEL_ERROR_INVALID_ARGUMENT);
    CHECK_RESULT(accel_cuda_stream_signal(f, cs, 1), ACCEL_ERROR_INVALID_ARGUMENT);
    CHECK(test_log_contains("is not a CUDA signal"));
    CHECK_RESULT(accel_cuda_stream_wait(f, cs, 1), ACCEL_ERROR_INVALID_ARGUMENT);
    CHECK_RESULT(accel_cuda_stream_signal(f, s, ACCEL_SIGNAL_MAX + 1), ACCEL_ERROR_INVALID_ARGUMENT);
    CHECK(test_log_contains("above ACCEL_SIGNAL_MAX"));
    CHECK_OK(accel_cuda_stream_wait(f, reached, 2));    /* already there */
    CHECK_OK(accel_cuda_stream_signal(f, reached, 1));  /* lower: nothing changes */
    CHECK_OK(accel_cuda_stream_wait(f, s, 1));
    CHECK_EQ_INT(c.MemsetD32Async(accel_cuda_buffer_pointer(out), 7u, 64, f), 0);
    accel_buffer_destroy(spare);   /* its cuMemFree waits for an idle device: held back, not here */
    test_spin_ms(20);
    CHECK_EQ_U64(test_seen(seen, 0), 0u);     /* the stream still waits */
    CHECK_OK(accel_signal_set(s, 1));
    CHECK_EQ_INT(c.StreamSynchronize(f), 0);
    CHECK_EQ_U64(test_seen(seen, 0), 7u);
    CHECK_EQ_U64(test_seen(seen, 63), 7u);
    CHECK_EQ_U64(accel_signal_value(reached), 3u);
    accel_device_destroy(cpu);
    test_foreign_teardown(&c, dev, f);
}
/* A foreign stream's work, then a raise of s, which an accel queue waits for (on the GPU where it can):
   the queue must see the stream's fill (release/acquire through s), and host waiters must wake. */
static void test_foreign_signal_releases_queue(bool ring) {
    test_raw_stream c;
    void* f;
    accel_device* dev = test_foreign_setup(&c, ring, &f);
    accel_queue* q;
    accel_signal *s, *done;
    accel_buffer *work, *out;
    uint32_t got[64];
    if (!dev) SKIP("no CUDA device (or no cuGetProcAddress_v2) here");
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
    REQUIRE_OK(accel_signal_create(dev, 0, &s));
    REQUIRE_OK(accel_signal_create(dev, 0, &done));
    REQUIRE_OK(test_buffer_create(dev, 256, ACCEL_MEMORY_DEVICE, &work));
    REQUIRE_OK(test_buffer_create(dev, 256, ACCEL_MEMORY_DEVICE, &out));
    accel_queue_wait(q, s, 2);                 /* nothing promised 2 yet: the GPU watches the mirror */
    accel_queue_copy(q, out, 0, work, 0, 256);
    accel_queue_signal(q, done, 1);
    CHECK_OK(accel_queue_submit(q));
    test_spin_ms(5);
    CHECK_EQ_INT(c.MemsetD32Async(accel_cuda_buffer_pointer(work), 9u, 64, f), 0);
    CHECK_OK(accel_cuda_stream_signal(f, s, 2));
    CHECK_OK(accel_signal_wait(s, 2, 10000000000ull));
    CHECK_OK(accel_signal_wait(done, 1, 10000000000ull));
    CHECK_OK(accel_buffer_read(out, 0, got, sizeof got));
    CHECK_EQ_U64(got[0], 9u);
    CHECK_EQ_U64(got[63], 9u);
    CHECK_EQ_U64(accel_signal_value(s), 2u);
    CHECK_OK(accel_cuda_stream_signal(f, s, 1));   /* below: nothing changes */
    {   /* destroyed before the stream gets there: the host function keeps it alive (ASan: no use after free) */
        accel_signal* gone;
        REQUIRE_OK(accel_signal_create(dev, 0, &gone));
        CHECK_OK(accel_cuda_stream_wait(f, s, 3));      /* holds the stream until the set below */
        CHECK_OK(accel_cuda_stream_signal(f, gone, 1));
        accel_signal_destroy(gone);
        CHECK_OK(accel_signal_set(s, 3));
    }
    CHECK_EQ_INT(c.StreamSynchronize(f), 0);
    CHECK_EQ_U64(accel_signal_value(s), 3u);
    test_foreign_teardown(&c, dev, f);
}
/* A failure releases a foreign stream that waits on the signal (DESIGN 6.1: a failed signal never
   leaves a device waiting for ever); waits and raises on a failed signal enqueue nothing; so does a
   destroy of the signal. */
static void test_foreign_failure_releases_wait(bool ring) {
    test_raw_stream c;
    void* f;
    accel_device* dev = test_foreign_setup(&c, ring, &f);
    accel_signal* s;
    accel_buffer* out;
    volatile uint32_t* seen;
    if (!dev) SKIP("no CUDA device (or no cuGetProcAddress_v2) here");
    REQUIRE_OK(accel_signal_create(dev, 0, &s));
    REQUIRE_OK(test_buffer_create(dev, 256, ACCEL_MEMORY_HOST, &out));
    REQUIRE((seen = (volatile uint32_t*)accel_buffer_map(out)) != NULL);
    seen[0] = 0;
    CHECK_OK(accel_cuda_stream_wait(f, s, 5));
    CHECK_EQ_INT(c.MemsetD32Async(accel_cuda_buffer_pointer(out), 4u, 64, f), 0);
    test_spin_ms(10);
    CHECK_EQ_U64(test_seen(seen, 0), 0u);
    CHECK_OK(accel_signal_fail(s, ACCEL_ERROR_BACKEND));
    CHECK_EQ_INT(c.StreamSynchronize(f), 0);   /* released: it does not hang */
    CHECK_EQ_U64(test_seen(seen, 0), 4u);
    CHECK_RESULT(accel_cuda_stream_wait(f, s, 6), ACCEL_ERROR_SIGNAL_FAILED);
    CHECK_RESULT(accel_cuda_stream_signal(f, s, 6), ACCEL_ERROR_SIGNAL_FAILED);
    CHECK_RESULT(accel_signal_wait(s, 1, 0), ACCEL_ERROR_SIGNAL_FAILED);
    {   /* destroying a signal releases a stream that waits on it (the ring mode's host function too) */
        accel_signal* gone;
        uint64_t t0;
        REQUIRE_OK(accel_signal_create(dev, 0, &gone));
        seen[0] = 0;
        CHECK_OK(accel_cuda_stream_wait(f, gone, 5));
        CHECK_EQ_INT(c.MemsetD32Async(accel_cuda_buffer_pointer(out), 6u, 64, f), 0);
        test_spin_ms(10);
        CHECK_EQ_U64(test_seen(seen, 0), 0u);
        accel_signal_destroy(gone);
        for (t0 = test_now_ns(); test_seen(seen, 0) == 0 && test_now_ns() - t0 < 3000000000ull;) accel_i_yield();
        CHECK_EQ_U64(test_seen(seen, 0), 6u);
    }
    test_foreign_teardown(&c, dev, f);
}
/* A foreign stream waits for a value an accel queue's signal point promised (GPU to GPU with stream
   memory operations: the queue's progress word), and raises another signal that a second accel queue
   waits for: the chain of the examples/native.c foreign-stream part. */
static void test_foreign_between_queues(bool ring) {
    test_raw_stream c;
    void* f;
    accel_device* dev = test_foreign_setup(&c, ring, &f);
    accel_queue *p, *q;
    accel_signal *a, *b, *gate, *done;
    accel_buffer *work, *out;
    uint32_t got[64];
    if (!dev) SKIP("no CUDA device (or no cuGetProcAddress_v2) here");
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &p));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
    REQUIRE_OK(accel_signal_create(dev, 0, &a));
    REQUIRE_OK(accel_signal_create(dev, 0, &b));
    REQUIRE_OK(accel_signal_create(dev, 0, &gate));
    REQUIRE_OK(accel_signal_create(dev, 0, &done));
    REQUIRE_OK(test_buffer_create(dev, 256, ACCEL_MEMORY_DEVICE, &work));
    REQUIRE_OK(test_buffer_create(dev, 256, ACCEL_MEMORY_DEVICE, &out));
    accel_queue_wait(p, gate, 1);
    accel_queue_fill(p, work, 0, 256, 3);
    accel_queue_signal(p, a, 1);
    CHECK_OK(accel_queue_submit(p));
    CHECK_OK(accel_cuda_stream_wait(f, a, 1));
    CHECK_EQ_INT(c.MemsetD32Async(accel_cuda_buffer_pointer(work) + 128, 8u, 32, f), 0);
    CHECK_OK(accel_cuda_stream_signal(f, b, 1));
    accel_queue_wait(q, b, 1);
    accel_queue_copy(q, out, 0, work, 0, 256);
    accel_queue_signal(q, done, 1);
    CHECK_OK(accel_queue_submit(q));
    test_spin_ms(5);
    CHECK_EQ_U64(accel_signal_value(b), 0u);   /* the chain waits for the gate */
    CHECK_OK(accel_signal_set(gate, 1));
    CHECK_OK(accel_signal_wait(done, 1, 10000000000ull));
    CHECK_OK(accel_buffer_read(out, 0, got, sizeof got));
    CHECK_EQ_U64(got[0], 3u);
    CHECK_EQ_U64(got[31], 3u);
    CHECK_EQ_U64(got[32], 8u);
    CHECK_EQ_U64(got[63], 8u);
    test_foreign_teardown(&c, dev, f);
}
/* A foreign stream waits for a value a queue's point promised: GPU to GPU (the queue's progress word;
   in the event-ring mode the point's event), so it goes on with the queue's points applied by no one
   (its reap lock held here). */
static void test_foreign_wait_gpu_to_gpu(bool ring) {
    test_raw_stream c;
    void* f;
    accel_device* dev = test_foreign_setup(&c, ring, &f);
    accel_queue* q;
    accel_signal* a;
    accel_buffer *work, *out;
    volatile uint32_t* seen;
    if (!dev) SKIP("no CUDA device (or no cuGetProcAddress_v2) here");
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
    REQUIRE_OK(accel_signal_create(dev, 0, &a));
    REQUIRE_OK(test_buffer_create(dev, 256, ACCEL_MEMORY_DEVICE, &work));
    REQUIRE_OK(test_buffer_create(dev, 256, ACCEL_MEMORY_HOST, &out));
    REQUIRE((seen = (volatile uint32_t*)accel_buffer_map(out)) != NULL);
    seen[0] = 0;
    test_reap_hold(q, true);   /* from here no thread applies q's points */
    accel_queue_fill(q, work, 0, 256, 1);
    accel_queue_signal(q, a, 1);
    CHECK_OK(accel_queue_submit(q));
    CHECK_OK(accel_cuda_stream_wait(f, a, 1));
    CHECK_EQ_INT(c.MemsetD32Async(accel_cuda_buffer_pointer(out), 6u, 64, f), 0);
    CHECK(test_cuda_lands(seen, 6u));
    test_cuda_reached_unapplied(a, !ring);   /* q's point was not applied: the stream went on its word */
    test_reap_hold(q, false);
    CHECK_OK(accel_signal_wait(a, 1, 10000000000ull));
    test_foreign_teardown(&c, dev, f);
}
/* A release that a foreign wait held back runs when the wait is retired (the set, on this thread), not
   at the next release of something else: counted on the mock (mock_cuda_live_memory; SKIP elsewhere). */
static void test_foreign_retire_runs_held_releases(bool ring) {
    test_raw_stream c;
    void* f;
    accel_device* dev = test_foreign_setup(&c, ring, &f);
    const char* path = getenv("ACCEL_CUDA_LIBRARY");
    void* lib = path && path[0] ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
    void* sym = lib ? dlsym(lib, "mock_cuda_live_memory") : NULL;
    long long (*live)(void), before;
    accel_signal* s;
    accel_buffer* b;
    if (!dev) SKIP("no CUDA device (or no cuGetProcAddress_v2) here");
    if (!sym) { test_foreign_teardown(&c, dev, f); SKIP("not the mock driver: no count of its memory"); }
    memcpy(&live, &sym, sizeof sym);
    REQUIRE_OK(accel_signal_create(dev, 0, &s));
    before = live();
    REQUIRE_OK(test_buffer_create(dev, 4096, ACCEL_MEMORY_DEVICE, &b));
    CHECK_OK(accel_cuda_stream_wait(f, s, 1));
    accel_buffer_destroy(b);              /* held back: a GPU wait is pending */
    CHECK(live() > before);
    CHECK_OK(accel_signal_set(s, 1));     /* retires the wait: the release runs now */
    CHECK_EQ_INT(c.StreamSynchronize(f), 0);
    CHECK_EQ_U64((uint64_t)live(), (uint64_t)before);
    accel_signal_destroy(s);
    test_foreign_teardown(&c, dev, f);
}
#endif
TEST(foreign_wait_retired_runs_the_releases_it_held) {
#if TEST_CUDA_LOADER
    test_foreign_retire_runs_held_releases(false);
    test_foreign_retire_runs_held_releases(true);
#else
    SKIP("no dlopen of the driver in this build");
#endif
}
TEST(foreign_stream_waits_for_a_host_set) {
#if TEST_CUDA_LOADER
    test_foreign_wait_host_set(false);
    test_foreign_wait_host_set(true);
#else
    SKIP("no dlopen of the driver in this build");
#endif
}
TEST(foreign_stream_waits_on_the_gpu_for_a_queue) {
#if TEST_CUDA_LOADER
    test_foreign_wait_gpu_to_gpu(false);
    test_foreign_wait_gpu_to_gpu(true);
#else
    SKIP("no dlopen of the driver in this build");
#endif
}
TEST(foreign_stream_signal_releases_an_accel_queue) {
#if TEST_CUDA_LOADER
    test_foreign_signal_releases_queue(false);
    test_foreign_signal_releases_queue(true);
#else
    SKIP("no dlopen of the driver in this build");
#endif
}
TEST(failed_signal_releases_a_foreign_wait) {
#if TEST_CUDA_LOADER
    test_foreign_failure_releases_wait(false);
    test_foreign_failure_releases_wait(true);
#else
    SKIP("no dlopen of the driver in this build");
#endif
}
TEST(foreign_stream_between_two_queues) {
#if TEST_CUDA_LOADER
    test_foreign_between_queues(false);
    test_foreign_between_queues(true);
#else
    SKIP("no dlopen of the driver in this build");
#endif
}

#if TEST_CUDA_LOADER
static long long test_mock_live_memory(void) { return test_mock_count("mock_cuda_live_memory"); }
/* A host waiter that reaps the point of a batch holding the last reference of a buffer destroyed while
   in use returns at its value, not once the device is idle: the buffer's cuMemFree waits for every
   stream (on a GPU, and on the mock), here for a long kernel queued after the batch. Each round: batch
   A (a quick kernel on x1, then s) on queue a, x1 destroyed; a long kernel (then `late`) on queue a or a
   queue of its own; batch C (a quick kernel on x2, then s3) on queue c, x2 destroyed. The waits for s,
   then (after a pause in which a worker may start x1's release, holding the locks a release takes) for
   s3, must each return well before `late`. `gated`: A and C wait for a host gate first, opened once all
   is submitted; those GPU waits hold the releases back until they retire, and the reap that retires
   the last one must not run them either. The memory still goes soon after, on a worker (the mock's
   count of it). In the event-ring mode (ACCEL_CUDA_NO_MEMOPS) only that is checked: there a worker may
   walk A or C (behind the gate, or behind a full stream), and a point's event create waits while
   another thread runs a release (the mock's driver lock, as a driver's release stops other threads'
   calls). Two rounds a case: a round where the worker reaps the points first passed before too. On the
   mock only: a GPU's kernels are too fast to see it. */
typedef struct test_held_scene {
    accel_queue *a, *slow, *c;
    accel_program* p;
    accel_buffer* y;
    accel_signal *s, *s3, *late, *gate;
} test_held_scene;
static bool test_held_make(accel_device* dev, test_held_scene* h, bool own_queue) {
    memset(h, 0, sizeof *h);
    if (!CHECK_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &h->a)) ||
        !CHECK_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &h->c)) ||
        (own_queue && !CHECK_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &h->slow))) ||
        !CHECK_OK(test_program_create(dev, TK_SLOW, &h->p)) ||
        !CHECK_OK(test_buffer_create(dev, 2048 * 4, ACCEL_MEMORY_DEVICE, &h->y)))
        return false;
    if (!own_queue) h->slow = h->a;
    return CHECK_OK(accel_signal_create(dev, 0, &h->s)) && CHECK_OK(accel_signal_create(dev, 0, &h->s3)) &&
           CHECK_OK(accel_signal_create(dev, 0, &h->late)) && CHECK_OK(accel_signal_create(dev, 0, &h->gate));
}
static void test_held_free(test_held_scene* h) {
    accel_queue* q[3] = { h->a, h->c, h->slow != h->a ? h->slow : NULL };
    accel_signal* sig[4] = { h->s, h->s3, h->late, h->gate };
    if (h->gate) accel_signal_set(h->gate, 1000);   /* nothing stays behind it (a failed round) */
    for (int i = 0; i < 3; i++)
        if (q[i]) CHECK_OK(accel_queue_finish(q[i], 10000000000ull));
    for (int i = 0; i < 4; i++) accel_signal_destroy(sig[i]);
    accel_buffer_destroy(h->y);
    accel_program_destroy(h->p);
    for (int i = 0; i < 3; i++) accel_queue_destroy(q[i]);
}
/* (gated: a wait for the gate to reach v,) a quick kernel on x, then s reaches v, on q; x destroyed while
   in use. */
static bool test_held_quick(test_held_scene* h, accel_queue* q, accel_buffer* x, accel_signal* s, uint64_t v,
                            bool gated) {
    uint32_t k[3] = { 2048, 20, 7 };
    if (gated) accel_queue_wait(q, h->gate, v);
    accel_queue_exec(q, h->p, &x, 1, k, 3, accel_exec_1d(2048, 32));
    accel_queue_signal(q, s, v);
    accel_buffer_destroy(x);   /* the batch holds it: its completion releases it */
    return CHECK_OK(accel_queue_submit(q));
}
/* Whether a wait that returned at `at` did so well before `late` (reached at `end`; all from t0). */
static bool test_held_early(const char* what, uint64_t r, uint64_t t0, uint64_t at, uint64_t end) {
    if (CHECK(end - at > (end - t0) / 2)) return true;
    fprintf(stderr, "    round %llu: %s after %.1f ms, the long kernel's end after %.1f ms\n",
            (unsigned long long)r, what, (double)(at - t0) / 1e6, (double)(end - t0) / 1e6);
    return false;
}
static void test_waiter_not_held_by_release(accel_device* dev, bool own_queue, bool gated) {
    const char* env = getenv("ACCEL_CUDA_NO_MEMOPS");
    bool ring = env && env[0] && strcmp(env, "0") != 0;
    test_held_scene h;
    if (test_held_make(dev, &h, own_queue)) {
        for (uint64_t r = 1; r <= 2 && !TEST_FAILED_SO_FAR(); r++) {
            uint32_t slow[3] = { 2048, 200000, 9 };   /* ~0.8 s on the mock */
            long long before = test_mock_live_memory();
            struct timespec pause = { 0, 10000000 };
            uint64_t t0, t1, t3, t2;
            accel_buffer *x1, *x2;
            if (!CHECK_OK(test_buffer_create(dev, 2048 * 4, ACCEL_MEMORY_DEVICE, &x1))) break;
            if (!CHECK_OK(test_buffer_create(dev, 2048 * 4, ACCEL_MEMORY_DEVICE, &x2))) {
                accel_buffer_destroy(x1);
                break;
            }
            t0 = test_now_ns();
            if (!test_held_quick(&h, h.a, x1, h.s, r, gated)) {
                accel_buffer_destroy(x2);
                break;
            }
            accel_queue_exec(h.slow, h.p, &h.y, 1, slow, 3, accel_exec_1d(2048, 32));
            accel_queue_signal(h.slow, h.late, r);
            CHECK_OK(accel_queue_submit(h.slow));
            if (!test_held_quick(&h, h.c, x2, h.s3, r, gated)) break;
            CHECK_OK(accel_signal_set(h.gate, r));
            CHECK_OK(accel_signal_wait(h.s, r, 10000000000ull));
            t1 = test_now_ns();
            nanosleep(&pause, NULL);   /* a worker may run x1's release meanwhile */
            CHECK_OK(accel_signal_wait(h.s3, r, 10000000000ull));
            t3 = test_now_ns();
            if (!CHECK_OK(accel_signal_wait(h.late, r, 10000000000ull))) break;
            t2 = test_now_ns();
            /* before, a waiter that reaped A's or C's point freed x1 or x2 there, or ran the releases the
               gate's waits held back where its reap retired them */
            if (!ring) {
                test_held_early("s", r, t0, t1, t2);
                test_held_early("s3", r, t0, t3, t2);
            }
            for (t1 = test_now_ns(); test_mock_live_memory() > before && test_now_ns() - t1 < 5000000000ull;) {
                struct timespec ms = { 0, 1000000 };
                nanosleep(&ms, NULL);
            }
            CHECK_EQ_U64((uint64_t)test_mock_live_memory(), (uint64_t)before);
        }
    }
    test_held_free(&h);
}
#endif
TEST(waiter_is_not_held_by_a_release_it_reaps) {
#if TEST_CUDA_LOADER
    accel_device* dev = test_cuda_device();
    if (!dev) SKIP("no CUDA device here");
    if (test_mock_live_memory() < 0) {
        accel_device_destroy(dev);
        SKIP("on the mock only: a GPU's kernels are too fast to see it");
    }
    test_waiter_not_held_by_release(dev, false, false);
    test_waiter_not_held_by_release(dev, true, false);
    test_waiter_not_held_by_release(dev, true, true);
    accel_device_destroy(dev);
#else
    SKIP("no dlopen of the driver in this build");
#endif
}

#if TEST_CUDA_LOADER
/* A queue's worker that decides to sleep for good (nothing in flight for a while) hears of a batch
   submitted while it polled: else the batch's completion waits for the next call that reaps, and so
   does every release it holds. The window is made wide: the poll runs a held release (x1's, a buffer
   destroyed while in use, whose batch a host waiter or the worker reaped), and its cuMemFree waits for
   a long kernel on a raw stream of the test's (no accel worker watches that one). Batch 2 (a quick
   kernel on x2, then s) is submitted meanwhile, x2 destroyed while in use; the test then only reads s
   (accel_signal_value, which reaps nothing), waits for the long kernel on its raw stream, and reads the
   mock's count of live memory, which must come back to where the round began within 5 s: x2's release
   needs a reap of batch 2, which only the worker makes here.
   The ring's slots get their events first (in the event-ring mode a new slot's cuEventCreate would wait
   for the release, as a driver's does). On the mock only: a GPU's kernels are too fast to see it. */
static void test_worker_hears_poll_submit(accel_device* dev, accel_queue* q, accel_program* p, accel_buffer* y,
                                          accel_signal* s, accel_cu_stream raw, uint64_t r) {
    uint32_t slow_n = 2048, slow_it = 200000, slow_seed = 9;   /* ~0.8 s on the mock */
    uint32_t mid[3] = { 2048, 2500, 3 }, quick[3] = { 2048, 20, 7 };
    accel_cu_deviceptr yp = accel_i_cu_dptr(y);
    void* params[4] = { &yp, &slow_n, &slow_it, &slow_seed };
    struct timespec pause = { 0, 50000000 }, ms = { 0, 1000000 };
    long long before = test_mock_live_memory();
    accel_buffer *x1 = NULL, *x2 = NULL;
    uint64_t t0;
    bool ok = CHECK_OK(test_buffer_create(dev, 2048 * 4, ACCEL_MEMORY_DEVICE, &x1)) &&
              CHECK_OK(test_buffer_create(dev, 2048 * 4, ACCEL_MEMORY_DEVICE, &x2));
    if (ok) {
        accel_i_cu_enter(accel_i_cu_dev(dev));
        ok = CHECK(accel_i_cu.LaunchKernel(((accel_i_cu_program*)p)->fn, 64, 1, 1, 32, 1, 1, 0, raw, params,
                                           NULL) == ACCEL_CU_SUCCESS);
    }
    if (!ok) {
        accel_buffer_destroy(x1);
        accel_buffer_destroy(x2);
        return;
    }
    accel_queue_exec(q, p, &x1, 1, mid, 3, accel_exec_1d(2048, 32));   /* ~10 ms: the worker lingers */
    accel_queue_signal(q, s, 2 * r - 1);
    accel_buffer_destroy(x1);
    CHECK_OK(accel_queue_submit(q));
    CHECK_OK(accel_signal_wait(s, 2 * r - 1, 10000000000ull));
    nanosleep(&pause, NULL);   /* a worker's poll runs x1's release now, until the long kernel ends */
    accel_queue_exec(q, p, &x2, 1, quick, 3, accel_exec_1d(2048, 32));
    accel_queue_signal(q, s, 2 * r);
    accel_buffer_destroy(x2);
    CHECK_OK(accel_queue_submit(q));
    for (t0 = test_now_ns(); accel_signal_value(s) < 2 * r && test_now_ns() - t0 < 10000000000ull;)
        nanosleep(&ms, NULL);
    CHECK_EQ_U64(accel_signal_value(s), 2 * r);
    /* the long kernel's end lets the poll's release finish: from then on only the worker frees x2 */
    CHECK(accel_i_cu.StreamSynchronize(raw) == ACCEL_CU_SUCCESS);
    for (t0 = test_now_ns(); test_mock_live_memory() > before && test_now_ns() - t0 < 5000000000ull;)
        nanosleep(&ms, NULL);
    if (!CHECK_EQ_U64((uint64_t)test_mock_live_memory(), (uint64_t)before))
        fprintf(stderr, "    round %llu: the buffers' memory was not freed 5 s after the long kernel's end\n",
                (unsigned long long)r);
}
#endif
TEST(worker_hears_of_a_submit_during_its_poll) {
#if TEST_CUDA_LOADER
    accel_device* dev = test_cuda_device();
    accel_queue* q = NULL;
    accel_program* p = NULL;
    accel_buffer* y = NULL;
    accel_signal *s = NULL, *warm = NULL;
    accel_cu_stream raw = NULL;
    if (!dev) SKIP("no CUDA device here");
    if (test_mock_live_memory() < 0) {
        accel_device_destroy(dev);
        SKIP("on the mock only: a GPU's kernels are too fast to see it");
    }
    if (CHECK_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q)) &&
        CHECK_OK(test_program_create(dev, TK_SLOW, &p)) &&
        CHECK_OK(test_buffer_create(dev, 2048 * 4, ACCEL_MEMORY_DEVICE, &y)) &&
        CHECK_OK(accel_signal_create(dev, 0, &s)) && CHECK_OK(accel_signal_create(dev, 0, &warm))) {
        accel_i_cu_enter(accel_i_cu_dev(dev));
        CHECK(accel_i_cu.StreamCreate(&raw, ACCEL_CU_STREAM_NON_BLOCKING) == ACCEL_CU_SUCCESS);
        for (uint64_t i = 1; i <= 64; i++) {   /* every slot of the ring has its events */
            accel_queue_fill(q, y, 0, 4, (uint32_t)i);
            accel_queue_signal(q, warm, i);
            CHECK_OK(accel_queue_submit(q));
        }
        CHECK_OK(accel_queue_finish(q, 10000000000ull));
        for (uint64_t r = 1; r <= 2 && raw && !TEST_FAILED_SO_FAR(); r++)
            test_worker_hears_poll_submit(dev, q, p, y, s, raw, r);
    }
    if (q) CHECK_OK(accel_queue_finish(q, 10000000000ull));
    if (raw) accel_i_cu.StreamDestroy(raw);
    accel_signal_destroy(s);
    accel_signal_destroy(warm);
    accel_buffer_destroy(y);
    accel_program_destroy(p);
    accel_queue_destroy(q);
    accel_device_destroy(dev);
#else
    SKIP("no dlopen of the driver in this build");
#endif
}

#if TEST_CUDA_LOADER
/* The mock's memory limit (mock_cuda_set_memory_limit: 0, none); false on a driver. */
static bool test_mock_memory_limit(long long bytes) {
    void* f = test_mock_fn("mock_cuda_set_memory_limit");
    void (*set)(long long);
    if (!f) return false;
    memcpy(&set, &f, sizeof f);
    set(bytes);
    return true;
}
/* The real race of test buffer_create_runs_held_releases_when_out_of_memory: x, most of the limit, used
   by a batch and destroyed while in use; the host's wait for the batch reaps it, or a worker does (a
   waiter holds x's release back for a worker's next reap); a buffer of x's size created at once must
   be made either way. Not quite at once: a worker's reap raises the signal before it completes the
   batch (which drops x's last reference), so a create right after the wait may find x not released
   yet, nor held (the header promises the memory "soon after"): OUT_OF_MEMORY is tried again for up to
   2 s. */
static void test_oom_race(accel_device* dev, accel_queue* q, accel_program* p, accel_signal* s, uint64_t v,
                          accel_memory mem, size_t size) {
    uint32_t slow[3] = { 2048, 250, 3 }, word = 1;   /* about a millisecond */
    struct timespec ms = { 0, 1000000 };
    accel_buffer *x = NULL, *y = NULL;
    accel_result r;
    if (!CHECK_OK(test_buffer_create(dev, size, mem, &x))) return;
    accel_queue_exec(q, p, &x, 1, slow, 3, accel_exec_1d(2048, 32));
    accel_queue_signal(q, s, v);
    CHECK_OK(accel_queue_submit(q));
    accel_buffer_destroy(x);
    CHECK_OK(accel_signal_wait(s, v, 10000000000ull));
    for (int i = 0; (r = test_buffer_create(dev, size, mem, &y)) == ACCEL_ERROR_OUT_OF_MEMORY; i++) {
        if (i == 2000) break;
        nanosleep(&ms, NULL);
    }
    if (CHECK_OK(r)) {
        CHECK_OK(accel_buffer_read(y, size - 4, &word, 4));   /* a new buffer reads as zeros */
        CHECK_EQ_U64(word, 0);
    }
    accel_buffer_destroy(y);
}
/* The same with the release surely held (which the race above reaches only now and then): x is
   released while this thread counts as a host waiter (accel_i_cu_waiting: its releases are held for a
   worker's next reap, see cuda: releases), with no queue whose worker could run it. The create finds
   the mock out of memory, must run the release and try again: a refusal counted, the create made, x's
   memory gone. Then, with that buffer alive, a second one is refused: OUT_OF_MEMORY and a log line. */
static void test_oom_held(accel_device* dev, accel_memory mem, size_t size) {
    const char* kind = mem == ACCEL_MEMORY_HOST ? "host" : "device";
    long long refused, live;
    accel_buffer *x = NULL, *y = NULL, *z = NULL;
    if (!CHECK_OK(test_buffer_create(dev, size, mem, &x))) return;
    live = test_mock_live_memory();
    accel_i_cu_waiting = true;
    accel_buffer_destroy(x);
    accel_i_cu_waiting = false;
    CHECK_EQ_U64((uint64_t)test_mock_live_memory(), (uint64_t)live);   /* held: x's memory is still there */
    refused = test_mock_count("mock_cuda_out_of_memory");
    if (!CHECK_OK(test_buffer_create(dev, size, mem, &y)))
        fprintf(stderr, "    %s memory: the create did not run the held release\n", kind);
    CHECK_EQ_U64((uint64_t)(test_mock_count("mock_cuda_out_of_memory") - refused), 1);
    CHECK_EQ_U64((uint64_t)test_mock_live_memory(), (uint64_t)(live - (y == NULL)));
    test_log_reset();
    CHECK_RESULT(test_buffer_create(dev, size, mem, &z), ACCEL_ERROR_OUT_OF_MEMORY);
    CHECK(z == NULL);
    CHECK(test_log_contains("accel_buffer_create: out of"));
    accel_buffer_destroy(y);
    CHECK_EQ_U64((uint64_t)test_mock_live_memory(), (uint64_t)(live - 1));
}
#endif
/* accel_cuda.h ("cuda: releases"): "a buffer create that finds the device out of memory runs such held
   releases first and tries again". On the mock with a memory limit, device and pinned host memory:
   first with the release surely held (test_oom_held), then in rounds of the real race (test_oom_race,
   whoever reaps). On the mock only: a GPU's size is its own. */
TEST(buffer_create_runs_held_releases_when_out_of_memory) {
#if TEST_CUDA_LOADER
    const size_t size = (size_t)1 << 20;
    accel_device* dev = test_cuda_device();
    accel_queue* q = NULL;
    accel_program* p = NULL;
    accel_signal* s = NULL;
    uint64_t v = 0;
    if (!dev) SKIP("no CUDA device here");
    if (test_mock_count("mock_cuda_out_of_memory") < 0 || !test_mock_memory_limit((long long)size * 3 / 2)) {
        accel_device_destroy(dev);
        SKIP("on the mock only: a GPU's memory is its own size");
    }
    test_oom_held(dev, ACCEL_MEMORY_DEVICE, size);
    test_oom_held(dev, ACCEL_MEMORY_HOST, size);
    if (CHECK_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q)) &&
        CHECK_OK(test_program_create(dev, TK_SLOW, &p)) && CHECK_OK(accel_signal_create(dev, 0, &s)))
        for (int r = 0; r < 20 && !TEST_FAILED_SO_FAR(); r++)
            test_oom_race(dev, q, p, s, ++v, r % 2 ? ACCEL_MEMORY_HOST : ACCEL_MEMORY_DEVICE, size);
    test_mock_memory_limit(0);
    accel_signal_destroy(s);
    accel_program_destroy(p);
    accel_queue_destroy(q);
    accel_device_destroy(dev);
#else
    SKIP("no dlopen of the driver in this build");
#endif
}

/* A native step's accel_cuda_stream_signal, behind a GPU wait the host never releases: it never runs
   (counted in test_native_runs). */
static atomic_int test_native_runs;
static void test_native_stream_signal(const accel_native* n, void* user) {
    atomic_fetch_add(&test_native_runs, 1);
    CHECK_OK(accel_cuda_stream_signal(n->cuda_stream, (accel_signal*)user, 1));
}
/* An out-of-bounds store: the device is lost, the pending signal fails, waits return (no hang), every
   later call says DEVICE_LOST. Runs last: a lost primary context stays broken in this process. A host
   function accel_cuda_stream_signal enqueued (from a native step) never runs on the failed context: the
   destroy drops its reference to the signal, and every driver object of the device goes (on the mock,
   which counts them: the device was never freed). */
TEST(out_of_bounds_kernel_loses_the_device) {
    accel_device* dev = test_cuda_device();
    accel_program* p;
    accel_buffer* buf;
    accel_queue *q, *q2, *q3;
    accel_signal *done, *later, *gate, *l2, *l3, *raised;
    accel_device_info info;
    uint64_t t0;
    long long live0;
    if (!dev) SKIP("no CUDA device here");
    live0 = test_mock_live();   /* the device's own objects are gone with it */
    if (live0 >= 0) {
        accel_device_destroy(dev);
        live0 = test_mock_live();
        REQUIRE((dev = test_cuda_device()) != NULL);
    }
    REQUIRE_OK(accel_program_create(dev, &(accel_program_desc){ .name = "oob", .ptx = test_oob_ptx(), .buffer_count = 1 }, &p));
    REQUIRE_OK(test_buffer_create(dev, 4096, ACCEL_MEMORY_DEVICE, &buf));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
    REQUIRE_OK(accel_signal_create(dev, 0, &done));
    REQUIRE_OK(accel_signal_create(dev, 0, &later));
    /* device-side waits pending when the device is lost (issue 12): q2 waits on the GPU for a gate the
       host never sets (the signal's mirror word), q3 for `done`, which q's point promises (q's progress
       word); both must come back failed, and nothing may hang */
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q2));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q3));
    REQUIRE_OK(accel_signal_create(dev, 0, &gate));
    REQUIRE_OK(accel_signal_create(dev, 0, &l2));
    REQUIRE_OK(accel_signal_create(dev, 0, &l3));
    REQUIRE_OK(accel_signal_create(dev, 0, &raised));
    accel_queue_wait(q2, gate, 1);
    accel_queue_native(q2, test_native_stream_signal, raised);
    accel_queue_fill(q2, buf, 0, 64, 2);
    accel_queue_signal(q2, l2, 1);
    CHECK_OK(accel_queue_submit(q2));
    accel_queue_exec(q, p, &buf, 1, NULL, 0, accel_exec_1d(1, 1));
    accel_queue_signal(q, done, 1);
    CHECK_OK(accel_queue_submit(q));
    accel_queue_wait(q3, done, 1);
    accel_queue_fill(q3, buf, 64, 64, 3);
    accel_queue_signal(q3, l3, 1);
    {   /* the kernel may already have lost the device (a driver runs it at once): then q3 is refused */
        accel_result r3 = accel_queue_submit(q3);
        CHECK(r3 == ACCEL_OK || r3 == ACCEL_ERROR_DEVICE_LOST);
    }
    t0 = test_now_ns();
    CHECK_RESULT(accel_signal_wait(done, 1, 30000000000ull), ACCEL_ERROR_SIGNAL_FAILED);
    CHECK(test_now_ns() - t0 < 30000000000ull);
    CHECK_EQ_U64(accel_signal_value(done), ACCEL_SIGNAL_MAX + 1 + (uint64_t)(-(int)ACCEL_ERROR_DEVICE_LOST));
    CHECK_RESULT(accel_signal_wait(later, 1, 30000000000ull), ACCEL_ERROR_SIGNAL_FAILED);   /* every signal of the device */
    CHECK_RESULT(accel_signal_wait(l2, 1, 30000000000ull), ACCEL_ERROR_SIGNAL_FAILED);
    CHECK_RESULT(accel_signal_wait(l3, 1, 30000000000ull), ACCEL_ERROR_SIGNAL_FAILED);
    CHECK_RESULT(accel_queue_finish(q2, 30000000000ull), ACCEL_ERROR_DEVICE_LOST);
    CHECK_RESULT(accel_queue_finish(q3, 30000000000ull), ACCEL_ERROR_DEVICE_LOST);
    CHECK(test_log_contains("device lost"));
    CHECK_RESULT(accel_device_info_get(dev, &info), ACCEL_ERROR_DEVICE_LOST);
    {
        accel_buffer* more = NULL;
        CHECK_RESULT(test_buffer_create(dev, 64, ACCEL_MEMORY_DEVICE, &more), ACCEL_ERROR_DEVICE_LOST);
        CHECK(more == NULL);
    }
    accel_queue_fill(q, buf, 0, 64, 1);
    CHECK_RESULT(accel_queue_submit(q), ACCEL_ERROR_DEVICE_LOST);
    CHECK_RESULT(accel_queue_finish(q, 30000000000ull), ACCEL_ERROR_DEVICE_LOST);
    CHECK_RESULT(accel_signal_wait(raised, 1, 30000000000ull), ACCEL_ERROR_SIGNAL_FAILED);
    /* a lost device drops everything not enqueued: its loss released the gate (every signal fails
       first), and the step ran on the worker before the device read lost */
    CHECK_EQ_INT(atomic_load(&test_native_runs), 0);
    accel_device_destroy(dev);   /* must not hang */
    if (live0 >= 0) CHECK_EQ_U64((uint64_t)test_mock_live(), (uint64_t)live0);
}

int main(int argc, char** argv) {
    test_begin(argc, argv);
    /* these tests are about the CUDA backend's unavailable paths: they run whatever the backend under
       test is (they pick their backends themselves) */
    test_g.all_skip = 0;
    RUN(backend_name_and_table);
    RUN(library_missing_is_unavailable);
    RUN(stub_through_override_is_reported_as_stub);
    RUN(create_any_falls_back_to_cpu);
    RUN(nvrtc_missing_is_unavailable);
    RUN(nvrtc_compiles_every_test_kernel);
    RUN(nvrtc_compile_error_is_reported);
    RUN(stub_found_by_search_is_refused);
    RUN(long_library_path_is_kept_whole);   /* loads the driver, which stays: after the unavailable paths */
    RUN(ptx_jit_error_goes_to_the_log);
    RUN(cubin_from_the_desc_runs);
    RUN(device_without_its_limits_is_not_created);
    RUN(failed_read_is_done_with_the_callers_memory);
    RUN(nap_follows_the_fastest_pace_seen);
    RUN(workers_back_off_while_they_are_only_the_backstop);
    RUN(gated_hop_is_released_on_the_gpu);
    RUN(host_wait_sees_the_mirror_the_gpu_wrote);
    RUN(wait_before_its_promise_is_released_on_the_gpu);
    RUN(ring_mode_waits_on_the_gpu_for_another_queue);
    RUN(ring_mode_waits_on_the_gpu_for_a_point_past_the_marks);
    RUN(ring_mode_wait_on_the_queue_own_point_is_stream_order);
    RUN(ring_mode_waits_on_the_gpu_for_another_device_on_its_gpu);
    RUN(gpu_mirror_write_never_leaves_a_host_raise_lowered);
    RUN(gate_on_a_reused_mirror_word_is_released);
    RUN(pinned_words_have_a_line_each);
    RUN(long_wait_sleeps_between_polls);
    RUN(foreign_stream_waits_for_a_host_set);
    RUN(foreign_stream_waits_on_the_gpu_for_a_queue);
    RUN(foreign_stream_signal_releases_an_accel_queue);
    RUN(failed_signal_releases_a_foreign_wait);
    RUN(foreign_stream_between_two_queues);
    RUN(waiter_is_not_held_by_a_release_it_reaps);
    RUN(worker_hears_of_a_submit_during_its_poll);
    RUN(buffer_create_runs_held_releases_when_out_of_memory);
    RUN(foreign_wait_retired_runs_the_releases_it_held);
    RUN(out_of_bounds_kernel_loses_the_device);
    return test_end();
}

/* tests/test.h — the tiny harness of the accel test suite. Header-only, C11.

   A test program is one translation unit (the Makefile compiles most of them apart from the
   implementation, with ACCEL_IMPLEMENTATION_INCLUDED, linking each configuration's tests/impl.c: such a
   program must use no accel_i_* / ACCEL_I_* names and no macro the implementation sets; a program that
   does goes in the Makefile's TESTS_OWN_IMPL):

       #define ACCEL_IMPLEMENTATION
       #include "accel.h"
       #include "test.h"

       TEST(signal_set_is_max) {
           accel_device* dev; accel_signal* s;
           REQUIRE_OK(test_device_create(&dev));
           ...
           CHECK_EQ_U64(accel_signal_value(s), 5);
           accel_device_destroy(dev);
       }

       int main(int argc, char** argv) {
           test_begin(argc, argv);       // argv[1], if given, runs only tests whose name contains it
           RUN(signal_set_is_max);
           return test_end();            // prints "N passed, N failed, N skipped"; 0 / 1 / 77
       }

   CHECK* macros report `file:line: CHECK failed: expr` with the values and let the test go on;
   REQUIRE* macros do the same and return from the test function (use them where going on would
   crash, e.g. after a failed create). SKIP("why") ends the test as skipped.

   Backend: env ACCEL_TEST_BACKEND = cpu (default) | vulkan | cuda. vulkan needs the program built with
   -DACCEL_TEST_HAVE_VULKAN, cuda with -DACCEL_TEST_HAVE_CUDA. When the requested backend is not compiled
   in or its device cannot be created (ACCEL_ERROR_UNAVAILABLE), every test is skipped and the program
   exits 77. Env ACCEL_TEST_VERBOSE=1 echoes every message the library logs.
   Vulkan validation: any message logged with the "[vulkan-validation]" prefix (accel_vulkan.h routes the
   validation layer's messages there) fails the test that was running.

   Threads for tests: test_thread_start / test_thread_join (C11 <threads.h>, pthreads with
   ACCEL_USE_PTHREADS, Win32 threads on Windows). Not available with ACCEL_NO_THREADS (TEST_HAVE_THREADS is 0 there). */
#ifndef ACCEL_TEST_H_INCLUDED
#define ACCEL_TEST_H_INCLUDED

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "test_backends.h"

#if defined(_WIN32)
#  ifndef WIN32_LEAN_AND_MEAN
#    define WIN32_LEAN_AND_MEAN
#  endif
#  include <windows.h>
#endif

#if defined(ACCEL_NO_THREADS) || defined(__wasi__) || (defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__))
#  define TEST_HAVE_THREADS 0
#else
#  define TEST_HAVE_THREADS 1
#  if defined(_WIN32)
#    define TEST_USE_WIN32 1
#  elif defined(ACCEL_USE_PTHREADS) || defined(__APPLE__)
#    include <pthread.h>
#    define TEST_USE_PTHREADS 1
#  else
#    include <threads.h>
#  endif
#endif

/* ==== state ==== */
typedef struct test_state {
    int passed, failed, skipped;
    const char* filter;
    const char* current;
    atomic_int current_failed;        /* CHECKs may fail on helper threads */
    int current_skipped;
    int all_skip;                     /* the backend is not here: skip everything */
    char all_skip_reason[256];
    const accel_backend* backend;
    const char* backend_name;
    int verbose;
} test_state;
static test_state test_g;

/* ==== time ==== */
/* Wall clock in ns (C11 timespec_get; good enough for the >= 1 ms checks the tests make). */
static inline uint64_t test_now_ns(void) {
#if defined(_WIN32)   /* mingw-w64's msvcrt has no timespec_get */
    LARGE_INTEGER f, c;
    QueryPerformanceFrequency(&f);
    QueryPerformanceCounter(&c);
    return (uint64_t)((double)c.QuadPart * (1e9 / (double)f.QuadPart));
#else
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
#endif
}

/* CPU time in ns of a POSIX CPU-time clock (CLOCK_PROCESS_CPUTIME_ID, CLOCK_THREAD_CPUTIME_ID): Linux. */
#if defined(__linux__) && defined(CLOCK_THREAD_CPUTIME_ID)   /* POSIX's <time.h> (_GNU_SOURCE) */
static inline uint64_t test_cpu_ns(clockid_t clock) {
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
#endif

/* ==== the process's threads (Linux) ==== */
#if TEST_HAVE_THREADS && defined(__linux__) && !defined(__EMSCRIPTEN__)
#  include <dirent.h>
#  include <unistd.h>
#  define TEST_HAVE_THREAD_SLEEPS 1
/* The sleeps so far (voluntary context switches, /proc/self/task/<tid>/status) of this process's threads
   other than the main thread, and other than those whose name starts with `except` (NULL: none); -1
   when /proc/self/task cannot be read. */
static inline long test_thread_sleeps(const char* except) {
    long sum = 0;
    struct dirent* e;
    DIR* d = opendir("/proc/self/task");
    if (!d) return -1;
    while ((e = readdir(d)) != NULL) {
        char path[300], line[200] = "";
        long tid = strtol(e->d_name, NULL, 10), n;
        FILE* f;
        if (tid <= 0 || tid == (long)getpid()) continue;
        snprintf(path, sizeof path, "/proc/self/task/%ld/comm", tid);
        if (except && (f = fopen(path, "r")) != NULL) {
            if (!fgets(line, sizeof line, f)) line[0] = '\0';
            fclose(f);
            if (strncmp(line, except, strlen(except)) == 0) continue;
        }
        snprintf(path, sizeof path, "/proc/self/task/%ld/status", tid);
        if ((f = fopen(path, "r")) == NULL) continue;   /* a thread that just ended */
        while (fgets(line, sizeof line, f))
            if (sscanf(line, "voluntary_ctxt_switches: %ld", &n) == 1) sum += n;
        fclose(f);
    }
    closedir(d);
    return sum;
}
#else
#  define TEST_HAVE_THREAD_SLEEPS 0
#endif

/* ==== capturing logger ==== */
#define TEST_LOG_KEEP 32
typedef struct test_log_state {
    atomic_flag lock;
    atomic_int count[4];              /* per accel_log_level */
    atomic_int validation;            /* Vulkan validation-layer messages */
    int next;
    char messages[TEST_LOG_KEEP][2048];   /* a line with long labels whole (accel.h's lines: 2048) */
} test_log_state;
static test_log_state test_log_g = { ATOMIC_FLAG_INIT, { 0, 0, 0, 0 }, 0, 0, { { 0 } } };

static inline void test_log_fn(accel_log_level level, const char* message, void* user) {
    (void)user;
    if ((int)level >= 0 && (int)level < 4) atomic_fetch_add(&test_log_g.count[level], 1);
    if (message && strstr(message, "[vulkan-validation]")) {
        atomic_fetch_add(&test_log_g.validation, 1);
        fprintf(stderr, "  validation message: %s\n", message);
    }
    while (atomic_flag_test_and_set(&test_log_g.lock)) { /* spin: messages are short */ }
    snprintf(test_log_g.messages[test_log_g.next % TEST_LOG_KEEP], sizeof test_log_g.messages[0], "%s",
             message ? message : "(null)");
    test_log_g.next++;
    atomic_flag_clear(&test_log_g.lock);
    if (test_g.verbose) fprintf(stderr, "  [accel log %d] %s\n", (int)level, message ? message : "(null)");
}
static inline accel_logger test_logger(void) {
    accel_logger l;
    l.log_fn = test_log_fn;
    l.user = NULL;
    return l;
}
/* Forget what was logged so far. */
static inline void test_log_reset(void) {
    while (atomic_flag_test_and_set(&test_log_g.lock)) { }
    for (int i = 0; i < 4; i++) atomic_store(&test_log_g.count[i], 0);
    test_log_g.next = 0;
    memset(test_log_g.messages, 0, sizeof test_log_g.messages);
    atomic_flag_clear(&test_log_g.lock);
}
/* Messages logged at `level` since the last reset. */
static inline int test_log_count(accel_log_level level) { return atomic_load(&test_log_g.count[level]); }
/* 1 when one of the last TEST_LOG_KEEP messages contains `needle`. */
static inline int test_log_contains(const char* needle) {
    int found = 0;
    while (atomic_flag_test_and_set(&test_log_g.lock)) { }
    for (int i = 0; i < TEST_LOG_KEEP && !found; i++) found = strstr(test_log_g.messages[i], needle) != NULL;
    atomic_flag_clear(&test_log_g.lock);
    return found;
}
static inline void test_log_print_last(void) {
    while (atomic_flag_test_and_set(&test_log_g.lock)) { }
    if (test_log_g.next > 0)
        fprintf(stderr, "    last accel log: %s\n", test_log_g.messages[(test_log_g.next - 1) % TEST_LOG_KEEP]);
    atomic_flag_clear(&test_log_g.lock);
}

/* ==== checks ==== */
static inline void test_fail_head(const char* file, int line, const char* expr) {
    atomic_fetch_add(&test_g.current_failed, 1);
    fprintf(stderr, "%s:%d: CHECK failed: %s  [test %s]\n", file, line, expr, test_g.current ? test_g.current : "?");
}
static inline int test_check_true(int ok, const char* file, int line, const char* expr) {
    if (!ok) { test_fail_head(file, line, expr); test_log_print_last(); }
    return ok;
}
static inline int test_check_i64(long long a, long long b, const char* file, int line, const char* expr) {
    if (a == b) return 1;
    test_fail_head(file, line, expr);
    fprintf(stderr, "    got %lld, expected %lld\n", a, b);
    return 0;
}
static inline int test_check_u64(unsigned long long a, unsigned long long b, const char* file, int line, const char* expr) {
    if (a == b) return 1;
    test_fail_head(file, line, expr);
    fprintf(stderr, "    got %llu (0x%llx), expected %llu (0x%llx)\n", a, a, b, b);
    return 0;
}
static inline int test_check_result(accel_result a, accel_result b, const char* file, int line, const char* expr) {
    if (a == b) return 1;
    test_fail_head(file, line, expr);
    fprintf(stderr, "    got %s (%d), expected %s (%d)\n", accel_result_string(a), (int)a, accel_result_string(b), (int)b);
    test_log_print_last();
    return 0;
}
static inline int test_check_str(const char* a, const char* b, const char* file, int line, const char* expr) {
    if (a == b || (a && b && strcmp(a, b) == 0)) return 1;
    test_fail_head(file, line, expr);
    fprintf(stderr, "    got \"%s\", expected \"%s\"\n", a ? a : "(null)", b ? b : "(null)");
    return 0;
}

#define CHECK(expr)              test_check_true(!!(expr), __FILE__, __LINE__, #expr)
#define CHECK_EQ_INT(a, b)       test_check_i64((long long)(a), (long long)(b), __FILE__, __LINE__, #a " == " #b)
#define CHECK_EQ_U64(a, b)       test_check_u64((unsigned long long)(a), (unsigned long long)(b), __FILE__, __LINE__, #a " == " #b)
#define CHECK_EQ_STR(a, b)       test_check_str((a), (b), __FILE__, __LINE__, #a " == " #b)
#define CHECK_RESULT(expr, want) test_check_result((expr), (want), __FILE__, __LINE__, #expr " == " #want)
#define CHECK_OK(expr)           CHECK_RESULT(expr, ACCEL_OK)
#define REQUIRE(expr)              do { if (!CHECK(expr)) return; } while (0)
#define REQUIRE_EQ_INT(a, b)       do { if (!CHECK_EQ_INT(a, b)) return; } while (0)
#define REQUIRE_RESULT(expr, want) do { if (!CHECK_RESULT(expr, want)) return; } while (0)
#define REQUIRE_OK(expr)           REQUIRE_RESULT(expr, ACCEL_OK)
#define SKIP(why) do { test_g.current_skipped = 1; fprintf(stderr, "SKIP %s: %s\n", test_g.current, (why)); return; } while (0)
/* Tests of the optional parts skip in builds that compile them out (ACCEL_NO_TRACE, ACCEL_NO_DEBUG). */
#if defined(ACCEL_NO_TRACE)
#  define TEST_NEEDS_TRACE() SKIP("built with ACCEL_NO_TRACE")
#else
#  define TEST_NEEDS_TRACE() ((void)0)
#endif
#if defined(ACCEL_NO_DEBUG)
#  define TEST_NEEDS_DEBUG() SKIP("built with ACCEL_NO_DEBUG")
#else
#  define TEST_NEEDS_DEBUG() ((void)0)
#endif
/* 1 when a CHECK of the current test already failed (to stop a loop from printing thousands). */
#define TEST_FAILED_SO_FAR() (atomic_load(&test_g.current_failed) != 0)

/* ==== backends and devices ==== */
static inline int test_backend_is_cpu(void) { return test_g.backend == accel_cpu_backend(); }
/* Vulkan's synchronization validation is on (VK_LAYER_ENABLES: the vulkan-sync configuration). The layer
   serialises semaphore calls under a lock it may hold while it sleeps, so a program that repeats a racing
   pattern many times runs fewer rounds there; the vulkan configuration (the layer without it) runs all. */
static inline int test_sync_validation(void) {
    const char* e = getenv("VK_LAYER_ENABLES");
    return e && strstr(e, "SYNCHRONIZATION") != NULL;
}

/* Fills the fields of *desc the tests always want (backend, capturing logger) where zero. */
static inline void test_device_desc_fill(accel_device_desc* desc) {
    if (!desc->backend) desc->backend = test_g.backend;
    if (!desc->logger.log_fn) desc->logger = test_logger();
}
static inline accel_result test_device_create_desc(accel_device_desc desc, accel_device** out) {
    test_device_desc_fill(&desc);
    return accel_device_create(&desc, out);
}
/* A device of the backend under test, with the capturing logger. */
/* A CPU device beside the one under test (the other side of waits and copies across devices). */
static inline accel_result test_cpu_device_create(accel_device** out) {
    accel_device_desc d;
    memset(&d, 0, sizeof d);
    d.backend = accel_cpu_backend();
    d.cpu_threads = 2;
    d.logger = test_logger();
    return accel_device_create(&d, out);
}
static inline accel_result test_device_create(accel_device** out) {
    accel_device_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.label = "test";
    return test_device_create_desc(desc, out);
}

/* ==== counting allocator (fails on demand, checks sizes on free) ==== */
typedef struct test_alloc_state {
    atomic_long allocs, frees, outstanding;  /* outstanding = allocs - frees */
    atomic_long fail_after;                  /* < 0: never fail; else succeed this many more times, then fail */
    atomic_long failures;                    /* allocations refused */
    atomic_long size_mismatch, bad_align;    /* free got another size than alloc; align not a power of 2 */
    atomic_llong bytes;                      /* bytes allocated and not freed */
    size_t refuse_above;                     /* refuse any single allocation above this (0: no limit) */
} test_alloc_state;

typedef struct test_alloc_head { void* base; size_t size; } test_alloc_head;

static inline void* test_alloc_fn(size_t size, size_t align, void* user) {
    test_alloc_state* st = (test_alloc_state*)user;
    if (align == 0 || (align & (align - 1)) != 0) { atomic_fetch_add(&st->bad_align, 1); return NULL; }
    if (st->refuse_above && size > st->refuse_above) { atomic_fetch_add(&st->failures, 1); return NULL; }
    if (atomic_load(&st->fail_after) >= 0 && atomic_fetch_sub(&st->fail_after, 1) <= 0) {
        atomic_store(&st->fail_after, 0);
        atomic_fetch_add(&st->failures, 1);
        return NULL;
    }
    if (align < sizeof(test_alloc_head)) align = sizeof(test_alloc_head);
    if (align < 16) align = 16;
    if (size > SIZE_MAX - align - sizeof(test_alloc_head)) { atomic_fetch_add(&st->failures, 1); return NULL; }
    unsigned char* base = (unsigned char*)malloc(size + align + sizeof(test_alloc_head));
    if (!base) { atomic_fetch_add(&st->failures, 1); return NULL; }
    uintptr_t p = ((uintptr_t)base + sizeof(test_alloc_head) + align - 1) & ~(uintptr_t)(align - 1);
    test_alloc_head head = { base, size };
    memcpy((unsigned char*)p - sizeof head, &head, sizeof head);
    atomic_fetch_add(&st->allocs, 1);
    atomic_fetch_add(&st->outstanding, 1);
    atomic_fetch_add(&st->bytes, (long long)size);
    return (void*)p;
}
static inline void test_free_fn(void* ptr, size_t size, void* user) {
    test_alloc_state* st = (test_alloc_state*)user;
    if (!ptr) return;
    test_alloc_head head;
    memcpy(&head, (unsigned char*)ptr - sizeof head, sizeof head);
    if (head.size != size) atomic_fetch_add(&st->size_mismatch, 1);
    atomic_fetch_add(&st->frees, 1);
    atomic_fetch_sub(&st->outstanding, 1);
    atomic_fetch_sub(&st->bytes, (long long)size);
    free(head.base);
}
static inline void test_alloc_init(test_alloc_state* st) {
    memset(st, 0, sizeof *st);
    atomic_store(&st->fail_after, -1);
}
static inline accel_allocator test_allocator(test_alloc_state* st) {
    accel_allocator a;
    a.alloc_fn = test_alloc_fn;
    a.free_fn = test_free_fn;
    a.user = st;
    return a;
}

/* ==== host threads ==== */
#if TEST_HAVE_THREADS
typedef struct test_thread {
#  if defined(TEST_USE_WIN32)
    HANDLE t;
#  elif defined(TEST_USE_PTHREADS)
    pthread_t t;
#  else
    thrd_t t;
#  endif
    void (*fn)(void*);
    void* arg;
} test_thread;
#  if defined(TEST_USE_WIN32)
static inline DWORD WINAPI test_thread_main(LPVOID p) { test_thread* t = (test_thread*)p; t->fn(t->arg); return 0; }
static inline int test_thread_start(test_thread* t, void (*fn)(void*), void* arg) {
    t->fn = fn; t->arg = arg;
    t->t = CreateThread(NULL, 0, test_thread_main, t, 0, NULL);
    return t->t != NULL;
}
static inline void test_thread_join(test_thread* t) { WaitForSingleObject(t->t, INFINITE); CloseHandle(t->t); }
#  elif defined(TEST_USE_PTHREADS)
static inline void* test_thread_main(void* p) { test_thread* t = (test_thread*)p; t->fn(t->arg); return NULL; }
static inline int test_thread_start(test_thread* t, void (*fn)(void*), void* arg) {
    t->fn = fn; t->arg = arg;
    return pthread_create(&t->t, NULL, test_thread_main, t) == 0;
}
static inline void test_thread_join(test_thread* t) { pthread_join(t->t, NULL); }
#  else
static inline int test_thread_main(void* p) { test_thread* t = (test_thread*)p; t->fn(t->arg); return 0; }
static inline int test_thread_start(test_thread* t, void (*fn)(void*), void* arg) {
    t->fn = fn; t->arg = arg;
    return thrd_create(&t->t, test_thread_main, t) == thrd_success;
}
static inline void test_thread_join(test_thread* t) { thrd_join(t->t, NULL); }
#  endif
#endif

/* ==== running ==== */
static inline void test_begin(int argc, char** argv) {
    const char* want = getenv("ACCEL_TEST_BACKEND");
    const char* verbose = getenv("ACCEL_TEST_VERBOSE");
    test_g.verbose = verbose && verbose[0] && strcmp(verbose, "0") != 0;
    test_g.filter = argc > 1 ? argv[1] : NULL;
    if (!want || !want[0]) want = "cpu";
    test_g.backend_name = want;
    if (strcmp(want, "cpu") == 0) test_g.backend = accel_cpu_backend();
#ifdef ACCEL_TEST_HAVE_VULKAN
    else if (strcmp(want, "vulkan") == 0) test_g.backend = accel_vulkan_backend();
#endif
#ifdef ACCEL_TEST_HAVE_CUDA
    else if (strcmp(want, "cuda") == 0) test_g.backend = accel_cuda_backend();
#endif
    if (!test_g.backend) {
        test_g.all_skip = 1;
        snprintf(test_g.all_skip_reason, sizeof test_g.all_skip_reason,
                 "backend \"%s\" is not compiled into this test program", want);
        return;
    }
    accel_device* dev = NULL;
    accel_result r = test_device_create(&dev);
    if (r == ACCEL_ERROR_UNAVAILABLE) {
        test_g.all_skip = 1;
        snprintf(test_g.all_skip_reason, sizeof test_g.all_skip_reason, "backend \"%s\" is unavailable here", want);
    } else if (r != ACCEL_OK) {
        fprintf(stderr, "warning: creating a %s device failed: %s\n", want, accel_result_string(r));
    }
    accel_device_destroy(dev);
    test_log_reset();
}

/* Call after test_begin: every test of this program is skipped, with `why`, unless the backend under
   test is one of the space-separated names in `backends` (e.g. "cpu vulkan"). For programs whose
   expectations are written for some backends only. */
static inline void test_only_backends(const char* backends, const char* why) {
    const char* p = backends;
    size_t n = strlen(test_g.backend_name);
    if (test_g.all_skip) return;
    while ((p = strstr(p, test_g.backend_name)) != NULL) {
        if ((p == backends || p[-1] == ' ') && (p[n] == '\0' || p[n] == ' ')) return;
        p += n;
    }
    test_g.all_skip = 1;
    snprintf(test_g.all_skip_reason, sizeof test_g.all_skip_reason, "not on the %s backend: %s", test_g.backend_name, why);
}

static inline void test_run(const char* name, void (*fn)(void)) {
    if (test_g.filter && !strstr(name, test_g.filter)) return;
    if (test_g.all_skip) {
        fprintf(stderr, "SKIP %s: %s\n", name, test_g.all_skip_reason);
        test_g.skipped++;
        return;
    }
    test_g.current = name;
    atomic_store(&test_g.current_failed, 0);
    test_g.current_skipped = 0;
    test_log_reset();
    uint64_t t0 = test_now_ns();
    fn();
    double ms = (double)(test_now_ns() - t0) / 1e6;
    if (atomic_exchange(&test_log_g.validation, 0) != 0) {
        fprintf(stderr, "%s: the Vulkan validation layer reported problems (above)  [test %s]\n", name, name);
        atomic_fetch_add(&test_g.current_failed, 1);
    }
    if (atomic_load(&test_g.current_failed)) {
        test_g.failed++;
        fprintf(stderr, "FAIL %s (%.1f ms)\n", name, ms);
    } else if (test_g.current_skipped) {
        test_g.skipped++;
    } else {
        test_g.passed++;
        if (test_g.verbose) fprintf(stderr, "ok   %s (%.1f ms)\n", name, ms);
    }
    test_g.current = NULL;
}
#define TEST(name) static void name(void)
#define RUN(name) test_run(#name, name)

/* Prints the summary line (last line of output) and returns the exit code: 0 all passed (or passed +
   skipped), 1 any failure, 77 everything skipped. */
static inline int test_end(void) {
    fflush(stderr);
    printf("%d passed, %d failed, %d skipped\n", test_g.passed, test_g.failed, test_g.skipped);
    fflush(stdout);
    if (test_g.failed) return 1;
    if (test_g.passed == 0 && test_g.skipped > 0) return 77;
    return 0;
}


/* The batch just recorded on q, which signals s to 1, must not run for want of a device: its submit
   returns DEVICE_LOST, or s fails with that reason. q is finished afterwards. Returns whether it held. */
static inline int test_submit_lost(accel_queue* q, accel_signal* s) {
    accel_result r = accel_queue_submit(q);
    int ok = r == ACCEL_OK
                 ? CHECK_RESULT(accel_signal_wait(s, 1, 10000000000ull), ACCEL_ERROR_SIGNAL_FAILED) &&
                       CHECK_EQ_U64(accel_signal_value(s),
                                    ACCEL_SIGNAL_MAX + 1 - (uint64_t)(int64_t)ACCEL_ERROR_DEVICE_LOST)
                 : CHECK_RESULT(r, ACCEL_ERROR_DEVICE_LOST);
    CHECK_OK(accel_queue_finish(q, 10000000000ull));
    return ok;
}

/* ==== small helpers used by several programs ==== */
static inline accel_result test_buffer_create(accel_device* dev, size_t size, accel_memory memory, accel_buffer** out) {
    accel_buffer_desc d;
    memset(&d, 0, sizeof d);
    d.size = size;
    d.memory = memory;
    return accel_buffer_create(dev, &d, out);
}
/* A buffer of `size` bytes (at most 4096) made where a destroyed one of the same memory kind wrote 0xAB
   (a GPU's memory blocks reuse ranges) reads zero to its last byte (accel_buffer_create's contract).
   `unmapped`: the dirty buffer must not be host-mapped (a staging path under test). 0 when not
   (checked, said on stderr). */
static inline int test_fresh_buffer_reads_zero(accel_device* dev, size_t size, accel_memory memory,
                                               int unmapped) {
    unsigned char dirt[4096], got[4096];
    size_t nonzero = 0;
    accel_buffer *a = NULL, *b = NULL;
    memset(dirt, 0xAB, sizeof dirt);
    memset(got, 0x55, sizeof got);
    if (!CHECK_OK(test_buffer_create(dev, size < 64 ? 64 : sizeof dirt, memory, &a))) return 0;
    if (unmapped) CHECK(accel_buffer_map(a) == NULL);
    CHECK_OK(accel_buffer_write(a, 0, dirt, accel_buffer_size(a)));
    accel_buffer_destroy(a);
    if (!CHECK_OK(test_buffer_create(dev, size, memory, &b))) return 0;
    CHECK_OK(accel_buffer_read(b, 0, got, size));
    for (size_t k = 0; k < size; k++) nonzero += got[k] != 0;
    accel_buffer_destroy(b);
    if (CHECK_EQ_U64(nonzero, 0)) return 1;
    fprintf(stderr, "    a fresh buffer of %zu bytes, memory %d\n", size, (int)memory);
    return 0;
}
/* The usual scene of a queue test: a device, a compute queue, a HOST buffer of `bytes`, a signal
   `gate` at 0 and, when s is not NULL, another at 0. 0 when a call failed (checked; *dev is then
   NULL or the device to destroy). */
static inline int test_queue_scene(size_t bytes, accel_device** dev, accel_queue** q, accel_buffer** buf, accel_signal** gate,
                                   accel_signal** s) {
    *dev = NULL;
    return CHECK_OK(test_device_create(dev)) && CHECK_OK(accel_queue_create(*dev, ACCEL_QUEUE_COMPUTE, q)) &&
           CHECK_OK(test_buffer_create(*dev, bytes, ACCEL_MEMORY_HOST, buf)) && CHECK_OK(accel_signal_create(*dev, 0, gate)) &&
           (!s || CHECK_OK(accel_signal_create(*dev, 0, s)));
}
/* Writes count uint32 words of `value` at word 0 (blocking). */
static inline accel_result test_buffer_set_u32(accel_buffer* buf, size_t count, uint32_t value) {
    uint32_t chunk[256];
    for (size_t i = 0; i < 256; i++) chunk[i] = value;
    for (size_t done = 0; done < count;) {
        size_t n = count - done < 256 ? count - done : 256;
        accel_result r = accel_buffer_write(buf, done * 4, chunk, n * 4);
        if (r != ACCEL_OK) return r;
        done += n;
    }
    return ACCEL_OK;
}
/* Reads word i (blocking); 0xFFFFFFFF... on error is indistinguishable, so tests check the read result. */
static inline uint32_t test_buffer_u32(accel_buffer* buf, size_t i) {
    uint32_t v = 0xFEEDFACEu;
    if (accel_buffer_read(buf, i * 4, &v, 4) != ACCEL_OK) return 0xBADBAD00u;
    return v;
}
static inline uint32_t test_f32_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }

#endif /* ACCEL_TEST_H_INCLUDED */

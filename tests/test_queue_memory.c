/* tests/test_queue_memory.c — queue-ordered memory (accel_queue_alloc / accel_queue_free, DESIGN.md 7.5):
   a buffer whose memory belongs to a stretch of a queue's order, on every backend (CPU, Vulkan on
   lavapipe, CUDA through the mock). Contents through every command, alloc and free around waits,
   signals and failures, a buffer used by another queue between two signals, reuse with no host wait
   (on the queue that freed it at once, on another once idle), 10,000 steps without growth (counted
   through the device's allocator: every backend's buffer goes through it), out of memory when the
   command runs (the batch's signals fail with the reason), destroy instead of free, teardown with
   allocations pending, views and patched lists of such buffers, recording errors, threads. */
#define ACCEL_IMPLEMENTATION
#include "accel.h"
#include "test.h"
#include "kernels.h"
#if defined(ACCEL_TEST_HAVE_CUDA) && defined(__linux__)
#  include <dlfcn.h>
#endif

enum { QM_N = 1024 };   /* words of the usual scratch buffer */
enum { QM_STEP = QM_N * 4 + 1024 };   /* bytes of a step's scratch: a size class of its own, no power of 2 */

/* The scene: a device with the counting allocator, two compute queues, the fill_index and add_one
   programs, a HOST buffer `out` of QM_N words and a signal. */
typedef struct qm_scene {
    test_alloc_state mem;
    /* live allocations of QM_STEP bytes: CPU buffers' memory of that size (the steps' scratch), not the
       batches' arrays (powers of two) */
    atomic_long big;
    atomic_long mib, mib_peak;    /* live allocations of 1 MiB or more, and their most at once */
    long vk_base;                 /* Vulkan: the device's VkDeviceMemory objects once made (qm_big_live) */
    accel_device* dev;
    accel_queue *q, *q2;
    accel_program *fill, *add;
    accel_buffer* out;
    accel_signal* s;
    uint64_t next;
} qm_scene;

static void* qm_alloc_fn(size_t size, size_t align, void* user) {
    qm_scene* sc = (qm_scene*)user;
    void* p = test_alloc_fn(size, align, &sc->mem);
    if (p && size == QM_STEP) atomic_fetch_add(&sc->big, 1);
    if (p && size >= ((size_t)1 << 20)) {
        long n = atomic_fetch_add(&sc->mib, 1) + 1, peak = atomic_load(&sc->mib_peak);
        while (n > peak && !atomic_compare_exchange_weak(&sc->mib_peak, &peak, n)) {}
    }
    return p;
}
static void qm_free_fn(void* ptr, size_t size, void* user) {
    qm_scene* sc = (qm_scene*)user;
    if (ptr && size == QM_STEP) atomic_fetch_sub(&sc->big, 1);
    if (ptr && size >= ((size_t)1 << 20)) atomic_fetch_sub(&sc->mib, 1);
    test_free_fn(ptr, size, &sc->mem);
}
static long qm_vk_memory_objects(accel_device* dev);
static int qm_make(qm_scene* sc) {
    accel_device_desc d;
    int ok;
    memset(sc, 0, sizeof *sc);
    test_alloc_init(&sc->mem);
    memset(&d, 0, sizeof d);
    d.label = "test";
    d.allocator.alloc_fn = qm_alloc_fn;
    d.allocator.free_fn = qm_free_fn;
    d.allocator.user = sc;
    ok = CHECK_OK(test_device_create_desc(d, &sc->dev)) &&
         CHECK_OK(accel_queue_create(sc->dev, ACCEL_QUEUE_COMPUTE, &sc->q)) &&
         CHECK_OK(accel_queue_create(sc->dev, ACCEL_QUEUE_COMPUTE, &sc->q2)) &&
         CHECK_OK(test_program_create(sc->dev, TK_FILL_INDEX, &sc->fill)) &&
         CHECK_OK(test_program_create(sc->dev, TK_ADD_ONE, &sc->add)) &&
         CHECK_OK(test_buffer_create(sc->dev, QM_N * 4, ACCEL_MEMORY_HOST, &sc->out)) &&
         CHECK_OK(accel_signal_create(sc->dev, 0, &sc->s));
    if (ok) sc->vk_base = qm_vk_memory_objects(sc->dev);
    return ok;
}
/* Destroys the device; nothing of it may be left in the allocator. */
static void qm_end(qm_scene* sc) {
    accel_device_destroy(sc->dev);
    if (sc->dev) {
        CHECK_EQ_INT(atomic_load(&sc->mem.outstanding), 0);
        CHECK_EQ_INT(atomic_load(&sc->mem.size_mismatch), 0);
    }
}
/* out[i] = i + c for i < n, on q */
static void qm_fill(qm_scene* sc, accel_queue* q, accel_buffer* b, uint32_t c, uint32_t n) {
    uint32_t k[2] = { c, n };
    accel_queue_exec(q, sc->fill, &b, 1, k, 2, accel_exec_1d(n, 64));
}
static void qm_add(qm_scene* sc, accel_queue* q, accel_buffer* b, uint32_t n) {
    accel_queue_exec(q, sc->add, &b, 1, &n, 1, accel_exec_1d(n, 64));
}
/* Signals, submits and waits on q; the submit's result, else the wait's. */
static accel_result qm_run(qm_scene* sc, accel_queue* q) {
    accel_result r;
    accel_queue_signal(q, sc->s, ++sc->next);
    r = accel_queue_submit(q);
    return r == ACCEL_OK ? accel_signal_wait(sc->s, sc->next, ACCEL_WAIT_FOREVER) : r;
}
/* Words [0, n) of buf are base + i. */
static int qm_check(accel_buffer* buf, uint32_t n, uint32_t base) {
    uint32_t bad = 0, got = 0, at = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t v = test_buffer_u32(buf, i);
        if (v != base + i && !bad++) { got = v; at = i; }
    }
    if (bad) fprintf(stderr, "    %u words off; first at %u: got %u, want %u\n", bad, at, got, base + at);
    return CHECK_EQ_INT(bad, 0);
}
/* Live allocations of the device, once its queues are idle. */
static long qm_live(qm_scene* sc) {
    CHECK_OK(accel_queue_finish(sc->q, ACCEL_WAIT_FOREVER));
    CHECK_OK(accel_queue_finish(sc->q2, ACCEL_WAIT_FOREVER));
    return atomic_load(&sc->mem.outstanding);
}

/* Vulkan: the VkDeviceMemory objects of the device's buffers now (accel_vulkan.h, "vulkan: memory
   blocks"); -1 on other backends. */
static int qm_on_vulkan(void) {
#ifdef ACCEL_TEST_HAVE_VULKAN
    return test_g.backend == accel_vulkan_backend();
#else
    return 0;
#endif
}
static long qm_vk_memory_objects(accel_device* dev) {
#ifdef ACCEL_TEST_HAVE_VULKAN
    if (qm_on_vulkan()) return (long)atomic_load(&accel_i_vk_dev(dev)->memory_objects);
#endif
    (void)dev;
    return -1;
}

/* CUDA on tests/mock_cuda.c: one of its counts (mock_cuda_live_memory: its device and pinned
   allocations alive; mock_cuda_big_live / _peak: those of 1 MiB or more, and their most at once since
   mock_cuda_big_reset); -1 elsewhere (a real driver has no such count). */
static long qm_cuda_count(const char* name) {
#if defined(ACCEL_TEST_HAVE_CUDA) && defined(__linux__)
    if (test_g.backend == accel_cuda_backend()) {
        const char* path = getenv("ACCEL_CUDA_LIBRARY");
        void* lib = path && path[0] ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
        void* sym = lib ? dlsym(lib, name) : NULL;
        long long (*fn)(void) = NULL;
        long n;
        memcpy(&fn, &sym, sizeof sym);
        n = fn ? (long)fn() : -1;
        if (lib) dlclose(lib);
        return n;
    }
#endif
    (void)name;
    return -1;
}
static long qm_cuda_live_allocations(void) { return qm_cuda_count("mock_cuda_live_memory"); }
/* CUDA without stream memory operations (ACCEL_CUDA_NO_MEMOPS): a wait for a value no signal point has
   promised yet (another queue's, held behind a host gate) is gated on the host, so the walk reaches an
   alloc point only once the waits before it are reached. */
static int qm_cuda_ring(void) {
    const char* e = getenv("ACCEL_CUDA_NO_MEMOPS");
    return qm_cuda_live_allocations() >= 0 && e && e[0] && strcmp(e, "0") != 0;
}

/* ==== contents ==== */
TEST(qmem_every_command_reaches_the_memory) {
    qm_scene sc;
    if (qm_make(&sc)) {
        accel_buffer *a = NULL, *h = NULL;
        uint32_t data[4] = { 5, 6, 7, 8 };
        REQUIRE_OK(accel_queue_alloc(sc.q, QM_N * 4, ACCEL_MEMORY_DEVICE, &a));
        REQUIRE(a != NULL);
        CHECK_EQ_U64(accel_buffer_size(a), QM_N * 4);
        qm_fill(&sc, sc.q, a, 100, QM_N);
        qm_add(&sc, sc.q, a, QM_N);
        accel_queue_copy(sc.q, sc.out, 0, a, 0, QM_N * 4);
        accel_queue_free(sc.q, a);
        REQUIRE_OK(qm_run(&sc, sc.q));
        qm_check(sc.out, QM_N, 101);
        /* HOST memory: fill, update, and map / read / write once its point is reached */
        REQUIRE_OK(accel_queue_alloc(sc.q, 64, ACCEL_MEMORY_HOST, &h));
        accel_queue_fill(sc.q, h, 0, 64, 9);
        accel_queue_update(sc.q, h, 16, data, sizeof data);
        REQUIRE_OK(qm_run(&sc, sc.q));
        CHECK_EQ_U64(test_buffer_u32(h, 0), 9);
        CHECK_EQ_U64(test_buffer_u32(h, 5), 6);
        CHECK_EQ_U64(test_buffer_u32(h, 15), 9);
        CHECK_OK(accel_buffer_write(h, 0, data, 4));
        CHECK_EQ_U64(test_buffer_u32(h, 0), 5);
        if (accel_buffer_map(h)) CHECK_EQ_U64(((uint32_t*)accel_buffer_map(h))[4], 5);
        accel_queue_free(sc.q, h);
        REQUIRE_OK(qm_run(&sc, sc.q));
    }
    qm_end(&sc);
}

/* ==== reuse ==== */
/* Where a native step runs, the buffer's mapping (HOST memory) as it is there: in the queue's order on
   the CPU (where its memory is taken at its point), when the step is enqueued elsewhere. */
typedef struct qm_grab { accel_buffer* buf; void* at; } qm_grab;
static void qm_grab_fn(const accel_native* n, void* user) {
    qm_grab* g = (qm_grab*)user;
    (void)n;
    g->at = accel_buffer_map(g->buf);
}
/* A free and an alloc of the same class on one queue, in one batch that has not run yet (held by a
   gate): the alloc takes the freed memory with no host wait (HOST memory shows it in map), and each
   buffer still sees its own contents in queue order. On the CPU nothing is taken before the gate
   opens (the memory is taken at the alloc's point). */
TEST(qmem_reuse_on_the_same_queue_without_a_host_wait) {
    qm_scene sc;
    accel_signal* gate = NULL;
    if (qm_make(&sc)) {
        accel_buffer *a = NULL, *b = NULL, *out2 = NULL;
        qm_grab ga = { NULL, NULL }, gb = { NULL, NULL };
        long big;
        REQUIRE_OK(accel_signal_create(sc.dev, 0, &gate));
        REQUIRE_OK(test_buffer_create(sc.dev, QM_N * 4, ACCEL_MEMORY_HOST, &out2));
        big = atomic_load(&sc.big);
        accel_queue_wait(sc.q, gate, 1);
        REQUIRE_OK(accel_queue_alloc(sc.q, QM_STEP, ACCEL_MEMORY_HOST, &a));
        ga.buf = a;
        accel_queue_native(sc.q, qm_grab_fn, &ga);
        qm_fill(&sc, sc.q, a, 1000, QM_N);
        accel_queue_copy(sc.q, sc.out, 0, a, 0, QM_N * 4);
        accel_queue_free(sc.q, a);
        REQUIRE_OK(accel_queue_alloc(sc.q, QM_STEP - 100, ACCEL_MEMORY_HOST, &b));   /* same class */
        gb.buf = b;
        accel_queue_native(sc.q, qm_grab_fn, &gb);
        qm_fill(&sc, sc.q, b, 2000, QM_N - 25);
        accel_queue_copy(sc.q, out2, 0, b, 0, (QM_N - 25) * 4);
        accel_queue_free(sc.q, b);
        accel_queue_signal(sc.q, sc.s, ++sc.next);
        REQUIRE_OK(accel_queue_submit(sc.q));
        CHECK_RESULT(accel_signal_wait(sc.s, sc.next, 0), ACCEL_TIMEOUT);
        if (test_backend_is_cpu()) CHECK_EQ_INT(atomic_load(&sc.big), big);   /* nothing taken yet */
        REQUIRE_OK(accel_signal_set(gate, 1));
        REQUIRE_OK(accel_signal_wait(sc.s, sc.next, ACCEL_WAIT_FOREVER));
        qm_check(sc.out, QM_N, 1000);
        qm_check(out2, QM_N - 25, 2000);
        if (ga.at) CHECK(gb.at == ga.at);
        if (test_backend_is_cpu()) {
            CHECK(ga.at != NULL);
            CHECK_EQ_INT(atomic_load(&sc.big), big + 1);   /* one chunk, back in the pool */
        }
        /* gate: destroyed with the device (a worker may still return from its gated wait on it) */
    }
    qm_end(&sc);
}

/* Memory at its point: 32 batches of alloc (1 MiB) / fill / copy / free submitted ahead of a gate hold
   one 1 MiB allocation at most, not 32. On the CPU (counted through the device allocator) nothing is
   taken before the gate opens, and the same holds with the alloc on q and the use and free on q2 after
   a signal. On CUDA (the mock's allocations of 1 MiB or more: pool blocks or cuMemAlloc'd roots) the
   points are enqueued at submit, past a wait the device watches: one block, reused in stream order;
   one queue only (another stream reuses a block only once the free has run, as the driver does). On
   Vulkan the allocations are of 16 MiB (above a quarter of a memory block: a VkDeviceMemory each),
   counted through the device's VkDeviceMemory objects (live, not a peak): none before the gate opens
   (the gated wait holds the walk before the points), one after; one queue only (a root freed on q2 is
   q's only once q2's batch completed, which the walk on q need not wait for). */
static size_t qm_ahead_bytes(void) { return qm_on_vulkan() ? (size_t)16 << 20 : (size_t)1 << 20; }
static long qm_big_live(qm_scene* sc) {
    if (qm_on_vulkan()) return qm_vk_memory_objects(sc->dev) - sc->vk_base;
    return test_backend_is_cpu() ? atomic_load(&sc->mib) : qm_cuda_count("mock_cuda_big_live");
}
static long qm_big_peak(qm_scene* sc) {
    if (qm_on_vulkan()) return qm_big_live(sc);
    return test_backend_is_cpu() ? atomic_load(&sc->mib_peak) : qm_cuda_count("mock_cuda_big_peak");
}
static void qm_ahead_round(qm_scene* sc, bool two) {
    enum { BATCHES = 32 };
    accel_signal *gate = NULL, *s1 = NULL;
    accel_queue* user = two ? sc->q2 : sc->q;
    long base = qm_big_live(sc);   /* a chunk or block kept from the round before */
    REQUIRE_OK(accel_signal_create(sc->dev, 0, &gate));
    REQUIRE_OK(accel_signal_create(sc->dev, 0, &s1));
    atomic_store(&sc->mib_peak, base);
    qm_cuda_count("mock_cuda_big_reset");
    accel_queue_wait(sc->q, gate, 1);
    for (uint32_t i = 0; i < BATCHES; i++) {
        accel_buffer* a = NULL;
        REQUIRE_OK(accel_queue_alloc(sc->q, qm_ahead_bytes(), ACCEL_MEMORY_DEVICE, &a));
        if (two) {
            accel_queue_signal(sc->q, s1, i + 1);
            REQUIRE_OK(accel_queue_submit(sc->q));
            accel_queue_wait(user, s1, i + 1);
        }
        qm_fill(sc, user, a, 10 * i, QM_N);
        accel_queue_copy(user, sc->out, 0, a, 0, QM_N * 4);
        accel_queue_free(user, a);
        accel_queue_signal(user, sc->s, ++sc->next);
        REQUIRE_OK(accel_queue_submit(user));
        if (two) accel_queue_wait(sc->q, sc->s, sc->next);   /* the next alloc after this free */
    }
    CHECK_RESULT(accel_signal_wait(sc->s, sc->next, 0), ACCEL_TIMEOUT);
    if (test_backend_is_cpu() || qm_on_vulkan())
        CHECK_EQ_INT(qm_big_peak(sc), base);   /* nothing taken at record time */
    CHECK(qm_big_peak(sc) <= (base ? base : 1));
    REQUIRE_OK(accel_signal_set(gate, 1));
    REQUIRE_OK(accel_signal_wait(sc->s, sc->next, ACCEL_WAIT_FOREVER));
    qm_check(sc->out, QM_N, 10 * (BATCHES - 1));
    /* one, taken and given back; on a GPU with two queues the handles are shared (freed on another
       queue than the alloc's): a root is back once the batch of its free was retired, which may lag the
       signal the next alloc waits for by several batches on a loaded machine (not looked at) */
    if (!two || test_backend_is_cpu()) CHECK(qm_big_peak(sc) <= (base ? base : 1));
    CHECK_OK(accel_queue_finish(sc->q, ACCEL_WAIT_FOREVER));
    accel_signal_destroy(s1);   /* gate: with the device (a worker may still return from its wait) */
}
TEST(qmem_batches_submitted_ahead_hold_one_chunk) {
    qm_scene sc;
    if (!test_backend_is_cpu() && !qm_on_vulkan() && qm_cuda_live_allocations() < 0)
        SKIP("counts memory at the alloc's point on the CPU, Vulkan and the CUDA mock (not on a real driver)");
    if (qm_make(&sc)) {
        qm_ahead_round(&sc, false);
        if (test_backend_is_cpu() || qm_cuda_ring()) qm_ahead_round(&sc, true);
    }
    qm_end(&sc);
}

/* 10,000 alloc / use / free steps, 10 to a batch, on one queue, then on two queues taking turns (each
   batch waits for the other queue's last). Without host waits, the CPU buffers' memory stays flat (the
   allocations of QM_N * 4 bytes); with each batch waiting on the host for the one before the last
   (so that the queues' caches of recycled batches stay as they are), every live allocation of the
   device stays flat: buffers of every backend, handles, batches (up to a batch per queue). */
static void qm_steps_bounded(qm_scene* sc, int steps, bool two, bool bounded) {
    for (int i = 0; i < steps; i++) {
        accel_queue* q = two && (i / 10) % 2 ? sc->q2 : sc->q;
        accel_buffer* a = NULL;
        if (accel_queue_alloc(q, QM_STEP, ACCEL_MEMORY_DEVICE, &a) != ACCEL_OK) { CHECK(0); return; }
        qm_fill(sc, q, a, (uint32_t)i, QM_N);
        accel_queue_copy(q, sc->out, 0, a, 0, QM_N * 4);
        accel_queue_free(q, a);
        if (i % 10 == 9) {
            accel_queue_signal(q, sc->s, ++sc->next);
            if (!CHECK_OK(accel_queue_submit(q))) return;
            if (two) accel_queue_wait(q == sc->q ? sc->q2 : sc->q, sc->s, sc->next);
            if (bounded && !CHECK_OK(accel_signal_wait(sc->s, sc->next - 1, ACCEL_WAIT_FOREVER))) return;
        }
    }
}
static void qm_steps(qm_scene* sc, int steps, bool two) { qm_steps_bounded(sc, steps, two, false); }
TEST(qmem_ten_thousand_steps_without_growth) {
    qm_scene sc;
    if (qm_make(&sc)) {
        long warm, big, vk, cu;
        for (int two = 0; two < 2; two++) {
            qm_steps(&sc, 200, two);
            warm = qm_live(&sc);
            big = atomic_load(&sc.big);
            vk = qm_vk_memory_objects(sc.dev);
            cu = qm_cuda_live_allocations();
            qm_steps(&sc, 10000, two);
            qm_live(&sc);
            if (test_backend_is_cpu()) CHECK_EQ_INT(atomic_load(&sc.big), big);   /* the memory itself */
            CHECK_EQ_INT(qm_vk_memory_objects(sc.dev), vk);                     /* Vulkan: VkDeviceMemory */
            /* CUDA mock: memory; with two queues, blocks and roots change hands between them as they
               become free (a stream's own first, another's once its free ran), and the timing decides
               how many each keeps: a few more at most */
            if (two) CHECK(qm_cuda_live_allocations() <= cu + 4);
            else CHECK_EQ_INT(qm_cuda_live_allocations(), cu);
            qm_check(sc.out, QM_N, 9999);
            qm_steps_bounded(&sc, 200, two, true);
            warm = qm_live(&sc);
            qm_steps_bounded(&sc, 10000, two, true);
            /* everything; a queue's cache of recycled batches may still take a batch more (3
               allocations), and the pool a few released handles more, when timing lets more be in
               flight than in the warm-up */
            CHECK(qm_live(&sc) <= warm + 8);
            qm_check(sc.out, QM_N, 9999);
        }
    }
    qm_end(&sc);
}

/* Vulkan: 1,000 buffers of accel_buffer_create and 1,000 of accel_queue_alloc, all alive, take a few
   VkDeviceMemory blocks (far under maxMemoryAllocationCount); a large buffer has memory of its own. */
TEST(qmem_vulkan_buffers_share_memory_blocks) {
    qm_scene sc;
    if (!qm_on_vulkan()) SKIP("Vulkan only: counts VkDeviceMemory objects");
    if (qm_make(&sc)) {
        static accel_buffer* b[2000];
        accel_buffer* large = NULL;
        long before = qm_vk_memory_objects(sc.dev);
        for (int i = 0; i < 2000; i++) {
            size_t size = 4096 + (size_t)i * 4;
            if (i < 1000) REQUIRE_OK(test_buffer_create(sc.dev, size, ACCEL_MEMORY_DEVICE, &b[i]));
            else REQUIRE_OK(accel_queue_alloc(sc.q, size, (accel_memory)(i % 2), &b[i]));   /* DEVICE, HOST */
        }
        qm_fill(&sc, sc.q, b[1999], 5, QM_N);
        accel_queue_copy(sc.q, sc.out, 0, b[1999], 0, QM_N * 4);
        REQUIRE_OK(qm_run(&sc, sc.q));
        qm_check(sc.out, QM_N, 5);
        CHECK(qm_vk_memory_objects(sc.dev) - before <= 4);
        REQUIRE_OK(test_buffer_create(sc.dev, (size_t)64 << 20, ACCEL_MEMORY_DEVICE, &large));
        CHECK(qm_vk_memory_objects(sc.dev) - before <= 5);
        accel_buffer_destroy(large);
        for (int i = 0; i < 2000; i++) {
            if (i < 1000) accel_buffer_destroy(b[i]); else accel_queue_free(sc.q, b[i]);
        }
        REQUIRE_OK(qm_run(&sc, sc.q));
        CHECK(qm_vk_memory_objects(sc.dev) - before <= 4);
    }
    qm_end(&sc);
}

/* ==== other queues ==== */
/* Allocated on q, written there, used on q2 after a signal of q, freed on q after a signal of q2; then
   q2 allocates once everything is idle: the freed memory, with no new allocation. */
/* Host access (read, write, map) before the alloc point fails while the queue waits on the host ahead of
   it (the CPU executor; a GPU queue whose wait runs on the device takes the point where it enqueues it:
   the contract orders host access after a signal, see accel.h); once a signal after the point was
   reached, it works on every backend, also for a host that only polled the signal's value. */
TEST(qmem_host_access_from_the_point) {
    accel_device* dev;
    accel_queue* q;
    accel_signal *gate, *done;
    accel_buffer *h = NULL, *d = NULL;
    uint32_t w = 0;
    REQUIRE_OK(test_device_create(&dev));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
    REQUIRE_OK(accel_signal_create(dev, 0, &gate));
    REQUIRE_OK(accel_signal_create(dev, 0, &done));
    accel_queue_wait(q, gate, 1);
    REQUIRE_OK(accel_queue_alloc(q, 256, ACCEL_MEMORY_HOST, &h));
    REQUIRE_OK(accel_queue_alloc(q, 256, ACCEL_MEMORY_DEVICE, &d));
    accel_queue_fill(q, h, 0, 256, 0x01010101u);
    accel_queue_fill(q, d, 0, 256, 0x02020202u);
    accel_queue_signal(q, done, 1);
    CHECK_OK(accel_queue_submit(q));
    if (test_backend_is_cpu()) {
        CHECK_RESULT(accel_buffer_read(h, 0, &w, 4), ACCEL_ERROR_INVALID_ARGUMENT);
        CHECK_RESULT(accel_buffer_write(d, 0, &w, 4), ACCEL_ERROR_INVALID_ARGUMENT);
        CHECK(accel_buffer_map(h) == NULL);
    }
    CHECK_OK(accel_signal_set(gate, 1));
    while (accel_signal_value(done) < 1) accel_signal_wait(done, 1, 1000000);   /* polled, and waited */
    CHECK_OK(accel_buffer_read(h, 0, &w, 4));
    CHECK_EQ_U64(w, 0x01010101u);
    CHECK_OK(accel_buffer_read(d, 0, &w, 4));
    CHECK_EQ_U64(w, 0x02020202u);
    CHECK(accel_buffer_map(h) != NULL);
    accel_queue_free(q, h);
    accel_queue_free(q, d);
    CHECK_OK(accel_queue_submit(q));
    CHECK_OK(accel_queue_finish(q, ACCEL_WAIT_FOREVER));
    accel_device_destroy(dev);
}
TEST(qmem_used_by_another_queue_between_signals) {
    qm_scene sc;
    accel_signal *s1 = NULL, *s2 = NULL;
    if (qm_make(&sc)) {
        accel_buffer *a = NULL, *b = NULL;
        long live;
        REQUIRE_OK(accel_signal_create(sc.dev, 0, &s1));
        REQUIRE_OK(accel_signal_create(sc.dev, 0, &s2));
        REQUIRE_OK(accel_queue_alloc(sc.q, QM_N * 4, ACCEL_MEMORY_DEVICE, &a));
        qm_fill(&sc, sc.q, a, 7, QM_N);
        accel_queue_signal(sc.q, s1, 1);
        accel_queue_wait(sc.q, s2, 1);
        accel_queue_free(sc.q, a);
        REQUIRE_OK(accel_queue_submit(sc.q));
        accel_queue_wait(sc.q2, s1, 1);
        qm_add(&sc, sc.q2, a, QM_N);
        accel_queue_copy(sc.q2, sc.out, 0, a, 0, QM_N * 4);
        accel_queue_signal(sc.q2, s2, 1);
        REQUIRE_OK(accel_queue_submit(sc.q2));
        live = qm_live(&sc);
        qm_check(sc.out, QM_N, 8);
        REQUIRE_OK(accel_queue_alloc(sc.q2, QM_N * 4, ACCEL_MEMORY_DEVICE, &b));
        CHECK(atomic_load(&sc.mem.outstanding) <= live + 1);   /* the handle at most (one kept is reused) */
        qm_fill(&sc, sc.q2, b, 3, QM_N);
        accel_queue_copy(sc.q2, sc.out, 0, b, 0, QM_N * 4);
        accel_queue_free(sc.q2, b);
        REQUIRE_OK(qm_run(&sc, sc.q2));
        qm_check(sc.out, QM_N, 3);
    }
    qm_end(&sc);
}

/* ==== failures ==== */
/* Alloc and free around a failed wait: the batch behind it is dropped (its signals fail), the handles
   stay valid and their memory comes back through free; the next batches run. Seven rounds: the last
   five allocate nothing the first two did not. */
static void qm_failed_wait_round(qm_scene* sc) {
    accel_signal* gate = NULL;
    accel_buffer *a = NULL, *b = NULL, *c = NULL;
    REQUIRE_OK(accel_signal_create(sc->dev, 0, &gate));
    REQUIRE_OK(accel_queue_alloc(sc->q, QM_STEP, ACCEL_MEMORY_DEVICE, &a));    /* before the wait */
    accel_queue_wait(sc->q, gate, 1);
    REQUIRE_OK(accel_queue_alloc(sc->q, QM_STEP, ACCEL_MEMORY_DEVICE, &b));    /* after it */
    qm_fill(sc, sc->q, a, 1, QM_N);
    qm_fill(sc, sc->q, b, 1, QM_N);
    accel_queue_free(sc->q, b);                                               /* in the dropped part */
    accel_queue_signal(sc->q, sc->s, ++sc->next);
    REQUIRE_OK(accel_queue_submit(sc->q));
    REQUIRE_OK(accel_signal_fail(gate, ACCEL_ERROR_BACKEND));
    CHECK_RESULT(accel_signal_wait(sc->s, sc->next, ACCEL_WAIT_FOREVER), ACCEL_ERROR_SIGNAL_FAILED);
    accel_signal_destroy(gate);
    /* the next batch: a is still the caller's; b's memory is back */
    REQUIRE_OK(accel_queue_alloc(sc->q, QM_STEP, ACCEL_MEMORY_DEVICE, &c));
    qm_fill(sc, sc->q, a, 50, QM_N);
    accel_queue_copy(sc->q, sc->out, 0, a, 0, QM_N * 4);
    accel_queue_free(sc->q, c);
    accel_queue_free(sc->q, a);
    accel_signal_destroy(sc->s);
    REQUIRE_OK(accel_signal_create(sc->dev, 0, &sc->s));
    sc->next = 0;
    REQUIRE_OK(qm_run(sc, sc->q));
    qm_check(sc->out, QM_N, 50);
}
TEST(qmem_alloc_and_free_around_a_failed_wait) {
    qm_scene sc;
    if (qm_make(&sc)) {
        long live, big;
        qm_failed_wait_round(&sc);
        qm_failed_wait_round(&sc);
        live = qm_live(&sc);
        big = atomic_load(&sc.big);
        for (int i = 0; i < 5; i++) qm_failed_wait_round(&sc);
        if (test_backend_is_cpu()) CHECK_EQ_INT(atomic_load(&sc.big), big);   /* the memory: no new root */
        /* everything: a batch or a few released handles more (kept for reuse) at most, when the
           executor released the last round's later than the warm-up's */
        CHECK(qm_live(&sc) <= live + 8);
    }
    qm_end(&sc);
}

/* A free on another queue than the one whose work uses the memory, behind a wait that the device
   watches (on the CPU and in CUDA's ring mode the host holds it), ordered after that work only by a
   signal that a third queue then fails: the failure releases the free's queue, yet the memory stays
   the work's until that work ran (it waits for a gate set only afterwards). Then another queue takes
   memory of the same size class and writes other counts into it (reuse), or asks for memory no device
   has, which gives idle memory back first (trim): the work must still read its own counts and fill
   all QM_N words (a reused block gives it 5 groups; a trimmed one is a use after free under ASan).
   how: where the memory is allocated, and when the free is recorded (qm_free_order). */
typedef enum qm_free_order {
    QM_ALLOC_ON_USER,       /* on the work's queue; the free recorded after the work */
    QM_ALLOC_ON_FREER,      /* on the free's queue (the work's waits for a signal after the alloc) */
    QM_FREE_FIRST,          /* ... and the free recorded and submitted before the work is recorded */
    QM_FREE_FIRST_VIEW,     /* ... the work using a view made before the free */
    QM_FREE_ORDERS
} qm_free_order;
static void qm_free_behind_failed_signal(qm_scene* sc, accel_memory kind, int trim, qm_free_order how) {
    static const uint32_t local[3] = { 64, 1, 1 };
    uint32_t counts[3] = { QM_N / 64, 1, 1 }, other[3] = { 5, 1, 1 }, k[2] = { 500, QM_N };
    accel_signal *g1 = NULL, *g2 = NULL, *c = NULL, *made = NULL;
    accel_queue* z = NULL;
    accel_queue* at = how == QM_ALLOC_ON_USER ? sc->q : sc->q2;
    accel_buffer *a = NULL, *b = NULL, *v = NULL;
    REQUIRE_OK(accel_signal_create(sc->dev, 0, &g1));
    REQUIRE_OK(accel_signal_create(sc->dev, 0, &g2));
    REQUIRE_OK(accel_signal_create(sc->dev, 0, &c));
    REQUIRE_OK(accel_signal_create(sc->dev, 0, &made));
    REQUIRE_OK(accel_queue_create(sc->dev, ACCEL_QUEUE_COMPUTE, &z));
    accel_queue_fill(sc->q, sc->out, 0, QM_N * 4, 0);
    REQUIRE_OK(accel_queue_alloc(at, QM_STEP, kind, &a));
    if (how == QM_FREE_FIRST_VIEW) REQUIRE_OK(accel_buffer_view_create(a, 0, sizeof counts, &v));
    accel_queue_update(at, a, 0, counts, sizeof counts);
    if (how != QM_ALLOC_ON_USER) accel_queue_signal(sc->q2, made, 1);
    if (how >= QM_FREE_FIRST) {
        accel_queue_wait(sc->q2, c, 1);
        accel_queue_free(sc->q2, a);
    }
    if (how != QM_ALLOC_ON_USER) {
        REQUIRE_OK(accel_queue_submit(sc->q2));
        accel_queue_wait(sc->q, made, 1);
    }
    accel_queue_wait(sc->q, g1, 1);
    accel_queue_exec_indirect(sc->q, sc->fill, &sc->out, 1, k, 2, local, v ? v : a, 0);
    accel_queue_signal(sc->q, c, 1);
    REQUIRE_OK(accel_queue_submit(sc->q));
    if (how < QM_FREE_FIRST) {
        accel_queue_wait(sc->q2, c, 1);
        accel_queue_free(sc->q2, a);
        REQUIRE_OK(accel_queue_submit(sc->q2));
    }
    accel_queue_wait(z, g2, 1);
    accel_queue_signal(z, c, 5);
    REQUIRE_OK(accel_queue_submit(z));
    REQUIRE_OK(accel_signal_fail(g2, ACCEL_ERROR_BACKEND));
    (void)accel_queue_finish(sc->q2, ACCEL_WAIT_FOREVER);
    (void)accel_queue_finish(z, ACCEL_WAIT_FOREVER);
    if (trim) {   /* the CPU backend's memory through the scene's allocator: refused there */
        sc->mem.refuse_above = (size_t)1 << 29;
        CHECK_OK(accel_queue_alloc(z, sizeof(size_t) >= 8 ? (size_t)1 << 46 : (size_t)1 << 30, kind, &b));
    } else {
        CHECK_OK(accel_queue_alloc(z, QM_STEP, kind, &b));
        accel_queue_update(z, b, 0, other, sizeof other);
    }
    if (b) accel_queue_free(z, b);
    (void)accel_queue_submit(z);
    (void)accel_queue_finish(z, ACCEL_WAIT_FOREVER);
    sc->mem.refuse_above = 0;
    REQUIRE_OK(accel_signal_set(g1, 1));
    CHECK_OK(accel_queue_finish(sc->q, ACCEL_WAIT_FOREVER));
    qm_check(sc->out, QM_N, 500);
    if (v) accel_buffer_destroy(v);
    accel_queue_destroy(z);
    accel_signal_destroy(made);
    accel_signal_destroy(c);
    accel_signal_destroy(g2);
    accel_signal_destroy(g1);
}
TEST(qmem_free_behind_a_failed_signal_keeps_the_memory_for_its_users) {
    qm_scene sc;
    if (qm_make(&sc)) {
        for (int i = 0; i < 4 * QM_FREE_ORDERS; i++)
            qm_free_behind_failed_signal(&sc, i & 1 ? ACCEL_MEMORY_HOST : ACCEL_MEMORY_DEVICE, (i >> 1) & 1,
                                         (qm_free_order)(i >> 2));
    }
    qm_end(&sc);
}

/* Shared handles (alloc on q, use on q2, free on q; views of two kept): their free points keep the
   memory; the device is destroyed while q2's uses may still wait for a gate set just before. Nothing
   leaks (the host allocator, and on the mock its live memory is back to what it was before). */
TEST(qmem_shared_handle_pending_when_the_device_is_destroyed) {
    qm_scene sc;
    long cu0 = qm_cuda_live_allocations();
    if (qm_make(&sc)) {
        accel_signal *g = NULL, *c = NULL;
        accel_buffer *a = NULL, *v = NULL;
        REQUIRE_OK(accel_signal_create(sc.dev, 0, &g));
        REQUIRE_OK(accel_signal_create(sc.dev, 0, &c));
        for (int i = 0; i < 4; i++) {
            REQUIRE_OK(accel_queue_alloc(sc.q, QM_STEP, i & 1 ? ACCEL_MEMORY_HOST : ACCEL_MEMORY_DEVICE, &a));
            if (i & 2) REQUIRE_OK(accel_buffer_view_create(a, 0, 64, &v));   /* kept past the device */
            qm_fill(&sc, sc.q, a, 1, QM_N);
            accel_queue_signal(sc.q, c, 2 * (uint64_t)i + 1);
            REQUIRE_OK(accel_queue_submit(sc.q));
            accel_queue_wait(sc.q2, c, 2 * (uint64_t)i + 1);
            accel_queue_wait(sc.q2, g, 1);
            qm_add(&sc, sc.q2, a, QM_N);
            accel_queue_signal(sc.q2, c, 2 * (uint64_t)i + 2);
            REQUIRE_OK(accel_queue_submit(sc.q2));
            accel_queue_wait(sc.q, c, 2 * (uint64_t)i + 2);
            accel_queue_free(sc.q, a);
            REQUIRE_OK(accel_queue_submit(sc.q));
        }
        (void)v;
        REQUIRE_OK(accel_signal_set(g, 1));   /* right before the destroy: the work still pending */
    }
    qm_end(&sc);
    if (cu0 >= 0) CHECK_EQ_INT(qm_cuda_live_allocations(), cu0);
}

/* A shared handle whose free completed, kept alive by a view past accel_device_recover, then the view
   destroyed (the handle's last reference: late_keep on a stale handle); and one still pending. */
TEST(qmem_shared_handle_kept_by_a_view_across_recover) {
    qm_scene sc;
    long cu0 = qm_cuda_live_allocations();
    if (qm_make(&sc)) {
        accel_buffer *a = NULL, *b = NULL, *va = NULL, *vb = NULL;
        accel_signal* c = NULL;
        accel_result r;
        REQUIRE_OK(accel_signal_create(sc.dev, 0, &c));
        REQUIRE_OK(accel_queue_alloc(sc.q, QM_STEP, ACCEL_MEMORY_DEVICE, &a));
        REQUIRE_OK(accel_queue_alloc(sc.q, QM_STEP, ACCEL_MEMORY_HOST, &b));
        REQUIRE_OK(accel_buffer_view_create(a, 0, 64, &va));
        REQUIRE_OK(accel_buffer_view_create(b, 0, 64, &vb));
        qm_fill(&sc, sc.q, a, 1, QM_N);
        qm_fill(&sc, sc.q, b, 1, QM_N);
        accel_queue_signal(sc.q, c, 1);
        REQUIRE_OK(accel_queue_submit(sc.q));
        accel_queue_wait(sc.q2, c, 1);
        qm_add(&sc, sc.q2, a, QM_N);
        qm_add(&sc, sc.q2, b, QM_N);
        accel_queue_signal(sc.q2, c, 2);
        REQUIRE_OK(accel_queue_submit(sc.q2));
        accel_queue_wait(sc.q, c, 2);
        accel_queue_free(sc.q, a);
        accel_queue_free(sc.q, b);
        REQUIRE_OK(qm_run(&sc, sc.q));
        qm_live(&sc);
        r = accel_device_recover(sc.dev);
        if (r == ACCEL_ERROR_UNSUPPORTED) { qm_end(&sc); SKIP("accel_device_recover is unsupported here"); }
        REQUIRE_OK(r);
        accel_buffer_destroy(va);
        accel_buffer_destroy(vb);
    }
    qm_end(&sc);
    if (cu0 >= 0) CHECK_EQ_INT(qm_cuda_live_allocations(), cu0);
}

/* Many steps of the common cross-queue pattern: alloc on q, fill on q, use on q2 (after a signal), free
   on q (after q2's signal). Every handle is shared: its memory returns at its last reference. Memory
   must stay bounded (host allocations and, on the mock, its live memory). */
static void qm_cross_steps(qm_scene* sc, accel_signal* c, uint64_t* cv, int steps, accel_memory kind) {
    for (int i = 0; i < steps; i++) {
        accel_buffer* a = NULL;
        if (accel_queue_alloc(sc->q, QM_STEP, kind, &a) != ACCEL_OK) { CHECK(0); return; }
        qm_fill(sc, sc->q, a, (uint32_t)i, QM_N);
        accel_queue_signal(sc->q, c, ++*cv);
        if (!CHECK_OK(accel_queue_submit(sc->q))) return;
        accel_queue_wait(sc->q2, c, *cv);
        qm_add(sc, sc->q2, a, QM_N);
        accel_queue_copy(sc->q2, sc->out, 0, a, 0, QM_N * 4);
        accel_queue_signal(sc->q2, c, ++*cv);
        if (!CHECK_OK(accel_queue_submit(sc->q2))) return;
        accel_queue_wait(sc->q, c, *cv);
        accel_queue_free(sc->q, a);
        if (i % 10 == 9) qm_live(sc);   /* the queues idle: ten steps' handles in flight at most */
    }
}
TEST(qmem_shared_handles_stay_bounded) {
    qm_scene sc;
    if (qm_make(&sc)) {
        accel_signal* c = NULL;
        uint64_t cv = 0;
        REQUIRE_OK(accel_signal_create(sc.dev, 0, &c));
        for (int kind = 0; kind < 2; kind++) {
            accel_memory m = kind ? ACCEL_MEMORY_HOST : ACCEL_MEMORY_DEVICE;
            long warm, cu;
            qm_cross_steps(&sc, c, &cv, 100, m);
            CHECK_OK(accel_signal_wait(c, cv, ACCEL_WAIT_FOREVER));
            warm = qm_live(&sc);
            cu = qm_cuda_live_allocations();
            qm_cross_steps(&sc, c, &cv, 300, m);
            CHECK_OK(accel_signal_wait(c, cv, ACCEL_WAIT_FOREVER));
            /* the pools keep what the most handles in flight at once took: ten steps' worth, more when
               a loaded machine's workers retire batches late; a leak keeps one per step */
            CHECK(qm_live(&sc) < warm + 150);
            if (cu >= 0) CHECK(qm_cuda_live_allocations() < cu + 150);
            qm_check(sc.out, QM_N, 299 + 1);
        }
        accel_signal_destroy(c);
    }
    qm_end(&sc);
}

/* Does a size no device has fail with OUT_OF_MEMORY here? The CPU backend, the CUDA mock and lavapipe
   say so; a real driver may refuse such a buffer with another error. */
static int qm_is_lavapipe(accel_device* dev) {
    accel_device_info info;
    return accel_device_info_get(dev, &info) == ACCEL_OK && strstr(info.name, "llvmpipe") != NULL;
}
static int qm_oom_is_out_of_memory(accel_device* dev) {
    return test_backend_is_cpu() || qm_cuda_live_allocations() >= 0 || qm_is_lavapipe(dev);
}
/* A size no backend can give: accel_queue_alloc still hands a handle; the batch runs up to the alloc,
   then fails: its signals fail with the reason (OUT_OF_MEMORY: on the CPU the device allocator refuses
   it). Every later batch that uses the handle fails too; read/write/view refuse it, map gives
   NULL. Freeing it is fine, and the queue goes on. */
TEST(qmem_out_of_memory_when_the_command_runs) {
    qm_scene sc;
    if (qm_make(&sc)) {
        accel_buffer *a = NULL, *v = NULL;
        accel_signal* reached = NULL;
        size_t huge = sizeof(size_t) >= 8 ? (size_t)1 << 46 : (size_t)1 << 30;
        uint32_t word = 0;
        sc.mem.refuse_above = (size_t)1 << 29;
        REQUIRE_OK(test_buffer_set_u32(sc.out, QM_N, 0));
        qm_fill(&sc, sc.q, sc.out, 40, QM_N);                                    /* before the alloc: runs */
        test_log_reset();
        REQUIRE_OK(accel_queue_alloc(sc.q, huge, ACCEL_MEMORY_DEVICE, &a));
        REQUIRE(a != NULL);
        CHECK_EQ_U64(accel_buffer_size(a), huge);
        REQUIRE_OK(accel_signal_create(sc.dev, 1, &reached));
        accel_queue_wait(sc.q, reached, 1);    /* reached: on a GPU, what follows is another segment */
        qm_add(&sc, sc.q, sc.out, QM_N);                                         /* after it: dropped */
        qm_fill(&sc, sc.q, a, 1, QM_N);
        accel_queue_signal(sc.q, sc.s, ++sc.next);
        REQUIRE_OK(accel_queue_submit(sc.q));
        CHECK_RESULT(accel_signal_wait(sc.s, sc.next, ACCEL_WAIT_FOREVER), ACCEL_ERROR_SIGNAL_FAILED);
        CHECK(test_log_contains("accel_queue_alloc"));   /* when the alloc recorded, or at its point */
        if (qm_oom_is_out_of_memory(sc.dev))   /* the reason: OUT_OF_MEMORY where we know the driver's */
            CHECK_EQ_U64(accel_signal_value(sc.s),
                         ACCEL_SIGNAL_MAX + 1 + (uint64_t)-(int64_t)ACCEL_ERROR_OUT_OF_MEMORY);
        CHECK_OK(accel_queue_finish(sc.q, ACCEL_WAIT_FOREVER));
        qm_check(sc.out, QM_N, 40);
        CHECK_RESULT(accel_buffer_read(a, 0, &word, 4), ACCEL_ERROR_OUT_OF_MEMORY);
        CHECK_RESULT(accel_buffer_write(a, 0, &word, 4), ACCEL_ERROR_OUT_OF_MEMORY);
        CHECK(accel_buffer_map(a) == NULL);
        CHECK_RESULT(accel_buffer_view_create(a, 0, 64, &v), ACCEL_ERROR_OUT_OF_MEMORY);
        /* a later batch using it fails where it does */
        accel_signal_destroy(sc.s);
        REQUIRE_OK(accel_signal_create(sc.dev, 0, &sc.s));
        sc.next = 0;
        qm_add(&sc, sc.q, sc.out, QM_N);
        accel_queue_copy(sc.q, a, 0, sc.out, 0, 64);
        CHECK_RESULT(qm_run(&sc, sc.q), ACCEL_ERROR_SIGNAL_FAILED);
        CHECK_OK(accel_queue_finish(sc.q, ACCEL_WAIT_FOREVER));
        qm_check(sc.out, QM_N, 41);
        /* as an indirect exec's counts, which CUDA reads on the host where the exec's turn comes: the
           batch fails with the handle's reason (a read of no memory crashed the mock's stream) */
        {
            static const uint32_t local[3] = { 64, 1, 1 };
            uint32_t n = QM_N;
            accel_queue_exec_indirect(sc.q, sc.add, &sc.out, 1, &n, 1, local, a, 0);
            CHECK_RESULT(qm_run(&sc, sc.q), ACCEL_ERROR_SIGNAL_FAILED);
            if (qm_oom_is_out_of_memory(sc.dev))
                CHECK_EQ_U64(accel_signal_value(sc.s),
                             ACCEL_SIGNAL_MAX + 1 + (uint64_t)-(int64_t)ACCEL_ERROR_OUT_OF_MEMORY);
            CHECK_OK(accel_queue_finish(sc.q, ACCEL_WAIT_FOREVER));
            qm_check(sc.out, QM_N, 41);
        }
        /* while recording a list: a recording error of the list */
        REQUIRE_OK(accel_queue_record_begin(sc.q));
        qm_fill(&sc, sc.q, a, 1, QM_N);
        accel_commands* list = NULL;
        CHECK_RESULT(accel_queue_record_end(sc.q, &list), ACCEL_ERROR_OUT_OF_MEMORY);
        CHECK(list == NULL);
        accel_queue_free(sc.q, a);
        accel_signal_destroy(sc.s);
        REQUIRE_OK(accel_signal_create(sc.dev, 0, &sc.s));
        sc.next = 0;
        qm_steps(&sc, 10, false);
        CHECK_OK(qm_run(&sc, sc.q));
        qm_check(sc.out, QM_N, 9);
    }
    qm_end(&sc);
}

/* Host allocations refused from the k-th on, for every k until a run refuses none: the calls return
   OK or OUT_OF_MEMORY (the batch is then discarded or fails), nothing leaks (qm_end), and once the
   allocator gives again the device runs a step with queue memory. */
static void qm_alloc_sweep_run(qm_scene* sc, long k, int* refused) {
    accel_buffer *a = NULL, *b = NULL;
    accel_result ra, rb, rs, rw = ACCEL_OK;
    long failures = atomic_load(&sc->mem.failures);
    atomic_store(&sc->mem.fail_after, k);
    ra = accel_queue_alloc(sc->q, QM_N * 4, ACCEL_MEMORY_DEVICE, &a);
    rb = accel_queue_alloc(sc->q, 300, ACCEL_MEMORY_HOST, &b);
    if (a) qm_fill(sc, sc->q, a, 70, QM_N);
    if (a) accel_queue_copy(sc->q, sc->out, 0, a, 0, QM_N * 4);
    if (a) accel_queue_free(sc->q, a);
    accel_buffer_destroy(b);
    accel_queue_signal(sc->q, sc->s, ++sc->next);
    rs = accel_queue_submit(sc->q);
    if (rs == ACCEL_OK) rw = accel_signal_wait(sc->s, sc->next, ACCEL_WAIT_FOREVER);
    atomic_store(&sc->mem.fail_after, -1);
    *refused = atomic_load(&sc->mem.failures) != failures;
    CHECK(ra == ACCEL_OK || ra == ACCEL_ERROR_OUT_OF_MEMORY);
    CHECK(rb == ACCEL_OK || rb == ACCEL_ERROR_OUT_OF_MEMORY);
    CHECK((ra == ACCEL_OK) == (a != NULL));
    CHECK(rs == ACCEL_OK || rs == ACCEL_ERROR_OUT_OF_MEMORY);
    CHECK(rw == ACCEL_OK || rw == ACCEL_ERROR_SIGNAL_FAILED);
    if (!*refused) { CHECK_OK(rs); CHECK_OK(rw); qm_check(sc->out, QM_N, 70); }
    CHECK_OK(accel_queue_finish(sc->q, ACCEL_WAIT_FOREVER));
    if (rs != ACCEL_OK || rw != ACCEL_OK) {   /* the signal may be failed or behind: a new one */
        accel_signal_destroy(sc->s);
        if (!CHECK_OK(accel_signal_create(sc->dev, 0, &sc->s))) return;
        sc->next = 0;
    }
    qm_steps(sc, 10, false);
    CHECK_OK(qm_run(sc, sc->q));
    qm_check(sc->out, QM_N, 9);
}
TEST(qmem_host_allocation_failures) {
    int refused = 1;
    for (long k = 0; refused && k < 200 && !TEST_FAILED_SO_FAR(); k++) {
        qm_scene sc;
        if (qm_make(&sc)) qm_alloc_sweep_run(&sc, k, &refused);
        qm_end(&sc);
    }
    CHECK(!refused);
}

/* Recording errors: returned by the call and by the next submit, which discards the batch. */
TEST(qmem_recording_errors) {
    qm_scene sc;
    if (qm_make(&sc)) {
        accel_buffer *a = (accel_buffer*)&sc, *b = NULL;
        accel_commands* list = NULL;
        CHECK_RESULT(accel_queue_alloc(NULL, 64, ACCEL_MEMORY_DEVICE, &a), ACCEL_ERROR_INVALID_ARGUMENT);
        CHECK(a == NULL);
        accel_queue_free(NULL, sc.out);
        struct { size_t size; int memory; } bad[3] = { { 0, ACCEL_MEMORY_DEVICE }, { 64, 7 }, { 64, -1 } };
        for (int i = 0; i < 3; i++) {
            a = (accel_buffer*)&sc;
            qm_fill(&sc, sc.q, sc.out, 1, QM_N);
            CHECK_RESULT(accel_queue_alloc(sc.q, bad[i].size, (accel_memory)bad[i].memory, &a),
                         ACCEL_ERROR_INVALID_ARGUMENT);
            CHECK(a == NULL);
            CHECK_RESULT(accel_queue_submit(sc.q), ACCEL_ERROR_INVALID_ARGUMENT);
        }
        CHECK_RESULT(accel_queue_alloc(sc.q, 64, ACCEL_MEMORY_DEVICE, NULL), ACCEL_ERROR_INVALID_ARGUMENT);
        CHECK_RESULT(accel_queue_submit(sc.q), ACCEL_ERROR_INVALID_ARGUMENT);
        accel_queue_free(sc.q, NULL);
        CHECK_RESULT(accel_queue_submit(sc.q), ACCEL_ERROR_INVALID_ARGUMENT);
        accel_queue_free(sc.q, sc.out);                          /* not from accel_queue_alloc */
        CHECK_RESULT(accel_queue_submit(sc.q), ACCEL_ERROR_INVALID_ARGUMENT);
        {   /* a timestamp into queue memory: a GPU writes it from the host once the segment completed,
               when a free after it may have handed the memory to another buffer already */
            accel_buffer* t = NULL;
            REQUIRE_OK(accel_queue_alloc(sc.q, 64, ACCEL_MEMORY_DEVICE, &t));
            CHECK_OK(accel_queue_submit(sc.q));
            test_log_reset();
            accel_queue_timestamp(sc.q, t, 0);
            CHECK_RESULT(accel_queue_submit(sc.q), ACCEL_ERROR_INVALID_ARGUMENT);
            CHECK(test_log_contains("accel_queue_timestamp: dst is queue memory"));   /* not its offset */
            CHECK(!test_log_contains("multiple of 8"));
            accel_queue_free(sc.q, t);
            CHECK_OK(accel_queue_submit(sc.q));
        }
        /* nothing ran of those batches */
        CHECK_EQ_U64(test_buffer_u32(sc.out, 5), 0);
        /* in a command list: neither */
        REQUIRE_OK(accel_queue_alloc(sc.q, 64, ACCEL_MEMORY_DEVICE, &b));
        REQUIRE_OK(accel_queue_record_begin(sc.q));
        CHECK_RESULT(accel_queue_alloc(sc.q, 64, ACCEL_MEMORY_DEVICE, &a), ACCEL_ERROR_INVALID_ARGUMENT);
        CHECK(a == NULL);
        CHECK_RESULT(accel_queue_record_end(sc.q, &list), ACCEL_ERROR_INVALID_ARGUMENT);
        REQUIRE_OK(accel_queue_record_begin(sc.q));
        accel_queue_free(sc.q, b);
        CHECK_RESULT(accel_queue_record_end(sc.q, &list), ACCEL_ERROR_INVALID_ARGUMENT);
        accel_queue_free(sc.q, b);                               /* still b's: the list's free did nothing */
        accel_queue_free(sc.q2, sc.out);
        CHECK_OK(accel_queue_submit(sc.q));
        CHECK_RESULT(accel_queue_submit(sc.q2), ACCEL_ERROR_INVALID_ARGUMENT);
        {   /* freed already: found while that free has not completed (held here behind a gate) */
            accel_signal* gate = NULL;
            REQUIRE_OK(accel_signal_create(sc.dev, 0, &gate));
            REQUIRE_OK(accel_queue_alloc(sc.q, 64, ACCEL_MEMORY_DEVICE, &a));
            accel_queue_wait(sc.q, gate, 1);
            accel_queue_free(sc.q, a);
            CHECK_OK(accel_queue_submit(sc.q));
            test_log_reset();
            accel_queue_free(sc.q, a);
            CHECK_RESULT(accel_queue_submit(sc.q), ACCEL_ERROR_INVALID_ARGUMENT);
            CHECK(test_log_contains("freed already"));
            CHECK_OK(accel_signal_set(gate, 1));
            CHECK_OK(accel_queue_finish(sc.q, ACCEL_WAIT_FOREVER));
            accel_signal_destroy(gate);
        }
        {   /* another device's handle, even a CPU device's (whose buffers a CPU queue may use) */
            accel_device* other = NULL;
            accel_queue* oq = NULL;
            accel_buffer* c = NULL;
            accel_device_desc d;
            memset(&d, 0, sizeof d);
            d.backend = accel_cpu_backend();
            d.label = "other";
            if (CHECK_OK(test_device_create_desc(d, &other)) &&
                CHECK_OK(accel_queue_create(other, ACCEL_QUEUE_COMPUTE, &oq)) &&
                CHECK_OK(accel_queue_alloc(oq, 64, ACCEL_MEMORY_DEVICE, &c))) {
                accel_queue_free(sc.q, c);
                CHECK_RESULT(accel_queue_submit(sc.q), ACCEL_ERROR_INVALID_ARGUMENT);
                accel_queue_free(oq, c);   /* still the other queue's to free */
                CHECK_OK(accel_queue_finish(oq, ACCEL_WAIT_FOREVER));
            }
            accel_queue_destroy(oq);
            accel_device_destroy(other);
        }
    }
    qm_end(&sc);
}

/* ==== lifetimes ==== */
/* accel_buffer_destroy instead of free, before the work using it was even submitted: the memory lives
   until that work is done, then goes back to the pool (another queue's alloc takes it: no growth). */
TEST(qmem_destroy_instead_of_free) {
    qm_scene sc;
    if (qm_make(&sc)) {
        accel_buffer *a = NULL, *b = NULL;
        long live;
        qm_steps(&sc, 20, true);   /* both queues have run a batch (recycled: kept for the next) */
        REQUIRE_OK(accel_queue_alloc(sc.q, QM_N * 4, ACCEL_MEMORY_DEVICE, &a));
        qm_fill(&sc, sc.q, a, 77, QM_N);
        accel_queue_copy(sc.q, sc.out, 0, a, 0, QM_N * 4);
        accel_buffer_destroy(a);
        REQUIRE_OK(qm_run(&sc, sc.q));
        qm_check(sc.out, QM_N, 77);
        live = qm_live(&sc);
        REQUIRE_OK(accel_queue_alloc(sc.q2, QM_N * 4, ACCEL_MEMORY_DEVICE, &b));
        CHECK(atomic_load(&sc.mem.outstanding) <= live + 1);   /* the handle at most */
        accel_buffer_destroy(b);
        CHECK_EQ_INT(qm_live(&sc), live);
    }
    qm_end(&sc);
}

/* Queues and devices destroyed with allocations neither freed nor destroyed, with work pending: the
   queue destroy finishes the work, the device destroy releases everything (the allocator shows no
   leak: see qm_end). */
TEST(qmem_teardown_with_allocations_pending) {
    qm_scene sc;
    if (qm_make(&sc)) {
        accel_buffer* a[4] = { NULL, NULL, NULL, NULL };
        for (int i = 0; i < 4; i++) {
            accel_queue* q = i % 2 ? sc.q2 : sc.q;
            REQUIRE_OK(accel_queue_alloc(q, (size_t)(i + 1) * 1000, ACCEL_MEMORY_DEVICE, &a[i]));
            qm_fill(&sc, q, a[i], 1, 250);
        }
        accel_queue_free(sc.q, a[0]);
        REQUIRE_OK(accel_queue_submit(sc.q));
        REQUIRE_OK(accel_queue_submit(sc.q2));
        qm_fill(&sc, sc.q, a[2], 1, 250);   /* unsubmitted */
        accel_queue_destroy(sc.q);
        sc.q = NULL;
        qm_fill(&sc, sc.q2, a[3], 1, 250);
        accel_queue_copy(sc.q2, sc.out, 0, a[3], 0, 1000);
        REQUIRE_OK(accel_queue_submit(sc.q2));
    }
    qm_end(&sc);
}

/* Memory at its point: an alloc point dropped with its batch (a failed wait before it) gives the handle
   no memory; a later batch that uses it fails where it does, with the same reason. Where the wait for
   the gate (raised by the host) is held on the host: the CPU, CUDA's ring mode, Vulkan on lavapipe (one
   VkQueue, shared: such a wait is gated); a GPU waiting on the device runs the alloc point behind it
   and the failure reaches only what waits for it (accel.h, "Failure after hand-off"). */
TEST(qmem_alloc_point_dropped_with_its_batch) {
    qm_scene sc;
    accel_signal *gate = NULL, *s2 = NULL;
    if (qm_make(&sc)) {
        if (!test_backend_is_cpu() && !qm_cuda_ring() && !(qm_on_vulkan() && qm_is_lavapipe(sc.dev))) {
            qm_end(&sc);
            SKIP("the gate's wait may go to the device here: its failure does not drop the alloc point");
        }
        accel_buffer* a = NULL;
        uint32_t word = 0;
        REQUIRE_OK(accel_signal_create(sc.dev, 0, &gate));
        REQUIRE_OK(accel_signal_create(sc.dev, 0, &s2));
        REQUIRE_OK(test_buffer_set_u32(sc.out, QM_N, 5));
        accel_queue_wait(sc.q, gate, 1);
        REQUIRE_OK(accel_queue_alloc(sc.q, QM_N * 4, ACCEL_MEMORY_DEVICE, &a));
        accel_queue_signal(sc.q, sc.s, ++sc.next);
        REQUIRE_OK(accel_queue_submit(sc.q));
        qm_fill(&sc, sc.q, a, 1, QM_N);                 /* a later batch */
        accel_queue_copy(sc.q, sc.out, 0, a, 0, QM_N * 4);
        accel_queue_signal(sc.q, s2, 1);
        REQUIRE_OK(accel_queue_submit(sc.q));
        REQUIRE_OK(accel_signal_fail(gate, ACCEL_ERROR_BACKEND));
        CHECK_RESULT(accel_signal_wait(s2, 1, ACCEL_WAIT_FOREVER), ACCEL_ERROR_SIGNAL_FAILED);
        CHECK_EQ_U64(accel_signal_value(s2), accel_signal_value(gate));   /* the same reason */
        CHECK_EQ_U64(test_buffer_u32(sc.out, 0), 5);   /* the copy never ran */
        CHECK(accel_buffer_map(a) == NULL);
        CHECK(accel_buffer_read(a, 0, &word, 4) != ACCEL_OK);
        accel_queue_free(sc.q, a);
        CHECK_OK(accel_queue_finish(sc.q, ACCEL_WAIT_FOREVER));
        accel_signal_destroy(gate);
        accel_signal_destroy(s2);
    }
    qm_end(&sc);
}

/* An alloc point without memory in the middle of a batch with no wait (on a GPU one segment, cut there):
   the commands before it run and the signal between them is reached; the rest is dropped: a command
   after it never runs, the batch's last signal fails with OUT_OF_MEMORY, an alloc point after it gives
   its handle no memory (its uses fail with the same reason), and a free after it is as if the handle
   had been destroyed (its memory back once the batch is done). The queue goes on. */
TEST(qmem_alloc_point_fails_mid_segment) {
    qm_scene sc;
    accel_signal* s1 = NULL;
    if (qm_make(&sc)) {
        accel_buffer *a = NULL, *big = NULL, *b = NULL;
        size_t huge = sizeof(size_t) >= 8 ? (size_t)1 << 46 : (size_t)1 << 30;
        uint32_t word = 0;
        uint64_t failed;
        long live;
        qm_steps(&sc, 10, false);
        live = qm_live(&sc);
        sc.mem.refuse_above = (size_t)1 << 29;
        REQUIRE_OK(accel_signal_create(sc.dev, 0, &s1));
        REQUIRE_OK(accel_queue_alloc(sc.q, QM_STEP, ACCEL_MEMORY_DEVICE, &a));
        qm_fill(&sc, sc.q, a, 40, QM_N);
        accel_queue_copy(sc.q, sc.out, 0, a, 0, QM_N * 4);
        accel_queue_signal(sc.q, s1, 1);
        REQUIRE_OK(accel_queue_alloc(sc.q, huge, ACCEL_MEMORY_DEVICE, &big));   /* no memory here */
        qm_add(&sc, sc.q, sc.out, QM_N);                                          /* dropped */
        REQUIRE_OK(accel_queue_alloc(sc.q, 64, ACCEL_MEMORY_HOST, &b));           /* its point dropped */
        accel_queue_fill(sc.q, b, 0, 64, 3);
        accel_queue_free(sc.q, a);                                                /* dropped */
        accel_queue_signal(sc.q, sc.s, ++sc.next);
        REQUIRE_OK(accel_queue_submit(sc.q));
        CHECK_RESULT(accel_signal_wait(sc.s, sc.next, ACCEL_WAIT_FOREVER), ACCEL_ERROR_SIGNAL_FAILED);
        CHECK_OK(accel_signal_wait(s1, 1, ACCEL_WAIT_FOREVER));
        CHECK_EQ_U64(accel_signal_value(s1), 1);
        if (qm_oom_is_out_of_memory(sc.dev))
            CHECK_EQ_U64(accel_signal_value(sc.s),
                         ACCEL_SIGNAL_MAX + 1 + (uint64_t)-(int64_t)ACCEL_ERROR_OUT_OF_MEMORY);
        CHECK_OK(accel_queue_finish(sc.q, ACCEL_WAIT_FOREVER));
        qm_check(sc.out, QM_N, 40);                                               /* the add never ran */
        CHECK(accel_buffer_map(b) == NULL);
        if (qm_oom_is_out_of_memory(sc.dev))
            CHECK_RESULT(accel_buffer_read(b, 0, &word, 4), ACCEL_ERROR_OUT_OF_MEMORY);
        /* a later batch that uses b fails where it does, with the same reason */
        failed = accel_signal_value(sc.s);
        accel_signal_destroy(sc.s);
        REQUIRE_OK(accel_signal_create(sc.dev, 0, &sc.s));
        sc.next = 0;
        qm_add(&sc, sc.q, sc.out, QM_N);                                          /* runs */
        accel_queue_copy(sc.q, sc.out, 0, b, 0, 64);                              /* fails */
        accel_queue_free(sc.q, b);
        accel_queue_free(sc.q, big);
        CHECK_RESULT(qm_run(&sc, sc.q), ACCEL_ERROR_SIGNAL_FAILED);
        CHECK_EQ_U64(accel_signal_value(sc.s), failed);
        CHECK_OK(accel_queue_finish(sc.q, ACCEL_WAIT_FOREVER));
        qm_check(sc.out, QM_N, 41);
        accel_signal_destroy(sc.s);
        REQUIRE_OK(accel_signal_create(sc.dev, 0, &sc.s));
        sc.next = 0;
        sc.mem.refuse_above = 0;
        qm_steps(&sc, 10, false);
        CHECK_OK(qm_run(&sc, sc.q));
        qm_check(sc.out, QM_N, 9);
        accel_signal_destroy(s1);
        /* a's memory came back: the steps took no more than before (a batch or a few handles at most) */
        CHECK(qm_live(&sc) <= live + 8);
    }
    qm_end(&sc);
}

/* The queue that uses the buffer is submitted before the one that allocates it (its wait orders them):
   it runs once the alloc's point is passed, on every backend. */
TEST(qmem_used_by_a_queue_submitted_before_the_alloc) {
    qm_scene sc;
    accel_signal* s1 = NULL;
    if (qm_make(&sc)) {
        accel_buffer* a = NULL;
        REQUIRE_OK(accel_signal_create(sc.dev, 0, &s1));
        REQUIRE_OK(accel_queue_alloc(sc.q, QM_STEP, ACCEL_MEMORY_DEVICE, &a));
        accel_queue_wait(sc.q2, s1, 1);
        qm_add(&sc, sc.q2, a, QM_N);
        accel_queue_copy(sc.q2, sc.out, 0, a, 0, QM_N * 4);
        accel_queue_free(sc.q2, a);
        accel_queue_signal(sc.q2, sc.s, ++sc.next);
        REQUIRE_OK(accel_queue_submit(sc.q2));
        qm_fill(&sc, sc.q, a, 60, QM_N);
        accel_queue_signal(sc.q, s1, 1);
        REQUIRE_OK(accel_queue_submit(sc.q));
        REQUIRE_OK(accel_signal_wait(sc.s, sc.next, ACCEL_WAIT_FOREVER));
        qm_check(sc.out, QM_N, 61);
        accel_signal_destroy(s1);
    }
    qm_end(&sc);
}

/* ==== views and lists ==== */
/* A view of an accel_queue_alloc buffer, and a recorded list replayed with such a buffer patched in
   (exec binding and copy source). */
TEST(qmem_views_and_patched_lists) {
    qm_scene sc;
    if (qm_make(&sc)) {
        accel_device_info info;
        accel_buffer *a = NULL, *v = NULL, *plain = NULL;
        accel_commands* list = NULL;
        REQUIRE_OK(accel_device_info_get(sc.dev, &info));
        size_t off = info.buffer_offset_alignment > 256 ? info.buffer_offset_alignment : 256;
        REQUIRE_OK(test_buffer_create(sc.dev, QM_N * 4, ACCEL_MEMORY_DEVICE, &plain));
        REQUIRE_OK(accel_queue_alloc(sc.q, off + QM_N * 4, ACCEL_MEMORY_DEVICE, &a));
        REQUIRE_OK(accel_buffer_view_create(a, off, QM_N * 4, &v));
        qm_fill(&sc, sc.q, a, 0, (uint32_t)(off / 4) + QM_N);
        qm_add(&sc, sc.q, v, QM_N);
        accel_queue_copy(sc.q, sc.out, 0, v, 0, QM_N * 4);
        REQUIRE_OK(qm_run(&sc, sc.q));
        qm_check(sc.out, QM_N, (uint32_t)(off / 4) + 1);
        accel_buffer_destroy(v);
        /* the list: fill plain with i + c, copy plain to out */
        REQUIRE_OK(accel_queue_record_begin(sc.q));
        qm_fill(&sc, sc.q, plain, 9, QM_N);
        accel_queue_copy(sc.q, sc.out, 0, plain, 0, QM_N * 4);
        REQUIRE_OK(accel_queue_record_end(sc.q, &list));
        accel_patch p[3] = { { 0, 0, a, 0 }, { 1, 1, a, 0 }, { 0, 0, NULL, 300 } };
        accel_queue_replay(sc.q, list, p, 3);
        accel_queue_free(sc.q, a);
        REQUIRE_OK(qm_run(&sc, sc.q));
        qm_check(sc.out, QM_N, 300);
        CHECK_EQ_U64(test_buffer_u32(plain, 0), 0);   /* patched away: untouched */
        accel_commands_destroy(list);
        /* a list that uses the buffer itself, recorded right after its alloc (the batch holds the
           alloc alone), with a view made before its point; replayed twice, then freed */
        list = NULL;
        REQUIRE_OK(accel_queue_alloc(sc.q, off + QM_N * 4, ACCEL_MEMORY_DEVICE, &a));
        REQUIRE_OK(accel_buffer_view_create(a, off, QM_N * 4, &v));
        REQUIRE_OK(accel_queue_record_begin(sc.q));
        qm_fill(&sc, sc.q, a, 0, (uint32_t)(off / 4) + QM_N);
        qm_add(&sc, sc.q, v, QM_N);
        accel_queue_copy(sc.q, sc.out, 0, v, 0, QM_N * 4);
        REQUIRE_OK(accel_queue_record_end(sc.q, &list));
        accel_queue_replay(sc.q, list, NULL, 0);
        accel_queue_replay(sc.q, list, NULL, 0);
        accel_queue_free(sc.q, a);
        REQUIRE_OK(qm_run(&sc, sc.q));
        qm_check(sc.out, QM_N, (uint32_t)(off / 4) + 1);
        accel_buffer_destroy(v);
        accel_commands_destroy(list);
    }
    qm_end(&sc);
}

/* An indirect exec whose counts live in queue memory (written by an update in the same batch). */
TEST(qmem_counts_of_an_indirect_exec) {
    qm_scene sc;
    if (qm_make(&sc)) {
        static const uint32_t local[3] = { 64, 1, 1 };
        uint32_t counts[3] = { QM_N / 64, 1, 1 }, k[2] = { 500, QM_N };
        accel_buffer* c = NULL;
        REQUIRE_OK(accel_queue_alloc(sc.q, 12, ACCEL_MEMORY_DEVICE, &c));
        accel_queue_update(sc.q, c, 0, counts, sizeof counts);
        accel_queue_exec_indirect(sc.q, sc.fill, &sc.out, 1, k, 2, local, c, 0);
        accel_queue_free(sc.q, c);
        REQUIRE_OK(qm_run(&sc, sc.q));
        qm_check(sc.out, QM_N, 500);
    }
    qm_end(&sc);
}

/* accel_device_recover with queue memory in every state: a handle alive, roots free in the pool, a
   handle destroyed while its work was pending. After it, the old handles and the old queue are stale
   (DEVICE_LOST where used, destroying them is fine) and a new queue allocates from the new generation. */
/* An alloc point behind a wait whose signal fails: the batch never reaches it (on the CPU and Vulkan;
   a CUDA point is enqueued on the stream before the failure is known, and gets its memory), and the
   handle's read, write and view return the batch's reason, not OUT_OF_MEMORY. */
TEST(qmem_point_behind_a_failed_wait_has_the_batch_reason) {
    qm_scene sc;
    if (qm_make(&sc)) {
        accel_signal* gate = NULL;
        accel_buffer *a = NULL, *v = NULL;
        uint32_t word = 0;
        REQUIRE_OK(accel_signal_create(sc.dev, 0, &gate));
        accel_queue_wait(sc.q, gate, 1);
        REQUIRE_OK(accel_queue_alloc(sc.q, 256, ACCEL_MEMORY_DEVICE, &a));
        accel_queue_fill(sc.q, a, 0, 256, 7);
        accel_queue_signal(sc.q, sc.s, ++sc.next);
        REQUIRE_OK(accel_queue_submit(sc.q));
        CHECK_OK(accel_signal_fail(gate, ACCEL_ERROR_BACKEND));
        CHECK_RESULT(accel_signal_wait(sc.s, sc.next, ACCEL_WAIT_FOREVER), ACCEL_ERROR_SIGNAL_FAILED);
        CHECK_OK(accel_queue_finish(sc.q, ACCEL_WAIT_FOREVER));
#if defined(ACCEL_TEST_HAVE_CUDA)
        bool cuda = test_g.backend == accel_cuda_backend();
#else
        bool cuda = false;
#endif
        if (!cuda || accel_buffer_read(a, 0, &word, 4) != ACCEL_OK) {
            CHECK_RESULT(accel_buffer_read(a, 0, &word, 4), ACCEL_ERROR_BACKEND);
            CHECK_RESULT(accel_buffer_write(a, 0, &word, 4), ACCEL_ERROR_BACKEND);
            CHECK_RESULT(accel_buffer_view_create(a, 0, 64, &v), ACCEL_ERROR_BACKEND);
            CHECK(test_log_contains("has no memory"));
        }
        accel_queue_free(sc.q, a);
        CHECK_OK(accel_queue_submit(sc.q));
        accel_signal_destroy(gate);
        qm_end(&sc);
    }
}

/* An alloc point of a batch that submit discarded (a recording error of another command): the handle
   never gets memory; its read, write and view return the batch's reason (the view was made, the read
   said "not reached"); a later batch that uses it fails; its free still ends it. */
TEST(qmem_point_of_a_discarded_batch_has_its_reason) {
    qm_scene sc;
    if (qm_make(&sc)) {
        accel_buffer *a = NULL, *v = NULL;
        uint32_t word = 0;
        REQUIRE_OK(accel_queue_alloc(sc.q, 256, ACCEL_MEMORY_HOST, &a));
        accel_queue_fill(sc.q, a, 0, 256, 7);
        accel_queue_fill(sc.q, sc.out, 1, 4, 0);   /* offset not a multiple of 4: the batch is discarded */
        CHECK_RESULT(accel_queue_submit(sc.q), ACCEL_ERROR_INVALID_ARGUMENT);
        test_log_reset();
        CHECK_RESULT(accel_buffer_read(a, 0, &word, 4), ACCEL_ERROR_INVALID_ARGUMENT);
        CHECK(test_log_contains("has no memory"));
        CHECK_RESULT(accel_buffer_write(a, 0, &word, 4), ACCEL_ERROR_INVALID_ARGUMENT);
        CHECK_RESULT(accel_buffer_view_create(a, 0, 64, &v), ACCEL_ERROR_INVALID_ARGUMENT);
        CHECK(v == NULL);
        CHECK(accel_buffer_map(a) == NULL);
        accel_queue_fill(sc.q, a, 0, 256, 9);
        accel_queue_signal(sc.q, sc.s, ++sc.next);
        CHECK_OK(accel_queue_submit(sc.q));
        CHECK_RESULT(accel_signal_wait(sc.s, sc.next, ACCEL_WAIT_FOREVER), ACCEL_ERROR_SIGNAL_FAILED);
        CHECK_EQ_U64(accel_signal_value(sc.s), ACCEL_SIGNAL_MAX + 1 + (uint64_t)-(int64_t)ACCEL_ERROR_INVALID_ARGUMENT);
        accel_queue_free(sc.q, a);
        CHECK_OK(accel_queue_finish(sc.q, ACCEL_WAIT_FOREVER));
        CHECK_EQ_U64(test_buffer_u32(sc.out, 0), 0);   /* nothing ran of the discarded batch */
        qm_end(&sc);
    }
}

/* A replay with no patches in a batch that takes queue memory: its look for handles without memory
   found the patches at the batch's arena, which a batch of no exec has not (UBSan, no-threads: a zero
   offset applied to NULL; helper 98). */
TEST(qmem_replay_without_patches_beside_an_alloc) {
    qm_scene sc;
    if (qm_make(&sc)) {
        accel_commands* list = NULL;
        accel_buffer* tmp = NULL;
        REQUIRE_OK(accel_queue_record_begin(sc.q));
        qm_fill(&sc, sc.q, sc.out, 7, QM_N);
        REQUIRE_OK(accel_queue_record_end(sc.q, &list));
        REQUIRE_OK(accel_queue_alloc(sc.q, 256, ACCEL_MEMORY_HOST, &tmp));
        accel_queue_replay(sc.q, list, NULL, 0);
        accel_queue_free(sc.q, tmp);
        CHECK_OK(accel_queue_finish(sc.q, ACCEL_WAIT_FOREVER));
        qm_check(sc.out, QM_N, 7);
        accel_commands_destroy(list);
        qm_end(&sc);
    }
}

TEST(qmem_recover_with_allocations) {
    qm_scene sc;
    if (qm_make(&sc)) {
        accel_buffer *a = NULL, *b = NULL, *c = NULL, *d = NULL;
        accel_queue* q3 = NULL;
        accel_result r;
        REQUIRE_OK(accel_queue_alloc(sc.q, QM_N * 4, ACCEL_MEMORY_DEVICE, &a));   /* kept by the caller */
        REQUIRE_OK(accel_queue_alloc(sc.q, QM_N * 4, ACCEL_MEMORY_HOST, &b));
        REQUIRE_OK(accel_queue_alloc(sc.q, 100, ACCEL_MEMORY_DEVICE, &c));
        qm_fill(&sc, sc.q, a, 1, QM_N);
        qm_fill(&sc, sc.q, b, 1, QM_N);
        accel_queue_free(sc.q, b);                 /* its root: free in the pool */
        accel_buffer_destroy(c);                   /* its root: back once the batch is done */
        REQUIRE_OK(qm_run(&sc, sc.q));
        r = accel_device_recover(sc.dev);
        if (r == ACCEL_ERROR_UNSUPPORTED) { qm_end(&sc); SKIP("accel_device_recover is unsupported here"); }
        REQUIRE_OK(r);
        /* stale: the handle, the queue */
        REQUIRE_OK(accel_queue_create(sc.dev, ACCEL_QUEUE_COMPUTE, &q3));
        accel_queue_free(q3, a);
        CHECK_RESULT(accel_queue_submit(q3), ACCEL_ERROR_DEVICE_LOST);
        CHECK_RESULT(accel_queue_alloc(sc.q, 64, ACCEL_MEMORY_DEVICE, &d), ACCEL_ERROR_DEVICE_LOST);
        CHECK(d == NULL);
        CHECK_RESULT(accel_queue_submit(sc.q), ACCEL_ERROR_DEVICE_LOST);
        accel_buffer_destroy(a);
        /* the new generation: a step through queue memory on the new queue */
        accel_buffer* out = NULL;
        accel_signal* s = NULL;
        REQUIRE_OK(test_buffer_create(sc.dev, QM_N * 4, ACCEL_MEMORY_HOST, &out));
        REQUIRE_OK(accel_signal_create(sc.dev, 0, &s));
        accel_program* fill = NULL;
        REQUIRE_OK(test_program_create(sc.dev, TK_FILL_INDEX, &fill));
        for (int i = 0; i < 3; i++) {
            uint32_t k[2] = { 900u + (uint32_t)i, QM_N };
            REQUIRE_OK(accel_queue_alloc(q3, QM_N * 4, ACCEL_MEMORY_DEVICE, &d));
            accel_queue_exec(q3, fill, &d, 1, k, 2, accel_exec_1d(QM_N, 64));
            accel_queue_copy(q3, out, 0, d, 0, QM_N * 4);
            accel_queue_free(q3, d);
            accel_queue_signal(q3, s, (uint64_t)i + 1);
            REQUIRE_OK(accel_queue_submit(q3));
            REQUIRE_OK(accel_signal_wait(s, (uint64_t)i + 1, ACCEL_WAIT_FOREVER));
            qm_check(out, QM_N, 900u + (uint32_t)i);
        }
    }
    qm_end(&sc);
}

/* ==== threads ==== */
#if TEST_HAVE_THREADS
typedef struct qm_worker { qm_scene* sc; accel_queue* q; accel_signal* s; int bad; } qm_worker;
/* 500 steps on its own queue, each alloc of a size between two classes, checked through a copy. */
static void qm_worker_main(void* arg) {
    qm_worker* w = (qm_worker*)arg;
    accel_buffer* out = NULL;
    if (test_buffer_create(w->sc->dev, QM_N * 4, ACCEL_MEMORY_HOST, &out) != ACCEL_OK) { w->bad = 1; return; }
    for (uint32_t i = 0; i < 500 && !w->bad; i++) {
        accel_buffer* a = NULL;
        uint32_t n = 256 + (i % 3) * 300, k[2] = { i, n };
        accel_memory mem = i % 2 ? ACCEL_MEMORY_HOST : ACCEL_MEMORY_DEVICE;
        if (accel_queue_alloc(w->q, n * 4, mem, &a) != ACCEL_OK) w->bad = 2;
        accel_queue_exec(w->q, w->sc->fill, &a, 1, k, 2, accel_exec_1d(n, 64));
        accel_queue_copy(w->q, out, 0, a, 0, n * 4);
        if (i % 4 == 3) accel_buffer_destroy(a); else accel_queue_free(w->q, a);
        accel_queue_signal(w->q, w->s, i + 1);
        if (accel_queue_submit(w->q) != ACCEL_OK) w->bad = 3;
        if (i % 50 == 49) {
            if (accel_signal_wait(w->s, i + 1, ACCEL_WAIT_FOREVER) != ACCEL_OK) w->bad = 4;
            if (test_buffer_u32(out, n - 1) != i + n - 1) w->bad = 5;
        }
    }
    accel_buffer_destroy(out);
}
TEST(qmem_threads_on_their_own_queues) {
    qm_scene sc;
    if (qm_make(&sc)) {
        qm_worker w[2] = { { &sc, sc.q, NULL, 0 }, { &sc, sc.q2, NULL, 0 } };
        test_thread t[2];
        REQUIRE_OK(accel_signal_create(sc.dev, 0, &w[0].s));
        REQUIRE_OK(accel_signal_create(sc.dev, 0, &w[1].s));
        for (int i = 0; i < 2; i++) REQUIRE(test_thread_start(&t[i], qm_worker_main, &w[i]));
        for (int i = 0; i < 2; i++) test_thread_join(&t[i]);
        CHECK_EQ_INT(w[0].bad, 0);
        CHECK_EQ_INT(w[1].bad, 0);
    }
    qm_end(&sc);
}
/* Two threads, each recording on its own queue: T0 allocates on q, fills the memory and hands it to T1
   (after signal s0), which adds one on q2, copies it to its own out and signals s1; T0 frees each handle
   on q behind a wait for s1, once T1 recorded its use (the handles are all shared). */
enum { QM_X_STEPS = 300, QM_X_SLOTS = 8 };
typedef struct qm_xshare {
    qm_scene* sc;
    accel_signal *s0, *s1;
    accel_buffer* slot[QM_X_SLOTS];
    atomic_int made, used;
    atomic_int bad;
} qm_xshare;
static void qm_x_producer(void* arg) {
    qm_xshare* x = (qm_xshare*)arg;
    accel_buffer* mine[QM_X_SLOTS] = { 0 };
    for (int i = 0; i < QM_X_STEPS && !x->bad; i++) {
        accel_buffer* a = NULL;
        while (atomic_load(&x->made) - atomic_load(&x->used) >= QM_X_SLOTS / 2 && !x->bad) {}
        if (i >= QM_X_SLOTS / 2) {   /* T1 recorded its use of i - QM_X_SLOTS/2 already */
            accel_queue_wait(x->sc->q, x->s1, (uint64_t)(i - QM_X_SLOTS / 2) + 1);
            accel_queue_free(x->sc->q, mine[(i - QM_X_SLOTS / 2) % QM_X_SLOTS]);
        }
        accel_memory kind = i % 2 ? ACCEL_MEMORY_HOST : ACCEL_MEMORY_DEVICE;
        if (accel_queue_alloc(x->sc->q, QM_STEP, kind, &a) != ACCEL_OK) {
            x->bad = 1;
            break;
        }
        qm_fill(x->sc, x->sc->q, a, (uint32_t)i, QM_N);
        accel_queue_signal(x->sc->q, x->s0, (uint64_t)i + 1);
        if (accel_queue_submit(x->sc->q) != ACCEL_OK) x->bad = 2;
        mine[i % QM_X_SLOTS] = a;
        x->slot[i % QM_X_SLOTS] = a;
        atomic_store(&x->made, i + 1);
    }
    while (atomic_load(&x->used) < atomic_load(&x->made) && !x->bad) {}
    for (int i = QM_X_STEPS - QM_X_SLOTS / 2; i < QM_X_STEPS && !x->bad; i++) {
        accel_queue_wait(x->sc->q, x->s1, (uint64_t)i + 1);
        accel_queue_free(x->sc->q, mine[i % QM_X_SLOTS]);
    }
    if (accel_queue_submit(x->sc->q) != ACCEL_OK) x->bad = 3;
}
static void qm_x_consumer(void* arg) {
    qm_xshare* x = (qm_xshare*)arg;
    accel_buffer* out = NULL;
    if (test_buffer_create(x->sc->dev, QM_N * 4, ACCEL_MEMORY_HOST, &out) != ACCEL_OK) {
        x->bad = 10;
        return;
    }
    for (int i = 0; i < QM_X_STEPS && !x->bad; i++) {
        accel_buffer* a;
        while (atomic_load(&x->made) <= i && !x->bad) {}
        a = x->slot[i % QM_X_SLOTS];
        accel_queue_wait(x->sc->q2, x->s0, (uint64_t)i + 1);
        qm_add(x->sc, x->sc->q2, a, QM_N);
        accel_queue_copy(x->sc->q2, out, 0, a, 0, QM_N * 4);
        accel_queue_signal(x->sc->q2, x->s1, (uint64_t)i + 1);
        if (accel_queue_submit(x->sc->q2) != ACCEL_OK) x->bad = 11;
        atomic_store(&x->used, i + 1);
        if (i % 25 == 24) {
            if (accel_signal_wait(x->s1, (uint64_t)i + 1, ACCEL_WAIT_FOREVER) != ACCEL_OK) x->bad = 12;
            else if (test_buffer_u32(out, 7) != (uint32_t)i + 8) x->bad = 13;
        }
    }
    accel_buffer_destroy(out);
}
TEST(qmem_threads_share_handles_across_queues) {
    qm_scene sc;
    if (qm_make(&sc)) {
        static qm_xshare x;
        test_thread t[2];
        memset(&x, 0, sizeof x);
        x.sc = &sc;
        REQUIRE_OK(accel_signal_create(sc.dev, 0, &x.s0));
        REQUIRE_OK(accel_signal_create(sc.dev, 0, &x.s1));
        REQUIRE(test_thread_start(&t[0], qm_x_producer, &x));
        REQUIRE(test_thread_start(&t[1], qm_x_consumer, &x));
        test_thread_join(&t[0]);
        test_thread_join(&t[1]);
        CHECK_EQ_INT(x.bad, 0);
        qm_live(&sc);
        accel_signal_destroy(x.s0);
        accel_signal_destroy(x.s1);
    }
    qm_end(&sc);
}
#endif

int main(int argc, char** argv) {
    test_begin(argc, argv);
    RUN(qmem_every_command_reaches_the_memory);
    RUN(qmem_reuse_on_the_same_queue_without_a_host_wait);
    RUN(qmem_batches_submitted_ahead_hold_one_chunk);
    RUN(qmem_ten_thousand_steps_without_growth);
    RUN(qmem_vulkan_buffers_share_memory_blocks);
    RUN(qmem_host_access_from_the_point);
    RUN(qmem_used_by_another_queue_between_signals);
    RUN(qmem_alloc_and_free_around_a_failed_wait);
    RUN(qmem_free_behind_a_failed_signal_keeps_the_memory_for_its_users);
    RUN(qmem_out_of_memory_when_the_command_runs);
    RUN(qmem_shared_handle_pending_when_the_device_is_destroyed);
    RUN(qmem_shared_handle_kept_by_a_view_across_recover);
    RUN(qmem_shared_handles_stay_bounded);
    RUN(qmem_recording_errors);
    RUN(qmem_host_allocation_failures);
    RUN(qmem_destroy_instead_of_free);
    RUN(qmem_teardown_with_allocations_pending);
    RUN(qmem_alloc_point_dropped_with_its_batch);
    RUN(qmem_alloc_point_fails_mid_segment);
    RUN(qmem_used_by_a_queue_submitted_before_the_alloc);
    RUN(qmem_views_and_patched_lists);
    RUN(qmem_counts_of_an_indirect_exec);
    RUN(qmem_point_behind_a_failed_wait_has_the_batch_reason);
    RUN(qmem_point_of_a_discarded_batch_has_its_reason);
    RUN(qmem_replay_without_patches_beside_an_alloc);
    RUN(qmem_recover_with_allocations);
#if TEST_HAVE_THREADS
    RUN(qmem_threads_on_their_own_queues);
    RUN(qmem_threads_share_handles_across_queues);
#endif
    return test_end();
}

/* tests/test_device_waits.c — a CUDA queue's wait on a CPU signal runs on the GPU (DESIGN 7.2: the CPU
   signal's word registered as mapped memory; accel_cuda.h, "cuda: CPU signals on the GPU"): the wait is
   enqueued at submit (no host thread gates it), the copy behind it sees what the CPU queue wrote, a
   failure of the CPU signal releases the waiting stream and reaches the later signals with its reason,
   chains across many queues, teardown in every order (the CPU signal, its device, the CUDA device, a
   recover of the CUDA device), a second GPU (the mock's MOCK_CUDA_DEVICES=2) waiting on the host. In the
   ring mode (ACCEL_CUDA_NO_MEMOPS=1) the same programs run with the waits gated on the host. Other
   backends: skipped (a CPU queue's waits are its executor's; Vulkan keeps the host path). */
#define ACCEL_IMPLEMENTATION
#include "accel.h"
#include "test.h"
#if defined(ACCEL_TEST_HAVE_CUDA) && !defined(_WIN32)
#  include <dlfcn.h>
#  define WAITS_MOCK 1
#else
#  define WAITS_MOCK 0
#endif

#ifdef ACCEL_TEST_HAVE_CUDA
/* The mock driver's count of stream memory operations enqueued so far (tests/mock_cuda.c); -1 where
   the driver is not the mock. */
static long long mock_memops(void) {
#if WAITS_MOCK
    const char* path = getenv("ACCEL_CUDA_LIBRARY");
    void *lib, *sym;
    unsigned long long (*fn)(int);
    if (!path || !strstr(path, "mock")) return -1;
    if (!(lib = dlopen(path, RTLD_NOW | RTLD_NOLOAD)) || !(sym = dlsym(lib, "mock_cuda_calls"))) return -1;
    memcpy(&fn, &sym, sizeof sym);
    return (long long)fn(1);
#else
    return -1;
#endif
}
/* The scene: a CUDA device (the backend under test), a CPU device. 0 when the backend is not CUDA. */
typedef struct scene { accel_device *gpu, *cpu; bool on_gpu; } scene;
static int scene_open(scene* sc) {
    accel_device_desc desc;
    accel_peer_info pi;
    memset(sc, 0, sizeof *sc);
    if (test_g.backend != accel_cuda_backend()) return 0;
    memset(&desc, 0, sizeof desc);
    desc.backend = accel_cpu_backend();
    desc.label = "cpu";
    if (!CHECK_OK(test_device_create(&sc->gpu)) || !CHECK_OK(test_device_create_desc(desc, &sc->cpu)) ||
        !CHECK_OK(accel_device_peer_info(sc->gpu, sc->cpu, &pi)))
        return 0;
    /* on the GPU exactly where the device has stream memory operations (not the ring mode) */
    CHECK_EQ_INT(pi.device_waits, accel_i_cu_dev(sc->gpu)->memops);
    sc->on_gpu = pi.device_waits;
    return 1;
}
static void scene_close(scene* sc) {
    accel_device_destroy(sc->gpu);
    accel_device_destroy(sc->cpu);
}
#define SCENE(sc) \
    scene sc; \
    if (!scene_open(&sc)) { \
        scene_close(&sc); \
        if (!TEST_FAILED_SO_FAR()) SKIP("CUDA backend only (a CPU signal waited on by a CUDA queue)"); \
        return; \
    }
/* The CPU signal's device word: its value as the GPU sees it; UINT64_MAX when it has none. */
static uint64_t word_of(accel_signal* s) {
    accel_i_dword* d = accel_i_dword_of(s);
    uint64_t v = UINT64_MAX;
    accel_i_spin_lock(&d->lock);
    if (d->word) v = atomic_load(d->word);
    accel_i_spin_unlock(&d->lock);
    return v;
}

/* A CPU queue fills a CPU buffer behind a host gate and signals s; a CUDA queue waits for s, copies
   the buffer into its own, signals done. With device waits the CUDA batch is on the stream when
   accel_queue_submit returns (its wait and its point enqueued by the submitting thread), the word
   follows the signal, and the copy sees the fill. */
TEST(cpu_signal_waited_on_the_gpu) {
    accel_queue *cq = NULL, *gq = NULL;
    accel_buffer *cbuf = NULL, *gbuf = NULL;
    accel_signal *gate = NULL, *s = NULL, *done = NULL;
    SCENE(sc);
    if (CHECK_OK(accel_queue_create(sc.cpu, ACCEL_QUEUE_COMPUTE, &cq)) &&
        CHECK_OK(accel_queue_create(sc.gpu, ACCEL_QUEUE_COMPUTE, &gq)) &&
        CHECK_OK(test_buffer_create(sc.cpu, 4096, ACCEL_MEMORY_DEVICE, &cbuf)) &&
        CHECK_OK(test_buffer_create(sc.gpu, 4096, ACCEL_MEMORY_DEVICE, &gbuf)) &&
        CHECK_OK(accel_signal_create(sc.cpu, 0, &gate)) && CHECK_OK(accel_signal_create(sc.cpu, 0, &s)) &&
        CHECK_OK(accel_signal_create(sc.gpu, 0, &done))) {
        long long m0;
        accel_queue_wait(cq, gate, 1);
        accel_queue_fill(cq, cbuf, 0, 4096, 0x600DF00Du);
        accel_queue_signal(cq, s, 1);
        CHECK_OK(accel_queue_submit(cq));
        m0 = mock_memops();
        accel_queue_wait(gq, s, 1);
        accel_queue_copy(gq, gbuf, 0, cbuf, 0, 4096);
        accel_queue_signal(gq, done, 1);
        CHECK_OK(accel_queue_submit(gq));
        if (sc.on_gpu) {
            if (m0 >= 0) CHECK(mock_memops() - m0 >= 1);   /* the wait: enqueued already (the copy from
                                                              the CPU buffer is a host step after it) */
            CHECK_EQ_U64(word_of(s), 0);
        } else {
            if (m0 >= 0) CHECK_EQ_INT(mock_memops() - m0, 0);   /* gated: the worker waits on the host */
            CHECK_EQ_U64(word_of(s), UINT64_MAX);               /* no word */
        }
        CHECK_EQ_U64(accel_signal_value(done), 0);
        CHECK_OK(accel_signal_set(gate, 1));
        CHECK_OK(accel_signal_wait(done, 1, ACCEL_WAIT_FOREVER));
        CHECK_EQ_U64(test_buffer_u32(gbuf, 0), 0x600DF00Du);
        CHECK_EQ_U64(test_buffer_u32(gbuf, 1023), 0x600DF00Du);
        CHECK_OK(accel_signal_set(s, 5));   /* a host set reaches the word too */
        if (sc.on_gpu) CHECK_EQ_U64(word_of(s), 5);
        CHECK_OK(accel_queue_finish(gq, ACCEL_WAIT_FOREVER));
    }
    accel_queue_destroy(cq);
    accel_queue_destroy(gq);
    accel_buffer_destroy(cbuf);
    accel_buffer_destroy(gbuf);
    accel_signal_destroy(gate);
    accel_signal_destroy(s);
    accel_signal_destroy(done);
    scene_close(&sc);
}

/* A chain: the CPU queue writes step i into the GPU buffer `in` (its executor copies into another
   device's buffer) and signals sc = i + 1; one of four CUDA queues (round robin) waits for it on the
   GPU, copies the word from `in` to `out` (GPU work only: nothing of the step needs the host) and
   signals sg = i + 1, which the CPU queue waits for before step i + 1. Everything is submitted before
   the gate opens; `out` holds every step's word only if each GPU copy ran after its CPU write. */
#define CHAIN_STEPS 120u
#define CHAIN_QUEUES 4u
TEST(chain_across_a_cpu_queue_and_many_cuda_queues) {
    accel_queue *cq = NULL, *gq[CHAIN_QUEUES] = { NULL };
    accel_buffer *cbuf = NULL, *in = NULL, *out = NULL;
    accel_signal *gate = NULL, *sc_ = NULL, *sg = NULL;
    bool ok;
    SCENE(sc);
    ok = CHECK_OK(accel_queue_create(sc.cpu, ACCEL_QUEUE_COMPUTE, &cq)) &&
         CHECK_OK(test_buffer_create(sc.cpu, 4 * CHAIN_STEPS, ACCEL_MEMORY_DEVICE, &cbuf)) &&
         CHECK_OK(test_buffer_create(sc.gpu, 4 * CHAIN_STEPS, ACCEL_MEMORY_DEVICE, &in)) &&
         CHECK_OK(test_buffer_create(sc.gpu, 4 * CHAIN_STEPS, ACCEL_MEMORY_DEVICE, &out)) &&
         CHECK_OK(accel_signal_create(sc.cpu, 0, &gate)) && CHECK_OK(accel_signal_create(sc.cpu, 0, &sc_)) &&
         CHECK_OK(accel_signal_create(sc.gpu, 0, &sg));
    for (uint32_t i = 0; ok && i < CHAIN_QUEUES; i++)
        ok = CHECK_OK(accel_queue_create(sc.gpu, ACCEL_QUEUE_COMPUTE, &gq[i]));
    if (ok) {
        accel_queue_wait(cq, gate, 1);
        CHECK_OK(accel_queue_submit(cq));
        for (uint32_t i = 0; i < CHAIN_STEPS; i++) {
            accel_queue* g = gq[i % CHAIN_QUEUES];
            uint32_t v = 1000u + i;
            if (i) accel_queue_wait(cq, sg, i);
            accel_queue_update(cq, cbuf, 4u * i, &v, 4);
            accel_queue_copy(cq, in, 4u * i, cbuf, 4u * i, 4);
            accel_queue_signal(cq, sc_, i + 1);
            CHECK_OK(accel_queue_submit(cq));
            accel_queue_wait(g, sc_, i + 1);
            accel_queue_copy(g, out, 4u * i, in, 4u * i, 4);
            accel_queue_signal(g, sg, i + 1);
            CHECK_OK(accel_queue_submit(g));
        }
        CHECK_EQ_U64(accel_signal_value(sg), 0);
        CHECK_OK(accel_signal_set(gate, 1));
        CHECK_OK(accel_signal_wait(sg, CHAIN_STEPS, ACCEL_WAIT_FOREVER));
        for (uint32_t i = 0; i < CHAIN_STEPS; i++) CHECK_EQ_U64(test_buffer_u32(out, i), 1000u + i);
        if (sc.on_gpu) CHECK_EQ_U64(word_of(sc_), CHAIN_STEPS);
        for (uint32_t i = 0; i < CHAIN_QUEUES; i++) CHECK_OK(accel_queue_finish(gq[i], ACCEL_WAIT_FOREVER));
    }
    accel_queue_destroy(cq);
    for (uint32_t i = 0; i < CHAIN_QUEUES; i++) accel_queue_destroy(gq[i]);
    accel_buffer_destroy(cbuf);
    accel_buffer_destroy(in);
    accel_buffer_destroy(out);
    accel_signal_destroy(gate);
    accel_signal_destroy(sc_);
    accel_signal_destroy(sg);
    scene_close(&sc);
}

/* The CPU signal fails (from the host, or from a CPU queue whose own wait failed) while CUDA queues wait
   for it on the GPU: their later signals read failed with the same reason, the word reads
   ACCEL_SIGNAL_MAX (the stream is released), and the same queues run later work. */
static void failure_case(bool from_queue) {
    accel_queue *cq = NULL, *g1 = NULL, *g2 = NULL;
    accel_buffer* gbuf = NULL;
    accel_signal *up = NULL, *s = NULL, *a1 = NULL, *a2 = NULL, *later = NULL;
    SCENE(sc);
    if (CHECK_OK(accel_queue_create(sc.cpu, ACCEL_QUEUE_COMPUTE, &cq)) &&
        CHECK_OK(accel_queue_create(sc.gpu, ACCEL_QUEUE_COMPUTE, &g1)) &&
        CHECK_OK(accel_queue_create(sc.gpu, ACCEL_QUEUE_COMPUTE, &g2)) &&
        CHECK_OK(test_buffer_create(sc.gpu, 64, ACCEL_MEMORY_DEVICE, &gbuf)) &&
        CHECK_OK(accel_signal_create(sc.cpu, 0, &up)) && CHECK_OK(accel_signal_create(sc.cpu, 0, &s)) &&
        CHECK_OK(accel_signal_create(sc.gpu, 0, &a1)) && CHECK_OK(accel_signal_create(sc.gpu, 0, &a2)) &&
        CHECK_OK(accel_signal_create(sc.gpu, 0, &later)) && CHECK_OK(test_buffer_set_u32(gbuf, 16, 0))) {
        if (from_queue) {   /* the CPU queue's wait fails: its signal of s fails with the reason */
            accel_queue_wait(cq, up, 1);
            accel_queue_signal(cq, s, 1);
            CHECK_OK(accel_queue_submit(cq));
        }
        accel_queue_wait(g1, s, 1);
        accel_queue_fill(g1, gbuf, 0, 64, 0x11111111u);
        accel_queue_signal(g1, a1, 1);
        CHECK_OK(accel_queue_submit(g1));
        accel_queue_wait(g2, s, 3);
        accel_queue_signal(g2, a2, 1);
        CHECK_OK(accel_queue_submit(g2));
        if (sc.on_gpu) CHECK_EQ_U64(word_of(s), 0);
        CHECK_OK(accel_signal_fail(from_queue ? up : s, ACCEL_ERROR_BACKEND));
        CHECK_RESULT(accel_signal_wait(a1, 1, ACCEL_WAIT_FOREVER), ACCEL_ERROR_SIGNAL_FAILED);
        CHECK_RESULT(accel_signal_wait(a2, 1, ACCEL_WAIT_FOREVER), ACCEL_ERROR_SIGNAL_FAILED);
        CHECK_EQ_U64(accel_signal_value(a1), accel_signal_value(s));   /* the same reason */
        CHECK_EQ_U64(accel_signal_value(a2), accel_signal_value(s));
        CHECK_EQ_U64(accel_signal_value(s), accel_signal_value(from_queue ? up : s));
        /* the streams went on: later work of both queues runs */
        accel_queue_fill(g1, gbuf, 0, 64, 0x22222222u);
        CHECK_OK(accel_queue_submit(g1));
        accel_queue_signal(g2, later, 1);
        CHECK_OK(accel_queue_submit(g2));
        CHECK_OK(accel_signal_wait(later, 1, ACCEL_WAIT_FOREVER));
        /* g2's stream passed its wait for s >= 3: the word reads ACCEL_SIGNAL_MAX. Not before: the
           failure reaches the waiting queues' later signals first, then the word (core: failure after
           hand-off), so a1 and a2 may read failed a moment before it */
        if (sc.on_gpu) CHECK_EQ_U64(word_of(s), ACCEL_SIGNAL_MAX);
        CHECK_OK(accel_queue_finish(g1, ACCEL_WAIT_FOREVER));
        CHECK_OK(accel_queue_finish(g2, ACCEL_WAIT_FOREVER));
        CHECK_EQ_U64(test_buffer_u32(gbuf, 15), 0x22222222u);
    }
    accel_queue_destroy(cq);
    accel_queue_destroy(g1);
    accel_queue_destroy(g2);
    accel_buffer_destroy(gbuf);
    accel_signal_destroy(up);
    accel_signal_destroy(s);
    accel_signal_destroy(a1);
    accel_signal_destroy(a2);
    accel_signal_destroy(later);
    scene_close(&sc);
}
TEST(failure_of_the_cpu_signal_releases_the_gpu_wait) {
    failure_case(false);
    if (!TEST_FAILED_SO_FAR()) failure_case(true);
}

/* Teardown in every order, the CUDA queue's wait on the GPU first passed or pending:
   0: the CPU signal's handle and the CPU device go while the wait is pending: the signal is an orphan
      now, fails, and releases the stream (the CUDA queue's later signal fails);
   1: the CUDA device goes first (the CPU signal keeps its word's pool), then the signal is set (its
      word stored) and goes, then the CPU device;
   2: the CPU device goes first with the signal still held by the CUDA queue's finished work, then the
      CUDA device;
   3: the CUDA device is recovered between two waits (the word goes with the old context; the next
      wait takes a new one). */
static void teardown_case(int order) {
    accel_queue* gq = NULL;
    accel_signal *s = NULL, *after = NULL;
    accel_buffer* gbuf = NULL;
    SCENE(sc);
    if (!CHECK_OK(accel_queue_create(sc.gpu, ACCEL_QUEUE_COMPUTE, &gq)) ||
        !CHECK_OK(test_buffer_create(sc.gpu, 64, ACCEL_MEMORY_DEVICE, &gbuf)) ||
        !CHECK_OK(accel_signal_create(sc.cpu, 0, &s)) || !CHECK_OK(accel_signal_create(sc.gpu, 0, &after))) {
        accel_queue_destroy(gq);
        scene_close(&sc);
        return;
    }
    accel_queue_wait(gq, s, 1);
    accel_queue_fill(gq, gbuf, 0, 64, 0xABCD0000u + (uint32_t)order);
    accel_queue_signal(gq, after, 1);
    CHECK_OK(accel_queue_submit(gq));
    if (order == 0) {
        accel_signal_destroy(s);
        accel_device_destroy(sc.cpu);
        sc.cpu = NULL;
        CHECK_RESULT(accel_signal_wait(after, 1, ACCEL_WAIT_FOREVER), ACCEL_ERROR_SIGNAL_FAILED);
        CHECK_OK(accel_queue_finish(gq, ACCEL_WAIT_FOREVER));
    } else {
        CHECK_OK(accel_signal_set(s, 1));
        CHECK_OK(accel_signal_wait(after, 1, ACCEL_WAIT_FOREVER));
        CHECK_EQ_U64(test_buffer_u32(gbuf, 15), 0xABCD0000u + (uint32_t)order);
    }
    if (order == 1) {
        accel_queue_destroy(gq);
        accel_buffer_destroy(gbuf);
        accel_signal_destroy(after);
        gq = NULL; gbuf = NULL; after = NULL;
        accel_device_destroy(sc.gpu);
        sc.gpu = NULL;
        CHECK_OK(accel_signal_set(s, 7));   /* stores the word: the pool is still there */
        if (sc.on_gpu) CHECK_EQ_U64(word_of(s), 7);
        accel_signal_destroy(s);
        accel_device_destroy(sc.cpu);
        sc.cpu = NULL;
    }
    if (order == 2) {
        accel_signal_destroy(s);
        accel_device_destroy(sc.cpu);
        sc.cpu = NULL;
    }
    if (order == 3) {
        accel_queue* q2 = NULL;
        accel_signal* after2 = NULL;
        CHECK_OK(accel_device_recover(sc.gpu));
        if (CHECK_OK(accel_queue_create(sc.gpu, ACCEL_QUEUE_COMPUTE, &q2)) &&
            CHECK_OK(accel_signal_create(sc.gpu, 0, &after2))) {
            CHECK_EQ_U64(word_of(s), UINT64_MAX);   /* forgotten with the old context */
            accel_queue_wait(q2, s, 2);
            accel_queue_signal(q2, after2, 1);
            CHECK_OK(accel_queue_submit(q2));
            if (sc.on_gpu) CHECK_EQ_U64(word_of(s), 1);   /* a new word, with the value */
            CHECK_EQ_U64(accel_signal_value(after2), 0);
            CHECK_OK(accel_signal_set(s, 2));
            CHECK_OK(accel_signal_wait(after2, 1, ACCEL_WAIT_FOREVER));
        }
        accel_queue_destroy(q2);
        accel_signal_destroy(after2);
        accel_signal_destroy(s);
    }
    accel_queue_destroy(gq);
    accel_buffer_destroy(gbuf);
    accel_signal_destroy(after);
    scene_close(&sc);
}
TEST(teardown_in_every_order) {
    for (int order = 0; order < 4 && !TEST_FAILED_SO_FAR(); order++) teardown_case(order);
}

/* Another CUDA device: an accel device on the same GPU shares the first one's word (one context); the
   mock's second GPU (MOCK_CUDA_DEVICES=2) waits on the host. Both see the CPU queue's value. */
TEST(second_cuda_device_waits_on_the_cpu_signal) {
    accel_device* other = NULL;
    accel_queue *q1 = NULL, *q2 = NULL;
    accel_signal *s = NULL, *d1 = NULL, *d2 = NULL;
    accel_device_desc desc;
    uint32_t n = 0;
    SCENE(sc);
    memset(&desc, 0, sizeof desc);
    if (accel_backend_device_count(test_g.backend, &n) == ACCEL_OK && n > 1) desc.device_index = 1;
    if (CHECK_OK(test_device_create_desc(desc, &other)) &&
        CHECK_OK(accel_queue_create(sc.gpu, ACCEL_QUEUE_COMPUTE, &q1)) &&
        CHECK_OK(accel_queue_create(other, ACCEL_QUEUE_COMPUTE, &q2)) &&
        CHECK_OK(accel_signal_create(sc.cpu, 0, &s)) && CHECK_OK(accel_signal_create(sc.gpu, 0, &d1)) &&
        CHECK_OK(accel_signal_create(other, 0, &d2))) {
        long long m0;
        accel_queue_wait(q1, s, 1);
        accel_queue_signal(q1, d1, 1);
        CHECK_OK(accel_queue_submit(q1));
        m0 = mock_memops();
        accel_queue_wait(q2, s, 1);
        accel_queue_signal(q2, d2, 1);
        CHECK_OK(accel_queue_submit(q2));
        if (sc.on_gpu && m0 >= 0)   /* on the GPU on the same CUDA device; gated on another */
            CHECK_EQ_INT(mock_memops() - m0 >= 2, desc.device_index == 0);
        CHECK_OK(accel_signal_set(s, 1));
        CHECK_OK(accel_signal_wait(d1, 1, ACCEL_WAIT_FOREVER));
        CHECK_OK(accel_signal_wait(d2, 1, ACCEL_WAIT_FOREVER));
    }
    accel_queue_destroy(q1);
    accel_queue_destroy(q2);
    accel_signal_destroy(s);
    accel_signal_destroy(d1);
    accel_signal_destroy(d2);
    accel_device_destroy(other);
    scene_close(&sc);
}

/* Staged copies between two CUDA devices without peer access (the mock's MOCK_CUDA_DEVICES=2 with
   MOCK_CUDA_NO_PEER=1; a GPU pair without P2P): the queue's two pinned slots (ACCEL_MEMORY_HOST
   buffers of the CUDA side, core: several devices, the staged pipeline), double-buffered over chunks of
   4 MiB: exact contents at odd offsets and sizes of 1 to 4 chunks and more, both directions, the slots
   kept for the next copy, made anew after a recover of their device, released with the queue when
   its device is destroyed first. */
static void staged_round(accel_queue* q, accel_buffer* mine, accel_buffer* theirs, size_t n, size_t off,
                         uint32_t seed) {
    unsigned char* pat = (unsigned char*)malloc(n);
    unsigned char* got = (unsigned char*)malloc(n);
    size_t bad = 0;
    REQUIRE(pat != NULL && got != NULL);
    for (size_t i = 0; i < n; i++) pat[i] = (unsigned char)(i * 7u + seed + (i >> 13));
    CHECK_OK(accel_buffer_write(theirs, off, pat, n));
    accel_queue_copy(q, mine, off + 3, theirs, off, n);   /* theirs -> mine */
    accel_queue_copy(q, theirs, 1, mine, off + 3, n);      /* and back, elsewhere */
    CHECK_OK(accel_queue_finish(q, ACCEL_WAIT_FOREVER));
    CHECK_OK(accel_buffer_read(theirs, 1, got, n));
    for (size_t i = 0; i < n; i++) bad += got[i] != pat[i];
    CHECK_EQ_U64(bad, 0);
    free(pat);
    free(got);
}
TEST(staged_copies_between_gpus_without_peer_access) {
    accel_device *b = NULL;
    accel_queue* q = NULL;
    accel_buffer *mine = NULL, *theirs = NULL, *slot = NULL;
    accel_device_desc desc;
    accel_peer_info pi;
    uint32_t n = 0;
    const size_t chunk = (size_t)4 << 20, total = 4 * chunk + 64;
    SCENE(sc);
    memset(&desc, 0, sizeof desc);
    desc.device_index = 1;
    if (accel_backend_device_count(test_g.backend, &n) != ACCEL_OK || n < 2 ||
        !CHECK_OK(test_device_create_desc(desc, &b)) || !CHECK_OK(accel_device_peer_info(sc.gpu, b, &pi)) ||
        pi.direct_copy) {
        accel_device_destroy(b);
        scene_close(&sc);
        if (!TEST_FAILED_SO_FAR()) SKIP("needs two CUDA devices without peer access (MOCK_CUDA_NO_PEER=1)");
        return;
    }
    if (CHECK_OK(accel_queue_create(sc.gpu, ACCEL_QUEUE_COMPUTE, &q)) &&
        CHECK_OK(test_buffer_create(sc.gpu, total, ACCEL_MEMORY_DEVICE, &mine)) &&
        CHECK_OK(test_buffer_create(b, total, ACCEL_MEMORY_DEVICE, &theirs))) {
        static const size_t sizes[] = { 1, 4096 + 1, (size_t)4 << 20, ((size_t)4 << 20) + 1,
                                        ((size_t)12 << 20) + 17, ((size_t)16 << 20) - 9 };
        for (uint32_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
            staged_round(q, mine, theirs, sizes[i], 5, i);
        slot = q->stage[0];
        CHECK(slot != NULL && slot->obj.device == sc.gpu && slot->memory == ACCEL_MEMORY_HOST);
        staged_round(q, mine, theirs, 3 * chunk, 0, 9);
        CHECK(q->stage[0] == slot);   /* kept */
        /* a recover of the slots' device: the queue, buffers and slots are stale; new ones work (the
           other device opened anew: the mock's reset ends every device's objects, one context) */
        accel_buffer_destroy(theirs);
        accel_device_destroy(b);
        theirs = NULL; b = NULL;
        CHECK_OK(accel_device_recover(sc.gpu));
        accel_queue_destroy(q);
        accel_buffer_destroy(mine);
        q = NULL; mine = NULL;
        if (CHECK_OK(test_device_create_desc(desc, &b)) &&
            CHECK_OK(test_buffer_create(b, total, ACCEL_MEMORY_DEVICE, &theirs)) &&
            CHECK_OK(accel_queue_create(sc.gpu, ACCEL_QUEUE_COMPUTE, &q)) &&
            CHECK_OK(test_buffer_create(sc.gpu, total, ACCEL_MEMORY_DEVICE, &mine))) {
            staged_round(q, mine, theirs, 2 * chunk + 5, 7, 11);
            CHECK(q->stage[0] != NULL && !accel_i_stale(&q->stage[0]->obj));
            /* the queue's device (the slots' too) goes with the queue, before the other one */
            accel_buffer_destroy(mine);
            mine = NULL;
            accel_device_destroy(sc.gpu);
            sc.gpu = NULL;
            q = NULL;   /* destroyed with its device */
        }
    }
    accel_queue_destroy(q);
    accel_buffer_destroy(mine);
    accel_buffer_destroy(theirs);
    accel_device_destroy(b);
    scene_close(&sc);
}
#else
TEST(cpu_signal_waited_on_the_gpu) { SKIP("built without CUDA"); }
TEST(chain_across_a_cpu_queue_and_many_cuda_queues) { SKIP("built without CUDA"); }
TEST(failure_of_the_cpu_signal_releases_the_gpu_wait) { SKIP("built without CUDA"); }
TEST(teardown_in_every_order) { SKIP("built without CUDA"); }
TEST(second_cuda_device_waits_on_the_cpu_signal) { SKIP("built without CUDA"); }
TEST(staged_copies_between_gpus_without_peer_access) { SKIP("built without CUDA"); }
#endif

int main(int argc, char** argv) {
    test_begin(argc, argv);
    RUN(cpu_signal_waited_on_the_gpu);
    RUN(chain_across_a_cpu_queue_and_many_cuda_queues);
    RUN(failure_of_the_cpu_signal_releases_the_gpu_wait);
    RUN(teardown_in_every_order);
    RUN(second_cuda_device_waits_on_the_cpu_signal);
    RUN(staged_copies_between_gpus_without_peer_access);
    return test_end();
}

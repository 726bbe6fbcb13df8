/* tests/test_devices.c — several devices in one process (issue 27, DESIGN 7.2): identity (uuid, PCI),
   accel_device_peer_info, peer copies in accel_queue_copy (every direction between the backend under
   test, a second device of it, and a CPU device; offsets, views, sizes up to 64 MiB, recorded lists),
   ordered by the other device's signal, failures across devices, destroying either device with peer
   work pending, and queues that go on after a device they waited on is destroyed. The second device
   of the backend is device 1 where the backend has two (the CUDA mock with MOCK_CUDA_DEVICES=2), else
   another accel device on device 0 (two accel devices on one GPU are two devices). With
   ACCEL_TEST_PEER=vulkan (a program built with both GPU backends, CUDA under test) the second device
   is a Vulkan device instead, on the same GPU: CUDA and Vulkan on one GPU (each imports the other's
   memory where it exports; GPU waits both ways through shared timeline semaphores where the Vulkan
   driver exports them: ACCEL_TEST_VK_SEM_EXPORT=1 stands in for such a driver on lavapipe, below). */
#define ACCEL_IMPLEMENTATION
#include "accel.h"
#include "test.h"
#include "kernels.h"
#if defined(ACCEL_TEST_HAVE_CUDA) && defined(ACCEL_TEST_HAVE_VULKAN) && !defined(_WIN32)
#  include <dirent.h>
#  include <dlfcn.h>
#  include <sys/stat.h>
#  include <unistd.h>
#  define PEER_VK 1
#  if !defined(__cplusplus)
int setenv(const char* name, const char* value, int overwrite);   /* POSIX; <stdlib.h> hides it in C11 */
int unsetenv(const char* name);                                     /* likewise */
#  endif
static void vk_sems_patch(accel_device* vk);
static void vk_sems_provide(void);
static int vk_sems_held(void);
/* ACCEL_TEST_PEER=vulkan, CUDA under test */
static bool peer_vulkan(void) {
    const char* e = getenv("ACCEL_TEST_PEER");
    return e && strcmp(e, "vulkan") == 0 && test_g.backend == accel_cuda_backend();
}
/* The Vulkan device 0. Where MOCK_CUDA_UUID is unset, the CUDA mock (tests/mock_cuda.c) is made to
   claim its uuid from now on, so that the two are one GPU (a real driver ignores the variable). */
static int peer_vulkan_open(accel_device** out) {
    accel_device_desc desc;
    accel_device_info info;
    char hex[33];
    memset(&desc, 0, sizeof desc);
    desc.backend = accel_vulkan_backend();
    desc.label = "second (vulkan)";
    if (!CHECK_OK(test_device_create_desc(desc, out))) return 0;
    vk_sems_patch(*out);
    if (!getenv("MOCK_CUDA_UUID") && CHECK_OK(accel_device_info_get(*out, &info))) {
        for (int i = 0; i < 16; i++) snprintf(hex + 2 * i, 3, "%02x", info.uuid[i]);
        setenv("MOCK_CUDA_UUID", hex, 1);
    }
    return 1;
}
#else
#  define PEER_VK 0
static int vk_sems_held(void) { return 0; }
static void vk_sems_provide(void) {}
static bool peer_vulkan(void) { return false; }
static int peer_vulkan_open(accel_device** out) { *out = NULL; return 0; }
#endif

typedef struct pair { accel_device *q_dev, *other; const char* name; } pair;
typedef struct devices { accel_device *a, *b, *cpu; uint32_t b_index; } devices;

static int devices_open(devices* d) {
    accel_device_desc desc;
    uint32_t n = 0;
    memset(d, 0, sizeof *d);
    memset(&desc, 0, sizeof desc);
    if (peer_vulkan()) {   /* the Vulkan device first: the CUDA mock takes its uuid */
        if (!peer_vulkan_open(&d->b) || !CHECK_OK(test_device_create(&d->a))) return 0;
        vk_sems_provide();
    } else {
        if (!CHECK_OK(test_device_create(&d->a))) return 0;
        if (accel_backend_device_count(test_g.backend, &n) == ACCEL_OK && n > 1) d->b_index = 1;
        desc.device_index = d->b_index;
        desc.label = "second";
        if (!CHECK_OK(test_device_create_desc(desc, &d->b))) return 0;
    }
    desc.backend = accel_cpu_backend();
    desc.device_index = 0;
    desc.label = "cpu";
    return CHECK_OK(test_device_create_desc(desc, &d->cpu));
}
static void devices_close(devices* d) {
    accel_device_destroy(d->a);
    accel_device_destroy(d->b);
    accel_device_destroy(d->cpu);
    if (peer_vulkan()) CHECK_EQ_INT(vk_sems_held(), 0);   /* the driver's imports of semaphores went */
}
/* every ordered pair: the queue's device, the other buffer's device */
static uint32_t devices_pairs(const devices* d, pair* out) {
    pair p[4] = { { d->a, d->b, "backend -> second" }, { d->b, d->a, "second -> backend" },
                  { d->a, d->cpu, "backend queue, cpu buffer" },
                  { d->cpu, d->a, "cpu queue, backend buffer" } };
    memcpy(out, p, sizeof p);
    return 4;
}
/* Runs fn(pair, index, devices) for every ordered pair, on devices opened for the test. */
typedef void (*pair_fn)(const pair* p, uint32_t i, const devices* d);
static void for_each_pair(pair_fn fn) {
    devices d;
    pair p[4];
    uint32_t np;
    if (!devices_open(&d)) { devices_close(&d); return; }
    np = devices_pairs(&d, p);
    for (uint32_t i = 0; i < np && !TEST_FAILED_SO_FAR(); i++) fn(&p[i], i, &d);
    devices_close(&d);
}

static unsigned char pattern_byte(size_t i, uint32_t seed) {
    return (unsigned char)((i * 131u + seed * 7u + (i >> 9)) & 0xFFu);
}
static unsigned char* pattern_make(size_t n, uint32_t seed) {
    unsigned char* p = (unsigned char*)malloc(n ? n : 1);
    if (p) for (size_t i = 0; i < n; i++) p[i] = pattern_byte(i, seed);
    return p;
}
/* reads n bytes of buf at off and compares them with pattern bytes from `from` */
static int expect_pattern(accel_buffer* buf, size_t off, size_t n, size_t from, uint32_t seed) {
    unsigned char* got = (unsigned char*)malloc(n);
    int ok = got != NULL && CHECK_OK(accel_buffer_read(buf, off, got, n));
    for (size_t i = 0; ok && i < n; i++)
        if (got[i] != pattern_byte(from + i, seed)) {
            fprintf(stderr, "  byte %zu: got %u, want %u\n", i, got[i], pattern_byte(from + i, seed));
            ok = CHECK(!"peer copy contents");
        }
    free(got);
    return ok;
}

/* The first and the last word of a 4 KiB buffer */
static void expect_ends(accel_buffer* b, uint32_t v) {
    CHECK_EQ_U64(test_buffer_u32(b, 0), v);
    CHECK_EQ_U64(test_buffer_u32(b, 1023), v);
}

/* One copy between q_dev's buffer and other's, in direction `into_q` (other -> q_dev's buffer) or back,
   with offsets, run on a queue of q_dev. */
static void copy_case(accel_device* q_dev, accel_device* other, bool into_q, size_t size, size_t doff,
                      size_t soff, accel_memory mem) {
    accel_queue* q = NULL;
    accel_buffer *mine = NULL, *theirs = NULL, *dst, *src;
    size_t total = size + (doff > soff ? doff : soff) + 8;
    unsigned char* pat = pattern_make(total, (uint32_t)size);
    REQUIRE(pat != NULL);
    if (!CHECK_OK(accel_queue_create(q_dev, ACCEL_QUEUE_COMPUTE, &q)) ||
        !CHECK_OK(test_buffer_create(q_dev, total, mem, &mine)) ||
        !CHECK_OK(test_buffer_create(other, total, mem, &theirs)))
        goto out;
    dst = into_q ? mine : theirs;
    src = into_q ? theirs : mine;
    CHECK_OK(accel_buffer_write(src, 0, pat, total));
    accel_queue_copy(q, dst, doff, src, soff, size);
    CHECK_OK(accel_queue_finish(q, ACCEL_WAIT_FOREVER));
    expect_pattern(dst, doff, size, soff, (uint32_t)size);
out:
    accel_queue_destroy(q);
    accel_buffer_destroy(mine);
    accel_buffer_destroy(theirs);
    free(pat);
}

TEST(identity_uuid_and_pci) {
    devices d;
    accel_device_info ia, ib, ic;
    static const uint8_t zero[16] = { 0 };
    if (!devices_open(&d)) { devices_close(&d); return; }
    CHECK_OK(accel_device_info_get(d.a, &ia));
    CHECK_OK(accel_device_info_get(d.b, &ib));
    CHECK_OK(accel_device_info_get(d.cpu, &ic));
    CHECK(memcmp(ic.uuid, zero, 16) == 0);
    CHECK_EQ_U64(ic.pci_domain, UINT32_MAX);
    CHECK_EQ_U64(ic.pci_bus, UINT32_MAX);
    CHECK_EQ_U64(ic.pci_device, UINT32_MAX);
    if (strcmp(ia.backend, "cuda") == 0 && strstr(ia.name, "mock") && !getenv("MOCK_CUDA_UUID")) {
        /* tests/mock_cuda.c's values */
        CHECK_EQ_INT(ia.uuid[0], 0xA0);
        CHECK_EQ_INT(ia.uuid[14], 0xAE);
        CHECK_EQ_INT(ia.uuid[15], 0);
        CHECK_EQ_INT(ib.uuid[15], d.b_index);
        CHECK_EQ_U64(ia.pci_domain, 0);
        CHECK_EQ_U64(ia.pci_bus, 0x10);
        CHECK_EQ_U64(ib.pci_bus, 0x10 + d.b_index);
        CHECK_EQ_U64(ia.pci_device, 0);
    }
    if (!test_backend_is_cpu()) CHECK(memcmp(ia.uuid, zero, 16) != 0);   /* a GPU has one */
    if (d.b_index == 0) {   /* the same physical device: the same identity */
        CHECK(memcmp(ia.uuid, ib.uuid, 16) == 0);
        if (!peer_vulkan()) CHECK_EQ_U64(ia.pci_bus, ib.pci_bus);   /* lavapipe has no PCI location */
    } else {
        CHECK(memcmp(ia.uuid, ib.uuid, 16) != 0);
    }
    devices_close(&d);
}

/* The CUDA backend with stream memory operations (not the ring mode, ACCEL_CUDA_NO_MEMOPS) */
static bool cuda_memops(void) {
#ifdef ACCEL_TEST_HAVE_CUDA
    const char* ring = getenv("ACCEL_CUDA_NO_MEMOPS");
    return test_g.backend == accel_cuda_backend() && !(ring && ring[0] && strcmp(ring, "0") != 0);
#else
    return false;
#endif
}
TEST(peer_info) {
    devices d;
    accel_peer_info pi;
    if (!devices_open(&d)) { devices_close(&d); return; }
    CHECK_RESULT(accel_device_peer_info(NULL, d.a, &pi), ACCEL_ERROR_INVALID_ARGUMENT);
    CHECK_RESULT(accel_device_peer_info(d.a, NULL, &pi), ACCEL_ERROR_INVALID_ARGUMENT);
    CHECK_RESULT(accel_device_peer_info(d.a, d.b, NULL), ACCEL_ERROR_INVALID_ARGUMENT);
    CHECK_OK(accel_device_peer_info(d.a, d.a, &pi));
    CHECK(pi.copy && pi.direct_copy && pi.device_waits);
    CHECK_OK(accel_device_peer_info(d.a, d.cpu, &pi));   /* CPU buffers are host memory */
    CHECK(pi.copy && pi.direct_copy);
    /* a CUDA queue waits for a CPU signal on the GPU (tests/test_device_waits.c) */
    CHECK(pi.device_waits == (test_backend_is_cpu() || cuda_memops()));
    CHECK_OK(accel_device_peer_info(d.cpu, d.a, &pi));
    CHECK(pi.copy && pi.direct_copy);
    CHECK_OK(accel_device_peer_info(d.a, d.b, &pi));
    CHECK(pi.copy);
    if (test_backend_is_cpu()) CHECK(pi.direct_copy && pi.device_waits);
#if PEER_VK
    if (peer_vulkan()) {
        /* a CUDA queue imports the Vulkan memory (where the Vulkan device exports it) ... */
        CHECK(pi.direct_copy == accel_i_vk_dev(d.b)->ext_mem);
        /* an imported timeline semaphore, where the Vulkan device exports them (not lavapipe 22.3) */
        CHECK(pi.device_waits == (accel_i_vk_dev(d.b)->ext_sem && accel_i_vk_dev(d.b)->ext_mem &&
                                  accel_i_cu.WaitExternalSemaphoresAsync != NULL));
        /* ... a Vulkan queue imports the CUDA memory where the CUDA device exports it (cuMemCreate) */
        CHECK_OK(accel_device_peer_info(d.b, d.a, &pi));
        /* a CUDA signal is a word: the Vulkan queue lends CUDA a semaphore, where it exports them */
        CHECK(pi.copy && pi.device_waits == (accel_i_vk_dev(d.b)->ext_sem && accel_i_vk_dev(d.b)->ext_mem &&
                                             accel_i_cu_dev(d.a)->memops &&
                                             accel_i_cu.SignalExternalSemaphoresAsync != NULL));
        CHECK(pi.direct_copy == (accel_i_cu_dev(d.a)->vmm_grain != 0 && accel_i_vk_dev(d.b)->ext_mem));
    } else
#endif
#ifdef ACCEL_TEST_HAVE_CUDA
    if (accel_backend_name(test_g.backend) && strcmp(accel_backend_name(test_g.backend), "cuda") == 0) {
        const char* ring = getenv("ACCEL_CUDA_NO_MEMOPS");
        const char* no_peer = getenv("MOCK_CUDA_NO_PEER");
        /* one context, or peer access (the mock has it, unless MOCK_CUDA_NO_PEER: staged) */
        CHECK(pi.direct_copy == (d.b_index == 0 || !(no_peer && no_peer[0] && strcmp(no_peer, "0") != 0)));
        /* waits on the GPU between accel devices on one CUDA device with stream memory operations */
        CHECK(pi.device_waits == (d.b_index == 0 && !(ring && ring[0] && strcmp(ring, "0") != 0)));
    }
#endif
    devices_close(&d);
}

static void sizes_case(const pair* p, uint32_t i, const devices* d) {
    static const size_t sizes[] = { 1, 3, 4096 + 5, ((size_t)1 << 20) + 17 };
    (void)i; (void)d;
    for (int into = 0; into < 2; into++)
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
            copy_case(p->q_dev, p->other, into != 0, sizes[k], 0, 0, ACCEL_MEMORY_DEVICE);
            copy_case(p->q_dev, p->other, into != 0, sizes[k], 7, 1, ACCEL_MEMORY_DEVICE);
            copy_case(p->q_dev, p->other, into != 0, sizes[k], 256, 5, ACCEL_MEMORY_HOST);
            if (TEST_FAILED_SO_FAR())
                fprintf(stderr, "  pair %s, into %d, size %zu\n", p->name, into, sizes[k]);
        }
}
TEST(copies_every_direction_sizes_and_offsets) { for_each_pair(sizes_case); }

#if defined(__wasi__) || defined(__EMSCRIPTEN__)
TEST(copy_of_64_mib) { SKIP("64 MiB buffers on WebAssembly"); }
#else
static void big_case(const pair* p, uint32_t i, const devices* d) {
    (void)d;
    copy_case(p->q_dev, p->other, (i & 1) != 0, (size_t)64 << 20, 0, 0, ACCEL_MEMORY_DEVICE);
}
TEST(copy_of_64_mib) { for_each_pair(big_case); }
#endif

/* Views of the other device's buffer, as source and destination */
static void views_case(const pair* p, uint32_t i, const devices* d) {
    accel_device_info io;
    accel_queue* q = NULL;
    accel_buffer *mine = NULL, *theirs = NULL, *view = NULL;
    size_t at, n = 1000;
    unsigned char* pat = pattern_make(4 * 4096, 9);
    (void)i; (void)d;
    CHECK_OK(accel_device_info_get(p->other, &io));
    at = io.buffer_offset_alignment > 1 ? io.buffer_offset_alignment : 64;
    if (CHECK(pat != NULL) && CHECK_OK(accel_queue_create(p->q_dev, ACCEL_QUEUE_COMPUTE, &q)) &&
        CHECK_OK(test_buffer_create(p->q_dev, 4 * 4096, ACCEL_MEMORY_DEVICE, &mine)) &&
        CHECK_OK(test_buffer_create(p->other, 4 * 4096, ACCEL_MEMORY_DEVICE, &theirs)) &&
        CHECK_OK(accel_buffer_view_create(theirs, at, 2 * 4096, &view))) {
        CHECK_OK(accel_buffer_write(theirs, 0, pat, 4 * 4096));
        accel_queue_copy(q, mine, 10, view, 3, n);          /* from the view: bytes at + 3 .. */
        accel_queue_copy(q, view, 4096, mine, 10, n);       /* back into the view at 4096 */
        CHECK_OK(accel_queue_finish(q, ACCEL_WAIT_FOREVER));
        expect_pattern(mine, 10, n, at + 3, 9);
        expect_pattern(theirs, at + 4096, n, at + 3, 9);
    }
    accel_buffer_destroy(view);
    accel_buffer_destroy(mine);
    accel_buffer_destroy(theirs);
    accel_queue_destroy(q);
    free(pat);
}
TEST(copies_through_views) { for_each_pair(views_case); }

/* In one batch, the queue's own commands around a peer copy: a fill of its buffer before the copy
   out (the copy sees the fill), and a copy within its device after the copy in (it sees the bytes). */
static void mixed_case(const pair* p, uint32_t i, const devices* d) {
    accel_queue* q = NULL;
    accel_buffer *mine = NULL, *mine2 = NULL, *theirs = NULL, *theirs2 = NULL;
    (void)d;
    if (CHECK_OK(accel_queue_create(p->q_dev, ACCEL_QUEUE_COMPUTE, &q)) &&
        CHECK_OK(test_buffer_create(p->q_dev, 4096, ACCEL_MEMORY_DEVICE, &mine)) &&
        CHECK_OK(test_buffer_create(p->q_dev, 4096, ACCEL_MEMORY_DEVICE, &mine2)) &&
        CHECK_OK(test_buffer_create(p->other, 4096, ACCEL_MEMORY_DEVICE, &theirs)) &&
        CHECK_OK(test_buffer_create(p->other, 4096, ACCEL_MEMORY_DEVICE, &theirs2)) &&
        CHECK_OK(test_buffer_set_u32(theirs2, 1024, 0xABCD0000u + i))) {
        accel_queue_fill(q, mine, 0, 4096, 0x1234u + i);
        accel_queue_copy(q, theirs, 0, mine, 0, 4096);      /* out: after the fill */
        accel_queue_copy(q, mine, 0, theirs2, 0, 4096);     /* in */
        accel_queue_copy(q, mine2, 0, mine, 0, 4096);       /* then the device reads what came in */
        CHECK_OK(accel_queue_finish(q, ACCEL_WAIT_FOREVER));
        expect_ends(theirs, 0x1234u + i);
        expect_ends(mine2, 0xABCD0000u + i);
    }
    accel_queue_destroy(q);
    accel_buffer_destroy(mine);
    accel_buffer_destroy(mine2);
    accel_buffer_destroy(theirs);
    accel_buffer_destroy(theirs2);
}
TEST(peer_copies_between_the_queues_own_commands) { for_each_pair(mixed_case); }

/* Two buffers of other devices in one copy: a recording error. */
TEST(copy_between_two_other_devices_is_refused) {
    devices d;
    accel_queue* q = NULL;
    accel_buffer *x = NULL, *y = NULL;
    if (!devices_open(&d)) { devices_close(&d); return; }
    if (test_backend_is_cpu()) {
        devices_close(&d);
        SKIP("CPU devices share host memory: no other device here");
    }
    if (CHECK_OK(accel_queue_create(d.cpu, ACCEL_QUEUE_COMPUTE, &q)) &&
        CHECK_OK(test_buffer_create(d.a, 64, ACCEL_MEMORY_DEVICE, &x)) &&
        CHECK_OK(test_buffer_create(d.b, 64, ACCEL_MEMORY_DEVICE, &y))) {
        accel_queue_copy(q, x, 0, y, 0, 64);
        CHECK_RESULT(accel_queue_submit(q), ACCEL_ERROR_INVALID_ARGUMENT);
        accel_queue_copy(q, x, 0, y, 0, 64);
        CHECK_RESULT(accel_queue_finish(q, ACCEL_WAIT_FOREVER), ACCEL_ERROR_INVALID_ARGUMENT);
    }
    accel_buffer_destroy(x);
    accel_buffer_destroy(y);
    accel_queue_destroy(q);
    devices_close(&d);
}

/* The other device fills its buffer behind a gate and signals; the copy waits for that signal, then
   signals in turn: the copy sees the fill. */
static void ordered_case(const pair* p, uint32_t i, const devices* d) {
    accel_queue *q = NULL, *oq = NULL;
    accel_buffer *mine = NULL, *theirs = NULL;
    accel_signal *gate = NULL, *filled = NULL, *copied = NULL;
    (void)d;
    if (CHECK_OK(accel_queue_create(p->q_dev, ACCEL_QUEUE_COMPUTE, &q)) &&
        CHECK_OK(accel_queue_create(p->other, ACCEL_QUEUE_COMPUTE, &oq)) &&
        CHECK_OK(test_buffer_create(p->q_dev, 4096, ACCEL_MEMORY_DEVICE, &mine)) &&
        CHECK_OK(test_buffer_create(p->other, 4096, ACCEL_MEMORY_DEVICE, &theirs)) &&
        CHECK_OK(accel_signal_create(p->other, 0, &gate)) &&
        CHECK_OK(accel_signal_create(p->other, 0, &filled)) &&
        CHECK_OK(accel_signal_create(p->q_dev, 0, &copied))) {
        accel_queue_wait(oq, gate, 1);
        accel_queue_fill(oq, theirs, 0, 4096, 0x5A5A5A5Au + i);
        accel_queue_signal(oq, filled, 1);
        CHECK_OK(accel_queue_submit(oq));
        accel_queue_wait(q, filled, 1);
        accel_queue_copy(q, mine, 0, theirs, 0, 4096);
        accel_queue_signal(q, copied, 1);
        CHECK_OK(accel_queue_submit(q));
        CHECK_EQ_U64(accel_signal_value(copied), 0);
        CHECK_OK(accel_signal_set(gate, 1));
        CHECK_OK(accel_signal_wait(copied, 1, ACCEL_WAIT_FOREVER));
        expect_ends(mine, 0x5A5A5A5Au + i);
    }
    accel_queue_destroy(q);
    accel_queue_destroy(oq);
    accel_buffer_destroy(mine);
    accel_buffer_destroy(theirs);
    accel_signal_destroy(gate);
    accel_signal_destroy(filled);
    accel_signal_destroy(copied);
}
TEST(copy_ordered_by_the_other_devices_signal) { for_each_pair(ordered_case); }

/* The other device's signal fails: the waiting queue's later signals read failed with the same
   reason; where the wait was gated on the host, the copy behind it did not run (a wait handed to the
   device may let it run: DESIGN 6.1). */
static void failure_case(const pair* p, uint32_t i, const devices* d) {
    accel_queue* q = NULL;
    accel_buffer *mine = NULL, *theirs = NULL;
    accel_signal *up = NULL, *after = NULL;
    accel_peer_info pi;
    (void)i;
    if (CHECK_OK(accel_device_peer_info(p->q_dev, p->other, &pi)) &&
        CHECK_OK(accel_queue_create(p->q_dev, ACCEL_QUEUE_COMPUTE, &q)) &&
        CHECK_OK(test_buffer_create(p->q_dev, 64, ACCEL_MEMORY_DEVICE, &mine)) &&
        CHECK_OK(test_buffer_create(p->other, 64, ACCEL_MEMORY_DEVICE, &theirs)) &&
        CHECK_OK(accel_signal_create(p->other, 0, &up)) &&
        CHECK_OK(accel_signal_create(p->q_dev, 0, &after)) &&
        CHECK_OK(test_buffer_set_u32(theirs, 16, 77))) {
        accel_queue_wait(q, up, 1);
        accel_queue_copy(q, mine, 0, theirs, 0, 64);
        accel_queue_signal(q, after, 1);
        CHECK_OK(accel_queue_submit(q));
        CHECK_OK(accel_signal_fail(up, ACCEL_ERROR_DEVICE_LOST));
        CHECK_RESULT(accel_signal_wait(after, 1, ACCEL_WAIT_FOREVER), ACCEL_ERROR_SIGNAL_FAILED);
        CHECK_EQ_U64(accel_signal_value(after), accel_signal_value(up));   /* the same reason */
        CHECK_OK(accel_queue_finish(q, ACCEL_WAIT_FOREVER));
        if (!pi.device_waits || p->q_dev == d->cpu) CHECK_EQ_U64(test_buffer_u32(mine, 0), 0);
    }
    accel_queue_destroy(q);
    accel_buffer_destroy(mine);
    accel_buffer_destroy(theirs);
    accel_signal_destroy(up);
    accel_signal_destroy(after);
}
TEST(failure_of_the_other_devices_signal_reaches_later_signals) { for_each_pair(failure_case); }

/* A two-device chain, each step waiting on the other device's signal for a value the other device
   promised (submitted before the wait): where peer_info says device_waits, the waits go to the
   device; either way every step sees the one before. Then a failure: the first device's signal fails
   while a wait on it (on the device where it can be) holds a step of the second, whose later signal,
   and a third queue's wait on that, read failed. */
TEST(two_device_chain_and_failure_across_devices) {
    devices d;
    accel_queue *qa = NULL, *qb = NULL, *qc = NULL;
    accel_buffer* buf = NULL;
    accel_signal *sa = NULL, *sb = NULL, *gate = NULL, *end = NULL;
    accel_peer_info pi;
    const uint32_t steps = 50;
    if (!devices_open(&d)) { devices_close(&d); return; }
    CHECK_OK(accel_device_peer_info(d.b, d.a, &pi));
    if (CHECK_OK(accel_queue_create(d.a, ACCEL_QUEUE_COMPUTE, &qa)) &&
        CHECK_OK(accel_queue_create(d.b, ACCEL_QUEUE_COMPUTE, &qb)) &&
        CHECK_OK(accel_queue_create(d.b, ACCEL_QUEUE_COMPUTE, &qc)) &&
        CHECK_OK(test_buffer_create(d.a, 4 * steps, ACCEL_MEMORY_DEVICE, &buf)) &&
        CHECK_OK(accel_signal_create(d.a, 0, &sa)) && CHECK_OK(accel_signal_create(d.b, 0, &sb)) &&
        CHECK_OK(accel_signal_create(d.a, 0, &gate)) && CHECK_OK(accel_signal_create(d.b, 0, &end))) {
        accel_queue_wait(qa, gate, 1);   /* everything below is submitted before anything runs */
        CHECK_OK(accel_queue_submit(qa));
        for (uint32_t i = 0; i < steps; i++) {
            uint32_t v = i + 1;
            if (i) accel_queue_wait(qa, sb, i);
            accel_queue_update(qa, buf, 4u * i, &v, 4);
            accel_queue_signal(qa, sa, i + 1);
            CHECK_OK(accel_queue_submit(qa));
            accel_queue_wait(qb, sa, i + 1);
            accel_queue_signal(qb, sb, i + 1);
            CHECK_OK(accel_queue_submit(qb));
        }
        CHECK_EQ_U64(accel_signal_value(sb), 0);
        CHECK_OK(accel_signal_set(gate, 1));
        CHECK_OK(accel_signal_wait(sb, steps, ACCEL_WAIT_FOREVER));
        for (uint32_t i = 0; i < steps; i++) CHECK_EQ_U64(test_buffer_u32(buf, i), i + 1);
        /* the failure: qb waits for sa = steps + 1, which qa promises behind a second gate */
        accel_queue_wait(qa, gate, 2);
        accel_queue_signal(qa, sa, steps + 1);
        CHECK_OK(accel_queue_submit(qa));
        accel_queue_wait(qb, sa, steps + 1);
        accel_queue_signal(qb, sb, steps + 1);
        CHECK_OK(accel_queue_submit(qb));
        accel_queue_wait(qc, sb, steps + 1);   /* a third queue behind qb's signal */
        accel_queue_signal(qc, end, 1);
        CHECK_OK(accel_queue_submit(qc));
        CHECK_OK(accel_signal_fail(sa, ACCEL_ERROR_DEVICE_LOST));
        CHECK_RESULT(accel_signal_wait(sb, steps + 1, ACCEL_WAIT_FOREVER), ACCEL_ERROR_SIGNAL_FAILED);
        CHECK_RESULT(accel_signal_wait(end, 1, ACCEL_WAIT_FOREVER), ACCEL_ERROR_SIGNAL_FAILED);
        CHECK_EQ_U64(accel_signal_value(sb), accel_signal_value(sa));
        CHECK_OK(accel_signal_set(gate, 2));   /* qa goes on (its own signal stays failed) */
        CHECK_OK(accel_queue_finish(qa, ACCEL_WAIT_FOREVER));
        CHECK_OK(accel_queue_finish(qb, ACCEL_WAIT_FOREVER));
        CHECK_OK(accel_queue_finish(qc, ACCEL_WAIT_FOREVER));
    }
    accel_queue_destroy(qa);
    accel_queue_destroy(qb);
    accel_queue_destroy(qc);
    devices_close(&d);
}

/* Destroy either device first while a peer copy waits on the other device's work: the copy still
   runs with the right bytes. order 0: the buffer's device first; 1: the queue's device first. */
static void destroy_case(accel_device* q_dev, accel_device* other, int order) {
    accel_queue *q = NULL, *oq = NULL;
    accel_buffer *mine = NULL, *theirs = NULL, *out = NULL;
    accel_signal *filled = NULL, *done = NULL, *gate = NULL;
    accel_device* keep = NULL;
    accel_device_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.backend = accel_cpu_backend();
    if (!CHECK_OK(test_device_create_desc(desc, &keep)) || !CHECK_OK(accel_signal_create(keep, 0, &gate)) ||
        !CHECK_OK(accel_signal_create(keep, 0, &done)) ||
        !CHECK_OK(test_buffer_create(keep, 256, ACCEL_MEMORY_HOST, &out)) ||
        !CHECK_OK(accel_queue_create(q_dev, ACCEL_QUEUE_COMPUTE, &q)) ||
        !CHECK_OK(accel_queue_create(other, ACCEL_QUEUE_COMPUTE, &oq)) ||
        !CHECK_OK(test_buffer_create(q_dev, 256, ACCEL_MEMORY_DEVICE, &mine)) ||
        !CHECK_OK(test_buffer_create(other, 256, ACCEL_MEMORY_DEVICE, &theirs)) ||
        !CHECK_OK(accel_signal_create(other, 0, &filled))) {
        accel_device_destroy(q_dev);
        accel_device_destroy(other);
        accel_device_destroy(keep);
        return;
    }
    accel_queue_fill(oq, theirs, 0, 256, 0xC0FFEE00u + (uint32_t)order);
    accel_queue_signal(oq, filled, 1);
    CHECK_OK(accel_queue_submit(oq));
    accel_queue_wait(q, filled, 1);
    accel_queue_copy(q, mine, 0, theirs, 0, 256);
    accel_queue_copy(q, out, 0, mine, 0, 256);     /* into the CPU device that outlives both */
    accel_queue_signal(q, done, 1);
    CHECK_OK(accel_queue_submit(q));
    accel_buffer_destroy(theirs);
    accel_signal_destroy(filled);
    accel_buffer_destroy(mine);
    if (order == 0) { accel_device_destroy(other); accel_device_destroy(q_dev); }
    else { accel_device_destroy(q_dev); accel_device_destroy(other); }
    CHECK_OK(accel_signal_wait(done, 1, ACCEL_WAIT_FOREVER));
    CHECK_EQ_U64(test_buffer_u32(out, 0), 0xC0FFEE00u + (uint32_t)order);
    CHECK_EQ_U64(test_buffer_u32(out, 63), 0xC0FFEE00u + (uint32_t)order);
    accel_device_destroy(keep);
}
TEST(destroy_either_device_with_peer_work_pending) {
    for (int order = 0; order < 2; order++)
        for (int kind = 0; kind < 4; kind++) {
            devices d;
            accel_device *x, *y;
            if (!devices_open(&d)) { devices_close(&d); return; }
            x = kind == 0 ? d.a : kind == 1 ? d.b : kind == 2 ? d.a : d.cpu;
            y = kind == 0 ? d.b : kind == 1 ? d.a : kind == 2 ? d.cpu : d.a;
            /* the pair under test goes to destroy_case, which destroys both; the third one here */
            if (d.a != x && d.a != y) accel_device_destroy(d.a);
            if (d.b != x && d.b != y) accel_device_destroy(d.b);
            if (d.cpu != x && d.cpu != y) accel_device_destroy(d.cpu);
            destroy_case(x, y, order);
        }
}

/* A queue of b waited for a signal of a (a host-raised value: on a GPU, a wait on a's word), and that
   batch completed; then a goes (the signal, then the device). b's queues go on: a later point of the
   same queue, and another queue's wait on the point that had waited for a, look at nothing of a's (on
   two accel devices of one CUDA GPU a's pinned words are freed with it: the sanitizer configurations
   read them as a use after free). Both orders of the pair. */
TEST(queues_go_on_after_a_device_they_waited_on_is_destroyed) {
    for (int dir = 0; dir < 2 && !TEST_FAILED_SO_FAR(); dir++) {
        devices d;
        accel_device *a, *b;
        accel_queue *q = NULL, *q2 = NULL;
        accel_signal *sa = NULL, *sb = NULL;
        accel_buffer* out = NULL;
        if (!devices_open(&d)) { devices_close(&d); return; }
        a = dir == 0 ? d.b : d.a;
        b = dir == 0 ? d.a : d.b;
        if (CHECK_OK(accel_queue_create(b, ACCEL_QUEUE_COMPUTE, &q)) &&
            CHECK_OK(accel_queue_create(b, ACCEL_QUEUE_COMPUTE, &q2)) &&
            CHECK_OK(accel_signal_create(a, 0, &sa)) && CHECK_OK(accel_signal_create(b, 0, &sb)) &&
            CHECK_OK(test_buffer_create(b, 4096, ACCEL_MEMORY_HOST, &out))) {
            accel_queue_wait(q, sa, 1);
            accel_queue_fill(q, out, 0, 4096, 1);
            accel_queue_signal(q, sb, 1);
            CHECK_OK(accel_queue_submit(q));
            CHECK_OK(accel_signal_set(sa, 1));
            CHECK_OK(accel_signal_wait(sb, 1, ACCEL_WAIT_FOREVER));
            accel_signal_destroy(sa);
            sa = NULL;
            accel_device_destroy(a);
            if (dir == 0) d.b = NULL; else d.a = NULL;
            accel_queue_fill(q, out, 0, 4, 2);
            accel_queue_signal(q, sb, 2);
            CHECK_OK(accel_queue_submit(q));
            accel_queue_wait(q2, sb, 1);   /* the point that waited for a's signal */
            accel_queue_fill(q2, out, 4092, 4, 3);
            accel_queue_wait(q2, sb, 2);
            accel_queue_fill(q2, out, 4088, 4, 4);
            CHECK_OK(accel_queue_finish(q2, ACCEL_WAIT_FOREVER));
            CHECK_EQ_U64(accel_signal_value(sb), 2);
            CHECK_EQ_U64(test_buffer_u32(out, 0), 2);
            CHECK_EQ_U64(test_buffer_u32(out, 1), 1);
            CHECK_EQ_U64(test_buffer_u32(out, 1022), 4);
            CHECK_EQ_U64(test_buffer_u32(out, 1023), 3);
        }
        accel_signal_destroy(sa);
        accel_buffer_destroy(out);
        accel_queue_destroy(q);
        accel_queue_destroy(q2);
        accel_signal_destroy(sb);
        devices_close(&d);
    }
}

/* A buffer of one device goes while a queue of the other waits on the GPU for a host-set signal. On
   CUDA a release is held back while a GPU wait is pending on ANY CUDA device of the process (cuda:
   releases; the mock's cuMemFree/cuMemFreeHost wait for every stream): the destroys return at once, not
   once the signal is set (here by a thread that sets it when they have returned, else after 3 s), and
   the wait's work completes. Host and device memory, then the other device itself; either direction. */
typedef struct setter_arg { accel_signal *go, *s; } setter_arg;
#if TEST_HAVE_THREADS
static void set_after_go(void* p) {
    setter_arg* a = (setter_arg*)p;
    accel_signal_wait(a->go, 1, 3000000000ull);   /* go, or 3 s (a destroy that waits for s) */
    CHECK_OK(accel_signal_set(a->s, 1));
}
#endif
static void destroy_while_waiting_case(devices* d, int dir) {
#if TEST_HAVE_THREADS
    accel_device *w = dir ? d->b : d->a, *o = dir ? d->a : d->b;
    accel_queue* q = NULL;
    accel_signal *s = NULL, *done = NULL, *go = NULL;
    accel_buffer *x = NULL, *host = NULL, *mem = NULL;
    setter_arg arg;
    test_thread t;
    uint64_t t0, took;
    if (!CHECK_OK(accel_queue_create(w, ACCEL_QUEUE_COMPUTE, &q)) ||
        !CHECK_OK(accel_signal_create(w, 0, &s)) ||
        !CHECK_OK(accel_signal_create(w, 0, &done)) || !CHECK_OK(accel_signal_create(d->cpu, 0, &go)) ||
        !CHECK_OK(test_buffer_create(w, 4096, ACCEL_MEMORY_DEVICE, &x)) ||
        !CHECK_OK(test_buffer_create(o, 4096, ACCEL_MEMORY_HOST, &host)) ||
        !CHECK_OK(test_buffer_create(o, 4096, ACCEL_MEMORY_DEVICE, &mem)))
        goto out;
    accel_queue_wait(q, s, 1);   /* a host-set value: on a GPU, a wait on the signal's word */
    accel_queue_fill(q, x, 0, 4096, 7);
    accel_queue_signal(q, done, 1);
    CHECK_OK(accel_queue_submit(q));
    arg.go = go;
    arg.s = s;
    if (!CHECK(test_thread_start(&t, set_after_go, &arg))) { accel_signal_set(s, 1); goto out; }
    /* 0.2 s for the worker to hand the wait to the GPU */
    CHECK_EQ_U64(accel_signal_wait(done, 1, 200000000ull), ACCEL_TIMEOUT);
    t0 = test_now_ns();
    accel_buffer_destroy(host);
    accel_buffer_destroy(mem);
    host = mem = NULL;
    accel_device_destroy(o);   /* its pinned words too (on CUDA the last out of its context: kept retained) */
    if (dir) d->a = NULL; else d->b = NULL;
    took = test_now_ns() - t0;
    CHECK_OK(accel_signal_set(go, 1));
    test_thread_join(&t);
    if (!CHECK(took < 1500000000ull))
        fprintf(stderr, "  the destroys took %.2f s: they waited for the other's GPU wait\n", took / 1e9);
    CHECK_OK(accel_signal_wait(done, 1, ACCEL_WAIT_FOREVER));
    CHECK_EQ_U64(test_buffer_u32(x, 1023), 7);
out:
    accel_buffer_destroy(host);
    accel_buffer_destroy(mem);
    accel_queue_destroy(q);
    accel_buffer_destroy(x);
    accel_signal_destroy(s);
    accel_signal_destroy(done);
    accel_signal_destroy(go);
#else
    (void)d; (void)dir;
#endif
}
TEST(destroy_on_one_device_while_the_other_waits_on_the_gpu) {
    for (int dir = 0; dir < 2 && !TEST_FAILED_SO_FAR(); dir++) {
        devices d;
        if (devices_open(&d)) destroy_while_waiting_case(&d, dir);
        devices_close(&d);
    }
}

/* A recorded list with a peer copy replays it (GPU backends: in the generic form, since the copy is
   staged); a patch may bring another device's buffer where the list can take it. */
/* A list recorded on a queue of q_dev copies 256 bytes from a buffer of `other` into q_dev's; replayed,
   then patched with another buffer of `other` (size2 bytes). native: 1 the list must be built natively,
   0 must not be, -1 either. */
/* On q: a list copying 256 bytes of theirs (word 63: 11) into mine, replayed, then with a patch that
   brings theirs2 (word 63: 22); native: whether the list must be the backend's own (-1: either). */
static void list_replays(accel_queue* q, accel_buffer* mine, accel_buffer* theirs, accel_buffer* theirs2,
                         int native) {
    accel_commands* list = NULL;
    accel_patch patch;
    if (!CHECK_OK(test_buffer_set_u32(theirs, 64, 11)) || !CHECK_OK(test_buffer_set_u32(theirs2, 64, 22)) ||
        !CHECK_OK(accel_queue_record_begin(q)))
        return;
    accel_queue_copy(q, mine, 0, theirs, 0, 256);
    if (CHECK_OK(accel_queue_record_end(q, &list))) {
#if defined(ACCEL_I_KIT)   /* the implementation is in this unit (the C++ configs link it apart) */
        if (native >= 0) CHECK((list->native != NULL) == (native == 1));
#else
        (void)native;
#endif
        accel_queue_replay(q, list, NULL, 0);
        CHECK_OK(accel_queue_finish(q, ACCEL_WAIT_FOREVER));
        CHECK_EQ_U64(test_buffer_u32(mine, 63), 11);
        memset(&patch, 0, sizeof patch);
        patch.command = 0;
        patch.index = 1;
        patch.buffer = theirs2;
        accel_queue_replay(q, list, &patch, 1);
        CHECK_OK(accel_queue_finish(q, ACCEL_WAIT_FOREVER));
        CHECK_EQ_U64(test_buffer_u32(mine, 63), 22);
    }
    accel_commands_destroy(list);
}
static void list_case(accel_device* q_dev, accel_device* other, size_t size2, int native) {
    accel_queue* q = NULL;
    accel_buffer *mine = NULL, *theirs = NULL, *theirs2 = NULL;
    if (CHECK_OK(accel_queue_create(q_dev, ACCEL_QUEUE_COMPUTE, &q)) &&
        CHECK_OK(test_buffer_create(q_dev, 256, ACCEL_MEMORY_DEVICE, &mine)) &&
        CHECK_OK(test_buffer_create(other, 256, ACCEL_MEMORY_DEVICE, &theirs)) &&
        CHECK_OK(test_buffer_create(other, size2, ACCEL_MEMORY_DEVICE, &theirs2)))
        list_replays(q, mine, theirs, theirs2, native);
    accel_queue_destroy(q);
    accel_buffer_destroy(mine);
    accel_buffer_destroy(theirs);
    accel_buffer_destroy(theirs2);
}
TEST(recorded_list_with_a_peer_copy) {
    devices d;
    if (!devices_open(&d)) { devices_close(&d); return; }
    list_case(d.a, d.cpu, 256, -1);
    devices_close(&d);
}

/* A list built natively (a copy between two buffers of the queue's device), replayed with a patch that
   brings another device's buffer whose copy is staged (a CPU device's, on a GPU queue): that replay
   takes the generic form (DESIGN 7.2: patches take other devices' buffers; it was a bad patch), the
   next one without the patch the native form again. */
TEST(native_list_patched_with_a_buffer_that_stages) {
    devices d;
    accel_queue* q = NULL;
    accel_buffer *mine = NULL, *src = NULL, *theirs = NULL;
    accel_commands* list = NULL;
    accel_patch patch;
    if (!devices_open(&d)) { devices_close(&d); return; }
    if (CHECK_OK(accel_queue_create(d.a, ACCEL_QUEUE_COMPUTE, &q)) &&
        CHECK_OK(test_buffer_create(d.a, 256, ACCEL_MEMORY_DEVICE, &mine)) &&
        CHECK_OK(test_buffer_create(d.a, 256, ACCEL_MEMORY_DEVICE, &src)) &&
        CHECK_OK(test_buffer_create(d.cpu, 256, ACCEL_MEMORY_DEVICE, &theirs)) &&
        CHECK_OK(test_buffer_set_u32(src, 64, 11)) && CHECK_OK(test_buffer_set_u32(theirs, 64, 22)) &&
        CHECK_OK(accel_queue_record_begin(q))) {
        accel_queue_copy(q, mine, 0, src, 0, 256);
        if (CHECK_OK(accel_queue_record_end(q, &list))) {
            memset(&patch, 0, sizeof patch);
            patch.index = 1;
            patch.buffer = theirs;
            accel_queue_replay(q, list, &patch, 1);
            CHECK_OK(accel_queue_submit(q));
            CHECK_OK(accel_queue_finish(q, ACCEL_WAIT_FOREVER));
            CHECK_EQ_U64(test_buffer_u32(mine, 0), 22);
            CHECK_EQ_U64(test_buffer_u32(mine, 63), 22);
            accel_queue_replay(q, list, NULL, 0);
            CHECK_OK(accel_queue_submit(q));
            CHECK_OK(accel_queue_finish(q, ACCEL_WAIT_FOREVER));
            CHECK_EQ_U64(test_buffer_u32(mine, 63), 11);
        }
    }
    accel_commands_destroy(list);
    accel_queue_destroy(q);
    accel_buffer_destroy(mine);
    accel_buffer_destroy(src);
    accel_buffer_destroy(theirs);
    devices_close(&d);
}

/* Vulkan to Vulkan (two accel devices on lavapipe, or on one GPU): direct copies through imported
   memory (accel_vulkan.h, "vulkan: peer copies"), counted by the importer's debug count; ranges of
   different blocks, a buffer with memory of its own, views, both directions, a native recorded list
   with a patch, imports freed with their memory. ACCEL_VULKAN_NO_EXTERNAL_MEMORY: staged, reported. */
#ifdef ACCEL_TEST_HAVE_VULKAN
static uint32_t vk_imports(accel_device* d) { return atomic_load(&d->imports); }
/* copies n bytes of theirs (other's) at soff into a fresh buffer of q's device and back into theirs at
   doff, through views where `views`; checks both */
static void vk_round_trip(accel_device* qd, accel_queue* q, accel_buffer* theirs, size_t soff, size_t doff,
                          size_t n, uint32_t seed, bool views) {
    accel_buffer *mine = NULL, *vs = NULL, *vd = NULL;
    if (CHECK_OK(test_buffer_create(qd, n + 64, ACCEL_MEMORY_DEVICE, &mine))) {
        accel_buffer *src = theirs, *dst = theirs;
        size_t s = soff, d = doff;
        if (views && CHECK_OK(accel_buffer_view_create(theirs, soff, n, &vs)) &&
            CHECK_OK(accel_buffer_view_create(theirs, doff, n, &vd))) {
            src = vs; dst = vd; s = 0; d = 0;
        }
        accel_queue_copy(q, mine, 64, src, s, n);
        accel_queue_copy(q, dst, d, mine, 64, n);
        CHECK_OK(accel_queue_finish(q, ACCEL_WAIT_FOREVER));
        expect_pattern(mine, 64, n, soff, seed);
        expect_pattern(theirs, doff, n, soff, seed);
        if (TEST_FAILED_SO_FAR())
            fprintf(stderr, "  round trip: from %zu to %zu, %zu bytes, views %d\n", soff, doff, n,
                    (int)views);
    }
    accel_buffer_destroy(vd);
    accel_buffer_destroy(vs);
    accel_buffer_destroy(mine);
}
/* Buffers of another device that an importer copies through: five of 6 MiB that fill a 32 MiB block
   (the last one written), one in a second block and one of 9 MiB with memory of its own (both
   written). import_rounds makes them and copies through each on q (of qd), which imports each memory
   once: ranges of the first block to its last byte, through views and of one byte, the second block,
   the buffer with memory of its own; all three imported then. */
typedef struct import_bufs { accel_buffer *fill[5], *late, *own; } import_bufs;
#define SIX_MIB ((size_t)6 << 20)
#define NINE_MIB ((size_t)9 << 20)
static void import_rounds(accel_device* qd, accel_queue* q, accel_device* other, import_bufs* s,
                          const unsigned char* pat, uint32_t seed) {
    memset(s, 0, sizeof *s);
    for (int i = 0; i < 5; i++)
        CHECK_OK(test_buffer_create(other, SIX_MIB, ACCEL_MEMORY_DEVICE, &s->fill[i]));
    CHECK_OK(test_buffer_create(other, SIX_MIB, ACCEL_MEMORY_DEVICE, &s->late));   /* a second block */
    CHECK_OK(test_buffer_create(other, NINE_MIB, ACCEL_MEMORY_DEVICE, &s->own));   /* memory of its own */
    if (TEST_FAILED_SO_FAR()) return;
    CHECK_OK(accel_buffer_write(s->fill[4], 0, pat, SIX_MIB));
    CHECK_OK(accel_buffer_write(s->late, 0, pat, SIX_MIB));
    CHECK_OK(accel_buffer_write(s->own, 0, pat, NINE_MIB));
    vk_round_trip(qd, q, s->fill[4], SIX_MIB - 4099, 8195, 4099, seed, false);   /* to the block's end */
    CHECK_EQ_INT(vk_imports(qd), 1);
    vk_round_trip(qd, q, s->fill[4], 256, SIX_MIB - 5120, 4000, seed, true);
    vk_round_trip(qd, q, s->fill[4], 77, 78, 1, seed, false);
    CHECK_EQ_INT(vk_imports(qd), 1);
    vk_round_trip(qd, q, s->late, 1, 3 << 20, (size_t)1 << 20, seed, false);
    CHECK_EQ_INT(vk_imports(qd), 2);
    vk_round_trip(qd, q, s->own, 4096, NINE_MIB - ((size_t)2 << 20), (size_t)2 << 20, seed, true);
    CHECK_EQ_INT(vk_imports(qd), 3);
}
static void import_bufs_free(import_bufs* s) {
    for (int i = 0; i < 5; i++) accel_buffer_destroy(s->fill[i]);
    accel_buffer_destroy(s->late);
    accel_buffer_destroy(s->own);
}
TEST(vulkan_copies_through_imported_memory) {
    devices d;
    accel_peer_info ab, ba;
    accel_queue *qa = NULL, *qb = NULL;
    accel_buffer* back = NULL;
    import_bufs s;
    unsigned char* pat = pattern_make(NINE_MIB, 5);
    const char* off = getenv("ACCEL_VULKAN_NO_EXTERNAL_MEMORY");
    memset(&s, 0, sizeof s);
    if (test_g.backend != accel_vulkan_backend()) { free(pat); SKIP("Vulkan only"); }
    if (!devices_open(&d)) { devices_close(&d); free(pat); return; }
    CHECK_OK(accel_device_peer_info(d.a, d.b, &ab));
    CHECK_OK(accel_device_peer_info(d.b, d.a, &ba));
    CHECK(ab.direct_copy == ba.direct_copy);
    /* exported timeline semaphores (not on lavapipe 22.3: its waits stay on the host) */
    CHECK(ab.device_waits == (accel_i_vk_dev(d.a)->ext_sem && accel_i_vk_dev(d.b)->ext_sem));
    if (off && off[0] && strcmp(off, "0") != 0) CHECK(!ab.direct_copy);
    if (!ab.direct_copy || !pat) {
        devices_close(&d);
        free(pat);
        SKIP("no VK_KHR_external_memory_fd (or ACCEL_VULKAN_NO_EXTERNAL_MEMORY): copies are staged");
    }
    CHECK_EQ_INT(vk_imports(d.a), 0);
    if (CHECK_OK(accel_queue_create(d.a, ACCEL_QUEUE_COMPUTE, &qa)) &&
        CHECK_OK(accel_queue_create(d.b, ACCEL_QUEUE_COMPUTE, &qb))) {
        import_rounds(d.a, qa, d.b, &s, pat, 5);
        if (!TEST_FAILED_SO_FAR()) {
            CHECK_EQ_INT(vk_imports(d.b), 0);
            CHECK_OK(test_buffer_create(d.a, SIX_MIB, ACCEL_MEMORY_DEVICE, &back));   /* the other way */
            CHECK_OK(accel_buffer_write(back, 0, pat, SIX_MIB));
            vk_round_trip(d.b, qb, back, 9, 4096, 65536, 5, false);
            CHECK_EQ_INT(vk_imports(d.b), 1);
            accel_buffer_destroy(s.own);   /* its memory goes, and its import with it */
            s.own = NULL;
            CHECK_EQ_INT(vk_imports(d.a), 2);
        }
    }
    import_bufs_free(&s);
    accel_buffer_destroy(back);
    accel_queue_destroy(qa);
    accel_queue_destroy(qb);
    CHECK(vk_imports(d.a) <= 1);   /* the blocks went, but one kept as a spare (its import too) */
    devices_close(&d);
    free(pat);
}
/* A natively built list copies from the other Vulkan device's buffer; a patch brings another one. */
TEST(vulkan_recorded_list_with_a_direct_peer_copy) {
    devices d;
    accel_peer_info pi;
    if (test_g.backend != accel_vulkan_backend()) SKIP("Vulkan only");
    if (!devices_open(&d)) { devices_close(&d); return; }
    if (!CHECK_OK(accel_device_peer_info(d.a, d.b, &pi)) || !pi.direct_copy) {
        devices_close(&d);
        SKIP("copies between the two Vulkan devices are staged");
    }
    list_case(d.a, d.b, (size_t)12 << 20, 1);   /* the patch: a buffer with memory of its own */
    devices_close(&d);
}
/* A device exports the memory it allocates only while another device can import it: a buffer made
   before the second device opened is copied staged (right bytes, no import), one made after directly. */
TEST(vulkan_memory_made_before_the_peer_opened_is_staged) {
    accel_device *x = NULL, *y = NULL;
    accel_queue* q = NULL;
    accel_buffer *early = NULL, *later = NULL;
    accel_peer_info pi;
    unsigned char* pat = pattern_make(4096, 3);
    if (test_g.backend != accel_vulkan_backend()) { free(pat); SKIP("Vulkan only"); }
    if (CHECK(pat != NULL) && CHECK_OK(test_device_create(&x)) &&
        CHECK_OK(test_buffer_create(x, 4096, ACCEL_MEMORY_DEVICE, &early)) &&
        CHECK_OK(accel_buffer_write(early, 0, pat, 4096)) && CHECK_OK(test_device_create(&y)) &&
        CHECK_OK(accel_device_peer_info(y, x, &pi)) && pi.direct_copy &&
        CHECK_OK(test_buffer_create(x, 4096, ACCEL_MEMORY_DEVICE, &later)) &&
        CHECK_OK(accel_buffer_write(later, 0, pat, 4096)) &&
        CHECK_OK(accel_queue_create(y, ACCEL_QUEUE_COMPUTE, &q))) {
        CHECK_EQ_INT(atomic_load(&x->exporting), 1);
        vk_round_trip(y, q, early, 5, 2048, 1000, 3, false);
        CHECK_EQ_INT(vk_imports(y), 0);
        vk_round_trip(y, q, later, 5, 2048, 1000, 3, false);
        CHECK_EQ_INT(vk_imports(y), 1);
    }
    accel_queue_destroy(q);
    accel_buffer_destroy(early);
    accel_buffer_destroy(later);
    accel_device_destroy(y);
    if (x) CHECK_EQ_INT(atomic_load(&x->exporting), 0);   /* alone again */
    accel_device_destroy(x);
    free(pat);
}
/* A recover of the importer frees its imports; one of the exporter frees its blocks, and with them
   their imports elsewhere; copies of buffers made afterwards are direct again. */
TEST(vulkan_imports_across_recovers) {
    devices d;
    accel_queue* q = NULL;
    accel_buffer *theirs = NULL, *again = NULL;
    accel_peer_info pi;
    unsigned char* pat = pattern_make(8192, 4);
    if (test_g.backend != accel_vulkan_backend()) { free(pat); SKIP("Vulkan only"); }
    if (!devices_open(&d)) { devices_close(&d); free(pat); return; }
    if (!CHECK_OK(accel_device_peer_info(d.a, d.b, &pi)) || !pi.direct_copy || !pat) {
        devices_close(&d);
        free(pat);
        SKIP("copies between the two Vulkan devices are staged");
    }
    if (CHECK_OK(accel_queue_create(d.a, ACCEL_QUEUE_COMPUTE, &q)) &&
        CHECK_OK(test_buffer_create(d.b, 8192, ACCEL_MEMORY_DEVICE, &theirs)) &&
        CHECK_OK(accel_buffer_write(theirs, 0, pat, 8192))) {
        vk_round_trip(d.a, q, theirs, 0, 4096, 4096, 4, false);
        CHECK_EQ_INT(vk_imports(d.a), 1);
        accel_queue_destroy(q);
        q = NULL;
        CHECK_OK(accel_device_recover(d.a));   /* the importer */
        CHECK_EQ_INT(vk_imports(d.a), 0);
        if (CHECK_OK(accel_queue_create(d.a, ACCEL_QUEUE_COMPUTE, &q))) {
            vk_round_trip(d.a, q, theirs, 0, 4096, 4096, 4, false);
            CHECK_EQ_INT(vk_imports(d.a), 1);
        }
        accel_buffer_destroy(theirs);
        theirs = NULL;
        CHECK_OK(accel_device_recover(d.b));   /* the exporter: its blocks go, their imports too */
        CHECK_EQ_INT(vk_imports(d.a), 0);
        if (CHECK_OK(test_buffer_create(d.b, 8192, ACCEL_MEMORY_DEVICE, &again)) &&
            CHECK_OK(accel_buffer_write(again, 0, pat, 8192))) {
            vk_round_trip(d.a, q, again, 100, 5000, 3000, 4, false);
            CHECK_EQ_INT(vk_imports(d.a), 1);
        }
    }
    accel_queue_destroy(q);
    accel_buffer_destroy(theirs);
    accel_buffer_destroy(again);
    devices_close(&d);
    free(pat);
}
#else
TEST(vulkan_imports_across_recovers) { SKIP("built without Vulkan"); }
TEST(vulkan_memory_made_before_the_peer_opened_is_staged) { SKIP("built without Vulkan"); }
TEST(vulkan_copies_through_imported_memory) { SKIP("built without Vulkan"); }
TEST(vulkan_recorded_list_with_a_direct_peer_copy) { SKIP("built without Vulkan"); }
#endif

/* CUDA and Vulkan on one GPU (ACCEL_TEST_PEER=vulkan; the CUDA mock and lavapipe in CI): a CUDA queue's
   copies with Vulkan buffers go through the Vulkan memory imported into CUDA (accel_cuda.h, "cuda:
   imported memory"), counted by the CUDA device's imports (and, on the mock, by the driver's live
   imports and mappings): ranges of two blocks, a buffer with memory of its own, views, both
   directions, a native recorded list with a patch; an import goes with its memory (eviction), and
   with either device in either order. */
#if PEER_VK
/* The mock's function `name`; NULL where the driver is not the mock. */
static void* mock_sym(const char* name) {
    const char* path = getenv("ACCEL_CUDA_LIBRARY");
    void* lib;
    if (!path || !strstr(path, "mock") || !(lib = dlopen(path, RTLD_NOW | RTLD_NOLOAD))) return NULL;
    return dlsym(lib, name);
}
/* the mock's live imports (which 0) or mapped buffers (1); -1 where the driver is not the mock */
static long long mock_imports(int which) {
    void* sym = mock_sym("mock_cuda_live_imports");
    long long (*fn)(int);
    if (!sym) return -1;
    memcpy(&fn, &sym, sizeof sym);
    return fn(which);
}
/* the mock's count `name` (a function of no argument); -1 where the driver is not the mock */
static long long mock_fn0(const char* name) {
    void* sym = mock_sym(name);
    long long (*fn)(void);
    if (!sym) return -1;
    memcpy(&fn, &sym, sizeof sym);
    return fn();
}

/* ---- a stand-in for a Vulkan driver that exports timeline semaphores ----
   Lavapipe 22.3 exports none, so without a GPU a CUDA queue's wait on a Vulkan signal never takes the
   GPU path (accel_cuda.h, "cuda: waits on Vulkan signals"). With ACCEL_TEST_VK_SEM_EXPORT=1 the test
   stands in for the export, on the Vulkan device peer_vulkan_open makes: its entry points are patched
   so that its semaphores are made as before (lavapipe's, the export request taken out),
   vkGetSemaphoreFdKHR hands out a memfd that names the semaphore, and the CUDA mock, given the provider
   below (mock_cuda_sem_provider), waits on the semaphore, and raises it, through lavapipe's host calls
   in its streams. A semaphore destroyed while the mock still holds it keeps its last value, as an
   exported payload outlives its VkSemaphore. The device's own imports are untouched (lavapipe's). */
int memfd_create(const char* name, unsigned int flags);   /* glibc; <sys/mman.h> hides it in C11 */
typedef struct vk_sem_entry {
    VkDevice dev; VkSemaphore sem;
    uint64_t ino;         /* the memfd handed out for it */
    uint64_t last;        /* its value when it went (gone) */
    int gone, refs;       /* refs: the mock's imports of it */
} vk_sem_entry;
typedef struct mock_cuda_sem_ops {   /* tests/mock_cuda.c's */
    void* user;
    int (*resolve)(void* user, int fd, void** handle);
    int (*reached)(void* user, void* handle, uint64_t value, uint64_t timeout_ns);
    void (*signal)(void* user, void* handle, uint64_t value);
    void (*release)(void* user, void* handle);
} mock_cuda_sem_ops;
enum { VK_SEMS_MAX = 512 };
static struct {
    accel_i_a32 lock;
    vk_sem_entry e[VK_SEMS_MAX];
    accel_i_vk_dtab real;   /* the device's own entry points */
    long long exports;
    int patched;            /* a device was patched (not where its driver exports semaphores) */
} vk_sems;
static bool vk_sems_on(void) {
    const char* e = getenv("ACCEL_TEST_VK_SEM_EXPORT");
    return e && e[0] && strcmp(e, "0") != 0;
}
static VkResult VKAPI_CALL vk_sems_create(VkDevice dev, const VkSemaphoreCreateInfo* ci,
                                          const VkAllocationCallbacks* cb, VkSemaphore* out) {
    VkSemaphoreCreateInfo c = *ci;
    VkSemaphoreTypeCreateInfo type;
    c.pNext = NULL;
    for (const VkBaseInStructure* n = (const VkBaseInStructure*)ci->pNext; n; n = n->pNext)
        if (n->sType == VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO) {   /* the export request goes */
            memcpy(&type, n, sizeof type);
            type.pNext = NULL;
            c.pNext = &type;
        }
    return vk_sems.real.CreateSemaphore(dev, &c, cb, out);
}
/* The entry's semaphore is going (lock held): it keeps its value. */
static void vk_sems_retire(vk_sem_entry* e) {
    uint64_t v = 0;
    if (vk_sems.real.GetSemaphoreCounterValue(e->dev, e->sem, &v) == VK_SUCCESS) e->last = v;
    e->gone = 1;
}
static void VKAPI_CALL vk_sems_destroy(VkDevice dev, VkSemaphore sem, const VkAllocationCallbacks* cb) {
    accel_i_spin_lock(&vk_sems.lock);
    for (int i = 0; i < VK_SEMS_MAX; i++) {
        vk_sem_entry* e = &vk_sems.e[i];
        if (e->sem == sem && e->dev == dev && !e->gone) vk_sems_retire(e);
    }
    vk_sems.real.DestroySemaphore(dev, sem, cb);
    accel_i_spin_unlock(&vk_sems.lock);
}
static void VKAPI_CALL vk_sems_destroy_device(VkDevice dev, const VkAllocationCallbacks* cb) {
    accel_i_spin_lock(&vk_sems.lock);
    for (int i = 0; i < VK_SEMS_MAX; i++) {
        vk_sem_entry* e = &vk_sems.e[i];
        if (e->dev == dev && e->sem && !e->gone) vk_sems_retire(e);
    }
    vk_sems.real.DestroyDevice(dev, cb);
    accel_i_spin_unlock(&vk_sems.lock);
}
static VkResult VKAPI_CALL vk_sems_get_fd(VkDevice dev, const VkSemaphoreGetFdInfoKHR* gi, int* fd) {
    struct stat st;
    VkResult vr = VK_ERROR_TOO_MANY_OBJECTS;
    int f = memfd_create("accel-test-semaphore", 1u /* MFD_CLOEXEC */);
    if (f < 0 || fstat(f, &st) != 0) {
        if (f >= 0) close(f);
        return VK_ERROR_TOO_MANY_OBJECTS;
    }
    accel_i_spin_lock(&vk_sems.lock);
    for (int i = 0; i < VK_SEMS_MAX; i++) {
        vk_sem_entry* e = &vk_sems.e[i];
        if (e->sem && !(e->gone && e->refs == 0)) continue;   /* a free slot */
        memset(e, 0, sizeof *e);
        e->dev = dev;
        e->sem = gi->semaphore;
        e->ino = (uint64_t)st.st_ino;
        vk_sems.exports++;
        vr = VK_SUCCESS;
        break;
    }
    accel_i_spin_unlock(&vk_sems.lock);
    if (vr == VK_SUCCESS) *fd = f;
    else close(f);
    return vr;
}
/* the provider: the mock's side */
static int vk_sems_resolve(void* user, int fd, void** handle) {
    struct stat st;
    int r = -1;
    (void)user;
    if (fstat(fd, &st) != 0) return -1;
    accel_i_spin_lock(&vk_sems.lock);
    for (int i = 0; i < VK_SEMS_MAX && r; i++)
        if (vk_sems.e[i].sem && !vk_sems.e[i].gone && vk_sems.e[i].ino == (uint64_t)st.st_ino) {
            vk_sems.e[i].refs++;
            *handle = &vk_sems.e[i];
            r = 0;
        }
    accel_i_spin_unlock(&vk_sems.lock);
    return r;
}
static int vk_sems_reached(void* user, void* handle, uint64_t value, uint64_t timeout_ns) {
    vk_sem_entry* e = (vk_sem_entry*)handle;
    uint64_t v = 0;
    (void)user;
    (void)timeout_ns;
    accel_i_spin_lock(&vk_sems.lock);
    if (e->gone) v = e->last;
    else if (vk_sems.real.GetSemaphoreCounterValue(e->dev, e->sem, &v) != VK_SUCCESS) v = 0;
    accel_i_spin_unlock(&vk_sems.lock);
    if (v >= value) return 1;
    return 0;   /* the mock yields and asks again */
}
static void vk_sems_signal(void* user, void* handle, uint64_t value) {
    vk_sem_entry* e = (vk_sem_entry*)handle;
    VkSemaphoreSignalInfo si;
    (void)user;
    memset(&si, 0, sizeof si);
    si.sType = VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO;
    si.semaphore = e->sem;
    si.value = value;
    accel_i_spin_lock(&vk_sems.lock);
    if (e->gone) e->last = value > e->last ? value : e->last;
    else vk_sems.real.SignalSemaphore(e->dev, &si);
    accel_i_spin_unlock(&vk_sems.lock);
}
static void vk_sems_release(void* user, void* handle) {
    (void)user;
    accel_i_spin_lock(&vk_sems.lock);
    ((vk_sem_entry*)handle)->refs--;
    accel_i_spin_unlock(&vk_sems.lock);
}
/* The mock's imports of the stand-in's semaphores not given back (its cuDestroyExternalSemaphore). */
static int vk_sems_held(void) {
    int n = 0;
    accel_i_spin_lock(&vk_sems.lock);
    for (int i = 0; i < VK_SEMS_MAX; i++) n += vk_sems.e[i].refs;
    accel_i_spin_unlock(&vk_sems.lock);
    return n;
}
/* Hands the mock the provider, once it is loaded (after the first CUDA device). */
static void vk_sems_provide(void) {
    static const mock_cuda_sem_ops ops = { NULL, vk_sems_resolve, vk_sems_reached, vk_sems_signal,
                                           vk_sems_release };
    void* sym = vk_sems_on() ? mock_sym("mock_cuda_sem_provider") : NULL;
    void (*fn)(const mock_cuda_sem_ops*);
    if (!sym) return;
    memcpy(&fn, &sym, sizeof sym);
    fn(&ops);
}
static void vk_sems_patch(accel_device* vk) {
    accel_i_vk_device* dev = accel_i_vk_dev(vk);
    if (!vk_sems_on() || dev->ext_sem) return;   /* a driver that exports them needs no stand-in */
    vk_sems.real = dev->vk;
    dev->vk.CreateSemaphore = vk_sems_create;
    dev->vk.DestroySemaphore = vk_sems_destroy;
    dev->vk.DestroyDevice = vk_sems_destroy_device;
    dev->vk.GetSemaphoreFdKHR = vk_sems_get_fd;
    dev->ext_sem = true;
    vk_sems.patched = 1;
}
static void expect_mock_imports(long long n) {
    if (mock_imports(0) < 0) return;
    CHECK_EQ_INT(mock_imports(0), n);
    CHECK_EQ_INT(mock_imports(1), n);
}
TEST(cuda_and_vulkan_copies_through_imported_memory) {
    devices d;
    accel_peer_info pi;
    accel_queue* q = NULL;
    import_bufs s;
    unsigned char* pat = pattern_make(NINE_MIB, 6);
    memset(&s, 0, sizeof s);
    if (!peer_vulkan()) { free(pat); SKIP("ACCEL_TEST_PEER=vulkan with the CUDA backend under test only"); }
    if (!devices_open(&d)) { devices_close(&d); free(pat); return; }
    if (!CHECK_OK(accel_device_peer_info(d.a, d.b, &pi)) || !pi.direct_copy || !pat) {
        devices_close(&d);
        free(pat);
        SKIP("the Vulkan device exports no memory (or the driver has no cuImportExternalMemory): staged");
    }
    CHECK_EQ_INT(atomic_load(&d.b->exporting), 1);   /* a CUDA device of its GPU could import */
    CHECK_EQ_INT(vk_imports(d.a), 0);
    if (CHECK_OK(accel_queue_create(d.a, ACCEL_QUEUE_COMPUTE, &q))) {
        import_rounds(d.a, q, d.b, &s, pat, 6);
        expect_mock_imports(3);
        CHECK_EQ_INT(vk_imports(d.b), 0);   /* a Vulkan queue imports nothing of CUDA's */
        accel_buffer_destroy(s.own);   /* its memory goes, and its import with it */
        s.own = NULL;
        CHECK_EQ_INT(vk_imports(d.a), 2);
        expect_mock_imports(2);
    }
    import_bufs_free(&s);
    accel_queue_destroy(q);
    CHECK(vk_imports(d.a) <= 1);   /* the blocks went, but one kept as a spare (its import too) */
    devices_close(&d);             /* the CUDA device first: its imports go */
    expect_mock_imports(0);
    free(pat);
}
/* A natively built CUDA list copies from a Vulkan buffer; a patch brings another one. */
TEST(cuda_recorded_list_with_a_vulkan_buffer) {
    devices d;
    accel_peer_info pi;
    if (!peer_vulkan()) SKIP("ACCEL_TEST_PEER=vulkan with the CUDA backend under test only");
    if (!devices_open(&d)) { devices_close(&d); return; }
    if (!CHECK_OK(accel_device_peer_info(d.a, d.b, &pi)) || !pi.direct_copy) {
        devices_close(&d);
        SKIP("copies between the CUDA and the Vulkan device are staged");
    }
    list_case(d.a, d.b, (size_t)12 << 20, 1);   /* the patch: a buffer with memory of its own */
    devices_close(&d);
    expect_mock_imports(0);
}
/* Vulkan memory made before the CUDA device opened is not exportable: staged, no import; memory made
   after is imported. Then each teardown order with an import alive: the Vulkan buffer first (eviction),
   the CUDA device first (its imports dropped), the Vulkan device first (its blocks, and their imports);
   and a recover of the CUDA device (its imports dropped; the next copy imports again). */
TEST(cuda_and_vulkan_imports_in_every_teardown_order) {
    unsigned char* pat = pattern_make(8192, 8);
    if (!peer_vulkan()) { free(pat); SKIP("ACCEL_TEST_PEER=vulkan with the CUDA backend under test only"); }
    for (int order = 0; order < 4 && pat && !TEST_FAILED_SO_FAR(); order++) {
        accel_device *vk = NULL, *cu = NULL;
        accel_queue* q = NULL;
        accel_buffer *early = NULL, *later = NULL;
        accel_peer_info pi;
        if (CHECK(peer_vulkan_open(&vk)) &&
            CHECK_OK(test_buffer_create(vk, 8192, ACCEL_MEMORY_DEVICE, &early)) &&
            CHECK_OK(accel_buffer_write(early, 0, pat, 8192))) {
            CHECK_EQ_INT(atomic_load(&vk->exporting), 0);   /* alone: nothing exported */
            if (CHECK_OK(test_device_create(&cu)) && CHECK_OK(accel_device_peer_info(cu, vk, &pi)) &&
                pi.direct_copy && CHECK_OK(accel_queue_create(cu, ACCEL_QUEUE_COMPUTE, &q)) &&
                CHECK_OK(test_buffer_create(vk, 8192, ACCEL_MEMORY_DEVICE, &later)) &&
                CHECK_OK(accel_buffer_write(later, 0, pat, 8192))) {
                CHECK_EQ_INT(atomic_load(&vk->exporting), 1);
                vk_round_trip(cu, q, early, 5, 4096, 3000, 8, false);   /* staged */
                CHECK_EQ_INT(vk_imports(cu), 0);
                vk_round_trip(cu, q, later, 16, 4096, 3000, 8, true);
                CHECK_EQ_INT(vk_imports(cu), 1);
                expect_mock_imports(1);
            }
        }
        accel_queue_destroy(q);
        accel_buffer_destroy(early);
        if (order == 0) {   /* the buffer (its block: its import goes once the block does), then CUDA */
            accel_buffer_destroy(later);
            accel_device_destroy(cu);
            if (vk) CHECK_EQ_INT(atomic_load(&vk->exporting), 0);   /* alone again */
            accel_device_destroy(vk);
        } else if (order == 1) {   /* the CUDA device with its import, then the Vulkan buffer */
            accel_device_destroy(cu);
            expect_mock_imports(0);
            accel_buffer_destroy(later);
            accel_device_destroy(vk);
        } else if (order == 3 && cu) {   /* a recover of the CUDA device, then a copy again */
            CHECK_OK(accel_device_recover(cu));
            CHECK_EQ_INT(vk_imports(cu), 0);
            expect_mock_imports(0);
            q = NULL;
            if (CHECK_OK(accel_queue_create(cu, ACCEL_QUEUE_COMPUTE, &q))) {
                vk_round_trip(cu, q, later, 16, 4096, 3000, 8, false);
                CHECK_EQ_INT(vk_imports(cu), 1);
                expect_mock_imports(1);
            }
            accel_queue_destroy(q);
            accel_buffer_destroy(later);
            accel_device_destroy(vk);   /* the exporter first: its memory, and the import, go */
            CHECK_EQ_INT(vk_imports(cu), 0);
            accel_device_destroy(cu);
        } else {   /* the Vulkan device (its memory: the import goes), then the CUDA device */
            accel_buffer_destroy(later);
            accel_device_destroy(vk);
            if (cu) CHECK_EQ_INT(vk_imports(cu), 0);
            expect_mock_imports(0);
            accel_device_destroy(cu);
        }
        expect_mock_imports(0);
        if (TEST_FAILED_SO_FAR()) fprintf(stderr, "  teardown order %d\n", order);
    }
    free(pat);
}
/* A CUDA queue copies out of a Vulkan queue's accel_queue_alloc memory between the Vulkan queue's signal
   after a fill and the free behind the CUDA queue's signal: the bytes of that use (direct or staged, as
   the handle's memory allows). */
/* Lavapipe has one VkQueue, which no accel queue owns (the device's own transfers share it), so a wait of
   a Vulkan queue on the device is for a value already promised there or for an engine's semaphore
   (accel_vulkan.h, "Signals: design"). The tests below hold a Vulkan queue on such a semaphore, raised by
   the host when they say go, so that everything after it is submitted, and promised, before it runs. */
typedef struct engine_gate { accel_signal* s; VkSemaphore sem; accel_device* vk; } engine_gate;
static int engine_gate_open(accel_device* vk, engine_gate* g) {
    g->vk = vk;
    g->s = NULL;
    if (!CHECK_EQ_INT(accel_i_vk_timeline(accel_i_vk_dev(vk), 0, &g->sem), VK_SUCCESS)) return 0;
    return CHECK_OK(accel_vulkan_signal_wrap(vk, g->sem, &g->s));
}
static void engine_gate_close(engine_gate* g) {
    accel_signal_destroy(g->s);   /* not the semaphore, the engine's: after accel's work on it is done */
    accel_i_vk_dev(g->vk)->vk.DestroySemaphore(accel_i_vk_dev(g->vk)->device, g->sem, NULL);
}
/* One batch on q: wait for w >= wv, signal s = sv, submitted. */
static void wait_signal(accel_queue* q, accel_signal* w, uint64_t wv, accel_signal* s, uint64_t sv) {
    accel_queue_wait(q, w, wv);
    accel_queue_signal(q, s, sv);
    CHECK_OK(accel_queue_submit(q));
}
/* Opens the devices for a test of GPU waits between CUDA and Vulkan: a Vulkan queue's on CUDA signals
   (vulkan_waits), else a CUDA queue's on Vulkan signals. 1: they go to the GPU; -1: not here (skip);
   0: not, where they must (the stand-in, on the mock: a failed check). Closed unless 1. */
static int sems_open(devices* d, bool vulkan_waits) {
    accel_peer_info pi;
    if (!peer_vulkan()) return -1;
    if (!devices_open(d)) { devices_close(d); return 0; }
    if (CHECK_OK(accel_device_peer_info(vulkan_waits ? d->b : d->a, vulkan_waits ? d->a : d->b, &pi)) &&
        pi.device_waits)
        return 1;
    devices_close(d);
    if (!vk_sems_on() || !mock_sym("mock_cuda_live_imports") || (vulkan_waits && !cuda_memops())) return -1;
    CHECK(!"waits between CUDA and Vulkan go to the GPU with the stand-in, on the mock");
    return 0;
}
#define SEMS_SKIP "ACCEL_TEST_PEER=vulkan with CUDA under test, where the Vulkan device exports timeline " \
    "semaphores (lavapipe 22.3 exports none: ACCEL_TEST_VK_SEM_EXPORT=1 stands in for one on the mock) " \
    "and, for a Vulkan queue's waits, CUDA has stream memory operations"

/* A CUDA queue's wait on a Vulkan signal of the same GPU runs on the GPU where the Vulkan device exports
   its semaphores (on the mock: ACCEL_TEST_VK_SEM_EXPORT=1, the stand-in above): the stream waits on the
   semaphore imported once (the mock counts the waits its streams ran), and the copy behind the wait
   sees the Vulkan queue's fill, rounds in a row; a failure of the Vulkan signal releases the stream and
   reaches the CUDA queue's later signal with its reason; the import goes with the signal. */
static void sem_round(accel_queue* q, accel_queue* oq, accel_buffer* mine, accel_buffer* theirs,
                      accel_signal* gate, accel_signal* filled, accel_signal* copied, uint32_t r) {
    accel_queue_wait(oq, gate, r);   /* an engine's semaphore: on the device */
    accel_queue_fill(oq, theirs, 0, 4096, 0x3C000000u + r);
    accel_queue_signal(oq, filled, r);
    CHECK_OK(accel_queue_submit(oq));
    accel_queue_wait(q, filled, r);   /* promised by the Vulkan queue's submit: on the GPU */
    accel_queue_copy(q, mine, 0, theirs, 0, 4096);
    accel_queue_signal(q, copied, r);
    CHECK_OK(accel_queue_submit(q));
    CHECK_EQ_U64(accel_signal_value(copied), r - 1);
    CHECK_OK(accel_signal_set(gate, r));
    CHECK_OK(accel_signal_wait(copied, r, ACCEL_WAIT_FOREVER));
    expect_ends(mine, 0x3C000000u + r);
}
TEST(cuda_waits_on_vulkan_signals_on_the_gpu) {
    devices d;
    accel_queue *q = NULL, *oq = NULL;
    accel_buffer *mine = NULL, *theirs = NULL;
    accel_signal *filled = NULL, *copied = NULL, *after = NULL;
    engine_gate gate = { NULL, VK_NULL_HANDLE, NULL };
    long long waits0;
    int open = sems_open(&d, false);
    if (open < 0) SKIP(SEMS_SKIP);
    if (!open) return;
    waits0 = mock_fn0("mock_cuda_sem_waits");
    if (CHECK_OK(accel_queue_create(d.a, ACCEL_QUEUE_COMPUTE, &q)) &&
        CHECK_OK(accel_queue_create(d.b, ACCEL_QUEUE_COMPUTE, &oq)) &&
        CHECK_OK(test_buffer_create(d.a, 4096, ACCEL_MEMORY_DEVICE, &mine)) &&
        CHECK_OK(test_buffer_create(d.b, 4096, ACCEL_MEMORY_DEVICE, &theirs)) && engine_gate_open(d.b, &gate) &&
        CHECK_OK(accel_signal_create(d.b, 0, &filled)) && CHECK_OK(accel_signal_create(d.a, 0, &copied)) &&
        CHECK_OK(accel_signal_create(d.a, 0, &after))) {
        for (uint32_t r = 1; r <= 3 && !TEST_FAILED_SO_FAR(); r++) {
            sem_round(q, oq, mine, theirs, gate.s, filled, copied, r);
            CHECK(accel_i_import_of(filled, d.a) != NULL);   /* imported once, kept */
        }
        if (waits0 >= 0) {   /* the mock's streams waited on the semaphore, once a round */
            CHECK(mock_fn0("mock_cuda_sem_waits") - waits0 >= 3);
            CHECK_EQ_INT(mock_fn0("mock_cuda_live_sems"), 1);
        }
        /* the failure: the CUDA queue waits on the GPU for a value the Vulkan queue promised */
        wait_signal(oq, gate.s, 4, filled, 4);
        wait_signal(q, filled, 4, after, 1);
        CHECK_EQ_U64(accel_signal_value(after), 0);
        CHECK_OK(accel_signal_fail(filled, ACCEL_ERROR_DEVICE_LOST));
        CHECK_RESULT(accel_signal_wait(after, 1, ACCEL_WAIT_FOREVER), ACCEL_ERROR_SIGNAL_FAILED);
        CHECK_EQ_U64(accel_signal_value(after), accel_signal_value(filled));
        /* the semaphore goes past the stream's wait once the Vulkan signal operation pending on it ran
           (a semaphore with one pending is not raised from the host) */
        CHECK_OK(accel_signal_set(gate.s, 4));
        CHECK_OK(accel_queue_finish(q, ACCEL_WAIT_FOREVER));
        CHECK_OK(accel_queue_finish(oq, ACCEL_WAIT_FOREVER));
        accel_signal_destroy(filled);   /* its import goes (freed as a release of the CUDA device) */
        filled = NULL;
        if (vk_sems.patched) CHECK(vk_sems.exports >= 1);   /* the stand-in's exports */
    }
    accel_queue_destroy(q);
    accel_queue_destroy(oq);
    accel_buffer_destroy(mine);
    accel_buffer_destroy(theirs);
    if (gate.s) engine_gate_close(&gate);
    accel_signal_destroy(filled);
    accel_signal_destroy(copied);
    accel_signal_destroy(after);
    devices_close(&d);   /* and the stand-in's count of the driver's imports reads 0 */
}
/* A Vulkan queue's wait on a CUDA signal of the same GPU runs on the GPU where the Vulkan device exports
   timeline semaphores (the stand-in, on the mock): the queue lends CUDA a semaphore (a relay), which
   the CUDA device raises in a stream of its own once the CUDA point that promised the value ran (the
   mock counts the raises). A relay needs a queue that owns its VkQueue; lavapipe's one VkQueue is
   shared with the device's transfers, so with the stand-in the test marks the queue's as owned, as it
   is on a GPU with several (no transfer of the Vulkan device runs while a relay is pending here).
   Rounds of a chain that runs on the GPUs alone once the engine's gate opens: the Vulkan queue signals
   `ready`, the CUDA
   queue waits for it (on its imported semaphore), fills and signals `filled`, and the Vulkan queue waits
   for that (the relay) and copies; every copy sees the fill. Then a failure of the CUDA signal reaches
   the Vulkan queue's later signal with its reason; then (on the mock: NVIDIA's driver keeps a lost
   context's error for the rest of the process) a loss of the CUDA device (an out-of-bounds kernel)
   releases the Vulkan queue's wait that its streams will never raise now; after a recover the next
   wait relays again, through a new relay. */
typedef struct relay_case {
    accel_queue *cq, *vq;
    accel_buffer *theirs, *mine;
    accel_signal *ready, *filled, *copied;
    engine_gate gate;
} relay_case;
static void relay_round(relay_case* c, uint32_t r) {
    wait_signal(c->vq, c->gate.s, r, c->ready, r);
    accel_queue_wait(c->cq, c->ready, r);   /* on the GPU: the Vulkan signal's semaphore */
    accel_queue_fill(c->cq, c->theirs, 0, 4096, 0x5E000000u + r);
    accel_queue_signal(c->cq, c->filled, r);
    CHECK_OK(accel_queue_submit(c->cq));
    accel_queue_wait(c->vq, c->filled, r);   /* promised by the CUDA point above: relayed */
    accel_queue_copy(c->vq, c->mine, 0, c->theirs, 0, 4096);
    accel_queue_signal(c->vq, c->copied, r);
    CHECK_OK(accel_queue_submit(c->vq));
    CHECK(accel_signal_value(c->copied) < r);   /* nothing ran before the gate */
    CHECK_OK(accel_signal_set(c->gate.s, r));
    CHECK_OK(accel_signal_wait(c->copied, r, ACCEL_WAIT_FOREVER));
    expect_ends(c->mine, 0x5E000000u + r);
}
/* The Vulkan queue waits (relayed) for filled = v, which the CUDA queue promises behind `ready`. */
static void relay_pending(relay_case* c, uint64_t v, accel_signal* after) {
    wait_signal(c->vq, c->gate.s, v, c->ready, v);
    wait_signal(c->cq, c->ready, v, c->filled, v);
    wait_signal(c->vq, c->filled, v, after, 1);
    CHECK_EQ_U64(accel_signal_value(after), 0);
}
/* The CUDA device is lost (an out-of-bounds kernel on a queue of its own) while the Vulkan queue waits
   for filled = v on the GPU, and the gate is still shut: only the loss releases that wait. */
static void relay_loss(devices* d, relay_case* c, uint64_t v) {
    accel_program_desc pd;
    accel_program* p = NULL;
    accel_queue* lq = NULL;
    accel_buffer* buf = NULL;
    accel_signal *after = NULL, *dead = NULL;
    memset(&pd, 0, sizeof pd);
    pd.name = "oob";
    pd.ptx = test_oob_ptx();
    pd.buffer_count = 1;
    if (CHECK_OK(accel_program_create(d->a, &pd, &p)) && CHECK_OK(accel_queue_create(d->a, 0, &lq)) &&
        CHECK_OK(test_buffer_create(d->a, 4096, ACCEL_MEMORY_DEVICE, &buf)) &&
        CHECK_OK(accel_signal_create(d->b, 0, &after)) && CHECK_OK(accel_signal_create(d->a, 0, &dead))) {
        relay_pending(c, v, after);
        accel_queue_exec(lq, p, &buf, 1, NULL, 0, accel_exec_1d(1, 1));
        accel_queue_signal(lq, dead, 1);
        CHECK_OK(accel_queue_submit(lq));
        CHECK_RESULT(accel_signal_wait(dead, 1, 30000000000ull), ACCEL_ERROR_SIGNAL_FAILED);
        /* the Vulkan queue's wait is released, its signal failed as filled did */
        CHECK_RESULT(accel_signal_wait(after, 1, 30000000000ull), ACCEL_ERROR_SIGNAL_FAILED);
        CHECK_EQ_U64(accel_signal_value(after), accel_signal_value(c->filled));
        CHECK_OK(accel_signal_set(c->gate.s, v));
        CHECK_OK(accel_queue_finish(c->vq, 30000000000ull));
    }
    accel_queue_destroy(lq);
    accel_buffer_destroy(buf);
    accel_program_destroy(p);
    accel_signal_destroy(after);
    accel_signal_destroy(dead);
}
static int relay_case_open(devices* d, relay_case* c) {
    accel_i_vk_device* vk = accel_i_vk_dev(d->b);
    memset(c, 0, sizeof *c);
    if (!CHECK_OK(accel_queue_create(d->a, ACCEL_QUEUE_COMPUTE, &c->cq)) ||
        !CHECK_OK(accel_queue_create(d->b, ACCEL_QUEUE_COMPUTE, &c->vq)) ||
        !CHECK_OK(test_buffer_create(d->a, 2u << 20, ACCEL_MEMORY_DEVICE, &c->theirs)) ||   /* exported */
        !CHECK_OK(test_buffer_create(d->b, 4096, ACCEL_MEMORY_DEVICE, &c->mine)) ||
        !engine_gate_open(d->b, &c->gate) || !CHECK_OK(accel_signal_create(d->b, 0, &c->ready)) ||
        !CHECK_OK(accel_signal_create(d->a, 0, &c->filled)) || !CHECK_OK(accel_signal_create(d->b, 0, &c->copied)))
        return 0;
    accel_i_mutex_lock(&vk->submit_lock);   /* see above: lavapipe's, with the stand-in */
    if (vk_sems.patched) ((accel_i_vk_queue*)c->vq)->hwq->owned = true;
    accel_i_mutex_unlock(&vk->submit_lock);
    return 1;
}
static void relay_case_close(relay_case* c) {
    accel_queue_destroy(c->cq);
    accel_queue_destroy(c->vq);
    accel_buffer_destroy(c->theirs);
    accel_buffer_destroy(c->mine);
    if (c->gate.s) engine_gate_close(&c->gate);
    accel_signal_destroy(c->ready);
    accel_signal_destroy(c->filled);
    accel_signal_destroy(c->copied);
}
TEST(vulkan_waits_on_cuda_signals_on_the_gpu) {
    devices d;
    relay_case c;
    accel_signal* after = NULL;
    long long raises0;
    int open = sems_open(&d, true);
    if (open < 0) SKIP(SEMS_SKIP);
    if (!open) return;
    raises0 = mock_fn0("mock_cuda_sem_signals");
    if (relay_case_open(&d, &c) && CHECK_OK(accel_signal_create(d.b, 0, &after))) {
        for (uint32_t r = 1; r <= 4 && !TEST_FAILED_SO_FAR(); r++) relay_round(&c, r);
        CHECK(((accel_i_vk_queue*)c.vq)->relays != NULL && ((accel_i_vk_queue*)c.vq)->relays->next == NULL);
        if (raises0 >= 0) CHECK(mock_fn0("mock_cuda_sem_signals") - raises0 >= 4);
        /* the failure of the CUDA signal while the Vulkan queue waits for it on the GPU */
        relay_pending(&c, 5, after);
        CHECK_OK(accel_signal_fail(c.filled, ACCEL_ERROR_DEVICE_LOST));
        CHECK_RESULT(accel_signal_wait(after, 1, ACCEL_WAIT_FOREVER), ACCEL_ERROR_SIGNAL_FAILED);
        CHECK_EQ_U64(accel_signal_value(after), accel_signal_value(c.filled));
        CHECK_OK(accel_signal_set(c.gate.s, 5));   /* the CUDA point runs, and its ticket comes */
        CHECK_OK(accel_queue_finish(c.cq, ACCEL_WAIT_FOREVER));
        CHECK_OK(accel_queue_finish(c.vq, ACCEL_WAIT_FOREVER));
        accel_signal_destroy(c.filled);
        c.filled = NULL;
        if (!mock_sym("mock_cuda_live_imports")) {   /* a real driver's loss lasts the process */
            fprintf(stderr, "  (the loss and recover part runs on the mock only)\n");
            relay_case_close(&c);
            accel_signal_destroy(after);
            devices_close(&d);
            return;
        }
        if (CHECK_OK(accel_signal_create(d.a, 0, &c.filled))) relay_loss(&d, &c, 6);
        /* after a recover: a new CUDA queue, signal and buffer, relayed again through a new relay */
        accel_queue_destroy(c.cq);
        accel_signal_destroy(c.filled);
        accel_buffer_destroy(c.theirs);
        c.cq = NULL;
        c.filled = NULL;
        c.theirs = NULL;
        if (CHECK_OK(accel_device_recover(d.a)) && CHECK_OK(accel_queue_create(d.a, 0, &c.cq)) &&
            CHECK_OK(test_buffer_create(d.a, 2u << 20, ACCEL_MEMORY_DEVICE, &c.theirs)) &&
            CHECK_OK(accel_signal_create(d.a, 0, &c.filled)))
            relay_round(&c, 7);
    }
    relay_case_close(&c);
    accel_signal_destroy(after);
    devices_close(&d);
}
/* Relays in numbers and in every teardown order (the stand-in, on the mock): three Vulkan queues wait
   on the same CUDA signal in each of 40 rounds (fan_rounds) (a relay each, made once; every round's copies see
   that round's fill, exactly once); then the relays go with their queue (order 0), or the CUDA device
   goes first while the Vulkan queues keep their relays (order 1: a new CUDA device's signal is relayed
   again afterwards), or the Vulkan device recovers first (order 2: the stale queues' relays go at their
   destroy). No driver import of a semaphore is left, nor a stand-in's reference. */
enum { FAN_QUEUES = 3 };
/* 40 rounds; 6 under the validation layer, whose tracking makes each host raise of a semaphore slow */
static uint32_t fan_rounds(void) { return getenv("VK_INSTANCE_LAYERS") ? 6u : 40u; }
typedef struct fan_sigs { accel_signal *gate, *ready, *filled; } fan_sigs;
static void fan_round(accel_queue* cq, accel_queue* const* vq, const fan_sigs* f, accel_buffer* theirs,
                      accel_buffer* const* mine, accel_signal* const* copied, uint32_t r) {
    accel_signal *gate = f->gate, *filled = f->filled;
    wait_signal(vq[0], gate, r, f->ready, r);   /* held until the host says go (an engine's semaphore) */
    accel_queue_wait(cq, f->ready, r);   /* and so is the CUDA queue, on the GPU */
    accel_queue_fill(cq, theirs, 0, 4096, 0x7A000000u + r);
    accel_queue_signal(cq, filled, r);
    CHECK_OK(accel_queue_submit(cq));
    for (int k = 0; k < FAN_QUEUES; k++) {
        accel_queue_wait(vq[k], filled, r);
        accel_queue_copy(vq[k], mine[k], 0, theirs, 0, 4096);
        accel_queue_signal(vq[k], copied[k], r);
        CHECK_OK(accel_queue_submit(vq[k]));
    }
    CHECK_OK(accel_signal_set(gate, r));
    for (int k = 0; k < FAN_QUEUES; k++) {
        CHECK_OK(accel_signal_wait(copied[k], r, ACCEL_WAIT_FOREVER));
        CHECK_EQ_U64(accel_signal_value(copied[k]), r);
        expect_ends(mine[k], 0x7A000000u + r);
    }
}
static void relays_order_case(int order) {
    devices d;
    accel_queue *cq = NULL, *vq[FAN_QUEUES] = { NULL };
    accel_buffer *theirs = NULL, *mine[FAN_QUEUES] = { NULL };
    accel_signal *filled = NULL, *ready = NULL, *copied[FAN_QUEUES] = { NULL };
    engine_gate gate = { NULL, VK_NULL_HANDLE, NULL };
    fan_sigs f;
    long long raises0;
    bool ok;
    if (!devices_open(&d)) { devices_close(&d); return; }
    raises0 = mock_fn0("mock_cuda_sem_signals");
    ok = CHECK_OK(accel_queue_create(d.a, 0, &cq)) && engine_gate_open(d.b, &gate) &&
         CHECK_OK(test_buffer_create(d.a, 2u << 20, ACCEL_MEMORY_DEVICE, &theirs)) &&
         CHECK_OK(accel_signal_create(d.a, 0, &filled)) && CHECK_OK(accel_signal_create(d.b, 0, &ready));
    f.gate = gate.s;
    f.ready = ready;
    f.filled = filled;
    for (int k = 0; k < FAN_QUEUES && ok; k++)
        ok = CHECK_OK(accel_queue_create(d.b, 0, &vq[k])) &&
             CHECK_OK(test_buffer_create(d.b, 4096, ACCEL_MEMORY_DEVICE, &mine[k])) &&
             CHECK_OK(accel_signal_create(d.b, 0, &copied[k]));
    if (ok) ((accel_i_vk_queue*)vq[0])->hwq->owned = true;   /* all share it (see relay_case_open) */
    for (uint32_t r = 1; ok && r <= fan_rounds() && !TEST_FAILED_SO_FAR(); r++)
        fan_round(cq, vq, &f, theirs, mine, copied, r);
    if (ok && raises0 >= 0) CHECK(mock_fn0("mock_cuda_sem_signals") - raises0 >= FAN_QUEUES * fan_rounds());
    for (int k = 0; k < FAN_QUEUES && ok; k++)
        CHECK(((accel_i_vk_queue*)vq[k])->relays && !((accel_i_vk_queue*)vq[k])->relays->next);
    if (ok && order == 0) {   /* the relays go with their queues: the driver's imports go too */
        for (int k = 0; k < FAN_QUEUES; k++) { accel_queue_destroy(vq[k]); vq[k] = NULL; }
        CHECK_OK(accel_queue_finish(cq, ACCEL_WAIT_FOREVER));
    }
    if (ok && order == 1) {   /* the CUDA device first; a new one's signal is relayed through the old relay */
        accel_queue_destroy(cq);
        accel_signal_destroy(filled);
        accel_buffer_destroy(theirs);
        cq = NULL, filled = NULL, theirs = NULL;
        accel_device_destroy(d.a);
        d.a = NULL;
        if (CHECK_OK(test_device_create(&d.a)) && CHECK_OK(accel_queue_create(d.a, 0, &cq)) &&
            CHECK_OK(test_buffer_create(d.a, 2u << 20, ACCEL_MEMORY_DEVICE, &theirs)) &&
            CHECK_OK(accel_signal_create(d.a, 0, &filled))) {
            f.filled = filled;
            fan_round(cq, vq, &f, theirs, mine, copied, fan_rounds() + 1);
        }
    }
    if (ok && order == 2) {   /* the queues are stale now (the engine's semaphore goes before its device) */
        for (int k = 0; k < FAN_QUEUES; k++) CHECK_OK(accel_queue_finish(vq[k], ACCEL_WAIT_FOREVER));
        engine_gate_close(&gate);
        gate.s = NULL;
        CHECK_OK(accel_device_recover(d.b));
    }
    for (int k = 0; k < FAN_QUEUES; k++) {
        accel_queue_destroy(vq[k]);
        accel_buffer_destroy(mine[k]);
        accel_signal_destroy(copied[k]);
    }
    accel_queue_destroy(cq);
    accel_buffer_destroy(theirs);
    accel_signal_destroy(filled);
    accel_signal_destroy(ready);
    if (gate.s) engine_gate_close(&gate);
    devices_close(&d);
    if (mock_fn0("mock_cuda_live_sems") >= 0) CHECK_EQ_INT(mock_fn0("mock_cuda_live_sems"), 0);
}
/* More waits relayed than a CUDA stream should hold: 300 Vulkan batches, each waiting for a CUDA signal
   whose point waits behind a Vulkan gate; the first ACCEL_I_VK_RELAY_AHEAD go to the GPU (a ticket each),
   the rest wait on the host until the stream caught up; all complete, in order. Without the
   validation layer (its tracking makes each host raise of a semaphore slow): the TSan run. */
static void relays_ahead_case(devices* d) {
    accel_queue *cq = NULL, *vq = NULL;
    accel_signal *ready = NULL, *filled = NULL, *done = NULL;
    engine_gate gate = { NULL, VK_NULL_HANDLE, NULL };
    const uint32_t n = 300;
    long long raises0 = mock_fn0("mock_cuda_sem_signals");
    if (CHECK_OK(accel_queue_create(d->a, 0, &cq)) && CHECK_OK(accel_queue_create(d->b, 0, &vq)) &&
        engine_gate_open(d->b, &gate) && CHECK_OK(accel_signal_create(d->b, 0, &ready)) &&
        CHECK_OK(accel_signal_create(d->a, 0, &filled)) && CHECK_OK(accel_signal_create(d->b, 0, &done))) {
        ((accel_i_vk_queue*)vq)->hwq->owned = true;   /* see relay_case_open */
        wait_signal(vq, gate.s, 1, ready, 1);
        wait_signal(cq, ready, 1, filled, 1);
        for (uint32_t i = 1; i <= n; i++) wait_signal(vq, filled, 1, done, i);   /* a ticket each */
        CHECK_EQ_U64(accel_signal_value(done), 0);
        CHECK_OK(accel_signal_set(gate.s, 1));
        CHECK_OK(accel_signal_wait(done, n, ACCEL_WAIT_FOREVER));
        CHECK_OK(accel_queue_finish(vq, ACCEL_WAIT_FOREVER));
        if (raises0 >= 0) {   /* the relays before the cap, none past it */
            CHECK(mock_fn0("mock_cuda_sem_signals") - raises0 >= ACCEL_I_VK_RELAY_AHEAD - 1);
            CHECK(mock_fn0("mock_cuda_sem_signals") - raises0 < n);
        }
    }
    accel_queue_destroy(cq);
    accel_queue_destroy(vq);
    if (gate.s) engine_gate_close(&gate);
    accel_signal_destroy(ready);
    accel_signal_destroy(filled);
    accel_signal_destroy(done);
}
TEST(relays_in_numbers_and_every_teardown_order) {
    devices d;
    int open = sems_open(&d, true);
    if (open < 0) SKIP(SEMS_SKIP);
    if (!open) return;
    devices_close(&d);
    if (!vk_sems.patched) SKIP("on the mock with the stand-in only (it recovers the Vulkan device)");
    if (!getenv("VK_INSTANCE_LAYERS") && devices_open(&d)) relays_ahead_case(&d);
    if (!getenv("VK_INSTANCE_LAYERS")) devices_close(&d);
    for (int order = 0; order < 3 && !TEST_FAILED_SO_FAR(); order++) relays_order_case(order);
}
TEST(cuda_copy_of_vulkan_queue_memory) {
    devices d;
    accel_queue *vq = NULL, *cq = NULL;
    accel_buffer *h = NULL, *mine = NULL;
    accel_signal *filled = NULL, *copied = NULL;
    if (!peer_vulkan()) SKIP("ACCEL_TEST_PEER=vulkan with the CUDA backend under test only");
    if (!devices_open(&d)) { devices_close(&d); return; }
    if (CHECK_OK(accel_queue_create(d.b, ACCEL_QUEUE_COMPUTE, &vq)) &&
        CHECK_OK(accel_queue_create(d.a, ACCEL_QUEUE_COMPUTE, &cq)) &&
        CHECK_OK(test_buffer_create(d.a, 4096, ACCEL_MEMORY_DEVICE, &mine)) &&
        CHECK_OK(accel_signal_create(d.b, 0, &filled)) && CHECK_OK(accel_signal_create(d.a, 0, &copied))) {
        for (uint32_t round = 1; round <= 3 && !TEST_FAILED_SO_FAR(); round++) {
            if (!CHECK_OK(accel_queue_alloc(vq, 4096, ACCEL_MEMORY_DEVICE, &h))) break;
            accel_queue_fill(vq, h, 0, 4096, 0x7E570000u + round);
            accel_queue_signal(vq, filled, round);
            accel_queue_wait(vq, copied, round);
            accel_queue_free(vq, h);
            CHECK_OK(accel_queue_submit(vq));
            accel_queue_wait(cq, filled, round);
            accel_queue_copy(cq, mine, 0, h, 0, 4096);
            accel_queue_signal(cq, copied, round);
            CHECK_OK(accel_queue_submit(cq));
            accel_buffer_destroy(h);
            h = NULL;
            CHECK_OK(accel_signal_wait(copied, round, ACCEL_WAIT_FOREVER));
            expect_ends(mine, 0x7E570000u + round);
        }
        CHECK_OK(accel_queue_finish(vq, ACCEL_WAIT_FOREVER));
    }
    accel_queue_destroy(vq);
    accel_queue_destroy(cq);
    accel_buffer_destroy(mine);
    accel_signal_destroy(filled);
    accel_signal_destroy(copied);
    devices_close(&d);
    expect_mock_imports(0);
}
/* open file descriptors of the process */
static int open_fds(void) {
    DIR* d = opendir("/proc/self/fd");
    int n = 0;
    if (!d) return -1;
    while (readdir(d)) n++;
    closedir(d);
    return n;
}
/* The driver refuses the import (the mock with MOCK_CUDA_IMPORT_FAILS=1): the copy is staged, with the
   right bytes, and the exported fd is not left open. */
TEST(cuda_import_refused_is_staged) {
    devices d;
    accel_peer_info pi;
    accel_queue* q = NULL;
    accel_buffer* theirs = NULL;
    unsigned char* pat = pattern_make(8192, 9);
    int fds;
    if (!peer_vulkan() || mock_imports(0) < 0) {
        free(pat);
        SKIP("ACCEL_TEST_PEER=vulkan on the CUDA mock only");
    }
    if (!devices_open(&d)) { devices_close(&d); free(pat); return; }
    if (CHECK(pat != NULL) && CHECK_OK(accel_device_peer_info(d.a, d.b, &pi)) && pi.direct_copy &&
        CHECK_OK(accel_queue_create(d.a, ACCEL_QUEUE_COMPUTE, &q)) &&
        CHECK_OK(test_buffer_create(d.b, 8192, ACCEL_MEMORY_DEVICE, &theirs)) &&
        CHECK_OK(accel_buffer_write(theirs, 0, pat, 8192))) {
        fds = open_fds();
        setenv("MOCK_CUDA_IMPORT_FAILS", "1", 1);
        vk_round_trip(d.a, q, theirs, 16, 4096, 3000, 9, false);
        setenv("MOCK_CUDA_IMPORT_FAILS", "0", 1);
        CHECK_EQ_INT(vk_imports(d.a), 0);
        CHECK_EQ_INT(open_fds(), fds);
        vk_round_trip(d.a, q, theirs, 16, 4096, 3000, 9, false);   /* imported now */
        CHECK_EQ_INT(vk_imports(d.a), 1);
    }
    accel_queue_destroy(q);
    accel_buffer_destroy(theirs);
    devices_close(&d);
    free(pat);
}
/* A CUDA queue's copy with a buffer of a lost Vulkan device of its GPU (over the import of its memory,
   or staged), plain or in a list recorded before the loss, never runs: DEVICE_LOST, from the submit or
   as its batch's signal's failure (accel.h, "Several devices"). The Vulkan device is lost on purpose
   (ACCEL_VULKAN_TEST_DEVICE_LOST: its first vkQueueSubmit fails). Before, the copy over the import ran,
   plain and replayed. */
TEST(cuda_copy_with_a_lost_vulkan_devices_buffer) {
    devices d;
    accel_queue *q = NULL, *vq = NULL;
    accel_buffer *mine = NULL, *theirs = NULL;
    accel_signal* s[3] = { NULL, NULL, NULL };
    accel_commands* list = NULL;
    unsigned char want[64], got[64];
    bool opened;
    if (!peer_vulkan()) SKIP("ACCEL_TEST_PEER=vulkan with the CUDA backend under test only");
    memset(want, 0x5a, sizeof want);
    setenv("ACCEL_VULKAN_TEST_DEVICE_LOST", "1", 1);   /* armed for the Vulkan device only */
    opened = devices_open(&d) != 0;
    setenv("ACCEL_VULKAN_TEST_DEVICE_LOST", "0", 1);
    if (!opened) { devices_close(&d); return; }
    if (CHECK_OK(accel_queue_create(d.a, ACCEL_QUEUE_COMPUTE, &q)) &&
        CHECK_OK(accel_queue_create(d.b, ACCEL_QUEUE_COMPUTE, &vq)) &&
        CHECK_OK(test_buffer_create(d.a, 4096, ACCEL_MEMORY_DEVICE, &mine)) &&
        CHECK_OK(test_buffer_create(d.b, 4096, ACCEL_MEMORY_DEVICE, &theirs)) &&
        CHECK_OK(accel_buffer_write(mine, 0, want, sizeof want)) &&
        CHECK_OK(accel_signal_create(d.a, 0, &s[0])) && CHECK_OK(accel_signal_create(d.a, 0, &s[1])) &&
        CHECK_OK(accel_signal_create(d.a, 0, &s[2]))) {
        CHECK_OK(accel_queue_record_begin(q));   /* a list recorded before the loss (over the import) */
        accel_queue_copy(q, mine, 0, theirs, 0, 64);
        CHECK_OK(accel_queue_record_end(q, &list));
        accel_queue_fill(vq, theirs, 0, 64, 1u);
        CHECK_RESULT(accel_queue_submit(vq), ACCEL_ERROR_DEVICE_LOST);   /* the Vulkan device is lost */
        for (int into = 0; into < 3 && list; into++) {   /* out of the lost buffer, into it, a replay */
            if (into == 2) accel_queue_replay(q, list, NULL, 0);
            else if (into) accel_queue_copy(q, theirs, 0, mine, 0, 64);
            else accel_queue_copy(q, mine, 0, theirs, 0, 64);
            accel_queue_signal(q, s[into], 1);
            test_submit_lost(q, s[into]);
            if (CHECK_OK(accel_buffer_read(mine, 0, got, sizeof got)))
                CHECK(memcmp(got, want, sizeof got) == 0);
        }
    }
    accel_queue_destroy(q);
    accel_queue_destroy(vq);
    for (int i = 0; i < 3; i++) accel_signal_destroy(s[i]);
    accel_commands_destroy(list);
    accel_buffer_destroy(mine);
    accel_buffer_destroy(theirs);
    devices_close(&d);
}
/* The other way (accel_cuda.h, "cuda: exported memory"): a Vulkan queue's copies with CUDA buffers of
   its GPU go through the CUDA memory (cuMemCreate, exported as a POSIX fd; on the mock a memfd laid out
   as lavapipe's own) imported into the Vulkan device, for buffers of at least half the granularity made
   while both devices are open: offsets to the last byte, views, one byte, a recorded list with a patch.
   Smaller buffers, and those made while the CUDA device was alone, are staged: no import. An import
   goes with its buffer, with the Vulkan device, and a recover of the CUDA device fails the copies of its
   stale buffers (DEVICE_LOST) while a buffer made after imports again. */
static size_t cu_vmm_bytes(const accel_buffer* b) { return ((const accel_i_cu_buffer*)b)->vmm_size; }
/* a CUDA buffer of n bytes holding pattern `seed` from its start */
static accel_buffer* cu_pattern_buffer(accel_device* cu, size_t n, uint32_t seed) {
    accel_buffer* b = NULL;
    unsigned char* pat = pattern_make(n, seed);
    if (CHECK(pat != NULL) && CHECK_OK(test_buffer_create(cu, n, ACCEL_MEMORY_DEVICE, &b)) &&
        !CHECK_OK(accel_buffer_write(b, 0, pat, n))) {
        accel_buffer_destroy(b);
        b = NULL;
    }
    free(pat);
    return b;
}
/* A native list of q (Vulkan) copies from theirs (an exported CUDA buffer); a patch brings another
   exported CUDA buffer, imported at that replay. */
static void exported_list_case(accel_device* vk, accel_queue* q, accel_buffer* theirs) {
    accel_buffer *mine = NULL, *theirs2 = NULL;
    if (CHECK_OK(test_buffer_create(vk, 256, ACCEL_MEMORY_DEVICE, &mine)) &&
        CHECK_OK(test_buffer_create(theirs->obj.device, theirs->size, ACCEL_MEMORY_DEVICE, &theirs2))) {
        list_replays(q, mine, theirs, theirs2, 1);   /* a direct copy: the list is Vulkan's own */
        CHECK_EQ_INT(vk_imports(vk), 2);
    }
    accel_buffer_destroy(mine);
    accel_buffer_destroy(theirs2);
}
TEST(vulkan_copies_through_exported_cuda_memory) {
    devices d;
    accel_peer_info pi;
    accel_queue* q = NULL;
    accel_buffer *big = NULL, *small = NULL, *early = NULL, *late = NULL;
    size_t g;
    if (!peer_vulkan()) SKIP("ACCEL_TEST_PEER=vulkan with the CUDA backend under test only");
    if (!devices_open(&d)) { devices_close(&d); return; }
    accel_device_destroy(d.b);   /* the CUDA device alone: its buffers do not export */
    d.b = NULL;
    early = cu_pattern_buffer(d.a, (size_t)4 << 20, 10);
    CHECK_EQ_INT(atomic_load(&d.a->exporting), 0);
    if (!CHECK(peer_vulkan_open(&d.b)) || !CHECK_OK(accel_device_peer_info(d.b, d.a, &pi)) ||
        !pi.direct_copy) {
        if (mock_imports(0) >= 0) CHECK(!"the mock exports CUDA memory, lavapipe imports it");
        accel_buffer_destroy(early);
        devices_close(&d);
        SKIP("the CUDA device exports no memory (no cuMemCreate with POSIX fds), or Vulkan imports none");
    }
    CHECK(pi.copy);   /* (device_waits: test peer_info) */
    CHECK_EQ_INT(atomic_load(&d.a->exporting), 1);   /* a Vulkan device of its GPU could import */
    g = accel_i_cu_dev(d.a)->vmm_grain;   /* the driver's granularity (the mock's: 2 MiB) */
    CHECK(g >= ((size_t)64 << 10) && (g & (g - 1)) == 0 && g <= ((size_t)8 << 20));
    if (mock_imports(0) >= 0) CHECK_EQ_INT(g, (size_t)2 << 20);
    big = cu_pattern_buffer(d.a, NINE_MIB, 9);
    small = cu_pattern_buffer(d.a, 8192 + 5, 9);
    late = cu_pattern_buffer(d.a, g / 2, 11);   /* half the granularity: exported */
    if (big && small && late && early && CHECK_OK(accel_queue_create(d.b, ACCEL_QUEUE_COMPUTE, &q))) {
        CHECK_EQ_INT(cu_vmm_bytes(big), (NINE_MIB + g - 1) / g * g);   /* rounded up to the granularity */
        CHECK_EQ_INT(cu_vmm_bytes(late), g);
        CHECK_EQ_INT(cu_vmm_bytes(small), 0);
        CHECK_EQ_INT(cu_vmm_bytes(early), 0);
        vk_round_trip(d.b, q, big, 4096, (size_t)3 << 20, (size_t)2 << 20, 9, true);
        CHECK_EQ_INT(vk_imports(d.b), 1);
        vk_round_trip(d.b, q, big, NINE_MIB - 4099, 8195, 4099, 9, false);   /* to its last byte */
        vk_round_trip(d.b, q, big, 77, 78, 1, 9, false);
        CHECK_EQ_INT(vk_imports(d.b), 1);
        vk_round_trip(d.b, q, small, 1, 4096, 3000, 9, false);   /* staged */
        vk_round_trip(d.b, q, early, 5, 3 << 20, 4096, 10, false);
        CHECK_EQ_INT(vk_imports(d.b), 1);
        vk_round_trip(d.b, q, late, 0, g / 4, g / 8, 11, true);
        CHECK_EQ_INT(vk_imports(d.b), 2);
        CHECK_EQ_INT(vk_imports(d.a), 0);   /* nothing of Vulkan's imported into CUDA */
        accel_buffer_destroy(big);          /* its memory goes, and its import with it */
        big = NULL;
        CHECK_EQ_INT(vk_imports(d.b), 1);
        exported_list_case(d.b, q, late);
        CHECK_EQ_INT(vk_imports(d.b), 1);   /* the patch's buffer went, and its import */
    }
    accel_queue_destroy(q);
    accel_buffer_destroy(big);
    accel_buffer_destroy(small);
    accel_buffer_destroy(early);
    accel_buffer_destroy(late);
    CHECK_EQ_INT(vk_imports(d.b), 0);
    devices_close(&d);
}
/* Each teardown and recover order with an import of CUDA memory alive: the Vulkan device first (its
   imports dropped, the CUDA buffer still right), the CUDA buffer first (evicted), a recover of the CUDA
   device (the stale buffer's copies fail; the import goes with the buffer; a new buffer imports), a
   recover of the Vulkan device (its imports dropped; the next copy imports again). The driver refusing
   the export (MOCK_CUDA_EXPORT_FAILS=1, on the mock): staged, right bytes, no fd left open. */
TEST(vulkan_imports_of_cuda_memory_in_every_order) {
    for (int order = 0; order < 5 && !TEST_FAILED_SO_FAR(); order++) {
        devices d;
        accel_peer_info pi;
        accel_queue* q = NULL;
        accel_buffer* theirs = NULL;
        size_t g;
        int fds;
        if (!peer_vulkan()) SKIP("ACCEL_TEST_PEER=vulkan with the CUDA backend under test only");
        if (order == 4 && mock_imports(0) < 0) break;   /* MOCK_CUDA_EXPORT_FAILS: the mock's */
        if (!devices_open(&d)) { devices_close(&d); return; }
        if (!CHECK_OK(accel_device_peer_info(d.b, d.a, &pi)) || !pi.direct_copy) {
            if (mock_imports(0) >= 0) CHECK(!"the mock exports CUDA memory, lavapipe imports it");
            devices_close(&d);
            SKIP("the CUDA device exports no memory, or Vulkan imports none");
        }
        g = accel_i_cu_dev(d.a)->vmm_grain;
        if ((theirs = cu_pattern_buffer(d.a, g, 12)) != NULL &&
            CHECK_OK(accel_queue_create(d.b, ACCEL_QUEUE_COMPUTE, &q))) {
            if (order == 4) setenv("MOCK_CUDA_EXPORT_FAILS", "1", 1);
            vk_round_trip(d.b, q, theirs, 16, 4096, 3000, 12, false);
            fds = open_fds();   /* with the Vulkan device's block (a memfd on lavapipe) made */
            if (order == 4) vk_round_trip(d.b, q, theirs, 32, 8192, 3000, 12, false);
            setenv("MOCK_CUDA_EXPORT_FAILS", "0", 1);
            CHECK_EQ_INT(vk_imports(d.b), order == 4 ? 0 : 1);
            CHECK_EQ_INT(open_fds(), fds);   /* a refused export leaves no fd open */
        }
        if (order == 0) {            /* the Vulkan device first: its import dropped */
            accel_queue_destroy(q);
            q = NULL;
            accel_device_destroy(d.b);
            d.b = NULL;
            expect_pattern(theirs, 4096, 3000, 16, 12);
        } else if (order == 1) {     /* the CUDA buffer first: its import evicted */
            accel_buffer_destroy(theirs);
            theirs = NULL;
            CHECK_EQ_INT(vk_imports(d.b), 0);
        } else if (order == 2 && q) {   /* a recover of the CUDA device (the exporter) */
            accel_buffer* mine = NULL;
            accel_signal* s[2] = { NULL, NULL };
            accel_commands* list = NULL;
            if (CHECK_OK(test_buffer_create(d.b, 4096, ACCEL_MEMORY_DEVICE, &mine)) &&
                CHECK_OK(accel_signal_create(d.b, 0, &s[0])) &&
                CHECK_OK(accel_signal_create(d.b, 0, &s[1])) && CHECK_OK(accel_queue_record_begin(q))) {   /* a native list over the import, before */
                accel_queue_copy(q, mine, 0, theirs, 0, 4096);
                CHECK_OK(accel_queue_record_end(q, &list));
                CHECK_OK(accel_device_recover(d.a));
                accel_queue_copy(q, mine, 0, theirs, 0, 4096);
                accel_queue_signal(q, s[0], 1);
                test_submit_lost(q, s[0]);   /* the stale buffer's copy fails: DEVICE_LOST */
                accel_queue_replay(q, list, NULL, 0);
                accel_queue_signal(q, s[1], 1);
                test_submit_lost(q, s[1]);   /* and so does the list's */
            }
            accel_commands_destroy(list);
            accel_signal_destroy(s[0]);
            accel_signal_destroy(s[1]);
            accel_buffer_destroy(mine);
            accel_buffer_destroy(theirs);   /* the import goes with it */
            CHECK_EQ_INT(vk_imports(d.b), 0);
            if ((theirs = cu_pattern_buffer(d.a, g, 13)) != NULL) {
                CHECK_EQ_INT(cu_vmm_bytes(theirs), g);
                vk_round_trip(d.b, q, theirs, 256, 8192, 5000, 13, true);
                CHECK_EQ_INT(vk_imports(d.b), 1);
            }
        } else if (order == 3 && q) {   /* a recover of the Vulkan device (the importer) */
            CHECK_OK(accel_device_recover(d.b));
            CHECK_EQ_INT(vk_imports(d.b), 0);
            accel_queue_destroy(q);
            q = NULL;
            if (CHECK_OK(accel_queue_create(d.b, ACCEL_QUEUE_COMPUTE, &q))) {
                vk_round_trip(d.b, q, theirs, 100, 8192, 3000, 12, false);
                CHECK_EQ_INT(vk_imports(d.b), 1);
            }
        }
        accel_queue_destroy(q);
        accel_buffer_destroy(theirs);
        if (d.b) CHECK_EQ_INT(vk_imports(d.b), 0);
        devices_close(&d);
        if (TEST_FAILED_SO_FAR()) fprintf(stderr, "  order %d\n", order);
    }
}
/* Exportable CUDA memory names the GPUs that may use it (cuMemSetAccess: peer access does not reach
   it): another CUDA GPU with peer access copies such a buffer directly, in its own stream, given access
   at the allocation (on the mock, a copy from a GPU not given access fails with ILLEGAL_ADDRESS). The
   mock's second device is asked for from the start (MOCK_CUDA_DEVICES=2, read at each driver call). */
TEST(another_gpu_copies_exported_cuda_memory) {
    devices d;
    accel_device* c1 = NULL;
    accel_device_desc desc;
    accel_queue* q = NULL;
    accel_buffer *theirs = NULL, *mine = NULL;
    uint32_t n = 0;
    const bool mock = mock_imports(0) >= 0;
    char was[16] = "";   /* the caller's MOCK_CUDA_DEVICES, put back at the end ("": unset) */
    if (!peer_vulkan()) SKIP("ACCEL_TEST_PEER=vulkan with the CUDA backend under test only");
    if (mock && getenv("MOCK_CUDA_DEVICES")) snprintf(was, sizeof was, "%s", getenv("MOCK_CUDA_DEVICES"));
    if (mock) setenv("MOCK_CUDA_DEVICES", "2", 1);
    if (accel_backend_device_count(accel_cuda_backend(), &n) != ACCEL_OK || n < 2) {
        if (mock && was[0]) setenv("MOCK_CUDA_DEVICES", was, 1);
        else if (mock) unsetenv("MOCK_CUDA_DEVICES");
        SKIP("one CUDA GPU");
    }
    memset(&desc, 0, sizeof desc);
    desc.backend = accel_cuda_backend();
    desc.device_index = 1;
    desc.label = "cuda 1";
    if (devices_open(&d) && CHECK_OK(test_device_create_desc(desc, &c1)) &&
        (theirs = cu_pattern_buffer(d.a, (size_t)4 << 20, 21)) != NULL &&
        CHECK_OK(accel_queue_create(c1, ACCEL_QUEUE_COMPUTE, &q)) &&
        CHECK_OK(test_buffer_create(c1, (size_t)4 << 20, ACCEL_MEMORY_DEVICE, &mine))) {
        CHECK(cu_vmm_bytes(theirs) != 0);
        /* direct where the two GPUs have peer access (the mock's have), and given access then */
        CHECK_EQ_INT(c1->backend->peer_copy(c1, d.a, theirs), c1->backend->peer_copy(c1, d.a, NULL));
        CHECK_EQ_INT((((accel_i_cu_buffer*)theirs)->vmm_access >> 1) & 1u,
                     (uint32_t)c1->backend->peer_copy(c1, d.a, NULL));
        accel_queue_copy(q, mine, 0, theirs, 0, (size_t)4 << 20);
        accel_queue_copy(q, theirs, (size_t)2 << 20, mine, 4096, 4096);
        CHECK_OK(accel_queue_finish(q, ACCEL_WAIT_FOREVER));
        expect_pattern(mine, 0, (size_t)4 << 20, 0, 21);
        expect_pattern(theirs, (size_t)2 << 20, 4096, 4096, 21);
        if (mock) CHECK_EQ_INT(mock_fn0("mock_cuda_vmm_denials"), 0);
    }
    accel_queue_destroy(q);
    accel_buffer_destroy(mine);
    accel_buffer_destroy(theirs);
    accel_device_destroy(c1);
    devices_close(&d);
    if (mock && was[0]) setenv("MOCK_CUDA_DEVICES", was, 1);
    else if (mock) unsetenv("MOCK_CUDA_DEVICES");
}
/* A Vulkan batch held at a host gate copies an exported CUDA buffer (imported at the record), plainly or
   through a native list; the CUDA device recovers and the buffer is destroyed (the batch holds it) before
   the gate opens: the copies drop with DEVICE_LOST, never run on the old memory the import kept. */
static void gated_copies_case(bool native) {
    devices d;
    accel_queue* q = NULL;
    accel_buffer *theirs = NULL, *mine = NULL;
    accel_signal *gate = NULL, *s = NULL;
    accel_commands* list = NULL;
    if (!devices_open(&d)) { devices_close(&d); return; }
    if ((theirs = cu_pattern_buffer(d.a, accel_i_cu_dev(d.a)->vmm_grain, 25)) != NULL &&
        CHECK_OK(accel_queue_create(d.b, ACCEL_QUEUE_COMPUTE, &q)) &&
        CHECK_OK(test_buffer_create(d.b, 4096, ACCEL_MEMORY_DEVICE, &mine)) &&
        CHECK_OK(accel_signal_create(d.cpu, 0, &gate)) && CHECK_OK(accel_signal_create(d.b, 0, &s))) {
        if (native && CHECK_OK(accel_queue_record_begin(q))) {
            accel_queue_copy(q, mine, 0, theirs, 0, 4096);
            accel_queue_copy(q, theirs, 8192, mine, 0, 4096);
            CHECK_OK(accel_queue_record_end(q, &list));
        }
        accel_queue_wait(q, gate, 1);
        if (native) {
            accel_queue_replay(q, list, NULL, 0);
        } else {
            accel_queue_copy(q, mine, 0, theirs, 0, 4096);
            accel_queue_copy(q, theirs, 8192, mine, 0, 4096);
        }
        accel_queue_signal(q, s, 1);
        if (CHECK_OK(accel_queue_submit(q))) {
            CHECK_EQ_INT(vk_imports(d.b), 1);
            CHECK_OK(accel_device_recover(d.a));
            accel_buffer_destroy(theirs);
            theirs = NULL;
            CHECK_OK(accel_signal_set(gate, 1));
            CHECK_RESULT(accel_signal_wait(s, 1, 10000000000ull), ACCEL_ERROR_SIGNAL_FAILED);
            CHECK_EQ_U64(accel_signal_value(s),
                         ACCEL_SIGNAL_MAX + 1 - (uint64_t)(int64_t)ACCEL_ERROR_DEVICE_LOST);
            expect_ends(mine, 0);   /* nothing copied */
        }
        CHECK_OK(accel_queue_finish(q, ACCEL_WAIT_FOREVER));
    }
    accel_signal_destroy(s);
    accel_signal_destroy(gate);
    accel_commands_destroy(list);
    accel_queue_destroy(q);
    accel_buffer_destroy(mine);
    accel_buffer_destroy(theirs);
    CHECK_EQ_INT(vk_imports(d.b), 0);
    devices_close(&d);
    if (TEST_FAILED_SO_FAR()) fprintf(stderr, "  native %d\n", (int)native);
}
TEST(gated_vulkan_copies_of_cuda_memory_across_its_recover) {
    accel_peer_info pi;
    devices d;
    if (!peer_vulkan()) SKIP("ACCEL_TEST_PEER=vulkan with the CUDA backend under test only");
    if (!devices_open(&d) || !CHECK_OK(accel_device_peer_info(d.b, d.a, &pi)) || !pi.direct_copy) {
        devices_close(&d);
        SKIP("the CUDA device exports no memory, or Vulkan imports none");
    }
    devices_close(&d);
    gated_copies_case(false);
    gated_copies_case(true);
}
/* Near a full GPU (the mock's memory limit), a buffer that fits as cuMemAlloc's but not rounded up to
   the granularity is still made while a Vulkan device of its GPU is open: cuMemAlloc's (staged copies). */
TEST(exportable_memory_that_does_not_fit_falls_back) {
    devices d;
    accel_buffer* b = NULL;
    void (*set_limit)(long long) = NULL;
    void* sym = mock_sym("mock_cuda_set_memory_limit");
    if (!peer_vulkan() || !sym) SKIP("ACCEL_TEST_PEER=vulkan on the CUDA mock only");
    memcpy(&set_limit, &sym, sizeof sym);
    if (devices_open(&d) && CHECK_EQ_INT(atomic_load(&d.a->exporting), 1)) {
        set_limit((long long)5 << 20);   /* 4 MiB + 4 KiB fits, its 6 MiB rounded up does not */
        if (CHECK_OK(test_buffer_create(d.a, ((size_t)4 << 20) + 4096, ACCEL_MEMORY_DEVICE, &b)))
            CHECK_EQ_INT(cu_vmm_bytes(b), 0);
        accel_buffer_destroy(b);
        b = NULL;
        if (CHECK_OK(test_buffer_create(d.a, (size_t)4 << 20, ACCEL_MEMORY_DEVICE, &b)))   /* no rounding */
            CHECK_EQ_INT(cu_vmm_bytes(b), (size_t)4 << 20);
        accel_buffer_destroy(b);
        set_limit(0);
    }
    devices_close(&d);
}
/* Races (TSan in tsan-cuda-vulkan): a Vulkan queue copies out of exported CUDA buffers, each made,
   written, copied and destroyed in its round, while a thread makes and frees exported CUDA buffers and
   another recovers the CUDA device six times. A round's copy either brings that round's words or
   drops with DEVICE_LOST (a recover came between); no import is left, nor an fd. */
typedef struct churn { devices* d; atomic_int stop, recovers; } churn;
static void churn_buffers(void* x) {
    churn* c = (churn*)x;
    while (!atomic_load(&c->stop)) {
        accel_buffer* b = NULL;
        if (test_buffer_create(c->d->a, (size_t)2 << 20, ACCEL_MEMORY_DEVICE, &b) == ACCEL_OK)
            accel_buffer_destroy(b);
    }
}
static void churn_recovers(void* x) {
    churn* c = (churn*)x;
    accel_signal* nap = NULL;   /* nobody sets it: 15 ms naps */
    if (!CHECK_OK(accel_signal_create(c->d->cpu, 0, &nap))) { atomic_store(&c->recovers, 6); return; }
    for (int i = 0; i < 6 && !atomic_load(&c->stop); i++) {
        CHECK_RESULT(accel_signal_wait(nap, 1, 15000000u), ACCEL_TIMEOUT);
        CHECK_OK(accel_device_recover(c->d->a));
        atomic_fetch_add(&c->recovers, 1);
    }
    accel_signal_destroy(nap);
}
static void churn_round(devices* d, accel_queue* q, accel_buffer* mine, accel_signal* s, uint32_t round,
                        int* ok, int* lost) {
    accel_buffer* theirs = NULL;
    uint32_t words[1024], got[1024];
    for (int i = 0; i < 1024; i++) words[i] = round * 2654435761u + (uint32_t)i;
    if (test_buffer_create(d->a, (size_t)2 << 20, ACCEL_MEMORY_DEVICE, &theirs) != ACCEL_OK) return;
    if (accel_buffer_write(theirs, 4096, words, sizeof words) == ACCEL_OK) {
        accel_queue_copy(q, mine, 0, theirs, 4096, sizeof words);
        accel_queue_signal(q, s, round);
        if (accel_queue_submit(q) != ACCEL_OK) {
            ++*lost;
        } else if (accel_signal_wait(s, round, 10000000000ull) == ACCEL_OK) {
            ++*ok;
            if (CHECK_OK(accel_buffer_read(mine, 0, got, sizeof got)))
                CHECK(memcmp(got, words, sizeof got) == 0);
        } else {
            ++*lost;
            CHECK_EQ_U64(accel_signal_value(s),
                         ACCEL_SIGNAL_MAX + 1 - (uint64_t)(int64_t)ACCEL_ERROR_DEVICE_LOST);
        }
    }
    accel_buffer_destroy(theirs);
}
TEST(exported_cuda_memory_under_churn_and_recovers) {
    devices d;
    accel_queue* q = NULL;
    accel_buffer* mine = NULL;
    accel_signal* s = NULL;
    churn c;
    test_thread t[2];
    int ok = 0, lost = 0, fds;
    if (!peer_vulkan()) SKIP("ACCEL_TEST_PEER=vulkan with the CUDA backend under test only");
    if (!devices_open(&d)) { devices_close(&d); return; }
    c.d = &d;
    atomic_init(&c.stop, 0);
    atomic_init(&c.recovers, 0);
    fds = open_fds();
    if (CHECK_OK(accel_queue_create(d.b, ACCEL_QUEUE_COMPUTE, &q)) &&
        CHECK_OK(test_buffer_create(d.b, 4096, ACCEL_MEMORY_DEVICE, &mine)) &&
        CHECK_OK(accel_signal_create(d.b, 0, &s)) && CHECK(test_thread_start(&t[0], churn_buffers, &c)) &&
        CHECK(test_thread_start(&t[1], churn_recovers, &c))) {
        /* until the six recovers are done (a create fails while one is under way), then four more rounds,
           which must all copy */
        uint32_t after = 0;
        for (uint32_t round = 1; round <= 1000000 && after < 4 && !TEST_FAILED_SO_FAR(); round++) {
            int was = ok;
            bool done = atomic_load(&c.recovers) == 6;
            accel_signal_destroy(s);   /* a new one each round: a failed signal stays failed */
            s = NULL;
            if (!CHECK_OK(accel_signal_create(d.b, 0, &s))) break;
            churn_round(&d, q, mine, s, round, &ok, &lost);
            if (done && CHECK_EQ_INT(ok, was + 1)) after++;
        }
        atomic_store(&c.stop, 1);
        test_thread_join(&t[0]);
        test_thread_join(&t[1]);
        CHECK_EQ_INT(after, 4);
        CHECK_EQ_INT(atomic_load(&c.recovers), 6);
        if (TEST_FAILED_SO_FAR() || getenv("ACCEL_TEST_VERBOSE"))
            fprintf(stderr, "  rounds: %d copied, %d dropped (DEVICE_LOST)\n", ok, lost);
    }
    accel_signal_destroy(s);
    accel_queue_destroy(q);
    accel_buffer_destroy(mine);
    CHECK_EQ_INT(vk_imports(d.b), 0);
    devices_close(&d);
    CHECK(open_fds() <= fds);
}
/* ACCEL_CUDA_NO_EXPORT=1 (read at the CUDA device's create): its buffers never take exportable memory,
   and a Vulkan queue's copies of them are staged, with the right bytes and no import. */
TEST(no_export_stages_vulkan_copies_of_cuda_memory) {
    devices d;
    accel_peer_info pi;
    accel_queue* q = NULL;
    accel_buffer* theirs = NULL;
    bool opened;
    char was[16] = "";   /* the caller's ACCEL_CUDA_NO_EXPORT, put back once the devices are gone */
    if (!peer_vulkan()) SKIP("ACCEL_TEST_PEER=vulkan with the CUDA backend under test only");
    if (getenv("ACCEL_CUDA_NO_EXPORT")) snprintf(was, sizeof was, "%s", getenv("ACCEL_CUDA_NO_EXPORT"));
    setenv("ACCEL_CUDA_NO_EXPORT", "1", 1);
    opened = devices_open(&d) != 0;
    if (opened && CHECK_OK(accel_device_peer_info(d.b, d.a, &pi))) {
        CHECK(pi.copy && !pi.direct_copy);
        CHECK_EQ_INT(atomic_load(&d.a->exporting), 0);   /* it exports nothing: no sharer imports it */
        if ((theirs = cu_pattern_buffer(d.a, (size_t)4 << 20, 14)) != NULL &&
            CHECK_OK(accel_queue_create(d.b, ACCEL_QUEUE_COMPUTE, &q))) {
            CHECK_EQ_INT(cu_vmm_bytes(theirs), 0);
            vk_round_trip(d.b, q, theirs, 256, 8192, 5000, 14, true);
            CHECK_EQ_INT(vk_imports(d.b), 0);
        }
    }
    accel_queue_destroy(q);
    accel_buffer_destroy(theirs);
    devices_close(&d);
    if (was[0]) setenv("ACCEL_CUDA_NO_EXPORT", was, 1);   /* read at create only: no device is open now */
    else unsetenv("ACCEL_CUDA_NO_EXPORT");
}
#else
TEST(no_export_stages_vulkan_copies_of_cuda_memory) { SKIP("built without both CUDA and Vulkan"); }
TEST(exported_cuda_memory_under_churn_and_recovers) { SKIP("built without both CUDA and Vulkan"); }
TEST(another_gpu_copies_exported_cuda_memory) { SKIP("built without both CUDA and Vulkan"); }
TEST(gated_vulkan_copies_of_cuda_memory_across_its_recover) { SKIP("built without both CUDA and Vulkan"); }
TEST(exportable_memory_that_does_not_fit_falls_back) { SKIP("built without both CUDA and Vulkan"); }
TEST(vulkan_copies_through_exported_cuda_memory) { SKIP("built without both CUDA and Vulkan"); }
TEST(vulkan_imports_of_cuda_memory_in_every_order) { SKIP("built without both CUDA and Vulkan"); }
TEST(cuda_import_refused_is_staged) { SKIP("built without both CUDA and Vulkan"); }
TEST(cuda_copy_with_a_lost_vulkan_devices_buffer) { SKIP("built without both CUDA and Vulkan"); }
TEST(cuda_copy_of_vulkan_queue_memory) { SKIP("built without both CUDA and Vulkan"); }
TEST(cuda_waits_on_vulkan_signals_on_the_gpu) { SKIP("built without both CUDA and Vulkan"); }
TEST(vulkan_waits_on_cuda_signals_on_the_gpu) { SKIP("built without both CUDA and Vulkan"); }
TEST(relays_in_numbers_and_every_teardown_order) { SKIP("built without both CUDA and Vulkan"); }
TEST(cuda_and_vulkan_copies_through_imported_memory) { SKIP("built without both CUDA and Vulkan"); }
TEST(cuda_recorded_list_with_a_vulkan_buffer) { SKIP("built without both CUDA and Vulkan"); }
TEST(cuda_and_vulkan_imports_in_every_teardown_order) { SKIP("built without both CUDA and Vulkan"); }
#endif

/* accel_device_recover of the device whose buffer another device's queue copies (DESIGN 7.4 with 7.2):
   the exporter's recover must not free what the other device's work runs over. The backend's device A
   copies 24 MiB out of and into a buffer of B, and B recovers at once, while the copy is in flight: it
   completes (the right bytes) or fails its signal with DEVICE_LOST. Direct copies run over A's import
   of B's memory, which outlives the recover while B's stale buffers live; staged ones read B's mapping
   on A's worker, which the recover waits for. Then a list A recorded over B's buffer is refused at its
   replay (DEVICE_LOST), and a copy gated on the host behind the recover fails with DEVICE_LOST. B: a
   second Vulkan device where Vulkan is under test; a Vulkan device where CUDA is (on its GPU, imported,
   with ACCEL_TEST_PEER=vulkan; else staged). The imports go once B's stale buffers are destroyed. */
/* No import of another device's memory is left on d (accel.h's count; not where the implementation is
   linked apart: the C++ configs). */
static void no_imports_left(accel_device* d) {
#if defined(ACCEL_I_KIT)
    CHECK_EQ_INT(atomic_load(&d->imports), 0);
#else
    (void)d;
#endif
}
static accel_result failure_reason(accel_signal* s) {
    uint64_t v = accel_signal_value(s);
    return v > ACCEL_SIGNAL_MAX ? (accel_result) - (int)(v - ACCEL_SIGNAL_MAX - 1u) : ACCEL_OK;
}
TEST(recover_of_the_device_a_peer_copy_uses) {
    const size_t n = ((size_t)24 << 20) + 3;
    devices d;
    accel_queue* q = NULL;
    accel_buffer *mine = NULL, *theirs = NULL;
    accel_signal *done = NULL, *gate = NULL;
    accel_commands* list = NULL;
    unsigned char* pat = pattern_make(n, 9);
    uint64_t v = 0;
    memset(&d, 0, sizeof d);
#ifdef ACCEL_TEST_HAVE_VULKAN
    if (test_g.backend == accel_vulkan_backend()) {
        if (!devices_open(&d)) { devices_close(&d); free(pat); return; }
    } else
#endif
    if (PEER_VK && test_g.backend != accel_cpu_backend()) {   /* CUDA under test */
        accel_device_desc desc;
        memset(&desc, 0, sizeof desc);
#ifdef ACCEL_TEST_HAVE_VULKAN
        desc.backend = accel_vulkan_backend();
#endif
        desc.label = "second (vulkan)";
        if (!(peer_vulkan() ? devices_open(&d)
                            : CHECK_OK(test_device_create(&d.a)) &&
                                  CHECK_OK(test_device_create_desc(desc, &d.b)))) {
            devices_close(&d);
            free(pat);
            return;
        }
    } else {
        free(pat);
        SKIP("the other device is a Vulkan device: Vulkan, or CUDA built with Vulkan, only");
    }
    if (CHECK(pat != NULL) && CHECK_OK(accel_queue_create(d.a, ACCEL_QUEUE_COMPUTE, &q)) &&
        CHECK_OK(test_buffer_create(d.a, n, ACCEL_MEMORY_DEVICE, &mine)) &&
        CHECK_OK(accel_signal_create(d.a, 0, &done)) && CHECK_OK(accel_signal_create(d.a, 0, &gate))) {
        for (int round = 0; round < 4 && !TEST_FAILED_SO_FAR(); round++) {   /* out of B, into B */
            accel_result r;
            if (!CHECK_OK(test_buffer_create(d.b, n, ACCEL_MEMORY_DEVICE, &theirs)) ||
                !CHECK_OK(accel_buffer_write(round % 2 ? mine : theirs, 0, pat, n)))
                break;
            if (round % 2) accel_queue_copy(q, theirs, 0, mine, 0, n);
            else accel_queue_copy(q, mine, 0, theirs, 0, n);
            accel_queue_signal(q, done, ++v);
            CHECK_OK(accel_queue_submit(q));
            CHECK_OK(accel_device_recover(d.b));
            r = accel_signal_wait(done, v, ACCEL_WAIT_FOREVER);
            if (r == ACCEL_OK && round % 2 == 0) expect_pattern(mine, 0, n, 0, 9);
            else if (r != ACCEL_OK) CHECK_EQ_INT(failure_reason(done), ACCEL_ERROR_DEVICE_LOST);
            CHECK_OK(accel_queue_finish(q, ACCEL_WAIT_FOREVER));
            if (r != ACCEL_OK) {   /* a failed signal stays failed: the next round signals a fresh one */
                accel_signal_destroy(done);
                done = NULL;
                v = 0;
                if (!CHECK_OK(accel_signal_create(d.a, 0, &done))) break;
            }
            accel_buffer_destroy(theirs);   /* stale: A's import of its memory goes with it */
            theirs = NULL;
            no_imports_left(d.a);
        }
        /* a list over B's buffer, replayed after B's recover: refused */
        if (!TEST_FAILED_SO_FAR() && CHECK_OK(test_buffer_create(d.b, 4096, ACCEL_MEMORY_DEVICE, &theirs)) &&
            CHECK_OK(accel_queue_record_begin(q))) {
            accel_queue_copy(q, mine, 0, theirs, 0, 4096);
            if (CHECK_OK(accel_queue_record_end(q, &list))) {
                accel_queue_replay(q, list, NULL, 0);
                CHECK_OK(accel_queue_finish(q, ACCEL_WAIT_FOREVER));
                CHECK_OK(accel_device_recover(d.b));
                accel_queue_replay(q, list, NULL, 0);
                CHECK_RESULT(accel_queue_submit(q), ACCEL_ERROR_DEVICE_LOST);
                CHECK(test_log_contains("is stale"));
                CHECK_OK(accel_device_recover(d.b));   /* again, the stale buffer (and its import) alive */
            }
            accel_commands_destroy(list);
            accel_buffer_destroy(theirs);
            theirs = NULL;
            no_imports_left(d.a);
        }
        /* a copy behind a wait, B recovered before the wait's signal is set: where the wait is gated on the
           host (Vulkan), the copy is refused with DEVICE_LOST, not another reason; where it went to the
           device with the copy before the recover (CUDA's waits on its own signals), the copy runs over
           the import, which outlived the recover: B's bytes of before (a new buffer's zeros) */
        if (!TEST_FAILED_SO_FAR() && CHECK_OK(test_buffer_create(d.b, 4096, ACCEL_MEMORY_DEVICE, &theirs)) &&
            CHECK_OK(accel_buffer_write(mine, 0, pat, 4096))) {
            accel_queue_wait(q, gate, 1);
            accel_queue_copy(q, mine, 0, theirs, 0, 4096);
            accel_queue_signal(q, done, ++v);
            CHECK_OK(accel_queue_submit(q));
            CHECK_OK(accel_device_recover(d.b));
            CHECK_OK(accel_signal_set(gate, 1));
            if (accel_signal_wait(done, v, ACCEL_WAIT_FOREVER) == ACCEL_OK) expect_ends(mine, 0);
            else CHECK_EQ_INT(failure_reason(done), ACCEL_ERROR_DEVICE_LOST);
            CHECK_OK(accel_queue_finish(q, ACCEL_WAIT_FOREVER));
        }
    }
    accel_queue_destroy(q);
    accel_buffer_destroy(mine);
    accel_buffer_destroy(theirs);
    accel_signal_destroy(done);
    accel_signal_destroy(gate);
    if (d.a) no_imports_left(d.a);
    devices_close(&d);
    free(pat);
}

int main(int argc, char** argv) {
    test_begin(argc, argv);
    RUN(identity_uuid_and_pci);
    RUN(peer_info);
    RUN(copies_every_direction_sizes_and_offsets);
    RUN(copy_of_64_mib);
    RUN(copies_through_views);
    RUN(peer_copies_between_the_queues_own_commands);
    RUN(copy_between_two_other_devices_is_refused);
    RUN(copy_ordered_by_the_other_devices_signal);
    RUN(failure_of_the_other_devices_signal_reaches_later_signals);
    RUN(two_device_chain_and_failure_across_devices);
    RUN(destroy_either_device_with_peer_work_pending);
    RUN(queues_go_on_after_a_device_they_waited_on_is_destroyed);
    RUN(destroy_on_one_device_while_the_other_waits_on_the_gpu);
    RUN(recorded_list_with_a_peer_copy);
    RUN(native_list_patched_with_a_buffer_that_stages);
    RUN(vulkan_copies_through_imported_memory);
    RUN(vulkan_recorded_list_with_a_direct_peer_copy);
    RUN(vulkan_memory_made_before_the_peer_opened_is_staged);
    RUN(vulkan_imports_across_recovers);
    RUN(cuda_and_vulkan_copies_through_imported_memory);
    RUN(cuda_recorded_list_with_a_vulkan_buffer);
    RUN(cuda_and_vulkan_imports_in_every_teardown_order);
    RUN(cuda_import_refused_is_staged);
    RUN(cuda_copy_with_a_lost_vulkan_devices_buffer);
    RUN(cuda_copy_of_vulkan_queue_memory);
    RUN(cuda_waits_on_vulkan_signals_on_the_gpu);
    RUN(vulkan_waits_on_cuda_signals_on_the_gpu);
    RUN(relays_in_numbers_and_every_teardown_order);
    RUN(vulkan_copies_through_exported_cuda_memory);
    RUN(vulkan_imports_of_cuda_memory_in_every_order);
    RUN(another_gpu_copies_exported_cuda_memory);
    RUN(gated_vulkan_copies_of_cuda_memory_across_its_recover);
    RUN(exportable_memory_that_does_not_fit_falls_back);
    RUN(exported_cuda_memory_under_churn_and_recovers);
    RUN(no_export_stages_vulkan_copies_of_cuda_memory);
    RUN(recover_of_the_device_a_peer_copy_uses);
    return test_end();
}

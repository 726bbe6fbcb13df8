/* tests/test_teardown.c — lifetimes across devices (issue 9, item 4): an object that another device's
   batch holds (a signal it waits on or signals, a buffer it copies from) stays alive, with what it needs
   of its device, until that batch is released, whatever the order of the destroys; a queue blocked on a
   signal whose device is destroyed is released (the signal fails) instead of hanging. Every order of
   destroying two devices, their queues, signals and buffers, with cross-device references recorded,
   submitted and parked, is run and must free everything (counting allocators). Meant for ASan and the
   no-threads build as much as for the plain one. */
#define ACCEL_IMPLEMENTATION
#include "accel.h"
#include "test.h"

/* A CPU device (the other side of a cross-device pair) with the capturing logger and `st` as allocator. */
static accel_result cpu_device(test_alloc_state* st, accel_device** out) {
    accel_device_desc d;
    memset(&d, 0, sizeof d);
    d.backend = accel_cpu_backend();
    d.cpu_threads = 1;
    d.logger = test_logger();
    d.label = "other";
    if (st) d.allocator = test_allocator(st);
    return accel_device_create(&d, out);
}

/* A queue waits on a signal of another device; the signal's handle and then its device are destroyed
   while the wait still blocks. The signal stays alive (held by the batch) and, since nothing can set it
   any more, fails: the queue drops the rest of its batch and fails what it would signal. Before: the
   device's destroy freed the signal under the blocked queue (heap-use-after-free, then a hang). Both
   directions: the backend under test waiting on a CPU signal, and a CPU queue waiting on a signal of
   the backend under test. */
static void wait_on_destroyed_device_signal(int test_side_waits) {
    accel_device *tdev, *cdev, *a, *b;
    accel_queue* qa;
    accel_signal *sb, *sa;
    REQUIRE_OK(test_device_create(&tdev));
    REQUIRE_OK(cpu_device(NULL, &cdev));
    a = test_side_waits ? tdev : cdev;
    b = test_side_waits ? cdev : tdev;
    REQUIRE_OK(accel_queue_create(a, ACCEL_QUEUE_COMPUTE, &qa));
    REQUIRE_OK(accel_signal_create(a, 0, &sa));
    REQUIRE_OK(accel_signal_create(b, 0, &sb));
    accel_queue_wait(qa, sb, 1);
    accel_queue_signal(qa, sa, 1);
    CHECK_OK(accel_queue_submit(qa));
    CHECK_RESULT(accel_signal_wait(sa, 1, 0), ACCEL_TIMEOUT);
    accel_signal_destroy(sb);
    accel_device_destroy(b);
    CHECK(test_log_contains("nothing can set it now: failing it with ACCEL_ERROR_DEVICE_LOST"));
    CHECK_RESULT(accel_signal_wait(sa, 1, ACCEL_WAIT_FOREVER), ACCEL_ERROR_SIGNAL_FAILED);
    CHECK_EQ_U64(accel_signal_value(sa), ACCEL_SIGNAL_MAX + 1 + (uint64_t)-(int)ACCEL_ERROR_DEVICE_LOST);
    CHECK_OK(accel_queue_finish(qa, ACCEL_WAIT_FOREVER));
    accel_device_destroy(a);
}
TEST(xdev_wait_on_signal_of_destroyed_device_fails) {
    wait_on_destroyed_device_signal(1);
    wait_on_destroyed_device_signal(0);
}

/* The same, where another device's queue had recorded the signal command that could have set it, but
   that command never reaches the value: its batch is discarded (a recording error at submit; its queue
   destroyed unsubmitted; its device destroyed unsubmitted), or runs after the signal's device was
   destroyed with a lower value than the wait's. The release of that command fails the signal (at B's
   destroy it was still pending). Before: the waiting queue hung for good. */
static void wait_whose_setter_never_reaches(int mode) {
    accel_device *a, *b, *c;
    accel_queue *qa, *qc;
    accel_signal *sa, *sb, *gate;
    REQUIRE_OK(test_device_create(&a));
    REQUIRE_OK(cpu_device(NULL, &b));
    REQUIRE_OK(cpu_device(NULL, &c));
    REQUIRE_OK(accel_queue_create(a, ACCEL_QUEUE_COMPUTE, &qa));
    REQUIRE_OK(accel_queue_create(c, ACCEL_QUEUE_COMPUTE, &qc));
    REQUIRE_OK(accel_signal_create(a, 0, &sa));
    REQUIRE_OK(accel_signal_create(b, 0, &sb));
    REQUIRE_OK(accel_signal_create(c, 0, &gate));
    accel_queue_wait(qa, sb, 2);
    accel_queue_signal(qa, sa, 1);
    CHECK_OK(accel_queue_submit(qa));
    if (mode == 3) accel_queue_wait(qc, gate, 1);
    accel_queue_signal(qc, sb, mode == 3 ? 1 : 2);
    if (mode == 0) {
        accel_queue_signal(qc, NULL, 1);
        CHECK_RESULT(accel_queue_submit(qc), ACCEL_ERROR_INVALID_ARGUMENT);
    }
    if (mode == 1) accel_queue_destroy(qc);
    if (mode == 2) accel_device_destroy(c);
    if (mode == 3) CHECK_OK(accel_queue_submit(qc));
    accel_signal_destroy(sb);
    accel_device_destroy(b);
    if (mode == 3) CHECK_OK(accel_signal_set(gate, 1));   /* sb = 1 < 2, then the command is released */
    accel_result r = accel_signal_wait(sa, 1, 10000000000ull);
    CHECK_RESULT(r, ACCEL_ERROR_SIGNAL_FAILED);
    if (r == ACCEL_TIMEOUT) { fprintf(stderr, "    mode %d: the queue hangs\n", mode); return; }   /* a destroy would hang */
    CHECK(test_log_contains("nothing can set it now: failing it with ACCEL_ERROR_DEVICE_LOST"));
    CHECK_OK(accel_queue_finish(qa, ACCEL_WAIT_FOREVER));
    accel_device_destroy(a);
    if (mode != 2) accel_device_destroy(c);
}
TEST(xdev_wait_whose_only_setter_never_reaches_fails) {
    for (int mode = 0; mode < 4 && !TEST_FAILED_SO_FAR(); mode++) wait_whose_setter_never_reaches(mode);
}

/* A submitted batch of device A signals a signal of device B after B's handle and B are destroyed: the
   signal and B itself stay allocated until the batch is released, then go. Before: B's destroy freed
   the signal and the batch signalled freed memory. */
TEST(xdev_signal_keeps_its_device_alive) {
    test_alloc_state st;
    accel_device *a, *b;
    accel_queue* qa;
    accel_signal *gate, *sb, *done;
    test_alloc_init(&st);
    REQUIRE_OK(test_device_create(&a));
    REQUIRE_OK(cpu_device(&st, &b));
    REQUIRE_OK(accel_queue_create(a, ACCEL_QUEUE_COMPUTE, &qa));
    REQUIRE_OK(accel_signal_create(a, 0, &gate));
    REQUIRE_OK(accel_signal_create(a, 0, &done));
    REQUIRE_OK(accel_signal_create(b, 0, &sb));
    accel_queue_wait(qa, gate, 1);
    accel_queue_signal(qa, sb, 7);
    accel_queue_wait(qa, sb, 7);
    accel_queue_signal(qa, done, 1);
    CHECK_OK(accel_queue_submit(qa));
    accel_signal_destroy(sb);
    accel_device_destroy(b);
    CHECK(atomic_load(&st.outstanding) > 0);      /* kept: the signal, and the device it needs */
    CHECK_OK(accel_signal_set(gate, 1));
    CHECK_OK(accel_signal_wait(done, 1, ACCEL_WAIT_FOREVER));
    CHECK_OK(accel_queue_finish(qa, ACCEL_WAIT_FOREVER));
    CHECK_EQ_INT(atomic_load(&st.outstanding), 0);  /* released with the batch */
    CHECK_EQ_INT(atomic_load(&st.size_mismatch), 0);
    accel_device_destroy(a);
}

/* A CPU queue copies from another CPU device's buffer (CPU devices share host memory) after that buffer
   and its device are destroyed: the copy reads the data. Before: it read freed memory. */
TEST(xdev_copy_from_buffer_of_destroyed_device) {
    test_alloc_state st;
    accel_device *a, *b;
    accel_queue* qa;
    accel_signal* gate;
    accel_buffer *ba, *bb;
    uint32_t data[64], got[64];
    if (!test_backend_is_cpu()) SKIP("CPU devices only (run by the cpu configurations)");
    test_alloc_init(&st);
    REQUIRE_OK(cpu_device(NULL, &a));
    REQUIRE_OK(cpu_device(&st, &b));
    REQUIRE_OK(accel_queue_create(a, ACCEL_QUEUE_COMPUTE, &qa));
    REQUIRE_OK(accel_signal_create(a, 0, &gate));
    REQUIRE_OK(test_buffer_create(a, sizeof got, ACCEL_MEMORY_HOST, &ba));
    REQUIRE_OK(test_buffer_create(b, sizeof data, ACCEL_MEMORY_HOST, &bb));
    for (uint32_t i = 0; i < 64; i++) data[i] = 0x1000u + i * 3u;
    REQUIRE_OK(accel_buffer_write(bb, 0, data, sizeof data));
    accel_queue_wait(qa, gate, 1);
    accel_queue_copy(qa, ba, 0, bb, 0, sizeof data);
    CHECK_OK(accel_queue_submit(qa));
    accel_buffer_destroy(bb);
    accel_device_destroy(b);
    CHECK(atomic_load(&st.outstanding) > 0);
    CHECK_OK(accel_signal_set(gate, 1));
    CHECK_OK(accel_queue_finish(qa, ACCEL_WAIT_FOREVER));
    CHECK_EQ_INT(atomic_load(&st.outstanding), 0);
    CHECK_OK(accel_buffer_read(ba, 0, got, sizeof got));
    CHECK(memcmp(got, data, sizeof data) == 0);
    accel_device_destroy(a);
}

/* ==== every teardown order ==== */
/* Objects 0..7: device A, device B, their queues, signals and buffers; object i belongs to device i & 1.
   Queue A holds a submitted batch parked on B's gate (released before anything would wait for it, in
   builds with threads; left parked without) that waits on B's signal and copies from B's buffer, and a
   recorded one doing the same; queue B holds a submitted batch that waits on A's signal and copies from
   A's buffer, and a recorded one. */
enum { T_DEV, T_QUEUE = 2, T_SIGNAL = 4, T_BUFFER = 6, T_N = 8 };
typedef struct scene {
    test_alloc_state st[2];
    accel_device* dev[2];
    accel_queue* q[2];
    accel_signal* s[2];
    accel_buffer* b[2];
    accel_signal* gate;           /* of device B; not destroyed by hand */
    int gate_open;
} scene;

static int scene_make(scene* sc) {
    memset(sc, 0, sizeof *sc);
    for (int d = 0; d < 2; d++) {
        test_alloc_init(&sc->st[d]);
        if (!CHECK_OK(cpu_device(&sc->st[d], &sc->dev[d]))) return 0;
        if (!CHECK_OK(accel_queue_create(sc->dev[d], ACCEL_QUEUE_COMPUTE, &sc->q[d]))) return 0;
        if (!CHECK_OK(accel_signal_create(sc->dev[d], 0, &sc->s[d]))) return 0;
        if (!CHECK_OK(test_buffer_create(sc->dev[d], 256, ACCEL_MEMORY_HOST, &sc->b[d]))) return 0;
    }
    if (!CHECK_OK(accel_signal_create(sc->dev[1], 0, &sc->gate))) return 0;
    accel_queue_wait(sc->q[0], sc->gate, 1);
    accel_queue_wait(sc->q[0], sc->s[1], 1);
    accel_queue_copy(sc->q[0], sc->b[0], 64, sc->b[1], 0, 64);
    accel_queue_signal(sc->q[0], sc->s[0], 1);
    accel_queue_wait(sc->q[1], sc->s[0], 0);
    accel_queue_copy(sc->q[1], sc->b[1], 64, sc->b[0], 0, 64);
    accel_queue_signal(sc->q[1], sc->s[1], 1);
    for (int d = 0; d < 2; d++) if (!CHECK_OK(accel_queue_submit(sc->q[d]))) return 0;
    accel_queue_wait(sc->q[0], sc->s[1], 1);          /* recorded, never submitted */
    accel_queue_copy(sc->q[0], sc->b[0], 128, sc->b[1], 0, 64);
    accel_queue_signal(sc->q[0], sc->s[1], 2);
    accel_queue_wait(sc->q[1], sc->s[0], 1);
    accel_queue_copy(sc->q[1], sc->b[1], 128, sc->b[0], 0, 64);
    return 1;
}

static void scene_destroy(scene* sc, int i) {
    int d = i & 1;
    /* with threads, a destroy of queue A (or device A) would wait for its parked batch: open B's gate
       first while B is here to open it (once B is gone, its destroy has failed the gate) */
    if (TEST_HAVE_THREADS && d == 0 && (i == T_DEV || i == T_QUEUE) && !sc->gate_open && sc->dev[1]) {
        CHECK_OK(accel_signal_set(sc->gate, 1));
        sc->gate_open = 1;
    }
    switch (i & ~1) {
    case T_DEV:    accel_device_destroy(sc->dev[d]); sc->dev[d] = NULL; break;
    case T_QUEUE:  accel_queue_destroy(sc->q[d]); break;
    case T_SIGNAL: accel_signal_destroy(sc->s[d]); break;
    case T_BUFFER: accel_buffer_destroy(sc->b[d]); break;
    }
}

/* Runs one order (seq[0..n-1]: object indices) on a fresh scene; everything must be freed. */
static void scene_run(const int* seq, int n) {
    scene sc;
    int ok = scene_make(&sc);
    if (!ok) {
        for (int d = 0; d < 2; d++) accel_device_destroy(sc.dev[d]);
        return;
    }
    for (int k = 0; k < n; k++) scene_destroy(&sc, seq[k]);
    for (int d = 0; d < 2; d++) {
        if (!CHECK_EQ_INT(atomic_load(&sc.st[d].outstanding), 0) || !CHECK_EQ_INT(atomic_load(&sc.st[d].size_mismatch), 0)) {
            fprintf(stderr, "    device %c leaks; order:", 'A' + d);
            for (int k = 0; k < n; k++) fprintf(stderr, " %s%c", (const char*[]){ "dev", "queue", "signal", "buffer" }[seq[k] / 2], 'A' + (seq[k] & 1));
            fprintf(stderr, "\n");
        }
    }
}

/* Every order: the objects not yet destroyed whose device is still here may go next; a device takes
   its remaining objects with it. */
static int teardown_orders(int* seq, int n, unsigned dead) {
    int count = 0;
    if (dead == (1u << T_N) - 1u) { scene_run(seq, n); return 1; }
    for (int i = 0; i < T_N && !TEST_FAILED_SO_FAR(); i++) {
        unsigned gone = dead;
        if (dead & (1u << i)) continue;
        gone |= 1u << i;
        if ((i & ~1) == T_DEV)
            for (int j = i; j < T_N; j += 2) gone |= 1u << j;
        seq[n] = i;
        count += teardown_orders(seq, n + 1, gone);
    }
    return count;
}
#if TEST_HAVE_THREADS
typedef struct late_setter { accel_signal* s; accel_device* napdev; } late_setter;
static void late_set(void* arg) {   /* 100 ms after it starts (the destroy is under way), sets s */
    late_setter* t = (late_setter*)arg;
    accel_signal* nap = NULL;
    if (accel_signal_create(t->napdev, 0, &nap) == ACCEL_OK) accel_signal_wait(nap, 1, 100000000u);
    accel_signal_destroy(nap);
    accel_signal_set(t->s, 1);
}
static accel_queue* late_other;
static atomic_int late_result;
static void late_host_call(void* user) {
    (void)user;
    atomic_store(&late_result, (int)accel_queue_finish(late_other, 0));
}
#endif
/* accel_device_destroy waits for all queues before it lets any go: a queue it waits for (its batch
   waits on a signal another thread sets meanwhile) runs a host call that uses another queue of the
   device, released already before (ASan: heap-use-after-free in accel_queue_submit). */
TEST(device_destroy_waits_for_every_queue_before_any_goes) {
#if !TEST_HAVE_THREADS
    SKIP("no threads in this build");
#else
    accel_device *dev = NULL, *napdev = NULL;
    accel_queue *qa = NULL, *qb = NULL;
    accel_signal *late = NULL, *g = NULL;
    late_setter t;
    test_thread th;
    REQUIRE_OK(test_device_create(&dev));
    REQUIRE_OK(cpu_device(NULL, &napdev));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &qb));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &qa));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &late_other));   /* first in the list */
    REQUIRE_OK(accel_signal_create(dev, 0, &late));
    REQUIRE_OK(accel_signal_create(dev, 0, &g));
    atomic_store(&late_result, 1000);
    accel_queue_wait(qa, late, 1);
    accel_queue_signal(qa, g, 1);
    CHECK_OK(accel_queue_submit(qa));
    accel_queue_wait(qb, g, 1);
    accel_queue_host_call(qb, late_host_call, NULL);
    CHECK_OK(accel_queue_submit(qb));
    t.s = late;
    t.napdev = napdev;
    REQUIRE(test_thread_start(&th, late_set, &t));
    accel_device_destroy(dev);
    test_thread_join(&th);
    CHECK_RESULT((accel_result)atomic_load(&late_result), ACCEL_OK);
    accel_device_destroy(napdev);
#endif
}

TEST(teardown_every_order) {
    int seq[T_N];
    if (!test_backend_is_cpu()) SKIP("CPU devices only (run by the cpu configurations)");
    int orders = teardown_orders(seq, 0, 0);
    if (!TEST_FAILED_SO_FAR()) CHECK_EQ_INT(orders, 6842);
}

int main(int argc, char** argv) {
    test_begin(argc, argv);
    RUN(xdev_wait_on_signal_of_destroyed_device_fails);
    RUN(xdev_wait_whose_only_setter_never_reaches_fails);
    RUN(xdev_signal_keeps_its_device_alive);
    RUN(xdev_copy_from_buffer_of_destroyed_device);
    RUN(device_destroy_waits_for_every_queue_before_any_goes);
    RUN(teardown_every_order);
    return test_end();
}

/* tests/test_holds.c — a queue holds the objects it records with (accel.h, "core: queue holds"): what
   the caller destroys is freed as soon as no submitted work uses it (at once when none does, once the
   last batch that uses it is done otherwise), never before; command lists keep references of their own;
   an object used by two queues, a queue destroyed before its objects, a device destroyed with objects
   still held; many queues on many threads claiming and letting go of objects that others destroy; a
   queue's teardown while another thread's queue claims the objects it let go. On
   every backend (CPU, Vulkan on lavapipe, CUDA through the mock). Memory is counted through the device's
   allocator: the buffers and signals under test carry a 1 MiB label, which the core keeps whole in the
   allocator's memory until the object is freed (the CPU backend's programs too, by their name). */
#define ACCEL_IMPLEMENTATION
#include "accel.h"
#include "test.h"
#include "kernels.h"

enum { HW = 64 };   /* words in each buffer */
#define HOLD_MIB (1ll << 20)

static char hold_label[(1u << 20) + 1];

/* The scene: a device on the counting allocator, two compute queues, a gate signal, a done signal, the
   copy and add-one programs, and a host buffer `out`. */
typedef struct hold_scene {
    test_alloc_state mem;
    accel_device* dev;
    accel_queue *q, *q2;
    accel_signal *gate, *done;
    accel_program *copy, *add;
    accel_buffer* out;
    uint64_t next;
} hold_scene;

static accel_result hold_program(accel_device* dev, test_kernel k, accel_program** out) {
    accel_program_desc d = test_kernel_desc(k);
    return accel_program_create(dev, &d, out);
}
static int hold_scene_make(hold_scene* sc) {
    accel_device_desc desc;
    memset(sc, 0, sizeof *sc);
    memset(hold_label, 'h', sizeof hold_label - 1);
    test_alloc_init(&sc->mem);
    memset(&desc, 0, sizeof desc);
    desc.allocator = test_allocator(&sc->mem);
    if (!CHECK_OK(test_device_create_desc(desc, &sc->dev))) return 0;
    return CHECK_OK(accel_queue_create(sc->dev, ACCEL_QUEUE_COMPUTE, &sc->q)) &&
           CHECK_OK(accel_queue_create(sc->dev, ACCEL_QUEUE_COMPUTE, &sc->q2)) &&
           CHECK_OK(accel_signal_create(sc->dev, 0, &sc->gate)) &&
           CHECK_OK(accel_signal_create(sc->dev, 0, &sc->done)) &&
           CHECK_OK(hold_program(sc->dev, TK_COPY_U32, &sc->copy)) &&
           CHECK_OK(hold_program(sc->dev, TK_ADD_ONE, &sc->add)) &&
           CHECK_OK(test_buffer_create(sc->dev, HW * 4, ACCEL_MEMORY_HOST, &sc->out));
}
/* Everything goes; nothing of the allocator's is left. */
static void hold_scene_end(hold_scene* sc) {
    accel_device_destroy(sc->dev);   /* the rest of its objects with it */
    CHECK_EQ_INT(atomic_load(&sc->mem.outstanding), 0);
    CHECK_EQ_INT(atomic_load(&sc->mem.size_mismatch), 0);
}
static long long hold_bytes(hold_scene* sc) { return atomic_load(&sc->mem.bytes); }
/* A buffer of HW words i + base, labelled with the 1 MiB label. */
static accel_buffer* hold_big_buffer(hold_scene* sc, uint32_t base) {
    accel_buffer_desc d;
    accel_buffer* b = NULL;
    uint32_t w[HW];
    memset(&d, 0, sizeof d);
    d.size = HW * 4;
    d.memory = ACCEL_MEMORY_DEVICE;
    d.label = hold_label;
    if (!CHECK_OK(accel_buffer_create(sc->dev, &d, &b))) return NULL;
    for (uint32_t i = 0; i < HW; i++) w[i] = i + base;
    CHECK_OK(accel_buffer_write(b, 0, w, sizeof w));
    return b;
}
/* Records dst = src on q. */
static void hold_copy(hold_scene* sc, accel_queue* q, accel_buffer* dst, accel_buffer* src) {
    accel_buffer* b[2] = { dst, src };
    uint32_t n = HW;
    accel_queue_exec(q, sc->copy, b, 2, &n, 1, accel_exec_1d(HW, 16));
}
/* Do out's words read i + base? */
static int hold_out_is(hold_scene* sc, uint32_t base) {
    uint32_t got[HW];
    if (!CHECK_OK(accel_buffer_read(sc->out, 0, got, sizeof got))) return 0;
    for (uint32_t i = 0; i < HW; i++)
        if (!CHECK_EQ_U64(got[i], i + base)) return 0;
    return 1;
}
/* Were n objects' MiB freed since `before` (give or take a quarter MiB: a queue's caches, a backend's
   own bookkeeping move meanwhile by far less)? */
static int hold_freed(hold_scene* sc, long long before, int n) {
    long long now = hold_bytes(sc);
    if (CHECK(before - now >= n * HOLD_MIB - HOLD_MIB / 4)) return 1;
    fprintf(stderr, "    %lld bytes freed, expected %d MiB at least\n", before - now, n);
    return 0;
}
/* Was nothing of an object's MiB freed since `before`? */
static int hold_kept(hold_scene* sc, long long before) {
    long long now = hold_bytes(sc);
    if (CHECK(before - now < HOLD_MIB / 2)) return 1;
    fprintf(stderr, "    %lld bytes freed, expected none of the object's\n", before - now);
    return 0;
}

/* A buffer the queue held is freed at its destroy when no work uses it any more: at once. */
TEST(held_buffer_freed_at_once_when_no_work_uses_it) {
    hold_scene sc;
    accel_buffer* a;
    long long before;
    if (!hold_scene_make(&sc) || (a = hold_big_buffer(&sc, 7)) == NULL) { hold_scene_end(&sc); return; }
    for (int round = 0; round < 3; round++) hold_copy(&sc, sc.q, sc.out, a);   /* held from the first */
    CHECK_OK(accel_queue_finish(sc.q, ACCEL_WAIT_FOREVER));
    hold_out_is(&sc, 7);
    before = hold_bytes(&sc);
    accel_buffer_destroy(a);
    hold_freed(&sc, before, 1);
    hold_scene_end(&sc);
}

/* A buffer destroyed while the queue's submitted work (held back by a gate) or its recording still uses
   it stays until that work is done, then goes; the work reads it whole. */
TEST(held_buffer_outlives_its_handle_while_work_uses_it) {
    hold_scene sc;
    accel_buffer *a, *b;
    long long before;
    if (!hold_scene_make(&sc) || (a = hold_big_buffer(&sc, 11)) == NULL || (b = hold_big_buffer(&sc, 5)) == NULL) {
        hold_scene_end(&sc);
        return;
    }
    hold_copy(&sc, sc.q, sc.out, b);
    CHECK_OK(accel_queue_finish(sc.q, ACCEL_WAIT_FOREVER));   /* both held by now: b used, a not yet */
    accel_queue_wait(sc.q, sc.gate, 1);
    hold_copy(&sc, sc.q, sc.out, a);
    CHECK_OK(accel_queue_submit(sc.q));
    hold_copy(&sc, sc.q, sc.out, b);   /* recorded, not submitted */
    before = hold_bytes(&sc);
    accel_buffer_destroy(a);
    accel_buffer_destroy(b);
    hold_kept(&sc, before);   /* neither: a's batch waits, b's is not submitted */
    CHECK_OK(accel_signal_set(sc.gate, 1));
    CHECK_OK(accel_queue_finish(sc.q, ACCEL_WAIT_FOREVER));   /* submits b's batch too */
    hold_out_is(&sc, 5);
    hold_freed(&sc, before, 2);
    hold_scene_end(&sc);
}

/* One buffer, two queues: the first to record with it holds it, the other takes references per command;
   destroyed while the second queue's work waits, it stays until that work is done. */
TEST(two_queues_one_holds_the_other_references) {
    hold_scene sc;
    accel_buffer* a;
    long long before;
    if (!hold_scene_make(&sc) || (a = hold_big_buffer(&sc, 3)) == NULL) { hold_scene_end(&sc); return; }
    hold_copy(&sc, sc.q, sc.out, a);
    CHECK_OK(accel_queue_finish(sc.q, ACCEL_WAIT_FOREVER));
    accel_queue_wait(sc.q2, sc.gate, 1);
    hold_copy(&sc, sc.q2, sc.out, a);
    CHECK_OK(accel_queue_submit(sc.q2));
    before = hold_bytes(&sc);
    accel_buffer_destroy(a);
    hold_kept(&sc, before);   /* q's hold went at once; q2's batch keeps it */
    CHECK_OK(accel_signal_set(sc.gate, 1));
    CHECK_OK(accel_queue_finish(sc.q2, ACCEL_WAIT_FOREVER));
    hold_out_is(&sc, 3);
    hold_freed(&sc, before, 1);
    hold_scene_end(&sc);
}

/* A queue destroyed before the objects it held lets them go: another queue then holds and uses them,
   and their destroy frees them at once. */
TEST(queue_destroyed_before_its_held_objects) {
    hold_scene sc;
    accel_buffer* a;
    long long before;
    if (!hold_scene_make(&sc) || (a = hold_big_buffer(&sc, 9)) == NULL) { hold_scene_end(&sc); return; }
    hold_copy(&sc, sc.q, sc.out, a);
    CHECK_OK(accel_queue_submit(sc.q));
    accel_queue_destroy(sc.q);   /* waits for its work; its holds go */
    sc.q = NULL;
    CHECK_OK(test_buffer_set_u32(sc.out, HW, 0));
    hold_copy(&sc, sc.q2, sc.out, a);
    CHECK_OK(accel_queue_finish(sc.q2, ACCEL_WAIT_FOREVER));
    hold_out_is(&sc, 9);
    before = hold_bytes(&sc);
    accel_buffer_destroy(a);
    hold_freed(&sc, before, 1);
    hold_scene_end(&sc);
}

/* A command list recorded on a queue that holds its buffer keeps a reference of its own: the buffer's
   destroy (and the queue's) leaves it to the list, which replays on another queue; the list's destroy
   frees it. */
TEST(command_lists_keep_references_of_their_own) {
    hold_scene sc;
    accel_buffer* a;
    accel_commands* list = NULL;
    long long before;
    if (!hold_scene_make(&sc) || (a = hold_big_buffer(&sc, 21)) == NULL) { hold_scene_end(&sc); return; }
    hold_copy(&sc, sc.q, sc.out, a);   /* q holds a */
    CHECK_OK(accel_queue_finish(sc.q, ACCEL_WAIT_FOREVER));
    CHECK_OK(accel_queue_record_begin(sc.q));
    hold_copy(&sc, sc.q, sc.out, a);
    if (!CHECK_OK(accel_queue_record_end(sc.q, &list))) { hold_scene_end(&sc); return; }
    before = hold_bytes(&sc);
    accel_buffer_destroy(a);
    accel_queue_destroy(sc.q);
    sc.q = NULL;
    hold_kept(&sc, before);
    CHECK_OK(test_buffer_set_u32(sc.out, HW, 0));
    accel_queue_replay(sc.q2, list, NULL, 0);
    CHECK_OK(accel_queue_finish(sc.q2, ACCEL_WAIT_FOREVER));
    hold_out_is(&sc, 21);
    hold_kept(&sc, before);
    accel_commands_destroy(list);
    CHECK_OK(accel_queue_finish(sc.q2, ACCEL_WAIT_FOREVER));
    hold_freed(&sc, before, 1);
    hold_scene_end(&sc);
}

/* Signals and programs are held like buffers: destroyed while a gated batch signals and runs them, they
   stay until it is done; destroyed when no work uses them, they go at once. (The programs' memory is
   counted on the CPU backend only, whose programs keep their name as their label.) */
TEST(held_signals_and_programs_go_with_their_handles) {
    hold_scene sc;
    accel_signal* s;
    accel_program* p = NULL;
    accel_buffer* a;
    long long before;
    int cpu = test_backend_is_cpu(), n = cpu ? 2 : 1;
    if (!hold_scene_make(&sc) || (a = hold_big_buffer(&sc, 0)) == NULL) { hold_scene_end(&sc); return; }
    for (int round = 0; round < 2 && !TEST_FAILED_SO_FAR(); round++) {
        accel_program_desc d = test_kernel_desc(TK_ADD_ONE);
        uint32_t words = HW;
        if (cpu) d.name = hold_label;
        if (!CHECK_OK(accel_signal_create(sc.dev, 0, &s)) || !CHECK_OK(accel_signal_set_label(s, hold_label)) ||
            !CHECK_OK(accel_program_create(sc.dev, &d, &p)))
            break;
        if (round == 1) accel_queue_wait(sc.q, sc.gate, 1);
        accel_queue_exec(sc.q, p, &a, 1, &words, 1, accel_exec_1d(HW, 16));
        accel_queue_signal(sc.q, s, 1);
        hold_copy(&sc, sc.q, sc.out, a);
        CHECK_OK(accel_queue_submit(sc.q));
        if (round == 0) CHECK_OK(accel_queue_finish(sc.q, ACCEL_WAIT_FOREVER));
        before = hold_bytes(&sc);
        accel_signal_destroy(s);
        accel_program_destroy(p);
        if (round == 0) {
            hold_freed(&sc, before, n);
            continue;
        }
        hold_kept(&sc, before);
        CHECK_OK(accel_signal_set(sc.gate, 1));
        CHECK_OK(accel_queue_finish(sc.q, ACCEL_WAIT_FOREVER));
        hold_freed(&sc, before, n);
    }
    hold_out_is(&sc, 2);   /* 0 + one add a round */
    accel_buffer_destroy(a);
    hold_scene_end(&sc);
}

/* A device destroyed with held objects still alive (their handles never destroyed), with queued work
   and with work waiting on a gate that is never set: nothing is left of the allocator's. */
TEST(device_destroy_with_held_objects) {
    for (int shape = 0; shape < 3 && !TEST_FAILED_SO_FAR(); shape++) {
        hold_scene sc;
        accel_buffer *a, *b;
        if (!hold_scene_make(&sc) || (a = hold_big_buffer(&sc, 1)) == NULL || (b = hold_big_buffer(&sc, 2)) == NULL) {
            hold_scene_end(&sc);
            return;
        }
        if (shape == 2) accel_queue_wait(sc.q2, sc.gate, 1);
        hold_copy(&sc, sc.q, sc.out, a);
        hold_copy(&sc, sc.q2, b, a);
        CHECK_OK(accel_queue_submit(sc.q));
        if (shape >= 1) CHECK_OK(accel_queue_submit(sc.q2));
        if (shape == 2) {   /* the device's destroy would wait for the gate for ever: it fails */
            CHECK_OK(accel_signal_fail(sc.gate, ACCEL_ERROR_SIGNAL_FAILED));
        }
        if (shape == 0) accel_buffer_destroy(a);   /* one destroyed, the other left to the device */
        hold_scene_end(&sc);
    }
}

#if TEST_HAVE_THREADS
/* Many queues on many threads: each round every thread makes a buffer of its own, copies a shared source
   into it, adds its thread number + 1 to it in as many execs, copies it to its own out buffer, and
   destroys its buffer (before the submit in even rounds, after it in odd ones, while the work runs); a
   round's source was made by thread 0 (held by whichever queue recorded with it first, the others take
   references), and is destroyed by thread 0 after every thread checked its out buffer, while other
   queues may still hold it. Every out buffer reads what its thread added, every round. */
enum { HR_THREADS = 4, HR_ROUNDS = 60 };
typedef struct hold_race {
    hold_scene* sc;
    accel_buffer* src;
    accel_buffer* outs[HR_THREADS];
    accel_signal* met;   /* k: the k-th meeting is over */
    atomic_int arrived;
    atomic_int bad;
} hold_race;
typedef struct hold_racer { hold_race* r; int t; accel_queue* q; } hold_racer;
/* All HR_THREADS threads meet; the k-th meeting ends when every thread arrived k times. */
static void hold_race_meet(hold_race* r, int k) {
    accel_result res;
    if (atomic_fetch_add(&r->arrived, 1) + 1 == k * HR_THREADS) res = accel_signal_set(r->met, (uint64_t)k);
    else res = accel_signal_wait(r->met, (uint64_t)k, ACCEL_WAIT_FOREVER);
    if (res != ACCEL_OK) atomic_fetch_add(&r->bad, 1);
}
static void hold_racer_round(hold_racer* me, int round) {
    hold_race* r = me->r;
    accel_buffer* tmp = NULL;
    uint32_t n = HW, got[HW];
    accel_buffer_desc d;
    memset(&d, 0, sizeof d);
    d.size = HW * 4;
    d.memory = ACCEL_MEMORY_DEVICE;
    if (accel_buffer_create(r->sc->dev, &d, &tmp) != ACCEL_OK) { atomic_fetch_add(&r->bad, 1); return; }
    {
        accel_buffer* b[2] = { tmp, r->src };
        accel_queue_exec(me->q, r->sc->copy, b, 2, &n, 1, accel_exec_1d(HW, 16));
    }
    for (int i = 0; i <= me->t; i++) accel_queue_exec(me->q, r->sc->add, &tmp, 1, &n, 1, accel_exec_1d(HW, 16));
    {
        accel_buffer* b[2] = { r->outs[me->t], tmp };
        accel_queue_exec(me->q, r->sc->copy, b, 2, &n, 1, accel_exec_1d(HW, 16));
    }
    if (round % 2 == 0) accel_buffer_destroy(tmp);
    if (accel_queue_submit(me->q) != ACCEL_OK) atomic_fetch_add(&r->bad, 1);
    if (round % 2 == 1) accel_buffer_destroy(tmp);
    if (accel_queue_finish(me->q, ACCEL_WAIT_FOREVER) != ACCEL_OK ||
        accel_buffer_read(r->outs[me->t], 0, got, sizeof got) != ACCEL_OK) {
        atomic_fetch_add(&r->bad, 1);
        return;
    }
    for (uint32_t i = 0; i < HW; i++)
        if (got[i] != i + (uint32_t)round * 1000u + (uint32_t)me->t + 1u) { atomic_fetch_add(&r->bad, 1); return; }
}
static void hold_racer_main(void* p) {
    hold_racer* me = (hold_racer*)p;
    hold_race* r = me->r;
    int meets = 0;
    int rounds = test_sync_validation() ? HR_ROUNDS / 6 : HR_ROUNDS;   /* 2 s a round there */
    for (int round = 0; round < rounds; round++) {
        if (me->t == 0) {   /* a new source; the old one's holds and references go */
            accel_buffer* old = r->src;
            r->src = hold_big_buffer(r->sc, (uint32_t)round * 1000u);
            if (!r->src) atomic_fetch_add(&r->bad, 1);
            accel_buffer_destroy(old);
        }
        hold_race_meet(r, ++meets);
        if (r->src) hold_racer_round(me, round);
        hold_race_meet(r, ++meets);
    }
}
TEST(many_queues_claim_and_let_go_while_others_destroy) {
    hold_scene sc;
    hold_race r;
    hold_racer racers[HR_THREADS];
    test_thread th[HR_THREADS];
    long long before;
    if (!hold_scene_make(&sc)) { hold_scene_end(&sc); return; }
    memset(&r, 0, sizeof r);
    r.sc = &sc;
    atomic_init(&r.arrived, 0);
    atomic_init(&r.bad, 0);
    REQUIRE_OK(accel_signal_create(sc.dev, 0, &r.met));
    for (int t = 0; t < HR_THREADS; t++) {
        racers[t].r = &r;
        racers[t].t = t;
        racers[t].q = NULL;
        REQUIRE_OK(test_buffer_create(sc.dev, HW * 4, ACCEL_MEMORY_HOST, &r.outs[t]));
        REQUIRE_OK(accel_queue_create(sc.dev, ACCEL_QUEUE_COMPUTE, &racers[t].q));
    }
    before = hold_bytes(&sc);
    for (int t = 0; t < HR_THREADS; t++) REQUIRE(test_thread_start(&th[t], hold_racer_main, &racers[t]));
    for (int t = 0; t < HR_THREADS; t++) test_thread_join(&th[t]);
    CHECK_EQ_INT(atomic_load(&r.bad), 0);
    accel_buffer_destroy(r.src);
    for (int t = 0; t < HR_THREADS; t++) accel_queue_destroy(racers[t].q);
    CHECK(hold_bytes(&sc) - before < HOLD_MIB / 2);   /* no source left behind */
    hold_scene_end(&sc);
}

/* One queue's teardown lets go of the objects it holds while another thread's queue records with the
   same objects and claims them (two queues on two threads, shared signals: nothing to synchronize).
   The teardown must not follow its list into the other queue's: every allocation is freed at the end
   (a teardown that followed the list released the other queue's holds: objects freed twice, or left). */
enum { HT_SHARED = 256, HT_OWN = 32 };
typedef struct hold_teardown {
    accel_device* dev;
    accel_signal* shared[HT_SHARED];
    atomic_int ready;
    atomic_int bad;
} hold_teardown;
static void hold_teardown_meet(hold_teardown* h) {
    atomic_fetch_add(&h->ready, 1);
    while (atomic_load(&h->ready) < 2) { }
}
static void hold_teardown_a(void* p) {   /* holds every shared signal, then lets go of them */
    hold_teardown* h = (hold_teardown*)p;
    accel_queue* q = NULL;
    if (accel_queue_create(h->dev, ACCEL_QUEUE_COMPUTE, &q) != ACCEL_OK) {
        atomic_fetch_add(&h->bad, 1);
        hold_teardown_meet(h);
        return;
    }
    for (int i = 0; i < HT_SHARED; i++) accel_queue_wait(q, h->shared[i], 0);
    if (accel_queue_finish(q, ACCEL_WAIT_FOREVER) != ACCEL_OK) atomic_fetch_add(&h->bad, 1);
    hold_teardown_meet(h);
    accel_queue_destroy(q);
}
static void hold_teardown_b(void* p) {   /* holds signals of its own, then claims the shared ones */
    hold_teardown* h = (hold_teardown*)p;
    accel_queue* q = NULL;
    accel_signal* own[HT_OWN];
    int made = 0;
    if (accel_queue_create(h->dev, ACCEL_QUEUE_COMPUTE, &q) != ACCEL_OK) {
        atomic_fetch_add(&h->bad, 1);
        hold_teardown_meet(h);
        return;
    }
    for (; made < HT_OWN; made++) {
        if (accel_signal_create(h->dev, 0, &own[made]) != ACCEL_OK) { atomic_fetch_add(&h->bad, 1); break; }
        accel_queue_wait(q, own[made], 0);
    }
    if (accel_queue_finish(q, ACCEL_WAIT_FOREVER) != ACCEL_OK) atomic_fetch_add(&h->bad, 1);
    hold_teardown_meet(h);
    for (int round = 0; round < 4; round++) {
        for (int i = HT_SHARED; i-- > 0;) accel_queue_wait(q, h->shared[i], 0);
        if (accel_queue_submit(q) != ACCEL_OK) atomic_fetch_add(&h->bad, 1);
    }
    if (accel_queue_finish(q, ACCEL_WAIT_FOREVER) != ACCEL_OK) atomic_fetch_add(&h->bad, 1);
    for (int i = 0; i < made; i++) accel_signal_destroy(own[i]);
    accel_queue_destroy(q);
}
TEST(queue_teardown_while_another_queue_claims_its_objects) {
    for (int it = 0; it < 20 && !TEST_FAILED_SO_FAR(); it++) {
        static hold_teardown h;
        test_alloc_state mem;
        accel_device_desc desc;
        test_thread ta, tb;
        memset(&h, 0, sizeof h);
        test_alloc_init(&mem);
        memset(&desc, 0, sizeof desc);
        desc.allocator = test_allocator(&mem);
        REQUIRE_OK(test_device_create_desc(desc, &h.dev));
        for (int i = 0; i < HT_SHARED; i++) REQUIRE_OK(accel_signal_create(h.dev, 0, &h.shared[i]));
        REQUIRE(test_thread_start(&ta, hold_teardown_a, &h));
        REQUIRE(test_thread_start(&tb, hold_teardown_b, &h));
        test_thread_join(&ta);
        test_thread_join(&tb);
        CHECK_EQ_INT(atomic_load(&h.bad), 0);
        for (int i = 0; i < HT_SHARED; i++) accel_signal_destroy(h.shared[i]);
        accel_device_destroy(h.dev);
        if (!CHECK_EQ_INT(atomic_load(&mem.outstanding), 0)) fprintf(stderr, "    round %d\n", it);
    }
}
#else
TEST(many_queues_claim_and_let_go_while_others_destroy) { SKIP("no threads in this configuration"); }
TEST(queue_teardown_while_another_queue_claims_its_objects) { SKIP("no threads in this configuration"); }
#endif

int main(int argc, char** argv) {
    test_begin(argc, argv);
    RUN(held_buffer_freed_at_once_when_no_work_uses_it);
    RUN(held_buffer_outlives_its_handle_while_work_uses_it);
    RUN(two_queues_one_holds_the_other_references);
    RUN(queue_destroyed_before_its_held_objects);
    RUN(command_lists_keep_references_of_their_own);
    RUN(held_signals_and_programs_go_with_their_handles);
    RUN(device_destroy_with_held_objects);
    RUN(many_queues_claim_and_let_go_while_others_destroy);
    RUN(queue_teardown_while_another_queue_claims_its_objects);
    return test_end();
}

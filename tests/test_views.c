/* tests/test_views.c — buffer views (accel_buffer_view_create) and read_only wraps: every command and
   exec binding through views, views of views, views outliving their root's handle, out-of-range and
   misaligned views refused, on every backend (CPU, Vulkan on lavapipe, CUDA through the mock); the
   read_only wrap of const memory on the CPU backend. */
#define ACCEL_IMPLEMENTATION
#include "accel.h"
#include "test.h"
#include "kernels.h"

/* The scene: a device, a compute queue, a signal, and the device's view offset alignment in bytes. */
typedef struct view_scene {
    accel_device* dev;
    accel_queue* q;
    accel_signal* s;
    size_t align;
    uint64_t next;
} view_scene;

static int view_scene_make(view_scene* sc) {
    accel_device_info info;
    memset(sc, 0, sizeof *sc);
    if (!CHECK_OK(test_device_create(&sc->dev)) || !CHECK_OK(accel_device_info_get(sc->dev, &info))) return 0;
    sc->align = info.buffer_offset_alignment;
    if (!CHECK(sc->align >= 1 && (sc->align & (sc->align - 1)) == 0)) return 0;
    if (sc->align < 256) sc->align = 256;   /* a spacing that is a multiple of every alignment up to 256 */
    return CHECK_OK(accel_queue_create(sc->dev, ACCEL_QUEUE_COMPUTE, &sc->q)) && CHECK_OK(accel_signal_create(sc->dev, 0, &sc->s));
}
/* Signals, submits and waits; the submit's result. */
static accel_result view_run(view_scene* sc) {
    accel_result r;
    accel_queue_signal(sc->q, sc->s, ++sc->next);
    r = accel_queue_submit(sc->q);
    if (r == ACCEL_OK) r = accel_signal_wait(sc->s, sc->next, ACCEL_WAIT_FOREVER);
    return r;
}
/* Checks words [first, first + n) of buf: expect(i) for i in range. Returns 1 when all match. */
static int view_check_words(accel_buffer* buf, size_t first, size_t n, uint32_t base, uint32_t step) {
    uint32_t bad = 0, got = 0, at = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t v = test_buffer_u32(buf, first + i), want = base + (uint32_t)i * step;
        if (v != want && !bad++) { got = v; at = (uint32_t)i; }
    }
    if (bad) fprintf(stderr, "    %u words off from word %zu; first at +%u: got %u, want %u\n", bad, first, at, got, base + at * step);
    return CHECK_EQ_INT(bad, 0);
}

/* ==== exec bindings through views ==== */
TEST(view_exec_bindings_see_the_views_range) {
    view_scene sc;
    accel_buffer *root = NULL, *va = NULL, *vb = NULL;
    accel_program *fill = NULL, *add = NULL, *copy = NULL;
    if (view_scene_make(&sc)) {
        size_t aw = sc.align / 4, words = 4 * aw + 1024;
        uint32_t n = 256, fc[2] = { 100, n }, cc[1] = { n };
        REQUIRE_OK(test_buffer_create(sc.dev, words * 4, ACCEL_MEMORY_DEVICE, &root));
        REQUIRE_OK(accel_buffer_view_create(root, sc.align, n * 4u, &va));               /* words aw .. aw+255 */
        REQUIRE_OK(accel_buffer_view_create(root, 2 * sc.align + 2048, n * 4u, &vb));    /* past va */
        CHECK_EQ_U64(accel_buffer_size(va), n * 4u);
        REQUIRE_OK(test_program_create(sc.dev, TK_FILL_INDEX, &fill));
        REQUIRE_OK(test_program_create(sc.dev, TK_ADD_ONE, &add));
        REQUIRE_OK(test_program_create(sc.dev, TK_COPY_U32, &copy));
        accel_queue_exec(sc.q, fill, &va, 1, fc, 2, accel_exec_1d(n, 64));
        accel_queue_exec(sc.q, add, &va, 1, cc, 1, accel_exec_1d(n, 64));
        accel_buffer* cb[2] = { vb, va };
        accel_queue_exec(sc.q, copy, cb, 2, cc, 1, accel_exec_1d(n, 64));
        REQUIRE_OK(view_run(&sc));
        view_check_words(root, 0, aw, 0, 0);                         /* before the view: untouched */
        view_check_words(root, aw, n, 101, 1);                       /* the view: i + 100 + 1 */
        view_check_words(root, aw + n, 8, 0, 0);                     /* just after it: untouched */
        view_check_words(root, (2 * sc.align + 2048) / 4, n, 101, 1);   /* the copy through vb */
        view_check_words(va, 0, n, 101, 1);                          /* read through the view */
    }
    accel_device_destroy(sc.dev);
}

/* ==== copy, fill, update, read, write, map through views ==== */
TEST(view_every_command_and_host_call) {
    view_scene sc;
    accel_buffer *root = NULL, *a = NULL, *b = NULL;
    if (view_scene_make(&sc)) {
        size_t aw = sc.align / 4;
        uint32_t data[16], back[16];
        for (uint32_t i = 0; i < 16; i++) data[i] = 7000 + i;
        REQUIRE_OK(test_buffer_create(sc.dev, (4 * aw + 64) * 4, ACCEL_MEMORY_HOST, &root));
        REQUIRE_OK(accel_buffer_view_create(root, sc.align, 64, &a));          /* 16 words at aw */
        REQUIRE_OK(accel_buffer_view_create(root, 3 * sc.align, 64, &b));      /* 16 words at 3aw */
        REQUIRE_OK(accel_buffer_write(a, 0, data, sizeof data));
        CHECK(test_buffer_u32(root, aw) == 7000 && test_buffer_u32(root, aw + 15) == 7015);
        CHECK_OK(accel_buffer_read(a, 8, back, 8));
        CHECK(back[0] == 7002 && back[1] == 7003);
        accel_queue_copy(sc.q, b, 4, a, 0, 32);                 /* b[1..8] = a[0..7] */
        accel_queue_fill(sc.q, a, 32, 16, 0xABCDu);             /* a[8..11] */
        accel_queue_update(sc.q, a, 48, data, 8);               /* a[12..13] = 7000, 7001 */
        REQUIRE_OK(view_run(&sc));
        view_check_words(root, 3 * aw + 1, 8, 7000, 1);
        CHECK_EQ_U64(test_buffer_u32(root, 3 * aw), 0);
        CHECK_EQ_U64(test_buffer_u32(root, 3 * aw + 9), 0);
        view_check_words(root, aw + 8, 4, 0xABCDu, 0);
        view_check_words(root, aw + 12, 2, 7000, 1);
        CHECK_EQ_U64(test_buffer_u32(root, aw + 14), 7014);
        if (accel_buffer_map(root)) CHECK(accel_buffer_map(a) == (unsigned char*)accel_buffer_map(root) + sc.align);
        /* beyond the view but inside the root: refused, and nothing of the batch runs */
        accel_queue_fill(sc.q, a, 0, 16, 1);
        accel_queue_fill(sc.q, a, 60, 8, 2);
        CHECK_RESULT(accel_queue_submit(sc.q), ACCEL_ERROR_INVALID_ARGUMENT);
        CHECK_EQ_U64(test_buffer_u32(root, aw), 7000);
        CHECK_RESULT(accel_buffer_write(a, 60, data, 8), ACCEL_ERROR_INVALID_ARGUMENT);
        CHECK_RESULT(accel_buffer_read(b, 64, back, 4), ACCEL_ERROR_INVALID_ARGUMENT);
    }
    accel_device_destroy(sc.dev);
}

/* Two views of one root whose ranges overlap: a copy between them is refused like one within a buffer. */
TEST(view_copy_between_overlapping_views_refused) {
    view_scene sc;
    accel_buffer *root = NULL, *a = NULL, *b = NULL;
    if (view_scene_make(&sc)) {
        REQUIRE_OK(test_buffer_create(sc.dev, 4 * sc.align, ACCEL_MEMORY_DEVICE, &root));
        REQUIRE_OK(accel_buffer_view_create(root, 0, 2 * sc.align, &a));
        REQUIRE_OK(accel_buffer_view_create(root, sc.align, 2 * sc.align, &b));
        accel_queue_copy(sc.q, b, 0, a, 0, 2 * sc.align);       /* root [align, 3 align) <- [0, 2 align) */
        CHECK_RESULT(accel_queue_submit(sc.q), ACCEL_ERROR_INVALID_ARGUMENT);
        accel_queue_copy(sc.q, b, sc.align, a, 0, sc.align);    /* [2 align, 3 align) <- [0, align): fine */
        CHECK_OK(view_run(&sc));
    }
    accel_device_destroy(sc.dev);
}

/* ==== views of views ==== */
TEST(view_of_a_view_is_a_view_of_the_root) {
    view_scene sc;
    accel_buffer *root = NULL, *v1 = NULL, *v2 = NULL, *v3 = NULL;
    if (view_scene_make(&sc)) {
        size_t aw = sc.align / 4;
        REQUIRE_OK(test_buffer_create(sc.dev, 8 * sc.align, ACCEL_MEMORY_HOST, &root));
        REQUIRE_OK(accel_buffer_view_create(root, sc.align, 6 * sc.align, &v1));
        REQUIRE_OK(accel_buffer_view_create(v1, 2 * sc.align, 3 * sc.align, &v2));   /* root offset 3 align */
        REQUIRE_OK(accel_buffer_view_create(v2, sc.align, sc.align, &v3));            /* root offset 4 align */
        accel_queue_fill(sc.q, v3, 0, sc.align, 33);
        accel_queue_fill(sc.q, v2, 0, 4, 22);
        REQUIRE_OK(view_run(&sc));
        view_check_words(root, 4 * aw, aw, 33, 0);
        CHECK_EQ_U64(test_buffer_u32(root, 3 * aw), 22);
        CHECK_EQ_U64(test_buffer_u32(root, 5 * aw), 0);
        CHECK_EQ_U64(test_buffer_u32(v1, 3 * aw), 33);
        /* the view's range is checked against its parent, not the root */
        accel_buffer* bad = (accel_buffer*)(uintptr_t)1;
        CHECK_RESULT(accel_buffer_view_create(v2, 2 * sc.align, 2 * sc.align, &bad), ACCEL_ERROR_INVALID_ARGUMENT);
        CHECK(bad == NULL);
        /* the root outlives every handle but the innermost view's */
        accel_buffer_destroy(v1);
        accel_buffer_destroy(v2);
        accel_buffer_destroy(root);
        accel_queue_fill(sc.q, v3, 0, 4, 44);
        REQUIRE_OK(view_run(&sc));
        CHECK_EQ_U64(test_buffer_u32(v3, 0), 44);
        CHECK_EQ_U64(test_buffer_u32(v3, 1), 33);
        accel_buffer_destroy(v3);
    }
    accel_device_destroy(sc.dev);
}

/* ==== lifetime ==== */
TEST(view_outlives_its_root_handle_and_frees_it_last) {
    test_alloc_state st;
    accel_device_desc desc;
    accel_device* dev = NULL;
    accel_queue* q = NULL;
    accel_signal* gate = NULL;
    accel_buffer *root = NULL, *view = NULL;
    accel_program* fill = NULL;
    long before;
    uint32_t fc[2] = { 5, 64 };
    test_alloc_init(&st);
    memset(&desc, 0, sizeof desc);
    desc.allocator = test_allocator(&st);
    REQUIRE_OK(test_device_create_desc(desc, &dev));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
    REQUIRE_OK(accel_signal_create(dev, 0, &gate));
    REQUIRE_OK(test_program_create(dev, TK_FILL_INDEX, &fill));
    REQUIRE_OK(test_buffer_create(dev, 4096, ACCEL_MEMORY_DEVICE, &root));
    accel_queue_wait(q, gate, 0);                     /* the same batch once: the queue keeps its capacity */
    accel_queue_exec(q, fill, &root, 1, fc, 2, accel_exec_1d(64, 16));
    REQUIRE_OK(accel_queue_finish(q, ACCEL_WAIT_FOREVER));
    accel_buffer_destroy(root);
    before = atomic_load(&st.outstanding);
    REQUIRE_OK(test_buffer_create(dev, 4096, ACCEL_MEMORY_DEVICE, &root));
    REQUIRE_OK(accel_buffer_view_create(root, 0, 256, &view));
    accel_buffer_destroy(root);                       /* the view keeps it */
    accel_queue_wait(q, gate, 1);
    accel_queue_exec(q, fill, &view, 1, fc, 2, accel_exec_1d(64, 16));
    REQUIRE_OK(accel_queue_submit(q));
    accel_buffer* keep = NULL;
    REQUIRE_OK(accel_buffer_view_create(view, 0, 8, &keep));
    accel_buffer_destroy(view);                       /* the parked batch and `keep` keep the root */
    CHECK_OK(accel_signal_set(gate, 1));
    CHECK_OK(accel_queue_finish(q, ACCEL_WAIT_FOREVER));
    CHECK_EQ_U64(test_buffer_u32(keep, 1), 6);
    accel_buffer_destroy(keep);                       /* the last reference: root and views are freed */
    CHECK_EQ_INT(atomic_load(&st.outstanding), before);
    /* a device destroyed with views and roots alive frees them all, views first */
    REQUIRE_OK(test_buffer_create(dev, 4096, ACCEL_MEMORY_HOST, &root));
    REQUIRE_OK(accel_buffer_view_create(root, 0, 256, &view));
    REQUIRE_OK(accel_buffer_view_create(view, 0, 128, &keep));
    accel_device_destroy(dev);
    CHECK_EQ_INT(atomic_load(&st.outstanding), 0);
}

/* A queue of device A copies from a view of device B's buffer (CPU devices share host memory); the
   view, its root and B are destroyed before the copy runs: the batch keeps what it needs. */
TEST(view_of_another_devices_buffer_outlives_that_device) {
    accel_device *a = NULL, *b = NULL;
    accel_queue* q = NULL;
    accel_signal* gate = NULL;
    accel_buffer *root = NULL, *view = NULL, *dst = NULL;
    uint32_t words[4] = { 11, 22, 33, 44 };
    if (!test_backend_is_cpu()) SKIP("buffers of one device used by another: CPU devices share host memory");
    REQUIRE_OK(test_device_create(&a));
    if (CHECK_OK(test_device_create(&b)) && CHECK_OK(accel_queue_create(a, ACCEL_QUEUE_COMPUTE, &q)) &&
        CHECK_OK(accel_signal_create(a, 0, &gate)) &&
        CHECK_OK(test_buffer_create(b, 64, ACCEL_MEMORY_HOST, &root)) &&
        CHECK_OK(accel_buffer_write(root, 16, words, sizeof words)) &&
        CHECK_OK(accel_buffer_view_create(root, 16, 16, &view)) &&
        CHECK_OK(test_buffer_create(a, 16, ACCEL_MEMORY_HOST, &dst))) {
        accel_queue_wait(q, gate, 1);
        accel_queue_copy(q, dst, 0, view, 4, 12);
        CHECK_OK(accel_queue_submit(q));
        accel_buffer_destroy(view);
        accel_buffer_destroy(root);
        accel_device_destroy(b);
        b = NULL;
        CHECK_OK(accel_signal_set(gate, 1));
        CHECK_OK(accel_queue_finish(q, ACCEL_WAIT_FOREVER));
        CHECK_EQ_U64(test_buffer_u32(dst, 0), 22);
        CHECK_EQ_U64(test_buffer_u32(dst, 2), 44);
    }
    accel_device_destroy(b);
    accel_device_destroy(a);
}

/* ==== refused views ==== */
TEST(view_out_of_range_and_misaligned_refused) {
    view_scene sc;
    accel_buffer *root = NULL, *v = NULL;
    if (view_scene_make(&sc)) {
        accel_device_info info;
        REQUIRE_OK(accel_device_info_get(sc.dev, &info));
        REQUIRE_OK(test_buffer_create(sc.dev, 4 * sc.align, ACCEL_MEMORY_DEVICE, &root));
        test_log_reset();
        CHECK_RESULT(accel_buffer_view_create(root, 0, 4 * sc.align + 1, &v), ACCEL_ERROR_INVALID_ARGUMENT);
        CHECK(v == NULL);
        CHECK(test_log_contains("accel_buffer_view_create"));
        CHECK_RESULT(accel_buffer_view_create(root, 4 * sc.align, 4, &v), ACCEL_ERROR_INVALID_ARGUMENT);
        CHECK_RESULT(accel_buffer_view_create(root, sc.align, 0, &v), ACCEL_ERROR_INVALID_ARGUMENT);
        CHECK_RESULT(accel_buffer_view_create(root, SIZE_MAX, 8, &v), ACCEL_ERROR_INVALID_ARGUMENT);
        CHECK_RESULT(accel_buffer_view_create(root, sc.align, SIZE_MAX - sc.align + 1, &v), ACCEL_ERROR_INVALID_ARGUMENT);
        CHECK_RESULT(accel_buffer_view_create(NULL, 0, 4, &v), ACCEL_ERROR_INVALID_ARGUMENT);
        CHECK_RESULT(accel_buffer_view_create(root, 0, 4, NULL), ACCEL_ERROR_INVALID_ARGUMENT);
        if (info.buffer_offset_alignment > 1) {
            accel_buffer* half = NULL;
            test_log_reset();
            CHECK_RESULT(accel_buffer_view_create(root, info.buffer_offset_alignment / 2, 4, &v), ACCEL_ERROR_INVALID_ARGUMENT);
            CHECK(test_log_contains("buffer_offset_alignment"));
            /* a view at an aligned offset, then one at half the alignment inside it: misaligned in the root */
            REQUIRE_OK(accel_buffer_view_create(root, info.buffer_offset_alignment, info.buffer_offset_alignment, &half));
            CHECK_RESULT(accel_buffer_view_create(half, info.buffer_offset_alignment / 2, 4, &v), ACCEL_ERROR_INVALID_ARGUMENT);
        } else {
            CHECK_OK(accel_buffer_view_create(root, 3, 5, &v));   /* the CPU takes any offset */
            CHECK_EQ_U64(accel_buffer_size(v), 5);
        }
    }
    accel_device_destroy(sc.dev);
}

/* ==== read_only wraps of const memory (CPU) ==== */
static const uint32_t view_table[64] = { 1, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 377, 610, 987 };

TEST(read_only_wrap_of_const_memory) {
    view_scene sc;
    accel_buffer *ro = NULL, *out = NULL, *rov = NULL, *bad = NULL;
    accel_program* copy = NULL;
    accel_buffer_desc d;
    if (!test_backend_is_cpu()) SKIP("host_ptr wraps are a CPU backend feature");
    if (view_scene_make(&sc)) {
        uint32_t n[1] = { 64 }, word = 9;
        memset(&d, 0, sizeof d);
        d.size = sizeof view_table;
        d.host_ptr = view_table;                   /* const memory, no cast */
        d.read_only = true;
        REQUIRE_OK(accel_buffer_create(sc.dev, &d, &ro));
        REQUIRE_OK(test_buffer_create(sc.dev, sizeof view_table, ACCEL_MEMORY_HOST, &out));
        REQUIRE_OK(test_program_create(sc.dev, TK_COPY_U32, &copy));
        accel_buffer* b2[2] = { out, ro };
        accel_queue_exec(sc.q, copy, b2, 2, n, 1, accel_exec_1d(64, 16));   /* reading it is fine */
        REQUIRE_OK(view_run(&sc));
        CHECK_EQ_U64(test_buffer_u32(out, 15), 987);
        CHECK(accel_buffer_map(ro) == (const void*)view_table);
        REQUIRE_OK(accel_buffer_view_create(ro, 16, 16, &rov));
        CHECK_EQ_U64(test_buffer_u32(rov, 1), 8);
        accel_queue_copy(sc.q, out, 0, rov, 0, 16);                        /* a source: fine */
        REQUIRE_OK(view_run(&sc));
        CHECK_EQ_U64(test_buffer_u32(out, 0), 5);
        /* every write into it is refused, through the view too, and nothing of the batch runs */
        test_log_reset();
        accel_queue_fill(sc.q, out, 0, 4, 77);
        accel_queue_fill(sc.q, rov, 0, 4, 0);
        CHECK_RESULT(accel_queue_submit(sc.q), ACCEL_ERROR_INVALID_ARGUMENT);
        CHECK(test_log_contains("read_only"));
        accel_queue_update(sc.q, ro, 0, &word, 4);
        CHECK_RESULT(accel_queue_submit(sc.q), ACCEL_ERROR_INVALID_ARGUMENT);
        accel_queue_copy(sc.q, ro, 0, out, 0, 4);
        CHECK_RESULT(accel_queue_submit(sc.q), ACCEL_ERROR_INVALID_ARGUMENT);
        CHECK_RESULT(accel_buffer_write(rov, 0, &word, 4), ACCEL_ERROR_INVALID_ARGUMENT);
        accel_queue_timestamp(sc.q, ro, 0);
        CHECK_RESULT(accel_queue_submit(sc.q), ACCEL_ERROR_INVALID_ARGUMENT);
        {   /* nor can a replay's patch make it (or a view of it) a copy's or fill's destination */
            accel_commands* list = NULL;
            REQUIRE_OK(accel_queue_record_begin(sc.q));
            accel_queue_copy(sc.q, out, 0, rov, 0, 8);
            accel_queue_fill(sc.q, out, 32, 8, 3);
            REQUIRE_OK(accel_queue_record_end(sc.q, &list));
            accel_patch p1 = { 0, 0, ro, 0 }, p2 = { 1, 0, rov, 0 }, p3 = { 0, 1, ro, 0 };
            accel_queue_replay(sc.q, list, &p1, 1);
            CHECK_RESULT(accel_queue_submit(sc.q), ACCEL_ERROR_INVALID_ARGUMENT);
            accel_queue_replay(sc.q, list, &p2, 1);
            CHECK_RESULT(accel_queue_submit(sc.q), ACCEL_ERROR_INVALID_ARGUMENT);
            accel_queue_replay(sc.q, list, &p3, 1);      /* as a source: fine */
            CHECK_OK(view_run(&sc));
            CHECK_EQ_U64(test_buffer_u32(out, 0), 1);
            CHECK_EQ_U64(test_buffer_u32(out, 8), 3);
            accel_commands_destroy(list);
        }
        CHECK_EQ_U64(view_table[4], 5);
        CHECK_EQ_U64(view_table[0], 1);
        /* read_only needs memory to wrap */
        d.host_ptr = NULL;
        CHECK_RESULT(accel_buffer_create(sc.dev, &d, &bad), ACCEL_ERROR_INVALID_ARGUMENT);
    }
    accel_device_destroy(sc.dev);
}

/* ==== views in recorded lists and in patches ==== */
/* A list recorded on views (an exec binding one, a fill and a copy at offsets within them), replayed
   as recorded, then with every buffer patched to other views and roots: offsets stay where they were
   recorded within the buffer given (a view's from its start), on every backend. */
TEST(view_lists_and_patches_keep_offsets_within_the_view) {
    view_scene sc;
    accel_buffer *r = NULL, *va = NULL, *vb = NULL, *o = NULL, *vo = NULL, *vvo = NULL, *fit = NULL, *shy = NULL;
    accel_program* fill = NULL;
    accel_commands* list = NULL;
    if (view_scene_make(&sc)) {
        size_t aw = sc.align / 4;
        uint32_t n = 64, fc[2] = { 100, n };
        REQUIRE_OK(test_buffer_create(sc.dev, 8 * sc.align, ACCEL_MEMORY_DEVICE, &r));
        REQUIRE_OK(accel_buffer_view_create(r, sc.align, 256, &va));          /* r words aw .. aw+63 */
        REQUIRE_OK(accel_buffer_view_create(r, 3 * sc.align, 256, &vb));      /* r words 3aw .. 3aw+63 */
        REQUIRE_OK(test_buffer_create(sc.dev, 4 * sc.align, ACCEL_MEMORY_DEVICE, &o));
        REQUIRE_OK(accel_buffer_view_create(o, sc.align, 2 * sc.align, &vo));  /* o words aw .. 3aw */
        REQUIRE_OK(accel_buffer_view_create(vo, sc.align, 256, &vvo));         /* o words 2aw .. 2aw+63 */
        REQUIRE_OK(test_buffer_create(sc.dev, 96, ACCEL_MEMORY_DEVICE, &fit));  /* the fill's range exactly */
        REQUIRE_OK(test_buffer_create(sc.dev, 92, ACCEL_MEMORY_DEVICE, &shy));  /* 4 bytes short */
        REQUIRE_OK(test_program_create(sc.dev, TK_FILL_INDEX, &fill));
        REQUIRE_OK(accel_queue_record_begin(sc.q));
        accel_queue_exec(sc.q, fill, &va, 1, fc, 2, accel_exec_1d(n, 64));   /* 0: va[i] = i + 100 */
        accel_queue_fill(sc.q, va, 64, 32, 0x5A5Au);                          /* 1: va words 16..23 */
        accel_queue_copy(sc.q, vb, 16, va, 0, 64);                             /* 2: vb words 4..19 = va 0..15 */
        REQUIRE_OK(accel_queue_record_end(sc.q, &list));
        accel_queue_replay(sc.q, list, NULL, 0);
        REQUIRE_OK(view_run(&sc));
        view_check_words(r, aw, 16, 100, 1);
        view_check_words(r, aw + 16, 8, 0x5A5Au, 0);
        view_check_words(r, aw + 24, 40, 124, 1);
        view_check_words(r, 3 * aw, 4, 0, 0);
        view_check_words(r, 3 * aw + 4, 16, 100, 1);
        view_check_words(r, 3 * aw + 20, 8, 0, 0);
        /* every buffer patched: the exec to a view of a view, the fill to a root, the copy's dst to a view */
        accel_patch p[5] = { { 0, 0, vvo, 0 }, { 0, 0, NULL, 200 }, { 1, 0, o, 0 }, { 1, 0, NULL, 0x77u }, { 2, 0, vo, 0 } };
        accel_queue_replay(sc.q, list, p, 5);
        REQUIRE_OK(view_run(&sc));
        view_check_words(o, 2 * aw, 64, 200, 1);        /* the exec through vvo */
        view_check_words(o, 16, 8, 0x77u, 0);           /* the fill: words 16..23 of the root o */
        view_check_words(o, 0, 16, 0, 0);
        view_check_words(o, aw + 4, 16, 100, 1);        /* the copy: vo words 4..19 from va */
        view_check_words(o, aw, 4, 0, 0);
        view_check_words(r, 3 * aw + 4, 16, 100, 1);    /* vb untouched by the patched copy */
        /* a patch buffer that holds the recorded range exactly, and one 4 bytes short */
        accel_patch f1 = { 1, 0, fit, 0 };
        accel_queue_replay(sc.q, list, &f1, 1);
        REQUIRE_OK(view_run(&sc));
        view_check_words(fit, 16, 8, 0x5A5Au, 0);
        view_check_words(fit, 0, 16, 0, 0);
        accel_patch f2 = { 1, 0, shy, 0 };
        accel_queue_replay(sc.q, list, &f2, 1);
        CHECK_RESULT(view_run(&sc), ACCEL_ERROR_INVALID_ARGUMENT);
        /* a patched copy that would overlap itself through views of one root: refused, nothing runs */
        accel_patch ov[2] = { { 2, 0, va, 0 }, { 2, 1, va, 0 } };   /* va + 16 <- va + 0, 64 bytes */
        test_buffer_set_u32(fit, 24, 1);
        accel_queue_fill(sc.q, fit, 0, 4, 9);
        accel_queue_replay(sc.q, list, ov, 2);
        CHECK_RESULT(view_run(&sc), ACCEL_ERROR_INVALID_ARGUMENT);
        CHECK_EQ_U64(test_buffer_u32(fit, 0), 1);
        accel_patch ov2[2] = { { 2, 0, r, 0 }, { 2, 1, vb, 0 } };   /* r + 16 <- r + 3 align: apart, fine */
        accel_queue_replay(sc.q, list, ov2, 2);
        CHECK_OK(view_run(&sc));
        view_check_words(r, 4, 4, 0, 0);                /* vb words 0..15 went to r words 4..19 */
        view_check_words(r, 8, 12, 100, 1);
    }
    accel_commands_destroy(list);
    accel_device_destroy(sc.dev);
}

/* An exec of global size 0 is a no-op, but a list keeps it: the indices of the commands after it (the
   patches' addresses) are as recorded, its own patches are checked, and it makes the list one with
   execs (a COPY queue refuses it). */
TEST(view_zero_size_exec_keeps_its_index_in_a_list) {
    view_scene sc;
    accel_buffer *a = NULL, *f = NULL;
    accel_program* fill = NULL;
    accel_commands* list = NULL;
    accel_queue* cq = NULL;
    if (view_scene_make(&sc)) {
        uint32_t fc[2] = { 5, 64 };
        REQUIRE_OK(test_buffer_create(sc.dev, 256, ACCEL_MEMORY_DEVICE, &a));
        REQUIRE_OK(test_buffer_create(sc.dev, 256, ACCEL_MEMORY_DEVICE, &f));
        REQUIRE_OK(test_program_create(sc.dev, TK_FILL_INDEX, &fill));
        REQUIRE_OK(accel_queue_create(sc.dev, ACCEL_QUEUE_COPY, &cq));
        REQUIRE_OK(accel_queue_record_begin(sc.q));
        accel_queue_exec(sc.q, fill, &a, 1, fc, 2, accel_exec_1d(0, 64));   /* 0: no work */
        accel_queue_fill(sc.q, f, 0, 16, 1);                                 /* 1 */
        REQUIRE_OK(accel_queue_record_end(sc.q, &list));
        accel_patch p[2] = { { 1, 0, NULL, 0x77u }, { 0, 0, NULL, 0x55u } };
        accel_queue_replay(sc.q, list, p, 2);
        REQUIRE_OK(view_run(&sc));
        view_check_words(f, 0, 4, 0x77u, 0);
        view_check_words(a, 0, 64, 0, 0);               /* the exec did nothing */
        accel_patch bad = { 0, 2, NULL, 1 };             /* constant 2 of a 2-constant exec */
        accel_queue_replay(sc.q, list, &bad, 1);
        CHECK_RESULT(view_run(&sc), ACCEL_ERROR_INVALID_ARGUMENT);
        accel_queue_replay(cq, list, NULL, 0);
        CHECK_RESULT(accel_queue_submit(cq), ACCEL_ERROR_INVALID_ARGUMENT);
    }
    accel_commands_destroy(list);
    accel_device_destroy(sc.dev);
}

/* A fill through a view at an odd offset of its root (the CPU backend's views may start at any byte):
   the CPU backend fills those bytes; a backend that fills only at multiples of 4 in a root (the GPU
   backends: cuMemsetD32Async, vkCmdFillBuffer) refuses it at submit, also as a replay's patched fill.
   That backend is a copy of the CPU backend's table with fills_any_byte cleared. */
#if defined(ACCEL_I_CPU_MAX_BUFFERS)
static void odd_view_fill(const accel_backend* be, accel_result want) {
    accel_device_desc desc;
    accel_device* dev = NULL;
    accel_queue* q = NULL;
    accel_buffer *root = NULL, *odd = NULL, *even = NULL;
    accel_commands* list = NULL;
    memset(&desc, 0, sizeof desc);
    desc.backend = be;
    desc.logger = test_logger();
    REQUIRE_OK(accel_device_create(&desc, &dev));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
    REQUIRE_OK(test_buffer_create(dev, 64, ACCEL_MEMORY_HOST, &root));
    REQUIRE_OK(test_buffer_set_u32(root, 16, 0));
    REQUIRE_OK(accel_buffer_view_create(root, 2, 32, &odd));
    REQUIRE_OK(accel_buffer_view_create(root, 32, 32, &even));
    accel_queue_fill(q, odd, 4, 8, 0x11111111u);
    CHECK_RESULT(accel_queue_submit(q), want);
    REQUIRE_OK(accel_queue_finish(q, ACCEL_WAIT_FOREVER));
    if (want == ACCEL_OK) {
        const unsigned char* m = (const unsigned char*)accel_buffer_map(root);
        CHECK_EQ_U64(m[5], 0); CHECK_EQ_U64(m[6], 0x11); CHECK_EQ_U64(m[13], 0x11); CHECK_EQ_U64(m[14], 0);
    } else {
        CHECK_EQ_U64(test_buffer_u32(root, 1), 0);
    }
    REQUIRE_OK(accel_queue_record_begin(q));
    accel_queue_fill(q, even, 4, 8, 0x22222222u);
    REQUIRE_OK(accel_queue_record_end(q, &list));
    accel_queue_replay(q, list, (accel_patch[]){ { 0, 0, odd, 0 } }, 1);
    CHECK_RESULT(accel_queue_submit(q), want);
    REQUIRE_OK(accel_queue_finish(q, ACCEL_WAIT_FOREVER));
    accel_commands_destroy(list);
    accel_device_destroy(dev);
}
#endif
TEST(view_fill_at_an_odd_root_offset) {
#if defined(ACCEL_I_CPU_MAX_BUFFERS)
    static accel_backend words_only;
    if (!test_backend_is_cpu()) SKIP("the CPU backend's views start at any byte; checked through a copy of its table");
    words_only = *accel_cpu_backend();
    words_only.fills_any_byte = false;
    odd_view_fill(accel_cpu_backend(), ACCEL_OK);
    odd_view_fill(&words_only, ACCEL_ERROR_INVALID_ARGUMENT);
    {   /* a timestamp's 8-byte alignment holds in the root too */
        accel_device* dev = NULL;
        accel_queue* q = NULL;
        accel_buffer *root = NULL, *at4 = NULL;
        REQUIRE_OK(test_device_create(&dev));
        REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
        REQUIRE_OK(test_buffer_create(dev, 64, ACCEL_MEMORY_HOST, &root));
        REQUIRE_OK(accel_buffer_view_create(root, 4, 32, &at4));
        accel_queue_timestamp(q, at4, 0);
        CHECK_RESULT(accel_queue_submit(q), ACCEL_ERROR_INVALID_ARGUMENT);
        accel_buffer_destroy(at4);
        REQUIRE_OK(accel_buffer_view_create(root, 8, 32, &at4));
        accel_queue_timestamp(q, at4, 8);
        CHECK_RESULT(accel_queue_finish(q, ACCEL_WAIT_FOREVER), ACCEL_OK);
        CHECK(test_buffer_u32(root, 4) != 0 || test_buffer_u32(root, 5) != 0);
        accel_device_destroy(dev);
    }
#else
    SKIP("accel.h's implementation is compiled elsewhere in this configuration");
#endif
}

int main(int argc, char** argv) {
    test_begin(argc, argv);
    RUN(view_exec_bindings_see_the_views_range);
    RUN(view_every_command_and_host_call);
    RUN(view_copy_between_overlapping_views_refused);
    RUN(view_of_a_view_is_a_view_of_the_root);
    RUN(view_outlives_its_root_handle_and_frees_it_last);
    RUN(view_of_another_devices_buffer_outlives_that_device);
    RUN(view_out_of_range_and_misaligned_refused);
    RUN(read_only_wrap_of_const_memory);
    RUN(view_lists_and_patches_keep_offsets_within_the_view);
    RUN(view_zero_size_exec_keeps_its_index_in_a_list);
    RUN(view_fill_at_an_odd_root_offset);
    return test_end();
}

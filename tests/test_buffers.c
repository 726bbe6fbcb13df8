/* tests/test_buffers.c — buffers: create, sizes, zero contents, map, read/write with bounds,
   host_ptr wrapping, lifetime while submitted work uses them. */
#define ACCEL_IMPLEMENTATION
#include "accel.h"
#include "test.h"
#include "kernels.h"

TEST(buffer_create_sizes_and_zero_contents) {
    accel_device* dev;
    REQUIRE_OK(test_device_create(&dev));
    static const size_t sizes[] = { 1, 3, 4, 4096, 65537, (size_t)1 << 20 };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        for (int m = 0; m < 2; m++) {
            accel_buffer* b = NULL;
            REQUIRE_OK(test_buffer_create(dev, sizes[i], m ? ACCEL_MEMORY_HOST : ACCEL_MEMORY_DEVICE, &b));
            CHECK_EQ_U64(accel_buffer_size(b), sizes[i]);
            unsigned char* got = (unsigned char*)malloc(sizes[i]);
            REQUIRE(got != NULL);
            memset(got, 0xAA, sizes[i]);
            CHECK_OK(accel_buffer_read(b, 0, got, sizes[i]));
            size_t nonzero = 0;
            for (size_t k = 0; k < sizes[i]; k++) nonzero += got[k] != 0;
            CHECK_EQ_U64(nonzero, 0);
            free(got);
            accel_buffer_destroy(b);
        }
    }
    accel_device_destroy(dev);
}

/* A new buffer takes memory a destroyed one wrote (a GPU's memory blocks reuse ranges): every byte of it
   reads zero, the last 1-3 of a size that is not a multiple of 4 too. Vulkan's zero fill without a
   mapping (vkCmdFillBuffer) fills whole words only: before the fix those bytes kept the old ones. */
TEST(buffer_create_reused_memory_reads_zero) {
    static const size_t sizes[] = { 1, 2, 3, 4, 5, 6, 7, 4093 };
    accel_device* dev;
    REQUIRE_OK(test_device_create(&dev));
    for (int rep = 0; rep < 3; rep++)
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
            test_fresh_buffer_reads_zero(dev, sizes[i], ACCEL_MEMORY_DEVICE, 0);
            test_fresh_buffer_reads_zero(dev, sizes[i], ACCEL_MEMORY_HOST, 0);
        }
    accel_device_destroy(dev);
}

TEST(buffer_create_bad_arguments) {
    accel_device* dev;
    accel_buffer* b = NULL;
    REQUIRE_OK(test_device_create(&dev));
    accel_buffer_desc d;
    memset(&d, 0, sizeof d);
    CHECK_RESULT(accel_buffer_create(dev, &d, &b), ACCEL_ERROR_INVALID_ARGUMENT);     /* size 0 */
    d.size = 16;
    CHECK_RESULT(accel_buffer_create(NULL, &d, &b), ACCEL_ERROR_INVALID_ARGUMENT);
    CHECK_RESULT(accel_buffer_create(dev, NULL, &b), ACCEL_ERROR_INVALID_ARGUMENT);
    CHECK_RESULT(accel_buffer_create(dev, &d, NULL), ACCEL_ERROR_INVALID_ARGUMENT);
    d.memory = (accel_memory)5;
    CHECK_RESULT(accel_buffer_create(dev, &d, &b), ACCEL_ERROR_INVALID_ARGUMENT);
    CHECK(test_log_count(ACCEL_LOG_ERROR) > 0);                                     /* and it said why */
    CHECK_EQ_U64(accel_buffer_size(NULL), 0);
    CHECK(accel_buffer_map(NULL) == NULL);
    accel_buffer_destroy(NULL);
    accel_device_destroy(dev);
}

/* Huge sizes: out of memory, never a wrapped-around small allocation. The allocator refuses anything
   above 256 MiB so the test does not depend on what malloc does with such sizes. */
TEST(buffer_create_huge_is_out_of_memory) {
    test_alloc_state st;
    test_alloc_init(&st);
    st.refuse_above = (size_t)256 << 20;
    accel_device_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.allocator = test_allocator(&st);
    accel_device* dev;
    REQUIRE_OK(test_device_create_desc(desc, &dev));
    if (!test_backend_is_cpu()) {
        accel_device_destroy(dev);
        SKIP("device memory does not go through the host allocator");
    }
    static const size_t huge[] = { SIZE_MAX, SIZE_MAX - 4095, SIZE_MAX / 2 + 1, (size_t)512 << 20 };
    for (size_t i = 0; i < sizeof huge / sizeof huge[0]; i++) {
        accel_buffer* b = NULL;
        long before = atomic_load(&st.outstanding);
        accel_result r = accel_buffer_create(dev, &(accel_buffer_desc){ .size = huge[i] }, &b);
        if (!CHECK_RESULT(r, ACCEL_ERROR_OUT_OF_MEMORY)) fprintf(stderr, "    size %zu\n", huge[i]);
        CHECK_EQ_INT(atomic_load(&st.outstanding), before);           /* nothing leaked */
        if (r == ACCEL_OK) accel_buffer_destroy(b);
    }
    accel_device_destroy(dev);
    CHECK_EQ_INT(atomic_load(&st.outstanding), 0);
}

TEST(buffer_read_write_bounds) {
    accel_device* dev;
    accel_buffer* b;
    REQUIRE_OK(test_device_create(&dev));
    REQUIRE_OK(test_buffer_create(dev, 64, ACCEL_MEMORY_DEVICE, &b));
    unsigned char src[64], got[64];
    for (int i = 0; i < 64; i++) src[i] = (unsigned char)(200 - i);
    CHECK_OK(accel_buffer_write(b, 0, src, 64));
    CHECK_OK(accel_buffer_write(b, 63, src, 1));
    CHECK_OK(accel_buffer_write(b, 10, src, 5));
    const accel_result E = ACCEL_ERROR_INVALID_ARGUMENT;
    CHECK_RESULT(accel_buffer_write(b, 0, src, 0), E);
    CHECK_RESULT(accel_buffer_write(b, 0, src, 65), E);
    CHECK_RESULT(accel_buffer_write(b, 64, src, 1), E);
    CHECK_RESULT(accel_buffer_write(b, 60, src, 5), E);
    CHECK_RESULT(accel_buffer_write(b, SIZE_MAX, src, 1), E);
    CHECK_RESULT(accel_buffer_write(b, 1, src, SIZE_MAX), E);
    CHECK_RESULT(accel_buffer_write(b, SIZE_MAX - 3, src, 8), E);
    CHECK_RESULT(accel_buffer_write(b, 0, NULL, 4), E);
    CHECK_RESULT(accel_buffer_write(NULL, 0, src, 4), E);
    CHECK_RESULT(accel_buffer_read(b, 0, got, 0), E);
    CHECK_RESULT(accel_buffer_read(b, 0, got, 65), E);
    CHECK_RESULT(accel_buffer_read(b, 64, got, 1), E);
    CHECK_RESULT(accel_buffer_read(b, SIZE_MAX, got, 1), E);
    CHECK_RESULT(accel_buffer_read(b, 1, got, SIZE_MAX), E);
    CHECK_RESULT(accel_buffer_read(b, 0, NULL, 4), E);
    CHECK_RESULT(accel_buffer_read(NULL, 0, got, 4), E);
    /* the failed writes changed nothing */
    memset(got, 0, sizeof got);
    CHECK_OK(accel_buffer_read(b, 0, got, 64));
    for (int i = 0; i < 64; i++) {
        int want = i == 63 ? src[0] : (i >= 10 && i < 15) ? src[i - 10] : src[i];
        CHECK_EQ_INT(got[i], want);
    }
    unsigned char part[3];
    CHECK_OK(accel_buffer_read(b, 61, part, 3));
    CHECK_EQ_INT(part[0], src[61]);
    CHECK_EQ_INT(part[2], src[0]);
    accel_device_destroy(dev);
}

TEST(buffer_map_device_and_host_memory) {
    accel_device* dev;
    accel_device_info info;
    REQUIRE_OK(test_device_create(&dev));
    REQUIRE_OK(accel_device_info_get(dev, &info));
    for (int m = 0; m < 2; m++) {
        accel_buffer* b;
        REQUIRE_OK(test_buffer_create(dev, 256, m ? ACCEL_MEMORY_HOST : ACCEL_MEMORY_DEVICE, &b));
        uint32_t* p = (uint32_t*)accel_buffer_map(b);
        if (m == 0 && !info.host_mapped_device_memory) {
            CHECK(p == NULL);
            continue;
        }
        REQUIRE(p != NULL);
        CHECK(accel_buffer_map(b) == (void*)p);          /* stable */
        for (int i = 0; i < 64; i++) CHECK_EQ_U64(p[i], 0);
        for (int i = 0; i < 64; i++) p[i] = (uint32_t)i * 7u;
        uint32_t got[64];
        CHECK_OK(accel_buffer_read(b, 0, got, sizeof got));
        for (int i = 0; i < 64; i++) CHECK_EQ_U64(got[i], (uint32_t)i * 7u);
        uint32_t w = 0x12345678u;
        CHECK_OK(accel_buffer_write(b, 40, &w, 4));
        CHECK_EQ_U64(p[10], 0x12345678u);
        /* queue writes show through the map after a wait */
        accel_queue* q;
        accel_signal* s;
        REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
        REQUIRE_OK(accel_signal_create(dev, 0, &s));
        accel_queue_fill(q, b, 128, 128, 0xABCDEF01u);
        accel_queue_signal(q, s, 1);
        CHECK_OK(accel_queue_submit(q));
        CHECK_OK(accel_signal_wait(s, 1, ACCEL_WAIT_FOREVER));
        CHECK_EQ_U64(p[32], 0xABCDEF01u);
        CHECK_EQ_U64(p[63], 0xABCDEF01u);
        CHECK_EQ_U64(p[31], 31u * 7u);
        accel_queue_destroy(q);
        accel_signal_destroy(s);
        accel_buffer_destroy(b);
    }
    if (test_backend_is_cpu()) CHECK(info.host_mapped_device_memory);
    accel_device_destroy(dev);
}

TEST(buffer_wraps_host_ptr) {
    accel_device* dev;
    REQUIRE_OK(test_device_create(&dev));
    uint32_t mem[64];
    for (int i = 0; i < 64; i++) mem[i] = 1000u + (uint32_t)i;
    accel_buffer* b = NULL;
    accel_buffer_desc d;
    memset(&d, 0, sizeof d);
    d.size = sizeof mem;
    d.host_ptr = mem;
    accel_result r = accel_buffer_create(dev, &d, &b);
    if (!test_backend_is_cpu()) {
        CHECK_RESULT(r, ACCEL_ERROR_UNSUPPORTED);
        accel_device_destroy(dev);
        return;
    }
    REQUIRE_OK(r);
    CHECK_EQ_U64(accel_buffer_size(b), sizeof mem);
    CHECK(accel_buffer_map(b) == (void*)mem);                 /* no copy */
    CHECK_EQ_U64(test_buffer_u32(b, 5), 1005);                /* not zeroed */
    uint32_t w = 7;
    CHECK_OK(accel_buffer_write(b, 8, &w, 4));
    CHECK_EQ_U64(mem[2], 7);
    accel_queue* q;
    accel_program* p;
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
    REQUIRE_OK(test_program_create(dev, TK_ADD_ONE, &p));
    uint32_t n = 32;
    accel_queue_exec(q, p, &b, 1, &n, 1, accel_exec_1d(32, 8));
    accel_queue_fill(q, b, 160, 16, 0x55);
    CHECK_OK(accel_queue_finish(q, ACCEL_WAIT_FOREVER));
    CHECK_EQ_U64(mem[0], 1001);
    CHECK_EQ_U64(mem[2], 8);
    CHECK_EQ_U64(mem[31], 1032);
    CHECK_EQ_U64(mem[32], 1032);                              /* past n: untouched */
    CHECK_EQ_U64(mem[40], 0x55);
    CHECK_EQ_U64(mem[44], 1044);
    accel_buffer_destroy(b);                                   /* must not free the caller's memory */
    CHECK_EQ_U64(mem[1], 1002);
    /* a wrapped buffer the device outlives: released with the device, memory untouched */
    uint32_t* heap = (uint32_t*)malloc(64);
    REQUIRE(heap != NULL);
    d.size = 64;
    d.host_ptr = heap;
    CHECK_OK(accel_buffer_create(dev, &d, &b));
    accel_device_destroy(dev);
    free(heap);                                                /* ours to free (ASan: no double free) */
}

/* Destroying a buffer that submitted work still uses: the queue waits on a host signal, then writes the
   buffer and copies it into a second one; destroy the first; set the signal; the copy is right. */
TEST(buffer_destroyed_while_in_use) {
    accel_device* dev;
    accel_queue* q;
    accel_program* p;
    accel_buffer *tmp, *src, *out;
    accel_signal *gate, *done;
    enum { N = 4096 };
    REQUIRE_OK(test_device_create(&dev));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
    REQUIRE_OK(test_program_create(dev, TK_FILL_INDEX, &p));
    REQUIRE_OK(test_buffer_create(dev, N * 4, ACCEL_MEMORY_DEVICE, &tmp));
    REQUIRE_OK(test_buffer_create(dev, N * 4, ACCEL_MEMORY_DEVICE, &src));
    REQUIRE_OK(test_buffer_create(dev, N * 4, ACCEL_MEMORY_HOST, &out));
    REQUIRE_OK(accel_signal_create(dev, 0, &gate));
    REQUIRE_OK(accel_signal_create(dev, 0, &done));
    uint32_t k[2] = { 77, N };
    REQUIRE_OK(test_buffer_set_u32(src, N, 0x0F0F0F0Fu));
    accel_queue_wait(q, gate, 1);
    accel_queue_exec(q, p, &tmp, 1, k, 2, accel_exec_1d(N, 64));
    accel_queue_copy(q, out, 0, tmp, 0, N * 2);
    accel_queue_copy(q, out, N * 2, src, N * 2, N * 2);
    accel_queue_signal(q, done, 1);
    CHECK_OK(accel_queue_submit(q));
    accel_buffer_destroy(tmp);
    accel_buffer_destroy(src);
    CHECK_OK(accel_signal_set(gate, 1));
    CHECK_OK(accel_signal_wait(done, 1, ACCEL_WAIT_FOREVER));
    static uint32_t got[N];
    REQUIRE_OK(accel_buffer_read(out, 0, got, sizeof got));
    int bad = 0;
    for (uint32_t i = 0; i < N; i++) bad += got[i] != (i < N / 2 ? i + 77u : 0x0F0F0F0Fu);
    CHECK_EQ_INT(bad, 0);
    accel_device_destroy(dev);
}

/* Buffers may be created and destroyed with a queue running on others. */
/* accel_queue_fill at sizes around the CPU backend's 64-byte stores and 4 KiB copies (and a byte
   repeated, which is a memset there), at offsets that are not 64-aligned: every word filled holds the
   pattern, the bytes around it keep the buffer's earlier contents. */
TEST(fill_sizes_offsets_and_patterns) {
    static const size_t sizes[] = { 4, 60, 64, 68, 4092, 4096, 4100, 12296, (1u << 20) + 4 };
    static const size_t offsets[] = { 0, 4, 60 };
    static const uint32_t patterns[] = { 0x12345678u, 0xababababu, 0u };
    const size_t total = (1u << 20) + 256;
    accel_device* dev;
    accel_queue* q;
    accel_buffer* b;
    unsigned char* host = (unsigned char*)malloc(total);
    REQUIRE(host != NULL);
    REQUIRE_OK(test_device_create(&dev));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
    REQUIRE_OK(accel_buffer_create(dev, &(accel_buffer_desc){ .size = total }, &b));
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
        for (size_t oi = 0; oi < sizeof offsets / sizeof offsets[0]; oi++)
            for (size_t pi = 0; pi < sizeof patterns / sizeof patterns[0]; pi++) {
                size_t off = offsets[oi], size = sizes[si], bad = SIZE_MAX;
                accel_queue_fill(q, b, 0, total, 0x5a5a5a5au);
                accel_queue_fill(q, b, off, size, patterns[pi]);
                REQUIRE_OK(accel_queue_finish(q, ACCEL_WAIT_FOREVER));
                REQUIRE_OK(accel_buffer_read(b, 0, host, total));
                for (size_t i = 0; i < total && bad == SIZE_MAX; i += 4) {
                    uint32_t w, want = i >= off && i < off + size ? patterns[pi] : 0x5a5a5a5au;
                    memcpy(&w, host + i, 4);
                    if (w != want) bad = i;
                }
                if (bad != SIZE_MAX) {
                    CHECK_EQ_U64(bad, SIZE_MAX);
                    fprintf(stderr, "    fill of %zu bytes at %zu with 0x%08x: byte %zu wrong\n", size, off,
                            (unsigned)patterns[pi], bad);
                }
            }
    accel_buffer_destroy(b);
    accel_queue_destroy(q);
    accel_device_destroy(dev);
    free(host);
}

TEST(buffer_many_create_destroy) {
    accel_device* dev;
    REQUIRE_OK(test_device_create(&dev));
    accel_buffer* live[16] = { 0 };
    for (int i = 0; i < 400; i++) {
        int slot = (i * 7) % 16;
        accel_buffer_destroy(live[slot]);
        live[slot] = NULL;
        REQUIRE_OK(test_buffer_create(dev, (size_t)(i % 97 + 1) * 8, (accel_memory)(i & 1), &live[slot]));
        CHECK_EQ_U64(accel_buffer_size(live[slot]), (size_t)(i % 97 + 1) * 8);
    }
    for (int i = 0; i < 8; i++) accel_buffer_destroy(live[i]);
    accel_device_destroy(dev);                                 /* the other 8 go with the device */
}

int main(int argc, char** argv) {
    test_begin(argc, argv);
    RUN(buffer_create_sizes_and_zero_contents);
    RUN(buffer_create_reused_memory_reads_zero);
    RUN(buffer_create_bad_arguments);
    RUN(buffer_create_huge_is_out_of_memory);
    RUN(buffer_read_write_bounds);
    RUN(buffer_map_device_and_host_memory);
    RUN(buffer_wraps_host_ptr);
    RUN(buffer_destroyed_while_in_use);
    RUN(fill_sizes_offsets_and_patterns);
    RUN(buffer_many_create_destroy);
    return test_end();
}

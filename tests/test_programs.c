/* tests/test_programs.c — programs and devices: formats, limits, device info, backends,
   program lifetime while in use. */
#define ACCEL_IMPLEMENTATION
#include "accel.h"
#include "test.h"
#include "kernels.h"
#include "spirv_edit.h"

TEST(device_info_is_sane) {
    accel_device* dev;
    accel_device_info info;
    REQUIRE_OK(test_device_create(&dev));
    memset(&info, 0xCC, sizeof info);
    REQUIRE_OK(accel_device_info_get(dev, &info));
    CHECK(info.backend != NULL);
    CHECK_EQ_STR(info.backend, accel_backend_name(test_g.backend));
    CHECK(memchr(info.name, 0, sizeof info.name) != NULL);       /* NUL-terminated */
    CHECK(info.name[0] != 0);
    for (int i = 0; i < 3; i++) {
        CHECK(info.max_group_size[i] >= 1);
        CHECK(info.max_group_count[i] >= 1);
    }
    CHECK(info.max_group_size[0] >= 64);
    CHECK(info.max_group_invocations >= 64);
    CHECK(info.max_group_count[0] >= 65535);
    CHECK(info.max_buffers >= 4);
    CHECK(info.max_constants >= 4);
    CHECK(info.formats != 0);
    CHECK((info.formats & ~0x1Fu) == 0);
    if (test_backend_is_cpu()) {
        CHECK_EQ_STR(info.backend, "cpu");
        CHECK_EQ_INT(info.type, ACCEL_DEVICE_CPU);
        CHECK(info.formats & ACCEL_FORMAT_CPU);
        CHECK(info.host_mapped_device_memory);
        CHECK_EQ_INT(info.compute_capability, 0);
    }
    CHECK_RESULT(accel_device_info_get(NULL, &info), ACCEL_ERROR_INVALID_ARGUMENT);
    CHECK_RESULT(accel_device_info_get(dev, NULL), ACCEL_ERROR_INVALID_ARGUMENT);
    accel_device_destroy(dev);
}

TEST(cpu_backend_basics) {
    const accel_backend* cpu = accel_cpu_backend();
    REQUIRE(cpu != NULL);
    CHECK(accel_cpu_backend() == cpu);
    CHECK_EQ_STR(accel_backend_name(cpu), "cpu");
    CHECK(accel_backend_name(NULL) == NULL);
    uint32_t count = 0;
    CHECK_OK(accel_backend_device_count(cpu, &count));
    CHECK_EQ_INT(count, 1);
    CHECK_RESULT(accel_backend_device_count(NULL, &count), ACCEL_ERROR_INVALID_ARGUMENT);
    CHECK_RESULT(accel_backend_device_count(cpu, NULL), ACCEL_ERROR_INVALID_ARGUMENT);
    /* NULL desc: defaults, the CPU backend */
    accel_device* dev = NULL;
    REQUIRE_OK(accel_device_create(NULL, &dev));
    accel_device_info info;
    CHECK_OK(accel_device_info_get(dev, &info));
    CHECK_EQ_STR(info.backend, "cpu");
    accel_device_destroy(dev);
    accel_device_destroy(NULL);
}

TEST(device_cpu_threads_setting) {
    if (!test_backend_is_cpu()) SKIP("CPU backend only");
    static const uint32_t counts[] = { 1, 2, 5 };
    for (size_t i = 0; i < 3; i++) {
        accel_device* dev;
        accel_device_desc d;
        memset(&d, 0, sizeof d);
        d.cpu_threads = counts[i];
        REQUIRE_OK(test_device_create_desc(d, &dev));
        accel_queue* q;
        accel_program* p;
        accel_buffer* b;
        REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
        REQUIRE_OK(test_program_create(dev, TK_PROBE, &p));
        REQUIRE_OK(test_buffer_create(dev, (16 + 64) * 4, ACCEL_MEMORY_HOST, &b));
        uint32_t c0 = 1;
        accel_queue_exec(q, p, &b, 1, &c0, 1, accel_exec_1d(64, 1));
        CHECK_OK(accel_queue_finish(q, ACCEL_WAIT_FOREVER));
        uint32_t got[16 + 64];
        CHECK_OK(accel_buffer_read(b, 0, got, sizeof got));
#ifdef ACCEL_NO_THREADS
        uint32_t lanes = 1;
#else
        uint32_t lanes = counts[i];
#endif
        for (int g = 0; g < 64; g++) CHECK(got[16 + g] >= 1 && got[16 + g] <= lanes);
        accel_device_destroy(dev);
    }
}

TEST(program_formats) {
    accel_device* dev;
    accel_program* p = NULL;
    accel_device_info info;
    REQUIRE_OK(test_device_create(&dev));
    REQUIRE_OK(accel_device_info_get(dev, &info));
    /* all formats at once: the device picks its own */
    accel_program_desc full = test_kernel_desc(TK_FILL_INDEX);
    CHECK_OK(accel_program_create(dev, &full, &p));
    accel_program_destroy(p);
    p = NULL;
    if (test_backend_is_cpu()) {
        static const uint32_t fake_spirv[5] = { 0x07230203u, 0x00010000u, 0, 1, 0 };
        accel_program_desc d;
        memset(&d, 0, sizeof d);
        d.name = "k";
        d.buffer_count = 1;
        d.spirv = fake_spirv;
        d.spirv_size = sizeof fake_spirv;
        CHECK_RESULT(accel_program_create(dev, &d, &p), ACCEL_ERROR_UNSUPPORTED);
        d.spirv = NULL;
        d.spirv_size = 0;
        d.ptx = ".version 7.0\n.target sm_50\n";
        CHECK_RESULT(accel_program_create(dev, &d, &p), ACCEL_ERROR_UNSUPPORTED);
        d.ptx = NULL;
        d.cuda_source = test_k_add_one_cuda;
        CHECK_RESULT(accel_program_create(dev, &d, &p), ACCEL_ERROR_UNSUPPORTED);
        d.cuda_source = NULL;
        static const unsigned char cubin[16] = { 0x7f, 'E', 'L', 'F' };
        d.cubin = cubin;
        d.cubin_size = sizeof cubin;
        CHECK_RESULT(accel_program_create(dev, &d, &p), ACCEL_ERROR_UNSUPPORTED);
        d.cubin = NULL;
        d.cubin_size = 0;
        CHECK_RESULT(accel_program_create(dev, &d, &p), ACCEL_ERROR_INVALID_ARGUMENT);   /* no format */
        d.cpu = test_k_add_one;                                  /* CPU + others: fine */
        d.spirv = fake_spirv;
        d.spirv_size = sizeof fake_spirv;
        d.constant_count = 1;
        CHECK_OK(accel_program_create(dev, &d, &p));
        accel_program_destroy(p);
    }
    accel_program_destroy(NULL);
    accel_device_destroy(dev);
}

TEST(program_bad_arguments_and_limits) {
    accel_device* dev;
    accel_program* p = NULL;
    accel_device_info info;
    REQUIRE_OK(test_device_create(&dev));
    REQUIRE_OK(accel_device_info_get(dev, &info));
    accel_program_desc d = test_kernel_desc(TK_ADD_ONE);
    const accel_result E = ACCEL_ERROR_INVALID_ARGUMENT;
    CHECK_RESULT(accel_program_create(NULL, &d, &p), E);
    CHECK_RESULT(accel_program_create(dev, NULL, &p), E);
    CHECK_RESULT(accel_program_create(dev, &d, NULL), E);
    accel_program_desc big = d;
    big.buffer_count = info.max_buffers + 1;
    CHECK_RESULT(accel_program_create(dev, &big, &p), E);
    big = d;
    big.constant_count = info.max_constants + 1;
    CHECK_RESULT(accel_program_create(dev, &big, &p), E);
    big.constant_count = UINT32_MAX;
    CHECK_RESULT(accel_program_create(dev, &big, &p), E);
    if (test_backend_is_cpu()) {
        /* at the limits is fine (CPU: the kernel does not care how many it gets) */
        big = d;
        big.buffer_count = info.max_buffers;
        big.constant_count = info.max_constants;
        CHECK_OK(accel_program_create(dev, &big, &p));
        accel_program_destroy(p);
    }
    accel_device_destroy(dev);
}

/* local_size limits: product <= max_group_invocations, each dim <= max_group_size. */
TEST(exec_local_size_limits) {
    accel_device* dev;
    accel_device_info info;
    accel_queue* q;
    accel_program* p;
    accel_buffer* b;
    accel_signal* s;
    REQUIRE_OK(test_device_create(&dev));
    REQUIRE_OK(accel_device_info_get(dev, &info));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
    REQUIRE_OK(test_program_create(dev, TK_GROUP_IDS, &p));
    REQUIRE_OK(accel_signal_create(dev, 0, &s));
    uint32_t lx = info.max_group_size[0] < info.max_group_invocations ? info.max_group_size[0] : info.max_group_invocations;
    if (lx > (1u << 16)) lx = 1u << 16;
    REQUIRE_OK(test_buffer_create(dev, (size_t)lx * 4 + 64, ACCEL_MEMORY_HOST, &b));
    uint32_t g[3] = { lx, 1, 1 };
    /* the largest legal group runs */
    accel_queue_exec(q, p, &b, 1, g, 3, accel_exec_1d(lx, lx));
    CHECK_OK(accel_queue_finish(q, ACCEL_WAIT_FOREVER));
    CHECK_EQ_U64(test_buffer_u32(b, lx - 1), test_group_code(0, 0, 0));
    /* too large in one dimension */
    uint32_t global[3] = { 1, 1, 1 };
    for (int dim = 0; dim < 3; dim++) {
        if (info.max_group_size[dim] == UINT32_MAX) continue;
        uint32_t local[3] = { 1, 1, 1 };
        local[dim] = info.max_group_size[dim] + 1;
        accel_queue_exec(q, p, &b, 1, g, 3, accel_exec_3d(global, local));
        accel_queue_signal(q, s, 1);
        CHECK_RESULT(accel_queue_submit(q), ACCEL_ERROR_INVALID_ARGUMENT);
    }
    /* every dimension within limits but the product too large */
    {
        uint32_t local[3] = { 1, 1, 1 };
        uint64_t prod = 1;
        for (int dim = 0; dim < 3 && prod <= info.max_group_invocations; dim++) {
            local[dim] = info.max_group_size[dim];
            prod *= local[dim];
        }
        if (prod > info.max_group_invocations) {
            accel_queue_exec(q, p, &b, 1, g, 3, accel_exec_3d(global, local));
            accel_queue_signal(q, s, 1);
            CHECK_RESULT(accel_queue_submit(q), ACCEL_ERROR_INVALID_ARGUMENT);
        }
    }
    CHECK_EQ_U64(accel_signal_value(s), 0);
    accel_queue_signal(q, s, 2);
    CHECK_OK(accel_queue_finish(q, ACCEL_WAIT_FOREVER));
    CHECK_EQ_U64(accel_signal_value(s), 2);
    accel_device_destroy(dev);
}

/* Destroying a program that submitted work still uses. */
TEST(program_destroyed_while_in_use) {
    accel_device* dev;
    accel_queue* q;
    accel_program* p;
    accel_buffer* b;
    accel_signal *gate, *done;
    enum { N = 3000 };
    REQUIRE_OK(test_device_create(&dev));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
    REQUIRE_OK(test_program_create(dev, TK_FILL_INDEX, &p));
    REQUIRE_OK(test_buffer_create(dev, N * 4, ACCEL_MEMORY_HOST, &b));
    REQUIRE_OK(accel_signal_create(dev, 0, &gate));
    REQUIRE_OK(accel_signal_create(dev, 0, &done));
    uint32_t k[2] = { 5, N };
    accel_queue_wait(q, gate, 1);
    accel_queue_exec(q, p, &b, 1, k, 2, accel_exec_1d(N, 100));
    accel_queue_signal(q, done, 1);
    CHECK_OK(accel_queue_submit(q));
    accel_program_destroy(p);
    CHECK_OK(accel_signal_set(gate, 1));
    CHECK_OK(accel_signal_wait(done, 1, ACCEL_WAIT_FOREVER));
    static uint32_t got[N];
    REQUIRE_OK(accel_buffer_read(b, 0, got, sizeof got));
    int bad = 0;
    for (uint32_t i = 0; i < N; i++) bad += got[i] != i + 5u;
    CHECK_EQ_INT(bad, 0);
    accel_device_destroy(dev);
}

/* Several programs and many execs of one program with different constants in one batch. */
TEST(programs_mixed_in_one_batch) {
    accel_device* dev;
    accel_queue* q;
    accel_program *fill, *add, *copy;
    accel_buffer *a, *b;
    enum { N = 777 };
    REQUIRE_OK(test_device_create(&dev));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
    REQUIRE_OK(test_program_create(dev, TK_FILL_INDEX, &fill));
    REQUIRE_OK(test_program_create(dev, TK_ADD_ONE, &add));
    REQUIRE_OK(test_program_create(dev, TK_COPY_U32, &copy));
    REQUIRE_OK(test_buffer_create(dev, N * 4, ACCEL_MEMORY_DEVICE, &a));
    REQUIRE_OK(test_buffer_create(dev, N * 4, ACCEL_MEMORY_DEVICE, &b));
    uint32_t n = N;
    for (uint32_t c = 0; c < 10; c++) {
        uint32_t k[2] = { c * 1000u, N };
        accel_queue_exec(q, fill, &a, 1, k, 2, accel_exec_1d(N, 32));
    }
    accel_queue_exec(q, add, &a, 1, &n, 1, accel_exec_1d(N, 32));
    accel_buffer* ab[2] = { b, a };
    accel_queue_exec(q, copy, ab, 2, &n, 1, accel_exec_1d(N, 50));
    accel_queue_exec(q, add, &b, 1, &n, 1, accel_exec_1d(N, 1));
    CHECK_OK(accel_queue_finish(q, ACCEL_WAIT_FOREVER));
    static uint32_t got[N];
    REQUIRE_OK(accel_buffer_read(b, 0, got, sizeof got));
    int bad = 0;
    for (uint32_t i = 0; i < N; i++) bad += got[i] != i + 9000u + 2u;
    CHECK_EQ_INT(bad, 0);
    accel_device_destroy(dev);
}

/* ==== SPIR-V structure (backends that take SPIR-V) ==== */
#ifndef ACCEL_TEST_NO_SPIRV
/* accel_program_create of module m alone (no CPU function, no CUDA); a program made is destroyed. */
static accel_result spv_create(accel_device* dev, const test_spv* m, const char* name, uint32_t buffers, uint32_t constants) {
    accel_program_desc d = test_kernel_desc_make(name, NULL, m->w, m->n * 4, NULL, buffers, constants);
    accel_program* p = NULL;
    accel_result r = accel_program_create(dev, &d, &p);
    if (r == ACCEL_OK) accel_program_destroy(p);
    return r;
}
/* add_one as glslc wrote it, with `count` words inserted before its first OpExecutionMode. */
static accel_result spv_create_with(accel_device* dev, const uint32_t* words, size_t count) {
    static test_spv m;
    accel_program_desc base = test_kernel_desc(TK_ADD_ONE);
    test_spv_copy(&m, base.spirv, base.spirv_size);
    test_spv_insert(&m, test_spv_find(&m, 16), words, count);
    return spv_create(dev, &m, "main", 1, 1);
}
#endif

/* No module reaches the driver unless its structure holds: each malformed one is refused at create
   (INVALID_ARGUMENT, or COMPILE for a version the device does not take) with a log line, never a crash. */
TEST(spirv_structure_is_checked) {
#ifdef ACCEL_TEST_NO_SPIRV
    SKIP("built without SPIR-V");
#else
    static test_spv m;
    const accel_result E = ACCEL_ERROR_INVALID_ARGUMENT;
    accel_program_desc add_one = test_kernel_desc(TK_ADD_ONE);
    accel_device* dev;
    accel_device_info info;
    REQUIRE_OK(test_device_create(&dev));
    REQUIRE_OK(accel_device_info_get(dev, &info));
    if (!(info.formats & ACCEL_FORMAT_SPIRV)) { accel_device_destroy(dev); SKIP("the backend takes no SPIR-V"); }
    /* the controls: the hand-written module and glslc's add_one are taken */
    test_spv_tiny(&m, 1);
    CHECK_OK(spv_create(dev, &m, "main", 0, 0));
    test_spv_copy(&m, add_one.spirv, add_one.spirv_size);
    CHECK_OK(spv_create(dev, &m, "main", 1, 1));
    /* six instructions whose OpEntryPoint names an undefined function (lavapipe crashed at submit) */
    test_spv_tiny(&m, 0);
    CHECK_RESULT(spv_create(dev, &m, "main", 0, 0), E);
    CHECK(test_log_contains("not an OpFunction with a body"));
    test_spv_tiny(&m, 1);
    m.w[12] = 2;                                          /* the entry point names the OpTypeFunction */
    CHECK_RESULT(spv_create(dev, &m, "main", 0, 0), E);
    test_spv_tiny(&m, 1);
    m.w[11] = 0;                                          /* a Vertex entry point, no GLCompute one */
    CHECK_RESULT(spv_create(dev, &m, "main", 0, 0), E);
    CHECK(test_log_contains("no GLCompute entry point"));
    /* garbage after the entry point: an unknown opcode, a function instruction at module level, a type
       among the execution modes, words whose count runs past the end */
    const uint32_t unknown[] = { TEST_SPV_OP(0xffff, 1) }, ret[] = { TEST_SPV_OP(253, 1) },
                   type[] = { TEST_SPV_OP(21, 4), 1, 32, 0 }, junk[] = { 0xdeadbeefu, 0x12345678u };
    CHECK_RESULT(spv_create_with(dev, unknown, 1), E);
    CHECK(test_log_contains("unknown opcode"));
    CHECK_RESULT(spv_create_with(dev, ret, 1), E);
    CHECK(test_log_contains("outside a function"));
    CHECK_RESULT(spv_create_with(dev, type, 4), E);
    CHECK(test_log_contains("out of the order"));
    CHECK_RESULT(spv_create_with(dev, junk, 2), E);
    /* versions: 2.0 and 1.7 are no SPIR-V, nor a version word with its low byte set; 1.6 is newer than the
       1.5 that Vulkan 1.2 (the version accel creates its devices with) takes */
    static const uint32_t bad_versions[] = { 0x00020000u, 0x00010700u, 0x00010501u, 0x01010000u, 0 };
    for (size_t i = 0; i < sizeof bad_versions / sizeof bad_versions[0]; i++) {
        test_spv_copy(&m, add_one.spirv, add_one.spirv_size);
        m.w[1] = bad_versions[i];
        CHECK_RESULT(spv_create(dev, &m, "main", 1, 1), E);
    }
    CHECK(test_log_contains("is not a SPIR-V version"));
    if (strcmp(info.backend, "vulkan") == 0) {
        m.w[1] = 0x00010600u;
        CHECK_RESULT(spv_create(dev, &m, "main", 1, 1), ACCEL_ERROR_COMPILE);
        CHECK(test_log_contains("takes SPIR-V 1.0 to 1.5"));
    }
    /* every truncation of a valid module */
    int taken = 0;
    test_spv_copy(&m, add_one.spirv, add_one.spirv_size);
    for (size_t n = m.n; n-- > 0;) {
        accel_program_desc d = test_kernel_desc_make("main", NULL, m.w, n * 4, NULL, 1, 1);
        accel_program* p = NULL;
        accel_result r = accel_program_create(dev, &d, &p);
        taken += r == ACCEL_OK;
        if (r == ACCEL_OK) accel_program_destroy(p);
    }
    CHECK_EQ_INT(taken, 0);
    /* word counts: past the end, 0, far past the end; an entry-point name without its NUL; a result id
       at the header's bound */
    m.w[m.n - 1] = TEST_SPV_OP(56, 2);
    CHECK_RESULT(spv_create(dev, &m, "main", 1, 1), E);
    CHECK(test_log_contains("runs past the end"));
    m.w[m.n - 1] = TEST_SPV_OP(56, 0);
    CHECK_RESULT(spv_create(dev, &m, "main", 1, 1), E);
    test_spv_tiny(&m, 1);
    m.w[5] = TEST_SPV_OP(17, 0xffff);
    CHECK_RESULT(spv_create(dev, &m, "main", 0, 0), E);
    test_spv_tiny(&m, 1);
    m.w[14] = 0x64636261u;                                /* "main" then "abcd": the name never ends */
    CHECK_RESULT(spv_create(dev, &m, NULL, 0, 0), E);
    CHECK(test_log_contains("not NUL-terminated"));
    test_spv_tiny(&m, 1);
    m.w[3] = 5;                                           /* bound 5: the function's id 5 is not below it */
    CHECK_RESULT(spv_create(dev, &m, "main", 0, 0), E);
    /* ids that are not results but name one, not below the bound: an OpName's target (lavapipe crashed
       at submit on 0xffffffff), an OpDecorate's, an OpLoad's result type, an entry point's interface */
    static const uint32_t ops[][2] = { { 5, 1 }, { 71, 1 }, { 61, 1 }, { 15, 5 } };
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        test_spv_copy(&m, add_one.spirv, add_one.spirv_size);
        size_t at = test_spv_find(&m, ops[i][0]);
        if (!CHECK(at != 0)) continue;
        m.w[at + ops[i][1]] = i % 2 ? m.w[3] : 0xffffffffu;
        CHECK_RESULT(spv_create(dev, &m, "main", 1, 1), E);
        CHECK(test_log_contains("an id 0 or not below the header's bound"));
    }
    accel_device_destroy(dev);
#endif
}

int main(int argc, char** argv) {
    test_begin(argc, argv);
    RUN(device_info_is_sane);
    RUN(cpu_backend_basics);
    RUN(device_cpu_threads_setting);
    RUN(program_formats);
    RUN(program_bad_arguments_and_limits);
    RUN(exec_local_size_limits);
    RUN(program_destroyed_while_in_use);
    RUN(programs_mixed_in_one_batch);
    RUN(spirv_structure_is_checked);
    return test_end();
}

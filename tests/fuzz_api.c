/* tests/fuzz_api.c — API fuzzer: decodes its input into a sequence of accel calls with arbitrary
   arguments on one device, and checks what the contract promises after each call.

   Build (see `make fuzz`): clang -fsanitize=fuzzer,address,undefined tests/fuzz_api.c, once threaded and
   once with -DACCEL_NO_THREADS. tests/test_fuzz_replay.c compiles this file with FUZZ_API_NO_MAIN into
   the normal suite: it replays the regression inputs below and a fixed pseudo-random batch of inputs in
   every test configuration.

   What an input does: the first bytes pick the device (cpu_threads 1..3, debug or not); then each op
   byte selects a call — create/destroy buffers (and views of them), programs, signals and queues (destroying buffers,
   programs and signals that submitted work still uses is allowed and happens), record any command with
   arbitrary offsets, sizes, counts, values and NULLs, submit, finish with tiny timeouts, set/fail/wait
   signals (wait, wait_many: timeouts of at most 200 us), read/write buffers, make the next few host
   allocations fail. An input whose first byte has its top bit set also gets v0.3's calls: queue memory
   (accel_queue_alloc into a buffer slot, accel_queue_free of such a slot), indirect execs with
   arbitrary offsets into a counts buffer of bounded values (small, or over the limits), peer copies with a second (CPU) device's buffers, native steps,
   accel_device_peer_info, and accel_device_recover (after which every object is stale and destroyed).
   An input whose first byte has bit 6 set also records command lists (record_begin, a few commands of
   any kind, record_end into a list slot) and replays them with arbitrary patches (commands, slots,
   buffers, values; sorted or not), and destroys lists.
   At the end everything is unblocked and the device destroyed; no allocation may be outstanding.

   Bounded by construction: no call waits forever. The fuzzer remembers, per signal, the largest value a
   recorded queue wait asked for; before a queue or the device is destroyed, or a signal handle dropped,
   the signals that could still hold a queue are set to that value or failed (the input decides), since
   a destroy waits for the queue's work (threads) — the documented way out of a wait nobody will satisfy.

   Checks (a violation calls fz_violation, which traps so libFuzzer reports it): results are among those
   documented for the call; a failed create leaves *out NULL; signal values never go down and failure is
   sticky; a wait that returned OK saw the value, SIGNAL_FAILED saw a failed signal; DEADLOCK only
   without threads; kernels see consistent dispatch fields; nothing leaks (counting allocator). */
#ifndef ACCEL_IMPLEMENTATION_INCLUDED
#  define ACCEL_IMPLEMENTATION
#endif
#include "accel.h"
#include "test.h"

#if defined(ACCEL_NO_THREADS) || defined(__wasi__) || (defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__))
#  define FZ_THREADS 0
#else
#  define FZ_THREADS 1
#endif

#define FZ_Q 4
#define FZ_B 8
#define FZ_P 4
#define FZ_S 8
#define FZ_BUF_MAX 4096u

/* ==== input ==== */
typedef struct fz_in { const uint8_t* p; size_t n, i; } fz_in;
static uint8_t fz_u8(fz_in* in) { return in->i < in->n ? in->p[in->i++] : 0; }
static uint32_t fz_u32(fz_in* in) {
    uint32_t v = 0;
    for (int k = 0; k < 4; k++) v |= (uint32_t)fz_u8(in) << (8 * k);
    return v;
}
static uint64_t fz_u64(fz_in* in) { uint64_t lo = fz_u32(in); return lo | (uint64_t)fz_u32(in) << 32; }
/* A signal value: mostly small, sometimes at the edges of the range. */
static uint64_t fz_value(fz_in* in) {
    uint8_t k = fz_u8(in);
    switch (k >> 5) {
    case 0: case 1: case 2: case 3: return k & 15u;
    case 4: return ACCEL_SIGNAL_MAX - (k & 3u) + 1u;        /* MAX+1, MAX, MAX-1, MAX-2 */
    case 5: return UINT64_MAX - (k & 1u);
    case 6: return fz_u64(in);
    default: return fz_u8(in);
    }
}
/* A byte size or offset: small, 4-aligned, around a buffer size, or anything. */
static size_t fz_size(fz_in* in) {
    uint8_t k = fz_u8(in);
    switch (k >> 5) {
    case 0: case 1: return k & 31u;
    case 2: return (size_t)(k & 31u) * 4u;
    case 3: return (size_t)fz_u8(in) * 16u;
    case 4: return FZ_BUF_MAX - (k & 7u);
    case 5: return SIZE_MAX - (k & 7u);
    case 6: return (size_t)fz_u32(in);
    default: return (size_t)1 << (k & 15u);
    }
}
static uint64_t fz_timeout(fz_in* in) {
    /* polls, waits inside the spin phase (ACCEL_CPU_SPIN_NS = 50 us), and now and then one long
       enough to sleep on the condition variable */
    static const uint64_t t[8] = { 0, 0, 1000, 1000, 20000, 20000, 50000, 200000 };
    return t[fz_u8(in) & 7u];
}

/* ==== checks ==== */
static void fz_violation(const char* what, long long a, long long b) {
    fprintf(stderr, "fuzz_api: contract violation: %s (%lld, %lld)\n", what, a, b);
#if defined(__GNUC__)
    __builtin_trap();
#else
    abort();
#endif
}
#define FZ_EXPECT(cond, a, b) do { if (!(cond)) fz_violation(#cond, (long long)(a), (long long)(b)); } while (0)
static int fz_is_error_or_ok(accel_result r) { return r == ACCEL_OK || (r <= ACCEL_ERROR_INVALID_ARGUMENT && r >= ACCEL_ERROR_BACKEND); }

/* ==== kernels: bounds-checked, and they check what they are given ==== */
static atomic_uint fz_lanes;   /* cpu_threads of the current device */
static void fz_kernel_add(const accel_dispatch* d) {
    FZ_EXPECT(d->worker < atomic_load(&fz_lanes), d->worker, atomic_load(&fz_lanes));
    for (int k = 0; k < 3; k++) {
        FZ_EXPECT(d->group_id[k] < d->group_count[k], d->group_id[k], d->group_count[k]);
        FZ_EXPECT((uint64_t)d->group_count[k] * d->group_size[k] >= d->global_size[k], d->group_count[k], d->global_size[k]);
    }
    uint32_t add = d->constant_count ? d->constants[0] : 1u;
    for (uint32_t b = 0; b < d->buffer_count; b++) {
        unsigned char* p = (unsigned char*)d->buffers[b];   /* a view may start at any byte on the CPU */
        size_t words = d->buffer_sizes[b] / 4u;
        FZ_EXPECT(p != NULL, b, 0);
        for (uint32_t l = 0; l < d->group_size[0]; l++) {
            uint64_t i = (uint64_t)d->group_id[0] * d->group_size[0] + l;
            uint32_t v;
            if (i >= d->global_size[0] || i >= words) break;
            memcpy(&v, p + 4u * i, 4);
            v += add;
            memcpy(p + 4u * i, &v, 4);
        }
    }
}
static void fz_kernel_nop(const accel_dispatch* d) { (void)d; }

/* ==== state ==== */
typedef struct fz_sig { uint64_t seen; uint64_t max_wait; } fz_sig;
typedef struct fz {
    accel_device* dev;
    test_alloc_state st;
    uint32_t lanes;
    accel_queue* q[FZ_Q];
    accel_buffer* b[FZ_B];
    accel_program* p[FZ_P];
    uint32_t p_buffers[FZ_P], p_constants[FZ_P];   /* the counts each program takes */
    accel_signal* s[FZ_S];
    fz_sig m[FZ_S];
    /* v0.3 (see the top): queue memory slots, the second device and its buffers */
    int v3;
    uint8_t qm[FZ_B];                  /* 1: b[i] came from accel_queue_alloc; 2: a view of such a buffer */
    accel_device* dev2;
    accel_buffer* pb[2];
    accel_buffer* counts;              /* indirect execs' counts: bounded values only (fz_op_indirect) */
    /* command lists (bit 6 of the first byte) */
    int lists;
    accel_commands* l[4];
} fz;
static unsigned char fz_host_mem[FZ_B][FZ_BUF_MAX];    /* host_ptr buffers wrap these */
#define FZ_ALLOC_MAX ((size_t)1 << 20)                 /* larger host allocations are refused (OOM) */
static unsigned char fz_scratch[FZ_ALLOC_MAX];         /* update data, read/write host side */

static void fz_signal_seen(fz* f, int i) {
    uint64_t v = accel_signal_value(f->s[i]);
    FZ_EXPECT(v >= f->m[i].seen, v, f->m[i].seen);                 /* monotonic, failure sticky */
    if (f->m[i].seen > ACCEL_SIGNAL_MAX) FZ_EXPECT(v == f->m[i].seen, v, f->m[i].seen);
    f->m[i].seen = v;
}
/* Makes sure no queue can stay blocked on signal i: set it to the largest awaited value, or fail it. */
static void fz_unblock_one(fz* f, int i, int fail) {
    if (!f->s[i]) return;
    fz_signal_seen(f, i);
    if (f->m[i].seen >= f->m[i].max_wait) return;
    if (fail) FZ_EXPECT(accel_signal_fail(f->s[i], ACCEL_ERROR_DEADLOCK) == ACCEL_OK, 0, 0);
    else {
        /* with threads a queue may fail it meanwhile (a batch that waited on a failed signal fails what
           it would have signalled): SIGNAL_FAILED is then right (fuzz_corpus/regress-03) */
        accel_result r = accel_signal_set(f->s[i], f->m[i].max_wait);
        FZ_EXPECT(r == ACCEL_OK || (r == ACCEL_ERROR_SIGNAL_FAILED && accel_signal_value(f->s[i]) > ACCEL_SIGNAL_MAX), r, 0);
    }
    fz_signal_seen(f, i);
}
static void fz_unblock_all(fz* f, int how) {
    for (int i = 0; i < FZ_S; i++) fz_unblock_one(f, i, (how >> (i & 7)) & 1);
}

static accel_signal* fz_pick_signal(fz* f, fz_in* in, int* idx) {
    uint8_t k = fz_u8(in);
    *idx = k % FZ_S;
    return k > 0xF0u ? NULL : f->s[*idx];   /* now and then NULL on purpose */
}
static accel_buffer* fz_pick_buffer(fz* f, fz_in* in) { uint8_t k = fz_u8(in); return k == 0xFFu ? NULL : f->b[k % FZ_B]; }
static accel_queue* fz_pick_queue(fz* f, fz_in* in) { return f->q[fz_u8(in) % FZ_Q]; }

/* ==== ops ==== */
enum {
    OP_BUFFER_CREATE, OP_BUFFER_DESTROY, OP_PROGRAM_CREATE, OP_PROGRAM_DESTROY, OP_SIGNAL_CREATE,
    OP_SIGNAL_DESTROY, OP_QUEUE_CREATE, OP_QUEUE_DESTROY, OP_WAIT, OP_SIGNAL, OP_EXEC, OP_COPY, OP_FILL,
    OP_UPDATE, OP_BARRIER, OP_SUBMIT, OP_FINISH, OP_SET, OP_FAIL, OP_HOST_WAIT, OP_WAIT_MANY, OP_IO,
    OP_OOM, OP_MISC, OP_COUNT,
    OP_QALLOC = OP_COUNT, OP_QFREE, OP_INDIRECT, OP_PEER, OP_NATIVE, OP_RECOVER, OP_COUNT_V3,  /* v3 inputs */
    OP_RECORD = OP_COUNT_V3, OP_REPLAY, OP_LIST_DESTROY, OP_COUNT_LISTS   /* inputs with bit 6 */
};

static void fz_op_buffer_create(fz* f, fz_in* in) {
    int i = fz_u8(in) % FZ_B;
    accel_buffer_desc d;
    accel_buffer* out = (accel_buffer*)&d;
    accel_result r;
    uint8_t k = fz_u8(in), qm = 0;   /* qm 2: a view of queue memory (reads and writes fail as its own do) */
    memset(&d, 0, sizeof d);
    d.size = fz_size(in);
    if (d.size > FZ_BUF_MAX && (k & 1u)) d.size = FZ_BUF_MAX;   /* keep memory use small, mostly */
    d.memory = (accel_memory)((k >> 1) % 3u == 2u ? (int)fz_u8(in) - 128 : (int)((k >> 1) % 3u));
    if ((k & 0x18u) == 0x18u && d.size <= FZ_BUF_MAX) d.host_ptr = fz_host_mem[i];
    d.label = (k & 0x20u) ? "fuzz buffer with a label longer than the forty-eight bytes kept for it" : NULL;
    if ((k & 0xC0u) == 0xC0u && f->b[(i + 1) % FZ_B]) {   /* a view of the next slot's buffer (maybe a view) */
        d.host_ptr = NULL;
        qm = f->qm[(i + 1) % FZ_B] ? 2u : 0u;
        r = accel_buffer_view_create(f->b[(i + 1) % FZ_B], d.size % 512u, d.size, &out);
    } else {
        r = accel_buffer_create(f->dev, &d, &out);
    }
    /* a view of queue memory without memory: its handle's reason (the failed batch's, or OUT_OF_MEMORY) */
    FZ_EXPECT(r == ACCEL_OK || r == ACCEL_ERROR_INVALID_ARGUMENT || r == ACCEL_ERROR_OUT_OF_MEMORY ||
              (qm && r < 0), r, 0);
    FZ_EXPECT((r == ACCEL_OK) == (out != NULL), r, 0);
    if (r != ACCEL_OK) return;
    FZ_EXPECT(accel_buffer_size(out) == d.size, accel_buffer_size(out), d.size);
    if (d.host_ptr) FZ_EXPECT(accel_buffer_map(out) == d.host_ptr, 0, 0);
    accel_buffer_destroy(f->b[i]);   /* the old one may still be in use by submitted work */
    f->b[i] = out;
    f->qm[i] = qm;
}
static void fz_op_program_create(fz* f, fz_in* in) {
    int i = fz_u8(in) % FZ_P;
    uint8_t k = fz_u8(in);
    accel_program_desc d;
    accel_program* out = NULL;
    accel_result r;
    memset(&d, 0, sizeof d);
    d.name = (k & 1u) ? "fuzz" : NULL;
    d.cpu = (k & 6u) == 0 ? NULL : (k & 6u) == 2 ? fz_kernel_nop : fz_kernel_add;
    if ((k & 0x18u) == 0x08u) { d.ptx = "// not for the cpu"; }
    if ((k & 0x18u) == 0x10u) { d.spirv = (const uint32_t*)(const void*)fz_scratch; d.spirv_size = (k & 0x20u) ? 0 : 64; }
    d.buffer_count = fz_u8(in) % 70u;
    d.constant_count = fz_u8(in) % 70u;
    if ((k & 0xC0u) == 0xC0u) d.buffer_count = fz_u32(in);
    r = accel_program_create(f->dev, &d, &out);
    FZ_EXPECT(r == ACCEL_OK || r == ACCEL_ERROR_INVALID_ARGUMENT || r == ACCEL_ERROR_UNSUPPORTED ||
              r == ACCEL_ERROR_OUT_OF_MEMORY || r == ACCEL_ERROR_COMPILE, r, 0);
    FZ_EXPECT((r == ACCEL_OK) == (out != NULL), r, 0);
    if (r != ACCEL_OK) return;
    accel_program_destroy(f->p[i]);
    f->p[i] = out;
    f->p_buffers[i] = d.buffer_count;
    f->p_constants[i] = d.constant_count;
}
static void fz_op_signal_create(fz* f, fz_in* in) {
    int i = fz_u8(in) % FZ_S;
    uint64_t v = fz_value(in);
    accel_signal* out = NULL;
    accel_result r = accel_signal_create(f->dev, v, &out);
    if (v > ACCEL_SIGNAL_MAX) FZ_EXPECT(r == ACCEL_ERROR_INVALID_ARGUMENT, r, v);
    else FZ_EXPECT(r == ACCEL_OK || r == ACCEL_ERROR_OUT_OF_MEMORY, r, v);
    FZ_EXPECT((r == ACCEL_OK) == (out != NULL), r, 0);
    if (r != ACCEL_OK) return;
    FZ_EXPECT(accel_signal_value(out) == v, accel_signal_value(out), v);
    if (f->s[i]) { fz_unblock_one(f, i, fz_u8(in) & 1); accel_signal_destroy(f->s[i]); }
    f->s[i] = out;
    f->m[i].seen = v;
    f->m[i].max_wait = 0;
}
static void fz_op_signal_destroy(fz* f, fz_in* in) {
    int i = fz_u8(in) % FZ_S;
    uint8_t k = fz_u8(in);
    if (!f->s[i]) return;
    /* with threads a queue blocked on it would hold its destroy forever; without, it may stay parked */
    if (FZ_THREADS || (k & 2u)) fz_unblock_one(f, i, k & 1u);
    accel_signal_destroy(f->s[i]);
    f->s[i] = NULL;
}
static void fz_op_queue_create(fz* f, fz_in* in) {
    int i = fz_u8(in) % FZ_Q;
    uint8_t k = fz_u8(in);
    accel_queue_type t = (accel_queue_type)((k & 0x80u) ? (int)k - 200 : (int)(k & 1u));
    accel_queue* out = NULL;
    accel_result r = accel_queue_create(f->dev, t, &out);
    FZ_EXPECT(r == ACCEL_OK || r == ACCEL_ERROR_INVALID_ARGUMENT || r == ACCEL_ERROR_OUT_OF_MEMORY ||
              r == ACCEL_ERROR_BACKEND || r == ACCEL_ERROR_UNSUPPORTED, r, 0);
    FZ_EXPECT((r == ACCEL_OK) == (out != NULL), r, 0);
    if (r != ACCEL_OK) return;
    if (f->q[i]) {
        if (FZ_THREADS || (k & 2u)) fz_unblock_all(f, fz_u8(in));
        accel_queue_destroy(f->q[i]);
    }
    f->q[i] = out;
}
static void fz_op_queue_destroy(fz* f, fz_in* in) {
    int i = fz_u8(in) % FZ_Q;
    uint8_t k = fz_u8(in);
    if (!f->q[i]) return;
    if (FZ_THREADS || (k & 1u)) fz_unblock_all(f, fz_u8(in));
    accel_queue_destroy(f->q[i]);   /* with an unsubmitted batch, sometimes */
    f->q[i] = NULL;
}
static void fz_op_record_signal(fz* f, fz_in* in, int wait) {
    accel_queue* q = fz_pick_queue(f, in);
    int i;
    accel_signal* s = fz_pick_signal(f, in, &i);
    uint64_t v = fz_value(in);
    if (wait) {
        accel_queue_wait(q, s, v);
        if (q && s && v <= ACCEL_SIGNAL_MAX && v > f->m[i].max_wait) f->m[i].max_wait = v;
    } else {
        accel_queue_signal(q, s, v);
    }
}
static void fz_op_exec(fz* f, fz_in* in) {
    accel_queue* q = fz_pick_queue(f, in);
    uint8_t k = fz_u8(in);
    accel_program* p = k > 0xF8u ? NULL : f->p[k % FZ_P];
    accel_buffer* bufs[70];
    uint32_t consts[70];
    uint32_t nb = fz_u8(in) % 70u, nc = fz_u8(in) % 70u;
    accel_exec_params params;
    uint64_t groups = 1, invocations = 1;
    int valid = 1;
    static const uint32_t max_local[3] = { 1024, 1024, 64 }, max_groups[3] = { UINT32_MAX, 65535, 65535 };
    if ((k & 0x30u) != 0x30u && p) {   /* mostly the program's own counts, to get past validation */
        nb = f->p_buffers[k % FZ_P];
        nc = f->p_constants[k % FZ_P];
    }
    for (uint32_t j = 0; j < 70u; j++) { bufs[j] = f->b[(j + k) % FZ_B]; consts[j] = j + 1u; }
    if ((k & 0x08u) == 0 && nb) bufs[fz_u8(in) % nb] = fz_pick_buffer(f, in);
    for (int d = 0; d < 3; d++) {
        uint8_t m = fz_u8(in);
        params.global_size[d] = (m & 0x80u) ? fz_u32(in) : (uint32_t)(m & 0x7Fu) * (d == 0 ? 9u : 1u);
        params.local_size[d] = (m & 0x40u) ? fz_u32(in) : (uint32_t)(fz_u8(in) & 0x3Fu);
        uint32_t l = params.local_size[d] ? params.local_size[d] : 1u, g = params.global_size[d] ? params.global_size[d] : 1u;
        uint64_t gd = ((uint64_t)g + l - 1) / l;
        groups *= gd;
        invocations *= l;
        valid &= l <= max_local[d] && gd <= max_groups[d];
    }
    /* a valid grid of millions of groups only costs time: shrink it (invalid ones stay: validation) */
    if (valid && invocations <= 1024u && groups > 4096u)
        for (int d = 0; d < 3; d++) params.global_size[d] = params.local_size[d] ? params.local_size[d] : 1u;
    accel_queue_exec(q, p, (k & 0x04u) && nb ? NULL : bufs, nb, (k & 0x02u) && nc ? NULL : consts, nc, params);
}
static void fz_op_exec_exact(fz* f, fz_in* in, accel_queue* q, accel_program* p, uint32_t nb, uint32_t nc) {
    accel_buffer* bufs[70];
    uint32_t consts[70];
    uint32_t n = (uint32_t)fz_u8(in) * 4u + 1u, l = (uint32_t)(fz_u8(in) & 63u);
    if (nb > 70u || nc > 70u) return;
    for (uint32_t j = 0; j < nb; j++) bufs[j] = f->b[(j + n) % FZ_B];
    for (uint32_t j = 0; j < nc; j++) consts[j] = fz_u8(in);
    accel_queue_exec(q, p, bufs, nb, consts, nc, accel_exec_1d(n, l));
}
static void fz_op_copy_fill_update(fz* f, fz_in* in, int op) {
    accel_queue* q = fz_pick_queue(f, in);
    accel_buffer* dst = fz_pick_buffer(f, in);
    size_t off = fz_size(in), size = fz_size(in);
    if (op == OP_COPY) {
        accel_buffer* src = (fz_u8(in) & 1u) ? dst : fz_pick_buffer(f, in);
        accel_queue_copy(q, dst, off, src, fz_size(in), size);
    } else if (op == OP_FILL) {
        accel_queue_fill(q, dst, off, size, fz_u32(in));
    } else {
        accel_queue_update(q, dst, off, (fz_u8(in) & 7u) == 7u ? NULL : fz_scratch, size);
    }
}
static void fz_op_submit(fz* f, fz_in* in, int finish) {
    accel_queue* q = fz_pick_queue(f, in);
    accel_result r = finish ? accel_queue_finish(q, fz_timeout(in)) : accel_queue_submit(q);
    FZ_EXPECT(r == ACCEL_OK || r == ACCEL_ERROR_INVALID_ARGUMENT || r == ACCEL_ERROR_OUT_OF_MEMORY ||
              (finish && r == ACCEL_TIMEOUT) || (finish && !FZ_THREADS && r == ACCEL_ERROR_DEADLOCK), r, finish);
    FZ_EXPECT(q != NULL || r == ACCEL_ERROR_INVALID_ARGUMENT, r, 0);
}
static void fz_op_set_fail(fz* f, fz_in* in, int fail) {
    int i;
    accel_signal* s = fz_pick_signal(f, in, &i);
    accel_result r;
    if (fail) {
        uint8_t rk = fz_u8(in);   /* mostly near the real codes; 0xFF: any 32-bit value (INT_MIN found a bug) */
        accel_result reason = rk == 0xFFu ? (accel_result)(int32_t)fz_u32(in) : (accel_result)((int)rk - 12);
        r = accel_signal_fail(s, reason);
        FZ_EXPECT(r == (!s || (int)reason >= 0 ? ACCEL_ERROR_INVALID_ARGUMENT : ACCEL_OK), r, reason);
        if (s && r == ACCEL_OK) FZ_EXPECT(accel_signal_value(s) > ACCEL_SIGNAL_MAX, accel_signal_value(s), 0);
    } else {
        uint64_t v = fz_value(in);
        r = accel_signal_set(s, v);
        if (!s || v > ACCEL_SIGNAL_MAX) FZ_EXPECT(r == ACCEL_ERROR_INVALID_ARGUMENT, r, v);
        else {
            FZ_EXPECT(r == ACCEL_OK || r == ACCEL_ERROR_SIGNAL_FAILED, r, v);
            FZ_EXPECT(accel_signal_value(s) >= v, accel_signal_value(s), v);   /* reached, or failed (above MAX) */
            if (r == ACCEL_ERROR_SIGNAL_FAILED) FZ_EXPECT(accel_signal_value(s) > ACCEL_SIGNAL_MAX, r, accel_signal_value(s));
        }
    }
    if (s) fz_signal_seen(f, i);
}
static void fz_check_wait_result(accel_result r, int any_null, int any_big) {
    if (any_null || any_big) { FZ_EXPECT(r == ACCEL_ERROR_INVALID_ARGUMENT, r, 0); return; }
    FZ_EXPECT(r == ACCEL_OK || r == ACCEL_TIMEOUT || r == ACCEL_ERROR_SIGNAL_FAILED ||
              (!FZ_THREADS && r == ACCEL_ERROR_DEADLOCK), r, 0);
}
static void fz_op_host_wait(fz* f, fz_in* in) {
    int i;
    accel_signal* s = fz_pick_signal(f, in, &i);
    uint64_t v = fz_value(in), t = fz_timeout(in);
    accel_result r = accel_signal_wait(s, v, t);
    fz_check_wait_result(r, s == NULL, v > ACCEL_SIGNAL_MAX);
    if (!s) return;
    if (r == ACCEL_OK) FZ_EXPECT(accel_signal_value(s) >= v, accel_signal_value(s), v);
    if (r == ACCEL_ERROR_SIGNAL_FAILED) FZ_EXPECT(accel_signal_value(s) > ACCEL_SIGNAL_MAX, accel_signal_value(s), v);
    fz_signal_seen(f, i);
}
static void fz_op_wait_many(fz* f, fz_in* in) {
    accel_signal* s[12];
    uint64_t v[12];
    uint32_t n = fz_u8(in) % 13u, first = 12345u;
    uint8_t k = fz_u8(in);
    int any_null = 0, any_big = 0;
    for (uint32_t j = 0; j < n; j++) {
        int i;
        s[j] = fz_pick_signal(f, in, &i);
        v[j] = fz_value(in);
        any_null |= s[j] == NULL;
        any_big |= v[j] > ACCEL_SIGNAL_MAX;
    }
    accel_result r = accel_signal_wait_many((k & 1u) && n == 0 ? NULL : s, (k & 2u) && n == 0 ? NULL : v, n,
                                            (k & 4u) != 0, fz_timeout(in), (k & 8u) ? NULL : &first);
    if (n == 0) { FZ_EXPECT(r == ACCEL_ERROR_INVALID_ARGUMENT, r, 0); return; }
    /* the first NULL or too-big entry decides; both are INVALID_ARGUMENT */
    fz_check_wait_result(r, any_null, any_big);
    if ((r == ACCEL_OK || r == ACCEL_ERROR_SIGNAL_FAILED) && !(k & 8u)) {
        FZ_EXPECT(first < n, first, n);
        if (r == ACCEL_OK && !(k & 4u)) FZ_EXPECT(accel_signal_value(s[first]) >= v[first], accel_signal_value(s[first]), v[first]);
        if (r == ACCEL_ERROR_SIGNAL_FAILED) FZ_EXPECT(accel_signal_value(s[first]) > ACCEL_SIGNAL_MAX, first, 0);
    }
    if (r == ACCEL_OK && (k & 4u))
        for (uint32_t j = 0; j < n; j++) FZ_EXPECT(accel_signal_value(s[j]) >= v[j], j, v[j]);
}
static void fz_op_io(fz* f, fz_in* in) {
    uint8_t pick = fz_u8(in);
    accel_buffer* b = pick == 0xFFu ? NULL : f->b[pick % FZ_B];   /* as fz_pick_buffer */
    /* queue memory: where none came, the handle's reason (OUT_OF_MEMORY, or the failed batch's that
       never reached its point: the contract); INVALID_ARGUMENT before its alloc's point or after its
       free's where the memory is taken at the point (the CPU, CUDA) */
    int qmem = b && f->qm[pick % FZ_B];
    uint8_t k = fz_u8(in);
    size_t off = fz_size(in), size = fz_size(in);
    void* host = (k & 0x70u) == 0x70u ? NULL : fz_scratch;
    accel_result r;
    if (size > sizeof fz_scratch && b && size <= accel_buffer_size(b)) size = sizeof fz_scratch;   /* host side */
    r = (k & 1u) ? accel_buffer_write(b, off, host, size) : accel_buffer_read(b, off, host, size);
    FZ_EXPECT(r == ACCEL_OK || r == ACCEL_ERROR_INVALID_ARGUMENT || (qmem && r < 0), r, 0);
    if (b && host && size && off <= accel_buffer_size(b) && size <= accel_buffer_size(b) - off)
        FZ_EXPECT(r == ACCEL_OK || (qmem && r < 0), r, 0);
    if (b) (void)accel_buffer_map(b);
}
static void fz_op_misc(fz* f, fz_in* in) {
    uint8_t k = fz_u8(in);
    switch (k & 7u) {
    case 0: { accel_device_info info; FZ_EXPECT(accel_device_info_get(f->dev, &info) == ACCEL_OK, 0, 0);
              FZ_EXPECT(info.max_buffers > 0, 0, 0); break; }
    case 1: FZ_EXPECT(accel_result_string((accel_result)((int)fz_u8(in) - 128)) != NULL, 0, 0); break;
    case 2: { accel_queue_barrier(fz_pick_queue(f, in)); break; }
    case 3: { uint32_t g[3] = { fz_u32(in), fz_u32(in), fz_u32(in) };
              accel_exec_params p = accel_exec_3d((k & 8u) ? NULL : g, (k & 16u) ? NULL : g);
              FZ_EXPECT(p.global_size[0] == ((k & 8u) ? 1u : g[0]), 0, 0); break; }
    case 4: { uint32_t c = 99; FZ_EXPECT(accel_backend_device_count(accel_cpu_backend(), &c) == ACCEL_OK && c == 1, c, 0);
              FZ_EXPECT(accel_backend_device_count(NULL, &c) == ACCEL_ERROR_INVALID_ARGUMENT && c == 0, c, 0); break; }
    case 5: {   /* a second device, created with odd descs and destroyed at once */
        accel_device_desc d;
        accel_device* other = NULL;
        accel_result r;
        memset(&d, 0, sizeof d);
        d.logger = test_logger();
        d.cpu_threads = (k & 0x80u) ? fz_u32(in) : (uint32_t)(fz_u8(in) & 3u);
        if (d.cpu_threads > 4u && d.cpu_threads <= 4096u) d.cpu_threads = 4u;   /* not thousands of threads */
        d.device_index = (k & 0x40u) ? fz_u8(in) : 0u;
        if (k & 0x20u) d.allocator.alloc_fn = test_alloc_fn;   /* half an allocator: invalid */
        r = accel_device_create(&d, &other);
        FZ_EXPECT(r == ACCEL_OK || r == ACCEL_ERROR_INVALID_ARGUMENT || r == ACCEL_ERROR_UNAVAILABLE ||
                  r == ACCEL_ERROR_OUT_OF_MEMORY || r == ACCEL_ERROR_BACKEND, r, 0);
        FZ_EXPECT((r == ACCEL_OK) == (other != NULL), r, 0);
        accel_device_destroy(other);
        break;
    }
    case 6: {   /* record on a queue with exactly the program's counts, to get commands through */
        accel_queue* q = fz_pick_queue(f, in);
        int i = fz_u8(in) % FZ_P;
        if (q && f->p[i]) fz_op_exec_exact(f, in, q, f->p[i], f->p_buffers[i], f->p_constants[i]);
        break;
    }
    default: {
        const accel_backend* list[3] = { NULL, accel_cpu_backend(), NULL };   /* NULL entries are skipped */
        accel_device* other = NULL;
        accel_device_desc d;
        memset(&d, 0, sizeof d);
        d.logger = test_logger();
        d.cpu_threads = (k & 0x10u) ? 2u : 0u;
        accel_result r = accel_device_create_any((k & 0x20u) ? NULL : list, (uint32_t)(k >> 6), &d, &other);
        FZ_EXPECT(fz_is_error_or_ok(r) && (r == ACCEL_OK) == (other != NULL), r, 0);
        accel_device_destroy(other);
        break;
    }
    }
}

/* ==== v0.3's calls ==== */
static void fz_op_qalloc(fz* f, fz_in* in) {
    int i = fz_u8(in) % FZ_B;
    accel_queue* q = fz_pick_queue(f, in);
    uint8_t k = fz_u8(in);
    size_t size = fz_size(in);
    accel_memory m = (accel_memory)((k & 3u) == 3u ? (int)fz_u8(in) - 128 : (int)(k & 3u) % 3);
    accel_buffer* out = (accel_buffer*)&k;
    accel_result r;
    if (size > FZ_BUF_MAX && (k & 4u)) size = FZ_BUF_MAX;
    r = accel_queue_alloc(q, size, m, (k & 0xF0u) == 0xF0u ? NULL : &out);
    FZ_EXPECT(r == ACCEL_OK || r == ACCEL_ERROR_INVALID_ARGUMENT || r == ACCEL_ERROR_OUT_OF_MEMORY, r, 0);
    if ((k & 0xF0u) == 0xF0u) { FZ_EXPECT(r == ACCEL_ERROR_INVALID_ARGUMENT, r, 0); return; }
    FZ_EXPECT((r == ACCEL_OK) == (out != NULL), r, 0);
    if (r != ACCEL_OK) return;
    FZ_EXPECT(accel_buffer_size(out) == size, accel_buffer_size(out), size);
    accel_buffer_destroy(f->b[i]);   /* a queue memory handle too: a free at no queue point */
    f->b[i] = out;
    f->qm[i] = 1;
}
/* A free ends the handle (its slot is cleared); one of a buffer not from accel_queue_alloc, or with no
   queue, is an error that frees nothing (the slot stays). */
static void fz_op_qfree(fz* f, fz_in* in) {
    int i = fz_u8(in) % FZ_B;
    accel_queue* q = fz_pick_queue(f, in);
    accel_queue_free(q, f->b[i]);
    if (q && f->b[i] && f->qm[i] == 1u) { f->b[i] = NULL; f->qm[i] = 0; }
}
static void fz_op_indirect(fz* f, fz_in* in) {
    accel_queue* q = fz_pick_queue(f, in);
    int i = fz_u8(in) % FZ_P;
    uint8_t k = fz_u8(in);
    accel_buffer* bufs[70];
    uint32_t consts[70], local[3];
    uint32_t nb = f->p[i] && !(k & 1u) ? f->p_buffers[i] : fz_u8(in) % 70u;
    uint32_t nc = f->p[i] && !(k & 1u) ? f->p_constants[i] : fz_u8(in) % 70u;
    for (uint32_t j = 0; j < 70u; j++) { bufs[j] = f->b[(j + k) % FZ_B]; consts[j] = j + 1u; }
    /* counts from a buffer no other op writes, small or over the limits (y, z): a buffer any op wrote
       could hold a valid grid of billions of groups, which only costs time (minutes, single-threaded) */
    static const uint32_t small[8] = { 0, 1, 2, 3, 5, 7, 16, 64 };
    uint32_t counts[3];
    for (int d = 0; d < 3; d++) {
        uint8_t c = fz_u8(in);
        counts[d] = d && (c & 0xF0u) == 0xF0u ? 65536u : small[c & 7u];
    }
    accel_buffer_write(f->counts, 0, counts, sizeof counts);
    for (int d = 0; d < 3; d++) local[d] = (k & 2u) ? fz_u32(in) : (uint32_t)(fz_u8(in) & 15u);
    accel_queue_exec_indirect(q, (k & 0xC0u) == 0xC0u ? NULL : f->p[i], bufs, nb, consts, nc,
                              (k & 0x30u) == 0x30u ? NULL : local, (k & 0x0Cu) == 0x0Cu ? NULL : f->counts,
                              (k & 0x08u) ? fz_size(in) : 0u);
}
/* A copy with one buffer of the second device: into it, or out of it. */
static void fz_op_peer(fz* f, fz_in* in) {
    accel_queue* q = fz_pick_queue(f, in);
    accel_buffer* mine = fz_pick_buffer(f, in);
    uint8_t k = fz_u8(in);
    accel_buffer* other = f->pb[k & 1u];
    size_t a = fz_size(in), b = fz_size(in), size = fz_size(in);
    if (k & 2u) accel_queue_copy(q, mine, a, other, b, size);
    else accel_queue_copy(q, other, a, (k & 4u) ? other : mine, b, size);   /* both the other's: an error */
}
static void fz_native_nop(const accel_native* n, void* user) { (void)n; (void)user; }
static void fz_op_native(fz* f, fz_in* in) {
    accel_queue* q = fz_pick_queue(f, in);
    uint8_t k = fz_u8(in);
    accel_peer_info pi;
    accel_queue_native(q, (k & 1u) ? NULL : fz_native_nop, f);
    if (k & 2u) {
        accel_result r = accel_device_peer_info((k & 4u) ? NULL : f->dev, f->dev2, (k & 8u) ? NULL : &pi);
        FZ_EXPECT(r == ((k & 12u) ? ACCEL_ERROR_INVALID_ARGUMENT : ACCEL_OK), r, k);
        if (r == ACCEL_OK) FZ_EXPECT(pi.copy, 0, 0);
    }
}
/* Every object of the old generation is stale afterwards (calls on it fail, destroys work): the slots
   are emptied, destroyed one by one or left to the device (the input decides). */
static void fz_op_recover(fz* f, fz_in* in) {
    uint8_t k = fz_u8(in);
    accel_result r = accel_device_recover(f->dev);
    FZ_EXPECT(r == ACCEL_OK || r == ACCEL_ERROR_UNSUPPORTED || r == ACCEL_ERROR_OUT_OF_MEMORY ||
              r == ACCEL_ERROR_DEVICE_LOST || r == ACCEL_ERROR_BACKEND || r == ACCEL_ERROR_UNAVAILABLE, r, 0);
    if (r == ACCEL_ERROR_UNSUPPORTED) return;
    for (int i = 0; i < FZ_Q; i++) { if (k & 1u) accel_queue_destroy(f->q[i]); f->q[i] = NULL; }
    for (int i = 0; i < FZ_B; i++) { if (k & 2u) accel_buffer_destroy(f->b[i]); f->b[i] = NULL; f->qm[i] = 0; }
    for (int i = 0; i < FZ_P; i++) { if (k & 4u) accel_program_destroy(f->p[i]); f->p[i] = NULL; }
    for (int i = 0; i < 4; i++) { if (k & 16u) accel_commands_destroy(f->l[i]); f->l[i] = NULL; }
    if (f->counts) {   /* stale too: a new one (NULL where the allocator refuses it now) */
        if (k & 2u) accel_buffer_destroy(f->counts);
        f->counts = NULL;
        accel_buffer_create(f->dev, &(accel_buffer_desc){ .size = 64 }, &f->counts);
    }
    for (int i = 0; i < FZ_S; i++) {
        if (f->s[i]) FZ_EXPECT(accel_signal_value(f->s[i]) > ACCEL_SIGNAL_MAX, accel_signal_value(f->s[i]), i);
        if (k & 8u) accel_signal_destroy(f->s[i]);
        f->s[i] = NULL;
        memset(&f->m[i], 0, sizeof f->m[i]);
    }
}
/* ==== command lists (inputs with bit 6 of the first byte) ==== */
/* record_begin on a queue, up to 7 commands of any kind (a wait or signal: a recording error of the
   list), record_end into a slot (the slot's list goes first, or the new one is dropped). */
static void fz_op_record(fz* f, fz_in* in) {
    accel_queue* q = fz_pick_queue(f, in);
    uint8_t k = fz_u8(in);
    int i = k % 4;
    accel_commands* out = NULL;
    accel_result r = accel_queue_record_begin(q);
    FZ_EXPECT(r == ACCEL_OK || r == ACCEL_ERROR_INVALID_ARGUMENT || r == ACCEL_ERROR_DEVICE_LOST, r, 0);
    for (uint32_t n = (uint32_t)(k >> 2) & 7u; n > 0; n--) {
        uint8_t op = fz_u8(in) % 8u;
        accel_buffer* b = fz_pick_buffer(f, in);
        size_t off = fz_size(in), size = fz_size(in);
        int j = fz_u8(in) % FZ_P;
        if (op == 0) accel_queue_copy(q, b, off, fz_pick_buffer(f, in), fz_size(in), size);
        else if (op == 1) accel_queue_fill(q, b, off, size, fz_u32(in));
        else if (op == 2) accel_queue_update(q, b, off, fz_scratch, size);
        else if (op == 3) accel_queue_barrier(q);
        else if (op == 4) accel_queue_signal(q, f->s[j], 1);   /* a recording error of the list */
        else if (op == 5) fz_op_exec(f, in);   /* on any queue: others record it as usual */
        else if (q && f->p[j]) fz_op_exec_exact(f, in, q, f->p[j], f->p_buffers[j], f->p_constants[j]);
    }
    r = accel_queue_record_end(q, (k & 0x40u) ? NULL : &out);
    FZ_EXPECT(fz_is_error_or_ok(r) && (r == ACCEL_OK || out == NULL), r, 0);
    if (!out) return;
    if (k & 0x80u) { accel_commands_destroy(out); return; }
    accel_commands_destroy(f->l[i]);
    f->l[i] = out;
}
/* A replay of a slot's list (or NULL) with up to 15 patches of any command, slot, buffer and value. */
static void fz_op_replay(fz* f, fz_in* in) {
    accel_queue* q = fz_pick_queue(f, in);
    uint8_t k = fz_u8(in);
    accel_patch p[15];
    uint32_t n = (uint32_t)(k >> 4) % 16u;
    for (uint32_t j = 0; j < n; j++) {
        uint8_t m = fz_u8(in);
        p[j].command = (m & 0x80u) ? fz_u32(in) : (uint32_t)(m & 7u);
        p[j].index = (m & 0x40u) ? fz_u32(in) : (uint32_t)((m >> 3) & 3u);
        p[j].buffer = (m & 0x20u) ? NULL : fz_pick_buffer(f, in);
        p[j].value = fz_u8(in);
    }
    accel_queue_replay(q, (k & 3u) == 3u ? NULL : f->l[k & 3u], (k & 4u) && n ? NULL : p, n);
}
/* The second device (v3 inputs): a CPU device on the same counting allocator, two buffers. */
static void fz_dev2_make(fz* f, const accel_device_desc* d) {
    accel_device_desc d2 = *d;
    accel_buffer_desc bd;
    d2.backend = accel_cpu_backend();
    d2.cpu_threads = 1;
    d2.debug = false;
    if (accel_device_create(&d2, &f->dev2) != ACCEL_OK) fz_violation("second device create failed", 0, 0);
    memset(&bd, 0, sizeof bd);
    for (int i = 0; i < 2; i++) {
        bd.size = i ? FZ_BUF_MAX : 64u;
        if (accel_buffer_create(f->dev2, &bd, &f->pb[i]) != ACCEL_OK) fz_violation("peer buffer create", i, 0);
    }
}

/* One input: a device, ops until the input ends, then teardown. Returns 0 (libFuzzer's convention). */
static int fz_run(const uint8_t* data, size_t size) {
    static fz f;
    fz_in in = { data, size, 0 };
    accel_device_desc d;
    uint8_t head = fz_u8(&in);
    int ops = 0;
    memset(&f, 0, sizeof f);
    test_alloc_init(&f.st);
    f.st.refuse_above = FZ_ALLOC_MAX;
    memset(&d, 0, sizeof d);
    d.allocator = test_allocator(&f.st);
    d.logger = test_logger();
    d.backend = test_g.backend ? test_g.backend : accel_cpu_backend();
    d.cpu_threads = 1u + (head & 3u) % 3u;
    d.debug = (head & 4u) != 0;
    f.lanes = FZ_THREADS ? d.cpu_threads : 1u;
    atomic_store(&fz_lanes, f.lanes);
    if (accel_device_create(&d, &f.dev) != ACCEL_OK) fz_violation("device create failed", 0, 0);
    f.v3 = (head & 0x80u) != 0;
    if (f.v3) fz_dev2_make(&f, &d);
    if (f.v3 && accel_buffer_create(f.dev, &(accel_buffer_desc){ .size = 64 }, &f.counts) != ACCEL_OK)
        fz_violation("counts buffer create failed", 0, 0);
    f.lists = (head & 0x40u) != 0;
    while (in.i < in.n && ops++ < 400) {
        uint8_t op = fz_u8(&in) % (f.lists ? OP_COUNT_LISTS : f.v3 ? OP_COUNT_V3 : OP_COUNT);
        if (!f.v3 && op >= OP_COUNT && op < OP_COUNT_V3) op = OP_MISC;   /* lists without v3's calls */
        switch (op) {
        case OP_BUFFER_CREATE: fz_op_buffer_create(&f, &in); break;
        case OP_BUFFER_DESTROY: { int i = fz_u8(&in) % FZ_B; accel_buffer_destroy(f.b[i]); f.b[i] = NULL; break; }
        case OP_PROGRAM_CREATE: fz_op_program_create(&f, &in); break;
        case OP_PROGRAM_DESTROY: { int i = fz_u8(&in) % FZ_P; accel_program_destroy(f.p[i]); f.p[i] = NULL; break; }
        case OP_SIGNAL_CREATE: fz_op_signal_create(&f, &in); break;
        case OP_SIGNAL_DESTROY: fz_op_signal_destroy(&f, &in); break;
        case OP_QUEUE_CREATE: fz_op_queue_create(&f, &in); break;
        case OP_QUEUE_DESTROY: fz_op_queue_destroy(&f, &in); break;
        case OP_WAIT: fz_op_record_signal(&f, &in, 1); break;
        case OP_SIGNAL: fz_op_record_signal(&f, &in, 0); break;
        case OP_EXEC: fz_op_exec(&f, &in); break;
        case OP_COPY: case OP_FILL: case OP_UPDATE: fz_op_copy_fill_update(&f, &in, op); break;
        case OP_BARRIER: accel_queue_barrier(fz_pick_queue(&f, &in)); break;
        case OP_SUBMIT: fz_op_submit(&f, &in, 0); break;
        case OP_FINISH: fz_op_submit(&f, &in, 1); break;
        case OP_SET: fz_op_set_fail(&f, &in, 0); break;
        case OP_FAIL: fz_op_set_fail(&f, &in, 1); break;
        case OP_HOST_WAIT: fz_op_host_wait(&f, &in); break;
        case OP_WAIT_MANY: fz_op_wait_many(&f, &in); break;
        case OP_IO: fz_op_io(&f, &in); break;
        case OP_OOM: {   /* the next k host allocations succeed, then they fail until the next op */
            atomic_store(&f.st.fail_after, (long)(fz_u8(&in) & 7u));
            op = fz_u8(&in) % OP_COUNT;
            if (op == OP_OOM || op == OP_QUEUE_DESTROY || op == OP_SIGNAL_DESTROY || op == OP_MISC) op = OP_SUBMIT;
            switch (op) {   /* the ops that allocate */
            case OP_BUFFER_CREATE: fz_op_buffer_create(&f, &in); break;
            case OP_PROGRAM_CREATE: fz_op_program_create(&f, &in); break;
            case OP_SIGNAL_CREATE: fz_op_signal_create(&f, &in); break;
            case OP_QUEUE_CREATE: fz_op_queue_create(&f, &in); break;
            case OP_EXEC: fz_op_exec(&f, &in); break;
            case OP_UPDATE: fz_op_copy_fill_update(&f, &in, OP_UPDATE); break;
            case OP_WAIT_MANY: fz_op_wait_many(&f, &in); break;
            default: fz_op_record_signal(&f, &in, op & 1); break;
            }
            atomic_store(&f.st.fail_after, -1);
            break;
        }
        case OP_QALLOC: fz_op_qalloc(&f, &in); break;
        case OP_QFREE: fz_op_qfree(&f, &in); break;
        case OP_INDIRECT: fz_op_indirect(&f, &in); break;
        case OP_PEER: fz_op_peer(&f, &in); break;
        case OP_NATIVE: fz_op_native(&f, &in); break;
        case OP_RECOVER: fz_op_recover(&f, &in); break;
        case OP_RECORD: fz_op_record(&f, &in); break;
        case OP_REPLAY: fz_op_replay(&f, &in); break;
        case OP_LIST_DESTROY: { int i = fz_u8(&in) % 4; accel_commands_destroy(f.l[i]); f.l[i] = NULL; break; }
        default: fz_op_misc(&f, &in); break;
        }
    }
    /* teardown: nothing may stay blocked, then the device releases everything */
    fz_unblock_all(&f, in.n ? in.p[in.n - 1] : 0);
    for (int i = 0; i < FZ_S; i++) if (f.s[i]) fz_signal_seen(&f, i);
    if (in.n & 1u) {   /* destroy objects one by one (queues finish first) ... */
        for (int i = 0; i < FZ_Q; i++) accel_queue_destroy(f.q[i]);
        for (int i = 0; i < FZ_B; i++) accel_buffer_destroy(f.b[i]);
        for (int i = 0; i < FZ_P; i++) accel_program_destroy(f.p[i]);
        for (int i = 0; i < FZ_S; i++) accel_signal_destroy(f.s[i]);
        for (int i = 0; i < 4; i++) accel_commands_destroy(f.l[i]);
    }
    if (f.v3 && (in.n & 2u)) accel_device_destroy(f.dev2);   /* the peer device first, or last */
    accel_device_destroy(f.dev);   /* ... or leave them to the device */
    if (f.v3 && !(in.n & 2u)) accel_device_destroy(f.dev2);
    FZ_EXPECT(atomic_load(&f.st.outstanding) == 0, atomic_load(&f.st.outstanding), 0);
    FZ_EXPECT(atomic_load(&f.st.size_mismatch) == 0 && atomic_load(&f.st.bad_align) == 0, 0, 0);
    return 0;
}

#if !defined(FUZZ_API_NO_MAIN)
int LLVMFuzzerInitialize(int* argc, char*** argv);
int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
int LLVMFuzzerInitialize(int* argc, char*** argv) {
    (void)argc; (void)argv;
    test_begin(1, NULL);   /* picks the backend from ACCEL_TEST_BACKEND (default cpu) */
    if (!test_g.backend || test_g.all_skip) {
        fprintf(stderr, "fuzz_api: %s\n", test_g.all_skip_reason);
        exit(77);
    }
    return 0;
}
int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) { return fz_run(data, size); }
#endif

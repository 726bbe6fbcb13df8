/* bench/decode.c — a small transformer-style decode loop (a real workload) through accel's CPU backend
   and through OpenMP, same code, same run.

   Build and run (Linux):
       gcc -std=c11 -O2 -fopenmp -I. bench/decode.c -o build/bench_decode -lpthread -lm    (make bench-decode)
       ./build/bench_decode [--quick] [--contend]   (--contend: another process spins 90% of the time on the last usable CPU)

   The model: the shape of a 15M-parameter Llama (dim 288, 6 layers, 6 heads, FFN 768, vocabulary
   32000, context 256), random weights made at start-up, RMS norms, rotary positions, attention over a
   KV cache, a SwiGLU FFN and the classifier; greedy decoding of TOKENS tokens. Both sides run the same
   row/head functions below. accel: the weights are one read_only host_ptr buffer and each tensor is a
   buffer view of it; the KV cache is one buffer with a view per layer; one batch (one exec per step)
   and one submit + wait per token, recorded anew each token, and (a second row) replayed from a list
   recorded once, the position and the cache rows patched in (accel_queue_replay). OpenMP: `parallel for` (static schedule) over the same row blocks.
   The tokens both produce must be identical (the arithmetic per row is the same), else the bench fails.
   Printed: tokens/s for both and the ratio, at 1, 2, 4, ... up to the usable CPUs (each count run as
   interleaved rounds, median). */
#define _GNU_SOURCE 1
#define ACCEL_IMPLEMENTATION
#include "accel.h"
#include "bench/bench.h"

#include <math.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#ifndef _OPENMP
#  error "bench/decode.c needs OpenMP for its baseline: build with -fopenmp"
#endif
#include <omp.h>

enum { DIM = 288, LAYERS = 6, HEADS = 6, HD = DIM / HEADS, FFN = 768, VOCAB = 32000, CTX = 256, ROWS = 16 };
static int tokens = 64, rounds = 5;
static bool contended;   /* --contend: another process burns most of a core meanwhile */

/* ==== weights: one block of floats, tensors at fixed offsets ==== */
enum { T_ATT_NORM, T_WQ, T_WK, T_WV, T_WO, T_FFN_NORM, T_W1, T_W2, T_W3, T_COUNT };
static const size_t tensor_floats[T_COUNT] = { DIM, DIM * DIM, DIM * DIM, DIM * DIM, DIM * DIM, DIM,
                                               (size_t)FFN * DIM, (size_t)DIM * FFN, (size_t)FFN * DIM };
typedef struct layer_off { size_t t[T_COUNT]; } layer_off;
static layer_off lo[LAYERS];
static size_t off_embed, off_final_norm, off_cls, n_weights;
static float* weights;

static size_t take(size_t n) { size_t o = n_weights; n_weights += (n + 63) & ~(size_t)63; return o; }
static void weights_make(void) {
    off_embed = take((size_t)VOCAB * DIM);
    for (int l = 0; l < LAYERS; l++) {
        for (int t = 0; t < T_COUNT; t++) lo[l].t[t] = take(tensor_floats[t]);
    }
    off_final_norm = take(DIM);
    off_cls = take((size_t)VOCAB * DIM);
    weights = aligned_alloc(64, n_weights * sizeof(float));
    if (!weights) { fprintf(stderr, "decode: out of memory\n"); exit(2); }
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < n_weights; i++) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        weights[i] = ((float)(x >> 40) / (float)(1u << 24) - 0.5f) * 0.1f;
    }
}

/* ==== the math, shared by both sides ==== */
/* Out of line, so that both sides run the same machine code (inlined into the OpenMP loops with the
   sizes known, the compiler would specialise them for that side only). */
#define SHARED __attribute__((noinline))
SHARED static void rmsnorm(float* out, const float* x, const float* w) {
    float ss = 0;
    for (int i = 0; i < DIM; i++) ss += x[i] * x[i];
    ss = 1.0f / sqrtf(ss / DIM + 1e-5f);
    for (int i = 0; i < DIM; i++) out[i] = w[i] * (ss * x[i]);
}
/* out[r] = w[r, :] . x for rows [r0, r1) of a rows x n matrix */
SHARED static void matmul_rows(float* out, const float* x, const float* w, int n, int r0, int r1) {
    for (int r = r0; r < r1; r++) {
        const float* wr = w + (size_t)r * n;
        float s = 0;
        for (int j = 0; j < n; j++) s += wr[j] * x[j];
        out[r] = s;
    }
}
SHARED static void rope(float* q, float* k, int pos) {
    for (int i = 0; i < DIM; i += 2) {
        float f = 1.0f / powf(10000.0f, (float)(i % HD) / (float)HD), a = (float)pos * f, c = cosf(a), s = sinf(a);
        float q0 = q[i], q1 = q[i + 1], k0 = k[i], k1 = k[i + 1];
        q[i] = q0 * c - q1 * s; q[i + 1] = q0 * s + q1 * c;
        k[i] = k0 * c - k1 * s; k[i + 1] = k0 * s + k1 * c;
    }
}
/* one head: scores over positions 0..pos of the layer's cache, softmax, weighted sum of values */
SHARED static void attend_head(float* out, const float* q, const float* kc, const float* vc, int h, int pos) {
    float att[CTX], mx = -1e30f, sum = 0;
    for (int t = 0; t <= pos; t++) {
        float s = 0;
        for (int i = 0; i < HD; i++) s += q[h * HD + i] * kc[(size_t)t * DIM + h * HD + i];
        att[t] = s / sqrtf((float)HD);
        if (att[t] > mx) mx = att[t];
    }
    for (int t = 0; t <= pos; t++) { att[t] = expf(att[t] - mx); sum += att[t]; }
    for (int i = 0; i < HD; i++) {
        float v = 0;
        for (int t = 0; t <= pos; t++) v += att[t] * vc[(size_t)t * DIM + h * HD + i];
        out[h * HD + i] = v / sum;
    }
}
SHARED static void swiglu_rows(float* h1, const float* h3, int r0, int r1) {
    for (int i = r0; i < r1; i++) h1[i] = h1[i] / (1.0f + expf(-h1[i])) * h3[i];
}
static int argmax(const float* v, int n) {
    int best = 0;
    for (int i = 1; i < n; i++) if (v[i] > v[best]) best = i;
    return best;
}

/* ==== accel kernels: a group = ROWS rows (matmuls) or one head; constants carry n and pos ==== */
static void k_rmsnorm(const accel_dispatch* d) { rmsnorm((float*)d->buffers[0], (const float*)d->buffers[1], (const float*)d->buffers[2]); }
static void k_matmul(const accel_dispatch* d) {   /* out, x, w; n, rows */
    int r0 = (int)(d->group_id[0] * ROWS), r1 = r0 + ROWS > (int)d->constants[1] ? (int)d->constants[1] : r0 + ROWS;
    matmul_rows((float*)d->buffers[0], (const float*)d->buffers[1], (const float*)d->buffers[2], (int)d->constants[0], r0, r1);
}
static void k_qkv_rope(const accel_dispatch* d) { /* q, k row of the cache, v row: q and k rotated; pos */
    rope((float*)d->buffers[0], (float*)d->buffers[1], (int)d->constants[0]);
}
static void k_attend(const accel_dispatch* d) {   /* out, q, k cache, v cache; pos */
    attend_head((float*)d->buffers[0], (const float*)d->buffers[1], (const float*)d->buffers[2], (const float*)d->buffers[3],
                (int)d->group_id[0], (int)d->constants[0]);
}
static void k_add(const accel_dispatch* d) {      /* x += y */
    float* x = (float*)d->buffers[0];
    const float* y = (const float*)d->buffers[1];
    for (int i = 0; i < DIM; i++) x[i] += y[i];
}
static void k_swiglu(const accel_dispatch* d) {
    int r0 = (int)(d->group_id[0] * ROWS);
    swiglu_rows((float*)d->buffers[0], (const float*)d->buffers[1], r0, r0 + ROWS > FFN ? FFN : r0 + ROWS);
}

static void check(accel_result r, const char* what) {
    if (r != ACCEL_OK) { fprintf(stderr, "decode: %s failed: %s\n", what, accel_result_string(r)); exit(2); }
}

/* ==== the accel side ==== */
typedef struct acc_model {
    accel_device* dev;
    accel_queue* q;
    accel_signal* s;
    uint64_t value;
    accel_buffer *w, *x, *xb, *q_, *att, *h1, *h3, *logits, *kc, *vc;
    accel_buffer *kl[LAYERS], *vl[LAYERS];   /* views: one layer of the caches */
    accel_buffer *lw[LAYERS][T_COUNT], *final_norm, *cls;
    accel_program *norm, *mm, *rp, *at, *add, *sw;
    accel_commands* list;                    /* one token's commands, recorded once (the replayed side) */
} acc_model;

static accel_buffer* acc_buf(acc_model* m, size_t floats) {
    accel_buffer* b;
    check(accel_buffer_create(m->dev, &(accel_buffer_desc){ .size = floats * sizeof(float), .memory = ACCEL_MEMORY_HOST }, &b), "buffer");
    return b;
}
static accel_buffer* acc_view(accel_buffer* root, size_t off_floats, size_t floats) {
    accel_buffer* v;
    check(accel_buffer_view_create(root, off_floats * sizeof(float), floats * sizeof(float), &v), "accel_buffer_view_create");
    return v;
}
static accel_program* acc_prog(acc_model* m, const char* name, accel_cpu_kernel fn, uint32_t nb, uint32_t nc) {
    accel_program* p;
    check(accel_program_create(m->dev, &(accel_program_desc){ .name = name, .cpu = fn, .buffer_count = nb, .constant_count = nc }, &p), name);
    return p;
}
static void acc_record(acc_model* m, int pos);
static void acc_open(acc_model* m, uint32_t threads) {
    memset(m, 0, sizeof *m);
    check(accel_device_create(&(accel_device_desc){ .cpu_threads = threads, .label = "decode" }, &m->dev), "accel_device_create");
    check(accel_queue_create(m->dev, ACCEL_QUEUE_COMPUTE, &m->q), "accel_queue_create");
    check(accel_signal_create(m->dev, 0, &m->s), "accel_signal_create");
    check(accel_buffer_create(m->dev, &(accel_buffer_desc){ .size = n_weights * sizeof(float), .host_ptr = weights, .read_only = true }, &m->w), "wrap");
    m->x = acc_buf(m, DIM); m->xb = acc_buf(m, DIM); m->q_ = acc_buf(m, DIM); m->att = acc_buf(m, DIM);
    m->h1 = acc_buf(m, FFN); m->h3 = acc_buf(m, FFN); m->logits = acc_buf(m, VOCAB);
    m->kc = acc_buf(m, (size_t)LAYERS * CTX * DIM); m->vc = acc_buf(m, (size_t)LAYERS * CTX * DIM);
    for (int l = 0; l < LAYERS; l++) {
        for (int t = 0; t < T_COUNT; t++) m->lw[l][t] = acc_view(m->w, lo[l].t[t], tensor_floats[t]);
        m->kl[l] = acc_view(m->kc, (size_t)l * CTX * DIM, (size_t)CTX * DIM);
        m->vl[l] = acc_view(m->vc, (size_t)l * CTX * DIM, (size_t)CTX * DIM);
    }
    m->final_norm = acc_view(m->w, off_final_norm, DIM);
    m->cls = acc_view(m->w, off_cls, (size_t)VOCAB * DIM);
    m->norm = acc_prog(m, "rmsnorm", k_rmsnorm, 3, 0); m->mm = acc_prog(m, "matmul", k_matmul, 3, 2);
    m->rp = acc_prog(m, "rope", k_qkv_rope, 2, 1); m->at = acc_prog(m, "attend", k_attend, 4, 1);
    m->add = acc_prog(m, "add", k_add, 2, 0); m->sw = acc_prog(m, "swiglu", k_swiglu, 2, 0);
    check(accel_queue_record_begin(m->q), "accel_queue_record_begin");
    acc_record(m, 0);
    check(accel_queue_record_end(m->q, &m->list), "accel_queue_record_end");
}
static void acc_mm(acc_model* m, accel_buffer* out, accel_buffer* x, accel_buffer* w, uint32_t n, uint32_t rows) {
    accel_buffer* b[3] = { out, x, w };
    uint32_t c[2] = { n, rows };
    accel_queue_exec(m->q, m->mm, b, 3, c, 2, accel_exec_1d((rows + ROWS - 1) / ROWS, 1));
}
static void acc_exec(acc_model* m, accel_program* p, accel_buffer** b, uint32_t nb, const uint32_t* c, uint32_t nc, uint32_t groups) {
    accel_queue_exec(m->q, p, b, nb, c, nc, accel_exec_1d(groups, 1));
}
/* This position's row of layer l's key and value caches (views; a batch or a replay keeps them). */
static void acc_rows(acc_model* m, int l, int pos, accel_buffer** krow, accel_buffer** vrow) {
    check(accel_buffer_view_create(m->kl[l], (size_t)pos * DIM * sizeof(float), DIM * sizeof(float), krow), "view");
    check(accel_buffer_view_create(m->vl[l], (size_t)pos * DIM * sizeof(float), DIM * sizeof(float), vrow), "view");
}
/* The commands of one token at position pos: the layers (L_CMDS each, in this order), then the
   logits. The replayed side patches these: */
enum { L_CMDS = 14, L_K = 2, L_V = 3, L_ROPE = 4, L_ATTEND = 5 };
static void acc_record(acc_model* m, int pos) {
    uint32_t p = (uint32_t)pos;
    for (int l = 0; l < LAYERS; l++) {
        accel_buffer *krow, *vrow;
        acc_rows(m, l, pos, &krow, &vrow);
        accel_buffer* nb[3] = { m->xb, m->x, m->lw[l][T_ATT_NORM] };
        acc_exec(m, m->norm, nb, 3, NULL, 0, 1);
        acc_mm(m, m->q_, m->xb, m->lw[l][T_WQ], DIM, DIM);
        acc_mm(m, krow, m->xb, m->lw[l][T_WK], DIM, DIM);
        acc_mm(m, vrow, m->xb, m->lw[l][T_WV], DIM, DIM);
        accel_buffer* rb[2] = { m->q_, krow };
        acc_exec(m, m->rp, rb, 2, &p, 1, 1);
        accel_buffer* ab[4] = { m->att, m->q_, m->kl[l], m->vl[l] };
        acc_exec(m, m->at, ab, 4, &p, 1, HEADS);
        acc_mm(m, m->xb, m->att, m->lw[l][T_WO], DIM, DIM);
        accel_buffer* xb2[2] = { m->x, m->xb };
        acc_exec(m, m->add, xb2, 2, NULL, 0, 1);
        accel_buffer* fb[3] = { m->xb, m->x, m->lw[l][T_FFN_NORM] };
        acc_exec(m, m->norm, fb, 3, NULL, 0, 1);
        acc_mm(m, m->h1, m->xb, m->lw[l][T_W1], DIM, FFN);
        acc_mm(m, m->h3, m->xb, m->lw[l][T_W3], DIM, FFN);
        accel_buffer* sb[2] = { m->h1, m->h3 };
        acc_exec(m, m->sw, sb, 2, NULL, 0, (FFN + ROWS - 1) / ROWS);
        acc_mm(m, m->xb, m->h1, m->lw[l][T_W2], FFN, DIM);
        acc_exec(m, m->add, xb2, 2, NULL, 0, 1);
        accel_buffer_destroy(krow);   /* the recorded batch keeps them */
        accel_buffer_destroy(vrow);
    }
    accel_buffer* nb[3] = { m->xb, m->x, m->final_norm };
    acc_exec(m, m->norm, nb, 3, NULL, 0, 1);
    acc_mm(m, m->logits, m->xb, m->cls, DIM, VOCAB);
}
/* Submits what is recorded, waits, returns the next token (the logits' argmax). */
static int acc_run(acc_model* m) {
    accel_queue_signal(m->q, m->s, ++m->value);
    check(accel_queue_submit(m->q), "accel_queue_submit");
    check(accel_signal_wait(m->s, m->value, ACCEL_WAIT_FOREVER), "accel_signal_wait");
    return argmax((const float*)accel_buffer_map(m->logits), VOCAB);
}
static void acc_embed(acc_model* m, int token) {
    memcpy(accel_buffer_map(m->x), weights + off_embed + (size_t)token * DIM, DIM * sizeof(float));
}
/* One token recorded anew: embedding in x (host), the layers, the logits; returns the next token. */
static int acc_token(acc_model* m, int token, int pos) {
    acc_embed(m, token);
    acc_record(m, pos);
    return acc_run(m);
}
/* One token replayed: the list recorded at position 0, with this position patched in (the rows of the
   caches the K and V matmuls write and rope rotates, the position rope and attend read). */
static int acc_token_replayed(acc_model* m, int token, int pos) {
    accel_patch p[LAYERS * 5];
    accel_buffer *krow[LAYERS], *vrow[LAYERS];
    acc_embed(m, token);
    for (uint32_t l = 0; l < LAYERS; l++) {
        uint32_t c = l * L_CMDS;
        acc_rows(m, (int)l, pos, &krow[l], &vrow[l]);
        p[5 * l + 0] = (accel_patch){ c + L_K, 0, krow[l], 0 };
        p[5 * l + 1] = (accel_patch){ c + L_V, 0, vrow[l], 0 };
        p[5 * l + 2] = (accel_patch){ c + L_ROPE, 1, krow[l], 0 };
        p[5 * l + 3] = (accel_patch){ c + L_ROPE, 0, NULL, (uint32_t)pos };
        p[5 * l + 4] = (accel_patch){ c + L_ATTEND, 0, NULL, (uint32_t)pos };
    }
    accel_queue_replay(m->q, m->list, p, LAYERS * 5);
    for (int l = 0; l < LAYERS; l++) { accel_buffer_destroy(krow[l]); accel_buffer_destroy(vrow[l]); }
    return acc_run(m);
}
static void acc_close(acc_model* m) { accel_device_destroy(m->dev); }   /* releases everything on it */

/* ==== the OpenMP side ==== */
typedef struct omp_model { float x[DIM], xb[DIM], q[DIM], att[DIM], h1[FFN], h3[FFN], *logits, *kc, *vc; } omp_model;
static void omp_mm(float* out, const float* x, const float* w, int n, int rows, int nt) {
    int blocks = (rows + ROWS - 1) / ROWS;
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int b = 0; b < blocks; b++) matmul_rows(out, x, w, n, b * ROWS, b * ROWS + ROWS > rows ? rows : b * ROWS + ROWS);
}
static int omp_token(omp_model* m, int token, int pos, int nt) {
    memcpy(m->x, weights + off_embed + (size_t)token * DIM, sizeof m->x);
    for (int l = 0; l < LAYERS; l++) {
        float* kc = m->kc + (size_t)l * CTX * DIM;
        float* vc = m->vc + (size_t)l * CTX * DIM;
        rmsnorm(m->xb, m->x, weights + lo[l].t[T_ATT_NORM]);
        omp_mm(m->q, m->xb, weights + lo[l].t[T_WQ], DIM, DIM, nt);
        omp_mm(kc + (size_t)pos * DIM, m->xb, weights + lo[l].t[T_WK], DIM, DIM, nt);
        omp_mm(vc + (size_t)pos * DIM, m->xb, weights + lo[l].t[T_WV], DIM, DIM, nt);
        rope(m->q, kc + (size_t)pos * DIM, pos);
#pragma omp parallel for num_threads(nt) schedule(static)
        for (int h = 0; h < HEADS; h++) attend_head(m->att, m->q, kc, vc, h, pos);
        omp_mm(m->xb, m->att, weights + lo[l].t[T_WO], DIM, DIM, nt);
        for (int i = 0; i < DIM; i++) m->x[i] += m->xb[i];
        rmsnorm(m->xb, m->x, weights + lo[l].t[T_FFN_NORM]);
        omp_mm(m->h1, m->xb, weights + lo[l].t[T_W1], DIM, FFN, nt);
        omp_mm(m->h3, m->xb, weights + lo[l].t[T_W3], DIM, FFN, nt);
#pragma omp parallel for num_threads(nt) schedule(static)
        for (int b = 0; b < (FFN + ROWS - 1) / ROWS; b++) swiglu_rows(m->h1, m->h3, b * ROWS, b * ROWS + ROWS > FFN ? FFN : b * ROWS + ROWS);
        omp_mm(m->xb, m->h1, weights + lo[l].t[T_W2], FFN, DIM, nt);
        for (int i = 0; i < DIM; i++) m->x[i] += m->xb[i];
    }
    rmsnorm(m->xb, m->x, weights + off_final_norm);
    omp_mm(m->logits, m->xb, weights + off_cls, DIM, VOCAB, nt);
    return argmax(m->logits, VOCAB);
}

/* ==== runs ==== */
static double run_acc(acc_model* m, int* out, int (*token_fn)(acc_model*, int, int)) {
    uint64_t t0 = bench_now_ns();
    int tok = 1;
    for (int p = 0; p < tokens; p++) out[p] = tok = token_fn(m, tok, p);
    return (double)tokens / ((double)(bench_now_ns() - t0) / 1e9);
}
static double run_omp(omp_model* m, int nt, int* out) {
    uint64_t t0 = bench_now_ns();
    int tok = 1;
    for (int p = 0; p < tokens; p++) out[p] = tok = omp_token(m, tok, p, nt);
    return (double)tokens / ((double)(bench_now_ns() - t0) / 1e9);
}
/* One row: an accel side's tok/s (acc) beside OpenMP's (omp), medians, and the paired ratio. */
static void decode_row(const char* kind, const char* how, uint32_t threads, double* acc, double* omp) {
    char fig[40], title[48];   /* bench_row's sizes: snprintf cuts, never overflows */
    double* pr = calloc((size_t)rounds, sizeof(double));
    for (int r = 0; r < rounds; r++) pr[r] = acc[r] / omp[r];
    snprintf(fig, sizeof fig, "decode_%s_%u%s", kind, threads, contended ? "_contended" : "");
    snprintf(title, sizeof title, "decode 15M%s, %u thread%s%s", how, threads, threads == 1 ? "" : "s", contended ? ", contended" : "");
    bench_row* row = bench_row_add(fig, title, "tok/s", bench_median(acc, (size_t)rounds), "OpenMP", bench_median(omp, (size_t)rounds),
                                   BENCH_TARGET_RATIO, BENCH_GE, 1.0);
    bench_row_extra(row, "threads", threads);
    bench_row_extra(row, "tokens", tokens);
    bench_row_extra(row, "paired_ratio", bench_median(pr, (size_t)rounds));
    free(pr);
}
/* Rounds of the three sides (recorded anew, replayed, OpenMP), their order rotating each round. */
static void fig_threads(uint32_t threads, omp_model* om) {
    acc_model am;
    int ta[CTX], tr[CTX], to[CTX];
    double* a = calloc((size_t)rounds, sizeof(double));
    double* rp = calloc((size_t)rounds, sizeof(double));
    double* o = calloc((size_t)rounds, sizeof(double));
    acc_open(&am, threads);
    for (int r = 0; r < rounds; r++) {
        for (int k = 0; k < 3; k++) {
            bench_sleep_ns(30000000ull);
            switch ((r + k) % 3) {
            case 0: a[r] = run_acc(&am, ta, acc_token); break;
            case 1: rp[r] = run_acc(&am, tr, acc_token_replayed); break;
            default: o[r] = run_omp(om, (int)threads, to); break;
            }
        }
        if (memcmp(ta, to, (size_t)tokens * sizeof(int)) != 0) bench_fail("decode: accel and OpenMP produced different tokens (%u threads)", threads);
        if (memcmp(tr, to, (size_t)tokens * sizeof(int)) != 0) bench_fail("decode: accel replayed and OpenMP produced different tokens (%u threads)", threads);
    }
    decode_row("tokens_per_s", " shape", threads, a, o);
    decode_row("replayed_tok_s", ", replayed", threads, rp, o);
    free(a); free(rp); free(o);
    acc_close(&am);
}

/* --contend: a child process that spins 9 ms of every 10 (most of one core: the last CPU the bench may
   use), until the parent kills it (or dies: PR_SET_PDEATHSIG). Returns its pid, -1 on failure. */
static pid_t hog_start(int cpu) {
    pid_t pid = fork();
    if (pid != 0) return pid;
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (cpu >= 0) {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        sched_setaffinity(0, sizeof one, &one);
    }
    for (volatile uint64_t x = 0;;) {
        uint64_t t0 = bench_now_ns();
        while (bench_now_ns() - t0 < 9000000u) x++;
        bench_sleep_ns(1000000u);
    }
}
static void hog_stop(pid_t pid) {
    if (pid <= 0) return;
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

int main(int argc, char** argv) {
    cpu_set_t set;
    uint32_t cpus = 1;
    omp_model om;
    pid_t hog = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) { tokens = 16; rounds = 2; }
        else if (strcmp(argv[i], "--contend") == 0) contended = true;
        else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc && atoi(argv[i + 1]) > 0) rounds = atoi(argv[++i]);
        else {
            printf("usage: %s [--quick] [--contend] [--rounds N]\n"
                   "  --contend  a second process spins 90%% of the time on the last usable CPU meanwhile\n", argv[0]);
            return 2;
        }
    }
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) cpus = (uint32_t)CPU_COUNT(&set);
    weights_make();
    om.logits = malloc(VOCAB * sizeof(float));
    om.kc = calloc((size_t)LAYERS * CTX * DIM, sizeof(float));
    om.vc = calloc((size_t)LAYERS * CTX * DIM, sizeof(float));
    if (!om.logits || !om.kc || !om.vc) { fprintf(stderr, "decode: out of memory\n"); return 2; }
    omp_set_dynamic(0);
    printf("decode bench: %.1f M parameters, %d tokens x %d rounds, usable CPUs %u%s\n", (double)n_weights / 1e6, tokens, rounds, cpus,
           contended ? ", another process spinning 90% of the time on the last one" : "");
    fflush(stdout);
    if (contended) {
        int last = -1;
        for (int c = 0; c < CPU_SETSIZE; c++) if (CPU_ISSET(c, &set)) last = c;
        if ((hog = hog_start(last)) < 0) { fprintf(stderr, "decode: fork failed\n"); return 2; }
    }
    for (uint32_t t = 1; t <= cpus; t *= 2) fig_threads(t, &om);
    if (cpus & (cpus - 1)) fig_threads(cpus, &om);
    hog_stop(hog);
    int missed = bench_report(contended ? "accel CPU backend vs OpenMP: a transformer decode loop, contended" : "accel CPU backend vs OpenMP: a transformer decode loop");
    printf("%d target(s) missed, %d verification failure(s)\n", missed, bench_failures());
    free(om.logits); free(om.kc); free(om.vc); free(weights);
    return bench_failures() ? 1 : 0;
}

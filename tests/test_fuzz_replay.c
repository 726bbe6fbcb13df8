/* tests/test_fuzz_replay.c — the API fuzzer (tests/fuzz_api.c) inside the normal suite, so every
   configuration (threads, no threads, WASM, C++, sanitizers) runs its inputs:
     - tests/fuzz_corpus/regress-NN: inputs that once found a problem (kept forever);
     - tests/fuzz_corpus/seed-NN: the committed seed corpus of `make fuzz`;
     - a fixed batch of pseudo-random inputs.
   Each input runs one device through a sequence of API calls and checks the contract after each call
   (see fuzz_api.c); a violation traps, which run.sh reports as a crash of this program. */
#define FUZZ_API_NO_MAIN
#include "fuzz_api.c"

/* Reads tests/fuzz_corpus/PREFIX-01, -02, ... until one is missing; runs each. Returns how many ran. */
static int replay_files(const char* prefix) {
    static uint8_t buf[1 << 16];
    int n = 0;
    for (int i = 1; i < 1000; i++) {
        char path[128];
        FILE* fp;
        size_t len;
        snprintf(path, sizeof path, "tests/fuzz_corpus/%s-%02d", prefix, i);
        if ((fp = fopen(path, "rb")) == NULL) break;
        len = fread(buf, 1, sizeof buf, fp);
        fclose(fp);
        if (test_g.verbose) fprintf(stderr, "  %s (%zu bytes)\n", path, len);
        fz_run(buf, len);
        n++;
    }
    return n;
}

TEST(fuzz_regression_inputs) {
    FILE* fp = fopen("tests/fuzz_corpus/seed-01", "rb");
    if (!fp) SKIP("tests/fuzz_corpus not found (run from the repository root)");
    fclose(fp);
    int n = replay_files("regress");
    CHECK(n >= 1);
}

TEST(fuzz_seed_corpus) {
    FILE* fp = fopen("tests/fuzz_corpus/seed-01", "rb");
    if (!fp) SKIP("tests/fuzz_corpus not found (run from the repository root)");
    fclose(fp);
    CHECK(replay_files("seed") >= 10);
}

/* Pseudo-random inputs (xorshift, fixed seed), biased so that op bytes hit every op. */
TEST(fuzz_random_inputs) {
    static uint8_t buf[512];
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (int k = 0; k < 300; k++) {
        size_t len = 16 + (size_t)(x % (sizeof buf - 16));
        for (size_t i = 0; i < len; i++) {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17;
            buf[i] = (uint8_t)(x >> 24);
        }
        fz_run(buf, len);
    }
    CHECK(1);
}

int main(int argc, char** argv) {
    test_begin(argc, argv);
    test_only_backends("cpu", "the fuzzer's kernels are CPU functions only (a GPU backend answers ACCEL_ERROR_UNSUPPORTED)");
    RUN(fuzz_regression_inputs);
    RUN(fuzz_seed_corpus);
    RUN(fuzz_random_inputs);
    return test_end();
}

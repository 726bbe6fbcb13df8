// bench/tbb.cpp — the oneTBB side of bench/cpu.c's figure 9 (task systems): the same three shapes as
// accel's, with oneTBB's own idioms, behind a C interface. Built by `make bench` where oneTBB is
// installed (libtbb-dev), and linked into bench_cpu with -DBENCH_HAVE_TBB.
//
//   chain      n dependent tiny tasks: each task runs the body, then spawns its successor
//   fork-join  parallel_for over `items` in blocks of `grain` (the body marks each item)
//   round trip task_group::run of one tiny task, then task_group::wait (the waiting thread may run
//              the task itself: no hand-off at all)
//
// Every shape runs inside one task_arena of `threads` threads, made once.
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>

#include <cstdint>
#include <new>

namespace {

oneapi::tbb::task_arena* arena = nullptr;

struct chain_step {
    oneapi::tbb::task_group* tg;
    volatile uint32_t* counter;
    uint32_t left;
    void operator()() const {
        *counter = *counter + 1;
        if (left > 1) tg->run(chain_step{ tg, counter, left - 1 });
    }
};

}  // namespace

extern "C" {

int bench_tbb_init(int threads) {
    if (arena) return 1;
    arena = new (std::nothrow) oneapi::tbb::task_arena(threads);
    if (!arena) return 0;
    arena->initialize();
    return 1;
}

void bench_tbb_fini(void) {
    delete arena;
    arena = nullptr;
}

void bench_tbb_chain(uint32_t n, volatile uint32_t* counter) {
    arena->execute([&] {
        oneapi::tbb::task_group tg;
        tg.run(chain_step{ &tg, counter, n });
        tg.wait();
    });
}

void bench_tbb_fork_join(uint32_t items, uint32_t grain, uint32_t* marks) {
    arena->execute([&] {
        oneapi::tbb::parallel_for(
            oneapi::tbb::blocked_range<uint32_t>(0, items, grain),
            [&](const oneapi::tbb::blocked_range<uint32_t>& r) {
                for (uint32_t i = r.begin(); i != r.end(); i++) marks[i] += 1;
            },
            oneapi::tbb::simple_partitioner());
    });
}

// Inside the arena: a round trip is run + wait from a thread of the arena, as a task system's user
// would submit from its own thread. The loop is here so that the arena's entry is paid once per
// call; `times` (n entries) receives each round trip's duration in ns from `clock`.
void bench_tbb_round_trips(uint32_t n, volatile uint32_t* counter, double* times, uint64_t (*clock)(void)) {
    arena->execute([&] {
        oneapi::tbb::task_group tg;
        for (uint32_t i = 0; i < n; i++) {
            uint64_t t0 = clock();
            tg.run([counter] { *counter = *counter + 1; });
            tg.wait();
            times[i] = (double)(clock() - t0);
        }
    });
}

}  // extern "C"

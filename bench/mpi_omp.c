/* bench/mpi_omp.c — examples/mpi_halo.c's stencil written the usual way, for bench/mpi.sh to compare.

   Each rank owns n cells (plus a ghost cell at each end) of a rod of size*n cells. Per step: a blocking
   MPI_Sendrecv each way for the ghost cells, then `#pragma omp parallel for` over all n cells; every K
   steps the checksum (an OpenMP sum) is all-reduced (MPI_Allreduce). No overlap: the exchange is on the
   critical path of every step.

     mpirun -np 2 build/bench_mpi_omp [--cells N] [--steps S] [--every K]     (OMP_NUM_THREADS per rank)

   Rank 0 prints one line: "mpi_halo omp wall_ms W exch_us E checksum C" (the slowest rank's wall time
   and time per step in MPI_Sendrecv; C the last all-reduced checksum). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ALPHA 0.25

static double initial(unsigned long long global_index) {   /* as in examples/mpi_halo.c */
    return (double)((global_index * 2654435761u) % 1000u) / 1000.0;
}

static unsigned option(int argc, char** argv, const char* name, unsigned fallback) {
    for (int i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], name)) return (unsigned)strtoul(argv[i + 1], NULL, 10);
    return fallback;
}

int main(int argc, char** argv) {
    int rank, size, left, right;
    unsigned n, steps, every;
    double *a, *b, t0, t1, exch = 0, checksum = 0, mine[2], all[2];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    n = option(argc, argv, "--cells", 65536);
    steps = option(argc, argv, "--steps", 100);
    every = option(argc, argv, "--every", 10);
    left = rank > 0 ? rank - 1 : MPI_PROC_NULL;
    right = rank + 1 < size ? rank + 1 : MPI_PROC_NULL;
    a = (double*)malloc(((size_t)n + 2) * sizeof(double));
    b = (double*)malloc(((size_t)n + 2) * sizeof(double));
    if (!a || !b || n < 4 || every < 1) {
        fprintf(stderr, "mpi_omp: bad arguments or out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    a[0] = a[n + 1] = b[0] = b[n + 1] = 0;   /* the rod's ends stay 0 (MPI_PROC_NULL receives nothing) */
#pragma omp parallel for
    for (unsigned i = 1; i <= n; i++) a[i] = initial((unsigned long long)rank * n + i - 1);
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (unsigned s = 0; s < steps; s++) {
        double x0 = MPI_Wtime(), *t;
        MPI_Sendrecv(&a[1], 1, MPI_DOUBLE, left, 2, &a[n + 1], 1, MPI_DOUBLE, right, 2, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        MPI_Sendrecv(&a[n], 1, MPI_DOUBLE, right, 1, &a[0], 1, MPI_DOUBLE, left, 1, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        exch += MPI_Wtime() - x0;
#pragma omp parallel for
        for (unsigned i = 1; i <= n; i++) b[i] = a[i] + ALPHA * (a[i - 1] - 2.0 * a[i] + a[i + 1]);
        t = a; a = b; b = t;
        if ((s + 1) % every == 0) {
            double sum = 0;
#pragma omp parallel for reduction(+ : sum)
            for (unsigned i = 1; i <= n; i++) sum += a[i];
            MPI_Allreduce(&sum, &checksum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        }
    }
    t1 = MPI_Wtime();
    mine[0] = (t1 - t0) * 1e3;
    mine[1] = exch / steps * 1e6;
    MPI_Reduce(mine, all, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("mpi_halo omp wall_ms %.3f exch_us %.1f checksum %.17g\n", all[0], all[1], checksum);
    free(a);
    free(b);
    MPI_Finalize();
    return 0;
}

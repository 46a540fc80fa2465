/* A tiny persistent thread pool for ppy kernels (one task per worker). */
#ifndef PPY_POOL_H
#define PPY_POOL_H
#include <fenv.h>
#include <pthread.h>
#include <stdint.h>

/* one NumPy inner loop: PyUFuncGenericFunction and its data pointer */
typedef struct { void *fn; void *data; } ppy_loop;
typedef void (*ppy_map_fn)(char *const *, const double *, void *, int64_t, int64_t, const ppy_loop *);
typedef double (*ppy_red_fn)(char *const *, const double *, int64_t, int64_t, const ppy_loop *);

#define PPY_FE_REPORTED (FE_DIVBYZERO | FE_OVERFLOW | FE_INVALID | FE_UNDERFLOW)
#define PPY_MAX_THREADS 64

typedef struct {
    int is_map;
    void *kernel;
    char *const *arrays;
    const double *scalars;
    void *out;
    int64_t begin, end;
    const ppy_loop *loops;
    double result; /* reductions */
    int flags;     /* FP exception flags raised by this task */
    /* instead of the kernel: run(ctx, begin, end, &result) (rows of a strided map) */
    void (*run)(void *ctx, int64_t begin, int64_t end, double *result);
    void *ctx;
} ppy_task;

/* Run one task on this thread, recording its own FP flags. */
static inline void ppy_run_task(ppy_task *t) {
    feclearexcept(FE_ALL_EXCEPT);
    if (t->run)
        t->run(t->ctx, t->begin, t->end, &t->result);
    else if (t->is_map)
        ((ppy_map_fn)t->kernel)(t->arrays, t->scalars, t->out, t->begin, t->end, t->loops);
    else
        t->result = ((ppy_red_fn)t->kernel)(t->arrays, t->scalars, t->begin, t->end - t->begin, t->loops);
    t->flags = fetestexcept(PPY_FE_REPORTED);
}

int ppy_pool_threads(void);
void ppy_pool_set_threads(int n);
/* Run tasks[0..n) : tasks[1..] on workers, tasks[0] on the caller; returns OR of flags. */
int ppy_pool_run(ppy_task *tasks, int n);
#endif

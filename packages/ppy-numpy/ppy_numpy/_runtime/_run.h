/* Running a kernel: serial or split over the pool, bit-identical either way. */
typedef struct {
    SiteObject *s;
    char *const *arrays;
    const double *scalars;
    void *out;
    npy_intp n;
    int flags;
    double value;
    int parallel; /* the run was split over threads */
} run_args;

#define PPY_BLOCK 256 /* kernels' block size: parallel chunks start at multiples of it */
#define PPY_PW_LEAF 128

static ppy_task make_task(run_args *ra, int64_t begin, int64_t end) {
    ppy_task t = {ra->s->kind <= K_MAP_BOOL, ra->s->kernel, ra->arrays, ra->scalars, ra->out,
                  begin, end, ra->s->loops, 0.0, 0};
    return t;
}

/* Leaves of NumPy's pairwise tree down to `depth` levels (its own split rule). */
static void pw_split(run_args *ra, int64_t lo, int64_t n, int depth, ppy_task *tasks, int *k) {
    if (depth == 0 || n <= PPY_PW_LEAF) { tasks[(*k)++] = make_task(ra, lo, lo + n); return; }
    int64_t n2 = (n / 2) & ~(int64_t)7;
    pw_split(ra, lo, n2, depth - 1, tasks, k);
    pw_split(ra, lo + n2, n - n2, depth - 1, tasks, k);
}

static double pw_combine(int64_t n, int depth, ppy_task *tasks, int *k) {
    if (depth == 0 || n <= PPY_PW_LEAF) return tasks[(*k)++].result;
    int64_t n2 = (n / 2) & ~(int64_t)7;
    double left = pw_combine(n2, depth - 1, tasks, k);
    return left + pw_combine(n - n2, depth - 1, tasks, k);
}

static int split_tasks(run_args *ra, ppy_task *tasks, int nthreads) {
    int k = 0, depth = 0;
    int64_t n = ra->n;
    if (ra->s->kind == K_SUM || ra->s->kind == K_MEAN) {
        while ((2 << depth) <= nthreads) depth++;
        pw_split(ra, 0, n, depth, tasks, &k);
        return k;
    }
    int64_t chunk = (n + nthreads - 1) / nthreads;
    chunk = (chunk + PPY_BLOCK - 1) / PPY_BLOCK * PPY_BLOCK;
    for (int64_t lo = 0; lo < n; lo += chunk) tasks[k++] = make_task(ra, lo, lo + chunk < n ? lo + chunk : n);
    return k;
}

static double combine(run_args *ra, ppy_task *tasks, int k) {
    int kind = ra->s->kind, j = 0;
    if (kind == K_SUM || kind == K_MEAN) {
        int depth = 0;
        while ((2 << depth) <= ppy_pool_threads()) depth++;
        return pw_combine(ra->n, depth, tasks, &j);
    }
    double m = tasks[0].result;
    for (j = 1; j < k; j++) {
        double v = tasks[j].result;
        if (isnan(m) || isnan(v)) m = NAN;
        else if (kind == K_MAX ? v > m : v < m) m = v;
    }
    return m;
}

/* Run ra->s's kernel over ra->n elements; sets ra->value (reductions) and ra->flags. */
static void run_kernel(run_args *ra) {
    SiteObject *s = ra->s;
    int threads = ppy_pool_threads();
    int parallel = threads > 1 && s->par_threshold >= 0 && ra->n >= s->par_threshold && s->kind != K_PROD;
    ppy_task tasks[PPY_MAX_THREADS];
    int k = 1;
    PyThreadState *ts = NULL;
    if (ra->n >= GIL_RELEASE_MIN) ts = PyEval_SaveThread();
    ra->parallel = parallel;
    if (parallel) {
        k = split_tasks(ra, tasks, threads);
        ra->flags = ppy_pool_run(tasks, k);
    } else {
        tasks[0] = make_task(ra, 0, ra->n);
        ppy_run_task(&tasks[0]);
        ra->flags = tasks[0].flags;
    }
    if (ts != NULL) PyEval_RestoreThread(ts);
    double v = k > 1 ? combine(ra, tasks, k) : tasks[0].result;
    if (s->kind == K_SUM || s->kind == K_MEAN) v = 0.0 + v; /* np.add.reduce's identity seed */
    if (s->kind == K_MEAN) v = v / (double)ra->n;
    ra->value = v;
}

/* Elementwise kernels over strided and broadcast operands (included by _dispatch.c).
 *
 * The kernels read contiguous float64 rows. Operands of any strides whose shapes
 * broadcast (NumPy's rules, zero strides) are walked here row by row over the
 * fastest-varying axis after coalescing, as NumPy's iterator walks them: a row whose
 * stride is 8 is passed in place, any other (a step, a broadcast) is gathered into a
 * scratch row first. The result is a fresh C-ordered array, which is what NumPy's
 * ufuncs give exactly when its axis ordering ("K", the stable insertion sort of
 * nditer over the operands' absolute strides, C order winning a conflict) keeps C
 * order; otherwise the guard refuses (layout).
 *
 * Elementwise values do not depend on the order of iteration; the bits of a NaN
 * that meets another NaN in an add or multiply do (x86 keeps the first operand's,
 * and NumPy's operand order depends on the length of each of its inner-loop calls,
 * which differ here). So a float result holding any NaN is handed back to NumPy.
 * Kernels that call NumPy's own loops (sin, power ...) take this path only when
 * every operand row is in place (stride 8): NumPy's loops may pick another code path
 * for other strides.
 */
#define PPY_SCRATCH 1024
#ifdef __SSE2__
#include <emmintrin.h>
#endif

typedef struct {
    int nd, na;
    npy_intp shape[NPY_MAXDIMS];
    npy_intp strides[MAXARGS][NPY_MAXDIMS]; /* bytes; 0 where broadcast */
} strided_plan;

/* NumPy's order K (nditer's find_best_axis_ordering) keeps C order? Iterator axis i
   is array axis nd-1-i; the sort runs from the smallest stride to the biggest. */
static int keeps_c_order(const strided_plan *p) {
    int perm[NPY_MAXDIMS], nd = p->nd;
    for (int i = 0; i < nd; i++) perm[i] = i;
    for (int i0 = 1; i0 < nd; i0++) {
        int ipos = i0, j0 = perm[i0];
        for (int i1 = i0 - 1; i1 >= 0; i1--) {
            int ambig = 1, swap = 0, j1 = perm[i1];
            for (int k = 0; k < p->na; k++) {
                npy_intp s0 = p->strides[k][nd - 1 - j0], s1 = p->strides[k][nd - 1 - j1];
                if (s0 != 0 && s1 != 0) {
                    if (llabs((long long)s1) <= llabs((long long)s0)) swap = 0;
                    else if (ambig) swap = 1;
                    ambig = 0;
                }
            }
            if (!ambig) {
                if (swap) ipos = i1;
                else break;
            }
        }
        if (ipos != i0) return 0;
    }
    return 1;
}

/* Broadcast the operands (NULL: a float, 0-d) into `p` (C order, `dims` the result
   shape); a reason or -1. */
static int plan_operands(PyArrayObject *const *ops, int na, strided_plan *p, npy_intp *dims) {
    int nd = 0;
    for (int k = 0; k < na; k++) nd = ops[k] && PyArray_NDIM(ops[k]) > nd ? PyArray_NDIM(ops[k]) : nd;
    p->nd = nd;
    p->na = na;
    for (int d = 0; d < nd; d++) {
        dims[d] = 1;
        for (int k = 0; k < na; k++) {
            int off = ops[k] ? nd - PyArray_NDIM(ops[k]) : nd; /* NULL: a scalar, 0-d */
            npy_intp n = d < off ? 1 : PyArray_DIM(ops[k], d - off);
            p->strides[k][d] = n == 1 ? 0 : PyArray_STRIDE(ops[k], d - off);
            if (n == 1) continue;
            if (dims[d] != 1 && dims[d] != n) return R_SHAPE; /* NumPy raises: it answers */
            dims[d] = n;
        }
    }
    memcpy(p->shape, dims, sizeof(npy_intp) * nd);
    return keeps_c_order(p) ? -1 : R_LAYOUT;
}

/* Drop unit axes and merge axes every operand (and the C-ordered result) walks as one. */
static void coalesce(strided_plan *p) {
    int out = 0;
    for (int d = 0; d < p->nd; d++) {
        if (p->shape[d] == 1) continue;
        int merge = out > 0;
        for (int k = 0; merge && k < p->na; k++)
            merge = p->strides[k][out - 1] == p->strides[k][d] * p->shape[d];
        if (merge) {
            p->shape[out - 1] *= p->shape[d];
            for (int k = 0; k < p->na; k++) p->strides[k][out - 1] = p->strides[k][d];
            continue;
        }
        p->shape[out] = p->shape[d];
        for (int k = 0; k < p->na; k++) p->strides[k][out] = p->strides[k][d];
        out++;
    }
    if (out == 0) { p->shape[0] = 1; for (int k = 0; k < p->na; k++) p->strides[k][0] = 0; out = 1; }
    p->nd = out;
}

/* buf[0..n) = the n doubles at src, src+st, ... (st = 0: one value repeated). */
static void gather(double *restrict buf, const char *src, npy_intp st, npy_intp n) {
    if (st == 0) {
        double v;
        memcpy(&v, src, 8);
        for (npy_intp i = 0; i < n; i++) buf[i] = v;
    } else if (st % 8 == 0) {
        const double *s = (const double *)src;
        npy_intp e = st / 8;
        for (npy_intp i = 0; i < n; i++) buf[i] = s[i * e];
    } else {
        for (npy_intp i = 0; i < n; i++) memcpy(&buf[i], src + i * st, 8);
    }
}

/* Any NaN in row[0..n)? An unordered compare (an SNaN there raises invalid, which at
   worst sends the call back to NumPy too); by hand, as GCC keeps such loops scalar. */
static int row_has_nan(const double *row, npy_intp n) {
    npy_intp i = 0;
    int any = 0;
#ifdef __SSE2__
    __m128d acc = _mm_setzero_pd();
    for (; i + 8 <= n; i += 8) {
        __m128d a = _mm_loadu_pd(row + i), b = _mm_loadu_pd(row + i + 2);
        __m128d c = _mm_loadu_pd(row + i + 4), d = _mm_loadu_pd(row + i + 6);
        acc = _mm_or_pd(acc, _mm_or_pd(_mm_or_pd(_mm_cmpunord_pd(a, a), _mm_cmpunord_pd(b, b)),
                                       _mm_or_pd(_mm_cmpunord_pd(c, c), _mm_cmpunord_pd(d, d))));
    }
    any = _mm_movemask_pd(acc) != 0;
#endif
    for (; i < n; i++) any |= row[i] != row[i];
    return any;
}

typedef struct {
    SiteObject *s;
    const strided_plan *p;
    char *const *bases;
    const double *scalars;
    char *out;
} strided_job;

/* Rows [r0, r1) of a job; *status = 1 if a float result row holds a NaN, -1 if out
   of memory, else 0. Runs without the GIL, on any thread of the pool. */
static void strided_rows(void *ctx, int64_t r0, int64_t r1, double *status) {
    const strided_job *job = ctx;
    const strided_plan *p = job->p;
    SiteObject *s = job->s;
    int na = p->na, nd = p->nd, gathers = 0;
    npy_intp L = p->shape[nd - 1], osize = s->kind == K_MAP ? 8 : 1;
    for (int k = 0; k < na; k++) gathers += p->strides[k][nd - 1] != 8;
    double *scratch = NULL;
    *status = 0.0;
    if (gathers && (scratch = PyMem_RawMalloc(sizeof(double) * PPY_SCRATCH * (size_t)gathers)) == NULL) {
        *status = -1.0;
        return;
    }
    char *row[MAXARGS], *args[MAXARGS];
    int constant[MAXARGS]; /* stride 0 on every axis (a broadcast float): filled once */
    npy_intp idx[NPY_MAXDIMS] = {0}, rest = r0;
    for (int d = nd - 2; d >= 0; d--) { idx[d] = rest % p->shape[d]; rest /= p->shape[d]; }
    for (int k = 0, g = 0; k < na; k++) {
        row[k] = job->bases[k];
        for (int d = 0; d < nd - 1; d++) row[k] += idx[d] * p->strides[k][d];
        constant[k] = 0;
        if (p->strides[k][nd - 1] == 8) continue;
        constant[k] = 1;
        for (int d = 0; d < nd; d++) constant[k] &= p->strides[k][d] == 0;
        if (constant[k]) gather(scratch + (size_t)PPY_SCRATCH * g, job->bases[k], 0, PPY_SCRATCH);
        g++;
    }
    ppy_map_fn kernel = (ppy_map_fn)s->kernel;
    for (npy_intp r = r0; r < r1; r++) {
        char *orow = job->out + r * L * osize;
        npy_intp step = gathers ? PPY_SCRATCH : L;
        for (npy_intp c0 = 0; c0 < L; c0 += step) {
            npy_intp len = L - c0 < step ? L - c0 : step;
            for (int k = 0, g = 0; k < na; k++) {
                npy_intp st = p->strides[k][nd - 1];
                if (st == 8) { args[k] = row[k] + c0 * 8; continue; }
                double *buf = scratch + (size_t)PPY_SCRATCH * g++;
                if (!constant[k]) gather(buf, row[k] + c0 * st, st, len);
                args[k] = (char *)buf;
            }
            kernel(args, job->scalars, orow + c0 * osize, 0, len, s->loops);
        }
        if (s->kind == K_MAP && row_has_nan((const double *)orow, L)) { *status = 1.0; break; }
        for (int d = nd - 2; d >= 0; d--) { /* next row: an odometer over the outer axes */
            for (int k = 0; k < na; k++) row[k] += p->strides[k][d];
            if (++idx[d] < p->shape[d]) break;
            for (int k = 0; k < na; k++) row[k] -= p->strides[k][d] * p->shape[d];
            idx[d] = 0;
        }
    }
    PyMem_RawFree(scratch);
}

/* Run `rows_fn` over the rows of `p` (every axis but the last), split over the pool
   from the site's threshold (each element is computed alike on any thread); returns
   the FP flags raised, or -1 (out of memory, error set) / -2 (a float result holds a
   NaN). Shared by fresh results (`run_strided`) and stores (`run_store`). */
static int run_rows(SiteObject *s, strided_plan *p,
                    void (*rows_fn)(void *, int64_t, int64_t, double *), void *job) {
    npy_intp rows = 1, n = p->shape[p->nd - 1];
    for (int d = 0; d < p->nd - 1; d++) rows *= p->shape[d];
    n *= rows;
    int threads = ppy_pool_threads(), k = 1;
    if (threads > 1 && s->par_threshold >= 0 && n >= s->par_threshold && rows > 1)
        k = rows < threads ? (int)rows : threads;
    ppy_task tasks[PPY_MAX_THREADS];
    memset(tasks, 0, sizeof(ppy_task) * (size_t)k);
    for (int j = 0; j < k; j++) {
        tasks[j].run = rows_fn;
        tasks[j].ctx = job;
        tasks[j].begin = rows * j / k;
        tasks[j].end = rows * (j + 1) / k;
    }
    PyThreadState *ts = n >= GIL_RELEASE_MIN ? PyEval_SaveThread() : NULL;
    int flags;
    if (k > 1) {
        flags = ppy_pool_run(tasks, k);
    } else {
        ppy_run_task(&tasks[0]);
        flags = tasks[0].flags;
    }
    if (ts != NULL) PyEval_RestoreThread(ts);
    int nan = 0;
    for (int j = 0; j < k; j++) {
        if (tasks[j].result < 0) { PyErr_NoMemory(); return -1; }
        nan |= tasks[j].result > 0;
    }
    return nan ? -2 : flags;
}

/* Run the map kernel of `s` over `p` into the C-ordered `out` (see `run_rows`). */
static int run_strided(SiteObject *s, strided_plan *p, char *const *bases, const double *scalars, char *out) {
    strided_job job = {s, p, bases, scalars, out};
    return run_rows(s, p, strided_rows, &job);
}

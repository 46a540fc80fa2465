/* Reductions of each row along the last axis (kinds sum_rows ... min_rows_keep): the
   kernel's reduction entry called once per row of operands C-contiguous of one shape.
   NumPy reduces each such row alone, with the inner loop of a 1-D reduction (a float
   sum NumPy's pairwise sum in the array's dtype after the identity +0.0; max and min
   in any order), so a row's number is the entry's on [r*len, (r+1)*len). A NaN, whose
   bits follow NumPy's operand order, and a zero extremum, whose sign follows its SIMD
   lanes, send the whole call to NumPy; so do FP flags NumPy would report. */
enum { ROW_SUM, ROW_MAX, ROW_MIN };

typedef struct {
    SiteObject *s;
    char *const *arrays;
    const double *scalars;
    void *out;
    int64_t len; /* elements of one row (> 0) */
    int op;      /* ROW_SUM | ROW_MAX | ROW_MIN */
} rows_job;

static int row_op(int kind) {
    return kind <= K_SUM_ROWS_KEEP ? ROW_SUM : kind <= K_MAX_ROWS_KEEP ? ROW_MAX : ROW_MIN;
}

static int row_keepdims(int kind) {
    return kind == K_SUM_ROWS_KEEP || kind == K_MAX_ROWS_KEEP || kind == K_MIN_ROWS_KEEP;
}

/* ppy_task's run: rows [begin, end) into the result; *bad 1 where one needs NumPy. */
static void rows_run(void *ctx, int64_t begin, int64_t end, double *bad) {
    const rows_job *j = (const rows_job *)ctx;
    ppy_red_fn k = (ppy_red_fn)j->s->kernel;
    int f32 = j->s->f32, stop = 0;
    for (int64_t r = begin; r < end && !stop; r++) {
        double v = k(j->arrays, j->scalars, r * j->len, j->len, j->s->loops);
        if (j->op == ROW_SUM) v = 0.0 + v; /* np.add.reduce's identity seed (exact in float32 too) */
        stop = isnan(v) || (j->op != ROW_SUM && v == 0.0);
        if (f32) ((float *)j->out)[r] = (float)v; /* the float the entry widened: exact */
        else ((double *)j->out)[r] = v;
    }
    *bad = stop;
}

/* The rows of operands C-contiguous of one shape (others: NumPy), split over the pool
   from the site's threshold on: rows are independent, so the split changes no bits. */
static PyObject *site_rows(SiteObject *s, PyArrayObject *const *ops, int na, char *const *arrays,
                           const double *scalars, PyObject *const *args, size_t nargsf, PyObject *kw) {
    if (!all_flat(ops, na, NPY_ARRAY_C_CONTIGUOUS)) return fallback(s, R_SHAPE, args, nargsf, kw);
    PyArrayObject *first = ops[0];
    int nd = PyArray_NDIM(first), keep = row_keepdims(s->kind), r;
    npy_intp len = PyArray_DIM(first, nd - 1), n = PyArray_SIZE(first);
    if (nd == 1 && !keep) return fallback(s, R_SHAPE, args, nargsf, kw); /* NumPy's answer is a scalar */
    /* rows of one element: NumPy copies them (2 us for 1,000, 30 us for 1e5 rows), the
       entry's call a row took 1.6x-150x that (issue 28: never slower than NumPy) */
    if (len == 1) return fallback(s, R_SHAPE, args, nargsf, kw);
    npy_intp dims[NPY_MAXDIMS];
    memcpy(dims, PyArray_DIMS(first), sizeof(npy_intp) * nd);
    dims[nd - 1] = 1;
    PyObject *result = PyArray_Empty(keep ? nd : nd - 1, dims, PyArray_DescrFromType(s->f32 ? NPY_FLOAT : NPY_DOUBLE), 0);
    if (result == NULL) return NULL;
    rows_job job = {s, arrays, scalars, PyArray_DATA((PyArrayObject *)result), len, row_op(s->kind)};
    int64_t nrows = n / len;
    int threads = ppy_pool_threads(), k = 1, flags = 0, bad = 0;
    if (threads > 1 && s->par_threshold >= 0 && n >= s->par_threshold && nrows >= threads) k = threads;
    ppy_task tasks[PPY_MAX_THREADS];
    for (int t = 0; t < k; t++) {
        ppy_task one = {0, NULL, arrays, scalars, NULL, nrows * t / k, nrows * (t + 1) / k, s->loops, 0.0, 0,
                        rows_run, &job};
        tasks[t] = one;
    }
    PyThreadState *ts = n >= GIL_RELEASE_MIN ? PyEval_SaveThread() : NULL;
    if (k > 1) {
        flags = ppy_pool_run(tasks, k);
    } else {
        ppy_run_task(&tasks[0]);
        flags = tasks[0].flags;
    }
    if (ts != NULL) PyEval_RestoreThread(ts);
    for (int t = 0; t < k; t++) bad |= tasks[t].result != 0.0;
    if (bad) {
        Py_DECREF(result);
        return fallback(s, R_RESULT, args, nargsf, kw);
    }
    if (flags && (r = flags_reported(flags)) != 0) {
        Py_DECREF(result);
        if (r < 0) return NULL;
        return fallback(s, R_FPFLAGS, args, nargsf, kw);
    }
    s->fast++;
    return result;
}

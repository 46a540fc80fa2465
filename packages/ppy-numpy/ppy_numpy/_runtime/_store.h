/* Stores into a target view: `B[1:-1, 1:-1] = expr`, `out[...] = expr`, `a += expr`,
 * `A[i, :] -= expr` (included by _dispatch.c after _strided.h).
 *
 * A store site is called as site(obj, key, *leaves): `obj[key]` is the target (for
 * `a += expr`, `obj` itself; the key is then ignored); with `views` the arguments after
 * the key feed the leaves as for a fresh result (take_leaves). The key must be a basic index
 * (ints, slices, Ellipsis, None), so `obj[key]` is a view of `obj`'s memory, which
 * must be an exact, aligned, writeable ndarray of the kernel's dtype that does not
 * overlap itself (any other dtype is NumPy's: a cast on `=`, same_kind casting or its
 * UFuncTypeError on `OP=`). For an augmented store the kernel's first leaf is that
 * view (the site computes `t OP expr`). The operands' broadcast shape must broadcast
 * into the target's shape exactly (NumPy's rule for a store; anything else NumPy
 * answers, or raises). float32 and integer kernels (wrapping, NumPy 2's weak Python
 * scalars) read flat buffers only: every operand and the target C- (or every one
 * F-) contiguous of the target's shape; a float32 result holding a NaN is NumPy's.
 *
 * Two ways to write:
 *  - direct: the kernel writes into the target (its own strides; rows whose stride
 *    is not 8 go through a scratch row). Taken only when no operand's memory overlaps
 *    the target's (bounds, as np.may_share_memory) and the Python path, if a check
 *    after the write (FP flags, a NaN on the strided path) sends the call there,
 *    cannot raise (fp_may_raise): it then recomputes from untouched operands and
 *    overwrites the whole target, so the end state is NumPy's.
 *  - through a temporary: any overlap (`a += expr`, where the target is an operand;
 *    `u[1:-1] = u[2:] + u[:-2]`), a weak float leaf, or an errstate/warnings filter
 *    under which the Python path may raise. NumPy evaluates the whole right side
 *    first; so does this, into a fresh array copied into the target on success.
 *    A fallback after an in-place write would read the already-updated target,
 *    which is why an exact alias (elementwise-safe for the kernel) still goes here.
 */
enum { S_NONE, S_ASSIGN, S_AUG_ITEM, S_AUG_NAME };

static PyObject *extobj_var = NULL;  /* numpy's errstate contextvar */
static PyObject *extobj_seen = NULL; /* the errstate object last read */
static int extobj_raises = 0;        /* some FP flag's mode may raise under it */
static int extobj_silent = 0;        /* every FP flag ignored under it */
static PyObject *warnings_mod = NULL;

/* int (not bool), slice, Ellipsis, None: basic indexing, whose result is a view */
static int basic_item(PyObject *o) {
    return PyLong_CheckExact(o) || PySlice_Check(o) || o == Py_Ellipsis || o == Py_None;
}

static int basic_key(PyObject *k) {
    if (!PyTuple_CheckExact(k)) return basic_item(k);
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(k); i++)
        if (!basic_item(PyTuple_GET_ITEM(k, i))) return 0;
    return 1;
}

/* Read np.geterr() once per errstate object (np.errstate/np.seterr set a new one). */
static int read_errstate(void) {
    PyObject *cur = NULL;
    if (PyContextVar_Get(extobj_var, NULL, &cur) < 0) return -1;
    if (cur == extobj_seen) {
        Py_XDECREF(cur);
        return 0;
    }
    PyObject *err = PyObject_CallNoArgs(np_geterr);
    if (err == NULL) { Py_XDECREF(cur); return -1; }
    static const char *keys[] = {"divide", "over", "invalid", "under"};
    int raises = 0, silent = 1;
    for (int i = 0; i < 4; i++) {
        PyObject *mode = PyDict_GetItemString(err, keys[i]);
        int ignore = mode != NULL && PyUnicode_CompareWithASCIIString(mode, "ignore") == 0;
        int quiet = ignore || (mode != NULL && (PyUnicode_CompareWithASCIIString(mode, "warn") == 0
                                                || PyUnicode_CompareWithASCIIString(mode, "print") == 0));
        silent &= ignore;
        raises |= !quiet; /* raise, call, log: may raise or look at the target */
    }
    Py_DECREF(err);
    Py_XSETREF(extobj_seen, cur);
    extobj_raises = raises, extobj_silent = silent;
    return 0;
}

/* Could the Python path raise on an FP flag now: an errstate mode other than
   ignore/warn/print, or a warnings filter turning a RuntimeWarning into an error
   (the first filter that takes every RuntimeWarning decides; an "error" filter
   limited by message or module counts as raising). 1, 0, or -1 on error. */
static int fp_may_raise(void) {
    if (read_errstate() < 0) return -1;
    if (extobj_raises) return 1;
    if (extobj_silent) return 0;
    PyObject *filters = PyObject_GetAttrString(warnings_mod, "filters");
    if (filters == NULL) return -1;
    int verdict = 0;
    PyObject *seq = PySequence_Fast(filters, "warnings.filters");
    Py_DECREF(filters);
    if (seq == NULL) return -1;
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(seq); i++) {
        PyObject *f = PySequence_Fast_GET_ITEM(seq, i);
        if (!PyTuple_Check(f) || PyTuple_GET_SIZE(f) != 5) { verdict = 1; break; }
        PyObject *action = PyTuple_GET_ITEM(f, 0), *cat = PyTuple_GET_ITEM(f, 2);
        int takes = PyType_Check(cat) && PyObject_IsSubclass(PyExc_RuntimeWarning, cat) == 1;
        if (!takes) continue;
        if (!PyUnicode_Check(action) || PyUnicode_CompareWithASCIIString(action, "error") == 0) {
            verdict = 1;
            break;
        }
        PyObject *lineno = PyTuple_GET_ITEM(f, 4);
        int every = PyTuple_GET_ITEM(f, 1) == Py_None && PyTuple_GET_ITEM(f, 3) == Py_None
                    && PyLong_Check(lineno) && PyLong_AsLong(lineno) == 0;
        if (every) break; /* this filter takes every RuntimeWarning, and does not raise */
    }
    Py_DECREF(seq);
    return verdict;
}

/* [lo, hi) of the bytes an array's elements span. */
static void array_bounds(PyArrayObject *a, char **lo, char **hi) {
    char *l = PyArray_DATA(a), *h = l;
    for (int d = 0; d < PyArray_NDIM(a); d++) {
        npy_intp ext = PyArray_STRIDE(a, d) * (PyArray_DIM(a, d) - 1);
        if (ext < 0) l += ext;
        else h += ext;
    }
    *lo = l, *hi = h + PyArray_ITEMSIZE(a);
}

static int arrays_overlap(PyArrayObject *a, PyArrayObject *b) {
    char *alo, *ahi, *blo, *bhi;
    array_bounds(a, &alo, &ahi);
    array_bounds(b, &blo, &bhi);
    return alo < bhi && blo < ahi;
}

/* Is `a` the target itself (the same memory, shape and strides)? An elementwise kernel
   reads each element before it writes it (the map ABI promises no aliasing). */
static int same_view(PyArrayObject *a, PyArrayObject *t) {
    int nd = PyArray_NDIM(t);
    return PyArray_DATA(a) == PyArray_DATA(t) && PyArray_NDIM(a) == nd
           && memcmp(PyArray_DIMS(a), PyArray_DIMS(t), sizeof(npy_intp) * nd) == 0
           && memcmp(PyArray_STRIDES(a), PyArray_STRIDES(t), sizeof(npy_intp) * nd) == 0;
}

/* May two of the target's elements share memory? (a sufficient test: sorted by
   stride, each axis steps past everything the smaller ones span) */
static int self_overlapping(PyArrayObject *t) {
    npy_intp st[NPY_MAXDIMS], n[NPY_MAXDIMS];
    int m = 0;
    for (int d = 0; d < PyArray_NDIM(t); d++) {
        if (PyArray_DIM(t, d) < 2) continue;
        npy_intp s = PyArray_STRIDE(t, d);
        s = s < 0 ? -s : s;
        int j = m++;
        while (j > 0 && st[j - 1] > s) { st[j] = st[j - 1]; n[j] = n[j - 1]; j--; }
        st[j] = s, n[j] = PyArray_DIM(t, d);
    }
    npy_intp span = PyArray_ITEMSIZE(t);
    for (int i = 0; i < m; i++) {
        if (st[i] < span) return 1;
        span += st[i] * (n[i] - 1);
    }
    return 0;
}

/* The dtype a store site writes: its kernel's (float64, float32, int64 or int32). */
static int store_type(const SiteObject *s) { return s->f32 ? NPY_FLOAT : s->itype ? s->itype : NPY_DOUBLE; }

/* A scalar leaf ('s' float64, 'p' float32, 'n' int) into its slot; 0: the guard refuses it. */
static int scalar_leaf(const SiteObject *s, char leaf, PyObject *o, double *slot) {
    if (leaf == 'p') return f32_scalar(o, slot);
    return leaf == 'n' ? int_scalar(o, s->itype, slot) : as_scalar(o, slot);
}

typedef struct {
    SiteObject *s;
    const strided_plan *p; /* operands 0..na-1, the output at na */
    char *const *bases;    /* na + 1 */
    const double *scalars;
} store_job;

/* Rows [r0, r1) of a store: each row computed into the output row in place (stride
   of one item) or into a scratch row scattered there. *status as in strided_rows: a
   float result holding a NaN is NumPy's (no integer result is scanned). */
static void store_rows(void *ctx, int64_t r0, int64_t r1, double *status) {
    const store_job *job = ctx;
    const strided_plan *p = job->p;
    SiteObject *s = job->s;
    int na = p->na - 1, nd = p->nd, gathers = 0, isz = site_itemsize(s);
    npy_intp L = p->shape[nd - 1], os = p->strides[na][nd - 1];
    for (int k = 0; k < na; k++) gathers += p->strides[k][nd - 1] != isz;
    double *scratch = NULL;
    *status = 0.0;
    size_t need = (size_t)PPY_SCRATCH * (size_t)(gathers + (os != isz));
    if (need && (scratch = PyMem_RawMalloc(sizeof(double) * need)) == NULL) {
        *status = -1.0;
        return;
    }
    double *oscratch = os != isz ? scratch + (size_t)PPY_SCRATCH * gathers : NULL;
    char *row[MAXARGS + 1], *args[MAXARGS];
    int constant[MAXARGS]; /* stride 0 on every axis (a broadcast float): filled once */
    npy_intp idx[NPY_MAXDIMS] = {0}, rest = r0;
    for (int d = nd - 2; d >= 0; d--) { idx[d] = rest % p->shape[d]; rest /= p->shape[d]; }
    for (int k = 0, g = 0; k <= na; k++) {
        row[k] = job->bases[k];
        for (int d = 0; d < nd - 1; d++) row[k] += idx[d] * p->strides[k][d];
        if (k == na || p->strides[k][nd - 1] == isz) continue;
        constant[k] = 1;
        for (int d = 0; d < nd; d++) constant[k] &= p->strides[k][d] == 0;
        if (constant[k]) gather_items((char *)(scratch + (size_t)PPY_SCRATCH * g), job->bases[k], 0, PPY_SCRATCH, isz);
        g++;
    }
    ppy_map_fn kernel = (ppy_map_fn)s->kernel;
    npy_intp step = gathers || oscratch ? PPY_GATHER_CHUNK : L;
    for (npy_intp r = r0; r < r1 && *status == 0.0; r++) {
        for (npy_intp c0 = 0; c0 < L; c0 += step) {
            npy_intp len = L - c0 < step ? L - c0 : step;
            char *bufs[MAXARGS], *srcs[MAXARGS];
            npy_intp sts[MAXARGS];
            int m = 0;
            for (int k = 0, g = 0; k < na; k++) {
                npy_intp st = p->strides[k][nd - 1];
                if (st == isz) { args[k] = row[k] + c0 * isz; continue; }
                char *buf = (char *)(scratch + (size_t)PPY_SCRATCH * g++);
                if (!constant[k] && isz == 8) bufs[m] = buf, srcs[m] = row[k] + c0 * st, sts[m++] = st;
                else if (!constant[k]) gather_items(buf, row[k] + c0 * st, st, len, isz);
                args[k] = buf;
            }
            if (m) gather_many(bufs, srcs, sts, m, len);
            char *dst = oscratch ? (char *)oscratch : row[na] + c0 * isz;
            kernel(args, job->scalars, dst, 0, len, s->loops);
            if (!s->itype && items_have_nan(dst, len, isz)) { *status = 1.0; break; }
            if (oscratch) {
                char *o = row[na] + c0 * os;
                for (npy_intp i = 0; i < len; i++) memcpy(o + i * os, (char *)oscratch + i * isz, (size_t)isz);
            }
        }
        for (int d = nd - 2; d >= 0; d--) { /* next row: an odometer over the outer axes */
            for (int k = 0; k <= na; k++) row[k] += p->strides[k][d];
            if (++idx[d] < p->shape[d]) break;
            for (int k = 0; k <= na; k++) row[k] -= p->strides[k][d] * p->shape[d];
            idx[d] = 0;
        }
    }
    PyMem_RawFree(scratch);
}

/* run_strided for a store: the FP flags raised, or -1 (no memory) / -2 (a NaN). */
static int run_store(SiteObject *s, strided_plan *p, char *const *bases, const double *scalars) {
    store_job job = {s, p, bases, scalars};
    return run_rows(s, p, store_rows, &job);
}

/* Guard and run a store whose target view is `t` and kernel leaves `leaves[0..nl)`:
   1 done, 0 fallback with *reason set, -1 error. */
static int store_into(SiteObject *s, PyArrayObject *t, PyObject *const *leaves, int *reason) {
    char *arrays[MAXARGS + 1];
    double scalars[MAXARGS + 1], weak[MAXARGS]; /* the scalars, then the elision bits */
    PyArrayObject *ops[MAXARGS + 1];
    int na = 0, ns = 0, nweak = 0, r;
    for (int i = 0; i < s->nleaves; i++) {
        if (s->leaves[i] == 'w' && weak_scalar(leaves[i], &weak[na])) {
            ops[na] = NULL;
            arrays[na] = (char *)&weak[na];
            na++, nweak++;
        } else if (!strchr("spn", s->leaves[i])) {
            if ((r = check_array_of(leaves[i], leaf_type(s->leaves[i]))) >= 0) return *reason = r, 0;
            ops[na] = (PyArrayObject *)leaves[i];
            arrays[na++] = PyArray_DATA((PyArrayObject *)leaves[i]);
        } else if (!scalar_leaf(s, s->leaves[i], leaves[i], &scalars[ns++])) {
            return *reason = R_SCALAR, 0;
        }
    }
    scalars[ns] = 0.0;
    if (s->kind != K_MAP) return *reason = R_DTYPE, 0;
    strided_plan p;
    npy_intp dims[NPY_MAXDIMS];
    ops[na] = t;
    if (plan_operands(ops, na + 1, &p, dims) == R_SHAPE || p.nd != PyArray_NDIM(t)
        || memcmp(dims, PyArray_DIMS(t), sizeof(npy_intp) * p.nd) != 0)
        return *reason = R_SHAPE, 0; /* not NumPy's store broadcast: NumPy answers or raises */
    if (PyArray_SIZE(t) == 0) return *reason = R_EMPTY, 0;
    if (self_overlapping(t)) return *reason = R_LAYOUT, 0;
    /* An integer kernel never sends a call to Python once it ran (no FP flag, no NaN
       rule), so it writes in place over an exact alias of the target (`a += b * 3`). */
    int overlap = nweak > 0; /* Python's float arithmetic may raise where NumPy warns */
    for (int k = 0; k < na && !overlap; k++)
        overlap = ops[k] && arrays_overlap(ops[k], t) && !(s->itype && same_view(ops[k], t));
    int fortran = 0, flat = nweak == 0 && all_flat(ops, na + 1, NPY_ARRAY_C_CONTIGUOUS);
    if (!flat && nweak == 0) flat = fortran = all_flat(ops, na + 1, NPY_ARRAY_F_CONTIGUOUS);
    if (!flat && s->cplx) return *reason = R_LAYOUT, 0; /* its rows read 8-byte elements */
    /* NumPy computes `B[...] = x + v*w`'s right side as a fresh result; `a += x * y`
       as np.add(a, tmp, out=a), not swapped at the root (its bit cleared where known) */
    int nan_check = 0, aug = s->store != S_ASSIGN;
    int root_known = !aug || (s->swaps & (SWAPS_ROOT_LAST | SWAPS_ROOT_NONE));
    if (s->swaps)
        scalars[ns] = elided_nodes(s, ops, na, PyArray_NDIM(t), PyArray_DIMS(t), &nan_check,
                                   aug && (s->swaps & SWAPS_ROOT_LAST) && s->nswap > 0);
    int64_t swapped;
    memcpy(&swapped, &scalars[ns], 8);
    nan_check |= swapped && (!root_known || !flat); /* followed flat only */
    int may = overlap || nan_check ? 1 : s->itype ? 0 : fp_may_raise(); /* scanned: flat */
    if (may < 0) return -1;
    PyArrayObject *out = t;
    if (may) { /* through a temporary laid out as the target when it is flat */
        out = (PyArrayObject *)PyArray_Empty(PyArray_NDIM(t), PyArray_DIMS(t),
                                             PyArray_DescrFromType(store_type(s)), fortran);
        if (out == NULL) return -1;
    }
    int flags = 0;
    if (flat) {
        run_args ra = {s, arrays, scalars, PyArray_DATA(out), PyArray_SIZE(t), 0, 0.0, 0};
        run_kernel(&ra);
        flags = ra.flags;
        /* a float32 NaN's bits follow NumPy's operand order (as for a fresh result) */
        if (s->f32 && f32_has_nan(ra.out, ra.n)) flags = -2;
    } else {
        ops[na] = out;
        plan_operands(ops, na + 1, &p, dims);
        coalesce(&p);
        /* a kernel calling NumPy's loops: every operand a loop may read ('a') in place */
        for (int i = 0, k = 0; s->loops_count && i < s->nleaves; i++) {
            if (s->leaves[i] == 's') continue;
            if (s->leaves[i] == 'a' && p.strides[k][p.nd - 1] != 8) flags = -3;
            k++;
        }
        char *bases[MAXARGS + 1];
        for (int k = 0; k < na; k++) bases[k] = ops[k] ? PyArray_DATA(ops[k]) : arrays[k];
        bases[na] = PyArray_DATA(out);
        if (flags == 0) flags = run_store(s, &p, bases, scalars);
    }
    if (flags >= 0 && nan_check && row_has_nan((const double *)PyArray_DATA(out), PyArray_SIZE(t)))
        flags = -2; /* NumPy's temporary elision may swap where two NaNs meet */
    if (flags > 0 && nweak) flags = -4; /* Python's float arithmetic may raise where NumPy warns */
    if (flags > 0 && (r = flags_reported(flags)) != 0) flags = r < 0 ? -1 : -4;
    if (flags > 0) flags = 0; /* raised, but ignored under np.errstate */
    if (flags == 0 && out != t && PyArray_CopyInto(t, out) < 0) flags = -1;
    if (out != t) Py_DECREF(out);
    if (flags == -1) return -1;
    if (flags < 0) return *reason = flags == -3 ? R_LAYOUT : flags == -2 ? R_RESULT : R_FPFLAGS, 0;
    s->direct += out == t;
    return 1;
}

/* site(obj, key, *leaves) of a store site (see the top of this file). */
static PyObject *store_vectorcall(SiteObject *s, PyObject *const *args, size_t nargsf, PyObject *kw) {
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    int aug = s->store != S_ASSIGN;
    if (kw != NULL || nargs != s->nargs + 2) return fallback(s, R_ARITY, args, nargsf, kw);
    PyObject *obj = args[0], *view;
    if (Py_TYPE(obj) != &PyArray_Type) return fallback(s, R_TARGET, args, nargsf, kw);
    if (s->store == S_AUG_NAME) {
        view = Py_NewRef(obj);
    } else {
        if (!basic_key(args[1])) return fallback(s, R_TARGET, args, nargsf, kw);
        if ((view = PyObject_GetItem(obj, args[1])) == NULL) { /* Python raises it again */
            PyErr_Clear();
            return fallback(s, R_TARGET, args, nargsf, kw);
        }
    }
    PyArrayObject *t = (PyArrayObject *)view;
    if (Py_TYPE(view) != &PyArray_Type || PyArray_TYPE(t) != store_type(s) || !PyArray_ISNBO(PyArray_DESCR(t)->byteorder)
        || !PyArray_ISALIGNED(t) || !PyArray_ISWRITEABLE(t) || PyArray_NDIM(t) == 0) {
        Py_DECREF(view);
        return fallback(s, R_TARGET, args, nargsf, kw);
    }
    PyObject *leaves[MAXARGS];
    leaves[0] = view; /* an augmented store's first leaf; the arguments feed the others */
    int reason = take_leaves(s, args + 2, s->nleaves - aug, leaves + aug);
    if (reason >= 0) {
        Py_DECREF(view);
        return fallback(s, reason, args, nargsf, kw);
    }
    reason = R_N;
    int done = store_into(s, t, leaves, &reason);
    release_leaves(s, leaves + aug, s->nleaves - aug);
    Py_DECREF(view);
    if (done < 0) return NULL;
    if (done == 0) return fallback(s, reason, args, nargsf, kw);
    s->fast++;
    return s->store == S_AUG_NAME ? Py_NewRef(obj) : Py_NewRef(Py_None);
}

/* PPY_VERIFY: a copy of a store's `obj` (its layout kept) that the statement's Python
   may write in its place; None for an object this site never writes. */
static PyObject *site_shadow_target(SiteObject *s, PyObject *obj) {
    if (s->store == S_NONE || Py_TYPE(obj) != &PyArray_Type
        || PyDataType_REFCHK(PyArray_DESCR((PyArrayObject *)obj)))
        Py_RETURN_NONE;
    return PyArray_NewCopy((PyArrayObject *)obj, NPY_KEEPORDER);
}

/* Module init: numpy's errstate contextvar and the warnings module. */
static int store_init(void) {
    PyObject *um = PyImport_ImportModule("numpy._core._multiarray_umath");
    if (um == NULL) return -1;
    extobj_var = PyObject_GetAttrString(um, "_extobj_contextvar");
    Py_DECREF(um);
    warnings_mod = PyImport_ImportModule("warnings");
    return extobj_var && warnings_mod ? 0 : -1;
}

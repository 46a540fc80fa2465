/* ppy_numpy._runtime._dispatch: guarded call of a fused NumPy kernel.
 *
 * Site(kernel_addr, kind, leaves, fallback, site_id, loops=(), keepalive=None,
 *      par_threshold=-1, nan_ok=False, store=0, views=None, splat=0, swaps=(), rows=0)
 *   store  : 0, or a store site site(obj, key, *leaves) writing obj[key] (_store.h)
 *   kind   : "map" | "map_bool" | "sum" | "mean" | "prod" | "max" | "min", or a reduction
 *            of each row along the last axis, "sum_rows" ... "min_rows_keep" (_rows.h)
 *   leaves : one char per argument, 'a' (array operand), 's' (float64 scalar) or 'w'
 *            (an array operand a finite float may fill: broadcast, any FP flag -> Python),
 *            'c' (a complex128 array the kernel reads in pairs: flat calls only)
 *   loops  : ((ufunc, "d->d" | "dd->d" | "ddd->d"), ...) -> the kernel's ppy_loop table
 *   splat  : 0, or the address of the kernel's entry reading row-broadcast operands as
 *            splats (ppy-llvm's `_splat`: the kernel's scalars, then a mask per operand)
 *   rows   : 0, or the address of its entry running `splat` over a run of rows (`_rows_nan`)
 *   swaps  : (), or NumPy's temporary elision may swap the NaN order of the kernel's
 *            add/mul nodes (ppy-llvm's `_kernel_map.elision_table`): (flags, then per
 *            swap node its left array leaf and its right side's array leaves as bits,
 *            | 1 << 32 where the right side is that leaf itself: elided only where its
 *            argument is a temporary, a call's result).
 *            Flags 1: the map entries follow NumPy given the bits after their scalars
 *            (elided_nodes) on flat calls and rows in its order, 2: they do not; a call they do
 *            not follow answers a NaN result from NumPy; | 4: the last swap node is the
 *            result's, | 8: the result's node is no swap node
 *   views  : None (leaf i is argument i), or per leaf fed by the arguments (a store's
 *            target is not) (argument, basic index tuple or None[, counters]): the site
 *            takes the view itself, from an exact ndarray only (take_leaves); counters,
 *            ((position, argument, offset), ...): the index's item at position is that
 *            argument, an exact int, plus offset (a loop counter: `u[:, :, k - 1]`)
 * site(*args): guard -> kernel (GIL released for large n) -> FP-flag check
 * against np.geterr() -> result; anything else -> fallback(*args).
 * A site whose guard failed on RETIRE_AFTER calls in a row is retired: its calls go
 * straight to the fallback ("guard: retired"), and one in PROBE_EVERY tries the guard
 * again, a pass restoring the fast path (site_vectorcall).
 * Operands: exact aligned float64 ndarrays. One flat loop when all are C-contiguous
 * of one shape (or, for maps, all F-contiguous: an F-ordered result, as NumPy's);
 * maps over other strides or broadcast shapes go row by row (_strided.h).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_2_0_API_VERSION
#define PY_ARRAY_UNIQUE_SYMBOL ppy_dispatch_ARRAY_API
#define PY_UFUNC_UNIQUE_SYMBOL ppy_dispatch_UFUNC_API
#include <numpy/arrayobject.h>
#include <numpy/arrayscalars.h>
#include <numpy/ufuncobject.h>
#include <math.h>
#include <stddef.h>
#include <string.h>
#include "_pool.h"

enum { K_MAP, K_MAP_BOOL, K_SUM, K_MEAN, K_PROD, K_MAX, K_MIN,
       K_SUM_ROWS, K_SUM_ROWS_KEEP, K_MAX_ROWS, K_MAX_ROWS_KEEP, K_MIN_ROWS, K_MIN_ROWS_KEEP, K_N };
static const char *kind_names[K_N] = {"map", "map_bool", "sum", "mean", "prod", "max", "min",
                                      "sum_rows", "sum_rows_keep", "max_rows", "max_rows_keep",
                                      "min_rows", "min_rows_keep"};
enum { R_ARITY, R_TYPE, R_DTYPE, R_LAYOUT, R_SHAPE, R_ZERO_D, R_EMPTY, R_SCALAR, R_FPFLAGS, R_RESULT, R_TARGET, R_VIEW, R_RETIRED, R_N };
static const char *reason_names[R_N] = {
    "guard: arity", "guard: type", "guard: dtype", "guard: layout", "guard: shape",
    "guard: 0-d",   "guard: empty", "guard: scalar", "fp-flags", "result: nan/zero", "guard: target",
    "guard: view",  "guard: retired"};
/* Retiring a site whose guard keeps failing (a loop calling it with scalars, say): its
   compiled path is only the guard's cost there. Guard failures only: a call refused
   after its kernel ran (fp-flags, a NaN result) depends on the values, not the types.
   The periodic probe keeps a site whose arguments change kind able to win again; at one
   call in 1024 it costs the retired site under 0.1% of what the guard cost it. */
#define RETIRE_AFTER 64
#define PROBE_EVERY 1024
#define GUARD_REASON(r) ((r) != R_FPFLAGS && (r) != R_RESULT && (r) != R_RETIRED)
#define MAXARGS 32
#define GIL_RELEASE_MIN 8192
/* float64 elements from which NumPy elides a temporary (NPY_MIN_ELIDE_BYTES, 256 KiB) */
#define PPY_ELIDE_MIN (256 * 1024 / 8)
#define SWAPS_ROOT_LAST 4 /* swaps: the result's node is the last swap node */
#define SWAPS_ROOT_NONE 8 /* swaps: the result's node is no swap node */
#define SWAPS_MAX 32
#define SWAP_RIGHT_LEAF ((int64_t)1 << 32) /* swaps: the right side is that array leaf itself */

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    void *kernel;
    void *splat; /* NULL, or the kernel's _splat entry (row-broadcast operands as splats) */
    void *rows;  /* NULL, or its _rows_nan entry (the _splat entry over a run of rows) */
    int kind, nleaves;
    char leaves[MAXARGS];
    PyObject *fallback, *site_id, *keepalive, *loops_obj;
    ppy_loop *loops;
    Py_ssize_t loops_count;
    Py_ssize_t par_threshold;
    int nan_ok; /* a NaN reduction result of a serial run has NumPy's bits (proven) */
    int fresh;  /* the fallback reads expression-fed arguments through FRESH (reads_fresh) */
    int f32;    /* float32 operands ('f') and result; Python numbers ('p') cast to float32 */
    int itype;  /* 0, or NPY_INT64 ('l') / NPY_INT32 ('i') operands and result, ints 'n' */
    int cplx;   /* complex128 operands ('c'): 16-byte elements, which only flat calls pass */
    int store;  /* S_NONE, or how a store site writes its target (_store.h) */
    int swaps;  /* 0, or the flags of how NumPy's temporary elision meets the kernel (top) */
    int nswap;  /* its swap nodes: -1 not listed (any call >= PPY_ELIDE_MIN checked) */
    int swap_left[SWAPS_MAX];       /* per swap node: its left array leaf, */
    int64_t swap_right[SWAPS_MAX];  /* and its right side's array leaves (bits) */
    int nargs;  /* the call's arguments (a store's after obj and key) */
    int view_arg[MAXARGS];         /* per leaf fed by the arguments: its argument, */
    PyObject *view_index[MAXARGS]; /* and the basic index taken of it (NULL: none), */
    PyObject *view_counters[MAXARGS]; /* whose items it sets from int arguments (or NULL) */
    unsigned long long direct; /* store calls written straight into the target */
    unsigned long long splat_calls; /* strided calls run by the _splat entry */
    unsigned long long rows_calls;  /* of which the _rows_nan entry ran each task's rows at once */
    unsigned long long fast, fallbacks[R_N];
    int last_reason; /* the reason of the last fallback, R_N for none */
    int misses;      /* guard failures in a row (RETIRE_AFTER retires the site) */
    int probe;       /* 0 live; retired: calls left until the guard is tried again */
} SiteObject;

static PyObject *np_geterr = NULL;
static PyArray_Descr *descr_double = NULL;

/* Would NumPy (under the current np.errstate) report any of `flags`? -1 on error. */
static int flags_reported(int flags) {
    static const struct { int flag; const char *key; } map[] = {
        {FE_DIVBYZERO, "divide"}, {FE_OVERFLOW, "over"}, {FE_INVALID, "invalid"}, {FE_UNDERFLOW, "under"}};
    PyObject *err = PyObject_CallNoArgs(np_geterr);
    if (err == NULL) return -1;
    int reported = 0;
    for (int i = 0; i < 4 && !reported; i++) {
        if (!(flags & map[i].flag)) continue;
        PyObject *mode = PyDict_GetItemString(err, map[i].key);
        reported = mode == NULL || PyUnicode_CompareWithASCIIString(mode, "ignore") != 0;
    }
    Py_DECREF(err);
    return reported;
}

static int fallback_temporaries(SiteObject *s, PyObject *const *args, size_t nargsf, PyObject *kw,
                                PyObject **out);

static PyObject *fallback(SiteObject *s, int reason, PyObject *const *args, size_t nargsf, PyObject *kw) {
    s->fallbacks[reason]++;
    s->last_reason = reason;
    PyObject *result;
    if (s->swaps && s->fresh && fallback_temporaries(s, args, nargsf, kw, &result)) return result;
    return PyObject_Vectorcall(s->fallback, args, nargsf, kw);
}

/* An np.int64 (whichever C type NumPy maps it to on this platform). */
static int is_int64_scalar(PyObject *o) {
    PyArray_Descr *d = PyArray_DescrFromScalar(o);
    int found = d != NULL && d->type_num == NPY_INT64;
    Py_XDECREF(d);
    return found;
}

/* A float64 scalar operand: exact float, np.float64, int or np.int64 with |v| <= 2**53
   (NumPy casts either to float64 beside float64 arrays, exactly), 0-d float64 array. */
static int as_scalar(PyObject *o, double *v) {
    if (PyFloat_CheckExact(o)) { *v = PyFloat_AS_DOUBLE(o); return 1; }
    if (PyArray_IsScalar(o, Double)) { *v = PyArrayScalar_VAL(o, Double); return 1; }
    if (PyArray_IsScalar(o, SignedInteger)) {
        int64_t x;
        if (!is_int64_scalar(o)) return 0;
        PyArray_ScalarAsCtype(o, &x);
        if (x > (1LL << 53) || x < -(1LL << 53)) return 0;
        *v = (double)x;
        return 1;
    }
    if (PyLong_CheckExact(o)) {
        int overflow = 0;
        long long x = PyLong_AsLongLongAndOverflow(o, &overflow);
        if (overflow || x > (1LL << 53) || x < -(1LL << 53)) { PyErr_Clear(); return 0; }
        *v = (double)x;
        return 1;
    }
    if (Py_TYPE(o) == &PyArray_Type) {
        PyArrayObject *a = (PyArrayObject *)o;
        if (PyArray_NDIM(a) == 0 && PyArray_TYPE(a) == NPY_DOUBLE && PyArray_ISNBO(PyArray_DESCR(a)->byteorder)
            && PyArray_ISALIGNED(a)) { *v = *(double *)PyArray_DATA(a); return 1; }
    }
    return 0;
}

/* A finite Python float or np.float64 in a 'w' slot (a 0-d array stays an array). */
static int weak_scalar(PyObject *o, double *v) {
    if (PyFloat_CheckExact(o)) *v = PyFloat_AS_DOUBLE(o);
    else if (PyArray_IsScalar(o, Double)) *v = PyArrayScalar_VAL(o, Double);
    else return 0;
    return isfinite(*v);
}

/* A 'p' leaf of a float32 kernel: what NumPy 2 casts to float32 with a float32 array
   (a Python float, a Python int of |v| <= 2**53, an np.float32); an np.float64 or a
   0-d array is a strong float64 operand (a float64 result): NumPy answers. */
static int f32_scalar(PyObject *o, double *v) {
    if (PyArray_IsScalar(o, Float)) { *v = (double)PyArrayScalar_VAL(o, Float); return 1; }
    return (PyFloat_CheckExact(o) || PyLong_CheckExact(o)) && as_scalar(o, v);
}

/* Guard one array operand (exact ndarray of `type`, aligned, not 0-d): a reason or -1.
   Its layout and shape against the others decide the path (see site_vectorcall). */
static int check_array_of(PyObject *o, int type) {
    if (Py_TYPE(o) != &PyArray_Type) return R_TYPE;
    PyArrayObject *a = (PyArrayObject *)o;
    if (PyArray_TYPE(a) != type || !PyArray_ISNBO(PyArray_DESCR(a)->byteorder)) return R_DTYPE;
    if (PyArray_NDIM(a) == 0) return R_ZERO_D;
    if (!PyArray_ISALIGNED(a)) return R_LAYOUT;
    return -1;
}

/* An 'n' leaf: a Python int within the kernel's integer type, its bits in the double
   slot. Out of range NumPy 2 raises OverflowError: NumPy answers. An np.int64 with
   int64 arrays is int64 arithmetic too (with int32 arrays it promotes: NumPy answers). */
static int int_scalar(PyObject *o, int itype, double *slot) {
    if (itype == NPY_INT64 && PyArray_IsScalar(o, SignedInteger)) {
        if (!is_int64_scalar(o)) return 0;
        int64_t x;
        PyArray_ScalarAsCtype(o, &x);
        memcpy(slot, &x, sizeof x);
        return 1;
    }
    if (!PyLong_CheckExact(o)) return 0;
    int overflow = 0;
    long long x = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow || (x == -1 && PyErr_Occurred())) { PyErr_Clear(); return 0; }
    if (itype == NPY_INT32 && (x < INT32_MIN || x > INT32_MAX)) return 0;
    memcpy(slot, &x, sizeof x);
    return 1;
}

static void release_leaves(const SiteObject *s, PyObject **leaves, int n) {
    for (int i = 0; i < n; i++)
        if (s->view_index[i] != NULL) Py_DECREF(leaves[i]);
}

/* A view's index with its counters set (`views` at the top): a new tuple, or NULL where
   a counter's argument is no exact int or the sum overflows (no error set: the fallback
   evaluates the index as Python does) or memory ran out (error set). */
static PyObject *counted_index(PyObject *index, PyObject *counters, PyObject *const *args) {
    Py_ssize_t n = PyTuple_GET_SIZE(index);
    PyObject *out = PyTuple_New(n);
    if (out == NULL) return NULL;
    for (Py_ssize_t j = 0; j < n; j++) PyTuple_SET_ITEM(out, j, Py_NewRef(PyTuple_GET_ITEM(index, j)));
    for (Py_ssize_t c = 0; c < PyTuple_GET_SIZE(counters); c++) {
        PyObject *at = PyTuple_GET_ITEM(counters, c);
        Py_ssize_t pos = PyLong_AsSsize_t(PyTuple_GET_ITEM(at, 0));
        PyObject *a = args[PyLong_AsSsize_t(PyTuple_GET_ITEM(at, 1))];
        long long offset = PyLong_AsLongLong(PyTuple_GET_ITEM(at, 2)), k, sum;
        int overflow = 0;
        if (!PyLong_CheckExact(a)) goto refused;
        k = PyLong_AsLongLongAndOverflow(a, &overflow);
        if (overflow || (k == -1 && PyErr_Occurred()) || __builtin_add_overflow(k, offset, &sum)) goto refused;
        PyObject *item = PyLong_FromLongLong(sum);
        if (item == NULL) { Py_DECREF(out); return NULL; }
        Py_SETREF(((PyTupleObject *)out)->ob_item[pos], item);
    }
    return out;
refused:
    PyErr_Clear();
    Py_DECREF(out);
    return NULL;
}

/* The `n` kernel leaves the call's arguments feed, into `out`: argument view_arg[i], or
   its basic view view_index[i], taken only from an exact ndarray (a view of one runs
   nothing of the program; an IndexError there the fallback raises in Python's order).
   -1 (views held: release_leaves), or the fallback's reason (none held). */
static int take_leaves(const SiteObject *s, PyObject *const *args, int n, PyObject **out) {
    for (int i = 0; i < n; i++) {
        PyObject *a = args[s->view_arg[i]];
        if (s->view_index[i] == NULL) {
            out[i] = a;
            continue;
        }
        PyObject *index = s->view_index[i], *v = NULL;
        if (Py_TYPE(a) == &PyArray_Type && s->view_counters[i] != NULL)
            index = counted_index(index, s->view_counters[i], args);
        else
            Py_INCREF(index);
        if (index != NULL) {
            v = Py_TYPE(a) == &PyArray_Type ? PyObject_GetItem(a, index) : NULL;
            Py_DECREF(index);
        }
        if (v == NULL) {
            int reason = PyErr_Occurred() ? R_VIEW : R_TYPE;
            PyErr_Clear();
            release_leaves(s, out, i);
            return reason;
        }
        out[i] = v;
    }
    return -1;
}

static int leaf_type(char leaf) {
    return leaf == 'f' ? NPY_FLOAT : leaf == 'l' || leaf == 'j' ? NPY_INT64 : leaf == 'i' ? NPY_INT32
         : leaf == 'c' ? NPY_CDOUBLE : NPY_DOUBLE; /* 'j': int64 a float64 kernel converts */
}

/* Whether a float32 result holds a NaN: its bits would follow NumPy's operand order,
   which its float32 loops do not share with ours, so NumPy recomputes it. */
static int f32_has_nan(const float *x, npy_intp n) {
    int any = 0;
    for (npy_intp i = 0; i < n; i++) any |= x[i] != x[i];
    return any;
}

static int all_c_contiguous(PyArrayObject *const *ops, int na) {
    for (int k = 0; k < na; k++)
        if (!PyArray_IS_C_CONTIGUOUS(ops[k])) return 0;
    return 1;
}

/* Every operand has `flag` (C or F contiguous) and the first one's shape. */
static int all_flat(PyArrayObject *const *ops, int na, int flag) {
    for (int k = 0; k < na; k++) {
        if (!(PyArray_FLAGS(ops[k]) & flag) || PyArray_NDIM(ops[k]) != PyArray_NDIM(ops[0])
            || memcmp(PyArray_DIMS(ops[k]), PyArray_DIMS(ops[0]), sizeof(npy_intp) * PyArray_NDIM(ops[0])) != 0)
            return 0;
    }
    return 1;
}

/* NumPy's can_elide_temp on operand `a` (temp_elide.c): an exact ndarray Python holds
   only on the call's stack (reference count 1: a call's result, never a name), owning
   its writeable data of >= 256 KiB. A view the site took owns no data. */
static int numpy_temporary(PyArrayObject *a) {
    return a != NULL && Py_REFCNT(a) == 1 && Py_TYPE(a) == &PyArray_Type
           && PyArray_CHKFLAGS(a, NPY_ARRAY_OWNDATA) && PyArray_ISWRITEABLE(a)
           && !PyArray_CHKFLAGS(a, NPY_ARRAY_WRITEBACKIFCOPY) && PyArray_NBYTES(a) >= PPY_ELIDE_MIN * 8;
}

/* Whether `fn` reads its expression-fed arguments through the frontend's FRESH
   (ppy_core's `dispatch.fresh`: a name of its code), so it takes a Temporary box. */
static int reads_fresh(PyObject *fn) {
    PyObject *code = PyObject_GetAttrString(fn, "__code__");
    PyObject *names = code ? PyObject_GetAttrString(code, "co_names") : NULL;
    PyObject *key = names ? PyUnicode_FromString("__ppy_fresh") : NULL;
    int found = key ? PySequence_Contains(names, key) : 0;
    Py_XDECREF(key);
    Py_XDECREF(names);
    Py_XDECREF(code);
    if (found < 0 || PyErr_Occurred()) {
        PyErr_Clear();
        found = 0;
    }
    return found;
}

/* The Python path of a site whose arguments include temporaries NumPy would elide
   into (numpy_temporary: a call's result): it holds them as parameters, names NumPy
   never elides into, so each goes as a ppy_core `Temporary` box of a copy its
   expression reads once through `fresh`: a temporary again, Python's own elision (a
   NaN payload as `x + <call>`'s). 1 with the result (or NULL, an error) in *out where
   it ran so, 0 otherwise (no temporary). Called only where the fallback reads `fresh`. */
static int fallback_temporaries(SiteObject *s, PyObject *const *args, size_t nargsf, PyObject *kw,
                                PyObject **out) {
    static PyObject *box_type = NULL;
    Py_ssize_t n = PyVectorcall_NARGS(nargsf), first = s->store ? 2 : 0; /* a store's target, key */
    int any = 0;
    for (Py_ssize_t i = first; i < n && !any; i++) any = numpy_temporary((PyArrayObject *)args[i]);
    if (!any || kw != NULL || n > MAXARGS + 2) return 0;
    if (box_type == NULL) {
        PyObject *m = PyImport_ImportModule("ppy_core.runtime.dispatch");
        box_type = m ? PyObject_GetAttrString(m, "Temporary") : NULL;
        Py_XDECREF(m);
        if (box_type == NULL) {
            PyErr_Clear();
            return 0;
        }
    }
    PyObject *boxed[MAXARGS + 2];
    Py_ssize_t i = 0;
    for (; i < n; i++) {
        PyObject *a = args[i], *copy;
        if (i < first || !numpy_temporary((PyArrayObject *)a)) {
            boxed[i] = Py_NewRef(a);
            continue;
        }
        copy = PyArray_NewCopy((PyArrayObject *)a, NPY_KEEPORDER);
        boxed[i] = copy ? PyObject_CallOneArg(box_type, copy) : NULL;
        Py_XDECREF(copy);
        if (boxed[i] == NULL) break;
    }
    *out = i == n ? PyObject_Vectorcall(s->fallback, boxed, n, NULL) : NULL;
    while (i-- > 0) Py_DECREF(boxed[i]);
    return 1;
}

/* Whether swap node j's right side, the array leaf of `right` (SWAP_RIGHT_LEAF), is a
   temporary NumPy elides into: l's shape exactly, and a temporary at run time. */
static int right_leaf_elided(PyArrayObject *const *ops, int na, int64_t right, PyArrayObject *l) {
    int k = 0;
    while (k < na && !((right >> k) & 1)) k++;
    PyArrayObject *r = k < na ? ops[k] : NULL;
    return numpy_temporary(r) && PyArray_NDIM(r) == PyArray_NDIM(l)
           && memcmp(PyArray_DIMS(r), PyArray_DIMS(l), sizeof(npy_intp) * PyArray_NDIM(l)) == 0;
}

/* NumPy's temporary elision in a call with kernel array leaves ops[0..na) (NULL: a
   Python float, no temporary) and result shape (nd, dims): bit j where it runs swap
   node j as np.add(r, l, out=r) over the whole result (the kernel follows that with
   flags 1, as a double's bits); *other set where NumPy elides where the kernel does
   not follow (over a smaller shape, or flags 2): a NaN result is then NumPy's. No swap
   where l is a temporary itself (NumPy elides into l first, in l's order); none in
   the last `skip_last` swap nodes (an augmented store's result node). */
static double elided_nodes(const SiteObject *s, PyArrayObject *const *ops, int na, int nd,
                           const npy_intp *dims, int *other, int skip_last) {
    int64_t bits = 0;
    npy_intp size = 1;
    for (int d = 0; d < nd; d++) size *= dims[d];
    *other = s->nswap < 0 && size >= PPY_ELIDE_MIN;
    for (int j = 0; j < s->nswap - skip_last; j++) {
        PyArrayObject *l = s->swap_left[j] < na ? ops[s->swap_left[j]] : NULL;
        if (l == NULL || PyArray_SIZE(l) < PPY_ELIDE_MIN) continue;
        int lnd = PyArray_NDIM(l);
        npy_intp r[NPY_MAXDIMS];
        if (s->swap_right[j] & SWAP_RIGHT_LEAF) { /* a temporary only if a call made it */
            if (!right_leaf_elided(ops, na, s->swap_right[j], l)) continue;
            memcpy(r, PyArray_DIMS(l), sizeof(npy_intp) * lnd);
        } else { /* r: the broadcast of its arrays' shapes; NumPy elides where it is l's */
            int rnd = 0, fits = 1;
            for (int d = 0; d < lnd; d++) r[d] = 1;
            for (int k = 0; k < na && fits; k++) {
                if (!((s->swap_right[j] >> k) & 1) || ops[k] == NULL) continue;
                int knd = PyArray_NDIM(ops[k]);
                fits = knd <= lnd;
                rnd = knd > rnd ? knd : rnd;
                for (int d = 0; fits && d < knd; d++)
                    if (PyArray_DIM(ops[k], d) != 1) r[lnd - knd + d] = PyArray_DIM(ops[k], d);
            }
            if (!fits || rnd != lnd || memcmp(r, PyArray_DIMS(l), sizeof(npy_intp) * lnd) != 0) continue;
        }
        if (numpy_temporary(l)) continue; /* np.add(l, r, out=l): the kernel's order */
        if ((s->swaps & 3) == 1 && lnd == nd && memcmp(dims, r, sizeof(npy_intp) * nd) == 0)
            bits |= (int64_t)1 << j;
        else
            *other = 1;
    }
    double d;
    memcpy(&d, &bits, 8);
    return d;
}

#include "_run.h"
#include "_strided.h"
#include "_store.h"
#include "_rows.h"

static PyObject *site_strided(SiteObject *s, PyArrayObject *const *ops, char *const *arrays, int na,
                              double *scalars, int strict, PyObject *const *args, size_t nargsf,
                              PyObject *kw);

static PyObject *site_run(SiteObject *s, PyObject *const *leaves, PyObject *const *args, size_t nargsf,
                          PyObject *kw);

static PyObject *site_guarded(SiteObject *s, PyObject *const *args, size_t nargsf, PyObject *kw) {
    if (s->store) return store_vectorcall(s, args, nargsf, kw);
    if (kw != NULL || PyVectorcall_NARGS(nargsf) != s->nargs) return fallback(s, R_ARITY, args, nargsf, kw);
    PyObject *leaves[MAXARGS];
    int r = take_leaves(s, args, s->nleaves, leaves);
    if (r >= 0) return fallback(s, r, args, nargsf, kw);
    PyObject *result = site_run(s, leaves, args, nargsf, kw);
    release_leaves(s, leaves, s->nleaves);
    return result;
}

/* The guarded call, unless the site is retired (see RETIRE_AFTER): a call whose guard
   passes makes it live again, a guard failure counts towards retiring it, and a retired
   one whose probe fails again waits another PROBE_EVERY calls. */
static PyObject *site_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kw) {
    SiteObject *s = (SiteObject *)self;
    if (s->probe > 0 && --s->probe > 0) return fallback(s, R_RETIRED, args, nargsf, kw);
    unsigned long long fast = s->fast;
    s->last_reason = R_N;
    PyObject *result = site_guarded(s, args, nargsf, kw);
    if (s->fast == fast && s->last_reason < R_N && GUARD_REASON(s->last_reason)) {
        if (++s->misses >= RETIRE_AFTER) s->misses = RETIRE_AFTER, s->probe = PROBE_EVERY;
    } else {
        s->misses = 0; /* the guard passed */
    }
    return result;
}

/* The shape C-contiguous operands of different shapes broadcast to (NumPy's rules:
   aligned at the right, each axis the same length or 1) into `dims`: its rank, or -1
   where they do not broadcast (NumPy raises: the fallback does). */
static int broadcast_shape(PyArrayObject *const *ops, int na, npy_intp *dims) {
    int nd = 0;
    for (int k = 0; k < na; k++) nd = PyArray_NDIM(ops[k]) > nd ? PyArray_NDIM(ops[k]) : nd;
    for (int d = 0; d < nd; d++) dims[d] = 1;
    for (int k = 0; k < na; k++) {
        int knd = PyArray_NDIM(ops[k]);
        for (int d = 0; d < knd; d++) {
            npy_intp len = PyArray_DIM(ops[k], d), *out = &dims[nd - knd + d];
            if (len == *out || len == 1) continue;
            if (*out != 1) return -1;
            *out = len;
        }
    }
    return nd;
}

/* The most bytes a reduction's spread copies may hold (spread_operands): NumPy itself
   holds one result-sized temporary at least (it elides into one from 256 KiB), so up
   to 16 MiB the copies cost little beside it; past that the call is NumPy's. */
#define PPY_SPREAD_MAX_BYTES ((npy_intp)1 << 24)

/* Whether the copies `spread_operands` makes of `ops` fit PPY_SPREAD_MAX_BYTES. */
static int spread_fits(PyArrayObject *const *ops, int na, npy_intp n) {
    npy_intp bytes = 0;
    for (int k = 0; k < na; k++)
        if (PyArray_SIZE(ops[k]) != n) bytes += n * PyArray_ITEMSIZE(ops[k]);
    return bytes <= PPY_SPREAD_MAX_BYTES;
}

/* A reduction over operands that broadcast: NumPy computes the tree into a C-ordered
   temporary of the broadcast shape and reduces that one buffer (its pairwise sum over
   it, flat), so an operand of fewer elements is spread out to that shape first, a copy
   the kernel's flat loop reads in the same order (held in `spread`, released by the
   caller). An operand of the result's size already is that buffer. 0, or -1 (an error
   set: out of memory). */
static int spread_operands(PyArrayObject **ops, char **arrays, int na, int nd, const npy_intp *dims,
                           PyArrayObject **spread) {
    npy_intp n = 1;
    for (int d = 0; d < nd; d++) n *= dims[d];
    for (int k = 0; k < na; k++) {
        if (PyArray_SIZE(ops[k]) == n) continue;
        PyArray_Descr *d = PyArray_DESCR(ops[k]);
        Py_INCREF(d);
        spread[k] = (PyArrayObject *)PyArray_Empty(nd, (npy_intp *)dims, d, 0); /* steals d */
        if (spread[k] == NULL || PyArray_CopyInto(spread[k], ops[k]) < 0) {
            for (int j = 0; j <= k; j++) Py_CLEAR(spread[j]);
            return -1;
        }
        ops[k] = spread[k];
        arrays[k] = PyArray_DATA(spread[k]);
    }
    return 0;
}

/* A fresh result from the kernel leaves `leaves`; `args` go to the fallback. */
static PyObject *site_run(SiteObject *s, PyObject *const *leaves, PyObject *const *args, size_t nargsf,
                          PyObject *kw) {
    char *arrays[MAXARGS];
    double scalars[MAXARGS + 1]; /* the scalars, then the elision bits (elided_nodes) */
    PyArrayObject *ops[MAXARGS];
    double weak[MAXARGS];
    ops[0] = NULL;
    int na = 0, ns = 0, nweak = 0, r;
    for (int i = 0; i < s->nleaves; i++) {
        if (s->leaves[i] == 'w' && weak_scalar(leaves[i], &weak[na])) {
            ops[na] = NULL; /* a float standing in for an array: broadcast */
            arrays[na] = (char *)&weak[na];
            na++, nweak++;
        } else if (s->leaves[i] == 'p') {
            if (!f32_scalar(leaves[i], &scalars[ns++])) return fallback(s, R_SCALAR, args, nargsf, kw);
        } else if (s->leaves[i] == 'n') {
            if (!int_scalar(leaves[i], s->itype, &scalars[ns++])) return fallback(s, R_SCALAR, args, nargsf, kw);
        } else if (s->leaves[i] != 's') {
            if ((r = check_array_of(leaves[i], leaf_type(s->leaves[i]))) >= 0)
                return fallback(s, r, args, nargsf, kw);
            ops[na] = (PyArrayObject *)leaves[i];
            arrays[na++] = PyArray_DATA((PyArrayObject *)leaves[i]);
        } else if (!as_scalar(leaves[i], &scalars[ns++])) {
            return fallback(s, R_SCALAR, args, nargsf, kw);
        }
    }
    scalars[ns] = 0.0; /* the elision bits: set where the kernel follows NumPy */
    if (nweak) { /* NumPy's answer only where Python's float arithmetic raised no flag */
        if (nweak == na || s->kind > K_MAP_BOOL || s->cplx) return fallback(s, R_TYPE, args, nargsf, kw);
        return site_strided(s, ops, arrays, na, scalars, 1, args, nargsf, kw);
    }
    PyArrayObject *first = ops[0];
    int nd = PyArray_NDIM(first);
    npy_intp dims[NPY_MAXDIMS];
    memcpy(dims, PyArray_DIMS(first), sizeof(npy_intp) * nd);
    /* one flat loop over the buffers: every operand C-contiguous of one shape, or (maps)
       every one F-contiguous, whose result NumPy lays out in F order; or (reductions)
       C-contiguous operands of shapes that broadcast, spread out to the result's shape */
    int fortran = 0;
    PyArrayObject *spread[MAXARGS] = {NULL};
    if (!all_flat(ops, na, NPY_ARRAY_C_CONTIGUOUS)) {
        fortran = s->kind <= K_MAP_BOOL && all_flat(ops, na, NPY_ARRAY_F_CONTIGUOUS);
        if (!fortran && s->kind <= K_MAP_BOOL) {
            if (s->cplx) return fallback(s, R_LAYOUT, args, nargsf, kw); /* rows read 8-byte elements */
            return site_strided(s, ops, arrays, na, scalars, 0, args, nargsf, kw);
        }
        if (!fortran) { /* a reduction's order is NumPy's only over one C buffer */
            if (!all_c_contiguous(ops, na)) return fallback(s, R_LAYOUT, args, nargsf, kw);
            if (s->cplx || (nd = broadcast_shape(ops, na, dims)) < 0) return fallback(s, R_SHAPE, args, nargsf, kw);
        }
    }
    npy_intp n = 1;
    for (int d = 0; d < nd; d++) n *= dims[d];
    if (n == 0) return fallback(s, R_EMPTY, args, nargsf, kw);
    if (s->kind > K_MAP_BOOL && !spread_fits(ops, na, n)) return fallback(s, R_SHAPE, args, nargsf, kw);
    if (s->kind >= K_SUM_ROWS) return site_rows(s, ops, na, arrays, scalars, args, nargsf, kw);
    int elided = 0; /* NumPy elides where the kernel does not follow it */
    if (s->swaps) scalars[ns] = elided_nodes(s, ops, na, nd, dims, &elided, 0); /* the operands as given */
    if (s->kind > K_MAP_BOOL && spread_operands(ops, arrays, na, nd, dims, spread) < 0) return NULL;
    run_args ra = {s, arrays, scalars, NULL, n, 0, 0.0, 0};
    PyObject *result = NULL;
    if (s->kind <= K_MAP_BOOL) {
        int type = s->kind == K_MAP ? (s->f32 ? NPY_FLOAT : s->itype ? s->itype : NPY_DOUBLE) : NPY_BOOL;
        PyArray_Descr *d = PyArray_DescrFromType(type);
        result = PyArray_Empty(nd, dims, d, fortran); /* steals d */
        if (result == NULL) return NULL;
        ra.out = PyArray_DATA((PyArrayObject *)result);
    }
    run_kernel(&ra);
    for (int k = 0; k < na; k++) Py_XDECREF(spread[k]);
    if (ra.flags && (r = flags_reported(ra.flags)) != 0) {
        Py_XDECREF(result);
        if (r < 0) return NULL;
        return fallback(s, R_FPFLAGS, args, nargsf, kw);
    }
    if (s->kind == K_MAP && ((s->f32 && f32_has_nan(ra.out, n)) || (elided && row_has_nan((const double *)ra.out, n)))) {
        Py_DECREF(result);
        return fallback(s, R_RESULT, args, nargsf, kw);
    }
    if (result == NULL) {
        /* NaN results and +-0 extrema: the sign/payload follows NumPy's internal order,
           so NumPy answers those itself, unless the backend proved its serial order
           gives NumPy's NaN (sum, mean, prod) */
        int nan_mine = s->nan_ok && !ra.parallel && !elided;
        if ((isnan(ra.value) && !nan_mine) || ((s->kind == K_MAX || s->kind == K_MIN) && ra.value == 0.0))
            return fallback(s, R_RESULT, args, nargsf, kw);
        result = PyArray_Scalar(&ra.value, descr_double, NULL);
    }
    s->fast++;
    return result;
}

/* Maps over strided or broadcast operands (_strided.h): a fresh C-ordered result. */
static PyObject *site_strided(SiteObject *s, PyArrayObject *const *ops, char *const *arrays, int na,
                              double *scalars, int strict, PyObject *const *args, size_t nargsf,
                              PyObject *kw) {
    strided_plan p;
    npy_intp dims[NPY_MAXDIMS];
    int r = plan_operands(ops, na, &p, dims);
    if (r >= 0) return fallback(s, r, args, nargsf, kw);
    int nd = p.nd;
    npy_intp n = 1;
    for (int d = 0; d < nd; d++) n *= dims[d];
    if (n == 0) return fallback(s, R_EMPTY, args, nargsf, kw);
    coalesce(&p);
    /* a kernel calling NumPy's loops: every operand a loop may read ('a', not 'w') in place */
    for (int i = 0, k = 0; s->loops_count && i < s->nleaves; i++) {
        if (s->leaves[i] == 's') continue;
        if (s->leaves[i] == 'a' && p.strides[k][p.nd - 1] != 8) return fallback(s, R_LAYOUT, args, nargsf, kw);
        k++;
    }
    int type = s->kind == K_MAP ? (s->f32 ? NPY_FLOAT : s->itype ? s->itype : NPY_DOUBLE) : NPY_BOOL;
    PyObject *result = PyArray_Empty(nd, dims, PyArray_DescrFromType(type), 0);
    if (result == NULL) return NULL;
    char *bases[MAXARGS];
    for (int k = 0; k < na; k++) bases[k] = ops[k] ? PyArray_DATA(ops[k]) : arrays[k];
    /* NumPy's operand order on every row (_strided.h): one row of operands in place or
       weak floats; or, without library loops (whose flags are their own), rows of a
       multiple of 8 of operands in place or broadcast along the row */
    int nd1 = p.nd == 1, order = nd1, inline_only = !s->loops_count;
    inline_only &= nd1 || p.shape[p.nd - 1] % 8 == 0;
    for (int k = 0; k < na; k++) {
        npy_intp st = p.strides[k][p.nd - 1];
        order &= st == 8 || ops[k] == NULL;
        inline_only &= st == 8 || st == 0;
    }
    /* NumPy's temporary elision: followed in rows in its order, else a NaN result
       is NumPy's (the rows are scanned then anyway) */
    int elided = 0, ns = 0;
    for (int i = 0; i < s->nleaves; i++) ns += s->leaves[i] == 's';
    if (s->swaps) scalars[ns] = elided_nodes(s, ops, na, nd, dims, &elided, 0);
    int flags = run_strided(s, &p, bases, scalars, PyArray_DATA((PyArrayObject *)result), order || inline_only);
    if (strict && flags > 0) flags = -3; /* Python may raise where NumPy warns */
    if (flags == 0 && elided && s->kind == K_MAP && row_has_nan(PyArray_DATA((PyArrayObject *)result), n))
        flags = -2; /* NumPy's temporary elision may swap where two NaNs meet */
    if (flags == -1) { Py_DECREF(result); return NULL; }
    if (flags == -2) { Py_DECREF(result); return fallback(s, R_RESULT, args, nargsf, kw); }
    if (flags == -3) { Py_DECREF(result); return fallback(s, R_FPFLAGS, args, nargsf, kw); }
    if (flags && (r = flags_reported(flags)) != 0) {
        Py_DECREF(result);
        if (r < 0) return NULL;
        return fallback(s, R_FPFLAGS, args, nargsf, kw);
    }
    s->fast++;
    return result;
}

/* The (fn, data) of ufunc's inner loop whose every operand is float64. */
static int find_loop(PyObject *ufunc, const char *sig, ppy_loop *out) {
    if (!PyObject_TypeCheck(ufunc, &PyUFunc_Type)) {
        PyErr_SetString(PyExc_TypeError, "loops: expected a numpy ufunc");
        return -1;
    }
    PyUFuncObject *uf = (PyUFuncObject *)ufunc;
    int nin = strcmp(sig, "ddd->d") == 0 ? 3 : strcmp(sig, "dd->d") == 0 ? 2 : (strcmp(sig, "d->d") == 0 ? 1 : -1);
    if (nin < 0 || uf->nin != nin || uf->nout != 1) {
        PyErr_Format(PyExc_LookupError, "loops: %s has no %s loop", uf->name, sig);
        return -1;
    }
    for (int i = 0; i < uf->ntypes; i++) {
        const char *t = uf->types + i * (nin + 1);
        int ok = 1;
        for (int j = 0; j <= nin; j++) ok &= t[j] == NPY_DOUBLE;
        if (ok && uf->functions[i] != NULL) {
            out->fn = (void *)uf->functions[i];
            out->data = uf->data ? uf->data[i] : NULL;
            return 0;
        }
    }
    PyErr_Format(PyExc_LookupError, "loops: %s has no %s loop", uf->name, sig);
    return -1;
}

static int parse_loops(SiteObject *s, PyObject *loops) {
    PyObject *seq = PySequence_Fast(loops, "loops must be a sequence of (ufunc, signature)");
    if (seq == NULL) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    s->loops = PyMem_Calloc(n ? n : 1, sizeof(ppy_loop));
    s->loops_count = n;
    for (Py_ssize_t i = 0; s->loops && i < n; i++) {
        PyObject *uf, *sig;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, i), "OU", &uf, &sig)
            || find_loop(uf, PyUnicode_AsUTF8(sig), &s->loops[i]) < 0) {
            Py_DECREF(seq);
            return -1;
        }
    }
    Py_DECREF(seq);
    return s->loops ? 0 : (PyErr_NoMemory(), -1);
}

/* `views` (see the top): the leaves' arguments and indexes, and the arguments' count. */
static int parse_views(SiteObject *s, PyObject *views, int n) {
    s->nargs = n;
    for (int i = 0; i < n; i++) s->view_arg[i] = i;
    if (views == NULL || views == Py_None) return 0;
    if (!PyTuple_Check(views) || PyTuple_GET_SIZE(views) != n) goto bad;
    s->nargs = 0;
    for (int i = 0; i < n; i++) {
        PyObject *item = PyTuple_GET_ITEM(views, i), *index, *counters = NULL;
        int arg;
        if (!PyTuple_Check(item) || !PyArg_ParseTuple(item, "iO|O", &arg, &index, &counters)) goto bad;
        if (arg < 0 || arg >= n || (index != Py_None && !PyTuple_Check(index))) goto bad;
        for (Py_ssize_t j = 0; index != Py_None && j < PyTuple_GET_SIZE(index); j++) {
            PyObject *part = PyTuple_GET_ITEM(index, j);
            if (part != Py_None && !PySlice_Check(part) && !PyLong_CheckExact(part)) goto bad; /* basic */
        }
        if (counters != NULL && (index == Py_None || !PyTuple_Check(counters))) goto bad;
        for (Py_ssize_t c = 0; counters != NULL && c < PyTuple_GET_SIZE(counters); c++) {
            PyObject *at = PyTuple_GET_ITEM(counters, c);
            Py_ssize_t pos, carg;
            long long offset;
            if (!PyTuple_Check(at) || !PyArg_ParseTuple(at, "nnL", &pos, &carg, &offset)) goto bad;
            if (pos < 0 || pos >= PyTuple_GET_SIZE(index) || carg < 0 || carg >= MAXARGS) goto bad;
            if (carg >= s->nargs) s->nargs = (int)carg + 1;
        }
        s->view_arg[i] = arg;
        s->view_index[i] = index == Py_None ? NULL : Py_NewRef(index);
        s->view_counters[i] = counters == NULL ? NULL : Py_NewRef(counters);
        if (arg >= s->nargs) s->nargs = arg + 1;
    }
    return 0;
bad:
    PyErr_Clear();
    PyErr_SetString(PyExc_ValueError, "Site: views must be one (argument, index tuple or None) per leaf");
    return -1;
}

/* Site(swaps=...): see the top of this file. */
static int set_swaps(SiteObject *s, PyObject *swaps) {
    PyObject *t = PySequence_Tuple(swaps);
    if (t == NULL) return -1;
    Py_ssize_t n = PyTuple_GET_SIZE(t);
    long long v[1 + 2 * SWAPS_MAX];
    int ok = n == 0 || n == 1 || (n % 2 == 1 && n <= 1 + 2 * SWAPS_MAX);
    for (Py_ssize_t i = 0; ok && i < n; i++) {
        v[i] = PyLong_AsLongLong(PyTuple_GET_ITEM(t, i));
        ok = !(v[i] == -1 && PyErr_Occurred());
    }
    Py_DECREF(t);
    if (ok && n) ok = (v[0] & 3) == 1 || (v[0] & 3) == 2;
    for (Py_ssize_t j = 0; ok && 2 * j + 2 < n; j++)
        ok = v[2 * j + 1] >= 0 && v[2 * j + 1] < MAXARGS;
    if (!ok) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "Site: bad swaps table");
        return -1;
    }
    s->swaps = n ? (int)(v[0] & 15) : 0;
    s->nswap = n == 1 ? -1 : (int)(n / 2);
    for (int j = 0; j < s->nswap; j++) s->swap_left[j] = (int)v[2 * j + 1], s->swap_right[j] = v[2 * j + 2];
    return 0;
}

static PyObject *site_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"kernel", "kind", "leaves", "fallback", "site_id", "loops", "keepalive",
                             "par_threshold", "nan_ok", "store", "views", "splat", "swaps", "rows", NULL};
    unsigned long long addr, splat = 0, rows = 0;
    const char *kind, *leaves;
    PyObject *fb, *sid, *loops = NULL, *keep = Py_None, *views = NULL;
    Py_ssize_t par = -1;
    int nan_ok = 0, store = S_NONE;
    PyObject *swaps = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "KssOO|OOnpiOKOK", kwlist, &addr, &kind, &leaves, &fb, &sid, &loops,
                                     &keep, &par, &nan_ok, &store, &views, &splat, &swaps, &rows))
        return NULL;
    int k = 0;
    while (k < K_N && strcmp(kind_names[k], kind) != 0) k++;
    size_t nl = strlen(leaves);
    if (k == K_N || nl == 0 || nl > MAXARGS || strspn(leaves, "aswfplincj") != nl || strcspn(leaves, "awflicj") == nl || !addr
        || !PyCallable_Check(fb) || store < S_NONE || store > S_AUG_NAME) {
        PyErr_SetString(PyExc_ValueError, "Site: bad kernel, kind, leaves or fallback");
        return NULL;
    }
    SiteObject *s = (SiteObject *)type->tp_alloc(type, 0);
    if (s == NULL) return NULL;
    s->vectorcall = site_vectorcall;
    s->kernel = (void *)(uintptr_t)addr;
    s->splat = (void *)(uintptr_t)splat;
    s->rows = splat ? (void *)(uintptr_t)rows : NULL;
    s->kind = k;
    s->nleaves = (int)nl;
    memcpy(s->leaves, leaves, nl);
    s->par_threshold = par;
    s->nan_ok = nan_ok;
    s->f32 = strchr(leaves, 'f') != NULL;
    s->itype = strchr(leaves, 'l') ? NPY_INT64 : strchr(leaves, 'i') ? NPY_INT32 : 0;
    s->cplx = strchr(leaves, 'c') != NULL;
    s->store = store;
    s->fresh = reads_fresh(fb);
    if (swaps != NULL && swaps != Py_None && set_swaps(s, swaps) < 0) {
        Py_DECREF(s);
        return NULL;
    }
    Py_INCREF(fb); s->fallback = fb;
    Py_INCREF(sid); s->site_id = sid;
    Py_INCREF(keep); s->keepalive = keep;
    PyObject *empty = PyTuple_New(0);
    int bad = empty == NULL || parse_loops(s, loops && loops != Py_None ? loops : empty) < 0
              || parse_views(s, views, s->nleaves - (store == S_AUG_ITEM || store == S_AUG_NAME)) < 0;
    Py_XDECREF(empty);
    if (bad) { Py_DECREF(s); return NULL; }
    return (PyObject *)s;
}

static void site_dealloc(SiteObject *s) {
    Py_XDECREF(s->fallback);
    Py_XDECREF(s->site_id);
    Py_XDECREF(s->keepalive);
    PyMem_Free(s->loops);
    for (int i = 0; i < MAXARGS; i++) Py_XDECREF(s->view_index[i]), Py_XDECREF(s->view_counters[i]);
    Py_TYPE(s)->tp_free((PyObject *)s);
}

static PyObject *site_stats(SiteObject *s, PyObject *unused) {
    PyObject *fb = PyDict_New();
    for (int i = 0; fb && i < R_N; i++) {
        if (s->fallbacks[i] == 0) continue;
        PyObject *v = PyLong_FromUnsignedLongLong(s->fallbacks[i]);
        if (v == NULL || PyDict_SetItemString(fb, reason_names[i], v) < 0) { Py_XDECREF(v); Py_DECREF(fb); return NULL; }
        Py_DECREF(v);
    }
    if (fb == NULL) return NULL;
    if (s->store)
        return Py_BuildValue("{sOsKsNsK}", "site", s->site_id, "fast", s->fast, "fallback", fb, "direct", s->direct);
    if (s->splat)
        return Py_BuildValue("{sOsKsNsKsK}", "site", s->site_id, "fast", s->fast, "fallback", fb, "splat", s->splat_calls,
                             "rows", s->rows_calls);
    return Py_BuildValue("{sOsKsN}", "site", s->site_id, "fast", s->fast, "fallback", fb);
}

static PyObject *site_reset(SiteObject *s, PyObject *unused) {
    s->fast = 0;
    s->direct = 0;
    s->splat_calls = 0;
    s->rows_calls = 0;
    memset(s->fallbacks, 0, sizeof(s->fallbacks));
    s->misses = s->probe = 0; /* counted afresh: retired again only by new failures */
    Py_RETURN_NONE;
}

static PyMethodDef site_methods[] = {
    {"stats", (PyCFunction)site_stats, METH_NOARGS, "{'site', 'fast', 'fallback': {reason: count}}"},
    {"reset_stats", (PyCFunction)site_reset, METH_NOARGS, "zero the counters"},
    {"shadow_target", (PyCFunction)site_shadow_target, METH_O, "PPY_VERIFY: a copy of a store's target, or None"},
    {NULL}};

static PyObject *site_get_kind(SiteObject *s, void *c) { return PyUnicode_FromString(kind_names[s->kind]); }
static PyObject *site_get_id(SiteObject *s, void *c) { Py_INCREF(s->site_id); return s->site_id; }
static PyObject *site_get_fb(SiteObject *s, void *c) { Py_INCREF(s->fallback); return s->fallback; }
/* a store writes its target: PPY_VERIFY runs its Python on a copy first (shadow_target) */
static PyObject *site_get_stateful(SiteObject *s, void *c) { return PyBool_FromLong(s->store != S_NONE); }
static PyGetSetDef site_getset[] = {
    {"kind", (getter)site_get_kind, NULL, NULL, NULL},
    {"site_id", (getter)site_get_id, NULL, NULL, NULL},
    {"fallback", (getter)site_get_fb, NULL, NULL, NULL},
    {"stateful", (getter)site_get_stateful, NULL, NULL, NULL},
    {NULL}};

static PyTypeObject SiteType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ppy_numpy._runtime._dispatch.Site",
    .tp_basicsize = sizeof(SiteObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_vectorcall_offset = offsetof(SiteObject, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_new = site_new,
    .tp_dealloc = (destructor)site_dealloc,
    .tp_methods = site_methods,
    .tp_getset = site_getset,
    .tp_doc = "A fused-kernel call site: guard, kernel, FP-flag check, fallback.",
};

static PyObject *mod_ufunc_loop(PyObject *m, PyObject *args) {
    PyObject *uf;
    const char *sig;
    ppy_loop l;
    if (!PyArg_ParseTuple(args, "Os", &uf, &sig) || find_loop(uf, sig, &l) < 0) return NULL;
    return Py_BuildValue("(KK)", (unsigned long long)(uintptr_t)l.fn, (unsigned long long)(uintptr_t)l.data);
}

static PyObject *mod_num_threads(PyObject *m, PyObject *unused) { return PyLong_FromLong(ppy_pool_threads()); }

static PyObject *mod_set_num_threads(PyObject *m, PyObject *arg) {
    long n = PyLong_AsLong(arg);
    if (n == -1 && PyErr_Occurred()) return NULL;
    ppy_pool_set_threads((int)n);
    Py_RETURN_NONE;
}

/* Signatures (ppy_core.runtime.signatures): an exact ndarray described as the adapter's
   `python_describer` describes it, ("array", "numpy", "numpy.ndarray", element kind,
   rank, layout "C" | "F" | "A", writeable), the element kind looked up in the table
   set_element_kinds gave (else the dtype's str). A specializing dispatcher describes
   its array arguments on every call: in C that costs a tenth of the Python closure. */
static PyObject *element_kinds = NULL;
static PyObject *describe_head[3], *layout_names[3];

static PyObject *mod_set_element_kinds(PyObject *m, PyObject *kinds) {
    if (!PyDict_Check(kinds)) {
        PyErr_SetString(PyExc_TypeError, "set_element_kinds: a dict of dtype -> element kind");
        return NULL;
    }
    Py_XSETREF(element_kinds, Py_NewRef(kinds));
    Py_RETURN_NONE;
}

static PyObject *mod_describe(PyObject *m, PyObject *o) {
    if (Py_TYPE(o) != &PyArray_Type || element_kinds == NULL) {
        PyErr_SetString(PyExc_TypeError, "describe: an exact numpy.ndarray, after set_element_kinds");
        return NULL;
    }
    PyArrayObject *a = (PyArrayObject *)o;
    int flags = PyArray_FLAGS(a);
    PyObject *descr = (PyObject *)PyArray_DESCR(a);
    PyObject *element = PyDict_GetItemWithError(element_kinds, descr);
    if (element != NULL) Py_INCREF(element);
    else if (PyErr_Occurred() || (element = PyObject_GetAttrString(descr, "str")) == NULL) return NULL;
    PyObject *rank = PyLong_FromLong(PyArray_NDIM(a)), *out = rank ? PyTuple_New(7) : NULL;
    if (out == NULL) {
        Py_DECREF(element);
        Py_XDECREF(rank);
        return NULL;
    }
    int layout = flags & NPY_ARRAY_C_CONTIGUOUS ? 0 : flags & NPY_ARRAY_F_CONTIGUOUS ? 1 : 2;
    for (int i = 0; i < 3; i++) PyTuple_SET_ITEM(out, i, Py_NewRef(describe_head[i]));
    PyTuple_SET_ITEM(out, 3, element);
    PyTuple_SET_ITEM(out, 4, rank);
    PyTuple_SET_ITEM(out, 5, Py_NewRef(layout_names[layout]));
    PyTuple_SET_ITEM(out, 6, PyBool_FromLong(flags & NPY_ARRAY_WRITEABLE));
    return out;
}

static PyMethodDef mod_methods[] = {
    {"ufunc_loop", mod_ufunc_loop, METH_VARARGS, "ufunc_loop(ufunc, 'd->d'|'dd->d') -> (fn, data) addresses"},
    {"num_threads", mod_num_threads, METH_NOARGS, "threads used for large kernels (PPY_NUM_THREADS)"},
    {"set_num_threads", mod_set_num_threads, METH_O, "set the thread count"},
    {"set_element_kinds", mod_set_element_kinds, METH_O, "the dtype -> element kind table describe reads"},
    {"describe", mod_describe, METH_O, "an exact ndarray's signature description"},
    {NULL}};

static struct PyModuleDef moddef = {PyModuleDef_HEAD_INIT, "_dispatch", "Fused-kernel call sites.", -1, mod_methods};

PyMODINIT_FUNC PyInit__dispatch(void) {
    import_array();
    import_umath();
    if (PyType_Ready(&SiteType) < 0) return NULL;
    PyObject *np = PyImport_ImportModule("numpy");
    if (np == NULL) return NULL;
    np_geterr = PyObject_GetAttrString(np, "geterr");
    Py_DECREF(np);
    descr_double = PyArray_DescrFromType(NPY_DOUBLE);
    const char *head[3] = {"array", "numpy", "numpy.ndarray"}, *layouts = "CFA";
    for (int i = 0; i < 3; i++) {
        describe_head[i] = PyUnicode_InternFromString(head[i]);
        layout_names[i] = PyUnicode_FromStringAndSize(layouts + i, 1);
        if (describe_head[i] == NULL || layout_names[i] == NULL) return NULL;
    }
    if (np_geterr == NULL || descr_double == NULL || store_init() < 0) return NULL;
    PyObject *m = PyModule_Create(&moddef);
    if (m == NULL) return NULL;
    Py_INCREF(&SiteType);
    if (PyModule_AddObject(m, "Site", (PyObject *)&SiteType) < 0) return NULL;
    PyObject *names = PyTuple_New(R_N);
    for (int i = 0; i < R_N; i++) PyTuple_SET_ITEM(names, i, PyUnicode_FromString(reason_names[i]));
    PyModule_AddObject(m, "REASONS", names);
    return m;
}

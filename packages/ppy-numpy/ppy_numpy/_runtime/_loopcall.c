/* ppy_numpy._runtime._loopcall: the guarded call of a typed-loops function, in C.
 *
 * LoopCall(fn, fn_c, kinds, dtypes, ranks, writes, result, numpy_scalars, site)
 *   fn, fn_c : addresses of `int32 f(int64 *args, int64 *out)` (any strides / every
 *              array C-contiguous), the convention of ppy_llvm._loops
 *   kinds    : one char per parameter: 'a' array, 'i' int, 'f' float, 'u' unused,
 *              'r' a float or an np.float64 (used where the two give the same answer)
 *   dtypes   : per parameter, the NumPy type number of an array's elements (else 0)
 *   ranks    : per parameter, an array's rank (else 0)
 *   writes   : per parameter, 1 where the function stores into the array
 *   result   : 'n' None, 'f' float, 'F' np.float64, 'i' int, 'I' np.int64,
 *              'b' bool, 'x' float or np.float64 by the run's tag (out[1])
 *   site     : the Python LoopsSite (ppy_numpy._runtime.loops): it answers every
 *              call this object does not: a failed guard (it re-guards, counts the
 *              reason and runs the Python function), an error code or NumPy scalar
 *              warnings (`site.answer(code, out)`), an errstate the code cannot keep.
 *
 * The common call -- exact types, the compiled dtype and rank, any strides, ints
 * within the front end's proven range -- packs one word per parameter (an array:
 * the address of its {data, nd, dimensions, strides} fields), calls the function
 * and boxes the returned bits as the type Python would return, without entering
 * Python code.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_2_0_API_VERSION
#define PY_ARRAY_UNIQUE_SYMBOL ppy_loopcall_ARRAY_API
#include <numpy/arrayobject.h>
#include <numpy/arrayscalars.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define MAXARGS 64
/* the front end's proof assumes |int argument| and every dimension within this */
#define ARG_BOUND (INT64_C(1) << 32)

typedef int32_t (*loops_fn)(int64_t *args, int64_t *out);

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    loops_fn fn, fn_c;
    Py_ssize_t nargs;
    char kinds[MAXARGS];
    PyArray_Descr *descrs[MAXARGS];
    int ranks[MAXARGS];
    char writes[MAXARGS];
    char result;
    int numpy_scalars;
    PyObject *site;       /* the Python LoopsSite: every call this one does not answer */
    PyObject *errstate;   /* the np.errstate object last seen, and whether it is quiet */
    int quiet;
    unsigned long long fast;
    PyObject *dict;
} LoopCall;

static PyObject *errstate_var = NULL; /* numpy's contextvar holding the errstate */
static PyObject *quiet_fn = NULL;     /* loops._errstate_quiet(): bool */
static PyArray_Descr *descr_double = NULL, *descr_int64 = NULL;

/* The site's answer for everything off the common path. */
static PyObject *to_site(LoopCall *s, PyObject *const *args, size_t nargsf, PyObject *kw) {
    return PyObject_Vectorcall(s->site, args, nargsf, kw);
}

/* Whether the current np.errstate only warns or ignores scalar errors (what the
 * compiled code reproduces): recomputed in Python only when the errstate object
 * changes, as np.errstate / np.seterr make a new one. -1 on error. */
static int errstate_quiet(LoopCall *s) {
    PyObject *current = NULL;
    if (PyContextVar_Get(errstate_var, NULL, &current) < 0) return -1;
    if (current != NULL && current == s->errstate) {
        Py_DECREF(current);
        return s->quiet;
    }
    PyObject *r = PyObject_CallNoArgs(quiet_fn);
    if (r == NULL) { Py_XDECREF(current); return -1; }
    int quiet = PyObject_IsTrue(r);
    Py_DECREF(r);
    if (quiet < 0) { Py_XDECREF(current); return -1; }
    Py_XSETREF(s->errstate, current); /* steals the reference (NULL: never equal) */
    s->quiet = quiet;
    return quiet;
}

static PyObject *box(LoopCall *s, const int64_t *out) {
    double d;
    switch (s->result) {
        case 'n': Py_RETURN_NONE;
        case 'i': return PyLong_FromLongLong(out[0]);
        case 'b': return PyBool_FromLong(out[0] != 0);
        case 'I': return PyArray_Scalar((void *)&out[0], descr_int64, NULL);
        case 'f': memcpy(&d, &out[0], 8); return PyFloat_FromDouble(d);
        case 'F': return PyArray_Scalar((void *)&out[0], descr_double, NULL);
        case 'x':
            if (out[1]) return PyArray_Scalar((void *)&out[0], descr_double, NULL);
            memcpy(&d, &out[0], 8);
            return PyFloat_FromDouble(d);
    }
    PyErr_SetString(PyExc_SystemError, "LoopCall: unknown result kind");
    return NULL;
}

static PyObject *loopcall_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kw) {
    LoopCall *s = (LoopCall *)self;
    Py_ssize_t n = PyVectorcall_NARGS(nargsf);
    if (kw != NULL || n != s->nargs) return to_site(s, args, nargsf, kw);
    int64_t packed[MAXARGS];
    int contiguous = 1;
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *x = args[k];
        switch (s->kinds[k]) {
            case 'a': {
                if (Py_TYPE(x) != &PyArray_Type) return to_site(s, args, nargsf, kw);
                PyArrayObject *arr = (PyArrayObject *)x;
                if (PyArray_DESCR(arr) != s->descrs[k] || PyArray_NDIM(arr) != s->ranks[k])
                    return to_site(s, args, nargsf, kw);
                if (s->writes[k] && !PyArray_ISWRITEABLE(arr)) return to_site(s, args, nargsf, kw);
                const npy_intp *dims = PyArray_DIMS(arr);
                for (int d = 0; d < s->ranks[k]; d++)
                    if (dims[d] >= ARG_BOUND) return to_site(s, args, nargsf, kw);
                contiguous &= PyArray_IS_C_CONTIGUOUS(arr) != 0;
                /* {data, nd, dimensions, strides}: the record the function reads */
                packed[k] = (int64_t)(uintptr_t) & ((PyArrayObject_fields *)arr)->data;
                break;
            }
            case 'i': {
                if (!PyLong_CheckExact(x)) return to_site(s, args, nargsf, kw);
                int overflow = 0;
                long long v = PyLong_AsLongLongAndOverflow(x, &overflow);
                if (overflow || v < -ARG_BOUND || v > ARG_BOUND) return to_site(s, args, nargsf, kw);
                packed[k] = v;
                break;
            }
            case 'f': {
                if (!PyFloat_CheckExact(x)) return to_site(s, args, nargsf, kw);
                double d = PyFloat_AS_DOUBLE(x);
                memcpy(&packed[k], &d, 8);
                break;
            }
            case 'r': {
                if (!PyFloat_CheckExact(x) && Py_TYPE(x) != &PyDoubleArrType_Type)
                    return to_site(s, args, nargsf, kw);
                double d = PyFloat_AsDouble(x); /* np.float64 subclasses float */
                memcpy(&packed[k], &d, 8);
                break;
            }
            default: packed[k] = 0; /* unused: Python ignores it, so does the function */
        }
    }
    if (s->numpy_scalars) {
        int quiet = errstate_quiet(s);
        if (quiet < 0) return NULL;
        if (!quiet) return to_site(s, args, nargsf, kw); /* raises or calls: Python */
    }
    int64_t out[5] = {0, 0, 0, 0, 0};
    loops_fn fn = contiguous ? s->fn_c : s->fn;
    int32_t code;
    /* other threads run meanwhile, as they would beside the interpreter's loop (and
     * did beside the ctypes call this replaces); the arguments' references are held */
    Py_BEGIN_ALLOW_THREADS
    code = fn(packed, out);
    Py_END_ALLOW_THREADS
    /* 5: the function returned before running anything (an array updated in place
     * whose layout it does not reproduce); 6: it left the call to Python having
     * written no array but those it made (the functions called here make none: a
     * masked mean NumPy answers its own way, a temporary malloc could not give): the
     * site runs Python and counts why (its run of the function answers 6 again) */
    if (code == 5 || code == 6) return to_site(s, args, nargsf, kw);
    s->fast++;
    if (code == 0 && out[4] == 0) return box(s, out);
    /* an exception to raise or NumPy warnings to give: the site's Python does it */
    return PyObject_CallMethod(s->site, "answer", "i(LLLLL)", (int)code, (long long)out[0], (long long)out[1],
                               (long long)out[2], (long long)out[3], (long long)out[4]);
}

static int parse_ints(PyObject *seq, Py_ssize_t n, long *into) {
    PyObject *fast = PySequence_Fast(seq, "LoopCall: a sequence of ints");
    if (fast == NULL) return -1;
    if (PySequence_Fast_GET_SIZE(fast) != n) {
        Py_DECREF(fast);
        PyErr_SetString(PyExc_ValueError, "LoopCall: one entry per parameter");
        return -1;
    }
    for (Py_ssize_t k = 0; k < n; k++) {
        into[k] = PyLong_AsLong(PySequence_Fast_GET_ITEM(fast, k));
        if (into[k] == -1 && PyErr_Occurred()) { Py_DECREF(fast); return -1; }
    }
    Py_DECREF(fast);
    return 0;
}

static PyObject *loopcall_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"fn", "fn_c", "kinds", "dtypes", "ranks", "writes", "result", "numpy_scalars", "site", NULL};
    unsigned long long fn, fn_c;
    const char *kinds, *result;
    PyObject *dtypes, *ranks, *writes, *site;
    int numpy_scalars;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "KKsOOOspO", kwlist, &fn, &fn_c, &kinds, &dtypes, &ranks, &writes,
                                     &result, &numpy_scalars, &site))
        return NULL;
    Py_ssize_t n = (Py_ssize_t)strlen(kinds);
    if (!fn || !fn_c || n > MAXARGS || strspn(kinds, "aifur") != (size_t)n || strlen(result) != 1
        || !strchr("nfFiIbx", result[0]) || !PyCallable_Check(site)) {
        PyErr_SetString(PyExc_ValueError, "LoopCall: bad function, kinds, result or site");
        return NULL;
    }
    long types[MAXARGS], rk[MAXARGS], wr[MAXARGS];
    if (parse_ints(dtypes, n, types) < 0 || parse_ints(ranks, n, rk) < 0 || parse_ints(writes, n, wr) < 0)
        return NULL;
    LoopCall *s = (LoopCall *)type->tp_alloc(type, 0);
    if (s == NULL) return NULL;
    s->vectorcall = loopcall_vectorcall;
    s->fn = (loops_fn)(uintptr_t)fn;
    s->fn_c = (loops_fn)(uintptr_t)fn_c;
    s->nargs = n;
    memcpy(s->kinds, kinds, (size_t)n);
    for (Py_ssize_t k = 0; k < n; k++) {
        s->ranks[k] = (int)rk[k];
        s->writes[k] = (char)(wr[k] != 0);
        if (kinds[k] == 'a') {
            s->descrs[k] = PyArray_DescrFromType((int)types[k]); /* the builtin singleton */
            if (s->descrs[k] == NULL) { Py_DECREF(s); return NULL; }
        }
    }
    s->result = result[0];
    s->numpy_scalars = numpy_scalars;
    Py_INCREF(site);
    s->site = site;
    return (PyObject *)s;
}

static int loopcall_traverse(LoopCall *s, visitproc visit, void *arg) {
    Py_VISIT(s->site);
    Py_VISIT(s->dict);
    return 0;
}

static int loopcall_clear(LoopCall *s) {
    Py_CLEAR(s->site);
    Py_CLEAR(s->errstate);
    Py_CLEAR(s->dict);
    return 0;
}

static void loopcall_dealloc(LoopCall *s) {
    PyObject_GC_UnTrack(s);
    loopcall_clear(s);
    for (Py_ssize_t k = 0; k < s->nargs; k++) Py_XDECREF(s->descrs[k]);
    Py_TYPE(s)->tp_free((PyObject *)s);
}

/* {"fast": n, "fallback": {reason: n}}: this object's fast calls plus the site's */
static PyObject *loopcall_stats(LoopCall *s, PyObject *unused) {
    PyObject *data = PyObject_CallMethod(s->site, "ppy_stats", NULL);
    if (data == NULL) return NULL;
    PyObject *before = PyDict_GetItemString(data, "fast"); /* borrowed */
    PyObject *mine = PyLong_FromUnsignedLongLong(s->fast);
    PyObject *total = before && mine ? PyNumber_Add(before, mine) : NULL;
    Py_XDECREF(mine);
    if (total == NULL || PyDict_SetItemString(data, "fast", total) < 0) {
        if (total == NULL && !PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "ppy_stats: no 'fast' count");
        Py_XDECREF(total);
        Py_DECREF(data);
        return NULL;
    }
    Py_DECREF(total);
    return data;
}

static PyObject *loopcall_reset(LoopCall *s, PyObject *unused) {
    s->fast = 0;
    return PyObject_CallMethod(s->site, "ppy_reset", NULL);
}

static PyMethodDef loopcall_methods[] = {
    {"ppy_stats", (PyCFunction)loopcall_stats, METH_NOARGS, "{'fast': n, 'fallback': {reason: n}}"},
    {"ppy_reset", (PyCFunction)loopcall_reset, METH_NOARGS, "zero the counters"},
    {NULL}};

static PyObject *loopcall_get_site(LoopCall *s, void *c) { Py_INCREF(s->site); return s->site; }
static PyGetSetDef loopcall_getset[] = {
    {"site", (getter)loopcall_get_site, NULL, "the Python LoopsSite behind this call", NULL},
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL},
    {NULL}};

static PyTypeObject LoopCallType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ppy_numpy._runtime._loopcall.LoopCall",
    .tp_basicsize = sizeof(LoopCall),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_HAVE_GC,
    .tp_vectorcall_offset = offsetof(LoopCall, vectorcall),
    .tp_dictoffset = offsetof(LoopCall, dict),
    .tp_call = PyVectorcall_Call,
    .tp_new = loopcall_new,
    .tp_dealloc = (destructor)loopcall_dealloc,
    .tp_traverse = (traverseproc)loopcall_traverse,
    .tp_clear = (inquiry)loopcall_clear,
    .tp_methods = loopcall_methods,
    .tp_getset = loopcall_getset,
    .tp_doc = "A typed-loops function's guarded call (see the module docstring).",
};

static struct PyModuleDef moddef = {PyModuleDef_HEAD_INIT, "_loopcall", "Typed-loops call sites.", -1, NULL};

PyMODINIT_FUNC PyInit__loopcall(void) {
    import_array();
    if (PyType_Ready(&LoopCallType) < 0) return NULL;
    descr_double = PyArray_DescrFromType(NPY_DOUBLE);
    descr_int64 = PyArray_DescrFromType(NPY_INT64);
    PyObject *umath = PyImport_ImportModule("numpy._core.umath");
    if (umath == NULL || descr_double == NULL || descr_int64 == NULL) return NULL;
    errstate_var = PyObject_GetAttrString(umath, "_extobj_contextvar");
    Py_DECREF(umath);
    if (errstate_var == NULL) return NULL;
    if (!PyContextVar_CheckExact(errstate_var)) {
        PyErr_SetString(PyExc_ImportError, "numpy's errstate is not a context variable");
        return NULL;
    }
    PyObject *loops = PyImport_ImportModule("ppy_numpy._runtime.loops");
    if (loops == NULL) return NULL;
    quiet_fn = PyObject_GetAttrString(loops, "_errstate_quiet");
    Py_DECREF(loops);
    if (quiet_fn == NULL) return NULL;
    PyObject *m = PyModule_Create(&moddef);
    if (m == NULL) return NULL;
    Py_INCREF(&LoopCallType);
    if (PyModule_AddObject(m, "LoopCall", (PyObject *)&LoopCallType) < 0) return NULL;
    return m;
}

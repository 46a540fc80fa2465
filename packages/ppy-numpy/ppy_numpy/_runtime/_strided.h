/* Elementwise kernels over strided and broadcast operands (included by _dispatch.c).
 *
 * The kernels read contiguous rows of their dtype (float64, float32, int64, int32:
 * items of 8 or 4 bytes, `site_itemsize`). Operands of any strides whose shapes
 * broadcast (NumPy's rules, zero strides) are walked here row by row over the
 * fastest-varying axis after coalescing, as NumPy's iterator walks them: a row whose
 * stride is one item is passed in place, any other (a step, a broadcast) is gathered
 * into a scratch row first. A float32 result holding a NaN is NumPy's (as on the flat
 * path); an integer result is never scanned. The result is a fresh C-ordered array, which is what NumPy's
 * ufuncs give exactly when its axis ordering ("K", the stable insertion sort of
 * nditer over the operands' absolute strides, C order winning a conflict) keeps C
 * order; otherwise the guard refuses (layout).
 *
 * Elementwise values do not depend on the order of iteration; the bits of a NaN
 * that meets another NaN in an add or multiply do (x86 keeps the first operand's,
 * and NumPy's operand order depends on the length of each of its inner-loop calls,
 * which may differ here). So a float result holding a NaN is handed back to NumPy,
 * unless every row is shown to meet NumPy's order (`strided_rows`).
 * A kernel with a `_splat` entry (ppy-llvm: float64 maps without library loops) reads
 * an operand broadcast along the row from PPY_SPLAT copies of its value instead (no
 * filled row, one call per row where rows need no chunking; `splat_entry`), and with
 * a `_rows_nan` entry a thread's rows in one call that also tells whether it stored a
 * NaN, in place of a scan (`rows_entry`).
 * Kernels that call NumPy's own loops (sin, power ...) take this path only when
 * every operand row is in place (stride 8): NumPy's loops may pick another code path
 * for other strides.
 */
#define PPY_SCRATCH 1024

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

#if defined(__GNUC__) && defined(__x86_64__) && defined(__linux__)
#define PPY_WIDE_STORES __attribute__((target_clones("avx", "default")))
#define PPY_WIDE_INT __attribute__((target_clones("avx2", "default")))
#else
#define PPY_WIDE_STORES
#define PPY_WIDE_INT
#endif

/* buf[0..n) = v (32-byte stores where the CPU has them: a row-broadcast operand is
   filled once per row). */
PPY_WIDE_STORES static void fill(double *restrict buf, double v, npy_intp n) {
    for (npy_intp i = 0; i < n; i++) buf[i] = v;
}

/* buf[0..n) = the n doubles at src, src+st, ... (st = 0: one value repeated). */
static void gather(double *restrict buf, const char *src, npy_intp st, npy_intp n) {
    if (st == 0) {
        double v;
        memcpy(&v, src, 8);
        fill(buf, v, n);
    } else if (st % 8 == 0) {
        const double *s = (const double *)src;
        npy_intp e = st / 8;
        for (npy_intp i = 0; i < n; i++) buf[i] = s[i * e];
    } else {
        for (npy_intp i = 0; i < n; i++) memcpy(&buf[i], src + i * st, 8);
    }
}

/* gather() of m operands' rows at once, element by element. Views of one array at
   neighbouring offsets (u[:, :, k - 1], u[:, :, k], u[:, :, k + 1]) stride through the
   same cache lines and pages: read in one pass each line and page is fetched once, where
   one gather after the other walks them all again. Float64 items of whole-item strides;
   any other operand is gathered alone. */
static void gather_many(char *const *bufs, char *const *srcs, const npy_intp *sts, int m, npy_intp n) {
    double *b[MAXARGS];
    const double *s[MAXARGS];
    npy_intp e[MAXARGS];
    int t = 0;
    for (int j = 0; j < m; j++) {
        if (sts[j] % 8 != 0 || sts[j] == 0) { gather((double *)bufs[j], srcs[j], sts[j], n); continue; }
        b[t] = (double *)bufs[j], s[t] = (const double *)srcs[j], e[t] = sts[j] / 8, t++;
    }
    for (int j = 0; j < t; j += 4) { /* four at a time: a loop over a variable count is slower */
        double *restrict b0 = b[j], *b1 = b[j + 1 < t ? j + 1 : j], *b2 = b[j + 2 < t ? j + 2 : j];
        double *b3 = b[j + 3 < t ? j + 3 : j];
        const double *s0 = s[j];
        npy_intp e0 = e[j];
        switch (t - j) {
        case 1:
            gather(b0, (const char *)s0, e0 * 8, n);
            break;
        case 2:
            for (npy_intp i = 0; i < n; i++) b0[i] = s0[i * e0], b1[i] = s[j + 1][i * e[j + 1]];
            break;
        case 3:
            for (npy_intp i = 0; i < n; i++)
                b0[i] = s0[i * e0], b1[i] = s[j + 1][i * e[j + 1]], b2[i] = s[j + 2][i * e[j + 2]];
            break;
        default:
            for (npy_intp i = 0; i < n; i++)
                b0[i] = s0[i * e0], b1[i] = s[j + 1][i * e[j + 1]], b2[i] = s[j + 2][i * e[j + 2]],
                b3[i] = s[j + 3][i * e[j + 3]];
        }
    }
}

/* gather() for items of `isz` bytes (float64, int64: 8; float32, int32: 4). */
static void gather_items(char *restrict buf, const char *src, npy_intp st, npy_intp n, int isz) {
    if (isz == 8) {
        gather((double *)buf, src, st, n);
    } else if (st == 0) {
        for (npy_intp i = 0; i < n; i++) memcpy(buf + i * 4, src, 4);
    } else {
        for (npy_intp i = 0; i < n; i++) memcpy(buf + i * 4, src + i * st, 4);
    }
}

/* The bytes of one element of a site's operands and map result. */
static int site_itemsize(const SiteObject *s) { return s->f32 || s->itype == NPY_INT32 ? 4 : 8; }

/* Any NaN in row[0..n)? From the bits, without an FP compare (no flag, even for a
   signalling NaN): (bits & 0x7FF...F) + 0x000F...F has bit 63 set exactly for a NaN,
   integer lanes the compiler vectorizes (AVX2 where the CPU has it). */
PPY_WIDE_INT static int row_has_nan(const double *row, npy_intp n) {
    uint64_t any = 0;
    for (npy_intp i = 0; i < n; i++) {
        uint64_t b;
        memcpy(&b, &row[i], 8);
        any |= (b & 0x7FFFFFFFFFFFFFFFull) + 0x000FFFFFFFFFFFFFull;
    }
    return (int)(any >> 63);
}

/* row_has_nan for a float64 (isz 8) or float32 (isz 4) row, from the bits. */
static int items_have_nan(const char *row, npy_intp n, int isz) {
    if (isz == 8) return row_has_nan((const double *)row, n);
    uint32_t any = 0;
    for (npy_intp i = 0; i < n; i++) {
        uint32_t b;
        memcpy(&b, row + 4 * i, 4);
        any |= (b & 0x7FFFFFFFu) + 0x007FFFFFu;
    }
    return (int)(any >> 31);
}

/* The copies of a row-broadcast value the _splat entry reads (ppy-llvm _codegen.VEC). */
#define PPY_SPLAT 8

/* Whether the site's _splat entry serves `p` (an operand broadcast along the row):
   then `ext` is its scalars, the job's, then per operand the index mask (int64 bits)
   -1 (read in place or gathered) or 0 (its PPY_SPLAT copies), then the elision bits,
   then 0: no streaming stores (a row called alone is short, or scanned right after;
   the _rows_nan entry sets it for its own calls), then the NaN witness slot: 0 (see
   `run_strided`). */
static int splat_entry(const SiteObject *s, const strided_plan *p, const double *scalars, double *ext) {
    int ns = 0, broadcast = 0;
    for (int i = 0; i < s->nleaves; i++)
        if (s->leaves[i] == 's') ext[ns] = scalars[ns], ns++;
    for (int k = 0; k < p->na; k++) {
        int64_t mask = p->strides[k][p->nd - 1] == 0 ? 0 : -1;
        broadcast |= mask == 0;
        memcpy(&ext[ns + k], &mask, 8);
    }
    ext[ns + p->na] = scalars[ns];
    ext[ns + p->na + 1] = 0.0;
    ext[ns + p->na + 2] = 0.0;
    return broadcast;
}

typedef struct {
    SiteObject *s;
    const strided_plan *p;
    char *const *bases;
    const double *scalars;
    char *out;
    int order; /* every row meets NumPy's operand order: see strided_rows */
    const double *splat; /* NULL, or the scalars of the kernel's _splat entry (splat_entry) */
    int rows; /* the kernel's _rows_nan entry runs each task's rows in one call (rows_entry) */
} strided_job;

/* A row's chunk (a multiple of PPY_SCRATCH: its scratch rows stay in L1/L2) and its
   scratch: the chunk and the up to 8 elements a last chunk takes along. */
#define PPY_ROW_CHUNK (4 * PPY_SCRATCH)
#define PPY_ROW_BUF (PPY_ROW_CHUNK + 8)
/* The chunk of a row with gathered operands (a multiple of the kernels' block and of 8):
   its gathers' lines and pages stay in L1 and the TLB until the kernel and the scatter
   of a store (_store.h) read them again. */
#define PPY_GATHER_CHUNK 256
/* The chunk of rows with an operand broadcast along them, whose value is stored into
   a scratch row once per row: the kernel is called more often, on fewer stores. */
#define PPY_FILL_CHUNK 256

/* How each operand of a strided job reaches the kernel. */
enum { OP_IN_PLACE, OP_CONSTANT, OP_ROW_BROADCAST, OP_GATHER, OP_TWIN };

typedef struct {
    char *row[MAXARGS];     /* the operand's current row */
    double *buf[MAXARGS];   /* its scratch row (a twin shares the first one's) */
    int mode[MAXARGS];
    uint64_t held[MAXARGS]; /* the bits a row-broadcast scratch is filled with */
    int filled[MAXARGS];
    npy_intp idx[NPY_MAXDIMS]; /* the current row's index over the outer axes */
} row_operands;

/* Set up `o` at row r0: scratch rows from `scratch`, constants filled once; an operand
   equal to an earlier one not in place (same memory and strides: `x[:, None]` twice)
   is its twin and reads its scratch. */
static void start_rows(const strided_job *job, int64_t r0, double *scratch, row_operands *o) {
    const strided_plan *p = job->p;
    int na = p->na, nd = p->nd, g = 0, isz = site_itemsize(job->s);
    npy_intp rest = r0;
    for (int d = nd - 2; d >= 0; d--) { o->idx[d] = rest % p->shape[d]; rest /= p->shape[d]; }
    for (int k = 0; k < na; k++) {
        o->row[k] = job->bases[k];
        for (int d = 0; d < nd - 1; d++) o->row[k] += o->idx[d] * p->strides[k][d];
        o->filled[k] = 0;
        npy_intp st = p->strides[k][nd - 1];
        o->mode[k] = st == isz ? OP_IN_PLACE : st == 0 ? OP_ROW_BROADCAST : OP_GATHER;
        if (o->mode[k] == OP_IN_PLACE) continue;
        for (int j = 0; j < k && o->mode[k] != OP_TWIN; j++) {
            int same = o->mode[j] != OP_IN_PLACE && o->mode[j] != OP_TWIN && job->bases[j] == job->bases[k];
            for (int d = 0; same && d < nd; d++) same = p->strides[j][d] == p->strides[k][d];
            if (same) o->mode[k] = OP_TWIN, o->buf[k] = o->buf[j];
        }
        if (o->mode[k] == OP_TWIN) continue;
        o->buf[k] = scratch + (size_t)PPY_ROW_BUF * g++;
        int constant = 1;
        for (int d = 0; d < nd; d++) constant &= p->strides[k][d] == 0;
        if (constant) o->mode[k] = OP_CONSTANT, gather_items((char *)o->buf[k], job->bases[k], 0, PPY_ROW_BUF, isz);
    }
}

static int bits_nan(uint64_t bits) { return (bits & 0x7FFFFFFFFFFFFFFFull) > 0x7FF0000000000000ull; }

/* Fill the row-broadcast scratch rows for the current row, where its value changed;
   whether a broadcast float64 value of the row (or a constant) is NaN. */
static int fill_row(const strided_plan *p, row_operands *o, npy_intp width, int isz) {
    int nan = 0;
    for (int k = 0; k < p->na; k++) {
        uint64_t bits = 0;
        if (o->mode[k] != OP_ROW_BROADCAST && o->mode[k] != OP_CONSTANT) continue;
        memcpy(&bits, o->row[k], (size_t)isz);
        nan |= isz == 8 && bits_nan(bits);
        if (o->mode[k] == OP_CONSTANT || (o->filled[k] && bits == o->held[k])) continue;
        gather_items((char *)o->buf[k], o->row[k], 0, width, isz);
        o->held[k] = bits, o->filled[k] = 1;
    }
    return nan;
}

/* Whether a row of [r0, r1) of the output holds a NaN. */
static int rows_have_nan(const strided_job *job, int64_t r0, int64_t r1) {
    npy_intp L = job->p->shape[job->p->nd - 1];
    for (int64_t r = r0; r < r1; r++)
        if (row_has_nan((const double *)(job->out + r * L * 8), L)) return 1;
    return 0;
}

/* The kernel's _rows_nan entry: its _splat entry over `nrows` rows (ppy-llvm
   `_kernels.ROWS`); 1: it stored a NaN, 0: no NaN's bits are in question, -1: unknown. */
typedef int64_t (*ppy_rows_fn)(char *const *, const double *, void *, int64_t, int64_t, const int64_t *,
                               const ppy_loop *);

/* Whether the kernel's _rows_nan entry serves a job: a 2-D plan each of whose rows is
   one call of the _splat entry (every operand in place or broadcast along the row) and
   no value broadcast along the rows is NaN. Rows not in NumPy's order (`strided_rows`)
   are not scanned: the entry tells whether it stored a NaN (then NumPy answers), or
   that it cannot (then they are scanned). Row by row, the same calls cost ~100 cycles
   each more (the odometer, the fills, an indirect call), and the scans of rows not in
   order: pairwise distances over 1001x1001, 1.16x Numba's time before, 1.00x after. */
static int rows_entry(const SiteObject *s, const strided_plan *p, char *const *bases) {
    if (s->rows == NULL || p->nd != 2) return 0;
    for (int k = 0; k < p->na; k++) {
        npy_intp st = p->strides[k][1];
        if (st != 8 && st != 0) return 0;
        for (npy_intp r = 0; st == 0 && r < p->shape[0]; r++) {
            uint64_t bits;
            memcpy(&bits, bases[k] + r * p->strides[k][0], 8);
            if (bits_nan(bits)) return 0;
        }
    }
    return 1;
}

/* Rows [r0, r1) of a `rows_entry` job in one call of the kernel's _rows_nan entry; its
   NaN witness (`ppy_rows_fn`). */
static int64_t rows_at_once(const strided_job *job, int64_t r0, int64_t r1) {
    const strided_plan *p = job->p;
    char *bases[MAXARGS];
    int64_t steps[MAXARGS + 1];
    npy_intp L = p->shape[1], osize = job->s->kind == K_MAP ? 8 : 1;
    for (int k = 0; k < p->na; k++) {
        bases[k] = job->bases[k] + r0 * p->strides[k][0];
        steps[k] = p->strides[k][0];
    }
    steps[p->na] = L * osize;
    return ((ppy_rows_fn)job->s->rows)(bases, job->splat, job->out + r0 * L * osize, L, r1 - r0, steps,
                                       job->s->loops);
}

/* Rows [r0, r1) of a job; *status = 1 if a float result row holds a NaN, -1 if out
   of memory, else 0. Runs without the GIL, on any thread of the pool. A float row
   goes to the kernel in chunks of PPY_ROW_CHUNK (a multiple of the kernels' block and
   of 8; a last chunk of 8 elements or fewer joins the one before), each scanned for
   NaN while it is still in cache (of PPY_GATHER_CHUNK where an operand is gathered:
   they are gathered together, `gather_many`). So every element of a row meets the operand order
   of a NumPy loop call over the row (its vector body; its scalar tail, the last
   n % 8; a call of 8 elements or fewer as such) and the kernel's blocks over it. In
   an `order` job NumPy's calls are such rows, or span whole rows of a length that is
   a multiple of 8 (the same order); its operands are in place or broadcast values,
   the order of whose operations cannot matter while no broadcast value is NaN and no
   invalid operation made a NaN: then a NaN result is NumPy's and is not scanned (a
   row with a NaN broadcast value is; after an invalid flag, every row). An operand
   broadcast along the row (stride 0 there) is filled once per row, and only when its
   value changes. */
static void strided_rows(void *ctx, int64_t r0, int64_t r1, double *status) {
    const strided_job *job = ctx;
    const strided_plan *p = job->p;
    SiteObject *s = job->s;
    int na = p->na, nd = p->nd, gathers = 0, isz = site_itemsize(s);
    npy_intp L = p->shape[nd - 1], osize = s->kind == K_MAP ? isz : 1;
    for (int k = 0; k < na; k++) gathers += p->strides[k][nd - 1] != isz;
    double *scratch = NULL;
    *status = 0.0;
    if (gathers && (scratch = PyMem_RawMalloc(sizeof(double) * PPY_ROW_BUF * (size_t)gathers)) == NULL) {
        *status = -1.0;
        return;
    }
    row_operands o;
    char *args[MAXARGS];
    start_rows(job, r0, scratch, &o);
    int splat = job->splat != NULL;
    ppy_map_fn kernel = (ppy_map_fn)(splat ? s->splat : s->kernel);
    const double *scalars = splat ? job->splat : job->scalars;
    npy_intp step = gathers ? PPY_GATHER_CHUNK : s->kind == K_MAP ? PPY_ROW_CHUNK : L;
    int chunked = !job->order; /* rows scanned for NaN while in cache, gathered ones */
    for (int k = 0; k < na; k++) {
        chunked |= o.mode[k] == OP_GATHER;
        if (o.mode[k] == OP_ROW_BROADCAST && !splat) step = PPY_FILL_CHUNK; /* a short fill */
    }
    if (splat && !chunked) step = L; /* one call per row, as NumPy's */
    if (job->rows) {
        int64_t nan = rows_at_once(job, r0, r1);
        if (!job->order && (nan > 0 || (nan < 0 && rows_have_nan(job, r0, r1)))) *status = 1.0;
    }
    for (npy_intp r = job->rows ? r1 : r0; r < r1 && *status == 0.0; r++) {
        char *orow = job->out + r * L * osize;
        int nan_broadcast = fill_row(p, &o, splat ? PPY_SPLAT : L < step + 8 ? L : step + 8, isz);
        int scan = s->kind == K_MAP && (nan_broadcast || !job->order || s->f32) && !s->itype;
        for (npy_intp c0 = 0; c0 < L; c0 += step) {
            npy_intp len = L - c0 <= step + 8 ? L - c0 : step;
            char *bufs[MAXARGS], *srcs[MAXARGS];
            npy_intp sts[MAXARGS];
            int m = 0;
            for (int k = 0; k < na; k++) {
                npy_intp st = p->strides[k][nd - 1];
                if (o.mode[k] == OP_IN_PLACE) { args[k] = o.row[k] + c0 * isz; continue; }
                if (o.mode[k] == OP_GATHER && isz == 8) bufs[m] = (char *)o.buf[k], srcs[m] = o.row[k] + c0 * st, sts[m++] = st;
                else if (o.mode[k] == OP_GATHER) gather_items((char *)o.buf[k], o.row[k] + c0 * st, st, len, isz);
                args[k] = (char *)o.buf[k];
            }
            if (m) gather_many(bufs, srcs, sts, m, len);
            char *out = orow + c0 * osize;
            kernel(args, scalars, out, 0, len, s->loops);
            if (scan && items_have_nan(out, len, isz)) {
                *status = 1.0;
                break;
            }
            c0 += len - step; /* a last chunk that took the rest along ends the row */
        }
        for (int d = nd - 2; d >= 0; d--) { /* next row: an odometer over the outer axes */
            for (int k = 0; k < na; k++) o.row[k] += p->strides[k][d];
            if (++o.idx[d] < p->shape[d]) break;
            for (int k = 0; k < na; k++) o.row[k] -= p->strides[k][d] * p->shape[d];
            o.idx[d] = 0;
        }
    }
    if (s->kind == K_MAP && isz == 8 && !s->itype && job->order && *status == 0.0 && fetestexcept(FE_INVALID)
        && rows_have_nan(job, r0, r1))
        *status = 1.0;
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

/* An operand the same on every row whose row is strided (`x.T` of a column view
   `x = pos[:, 0:1]`, beside `x`: an outer difference) is gathered once into a
   contiguous row, which every row then reads in place: one gather, not one a row, and
   the rows entry may run all rows in one call. The same values in the same operand
   order (what NumPy's order and the NaN rules were decided on stays: `order`). The
   copies go into `held` (freed by the caller); 0, or -1 out of memory. */
static int gather_once(const SiteObject *s, strided_plan *p, char **bases, char **held) {
    int nd = p->nd, isz = site_itemsize(s);
    npy_intp L = p->shape[nd - 1];
    for (int k = 0; k < p->na; k++) {
        npy_intp st = p->strides[k][nd - 1];
        int same_rows = nd > 1 && st != isz && st != 0;
        for (int d = 0; same_rows && d < nd - 1; d++) same_rows = p->strides[k][d] == 0;
        if (!same_rows) continue;
        held[k] = PyMem_RawMalloc((size_t)(L * isz));
        if (held[k] == NULL) return -1;
        gather_items(held[k], bases[k], st, L, isz);
        bases[k] = held[k];
        p->strides[k][nd - 1] = isz;
    }
    return 0;
}

/* Run the map kernel of `s` over `p` into the C-ordered `out` (see `run_rows`). */
static int run_strided(SiteObject *s, strided_plan *p, char *const *given, const double *scalars, char *out,
                       int order) {
    char *bases[MAXARGS], *held[MAXARGS] = {NULL};
    memcpy(bases, given, sizeof(char *) * (size_t)p->na);
    if (gather_once(s, p, bases, held) < 0) {
        for (int k = 0; k < p->na; k++) PyMem_RawFree(held[k]);
        PyErr_NoMemory();
        return -1;
    }
    double ext[2 * MAXARGS + 3];
    int splat = s->splat != NULL && splat_entry(s, p, scalars, ext);
    strided_job job = {s, p, bases, scalars, out, order, splat ? ext : NULL, 0};
    job.rows = splat && rows_entry(s, p, bases);
    if (job.rows && !order) { /* the witness slot: stop at the first row storing a NaN */
        int ns = 0;
        for (int i = 0; i < s->nleaves; i++) ns += s->leaves[i] == 's';
        int64_t stop = 1;
        memcpy(&ext[ns + p->na + 2], &stop, 8);
    }
    s->splat_calls += splat;
    s->rows_calls += job.rows;
    int flags = run_rows(s, p, strided_rows, &job);
    for (int k = 0; k < p->na; k++) PyMem_RawFree(held[k]);
    return flags;
}

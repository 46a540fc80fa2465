// ppy_torch_fused: the run-time dispatcher of a fused float64 site over torch tensors.
//
// Site(kernel, leaves, fallback, site_id, keepalive=None)
//   kernel : address of a ppy-llvm elementwise ("map") kernel
//              void k(char* const* arrays, const double* scalars, void* out,
//                     int64_t begin, int64_t end, const void* loops)
//   leaves : one char per argument: 'a' a tensor operand, 's' a float64 scalar
// site(*args): guard -> allocate the result -> kernel (over torch's intra-op threads
// for large tensors) -> a new torch.Tensor; any guard miss -> fallback(*args).
//
// The guard checks what the proof of bit equality assumed: each tensor operand is
// exactly torch.Tensor, CPU, strided and not nested, float64, with the default
// contiguous strides, of one shape, with no neg/conj bit and no functorch/Python key; none
// requires grad while grad mode is on, none carries a forward-mode tangent; no
// __torch_function__ mode, no __torch_dispatch__ mode, no TLS-included dispatch key
// (functorch transforms). Scalars are exact float, or int with |v| <= 2**53.
// Compiled against the region prelude (precompiled header) once per torch build.
#include "ppy_aten_prelude.h"

#include <ATen/EmptyTensor.h>
#include <ATen/Parallel.h>
#include <c10/core/GradMode.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <c10/core/impl/TorchDispatchModeTLS.h>

#include <cstring>

namespace {

typedef void (*map_fn)(char* const*, const double*, void*, int64_t, int64_t, const void*);

enum { R_ARITY, R_TYPE, R_DTYPE, R_DEVICE, R_LAYOUT, R_SHAPE, R_GRAD, R_SCALAR, R_MODE,
       R_ERROR, R_N };
const char* const kReasons[R_N] = {
    "guard: arity", "guard: type",  "guard: dtype",  "guard: device", "guard: layout",
    "guard: shape", "guard: grad",  "guard: scalar", "guard: mode",   "error"};
constexpr int kMaxLeaves = 32;
constexpr int64_t kGrain = 32768;  // torch's own elementwise grain (at::internal::GRAIN_SIZE)
constexpr int64_t kReleaseGil = 8192;

struct SiteObject {
  PyObject_HEAD
  vectorcallfunc vectorcall;
  map_fn kernel;
  int nleaves;
  char leaves[kMaxLeaves];
  PyObject* fallback;
  PyObject* site_id;
  PyObject* keepalive;
  unsigned long long fast;
  unsigned long long fallbacks[R_N];
};

PyObject* fall_back(SiteObject* s, int reason, PyObject* const* args, size_t nargsf,
                    PyObject* kwnames) {
  s->fallbacks[reason]++;
  return PyObject_Vectorcall(s->fallback, args, nargsf, kwnames);
}

// Keys a plain dense CPU tensor never has: each changes what eager computes.
const c10::DispatchKeySet kForeignKeys = c10::DispatchKeySet({
    c10::DispatchKey::Python, c10::DispatchKey::PythonTLSSnapshot,
    c10::DispatchKey::FuncTorchBatched, c10::DispatchKey::FuncTorchGradWrapper,
    c10::DispatchKey::Functionalize, c10::DispatchKey::Conjugate,
    c10::DispatchKey::Negative, c10::DispatchKey::ZeroTensor});

// Strides exactly those of a fresh contiguous tensor of these sizes (torch's eager
// result strides then equal a fresh contiguous allocation's, size-1 dims included).
bool default_strides(const c10::TensorImpl* impl) {
  const auto sizes = impl->sizes();
  const auto strides = impl->strides();
  int64_t expected = 1;
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    if (strides[d] != expected) return false;
    expected *= sizes[d] > 1 ? sizes[d] : 1;
  }
  return true;
}

// A tensor operand: its data, or -1 with the reason in *reason.
int check_tensor(PyObject* obj, bool grad_mode, const c10::TensorImpl** first, char** data) {
  if (Py_TYPE(obj) != reinterpret_cast<PyTypeObject*>(THPVariableClass)) return R_TYPE;
  const at::Tensor& t = THPVariable_Unpack(obj);
  const c10::TensorImpl* impl = t.unsafeGetTensorImpl();
  if (impl->dtype() != caffe2::TypeMeta::Make<double>()) return R_DTYPE;
  if (impl->device_type() != c10::DeviceType::CPU) return R_DEVICE;
  if (impl->layout() != c10::kStrided || impl->is_nested() ||
      impl->key_set().has_any(kForeignKeys) || !impl->has_storage() || !default_strides(impl))
    return R_LAYOUT;
  if (*first != nullptr && impl->sizes() != (*first)->sizes()) return R_SHAPE;
  if (impl->autograd_meta() != nullptr &&
      ((grad_mode && t.requires_grad()) || t._fw_grad(/*level=*/0).defined()))
    return R_GRAD;
  if (*first == nullptr) *first = impl;
  *data = static_cast<char*>(const_cast<void*>(t.const_data_ptr()));
  return -1;
}

bool as_scalar(PyObject* obj, double* out) {
  if (PyFloat_CheckExact(obj)) {
    *out = PyFloat_AS_DOUBLE(obj);
    return true;
  }
  if (!PyLong_CheckExact(obj)) return false;
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(obj, &overflow);
  if (overflow != 0 || (v == -1 && PyErr_Occurred()) || v > (1LL << 53) || v < -(1LL << 53)) {
    PyErr_Clear();
    return false;
  }
  *out = static_cast<double>(v);
  return true;
}

bool modes_active() {
  return at::impl::torch_function_mode_enabled() ||
         c10::impl::TorchDispatchModeTLS::any_modes_set() ||
         !(c10::impl::tls_local_dispatch_key_set().included_ - c10::default_included_set).empty();
}

void run(map_fn kernel, char* const* arrays, const double* scalars, void* out, int64_t n) {
  if (n < kGrain) {
    kernel(arrays, scalars, out, 0, n, nullptr);
    return;
  }
  at::parallel_for(0, n, kGrain, [&](int64_t begin, int64_t end) {
    kernel(arrays, scalars, out, begin, end, nullptr);
  });
}

PyObject* site_vectorcall(PyObject* self, PyObject* const* args, size_t nargsf,
                          PyObject* kwnames) {
  auto* s = reinterpret_cast<SiteObject*>(self);
  const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  if ((kwnames != nullptr && PyTuple_GET_SIZE(kwnames) != 0) || nargs != s->nleaves)
    return fall_back(s, R_ARITY, args, nargsf, kwnames);
  if (modes_active()) return fall_back(s, R_MODE, args, nargsf, kwnames);
  // A tensor whose metadata torch computes on demand (custom sizes or strides) may
  // throw from the checks: that, like a failed allocation, runs the Python path.
  try {
    const bool grad_mode = c10::GradMode::is_enabled();
    char* arrays[kMaxLeaves];
    double scalars[kMaxLeaves];
    int na = 0, ns = 0;
    const c10::TensorImpl* first = nullptr;
    for (Py_ssize_t i = 0; i < nargs; ++i) {
      if (s->leaves[i] == 'a') {
        const int reason = check_tensor(args[i], grad_mode, &first, &arrays[na++]);
        if (reason >= 0) return fall_back(s, reason, args, nargsf, kwnames);
      } else if (!as_scalar(args[i], &scalars[ns++])) {
        return fall_back(s, R_SCALAR, args, nargsf, kwnames);
      }
    }
    at::Tensor out = at::detail::empty_cpu(first->sizes(), c10::kDouble);
    const int64_t n = out.numel();
    if (n > 0) {
      ppy::MaybeNoGil gil(n >= kReleaseGil);
      run(s->kernel, arrays, scalars, out.mutable_data_ptr(), n);
    }
    s->fast++;
    return THPVariable_Wrap(std::move(out));
  } catch (...) {
    return fall_back(s, R_ERROR, args, nargsf, kwnames);  // torch raises its own error
  }
}

PyObject* site_new(PyTypeObject* type, PyObject* args, PyObject* kwds) {
  static const char* kwlist[] = {"kernel", "leaves", "fallback", "site_id", "keepalive",
                                 nullptr};
  unsigned long long address = 0;
  const char* leaves = nullptr;
  PyObject *fallback = nullptr, *site_id = nullptr, *keepalive = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "KsOO|O", const_cast<char**>(kwlist), &address,
                                   &leaves, &fallback, &site_id, &keepalive))
    return nullptr;
  const size_t n = std::strlen(leaves);
  if (address == 0 || n == 0 || n > kMaxLeaves || std::strspn(leaves, "as") != n ||
      std::strchr(leaves, 'a') == nullptr || !PyCallable_Check(fallback)) {
    PyErr_SetString(PyExc_ValueError, "Site: bad kernel address, leaves or fallback");
    return nullptr;
  }
  auto* s = reinterpret_cast<SiteObject*>(type->tp_alloc(type, 0));
  if (s == nullptr) return nullptr;
  s->vectorcall = site_vectorcall;
  s->kernel = reinterpret_cast<map_fn>(static_cast<uintptr_t>(address));
  s->nleaves = static_cast<int>(n);
  std::memcpy(s->leaves, leaves, n);
  s->fallback = Py_NewRef(fallback);
  s->site_id = Py_NewRef(site_id);
  s->keepalive = Py_NewRef(keepalive);
  return reinterpret_cast<PyObject*>(s);
}

void site_dealloc(PyObject* self) {
  auto* s = reinterpret_cast<SiteObject*>(self);
  Py_XDECREF(s->fallback);
  Py_XDECREF(s->site_id);
  Py_XDECREF(s->keepalive);
  Py_TYPE(self)->tp_free(self);
}

// {"site": id, "fast": n, "fallback": {reason: n}}: the core's ppy.stats() format.
PyObject* site_stats(PyObject* self, PyObject*) {
  auto* s = reinterpret_cast<SiteObject*>(self);
  PyObject* fallback = PyDict_New();
  for (int i = 0; fallback != nullptr && i < R_N; ++i) {
    if (s->fallbacks[i] == 0) continue;
    PyObject* v = PyLong_FromUnsignedLongLong(s->fallbacks[i]);
    if (v == nullptr || PyDict_SetItemString(fallback, kReasons[i], v) < 0) Py_CLEAR(fallback);
    Py_XDECREF(v);
  }
  if (fallback == nullptr) return nullptr;
  return Py_BuildValue("{sOsKsN}", "site", s->site_id, "fast", s->fast, "fallback", fallback);
}

PyObject* site_reset(PyObject* self, PyObject*) {
  auto* s = reinterpret_cast<SiteObject*>(self);
  s->fast = 0;
  std::memset(s->fallbacks, 0, sizeof(s->fallbacks));
  Py_RETURN_NONE;
}

PyObject* site_fallback(PyObject* self, void*) {
  return Py_NewRef(reinterpret_cast<SiteObject*>(self)->fallback);
}

PyMethodDef site_methods[] = {
    {"ppy_stats", site_stats, METH_NOARGS, "{'site', 'fast', 'fallback': {reason: n}}"},
    {"ppy_reset", site_reset, METH_NOARGS, "zero the counters"},
    {nullptr, nullptr, 0, nullptr}};

PyGetSetDef site_getset[] = {
    {"fallback", site_fallback, nullptr, "the Python path", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyTypeObject SiteType = {PyVarObject_HEAD_INIT(nullptr, 0)};

PyModuleDef g_module = {PyModuleDef_HEAD_INIT, "ppy_torch_fused",
                        "Guarded calls of fused float64 kernels over torch tensors.", -1,
                        nullptr};

}  // namespace

PyMODINIT_FUNC PyInit_ppy_torch_fused() {
  SiteType.tp_name = "ppy_torch_fused.Site";
  SiteType.tp_basicsize = sizeof(SiteObject);
  SiteType.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL;
  SiteType.tp_vectorcall_offset = offsetof(SiteObject, vectorcall);
  SiteType.tp_call = PyVectorcall_Call;
  SiteType.tp_new = site_new;
  SiteType.tp_dealloc = site_dealloc;
  SiteType.tp_methods = site_methods;
  SiteType.tp_getset = site_getset;
  SiteType.tp_doc = "A fused float64 site over torch tensors: guard, kernel, fallback.";
  if (PyType_Ready(&SiteType) < 0) return nullptr;
  PyObject* module = PyModule_Create(&g_module);
  if (module == nullptr) return nullptr;
  if (PyModule_AddObjectRef(module, "Site", reinterpret_cast<PyObject*>(&SiteType)) < 0) {
    Py_DECREF(module);
    return nullptr;
  }
  PyObject* reasons = PyTuple_New(R_N);
  for (int i = 0; reasons != nullptr && i < R_N; ++i)
    PyTuple_SET_ITEM(reasons, i, PyUnicode_FromString(kReasons[i]));
  if (reasons == nullptr || PyModule_AddObject(module, "REASONS", reasons) < 0) {
    Py_XDECREF(reasons);
    Py_DECREF(module);
    return nullptr;
  }
  return module;
}

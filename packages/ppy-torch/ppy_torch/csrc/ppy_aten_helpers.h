// Helpers every generated region uses: guards, unpacking, wrapping results.
// Included after <ATen/core/Tensor.h> and the per-operator headers.
#pragma once
#include <ATen/PythonTorchFunctionTLS.h>
#include <ATen/ScalarOps.h>
#include <ATen/core/Tensor.h>

#include <tuple>
#include <utility>

#include "ppy_region_abi.h"

#ifdef PPY_TORCH_PYTHON_HEADERS
#include <torch/csrc/autograd/python_variable.h>
#else
// The layout of torch's Python tensor object (torch/csrc/autograd/python_variable.h),
// declared here so a region does not parse the Python-binding headers. The build
// uses this only for torch versions whose header it was checked against
// (build.py: LIGHT_LAYOUT_VERIFIED); any other version includes the real header.
struct THPVariable {
  PyObject_HEAD
  at::Tensor cdata;
  PyObject* backward_hooks;
  PyObject* post_accumulate_grad_hooks;
};
__attribute__((visibility("default"))) extern PyObject* THPVariableClass;
__attribute__((visibility("default"))) extern PyObject* ParameterClass;
__attribute__((visibility("default"))) PyObject* THPVariable_Wrap(at::TensorBase&& var);
inline const at::Tensor& THPVariable_Unpack(PyObject* obj) {
  return reinterpret_cast<THPVariable*>(obj)->cdata;
}
#endif

namespace ppy {

// Exactly torch.Tensor or torch.nn.Parameter (whose __torch_function__ is disabled,
// so torch itself treats it as a plain tensor); a subclass fails.
inline bool is_tensor(PyObject* obj) {
  PyTypeObject* type = Py_TYPE(obj);
  return type == reinterpret_cast<PyTypeObject*>(THPVariableClass) ||
         type == reinterpret_cast<PyTypeObject*>(ParameterClass);
}

inline const at::Tensor& unpack(PyObject* obj) { return THPVariable_Unpack(obj); }

inline bool device_ok(const at::Tensor& t) {
  const auto type = t.device().type();
#ifdef PPY_WITH_CUDA
  return type == c10::DeviceType::CPU || type == c10::DeviceType::CUDA;
#else
  return type == c10::DeviceType::CPU;
#endif
}

inline bool as_int(PyObject* obj, int64_t* out) {
  if (!PyLong_CheckExact(obj)) return false;
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(obj, &overflow);
  if (overflow != 0 || (v == -1 && PyErr_Occurred())) {
    PyErr_Clear();
    return false;
  }
  *out = static_cast<int64_t>(v);
  return true;
}

inline bool as_double(PyObject* obj, double* out) {
  if (!PyFloat_CheckExact(obj)) return false;
  *out = PyFloat_AS_DOUBLE(obj);
  return true;
}

inline bool as_bool(PyObject* obj, bool* out) {
  if (!PyBool_Check(obj)) return false;
  *out = obj == Py_True;
  return true;
}

// A Python number passed where ATen takes a Tensor: what torch's argument parser makes.
inline at::Tensor wrapped(const at::Scalar& s) { return at::native::wrapped_scalar_tensor(s); }

inline int64_t floordiv(int64_t a, int64_t b) {
  if (b == 0) throw std::domain_error("integer division by zero");
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

// Releases the GIL around work large enough to be worth it (eager torch releases it
// in every op; for a few microseconds of work the release costs more than it frees).
class MaybeNoGil {
 public:
  explicit MaybeNoGil(bool release) : state_(release ? PyEval_SaveThread() : nullptr) {}
  ~MaybeNoGil() { restore(); }
  void restore() {
    if (state_ != nullptr) PyEval_RestoreThread(state_);
    state_ = nullptr;
  }
  MaybeNoGil(const MaybeNoGil&) = delete;
  MaybeNoGil& operator=(const MaybeNoGil&) = delete;

 private:
  PyThreadState* state_;
};

constexpr int64_t kReleaseGilNumel = 1 << 15;

inline PyObject* wrap(at::Tensor&& t) { return THPVariable_Wrap(std::move(t)); }

inline PyObject* wrap(std::nullptr_t) { Py_RETURN_NONE; }

template <typename... Ts>
PyObject* wrap(std::tuple<Ts...>&& t) {
  PyObject* out = PyTuple_New(sizeof...(Ts));
  if (out == nullptr) return nullptr;
  Py_ssize_t i = 0;
  bool ok = true;
  std::apply([&](auto&&... item) {
    ((ok = ok && [&] {
        PyObject* v = THPVariable_Wrap(std::move(item));
        if (v == nullptr) return false;
        PyTuple_SET_ITEM(out, i++, v);
        return true;
      }()), ...);
  }, std::move(t));
  if (!ok) Py_CLEAR(out);
  return out;
}

}  // namespace ppy

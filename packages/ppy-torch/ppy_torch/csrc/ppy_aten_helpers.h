// Helpers every generated region uses: guards, unpacking, wrapping results.
// Included after <ATen/core/Tensor.h> and the per-operator headers.
#pragma once
#include <ATen/PythonTorchFunctionTLS.h>
#include <ATen/ScalarOps.h>
#include <ATen/core/Tensor.h>

#include <algorithm>
#include <cstring>
#include <initializer_list>
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

// -- a method region's guard of its module tree (codegen.py: _walk) ---------------
// Each fact the region was built from (modules.py: Fact) is checked at every call
// from `self` through the modules' dicts: a miss runs the method's Python. Every
// lookup is borrowed: the tree owns what is read, and nothing here runs Python code.

#define PPY_MISS(r)   \
  do {                \
    *reason = (r);    \
    return nullptr;   \
  } while (0)

// A dict key, interned once.
struct Key {
  const char* text;
  PyObject* obj = nullptr;
};

inline PyObject* get(PyObject* dict, Key& key) {
  if (dict == nullptr) return nullptr;
  if (key.obj == nullptr && (key.obj = PyUnicode_InternFromString(key.text)) == nullptr) {
    PyErr_Clear();
    return nullptr;
  }
  PyObject* value = PyDict_GetItemWithError(dict, key.obj);
  if (value == nullptr && PyErr_Occurred()) PyErr_Clear();
  return value;
}

// The instance dict of an object (borrowed: the object holds it).
inline PyObject* dict_of(PyObject* obj) {
  if (obj == nullptr) return nullptr;
  PyObject* dict = PyObject_GenericGetDict(obj, nullptr);
  if (dict == nullptr) {
    PyErr_Clear();
    return nullptr;
  }
  Py_DECREF(dict);
  return PyDict_Check(dict) ? dict : nullptr;
}

// `table[name]` of a module's dict (`_modules`, `_parameters`, `_buffers`).
inline PyObject* entry(PyObject* dict, Key& table, Key& name) {
  PyObject* t = get(dict, table);
  return t != nullptr && PyDict_Check(t) ? get(t, name) : nullptr;
}

inline PyObject* child(PyObject* dict, Key& modules, Key& name) {
  PyObject* m = entry(dict, modules, name);
  return m == Py_None ? nullptr : m;
}

// A module's exact class, by "module.qualname"; the type seen last is kept, so a
// call compares one pointer.
struct ClassGuard {
  const char* name;
  PyTypeObject* seen = nullptr;
};

inline bool class_named(PyTypeObject* type, ClassGuard& guard) {
  PyObject* mod = PyObject_GetAttrString(reinterpret_cast<PyObject*>(type), "__module__");
  PyObject* qual = PyObject_GetAttrString(reinterpret_cast<PyObject*>(type), "__qualname__");
  bool ok = false;
  if (mod != nullptr && qual != nullptr && PyUnicode_Check(mod) && PyUnicode_Check(qual)) {
    PyObject* full = PyUnicode_FromFormat("%U.%U", mod, qual);
    const char* text = full != nullptr ? PyUnicode_AsUTF8(full) : nullptr;
    ok = text != nullptr && std::strcmp(text, guard.name) == 0;
    Py_XDECREF(full);
  }
  Py_XDECREF(mod);
  Py_XDECREF(qual);
  if (PyErr_Occurred()) PyErr_Clear();
  if (ok) {
    Py_INCREF(type);
    Py_XDECREF(reinterpret_cast<PyObject*>(guard.seen));
    guard.seen = type;
  }
  return ok;
}

inline bool class_is(PyObject* obj, ClassGuard& guard) {
  return Py_TYPE(obj) == guard.seen || class_named(Py_TYPE(obj), guard);
}

inline bool empty_table(PyObject* t) {
  return t == nullptr || t == Py_None || (PyDict_Check(t) && PyDict_GET_SIZE(t) == 0);
}

// Whether a forward or backward hook (or pre-hook) is set for every module; -1 when
// torch's tables cannot be read.
inline int global_hooked() {
  static PyObject* tables[4] = {nullptr, nullptr, nullptr, nullptr};
  if (tables[3] == nullptr) {
    PyObject* mod = PyImport_ImportModule("torch.nn.modules.module");
    const char* names[4] = {"_global_forward_hooks", "_global_forward_pre_hooks",
                            "_global_backward_hooks", "_global_backward_pre_hooks"};
    for (int i = 0; mod != nullptr && i < 4; ++i) {
      if (tables[i] == nullptr) tables[i] = PyObject_GetAttrString(mod, names[i]);
      if (tables[i] == nullptr) break;
    }
    Py_XDECREF(mod);
    if (tables[3] == nullptr) {
      PyErr_Clear();
      return -1;
    }
  }
  for (PyObject* t : tables)
    if (!empty_table(t)) return 1;
  return 0;
}

// Class, `training` (its truth) and hook tables of one module.
struct HookKeys {
  Key forward{"_forward_hooks"};
  Key forward_pre{"_forward_pre_hooks"};
  Key backward{"_backward_hooks"};
  Key backward_pre{"_backward_pre_hooks"};
  Key training{"training"};
  Key modules{"_modules"};
};

inline HookKeys& keys() {
  static HookKeys k;
  return k;
}

inline bool module_is(PyObject* obj, PyObject* dict, ClassGuard& guard, bool training,
                      bool hooked, bool hooked_globally) {
  if (obj == nullptr || dict == nullptr || !class_is(obj, guard)) return false;
  HookKeys& k = keys();
  PyObject* flag = get(dict, k.training);
  if (flag == nullptr || PyObject_IsTrue(flag) != static_cast<int>(training)) {
    PyErr_Clear();
    return false;
  }
  const bool has = hooked_globally || !empty_table(get(dict, k.forward)) ||
                   !empty_table(get(dict, k.forward_pre)) ||
                   !empty_table(get(dict, k.backward)) ||
                   !empty_table(get(dict, k.backward_pre));
  return has == hooked;
}

inline bool key_is(PyObject* key, const char* text) {
  const char* got = PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) : nullptr;
  if (got == nullptr) {
    PyErr_Clear();
    return false;
  }
  return std::strcmp(got, text) == 0;
}

// A module's submodules are exactly these names, in this order (a loop was unrolled).
inline bool children_are(PyObject* dict, std::initializer_list<const char*> names) {
  PyObject* t = get(dict, keys().modules);
  if (t == nullptr || !PyDict_Check(t) ||
      PyDict_GET_SIZE(t) != static_cast<Py_ssize_t>(names.size()))
    return false;
  Py_ssize_t pos = 0;
  PyObject* key = nullptr;
  PyObject* value = nullptr;
  for (const char* name : names) {
    if (!PyDict_Next(t, &pos, &key, &value) || !key_is(key, name)) return false;
  }
  return true;
}

inline bool int_is(PyObject* v, int64_t want) {
  if (v == nullptr || !PyLong_CheckExact(v)) return false;
  int overflow = 0;
  long long got = PyLong_AsLongLongAndOverflow(v, &overflow);
  if (overflow != 0 || (got == -1 && PyErr_Occurred())) {
    PyErr_Clear();
    return false;
  }
  return got == want;
}

inline bool float_is(PyObject* v, double want) {
  return v != nullptr && PyFloat_CheckExact(v) && PyFloat_AS_DOUBLE(v) == want;
}

inline bool bool_is(PyObject* v, bool want) { return v == (want ? Py_True : Py_False); }

inline bool str_is(PyObject* v, const char* want) {
  return v != nullptr && PyUnicode_CheckExact(v) && key_is(v, want);
}

inline bool ints_are(PyObject* v, std::initializer_list<int64_t> want) {
  if (v == nullptr || !PyTuple_CheckExact(v) ||
      PyTuple_GET_SIZE(v) != static_cast<Py_ssize_t>(want.size()))
    return false;
  Py_ssize_t i = 0;
  for (int64_t w : want)
    if (!int_is(PyTuple_GET_ITEM(v, i++), w)) return false;
  return true;
}

// What the description counts as a scalar attribute (describe.py: _SCALAR_TYPES).
inline bool scalar_like(PyObject* v) {
  if (v == nullptr) return false;
  if (PyLong_CheckExact(v) || PyFloat_CheckExact(v) || PyBool_Check(v) || PyUnicode_CheckExact(v))
    return true;
  if (!PyTuple_CheckExact(v)) return false;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(v); ++i)
    if (!PyLong_CheckExact(PyTuple_GET_ITEM(v, i))) return false;
  return true;
}

// A parameter or buffer: exact Tensor/Parameter, its dtype, device, shape, requires_grad.
inline bool tensor_is(PyObject* obj, c10::ScalarType dtype, c10::DeviceType device, int index,
                      std::initializer_list<int64_t> shape, bool grad) {
  if (obj == nullptr || !is_tensor(obj)) return false;
  const at::Tensor& t = unpack(obj);
  if (!t.defined() || t.scalar_type() != dtype || t.requires_grad() != grad) return false;
  const c10::Device where = t.device();
  if (where.type() != device || where.index() != index) return false;
  const auto sizes = t.sizes();
  return sizes.size() == shape.size() && std::equal(shape.begin(), shape.end(), sizes.begin());
}

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
        PyObject* v = wrap(std::move(item));
        if (v == nullptr) return false;
        PyTuple_SET_ITEM(out, i++, v);
        return true;
      }()), ...);
  }, std::move(t));
  if (!ok) Py_CLEAR(out);
  return out;
}

}  // namespace ppy

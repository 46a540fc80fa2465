// The hand-written reference for the 8x32 ATen region benchmark: what a person would
// write by hand for `torch.relu(torch.add(torch.matmul(x, w), b))` as a CPython
// extension. The same three at:: calls as the region, on the same prelude, flags and
// link line (region_reference/__init__.py builds it with the region builder), and
// nothing else: a METH_FASTCALL function, an exact-type check per argument (a
// hand-written extension must not reinterpret a foreign object as a tensor), and the
// result wrapped by torch's own THPVariable_Wrap. `@MODULE@` is the module name
// the builder gives it (a hash of this text).
#include "ppy_aten_prelude.h"

namespace {

PyObject* layer(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 3 || !ppy::is_tensor(args[0]) || !ppy::is_tensor(args[1]) ||
      !ppy::is_tensor(args[2])) {
    PyErr_SetString(PyExc_TypeError, "layer(x, w, b) takes three torch.Tensor");
    return nullptr;
  }
  const at::Tensor& x = THPVariable_Unpack(args[0]);
  const at::Tensor& w = THPVariable_Unpack(args[1]);
  const at::Tensor& b = THPVariable_Unpack(args[2]);
  try {
    return THPVariable_Wrap(at::relu(at::add(at::matmul(x, w), b)));
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
    return nullptr;
  }
}

PyMethodDef kMethods[] = {
    {"layer", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(layer)), METH_FASTCALL,
     "relu(add(matmul(x, w), b)), hand-written"},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef kModule = {PyModuleDef_HEAD_INIT, "@MODULE@", nullptr, -1, kMethods,
                       nullptr, nullptr, nullptr, nullptr};

}  // namespace

PyMODINIT_FUNC PyInit_@MODULE@() { return PyModule_Create(&kModule); }

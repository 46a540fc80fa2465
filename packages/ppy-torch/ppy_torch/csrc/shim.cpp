// The fixed half of every region extension, compiled once per torch build.
//
// It holds what does not depend on the regions: the module object (made by
// pybind11), and the callable type that stands in for a region function. The
// type dispatches with vectorcall: it binds keywords by parameter name, calls the
// generated entry (which guards and runs the at:: calls), and on any guard miss
// calls the original Python function with the original arguments. Counters per
// outcome feed `fn.__ppy_stats__()`.
#include <pybind11/pybind11.h>

#include <cstring>

#include "ppy_region_abi.h"

namespace {

const char* const kReasons[PPY_REASONS] = {
    "fast", "arguments", "type", "device", "torch_function", "error", "disabled", "module"};

struct RegionObject {
  PyObject_HEAD
  vectorcallfunc vectorcall;
  const ppy_region_def* def;
  PyObject* fallback;
  PyObject* dict;
  int enabled;
  unsigned long long counts[PPY_REASONS];
};

PyObject* call_fallback(RegionObject* r, int reason, PyObject* const* args, size_t nargsf,
                        PyObject* kwnames) {
  r->counts[reason]++;
  return PyObject_Vectorcall(r->fallback, args, nargsf, kwnames);
}

PyObject* run_entry(RegionObject* r, PyObject* const* args, size_t nargsf, PyObject* kwnames,
                    PyObject* const* bound) {
  int reason = PPY_FAST;
  PyObject* result = r->def->entry(bound, &reason);
  if (result != nullptr) {
    r->counts[PPY_FAST]++;
    return result;
  }
  if (reason == PPY_FAST) return nullptr;  // a Python error is set
  return call_fallback(r, reason, args, nargsf, kwnames);
}

PyObject* region_vectorcall(PyObject* self, PyObject* const* args, size_t nargsf,
                            PyObject* kwnames) {
  auto* r = reinterpret_cast<RegionObject*>(self);
  Py_ssize_t n = PyVectorcall_NARGS(nargsf);
  const int nparams = r->def->nparams;
  if (!r->enabled) return call_fallback(r, PPY_DISABLED, args, nargsf, kwnames);
  if (kwnames == nullptr || PyTuple_GET_SIZE(kwnames) == 0) {
    if (n != nparams) return call_fallback(r, PPY_ARGUMENTS, args, nargsf, kwnames);
    return run_entry(r, args, nargsf, kwnames, args);
  }
  Py_ssize_t nkw = PyTuple_GET_SIZE(kwnames);
  if (n + nkw != nparams || nparams > PPY_MAX_PARAMS)
    return call_fallback(r, PPY_ARGUMENTS, args, nargsf, kwnames);
  PyObject* bound[PPY_MAX_PARAMS] = {nullptr};
  for (Py_ssize_t i = 0; i < n; ++i) bound[i] = args[i];
  for (Py_ssize_t k = 0; k < nkw; ++k) {
    const char* key = PyUnicode_AsUTF8(PyTuple_GET_ITEM(kwnames, k));
    int slot = -1;
    for (int i = 0; key != nullptr && i < nparams; ++i)
      if (std::strcmp(key, r->def->param_names[i]) == 0) slot = i;
    if (key == nullptr) PyErr_Clear();
    if (slot < 0 || bound[slot] != nullptr)
      return call_fallback(r, PPY_ARGUMENTS, args, nargsf, kwnames);
    bound[slot] = args[n + k];
  }
  return run_entry(r, args, nargsf, kwnames, bound);
}

int region_traverse(PyObject* self, visitproc visit, void* arg) {
  auto* r = reinterpret_cast<RegionObject*>(self);
  Py_VISIT(r->fallback);
  Py_VISIT(r->dict);
  return 0;
}

int region_clear(PyObject* self) {
  auto* r = reinterpret_cast<RegionObject*>(self);
  Py_CLEAR(r->fallback);
  Py_CLEAR(r->dict);
  return 0;
}

void region_dealloc(PyObject* self) {
  PyObject_GC_UnTrack(self);
  region_clear(self);
  Py_TYPE(self)->tp_free(self);
}

PyObject* region_get(PyObject* self, PyObject* obj, PyObject*) {
  if (obj == nullptr || obj == Py_None) return Py_NewRef(self);
  return PyMethod_New(self, obj);
}

PyObject* region_repr(PyObject* self) {
  auto* r = reinterpret_cast<RegionObject*>(self);
  return PyUnicode_FromFormat("<ppy aten region %s>", r->def->name);
}

PyObject* get_active(PyObject* self, void*) {
  return PyBool_FromLong(reinterpret_cast<RegionObject*>(self)->enabled);
}

int set_active(PyObject* self, PyObject* value, void*) {
  int flag = value == nullptr ? 0 : PyObject_IsTrue(value);
  if (flag < 0) return -1;
  reinterpret_cast<RegionObject*>(self)->enabled = flag;
  return 0;
}

PyObject* region_stats(PyObject* self, PyObject*) {
  auto* r = reinterpret_cast<RegionObject*>(self);
  PyObject* out = PyDict_New();
  for (int i = 0; out != nullptr && i < PPY_REASONS; ++i) {
    PyObject* v = PyLong_FromUnsignedLongLong(r->counts[i]);
    if (v == nullptr || PyDict_SetItemString(out, kReasons[i], v) < 0) Py_CLEAR(out);
    Py_XDECREF(v);
  }
  return out;
}

// The core's format (ppy_core.runtime.dispatch): {"fast": n, "fallback": {reason: n}}.
PyObject* region_ppy_stats(PyObject* self, PyObject*) {
  auto* r = reinterpret_cast<RegionObject*>(self);
  PyObject* fallback = PyDict_New();
  PyObject* out = fallback == nullptr ? nullptr : PyDict_New();
  for (int i = 1; out != nullptr && i < PPY_REASONS; ++i) {
    if (r->counts[i] == 0) continue;
    PyObject* v = PyLong_FromUnsignedLongLong(r->counts[i]);
    if (v == nullptr || PyDict_SetItemString(fallback, kReasons[i], v) < 0) Py_CLEAR(out);
    Py_XDECREF(v);
  }
  PyObject* fast = out == nullptr ? nullptr : PyLong_FromUnsignedLongLong(r->counts[PPY_FAST]);
  if (fast == nullptr || PyDict_SetItemString(out, "fast", fast) < 0 ||
      PyDict_SetItemString(out, "fallback", fallback) < 0)
    Py_CLEAR(out);
  Py_XDECREF(fast);
  Py_XDECREF(fallback);
  return out;
}

PyObject* region_reset(PyObject* self, PyObject*) {
  std::memset(reinterpret_cast<RegionObject*>(self)->counts, 0,
              sizeof(unsigned long long) * PPY_REASONS);
  Py_RETURN_NONE;
}

PyGetSetDef region_getset[] = {
    {"__ppy_region__", get_active, set_active, "True while the region is in use", nullptr},
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, nullptr, nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyMethodDef region_methods[] = {
    {"__ppy_stats__", region_stats, METH_NOARGS, "calls by outcome: fast path or why not"},
    {"__ppy_reset_stats__", region_reset, METH_NOARGS, "zero the counters"},
    {"ppy_stats", region_ppy_stats, METH_NOARGS, "{'fast': n, 'fallback': {reason: n}}"},
    {"ppy_reset", region_reset, METH_NOARGS, "zero the counters"},
    {nullptr, nullptr, 0, nullptr}};

PyTypeObject RegionType = {PyVarObject_HEAD_INIT(nullptr, 0)};

const ppy_region_def* g_defs = nullptr;
int g_ndefs = 0;

PyObject* make_region(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  const char* name = nargs == 2 ? PyUnicode_AsUTF8(args[0]) : nullptr;
  if (name == nullptr || !PyCallable_Check(args[1])) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "make(name, fallback)");
    return nullptr;
  }
  for (int i = 0; i < g_ndefs; ++i) {
    if (std::strcmp(g_defs[i].name, name) != 0) continue;
    auto* r = PyObject_GC_New(RegionObject, &RegionType);
    if (r == nullptr) return nullptr;
    r->vectorcall = region_vectorcall;
    r->def = &g_defs[i];
    r->fallback = Py_NewRef(args[1]);
    r->dict = nullptr;
    r->enabled = 1;
    std::memset(r->counts, 0, sizeof(r->counts));
    PyObject_GC_Track(r);
    return reinterpret_cast<PyObject*>(r);
  }
  PyErr_Format(PyExc_KeyError, "no region named %s", name);
  return nullptr;
}

PyMethodDef module_methods[] = {
    {"make", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(make_region)),
     METH_FASTCALL, "make(name, fallback): the region callable for one function"},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef g_module_def;

int init_type() {
  if (RegionType.tp_flags & Py_TPFLAGS_READY) return 0;
  RegionType.tp_name = "ppy_torch.AtenRegion";
  RegionType.tp_basicsize = sizeof(RegionObject);
  RegionType.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL |
                        Py_TPFLAGS_METHOD_DESCRIPTOR;
  RegionType.tp_vectorcall_offset = offsetof(RegionObject, vectorcall);
  RegionType.tp_call = PyVectorcall_Call;
  RegionType.tp_dictoffset = offsetof(RegionObject, dict);
  RegionType.tp_traverse = region_traverse;
  RegionType.tp_clear = region_clear;
  RegionType.tp_dealloc = region_dealloc;
  RegionType.tp_descr_get = region_get;
  RegionType.tp_repr = region_repr;
  RegionType.tp_getset = region_getset;
  RegionType.tp_methods = region_methods;
  return PyType_Ready(&RegionType);
}

}  // namespace

extern "C" PyObject* ppy_make_module(const char* name, const ppy_region_def* defs, int ndefs) {
  g_defs = defs;
  g_ndefs = ndefs;
  if (init_type() < 0) return nullptr;
  try {
    auto m = pybind11::module_::create_extension_module(name, nullptr, &g_module_def);
    if (PyModule_AddFunctions(m.ptr(), module_methods) < 0) return nullptr;
    pybind11::tuple names(ndefs);
    for (int i = 0; i < ndefs; ++i) names[i] = pybind11::str(defs[i].name);
    m.attr("REGIONS") = names;
    return m.release().ptr();
  } catch (pybind11::error_already_set& e) {
    e.restore();
    return nullptr;
  }
}

// The contract between a generated region source and the shim (shim.cpp).
#pragma once
#include <Python.h>

// Outcomes of one call: the fast path, or why the Python body ran instead.
enum {
  PPY_FAST = 0,
  PPY_ARGUMENTS = 1,  // keywords or arity the region cannot bind
  PPY_TYPE = 2,       // not an exact torch.Tensor (or Parameter), int, float, bool
  PPY_DEVICE = 3,     // a tensor on a device the region was not built for
  PPY_MODE = 4,       // a __torch_function__ mode is active
  PPY_ERROR = 5,      // an at:: call raised: Python reruns it and raises its own error
  PPY_DISABLED = 6,
  PPY_GUARD = 7,      // a method's module tree is not the one its region was built from
  PPY_REASONS = 8
};
enum { PPY_MAX_PARAMS = 64 };

// Runs one region on bound positional arguments. Returns a new reference, or
// nullptr with *reason set to why the Python body must run instead.
typedef PyObject* (*ppy_entry_fn)(PyObject* const* args, int* reason);

struct ppy_region_def {
  const char* name;
  ppy_entry_fn entry;
  int nparams;
  const char* const* param_names;
};

extern "C" PyObject* ppy_make_module(const char* name, const ppy_region_def* defs, int ndefs);

// The Python module `rigel` (pybind11): one Define* function per concern, called by module.cc.
// Bindings stay thin: check arguments, call core/io (or the CLI's commands), return results.
#ifndef RIGEL_BINDINGS_PYTHON_PY_MODULE_H_
#define RIGEL_BINDINGS_PYTHON_PY_MODULE_H_

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstddef>
#include <string>
#include <vector>

#include "importers/load_scene.h"

namespace rigel::python {

namespace py = pybind11;

// Scene, Skeleton, Clip, Mesh, MorphTarget; load, save (py_scene.cc).
void DefineScene(py::module_& m);
// LoadOptions from rigel.load's keywords, checked (ValueError naming the keyword), as the CLI
// reads its options (cli/read_options.h).
LoadOptions LoadOptionsOf(const std::string& unit, const std::string& bvh_translation,
                          const std::string& unit_in, const std::string& up,
                          const std::string& forward, bool isolate);
// forward_kinematics in bulk (py_fk.cc).
void DefineForwardKinematics(py::module_& m);
// rigel.Rig: effectors, limits, stages, bake with targets as arrays (py_rig.cc).
void DefineRig(py::module_& m);
// The plausibility checks: rigel.check, Finding, CheckReport (py_check.cc).
void DefineCheck(py::module_& m);
// The CLI's subcommands run in process (info, convert, bake, retarget, ...) (py_commands.cc).
void DefineCommands(py::module_& m);

// A NumPy array over `data` (no copy) of `shape`, C-contiguous, whose lifetime is tied to
// `owner` (the Python object owning the memory): the array holds a reference to it. Read-only
// when `writeable` is false (py_arrays.cc).
template <typename T>
py::array ViewOf(T* data, std::vector<py::ssize_t> shape, py::handle owner, bool writeable);
// The same over const memory: always read-only.
template <typename T>
py::array ViewOf(const T* data, std::vector<py::ssize_t> shape, py::handle owner) {
  return ViewOf(const_cast<T*>(data), std::move(shape), owner, false);
}

}  // namespace rigel::python

#endif  // RIGEL_BINDINGS_PYTHON_PY_MODULE_H_

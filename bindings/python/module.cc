// PYBIND11_MODULE(_rigel): the compiled part of the Python package `rigel` (rigel/__init__.py
// re-exports it). rigel's errors (import, export, confinement, bad arguments found by rigel)
// become rigel.Error, whose message is rigel's own: it names the file and, for text formats,
// the line ("walk.bvh:212: expected 66 values in motion row 3, found 65").
#include <stdexcept>
#include <string>

#include "bindings/python/py_module.h"
#include "importers/import_error.h"

#ifndef RIGEL_VERSION
#define RIGEL_VERSION "0.0.0"
#endif

namespace py = pybind11;

PYBIND11_MODULE(_rigel, m) {
  m.doc() =
      "rigel: BVH/FBX/glTF import, clips as NumPy arrays, forward kinematics in bulk, and the "
      "rigel CLI's convert, bake (Lua rig scripts) and retarget, from Python.";
  m.attr("__version__") = RIGEL_VERSION;
  static py::exception<rigel::ImportError> error(m, "Error", PyExc_RuntimeError);
  error.attr("__doc__") =
      "An error rigel reports: a file that does not read (the message names the file and line), "
      "a file that cannot be written, a failed command (its error lines).";
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const py::builtin_exception&) {
      throw;  // pybind11's own (cast errors, ...): its translator
    } catch (const py::error_already_set&) {
      throw;
    } catch (const std::runtime_error& e) {
      // ImportError, ExportError, ConfinementError, batch::UsageError and rigel's other
      // std::runtime_error throws.
      // The message names files, which need not be UTF-8: undecodable bytes are replaced.
      const std::string what = e.what();
      py::object message = py::reinterpret_steal<py::object>(
          PyUnicode_DecodeUTF8(what.data(), static_cast<Py_ssize_t>(what.size()), "replace"));
      PyErr_SetObject(error.ptr(), message.ptr());
    }
  });
  rigel::python::DefineScene(m);
  rigel::python::DefineForwardKinematics(m);
  rigel::python::DefineRig(m);
  rigel::python::DefineCheck(m);
  rigel::python::DefineCommands(m);
}

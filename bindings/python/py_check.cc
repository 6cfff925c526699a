// rigel.check: the plausibility checks (core/check/plausibility.h) of an output against its
// source, as the commands run them (core/check/plausibility.h CheckSideOf), with the findings as
// Python objects. Bake and retarget reports carry the same checks for each clip they write.
#include <pybind11/stl.h>

#include <string>

#include "bindings/python/py_module.h"
#include "cli/checks_output.h"
#include "core/check/plausibility.h"

namespace rigel::python {

namespace {

check::OutputKind KindOf(const std::string& kind) {
  if (kind == "convert") return check::OutputKind::kConvert;
  if (kind == "bake") return check::OutputKind::kBake;
  if (kind == "retarget") return check::OutputKind::kRetarget;
  throw py::value_error("kind: expected 'convert', 'bake' or 'retarget', got '" + kind + "'");
}

check::TravelRule TravelOf(const std::string& travel) {
  if (travel == "scaled") return check::TravelRule::kScaled;
  if (travel == "kept") return check::TravelRule::kKept;
  if (travel == "none") return check::TravelRule::kNone;
  throw py::value_error("travel: expected 'scaled', 'kept' or 'none', got '" + travel + "'");
}

const Clip& TakeOf(const Scene& scene, int take, const char* which) {
  if (!scene.skeleton || take < 0 || take >= static_cast<int>(scene.clips.size())) {
    throw py::index_error(std::string(which) + ": take " + std::to_string(take) + " out of range");
  }
  return scene.clips[take];
}

check::CheckReport Check(const Scene& source, const Scene& output, const std::string& kind,
                         int source_take, int output_take, double scale,
                         const std::string& travel) {
  check::PlausibilityJob job;
  job.kind = KindOf(kind);
  job.travel = TravelOf(travel);
  job.source = check::CheckSideOf(source, *source.skeleton, TakeOf(source, source_take, "source"));
  job.output = check::CheckSideOf(output, *output.skeleton, TakeOf(output, output_take, "output"));
  job.scale = scale;
  if (const std::string invalid = job.Validate(); !invalid.empty()) {
    throw py::value_error(invalid);
  }
  py::gil_scoped_release release;
  return job.Run();
}

}  // namespace

void DefineCheck(py::module_& m) {
  py::class_<check::Finding>(m, "Finding", "One broken plausibility check (docs/checks.md).")
      .def_readonly("check", &check::Finding::check, "The check's name ('height', ...).")
      .def_readonly("reason", &check::Finding::reason, "Measured and expected figures, limit.")
      .def_readonly("frame", &check::Finding::frame, "Worst frame (0-based), -1: whole clip.")
      .def_readonly("value", &check::Finding::value)
      .def_readonly("limit", &check::Finding::limit)
      .def("__repr__", [](const check::Finding& f) { return check::DescribeFinding(f); });
  py::class_<check::CheckReport>(m, "CheckReport", "What the plausibility checks found.")
      .def_readonly("findings", &check::CheckReport::findings)
      .def_readonly("ran", &check::CheckReport::ran, "The checks that applied and ran.")
      .def_readonly("scale", &check::CheckReport::scale)
      .def_readonly("humanoid", &check::CheckReport::humanoid)
      .def_readonly("frames", &check::CheckReport::frames)
      .def_property_readonly("suspect", &check::CheckReport::suspect)
      .def("__repr__", [](const check::CheckReport& r) {
        return "<rigel.CheckReport " + std::string(r.suspect() ? "suspect: " : "ok") +
               (r.suspect() ? cli::SuspectReason(r) : "") + ">";
      });
  m.def("check", &Check, py::arg("source"), py::arg("output"), py::kw_only(),
        py::arg("kind") = "convert", py::arg("source_take") = 0, py::arg("output_take") = 0,
        py::arg("scale") = 1.0, py::arg("travel") = "scaled",
        "The plausibility checks of `output` against `source` (both Scenes, their own axes and "
        "units), as rigel's commands run them on what they write:\n"
        "  kind: 'convert' (the same body, lengths times scale), 'bake' (the same figure, limbs "
        "may follow the rig) or 'retarget' (another skeleton playing the source)\n"
        "  travel: the output hips' path: 'scaled', 'kept' (in metres) or 'none' (in place).\n"
        "Returns a CheckReport (findings, checks that ran, suspect).");
}

}  // namespace rigel::python

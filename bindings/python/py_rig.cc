// rigel.Rig: a rig built in Python (effectors, limits, locks, solver stages; core/ik/rig.h)
// baked over a clip by core's bake loop (ik::BakeJob) with per-frame targets given as arrays,
// the GIL released. Rig scripts with constraints and foot rolls stay Lua (rigel.bake).
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <vector>

#include "bindings/python/py_module.h"
#include "core/ik/bake.h"
#include "core/ik/methods.h"
#include "core/ik/rig.h"

namespace rigel::python {

namespace {

using Array = py::array_t<double, py::array::c_style | py::array::forcecast>;

int JointOf(const Skeleton& skeleton, const py::object& joint) {
  const int j = py::isinstance<py::str>(joint) ? skeleton.FindJoint(joint.cast<std::string>())
                                               : joint.cast<int>();
  if (j < 0 || j >= skeleton.num_joints()) {
    throw py::value_error("joint " + py::str(joint).cast<std::string>() + " not found");
  }
  return j;
}

int ChannelOf(const Skeleton& skeleton, const py::object& joint, const std::string& name) {
  const int j = JointOf(skeleton, joint);
  const auto type = ParseAnyChannelName(name);
  for (int c = skeleton.channel_begin(j); type && c < skeleton.channel_begin(j + 1); ++c) {
    if (skeleton.channels()[c] == *type) return c;
  }
  throw py::value_error("joint '" + skeleton.name(j) + "' has no channel '" + name + "'");
}

ik::TaskType TaskTypeOf(const std::string& name) {
  for (std::size_t i = 0; i < ik::kTaskTypeNames.size(); ++i) {
    if (ik::kTaskTypeNames[i] == name) return static_cast<ik::TaskType>(i);
  }
  throw py::value_error("type: expected position, orientation, both, aim or pole, got '" + name +
                        "'");
}

// The (frames x tasks x width) array `a`, or an error naming it.
const double* TargetsOf(const std::optional<Array>& a, const char* name, int frames, int tasks,
                        int width) {
  if (!a) return nullptr;
  if (a->ndim() != 3 || a->shape(0) != frames || a->shape(1) != tasks || a->shape(2) != width) {
    throw py::value_error(std::string(name) + ": expected frames x tasks x " +
                          std::to_string(width) + " = " + std::to_string(frames) + " x " +
                          std::to_string(tasks) + " x " + std::to_string(width));
  }
  return a->data();
}

py::dict SummaryDict(const ik::BakeSummary& s) {
  py::dict d;
  d["frames"] = s.frames;
  d["converged"] = s.converged;
  d["not_converged"] = s.not_converged;
  d["unreachable"] = s.unreachable;
  d["iterations_mean"] = s.iterations_mean;
  d["iterations_max"] = s.iterations_max;
  d["residual_max"] = s.residual_max;
  d["residual_mean"] = s.residual_mean;
  d["max_angle_error"] = s.max_angle_error;
  d["worst_frame"] = s.worst_frame;
  d["frames_with_limit_hits"] = s.frames_with_limit_hits;
  return d;
}

py::tuple Bake(const ik::Rig& rig, const Clip& clip, const std::optional<Array>& positions,
               const std::optional<Array>& orientations, const std::optional<Array>& weights) {
  if (!clip.matches(rig.skeleton())) throw py::value_error("the clip is not on the rig's skeleton");
  const int frames = clip.num_frames(), tasks = static_cast<int>(rig.tasks.size());
  const double* p = TargetsOf(positions, "positions", frames, tasks, 3);
  const double* q = TargetsOf(orientations, "orientations", frames, tasks, 4);
  const double* w = nullptr;
  if (weights) {
    if (weights->ndim() != 2 || weights->shape(0) != frames || weights->shape(1) != tasks) {
      throw py::value_error("weights: expected frames x tasks = " + std::to_string(frames) + " x " +
                            std::to_string(tasks));
    }
    w = weights->data();
  }
  for (const ik::Task& t : rig.tasks) {
    const bool needs_orientation =
        t.type == ik::TaskType::kOrientation || t.type == ik::TaskType::kPose;
    if ((needs_orientation ? q : p) == nullptr) {
      throw py::value_error(std::string("a ") + std::string(ik::TaskTypeName(t.type)) +
                            " effector needs " +
                            (needs_orientation ? "orientations" : "positions"));
    }
  }
  auto baked = std::make_unique<Clip>();
  ik::BakeSummary summary;
  std::string error;
  {
    py::gil_scoped_release release;
    std::vector<ik::Target> targets(tasks);
    ik::Workspace workspace;
    ik::BakeJob job;
    job.rig = &rig;
    job.targets = &targets;
    job.clip = &clip;
    job.output = baked.get();
    job.workspace = &workspace;
    job.summary = &summary;
    job.on_frame = [&](int f, Pose&, std::string*) {
      for (int t = 0; t < tasks; ++t) {
        const std::size_t i = static_cast<std::size_t>(f) * tasks + t;
        if (p) targets[t].position = Eigen::Vector3d(p + 3 * i);
        if (q) targets[t].orientation = Eigen::Quaterniond(q + 4 * i).normalized();
        if (w) targets[t].weight = w[i];
      }
      return ik::FrameAction::kSolve;
    };
    if (!job.Run()) error = job.error;
  }
  if (!error.empty()) throw std::runtime_error("rig bake: " + error);
  return py::make_tuple(py::cast(std::move(baked)), SummaryDict(summary));
}

}  // namespace

void DefineRig(py::module_& m) {
  py::class_<ik::Rig, std::shared_ptr<ik::Rig>>(
      m, "Rig",
      "An IK rig on a skeleton: effectors (tasks), channel limits and locks, solver stages. "
      "Angles are radians, lengths scene units, as in clips.")
      .def(py::init([](std::shared_ptr<Skeleton> s) { return std::make_shared<ik::Rig>(s); }),
           py::arg("skeleton"))
      .def(
          "effector",
          [](ik::Rig& rig, const py::object& joint, const std::string& type, double weight,
             int priority, std::array<double, 3> offset) {
            ik::Task task;
            task.joint = JointOf(rig.skeleton(), joint);
            task.type = TaskTypeOf(type);
            if (task.type == ik::TaskType::kPole) {
              throw py::value_error("pole effectors are not available from Python yet");
            }
            task.weight = weight;
            task.priority = priority;
            task.offset = Eigen::Vector3d(offset[0], offset[1], offset[2]);
            return rig.AddTask(task);
          },
          py::arg("joint"), py::arg("type") = "position", py::kw_only(), py::arg("weight") = 1.0,
          py::arg("priority") = 0, py::arg("offset") = std::array<double, 3>{0, 0, 0},
          "Adds an effector on `joint` (name or index): type 'position', 'orientation', 'both' "
          "or 'aim'. Returns its index: the task axis of the bake's target arrays.")
      .def(
          "limit",
          [](ik::Rig& rig, const py::object& joint, const std::string& channel, double lo,
             double hi) { rig.SetLimits(ChannelOf(rig.skeleton(), joint, channel), lo, hi); },
          py::arg("joint"), py::arg("channel"), py::arg("min"), py::arg("max"),
          "Limits a channel ('Yrotation': radians) inside the solve.")
      .def(
          "lock",
          [](ik::Rig& rig, const py::object& joint, const std::string& channel) {
            rig.Lock(ChannelOf(rig.skeleton(), joint, channel));
          },
          py::arg("joint"), py::arg("channel"), "The solve leaves this channel as animated.")
      .def(
          "stage",
          [](ik::Rig& rig, const std::string& method, std::vector<int> tasks) {
            const ik::MethodRow* row = ik::FindMethod(method);
            if (row == nullptr) throw py::value_error("unknown solver method '" + method + "'");
            ik::Stage stage;
            stage.method = row->method;
            stage.tasks = std::move(tasks);
            rig.stages.push_back(stage);
          },
          py::arg("method"), py::arg("tasks"),
          "Adds a solver stage ('dls_adaptive', 'dls', 'pinv', 'svd', 'ccd', 'fabrik', ...) over "
          "the given effectors; without stages one dls_adaptive stage solves every effector.")
      .def_property_readonly("num_effectors",
                             [](const ik::Rig& rig) { return static_cast<int>(rig.tasks.size()); })
      .def("bake", &Bake, py::arg("clip"), py::kw_only(), py::arg("positions") = py::none(),
           py::arg("orientations") = py::none(), py::arg("weights") = py::none(),
           "Solves every frame of `clip` (starting from its row) with the effectors' targets of "
           "that frame: positions frames x effectors x 3 (world), orientations frames x "
           "effectors x 4 (x y z w), weights frames x effectors. Returns (baked Clip, summary "
           "dict). The GIL is released during the bake.");
}

}  // namespace rigel::python

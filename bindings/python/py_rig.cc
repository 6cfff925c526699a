// rigel.Rig: a character rig built in Python (core/ik/character_rig.h: named effectors, limits,
// locks, solver stages, constraints, foot rolls) baked over a clip by core's bake loop
// (ik::BakeJob) with per-frame targets given as arrays, the GIL released. Constraint and foot
// roll options are read by the Lua binding's readers (one reader per constraint kind,
// bindings/lua/wrap_constraint.cc), run in a private Lua state on the same rig: the options are
// the rig script's, names and units included.
#include <pybind11/stl.h>

#include <lua.hpp>
#include <memory>
#include <string>
#include <vector>

#include "bindings/lua/lua_module.h"
#include "bindings/lua/rig_box.h"
#include "bindings/python/py_module.h"
#include "core/euler.h"
#include "core/ik/bake.h"
#include "core/ik/character_rig.h"
#include "core/ik/methods.h"

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

// Pushes the Python value `v` as a Lua value: None nil, bool, int, float, str, a dict as a table
// of its items, any other sequence (list, tuple, NumPy array) as a list (1-based).
void PushLua(lua_State* L, py::handle v, int depth = 0) {
  if (depth > 8) throw py::value_error("options nested too deep");
  luaL_checkstack(L, 4, "options");
  if (v.is_none()) {
    lua_pushnil(L);
  } else if (py::isinstance<py::bool_>(v)) {
    lua_pushboolean(L, v.cast<bool>());
  } else if (py::isinstance<py::int_>(v)) {
    lua_pushinteger(L, v.cast<lua_Integer>());
  } else if (py::isinstance<py::float_>(v)) {
    lua_pushnumber(L, v.cast<double>());
  } else if (py::isinstance<py::str>(v)) {
    lua_pushstring(L, v.cast<std::string>().c_str());
  } else if (py::isinstance<py::dict>(v)) {
    lua_newtable(L);
    for (const auto& item : v.cast<py::dict>()) {
      PushLua(L, item.first, depth + 1);
      PushLua(L, item.second, depth + 1);
      lua_settable(L, -3);
    }
  } else if (py::isinstance<py::sequence>(v) || py::hasattr(v, "tolist")) {
    const auto object = py::reinterpret_borrow<py::object>(v);
    const py::list list =
        py::hasattr(object, "tolist") ? py::list(object.attr("tolist")()) : py::list(object);
    lua_createtable(L, static_cast<int>(list.size()), 0);
    for (std::size_t i = 0; i < list.size(); ++i) {
      PushLua(L, list[i], depth + 1);
      lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
    }
  } else if (py::hasattr(v, "__float__")) {  // NumPy scalars
    lua_pushnumber(L, py::float_(py::reinterpret_borrow<py::object>(v)).cast<double>());
  } else {
    throw py::value_error("option value " + py::repr(v).cast<std::string>() +
                          ": expected a number, bool, string, list or dict");
  }
}

// Calls the Lua rig method `method` (rig:constraint, rig:twist, rig:foot_roll, ...) on `rig`
// with `args`, in a fresh Lua state with the rigel module, and returns its integer result (0
// when it returns none). A Lua error becomes a ValueError with the binding's message.
lua_Integer CallRigMethod(const std::shared_ptr<ik::CharacterRig>& rig, const char* method,
                          const std::vector<py::object>& args) {
  std::unique_ptr<lua_State, decltype(&lua_close)> state(luaL_newstate(), &lua_close);
  if (!state) throw std::bad_alloc();
  lua_State* L = state.get();
  luaL_requiref(L, "rigel", luaopen_rigel, 0);
  lua_pop(L, 1);
  lua::PushRig(L, rig);
  lua_getfield(L, -1, method);
  lua_insert(L, -2);  // method, self
  for (const py::object& a : args) PushLua(L, a);
  if (lua_pcall(L, static_cast<int>(args.size()) + 1, 1, 0) != LUA_OK) {
    std::string message = lua_tostring(L, -1) != nullptr ? lua_tostring(L, -1) : "error";
    // "bad argument #3 to '?' (field 'x': ...)": Lua's positions mean nothing to a Python
    // caller; the method and what is wrong do.
    const std::size_t open = message.find(" to '?' (");
    if (message.rfind("bad argument #", 0) == 0 && open != std::string::npos &&
        message.back() == ')') {
      message = message.substr(open + 9, message.size() - open - 10);
    }
    throw py::value_error(std::string("rig.") + method + ": " + message);
  }
  return lua_isinteger(L, -1) ? lua_tointeger(L, -1) : 0;
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

// The per-frame records of a bake as arrays (one row per solved frame).
py::dict RecordsDict(const ik::CharacterRig& character, const std::vector<ik::FrameRecord>& rows) {
  const std::size_t n = rows.size(), e = character.rig.tasks.size();
  py::array_t<int> frame(n), iterations(n), restarts(n), limit_hits(n);
  py::array_t<double> position({n, e}), angle({n, e}), swivel(n);
  py::list status;
  for (std::size_t i = 0; i < n; ++i) {
    const ik::FrameRecord& r = rows[i];
    frame.mutable_at(i) = r.frame;
    iterations.mutable_at(i) = r.iterations;
    restarts.mutable_at(i) = r.restarts;
    limit_hits.mutable_at(i) = static_cast<int>(r.channels_on_limit.size());
    swivel.mutable_at(i) = r.SwivelJumpDegrees();
    status.append(std::string(ik::StatusName(r.status)));
    for (std::size_t t = 0; t < e; ++t) {
      const bool has = t < r.effectors.size();
      position.mutable_at(i, t) = has ? r.effectors[t].position_error : 0.0;
      angle.mutable_at(i, t) = has ? r.effectors[t].angle_error : 0.0;
    }
  }
  py::dict d;
  d["effectors"] = character.names;
  d["frame"] = frame;
  d["status"] = status;
  d["iterations"] = iterations;
  d["restarts"] = restarts;
  d["channels_on_limit"] = limit_hits;
  d["position_error"] = position;
  d["angle_error"] = angle;
  d["swivel_jump_deg"] = swivel;
  return d;
}

py::tuple Bake(ik::CharacterRig& character, const Clip& clip, const std::optional<Array>& positions,
               const std::optional<Array>& orientations, const std::optional<Array>& weights,
               const std::optional<Array>& foot_rolls, bool records) {
  const ik::Rig& rig = character.rig;
  if (!clip.matches(rig.skeleton())) throw py::value_error("the clip is not on the rig's skeleton");
  const int frames = clip.num_frames(), tasks = static_cast<int>(rig.tasks.size());
  const double* p = TargetsOf(positions, "positions", frames, tasks, 3);
  const double* q = TargetsOf(orientations, "orientations", frames, tasks, 4);
  const int rolls = static_cast<int>(character.foot_rolls.size());
  const double* r = TargetsOf(foot_rolls, "foot_rolls", frames, rolls, 4);
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
  std::vector<ik::FrameRecord> rows;
  std::string error;
  {
    py::gil_scoped_release release;
    ik::BakeJob job;
    job.character = &character;
    job.clip = &clip;
    job.output = baked.get();
    job.summary = &summary;
    if (records) job.records = &rows;
    job.on_frame = [&](int f, Pose&, std::string* why) {
      std::vector<ik::Target>& targets = character.targets;
      for (int t = 0; t < tasks; ++t) {
        const std::size_t i = static_cast<std::size_t>(f) * tasks + t;
        if (p) targets[t].position = Eigen::Vector3d(p + 3 * i);
        if (q) targets[t].orientation = Eigen::Quaterniond(q + 4 * i).normalized();
        if (w) targets[t].weight = w[i];
      }
      for (int k = 0; r != nullptr && k < rolls; ++k) {
        // roll, break, bank, toe_tap (degrees), as rig:set_foot_roll keys them.
        const double* v = r + 4 * (static_cast<std::size_t>(f) * rolls + k);
        constraints::FootRoll foot = character.foot_rolls[k].foot;
        foot.roll = v[0] * kRadPerDeg;
        foot.break_angle = v[1] * kRadPerDeg;
        foot.bank = v[2] * kRadPerDeg;
        foot.toe_tap = v[3] * kRadPerDeg;
        if (!foot.Validate(why)) {
          *why =
              "frame " + std::to_string(f + 1) + ": foot roll " + std::to_string(k) + ": " + *why;
          return ik::FrameAction::kFail;
        }
        character.foot_rolls[k].foot = foot;
      }
      return ik::FrameAction::kSolve;
    };
    if (!job.Run()) error = job.error;
  }
  if (!error.empty()) throw std::runtime_error("rig bake: " + error);
  py::tuple out = records ? py::make_tuple(py::cast(std::move(baked)), SummaryDict(summary),
                                           RecordsDict(character, rows))
                          : py::make_tuple(py::cast(std::move(baked)), SummaryDict(summary));
  return out;
}

// rig.<method>(**options) -> the handle rig:<method>(options) returns, 0-based.
using Character = ik::CharacterRig;
using RigClass = py::class_<Character, std::shared_ptr<Character>>;

int DeclareWithOptions(const std::shared_ptr<ik::CharacterRig>& rig, const char* method,
                       std::vector<py::object> args, const py::kwargs& options) {
  args.push_back(py::dict(options));
  return static_cast<int>(CallRigMethod(rig, method, args)) - 1;
}

int Effector(ik::CharacterRig& rig, const py::object& joint, const std::string& type,
             const std::string& name, double weight, int priority, std::array<double, 3> offset,
             const py::object& root, const py::object& mid, std::array<double, 3> aim_axis) {
  const Skeleton& s = rig.rig.skeleton();
  ik::Task task;
  task.joint = JointOf(s, joint);
  task.type = TaskTypeOf(type);
  if (weight < 0) throw py::value_error("weight must be >= 0");
  task.weight = weight;
  task.priority = priority;
  task.offset = Eigen::Vector3d(offset[0], offset[1], offset[2]);
  if (!root.is_none()) task.pole_root = JointOf(s, root);
  if (!mid.is_none()) task.pole_mid = JointOf(s, mid);
  const Eigen::Vector3d aim(aim_axis[0], aim_axis[1], aim_axis[2]);
  if (!(aim.norm() > 0)) throw py::value_error("aim_axis must not be zero");
  task.aim_axis = aim.normalized();
  std::string error;
  const int index = rig.AddEffector(task, {}, name, &error);
  if (index < 0) throw py::value_error(error);
  return index;
}

// rig.limit, lock and stage: what may move and how it is solved.
void DefineSolving(RigClass& rig) {
  rig.def(
         "limit",
         [](Character& c, const py::object& joint, const std::string& channel, double lo,
            double hi) { c.rig.SetLimits(ChannelOf(c.rig.skeleton(), joint, channel), lo, hi); },
         py::arg("joint"), py::arg("channel"), py::arg("min"), py::arg("max"),
         "Limits a channel ('Yrotation': radians) inside the solve.")
      .def(
          "lock",
          [](Character& c, const py::object& joint, const std::string& channel) {
            c.rig.Lock(ChannelOf(c.rig.skeleton(), joint, channel));
          },
          py::arg("joint"), py::arg("channel"), "The solve leaves this channel as animated.")
      .def(
          "stage",
          [](Character& c, const std::string& method, std::vector<int> tasks) {
            const ik::MethodRow* row = ik::FindMethod(method);
            if (row == nullptr) throw py::value_error("unknown solver method '" + method + "'");
            for (const int t : tasks) {
              if (t < 0 || t >= static_cast<int>(c.rig.tasks.size())) {
                throw py::value_error("stage: no effector " + std::to_string(t));
              }
            }
            ik::Stage stage;
            stage.method = row->method;
            stage.tasks = std::move(tasks);
            c.rig.stages.push_back(stage);
          },
          py::arg("method"), py::arg("tasks"),
          "Adds a solver stage ('dls_adaptive', 'dls', 'pinv', 'svd', 'ccd', 'fabrik', "
          "'two_bone', ...) over the given effectors; without stages one dls_adaptive stage "
          "solves every effector.");
}

// rig.constraint, foot_roll, set_influence and constraints.
void DefineConstraints(RigClass& rig) {
  rig.def(
         "constraint",
         [](const std::shared_ptr<Character>& c, const std::string& kind,
            const py::kwargs& options) {
           return DeclareWithOptions(c, "constraint", {py::str(kind)}, options);
         },
         py::arg("kind"),
         "Adds a constraint of `kind` ('parent', 'point', 'orient', 'aim', 'copy_location', "
         "'copy_rotation', 'copy_scale', 'limit_rotation', 'limit_location', 'limit_scale', "
         "'limit_distance', 'twist', 'spline_ik') with the options rig:constraint takes "
         "(docs/constraints.md), e.g. rig.constraint('parent', joint='Prop', "
         "target='RightHand'). It runs after the stages declared so far unless after_stage "
         "says otherwise. Returns its handle (0-based).")
      .def(
          "foot_roll",
          [](const std::shared_ptr<Character>& c, const py::object& effector,
             const py::kwargs& options) {
            const py::object e = py::isinstance<py::int_>(effector)
                                     ? py::object(py::int_(effector.cast<int>() + 1))
                                     : effector;
            return DeclareWithOptions(c, "foot_roll", {e}, options);
          },
          py::arg("effector"),
          "Adds a reverse-foot rig on a 'both' effector (its target is the planted ankle): "
          "rig:foot_roll's options (heel, ball, toe, inner, outer, side, forward as 3-lists in the "
          "ankle's frame; roll, break, bank, toe_tap in degrees; toe_joint). Returns its handle "
          "(0-based): the foot_rolls axis of bake.")
      .def(
          "set_influence",
          [](const std::shared_ptr<Character>& c, int handle, double influence) {
            CallRigMethod(c, "set_influence", {py::int_(handle + 1), py::float_(influence)});
          },
          py::arg("handle"), py::arg("influence"), "A constraint's influence, in [0, 1].")
      .def(
          "constraints",
          [](const Character& c) {
            py::list out;
            for (const constraints::Entry& e : c.constraints.entries) {
              py::dict d;
              d["kind"] = std::string(constraints::KindName(e.constraint));
              d["joint"] = c.rig.skeleton().name(constraints::ConstrainedJoint(e.constraint));
              d["after_stage"] = e.after_stage;
              out.append(d);
            }
            return out;
          },
          "The constraints in declaration order: kind, joint and after_stage (-1: before the "
          "first stage).");
}

}  // namespace

void DefineRig(py::module_& m) {
  RigClass rig(
      m, "Rig",
      "A character's IK rig on a skeleton: named effectors (tasks), channel limits and locks, "
      "solver stages, constraints and foot rolls (core/ik/character_rig.h). Angles of effectors, "
      "limits and clips are radians, lengths scene units; constraint and foot-roll options are "
      "the Lua rig script's (docs/constraints.md: degrees, joints by name).");
  rig.def(py::init([](std::shared_ptr<Skeleton> s) { return std::make_shared<Character>(s); }),
          py::arg("skeleton"))
      .def("effector", &Effector, py::arg("joint"), py::arg("type") = "position", py::kw_only(),
           py::arg("name") = "", py::arg("weight") = 1.0, py::arg("priority") = 0,
           py::arg("offset") = std::array<double, 3>{0, 0, 0}, py::arg("root") = py::none(),
           py::arg("mid") = py::none(), py::arg("aim_axis") = std::array<double, 3>{1, 0, 0},
           "Adds an effector on `joint` (name or index): type 'position', 'orientation', 'both', "
           "'aim' or 'pole' (a pole's chain: root and mid, by default the joint's grandparent "
           "and parent). Named `name` (default: the joint's name, '<joint>.<type>' for other "
           "types). Returns its index: the effector axis of the bake's target arrays.")
      .def_property_readonly(
          "effectors", [](const Character& c) { return c.names; },
          "The effectors' names, in index order.");
  DefineSolving(rig);
  DefineConstraints(rig);
  rig.def_property_readonly("num_effectors",
                            [](const Character& c) { return static_cast<int>(c.rig.tasks.size()); })
      .def_property_readonly(
          "num_foot_rolls",
          [](const Character& c) { return static_cast<int>(c.foot_rolls.size()); })
      .def("bake", &Bake, py::arg("clip"), py::kw_only(), py::arg("positions") = py::none(),
           py::arg("orientations") = py::none(), py::arg("weights") = py::none(),
           py::arg("foot_rolls") = py::none(), py::arg("records") = false,
           "Solves every frame of `clip` (starting from its row) with the effectors' targets of "
           "that frame: positions frames x effectors x 3 (world; a pole's pole point, an aim's "
           "point), orientations frames x effectors x 4 (x y z w), weights frames x effectors, "
           "foot_rolls frames x foot rolls x 4 (roll, break, bank, toe_tap in degrees); the "
           "constraints run where they were declared. Returns (baked Clip, summary dict), and "
           "with records=True a third item: per solved frame its status, iterations, restarts, "
           "channels on a limit, each effector's position and angle error and the limbs' swivel "
           "jump, as arrays. The GIL is released during the bake.");
}

}  // namespace rigel::python

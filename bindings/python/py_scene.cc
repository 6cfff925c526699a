// Scene, Skeleton, Clip, Mesh and MorphTarget as Python objects; rigel.load and rigel.save.
// Arrays are views into rigel's own storage wherever its layout is NumPy's (a clip's values and
// weights, a skeleton's offsets and rest orientations, a mesh's vertices), their lifetime tied to
// the object that owns the memory; names and small per-joint facts are Python lists.
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "bindings/python/py_module.h"
#include "cli/read_options.h"
#include "core/euler.h"
#include "core/scene.h"
#include "exporters/save_scene.h"
#include "importers/load_scene.h"

namespace rigel::python {

namespace {

using SkeletonPtr = std::shared_ptr<Skeleton>;

SkeletonPtr Mutable(const std::shared_ptr<const Skeleton>& s) {
  return std::const_pointer_cast<Skeleton>(s);
}

py::ssize_t Ssize(std::size_t n) { return static_cast<py::ssize_t>(n); }

// The channel layout and per-joint facts of the Skeleton class (lists: names are copies).
void DefineSkeletonLayout(py::class_<Skeleton, SkeletonPtr>& c) {
  c.def_property_readonly(
       "channel_types",
       [](const Skeleton& s) {
         std::vector<std::string> out;
         for (ChannelType t : s.channels()) out.emplace_back(ChannelName(t));
         return out;
       },
       "Each channel's type ('Xposition', 'Zrotation', 'Xscale', ...), in clip column order.")
      .def_property_readonly(
          "channel_joints",
          [](const Skeleton& s) {
            py::array_t<int> out(s.num_channels());
            for (int i = 0; i < s.num_channels(); ++i) out.mutable_at(i) = s.channel_joint(i);
            return out;
          },
          "The joint owning each clip column.")
      .def_property_readonly(
          "channel_names",
          [](const Skeleton& s) {
            std::vector<std::string> out;
            for (int i = 0; i < s.num_channels(); ++i) {
              out.push_back(s.name(s.channel_joint(i)) + "." +
                            std::string(ChannelName(s.channels()[i])));
            }
            return out;
          },
          "'Joint.Channel' for each clip column ('Hips.Xposition', ...).")
      .def(
          "joint_channels",
          [](const Skeleton& s, int joint) {
            if (joint < 0 || joint >= s.num_joints()) throw py::index_error("joint out of range");
            std::vector<std::string> out;
            for (ChannelType t : s.joint_channels(joint)) out.emplace_back(ChannelName(t));
            return out;
          },
          py::arg("joint"), "The channel layout of one joint, in its file order.")
      .def(
          "channel_begin",
          [](const Skeleton& s, int joint) {
            if (joint < 0 || joint >= s.num_joints()) throw py::index_error("joint out of range");
            return s.channel_begin(joint);
          },
          py::arg("joint"), "The clip column of the joint's first channel.")
      .def_property_readonly(
          "rotation_orders",
          [](const Skeleton& s) {
            std::vector<std::optional<std::string>> out;
            for (int j = 0; j < s.num_joints(); ++j) {
              const auto order = s.rotation_order(j);
              out.push_back(order ? std::optional<std::string>(EulerOrderName(*order))
                                  : std::nullopt);
            }
            return out;
          },
          "Each joint's Euler order ('ZXY', ...) or None when it has not three rotation channels.")
      .def_property_readonly(
          "translation_modes",
          [](const Skeleton& s) {
            std::vector<std::string> out;
            for (int j = 0; j < s.num_joints(); ++j) {
              out.push_back(s.translation_mode(j) == TranslationMode::kReplace ? "replace" : "add");
            }
            return out;
          },
          "How the file stated each joint's position channels: 'add' (deltas to the OFFSET) or "
          "'replace' (absolute); clip values are deltas either way.")
      .def_property_readonly("has_scale", py::overload_cast<>(&Skeleton::has_scale, py::const_))
      .def_property_readonly(
          "end_sites",
          [](const Skeleton& s) {
            py::array_t<int> parents(Ssize(s.end_sites().size()));
            py::array_t<double> offsets({Ssize(s.end_sites().size()), py::ssize_t{3}});
            for (std::size_t e = 0; e < s.end_sites().size(); ++e) {
              parents.mutable_at(e) = s.end_sites()[e].parent;
              for (int k = 0; k < 3; ++k) offsets.mutable_at(e, k) = s.end_sites()[e].offset[k];
            }
            return py::make_tuple(parents, offsets);
          },
          "(parents, offsets) of the End Sites: parent joint per site, offsets E x 3.")
      .def("find", &Skeleton::FindJoint, py::arg("name"), "Index of the joint, or -1.")
      .def("__len__", &Skeleton::num_joints)
      .def("__repr__", [](const Skeleton& s) {
        return "<rigel.Skeleton " + std::to_string(s.num_joints()) + " joints, " +
               std::to_string(s.num_channels()) + " channels>";
      });
}

// The Skeleton class: counts, names, parents, offsets and rest orientations (read-only views).
void DefineSkeleton(py::module_& m) {
  py::class_<Skeleton, SkeletonPtr> c(
      m, "Skeleton",
      "An immutable joint hierarchy: joints in parent-before-child order (parents[i] < i, roots "
      "-1), rest offsets and orientations, and each joint's channel layout as the file has it.");
  c.def_property_readonly("num_joints", &Skeleton::num_joints)
      .def_property_readonly("num_channels", &Skeleton::num_channels)
      .def_property_readonly(
          "names",
          [](const Skeleton& s) {
            return std::vector<std::string>(s.names().begin(), s.names().end());
          },
          "Joint names, in joint order.")
      .def_property_readonly(
          "parents",
          [](py::object self) {
            const auto& s = self.cast<const Skeleton&>();
            return ViewOf(s.parents().data(), {s.num_joints()}, self);
          },
          "Parent index of each joint (int32, read-only view), -1 for roots.")
      .def_property_readonly(
          "offsets",
          [](py::object self) {
            const auto& s = self.cast<const Skeleton&>();
            return ViewOf(s.num_joints() ? s.rest_translation(0).data() : nullptr,
                          {s.num_joints(), 3}, self);
          },
          "Rest translation of each joint in its parent's space (BVH OFFSET), J x 3, scene "
          "units (read-only view).")
      .def_property_readonly(
          "rest_orientations",
          [](py::object self) {
            const auto& s = self.cast<const Skeleton&>();
            return ViewOf(s.num_joints() ? s.rest_orientation(0).coeffs().data() : nullptr,
                          {s.num_joints(), 4}, self);
          },
          "Rest orientation of each joint in its parent's space as quaternions x, y, z, w "
          "(scipy's order), J x 4 (read-only view); identity for BVH.");
  DefineSkeletonLayout(c);
}

void DefineClip(py::module_& m) {
  py::class_<Clip> cls(m, "Clip",
                       "A sampled animation: frames x channels values in a skeleton's layout "
                       "(radians and scene units), a frame time and a take name.");
  cls.def(py::init([](py::array_t<double, py::array::c_style | py::array::forcecast> values,
                      double frame_time, std::string name) {
            if (values.ndim() != 2) throw py::value_error("values must be frames x channels");
            if (!(frame_time > 0)) throw py::value_error("frame_time must be > 0");
            auto clip = std::make_unique<Clip>(static_cast<int>(values.shape(0)),
                                               static_cast<int>(values.shape(1)), frame_time);
            std::copy(values.data(), values.data() + values.size(), clip->values().begin());
            clip->set_name(std::move(name));
            return clip;
          }),
          py::arg("values"), py::arg("frame_time"), py::arg("name") = "",
          "A clip holding a copy of `values` (frames x channels, radians and scene units).")
      .def_property_readonly("num_frames", &Clip::num_frames)
      .def_property_readonly("num_channels", &Clip::num_channels)
      .def_property("frame_time", &Clip::frame_time, &Clip::set_frame_time, "Seconds per frame.")
      .def_property_readonly("frame_rate", &Clip::frame_rate)
      .def_property_readonly("duration", &Clip::duration)
      .def_property("name", &Clip::name, &Clip::set_name, "Take name ('' for BVH).")
      .def_property_readonly(
          "values",
          [](py::object self) {
            auto& clip = self.cast<Clip&>();
            return ViewOf(clip.values().data(), {clip.num_frames(), clip.num_channels()}, self,
                          true);
          },
          "frames x channels float64 view of the clip's values (writes go into the clip): "
          "rotations in radians, positions in scene units as deltas added to the offsets.")
      .def_property_readonly(
          "weights",
          [](py::object self) {
            auto& clip = self.cast<Clip&>();
            return ViewOf(clip.weight_values().data(), {clip.num_frames(), clip.num_weights()},
                          self, true);
          },
          "frames x weight channels float64 view of the blend-shape weights.")
      .def_property_readonly(
          "weight_channels",
          [](const Clip& clip) {
            std::vector<std::pair<std::string, std::string>> out;
            for (const WeightChannel& w : clip.weight_channels()) out.push_back({w.mesh, w.target});
            return out;
          },
          "(mesh, morph target) of each weight column.")
      .def("__len__", &Clip::num_frames)
      .def("__repr__", [](const Clip& c) {
        return "<rigel.Clip '" + c.name() + "' " + std::to_string(c.num_frames()) + " frames x " +
               std::to_string(c.num_channels()) + " channels>";
      });
}

// A std::vector<Eigen::Vector3d> (contiguous, 3 doubles each) as an N x 3 view.
py::array Vec3View(std::vector<Eigen::Vector3d>& v, py::handle owner) {
  return ViewOf(v.empty() ? nullptr : v[0].data(), {Ssize(v.size()), 3}, owner, true);
}

// Isometries as N x 4 x 4 matrices (a copy: Eigen stores them column-major).
py::array Matrices(const std::vector<Eigen::Isometry3d>& v) {
  py::array_t<double> out({Ssize(v.size()), py::ssize_t{4}, py::ssize_t{4}});
  auto w = out.mutable_unchecked<3>();
  for (std::size_t i = 0; i < v.size(); ++i) {
    for (int r = 0; r < 4; ++r) {
      for (int k = 0; k < 4; ++k) w(i, r, k) = v[i].matrix()(r, k);
    }
  }
  return out;
}

void DefineMesh(py::module_& m) {
  py::class_<MorphTarget>(m, "MorphTarget", "A blend shape: sparse vertex offsets.")
      .def_readonly("name", &MorphTarget::name)
      .def_readonly("default_weight", &MorphTarget::default_weight)
      .def_property_readonly("vertices",
                             [](py::object self) {
                               auto& t = self.cast<MorphTarget&>();
                               return ViewOf(t.vertices.data(), {Ssize(t.vertices.size())}, self,
                                             true);
                             })
      .def_property_readonly(
          "position_deltas",
          [](py::object self) { return Vec3View(self.cast<MorphTarget&>().position_deltas, self); })
      .def_property_readonly("normal_deltas", [](py::object self) {
        return Vec3View(self.cast<MorphTarget&>().normal_deltas, self);
      });
  py::class_<Mesh>(m, "Mesh",
                   "A triangle mesh in world space at its bind pose, skinned to joints, attached "
                   "to one joint, or static.")
      .def_readonly("name", &Mesh::name)
      .def_readonly("material", &Mesh::material)
      .def_property_readonly(
          "positions", [](py::object self) { return Vec3View(self.cast<Mesh&>().positions, self); },
          "V x 3 vertex positions (view).")
      .def_property_readonly(
          "normals", [](py::object self) { return Vec3View(self.cast<Mesh&>().normals, self); })
      .def_property_readonly("uvs",
                             [](py::object self) {
                               auto& mesh = self.cast<Mesh&>();
                               return ViewOf(mesh.uvs.empty() ? nullptr : mesh.uvs[0].data(),
                                             {Ssize(mesh.uvs.size()), 2}, self, true);
                             })
      .def_property_readonly(
          "triangles",
          [](py::object self) {
            auto& mesh = self.cast<Mesh&>();
            return ViewOf(mesh.triangles.data(), {Ssize(mesh.triangles.size() / 3), 3}, self, true);
          },
          "T x 3 vertex indices (uint32 view).")
      .def_property_readonly(
          "polygon_triangles",
          [](py::object self) {
            auto& mesh = self.cast<Mesh&>();
            return ViewOf(mesh.polygon_triangles.data(), {Ssize(mesh.polygon_triangles.size())},
                          self, true);
          },
          "The file's polygons as the triangle fans they split into: how many consecutive "
          "triangles make each (uint32 view; empty: every triangle is a polygon).")
      .def_readonly("skin_joints", &Mesh::skin_joints)
      .def_property_readonly("bind_world",
                             [](const Mesh& mesh) { return Matrices(mesh.bind_world); })
      .def_property_readonly(
          "vertex_joints",
          [](py::object self) {
            auto& mesh = self.cast<Mesh&>();
            return ViewOf(mesh.vertex_joints.empty() ? nullptr : mesh.vertex_joints[0].data(),
                          {Ssize(mesh.vertex_joints.size()), Mesh::kMaxInfluences}, self, true);
          },
          "V x 8 indices into skin_joints (uint16 view).")
      .def_property_readonly(
          "vertex_weights",
          [](py::object self) {
            auto& mesh = self.cast<Mesh&>();
            return ViewOf(mesh.vertex_weights.empty() ? nullptr : mesh.vertex_weights[0].data(),
                          {Ssize(mesh.vertex_weights.size()), Mesh::kMaxInfluences}, self, true);
          },
          "V x 8 skin weights (float32 view), summing to 1.")
      .def_readonly("attach_joint", &Mesh::attach_joint)
      .def_property_readonly(
          "attach_bind",
          [](const Mesh& mesh) { return Matrices({mesh.attach_bind}).attr("__getitem__")(0); })
      .def_property_readonly("skinned", &Mesh::skinned)
      .def_property_readonly(
          "morph_targets",
          [](py::object self) {
            auto& mesh = self.cast<Mesh&>();
            py::list out;
            for (MorphTarget& t : mesh.morph_targets) {
              out.append(py::cast(&t, py::return_value_policy::reference_internal, self));
            }
            return out;
          })
      .def("__repr__", [](const Mesh& mesh) {
        return "<rigel.Mesh '" + mesh.name + "' " + std::to_string(mesh.positions.size()) +
               " vertices>";
      });
}

py::dict AxesDict(const SceneAxes& axes) {
  py::dict out;
  for (const auto& [key, fact] : {std::pair{"up", &axes.up}, {"forward", &axes.forward}}) {
    py::dict f;
    f["axis"] = SignedAxisName(fact->value);
    f["source"] = std::string(FactSourceKey(fact->source));
    f["evidence"] = fact->evidence;
    out[key] = f;
  }
  out["right_handed"] = axes.right_handed;
  out["text"] = DescribeAxes(axes);
  return out;
}

void DefineSceneClass(py::module_& m) {
  py::class_<Scene, std::shared_ptr<Scene>>(
      m, "Scene", "What a file holds: one skeleton, its clips (takes), meshes, unit and axes.")
      .def_property_readonly("skeleton", [](const Scene& s) { return Mutable(s.skeleton); })
      .def_property_readonly(
          "clips",
          [](py::object self) {
            auto& scene = self.cast<Scene&>();
            py::list out;
            for (Clip& c : scene.clips) {
              out.append(py::cast(&c, py::return_value_policy::reference_internal, self));
            }
            return out;
          },
          "The takes (a BVH file has one); each keeps the scene alive.")
      .def_property_readonly(
          "clip",
          [](py::object self) {
            auto& scene = self.cast<Scene&>();
            if (scene.clips.empty()) throw py::index_error("the scene has no clip");
            return py::cast(&scene.clips.front(), py::return_value_policy::reference_internal,
                            self);
          },
          "The first take.")
      .def_property_readonly(
          "meshes",
          [](py::object self) {
            auto& scene = self.cast<Scene&>();
            py::list out;
            for (Mesh& mesh : scene.meshes) {
              out.append(py::cast(&mesh, py::return_value_policy::reference_internal, self));
            }
            return out;
          })
      .def_readonly("source", &Scene::source)
      .def_readonly("warnings", &Scene::warnings)
      .def_property_readonly("unit_metres", &MetresPerUnit,
                             "Metres per scene unit as the file states it, 0 when it does not.")
      .def_property_readonly("unit_metres_or_estimate", &MetresPerUnitOrEstimate,
                             "Metres per scene unit, stated or estimated from the body; 0 when "
                             "neither.")
      .def_readonly("length_scale", &Scene::length_scale)
      .def_property_readonly(
          "axes", [](const Scene& s) { return AxesDict(s.axes); },
          "Up and forward axes with how they were found.")
      .def("__repr__", [](const Scene& s) {
        return "<rigel.Scene '" + s.source + "' " +
               std::to_string(s.skeleton ? s.skeleton->num_joints() : 0) + " joints, " +
               std::to_string(s.clips.size()) + " clip(s)>";
      });
}

void DefineLoadSave(py::module_& m) {
  m.def(
      "load",
      [](const std::filesystem::path& path, const std::string& unit,
         const std::string& bvh_translation, const std::string& unit_in, const std::string& up,
         const std::string& forward, bool isolate) {
        const LoadOptions options =
            LoadOptionsOf(unit, bvh_translation, unit_in, up, forward, isolate);
        py::gil_scoped_release release;
        return std::make_shared<Scene>(LoadScene(path.string(), options));
      },
      py::arg("path"), py::kw_only(), py::arg("unit") = "file", py::arg("bvh_translation") = "auto",
      py::arg("unit_in") = "", py::arg("up") = "", py::arg("forward") = "",
      py::arg("isolate") = true,
      "Reads an animation file (.bvh natively; .fbx, .glb, .gltf, .dae through Assimp in a "
      "confined child process unless isolate=False) with the CLI's reading options:\n"
      "  unit: 'file', 'm' or 'cm' (lengths of the returned scene)\n"
      "  bvh_translation: 'auto', 'add' or 'replace' (BVH position channels)\n"
      "  unit_in: BVH unit ('cm', '0.0254', '2.54cm'; '' = estimated from the body)\n"
      "  up, forward: axes of the data ('y', '-z', ...), overriding the file and the body.\n"
      "Raises rigel.Error naming the file (and line) when it does not read.");
  m.def(
      "save",
      [](const Scene& scene, const std::filesystem::path& path,
         std::optional<std::vector<int>> takes) {
        if (!scene.skeleton) throw py::value_error("the scene has no skeleton");
        std::vector<Clip> picked;
        if (takes) {
          for (int t : *takes) {
            if (t < 0 || t >= static_cast<int>(scene.clips.size())) {
              throw py::index_error("take " + std::to_string(t) + " out of range");
            }
            picked.push_back(scene.clips[t]);
          }
        }
        SaveOptions options;
        options.metres_per_unit = MetresPerUnitOrEstimate(scene);
        options.meshes = scene.meshes;
        options.axes = scene.axes;
        const std::span<const Clip> clips =
            takes ? std::span<const Clip>(picked) : std::span<const Clip>(scene.clips);
        {
          py::gil_scoped_release release;
          SaveClips(*scene.skeleton, clips, path.string(), options);
        }
        // What the format could not keep (the CLI's warnings): returned, and warned.
        const std::vector<std::string> dropped =
            SceneDroppedBy(path.string(), scene, clips, clips.size());
        for (const std::string& line : dropped) {
          if (PyErr_WarnEx(PyExc_UserWarning, line.c_str(), 1) != 0) throw py::error_already_set();
        }
        return dropped;
      },
      py::arg("scene"), py::arg("path"), py::arg("takes") = py::none(),
      "Writes the scene (or the takes listed by index) in the format of the path's extension "
      "(.bvh holds one take; .glb, .gltf, .fbx several), atomically. Returns what the format could "
      "not keep, a line each (also warned as UserWarning; empty: nothing). Raises rigel.Error.");
  m.def(
      "scene_with",
      [](const Scene& scene, std::vector<Clip*> clips) {
        auto out = std::make_shared<Scene>();
        out->skeleton = scene.skeleton;
        for (Clip* c : clips) {
          if (!c->matches(*scene.skeleton)) {
            throw py::value_error("clip has " + std::to_string(c->num_channels()) +
                                  " channels, the skeleton " +
                                  std::to_string(scene.skeleton->num_channels()));
          }
          out->clips.push_back(*c);
        }
        out->meshes = scene.meshes;
        out->source = scene.source;
        out->file_unit_metres = scene.file_unit_metres;
        out->estimated_unit_metres = scene.estimated_unit_metres;
        out->length_scale = scene.length_scale;
        out->axes = scene.axes;
        return out;
      },
      py::arg("scene"), py::arg("clips"),
      "A new scene with `scene`'s skeleton, meshes, unit and axes and copies of `clips` (e.g. "
      "clips made from arrays with rigel.Clip(values, frame_time)).");
}

}  // namespace

// rigel.load's options, as the CLI reads them (cli/read_options.h).
LoadOptions LoadOptionsOf(const std::string& unit, const std::string& bvh_translation,
                          const std::string& unit_in, const std::string& up,
                          const std::string& forward, bool isolate) {
  auto bad = [](const std::string& what) { throw py::value_error(what); };
  const auto length = ParseLengthUnit(unit);
  if (!length) bad("unit: expected 'file', 'm' or 'cm', got '" + unit + "'");
  if (!ParseBvhTranslation(bvh_translation)) {
    bad("bvh_translation: expected 'auto', 'add' or 'replace', got '" + bvh_translation + "'");
  }
  std::string unit_error;
  if (!unit_in.empty() && !ParseBvhUnit(unit_in, &unit_error)) bad("unit_in: " + unit_error);
  for (const std::string* axis : {&up, &forward}) {
    if (!axis->empty() && !ParseSignedAxis(*axis)) {
      bad("expected an axis (x, y, z, +x, -y, ...), got '" + *axis + "'");
    }
  }
  cli::ReadArgs args{bvh_translation, unit_in, up, forward};
  LoadOptions options = cli::ApplyReadArgs(args);
  options.unit = *length;
  options.isolate = isolate;
  return options;
}

void DefineScene(py::module_& m) {
  DefineSkeleton(m);
  DefineClip(m);
  DefineMesh(m);
  DefineSceneClass(m);
  DefineLoadSave(m);
}

}  // namespace rigel::python

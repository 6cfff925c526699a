// rigel.forward_kinematics: world positions and rotations of every joint on every frame, computed
// by rigel's own FK (core/pose.h) with the GIL released, frames split over `threads` threads.
#include <algorithm>
#include <functional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "bindings/python/py_module.h"
#include "core/clip.h"
#include "core/pose.h"
#include "core/skeleton.h"

namespace rigel::python {

namespace {

using Values = py::array_t<double, py::array::c_style | py::array::forcecast>;

// FK of frames [begin, end) of `values` (frames x channels) into positions (F x J x 3) and
// rotations (F x J x 9 row-major matrices, or F x J x 4 quaternions x, y, z, w; null: none).
void RunFrames(const Skeleton& skeleton, const double* values, int begin, int end,
               double* positions, double* rotations, bool quaternions) {
  const int joints = skeleton.num_joints();
  const int channels = skeleton.num_channels();
  std::vector<Eigen::Isometry3d> world(joints);
  for (int f = begin; f < end; ++f) {
    ForwardKinematics(
        skeleton,
        std::span<const double>(values + static_cast<std::size_t>(f) * channels, channels), world);
    double* p = positions + static_cast<std::size_t>(f) * joints * 3;
    for (int j = 0; j < joints; ++j) {
      const Eigen::Vector3d t = world[j].translation();
      p[3 * j] = t.x();
      p[3 * j + 1] = t.y();
      p[3 * j + 2] = t.z();
    }
    if (rotations == nullptr) continue;
    const int width = quaternions ? 4 : 9;
    double* r = rotations + static_cast<std::size_t>(f) * joints * width;
    for (int j = 0; j < joints; ++j) {
      const Eigen::Matrix3d m = world[j].linear();
      double* out = r + static_cast<std::size_t>(j) * width;
      if (quaternions) {
        const Eigen::Quaterniond q(m);
        for (int k = 0; k < 4; ++k) out[k] = q.coeffs()[k];
      } else {
        for (int row = 0; row < 3; ++row) {
          for (int col = 0; col < 3; ++col) out[3 * row + col] = m(row, col);
        }
      }
    }
  }
}

// Checks `rotations` and the row width; FK of `frames` rows at `in` (one_frame: a single row,
// returned without the frame axis).
py::tuple ForwardKinematicsOf(const Skeleton& skeleton, const double* in, int frames,
                              py::ssize_t width, bool one_frame, const std::string& rotations,
                              int threads) {
  if (rotations != "matrix" && rotations != "quaternion" && rotations != "none") {
    throw py::value_error("rotations: expected 'matrix', 'quaternion' or 'none', got '" +
                          rotations + "'");
  }
  if (width != skeleton.num_channels()) {
    throw py::value_error("values have " + std::to_string(width) + " channels, the skeleton " +
                          std::to_string(skeleton.num_channels()));
  }
  const py::ssize_t joints = skeleton.num_joints();
  py::array_t<double> positions({py::ssize_t{frames}, joints, py::ssize_t{3}});
  py::array_t<double> rot;
  if (rotations == "matrix") rot = py::array_t<double>({py::ssize_t{frames}, joints, 3l, 3l});
  if (rotations == "quaternion") rot = py::array_t<double>({py::ssize_t{frames}, joints, 4l});
  double* p = positions.mutable_data();
  double* r = rotations == "none" ? nullptr : rot.mutable_data();
  const bool quat = rotations == "quaternion";
  {
    py::gil_scoped_release release;
    const int n =
        std::clamp(threads <= 0 ? static_cast<int>(std::thread::hardware_concurrency()) : threads,
                   1, std::max(1, frames));
    if (n == 1) {
      RunFrames(skeleton, in, 0, frames, p, r, quat);
    } else {
      std::vector<std::thread> pool;
      for (int t = 0; t < n; ++t) {
        const int begin = static_cast<int>(static_cast<long long>(frames) * t / n);
        const int end = static_cast<int>(static_cast<long long>(frames) * (t + 1) / n);
        pool.emplace_back(RunFrames, std::cref(skeleton), in, begin, end, p, r, quat);
      }
      for (std::thread& th : pool) th.join();
    }
  }
  py::object pos = positions;
  py::object rots = rotations == "none" ? py::object(py::none()) : py::object(rot);
  if (one_frame) {
    pos = pos.attr("__getitem__")(0);
    if (!rots.is_none()) rots = rots.attr("__getitem__")(0);
  }
  return py::make_tuple(pos, rots);
}

}  // namespace

void DefineForwardKinematics(py::module_& m) {
  const char* doc =
      "World transforms of every joint on every frame, by rigel's FK (the GIL is released).\n"
      "values: frames x channels float64 (a Clip's .values, or a Clip), or one row.\n"
      "rotations: 'matrix' (F x J x 3 x 3), 'quaternion' (F x J x 4, x y z w) or 'none'.\n"
      "threads: frames are split over this many threads (0: one per core).\n"
      "Returns (positions F x J x 3, rotations); a single row gives J x 3 and J x 3 x 3.\n"
      "Skeletons with scale channels: positions are exact, rotations are the rotation frames "
      "(without the scale).";
  m.def(
      "forward_kinematics",
      [](const Skeleton& skeleton, const Values& values, const std::string& rotations,
         int threads) {
        if (values.ndim() != 1 && values.ndim() != 2) {
          throw py::value_error("values must be frames x channels (or one row of channels)");
        }
        const bool one_frame = values.ndim() == 1;
        return ForwardKinematicsOf(skeleton, values.data(),
                                   one_frame ? 1 : static_cast<int>(values.shape(0)),
                                   values.shape(values.ndim() - 1), one_frame, rotations, threads);
      },
      py::arg("skeleton"), py::arg("values"), py::kw_only(), py::arg("rotations") = "matrix",
      py::arg("threads") = 1, doc);
  m.def(
      "forward_kinematics",
      [](const Skeleton& skeleton, const Clip& clip, const std::string& rotations, int threads) {
        return ForwardKinematicsOf(skeleton, clip.values().data(), clip.num_frames(),
                                   clip.num_channels(), false, rotations, threads);
      },
      py::arg("skeleton"), py::arg("clip"), py::kw_only(), py::arg("rotations") = "matrix",
      py::arg("threads") = 1, doc);
}

}  // namespace rigel::python

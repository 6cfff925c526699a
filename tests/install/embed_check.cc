// Checks the output of samples/embed independently of it, with rigel's reader and FK: the baked
// clip has the input's frame count and skeleton, the hand is on its target (the input's hand
// moved by the offset) on every frame, and joints outside the arm keep their animation.
//   embed_check OUT.bvh IN.bvh HAND ARM DX DY DZ
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "core/pose.h"
#include "importers/load_scene.h"

int main(int argc, char** argv) {
  if (argc != 8) {
    std::fprintf(stderr, "usage: embed_check OUT.bvh IN.bvh HAND ARM DX DY DZ\n");
    return 2;
  }
  try {
    const rigel::Scene out = rigel::LoadScene(argv[1]);
    const rigel::Scene in = rigel::LoadScene(argv[2]);
    const rigel::Skeleton& skeleton = *in.skeleton;
    const Eigen::Vector3d offset(std::atof(argv[5]), std::atof(argv[6]), std::atof(argv[7]));
    const int hand = skeleton.FindJoint(argv[3]);
    const int arm = skeleton.FindJoint(argv[4]);
    int failures = 0;
    auto fail = [&failures](const std::string& what) {
      std::fprintf(stderr, "FAIL: %s\n", what.c_str());
      ++failures;
    };
    if (hand < 0 || arm < 0) fail("no hand or arm joint");
    if (out.clips.size() != 1 || out.clips[0].num_frames() != in.clips[0].num_frames()) {
      fail("frame count: " + std::to_string(out.clips.empty() ? 0 : out.clips[0].num_frames()) +
           " written, " + std::to_string(in.clips[0].num_frames()) + " read");
    }
    if (out.skeleton->num_channels() != skeleton.num_channels() ||
        !std::ranges::equal(out.skeleton->names(), skeleton.names())) {
      fail("skeleton changed");
    }
    if (failures > 0) return 1;
    // Joints whose world position may move: the arm and its descendants.
    std::vector<bool> moves(skeleton.num_joints(), false);
    for (int j = 0; j < skeleton.num_joints(); ++j) {
      for (int a = j; a != rigel::Skeleton::kNoParent; a = skeleton.parent(a)) {
        if (a == arm) moves[j] = true;
      }
    }
    double worst_hand = 0, worst_other = 0;
    rigel::Pose original(skeleton), baked(skeleton);
    for (int f = 0; f < in.clips[0].num_frames(); ++f) {
      original.SetFromRow(skeleton, in.clips[0].frame(f));
      baked.SetFromRow(skeleton, out.clips[0].frame(f));
      const Eigen::Vector3d target = original.world[hand].translation() + offset;
      worst_hand = std::max(worst_hand, (baked.world[hand].translation() - target).norm());
      for (int j = 0; j < skeleton.num_joints(); ++j) {
        if (moves[j]) continue;
        worst_other = std::max(
            worst_other, (baked.world[j].translation() - original.world[j].translation()).norm());
      }
    }
    if (!(worst_hand < 1e-4)) fail("hand off its target by " + std::to_string(worst_hand));
    if (!(worst_other < 1e-9))
      fail("a joint outside the arm moved by " + std::to_string(worst_other));
    std::printf("embed_check: %d frames, hand max error %.3g, other joints max %.3g\n",
                in.clips[0].num_frames(), worst_hand, worst_other);
    return failures > 0 ? 1 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "embed_check: %s\n", e.what());
    return 1;
  }
}

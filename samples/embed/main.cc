// rigel embedded in a C++ program, built against an installed rigel (find_package(rigel)): loads a
// BVH, builds a character rig with one effector (the right hand, moved by a fixed offset from
// where the animation puts it, solved on the arm only), bakes every frame with the core's bake
// loop and saves a BVH. No Lua: the rig a script would declare, built in C++.
//
//   embed IN.bvh OUT.bvh [HAND ARM DX DY DZ]
//   (defaults: RightHand RightArm 0 1.5 1, for the CMU skeleton of samples/cmu_walk/walk.bvh)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "core/ik/bake.h"
#include "core/ik/character_rig.h"
#include "core/pose.h"
#include "exporters/save_scene.h"
#include "importers/load_scene.h"

int main(int argc, char** argv) {
  if (argc != 3 && argc != 8) {
    std::fprintf(stderr, "usage: embed IN.bvh OUT.bvh [HAND ARM DX DY DZ]\n");
    return 2;
  }
  const std::string hand_name = argc == 8 ? argv[3] : "RightHand";
  const std::string arm_name = argc == 8 ? argv[4] : "RightArm";
  const Eigen::Vector3d offset =
      argc == 8 ? Eigen::Vector3d(std::atof(argv[5]), std::atof(argv[6]), std::atof(argv[7]))
                : Eigen::Vector3d(0, 1.5, 1);
  try {
    // rigel::io: any format LoadScene reads; one skeleton, its clips.
    const rigel::Scene scene = rigel::LoadScene(argv[1]);
    const rigel::Skeleton& skeleton = *scene.skeleton;
    const int hand = skeleton.FindJoint(hand_name);
    const int arm = skeleton.FindJoint(arm_name);
    if (hand < 0 || arm < 0) {
      std::fprintf(stderr, "embed: %s: no joint '%s' or '%s'\n", argv[1], hand_name.c_str(),
                   arm_name.c_str());
      return 1;
    }

    // rigel::core: a character rig with one position effector on the hand, solved on the arm's
    // channels only (a stage whose chain starts at the arm).
    rigel::ik::CharacterRig character(scene.skeleton);
    rigel::ik::Task task;
    task.joint = hand;
    character.AddEffector(task);  // named "RightHand"
    rigel::ik::Stage stage;
    stage.chain_root = arm;
    character.rig.stages.push_back(stage);

    // The bake loop: per frame the pose holds the animated row; the callback sets the target
    // (where the animation puts the hand, moved by offset), then the frame is solved, warm-started.
    const rigel::Clip& clip = scene.clips.front();
    rigel::Clip baked;
    rigel::ik::BakeSummary summary;
    rigel::ik::BakeJob job;
    job.character = &character;
    job.clip = &clip;
    job.output = &baked;
    job.summary = &summary;
    job.on_frame = [&](int, rigel::Pose& pose, std::string*) {
      character.targets[0].position = pose.world[hand].translation() + offset;
      return rigel::ik::FrameAction::kSolve;
    };
    if (!job.Run()) {
      std::fprintf(stderr, "embed: %s\n", job.error.c_str());
      return 1;
    }
    const int converged = summary.converged;
    const double worst = summary.residual_max;
    rigel::SaveClip(skeleton, baked, argv[2]);  // atomic; BVH, glTF or FBX by extension
    std::printf("embed: %d frames, %d converged, max position error %.3g, wrote %s\n",
                clip.num_frames(), converged, worst, argv[2]);
    return 0;
  } catch (const std::exception& e) {  // ImportError, ExportError
    std::fprintf(stderr, "embed: %s\n", e.what());
    return 1;
  }
}

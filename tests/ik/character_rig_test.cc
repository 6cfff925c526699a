// ik::CharacterRig: effector names and pole chains derived as rig scripts get them, the errors,
// and a bake of the whole rig (BakeJob::character) equal bit for bit to the same bake wired part
// by part.
#include "core/ik/character_rig.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "core/ik/bake.h"
#include "support/test_skeletons.h"

namespace rigel {
namespace character_rig_test {
namespace {

using C = ChannelType;

// root (translation + ZXY) -> upper (ZXY) -> lower (Y) -> end (ZXY), along +X.
std::shared_ptr<const Skeleton> Limb() {
  return testing::Chain(
      {{C::kXposition, C::kYposition, C::kZposition, C::kZrotation, C::kXrotation, C::kYrotation},
       testing::kZXY,
       {C::kYrotation},
       testing::kZXY},
      {Eigen::Vector3d::Zero(), Eigen::Vector3d(0.1, 0, 0), Eigen::Vector3d(0.3, 0, 0),
       Eigen::Vector3d(0.25, 0, 0)});
}

TEST(CharacterRig, EffectorNamesAndPoleChains) {
  const auto s = Limb();
  ik::CharacterRig character(s);
  ik::Task end;
  end.joint = 3;
  EXPECT_EQ(character.AddEffector(end), 0);
  EXPECT_EQ(character.names[0], s->name(3));
  ik::Task pole = end;
  pole.type = ik::TaskType::kPole;
  EXPECT_EQ(character.AddEffector(pole), 1);
  EXPECT_EQ(character.names[1], s->name(3) + ".pole");
  // The pole's chain: the end joint's grandparent (root) and parent (mid).
  EXPECT_EQ(character.rig.tasks[1].pole_mid, 2);
  EXPECT_EQ(character.rig.tasks[1].pole_root, 1);
  EXPECT_EQ(character.targets.size(), 2u);
  EXPECT_EQ(character.FindEffector(s->name(3) + ".pole"), 1);
  EXPECT_EQ(character.FindEffector("nothing"), -1);

  std::string error;
  EXPECT_EQ(character.AddEffector(end, {}, "", &error), -1);  // the derived name is taken
  EXPECT_NE(error.find("already exists"), std::string::npos) << error;
  EXPECT_EQ(character.AddEffector(end, {}, "second", &error), 2);
  ik::Task bad_pole = pole;
  bad_pole.pole_root = 3;  // below the mid joint
  bad_pole.pole_mid = 2;
  EXPECT_EQ(character.AddEffector(bad_pole, {}, "bad", &error), -1);
  EXPECT_NE(error.find("ancestors"), std::string::npos) << error;
  ik::Task off = end;
  off.joint = 9;
  EXPECT_EQ(character.AddEffector(off, {}, "off", &error), -1);
  EXPECT_NE(error.find("not a joint"), std::string::npos) << error;
  EXPECT_EQ(character.rig.tasks.size(), 3u);
  EXPECT_EQ(character.names.size(), 3u);
}

TEST(CharacterRig, BakeOfTheWholeRigEqualsTheBakeWiredByParts) {
  const auto s = Limb();
  Clip clip(20, s->num_channels(), 1.0 / 30);
  for (int f = 0; f < clip.num_frames(); ++f) {
    clip.at(f, 0) = 0.01 * f;
    clip.at(f, 6) = 0.3 + 0.02 * f;
    clip.at(f, 10) = 0.5;
  }
  const auto goal = [&](int f) { return Eigen::Vector3d(0.45, 0.15 + 0.005 * f, 0.1); };
  ik::Task end;
  end.joint = 3;

  ik::CharacterRig character(s);
  character.AddEffector(end);
  Clip whole;
  ik::BakeSummary whole_summary;
  ik::BakeJob job;
  job.character = &character;
  job.clip = &clip;
  job.output = &whole;
  job.summary = &whole_summary;
  job.on_frame = [&](int f, Pose&, std::string*) {
    character.targets[0].position = goal(f);
    return ik::FrameAction::kSolve;
  };
  ASSERT_TRUE(job.Run()) << job.error;

  ik::Rig rig(s);
  rig.AddTask(end);
  std::vector<ik::Target> targets(1);
  ik::Workspace workspace;
  Clip parts;
  ik::BakeSummary parts_summary;
  ik::BakeJob by_parts;
  by_parts.rig = &rig;
  by_parts.targets = &targets;
  by_parts.workspace = &workspace;
  by_parts.clip = &clip;
  by_parts.output = &parts;
  by_parts.summary = &parts_summary;
  by_parts.on_frame = [&](int f, Pose&, std::string*) {
    targets[0].position = goal(f);
    return ik::FrameAction::kSolve;
  };
  ASSERT_TRUE(by_parts.Run()) << by_parts.error;
  ASSERT_EQ(whole.num_frames(), parts.num_frames());
  for (int f = 0; f < whole.num_frames(); ++f) {
    for (int c = 0; c < whole.num_channels(); ++c) EXPECT_EQ(whole.at(f, c), parts.at(f, c));
  }
  EXPECT_EQ(whole_summary.converged, parts_summary.converged);
  EXPECT_GT(whole_summary.converged, 0);
  // The last frame's report is the character's own.
  EXPECT_EQ(character.report.status, ik::Status::kConverged);

  // A part given beside the whole rig is refused, naming the rule.
  job.rig = &rig;
  EXPECT_FALSE(job.Validate());
  EXPECT_NE(job.error.find("takes its rig"), std::string::npos) << job.error;
  EXPECT_FALSE(job.Run());
}

}  // namespace
}  // namespace character_rig_test
}  // namespace rigel

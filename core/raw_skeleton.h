// RawSkeleton: the editable joint tree importers fill and SkeletonBuilder turns into a Skeleton.
#ifndef RIGEL_CORE_RAW_SKELETON_H_
#define RIGEL_CORE_RAW_SKELETON_H_

#include <Eigen/Geometry>
#include <string>
#include <vector>

#include "core/channel.h"

namespace rigel {

struct RawSkeleton {
  struct Joint {
    // Unique, non-empty name.
    std::string name;
    // Rest translation in the parent's space (BVH OFFSET).
    Eigen::Vector3d rest_translation = Eigen::Vector3d::Zero();
    // Rest orientation in the parent's space, applied before the channel rotations (FBX
    // pre-rotation / Maya joint orient). Identity for BVH. Must be unit length.
    Eigen::Quaterniond rest_orientation = Eigen::Quaterniond::Identity();
    // Channel layout exactly as the file lists it: any subset of the nine channels (six BVH
    // ones and three scale channels), any order, each at most once.
    std::vector<ChannelType> channels;
    // How the file states the position channels (see TranslationMode); only the BVH writer reads
    // it. Channel values in a Clip are always deltas added to rest_translation.
    TranslationMode translation_mode = TranslationMode::kAdd;
    // How the joint inherits its parent's scale (FBX InheritType; FK reads it).
    ScaleInheritance scale_inheritance = ScaleInheritance::kInherit;
    // BVH "End Site" offsets (joint space) following this joint; kept so exporters write them back.
    std::vector<Eigen::Vector3d> end_sites;
    // Their names (EndSite::name), parallel to end_sites; empty when none is named.
    std::vector<std::string> end_site_names;
    std::vector<Joint> children;
  };

  // Root joints, in file order. BVH files usually have one.
  std::vector<Joint> roots;

  // Number of joints in the whole tree (end sites not counted).
  int num_joints() const;
};

}  // namespace rigel

#endif  // RIGEL_CORE_RAW_SKELETON_H_

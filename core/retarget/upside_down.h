// Is a humanoid upside down in its file's frame? Some capture systems write their camera's axes
// (Azure Kinect: +Y points down), so the figure's head is below its feet in every frame. Readers
// that do not know the file's up axis (BVH) use this to say so; it is independent of how the up
// axis is otherwise inferred.
#ifndef RIGEL_CORE_RETARGET_UPSIDE_DOWN_H_
#define RIGEL_CORE_RETARGET_UPSIDE_DOWN_H_

#include <string>

namespace rigel {
class Clip;
class Skeleton;
}  // namespace rigel

namespace rigel::retarget {

struct UpsideDown {
  // 0, 1, 2: the file axis (x, y, z) that points from the head down to the feet on every frame;
  // -1 when there is none (the figure stands on some axis's positive side at least once, or the
  // skeleton has no head or no foot to judge by).
  int axis = -1;
  int frames = 0;            // frames judged (all of the clip's)
  std::string head, feet;    // the joints judged by ("Head"; "LeftFoot, RightFoot")
  double least_depth = 0.0;  // smallest head-below-feet distance along `axis` over the frames
};

// The head (ClassifyHumanoid's head, else its neck) and the feet (feet, else toes; their mean
// when there are two) on every frame of `clip` by forward kinematics: an axis a is "down" when on
// every frame the head-minus-feet vector's largest component is along a and negative. Stops at
// the first frame where no axis is down, so a figure that stands right costs one frame.
UpsideDown FindUpsideDown(const Skeleton& skeleton, const Clip& clip);

}  // namespace rigel::retarget

#endif  // RIGEL_CORE_RETARGET_UPSIDE_DOWN_H_

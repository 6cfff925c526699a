#include "core/euler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace rigel {
namespace {

constexpr EulerOrder kOrders[] = {EulerOrder::kXYZ, EulerOrder::kXZY, EulerOrder::kYXZ,
                                  EulerOrder::kYZX, EulerOrder::kZXY, EulerOrder::kZYX};

TEST(Euler, NamesParseAndAxes) {
  for (const EulerOrder o : kOrders) {
    EXPECT_EQ(ParseEulerOrder(EulerOrderName(o)), o);
    const auto a = EulerAxes(o);
    EXPECT_EQ(EulerOrderFromAxes(a), o);
  }
  EXPECT_EQ(ParseEulerOrder("zxy"), EulerOrder::kZXY);
  EXPECT_FALSE(ParseEulerOrder("XXY"));
  EXPECT_FALSE(ParseEulerOrder("XY"));
  EXPECT_FALSE(ParseEulerOrder("ABC"));
}

// The product is in listed order: ZXY means Rz * Rx * Ry (last axis acts first on a vector).
TEST(Euler, ProductOrderGolden) {
  const Eigen::Vector3d xyz(0.3, -0.7, 1.1);
  const Eigen::Matrix3d expected =
      Eigen::AngleAxisd(1.1, Eigen::Vector3d::UnitZ()) *
      Eigen::AngleAxisd(0.3, Eigen::Vector3d::UnitX()) *
      Eigen::AngleAxisd(-0.7, Eigen::Vector3d::UnitY()).toRotationMatrix();
  EXPECT_TRUE(EulerToMatrix(EulerOrder::kZXY, xyz).isApprox(expected, 1e-15));
  // A 90 degree turn about Z then X: (1,0,0) -> Rz(90) * Rx(90) * (1,0,0) = (0,1,0).
  const Eigen::Vector3d v = EulerToMatrix(EulerOrder::kZXY, Eigen::Vector3d(kPi / 2, 0, kPi / 2)) *
                            Eigen::Vector3d::UnitX();
  EXPECT_LT((v - Eigen::Vector3d::UnitY()).norm(), 1e-15);
  EXPECT_TRUE(
      EulerToQuaternion(EulerOrder::kZXY, xyz).toRotationMatrix().isApprox(expected, 1e-14));
}

TEST(Euler, RoundTripAllOrdersRandom) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-kPi, kPi);
  std::uniform_real_distribution<double> half(-kPi / 2 + 1e-3, kPi / 2 - 1e-3);
  for (const EulerOrder o : kOrders) {
    const auto a = EulerAxes(o);
    for (int n = 0; n < 2000; ++n) {
      Eigen::Vector3d xyz;
      xyz[a[0]] = u(rng);
      xyz[a[1]] = half(rng);
      xyz[a[2]] = u(rng);
      const Eigen::Matrix3d r = EulerToMatrix(o, xyz);
      const Eigen::Vector3d back = MatrixToEuler(r, o);
      EXPECT_LT((back - xyz).cwiseAbs().maxCoeff(), 1e-9)
          << EulerOrderName(o) << " " << xyz.transpose() << " -> " << back.transpose();
      EXPECT_TRUE(EulerToMatrix(o, back).isApprox(r, 1e-12));
    }
  }
}

TEST(Euler, GimbalLockReproducesRotation) {
  for (const EulerOrder o : kOrders) {
    const auto a = EulerAxes(o);
    for (const double middle : {kPi / 2, -kPi / 2}) {
      for (const double first : {-2.0, 0.0, 0.4, 3.0}) {
        for (const double last : {-1.0, 0.0, 0.25}) {
          Eigen::Vector3d xyz;
          xyz[a[0]] = first;
          xyz[a[1]] = middle;
          xyz[a[2]] = last;
          const Eigen::Matrix3d r = EulerToMatrix(o, xyz);
          const Eigen::Vector3d back = MatrixToEuler(r, o);
          EXPECT_TRUE(EulerToMatrix(o, back).isApprox(r, 1e-9))
              << EulerOrderName(o) << " locked at " << middle;
          EXPECT_NEAR(std::abs(back[a[1]]), kPi / 2, 1e-6);
          // Continuity version: previous = the exact angles; it must give them back.
          const Eigen::Vector3d near = MatrixToEulerNear(r, o, xyz);
          EXPECT_TRUE(EulerToMatrix(o, near).isApprox(r, 1e-9));
          EXPECT_LT((near - xyz).cwiseAbs().maxCoeff(), 1e-6)
              << EulerOrderName(o) << ": " << near.transpose() << " vs " << xyz.transpose();
        }
      }
    }
  }
}

// A rotation spinning continuously past 180 degrees decomposes without 360 degree jumps.
TEST(Euler, ContinuityThroughManyTurns) {
  for (const EulerOrder o : kOrders) {
    const auto a = EulerAxes(o);
    Eigen::Vector3d previous = Eigen::Vector3d::Zero();
    for (int f = 0; f <= 720; ++f) {
      Eigen::Vector3d truth;
      truth[a[0]] = 0.02 * f;  // three and more turns
      truth[a[1]] = 0.5 * std::sin(0.01 * f);
      truth[a[2]] = -0.015 * f;
      const Eigen::Quaterniond q = EulerToQuaternion(o, truth);
      const Eigen::Vector3d got = QuaternionToEulerNear(q, o, previous);
      EXPECT_LT((got - truth).cwiseAbs().maxCoeff(), 1e-9) << EulerOrderName(o) << " frame " << f;
      EXPECT_LT((got - previous).cwiseAbs().maxCoeff(), 0.1) << "jump at frame " << f;
      previous = got;
    }
  }
}

// The flipped solution (a+pi, pi-b, c+pi) is chosen when it is nearer the previous frame.
TEST(Euler, ContinuityPicksFlippedSolution) {
  const EulerOrder o = EulerOrder::kZYX;
  const auto a = EulerAxes(o);
  Eigen::Vector3d truth;
  truth[a[0]] = 3.0;
  truth[a[1]] = 2.0;  // beyond 90 degrees: MatrixToEuler returns the other branch
  truth[a[2]] = -3.0;
  const Eigen::Matrix3d r = EulerToMatrix(o, truth);
  const Eigen::Vector3d plain = MatrixToEuler(r, o);
  EXPECT_GT((plain - truth).cwiseAbs().maxCoeff(), 0.5);
  const Eigen::Vector3d near = MatrixToEulerNear(r, o, truth + Eigen::Vector3d::Constant(0.01));
  EXPECT_LT((near - truth).cwiseAbs().maxCoeff(), 1e-9);
}

TEST(Euler, WrapNear) {
  EXPECT_NEAR(WrapNear(-kPi + 0.1, kPi), kPi + 0.1, 1e-12);
  EXPECT_NEAR(WrapNear(0.5, 4 * kPi), 4 * kPi + 0.5, 1e-12);
  EXPECT_NEAR(WrapNear(0.5, 0.0), 0.5, 0);
}

TEST(Euler, EulerNearestKeepsTheRotationAndFollowsThePreviousKey) {
  std::mt19937 rng(12);
  std::uniform_real_distribution<double> angle(-4 * kPi, 4 * kPi);
  for (int i = 0; i < 6; ++i) {
    const EulerOrder o = static_cast<EulerOrder>(i);
    for (int n = 0; n < 200; ++n) {
      const Eigen::Vector3d xyz(angle(rng), angle(rng), angle(rng));
      const Eigen::Vector3d previous(angle(rng), angle(rng), angle(rng));
      const Eigen::Vector3d near = EulerNearest(o, xyz, previous);
      // Same rotation, every angle within pi of the previous key's.
      EXPECT_LT((EulerToMatrix(o, near) - EulerToMatrix(o, xyz)).cwiseAbs().maxCoeff(), 1e-9);
      for (int k = 0; k < 3; ++k) EXPECT_LE(std::abs(near[k] - previous[k]), kPi + 1e-12);
      // Nothing nearer among the two solutions shifted by whole turns (a brute-force search).
      const auto a = EulerAxes(o);
      double best = INFINITY;
      for (int s = 0; s < 2; ++s) {
        Eigen::Vector3d base = xyz;
        if (s) {
          base[a[0]] += kPi;
          base[a[1]] = kPi - base[a[1]];
          base[a[2]] += kPi;
        }
        for (int t0 = -6; t0 <= 6; ++t0)
          for (int t1 = -6; t1 <= 6; ++t1)
            for (int t2 = -6; t2 <= 6; ++t2) {
              const Eigen::Vector3d c = base + 2 * kPi * Eigen::Vector3d(t0, t1, t2);
              best = std::min(best, (c - previous).squaredNorm());
            }
      }
      EXPECT_LE((near - previous).squaredNorm(), best + 1e-9);
    }
  }
  // A triple already nearest comes back bit for bit.
  const Eigen::Vector3d xyz(0.1234567890123, -0.3, 2.9);
  EXPECT_EQ(EulerNearest(EulerOrder::kZXY, xyz, Eigen::Vector3d(0.1, -0.2, 2.8)), xyz);
  // A BVH hip turning through 180 degrees: -178 after 179 becomes 182.
  const Eigen::Vector3d turned =
      EulerNearest(EulerOrder::kZXY, Eigen::Vector3d(0, -178, 0) * kRadPerDeg,
                   Eigen::Vector3d(0, 179, 0) * kRadPerDeg);
  EXPECT_NEAR(turned.y() * kDegPerRad, 182.0, 1e-9);
  EXPECT_NEAR(turned.x(), 0.0, 1e-12);
}

}  // namespace
}  // namespace rigel

#include "importers/scene_facts.h"

#include <fmt/format.h>

#include "core/body.h"

namespace rigel {

namespace {

bool Known(const AxisFact& f) {
  return f.source == FactSource::kStated || f.source == FactSource::kUser;
}

// The stated or given up axis checked against a humanoid body.
void CheckStatedUp(Scene& scene, const BodyMeasure& m, const BodyMeasure& free) {
  const std::string up = SignedAxisName(scene.axes.up.value);
  if (m.upside_down) {
    scene.warnings.push_back(fmt::format(
        "{}: the figure stands upside down along {} up ({}): its head is below its feet in "
        "every one of {} frames sampled; --up {} reads it the other way up",
        scene.source, up, FactSourceText(scene.axes.up.source), m.frames,
        SignedAxisName({scene.axes.up.value.axis, -scene.axes.up.value.sign})));
  } else if (free.up_decided && free.up.axis != scene.axes.up.value.axis) {
    scene.warnings.push_back(fmt::format(
        "{}: the axes say {} up ({}: {}), but the body stands along {}: {}; the axes are kept "
        "(--up {} to read it as the body stands)",
        scene.source, up, FactSourceText(scene.axes.up.source), scene.axes.up.evidence,
        SignedAxisName(free.up), free.evidence, SignedAxisName(free.up)));
  }
}

void InferUp(Scene& scene, const BodyMeasure& free) {
  AxisFact& up = scene.axes.up;
  if (!free.up_decided) {
    // The body does not decide (not a humanoid): the reading every BVH reader takes (Blender,
    // three.js, MotionBuilder: +Y up), not a guess from the extent, which laid a long animal or
    // a prop on its side. The extent's suggestion is said.
    up = {{1, 1},
          FactSource::kUnknown,
          "the data do not decide; +Y up, as BVH readers take it (" + free.evidence + ")"};
    scene.warnings.push_back(fmt::format(
        "{}: the file does not state its up axis and the body does not decide it (not a "
        "humanoid): +Y up assumed, as BVH readers take it; its extent suggests {} ({}) (--up to "
        "state it)",
        scene.source, SignedAxisName(free.up), free.evidence));
    return;
  }
  up.value = free.up;
  up.source = FactSource::kInferred;
  up.evidence = free.evidence;
  const std::string down =
      free.up.sign < 0
          ? fmt::format(" (the file's +{} points down: the head is below the feet along it)",
                        static_cast<char>('X' + free.up.axis))
          : "";
  scene.warnings.push_back(fmt::format(
      "{}: the file does not state its up axis; inferred {} up from the body{}: {} (--up to "
      "state it)",
      scene.source, SignedAxisName(free.up), down, up.evidence));
}

void InferForward(Scene& scene, const BodyMeasure& m) {
  AxisFact& forward = scene.axes.forward;
  const SignedAxis up = scene.axes.up.value;
  if (m.forward && m.forward->axis != up.axis) {
    forward = {*m.forward, FactSource::kInferred,
               "the figure faces it (left and right hips and shoulders)"};
  } else {
    forward = {DefaultForward(up), FactSource::kUnknown,
               "the body does not show which way it faces; the usual forward for this up axis"};
  }
}

void CheckHeight(Scene& scene, const BodyMeasure& m) {
  if (!m.humanoid || !(m.height > 0)) return;
  const double unit = MetresPerUnitOrEstimate(scene);
  if (!(unit > 0)) return;
  const double metres = m.height * unit;
  if (metres >= kMinHumanHeightMetres && metres <= kMaxHumanHeightMetres) return;
  const bool stated = scene.file_unit_metres > 0;
  scene.warnings.push_back(fmt::format(
      "{}: implausible human: the figure stands {:.3g} m tall ({:.4g} units x {:g} m per unit, "
      "{}; head over feet, bones head-hips-foot {:.4g} units); a human stands {:g} to {:g} m: "
      "the {} unit is probably wrong (--unit-in to state it)",
      scene.source, metres, m.height, unit, stated ? "the unit the file states" : "estimated unit",
      m.chain_height, kMinHumanHeightMetres, kMaxHumanHeightMetres,
      stated ? "stated" : "estimated"));
}

}  // namespace

void ResolveSceneFacts(Scene& scene, const AxesOverride& given) {
  SceneAxes& axes = scene.axes;
  if (given.up) axes.up = {*given.up, FactSource::kUser, "--up"};
  if (given.forward) axes.forward = {*given.forward, FactSource::kUser, "--forward"};
  if (!scene.skeleton) return;
  const Clip* clip = scene.clips.empty() ? nullptr : &scene.clips.front();
  const BodyMeasure free = MeasureBody(*scene.skeleton, clip);
  BodyMeasure m = free;
  if (Known(axes.up)) {
    m = MeasureBody(*scene.skeleton, clip, axes.up.value);
    if (m.humanoid) CheckStatedUp(scene, m, free);
  } else {
    InferUp(scene, free);
  }
  if (!Known(axes.forward)) {
    if (m.up != free.up) m = MeasureBody(*scene.skeleton, clip, axes.up.value);
    InferForward(scene, m);
  }
  CheckHeight(scene, m);
}

}  // namespace rigel

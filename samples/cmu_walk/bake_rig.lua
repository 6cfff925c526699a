-- The cmu_walk rig in the form `rigel bake` runs: a function called once per clip.
-- Feet pinned during detected contacts with two-bone IK (pole from the knee's own bend), the
-- right hand following a target circling in front of the chest.
--
-- usage: rigel bake --rig samples/cmu_walk/bake_rig.lua --out out/baked CLIPS...
--        (any clip on the CMU cgspeed skeleton: samples/cmu_walk/walk.bvh, 01_01.bvh, ...)
local rigel = require("rigel")
local names = require("names")
local limbs = require("limbs")

return function(scene, clip, ctx)
  local skeleton = clip.skeleton
  local j = names.resolve(skeleton, "cmu", true)  -- canonical key -> CMU joint name

  local rig = rigel.rig(skeleton)
  local legs = limbs.pinned_legs(rig, clip, j)
  rig:limit(j.right_forearm, "Yrotation", -150, 150)
  local hand = limbs.arm_chain(rig, { shoulder = j.right_arm, hand = j.right_hand })

  return rig:bake(clip, function(frame, pose)
    limbs.pin_legs(legs, pose, frame)  -- planted: the contact's pin; free: the animated position
    local t = (frame - 1) * clip.frame_time
    local chest = pose:world_position(j.spine2)
    hand:set(chest + rigel.vec3(-3 + 1.5 * math.cos(2 * math.pi * t), 1.5 * math.sin(2 * math.pi * t), 6))
  end)
end

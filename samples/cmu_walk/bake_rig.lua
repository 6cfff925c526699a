-- The cmu_walk rig in the form `rigel bake` runs: a function called once per clip.
-- Feet pinned during detected contacts with two-bone IK (pole from the knee's own bend), the
-- right hand following a target circling in front of the chest.
--
-- usage: rigel bake --rig samples/cmu_walk/bake_rig.lua --out out/baked CLIPS...
--        (any clip on the CMU cgspeed skeleton: samples/cmu_walk/walk.bvh, 01_01.bvh, ...)
local rigel = require("rigel")
local names = require("names")
local contact = require("contact")
local limbs = require("limbs")

return function(scene, clip, ctx)
  local skeleton = clip.skeleton
  local j = names.resolve(skeleton, "cmu", true)  -- canonical key -> CMU joint name

  local rig = rigel.rig(skeleton)
  local legs = {}
  for _, side in ipairs({ "left", "right" }) do
    local foot = j[side .. "_foot"]
    local leg = limbs.two_bone_leg(rig, { hip = j[side .. "_upleg"], knee = j[side .. "_leg"],
      ankle = foot })
    leg.pins = contact.pins(clip, foot, (contact.detect(clip, foot)))
    leg.foot = foot
    legs[#legs + 1] = leg
  end
  rig:limit(j.right_forearm, "Yrotation", -150, 150)
  local hand = limbs.arm_chain(rig, { shoulder = j.right_arm, hand = j.right_hand })

  return rig:bake(clip, function(frame, pose)
    for _, leg in ipairs(legs) do
      -- Planted: hold the contact's mean position. Free: keep the animated position.
      leg:set(pose, leg.pins[frame] or pose:world_position(leg.foot))
    end
    local t = (frame - 1) * clip.frame_time
    local chest = pose:world_position(j.spine2)
    hand:set(chest + rigel.vec3(-3 + 1.5 * math.cos(2 * math.pi * t), 1.5 * math.sin(2 * math.pi * t), 6))
  end)
end

-- Per-character rig for the CMU cgspeed skeleton: feet pinned during detected contacts with
-- two-bone IK (pole from the knee's own bend), the right hand reaching a target circling in front
-- of the chest, baked to BVH.
--
-- usage: rigel run samples/cmu_walk/rig.lua IN.bvh [OUT.bvh] [--out DIR]
--        (OUT defaults to <--out>/walk_rigged.bvh)
local rigel = require("rigel")
local names = require("names")
local contact = require("contact")
local limbs = require("limbs")

local input = arg[1] or error("usage: rigel run rig.lua IN.bvh [OUT.bvh]", 0)
local output = arg[2] or ((arg.out or ".") .. "/walk_rigged.bvh")

local clip = rigel.load(input):clip()
local skeleton = clip.skeleton
local j = names.resolve(skeleton, "cmu", true)  -- canonical key -> CMU joint name

local rig = rigel.rig(skeleton)
local legs = limbs.pinned_legs(rig, clip, j)
for _, leg in ipairs(legs) do
  print(("%s: %d contact(s)"):format(leg.foot, #contact.intervals(leg.flags)))
end
rig:limit(j.right_forearm, "Yrotation", -150, 150)
local hand = limbs.arm_chain(rig, { shoulder = j.right_arm, hand = j.right_hand })

local baked, summary = rig:bake(clip, function(frame, pose)
  limbs.pin_legs(legs, pose, frame)  -- planted: the contact's pin; free: the animated position
  local t = (frame - 1) * clip.frame_time
  local chest = pose:world_position(j.spine2)
  hand:set(chest + rigel.vec3(-3 + 1.5 * math.cos(2 * math.pi * t), 1.5 * math.sin(2 * math.pi * t), 6))
end)
baked:save(output)

-- Check the result by FK: planted feet stay on their pins, the hand reaches its target.
local worst_before, worst_after = 0, 0
for _, leg in ipairs(legs) do
  for f, pin in pairs(leg.pins) do
    worst_before = math.max(worst_before, leg.positions[f]:distance(pin))
    worst_after = math.max(worst_after, baked:pose(f):world_position(leg.foot):distance(pin))
  end
end
print(("frames %d: converged %d, not converged %d, unreachable %d, iterations %d"):format(
  summary.frames, summary.converged, summary.not_converged, summary.unreachable, summary.iterations))
print(("foot slide during contacts: %.4f before, %.6f after"):format(worst_before, worst_after))
print(("largest residual %.2e (frame %d)"):format(summary.max_position_error, summary.worst_frame))
print("wrote " .. output)
local _, height = contact.up_axis(clip)
assert(worst_after < 1e-3 * height, "feet are not pinned")
assert(summary.max_position_error < 1e-3 * height, "a target was missed")

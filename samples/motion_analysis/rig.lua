-- The same foot-pinning rig on a skeleton with other joint names (Motion Analysis / EVaRT:
-- LeftHip/LeftKnee/LeftAnkle, centimetres, 100 fps), written once against canonical names
-- through the `names` map: the convention is detected from the skeleton. The first 2 seconds of
-- the clip are used.
--
-- usage: rigel run --out DIR samples/motion_analysis/rig.lua ../shared/data/assimp_misc/Boxing_Toes.bvh
local rigel = require("rigel")
local names = require("names")
local contact = require("contact")
local limbs = require("limbs")

local input = arg[1] or error("usage: rigel run rig.lua IN.bvh [OUT.bvh]", 0)
local output = arg[2] or ((arg.out or ".") .. "/boxing_rigged.bvh")

local clip = rigel.load(input):clip()
clip = clip:slice(1, math.min(clip.num_frames, math.floor(2 / clip.frame_time) + 1))
local j, convention = names.resolve(clip.skeleton)
print(("naming convention: %s (up axis %s)"):format(convention, contact.up_axis(clip)))

local rig = rigel.rig(clip.skeleton)
local legs = limbs.pinned_legs(rig, clip, j)
for _, leg in ipairs(legs) do
  print(("%s: %d contact(s)"):format(leg.foot, #contact.intervals(leg.flags)))
end

local baked, summary = rig:bake(clip, function(frame, pose)
  limbs.pin_legs(legs, pose, frame)
end)
baked:save(output)

local worst = 0
for _, leg in ipairs(legs) do
  for f, pin in pairs(leg.pins) do
    worst = math.max(worst, baked:pose(f):world_position(leg.foot):distance(pin))
  end
end
print(("frames %d, converged %d; planted feet within %.2e of their pins"):format(summary.frames,
  summary.converged, worst))
print("wrote " .. output)
-- Pins a fully stretched leg cannot reach are missed by the stretch left over: allow 0.1 % of
-- the figure's height (1.6 mm on this 1.6 m boxer).
local _, height = contact.up_axis(clip)
assert(worst < 1e-3 * height, "feet are not pinned")

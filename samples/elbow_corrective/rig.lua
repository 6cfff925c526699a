-- A driver: the elbow's bend drives a corrective blend shape. The arm of arm.gltf bends its elbow
-- from 0 to 120 degrees; its shape "ElbowCorrective" (which thickens the elbow against the
-- skinning's collapse) is keyed on every frame at bend / 120 degrees (0 straight, 1 fully bent),
-- and the baked clip is written with the arm's mesh and the shape's animated weight.
--
-- usage: rigel run samples/elbow_corrective/rig.lua samples/elbow_corrective/arm.gltf [OUT.glb]
local rigel = require("rigel")

local input = arg[1] or error("usage: rigel run rig.lua arm.gltf [OUT.glb]", 0)
local output = arg[2] or ((arg.out or ".") .. "/arm_corrected.glb")
local scene = rigel.load(input)
local clip = scene:clip()
local rig = rigel.rig(clip.skeleton)  -- no effector: the pose passes through, only keyed

-- The angle between the upper arm and the forearm, in degrees (0 = straight).
local function bend(pose)
  local shoulder = pose:world_position("Shoulder")
  local elbow = pose:world_position("Elbow")
  local wrist = pose:world_position("Wrist")
  local upper = (elbow - shoulder):normalized()
  local fore = (wrist - elbow):normalized()
  return math.deg(math.acos(math.max(-1, math.min(1, upper:dot(fore)))))
end

local baked = rig:bake(clip, function(frame, pose)
  local weight = math.max(0, math.min(1, bend(pose) / 120))
  pose:set_weight("Arm", "ElbowCorrective", weight)
  return false  -- nothing to solve: keep the clip's pose
end)

print("frame  bend(deg)  ElbowCorrective")
for f = 1, baked.num_frames, 5 do
  local pose = baked:pose(f)
  print(("%5d %10.2f %16.4f"):format(f, bend(pose), pose:weight("Arm", "ElbowCorrective")))
end
local last = baked:pose(baked.num_frames)
assert(math.abs(last:weight("Arm", "ElbowCorrective") - 1) < 1e-5, "fully bent: weight 1")
assert(baked:weight(1, "Arm", "ElbowCorrective") == 0, "straight: weight 0")
scene:save(output, baked)
print(("wrote %s: %d frames, ElbowCorrective from %.4f to %.4f"):format(output, baked.num_frames,
  baked:weight(1, nil, "ElbowCorrective"), baked:weight(baked.num_frames, nil, "ElbowCorrective")))

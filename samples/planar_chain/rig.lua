-- Seed 002's worked example in Lua: a planar chain of links 15, 10, 5 starts at
-- (22.5, 45, 45) degrees; its tip follows 21 goals on the line to (-20, 5). Prints the joint
-- angles per frame.
--
-- usage: rigel run samples/planar_chain/rig.lua samples/planar_chain/planar.bvh [METHOD]
local rigel = require("rigel")

local clip = rigel.load(arg[1] or error("usage: rigel run rig.lua planar.bvh [METHOD]", 0)):clip()
local rig = rigel.rig(clip.skeleton)
local tip = rig:effector("Outer", { end_site = true, axes = "xy" })  -- planar: X and Y only
rig:stage({ method = arg[2] or "dls_adaptive", max_iterations = 20000, stall_iterations = 50,
  stall_fraction = 0 })

local start = clip:pose(1):end_position("Outer")
local goal = rigel.vec3(-20, 5, 0)
print("frame   base  middle   outer   tip")
local baked, summary = rig:bake(clip, function(frame)
  rig:target(tip, start:lerp(goal, (frame - 1) / (clip.num_frames - 1)))
end)
for f = 1, baked.num_frames do
  local pose = baked:pose(f)
  local p = pose:end_position("Outer")
  print(("%5d %7.2f %7.2f %7.2f   (%.4f, %.4f)"):format(f, pose:get("Base", "Zrotation"),
    pose:get("Middle", "Zrotation"), pose:get("Outer", "Zrotation"), p.x, p.y))
end
print(("%d/%d frames converged, largest residual %.2e"):format(summary.converged,
  summary.frames, summary.max_position_error))
assert(summary.converged == summary.frames, "every goal is reachable")
if arg.out then baked:save(arg.out .. "/planar_solved.bvh") end

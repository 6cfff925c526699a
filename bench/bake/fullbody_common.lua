-- The full-body rig of the bake benchmark (fullbody_rig.lua), shared with its targets-only twin
-- (fullbody_targets_rig.lua, which runs the same per-frame Lua callback but skips the solve, so
-- the benchmark can split a bake's script time into the Lua callback and the solver).
-- On the 31-joint CMU cgspeed skeleton: four six-D effectors (both hands and feet: position and
-- orientation) solved together by adaptive damped least squares over the whole body (root
-- translation and rotation, spine, arms, legs). Targets follow the clip's own hands and feet,
-- displaced by a few centimetres that move every frame, so every frame needs a real solve.
local rigel = require("rigel")

return function(clip, solve)
  local rig = rigel.rig(clip.skeleton)
  local ends = { "LeftHand", "RightHand", "LeftFoot", "RightFoot" }
  local effectors = {}
  for i, j in ipairs(ends) do effectors[i] = rig:effector(j, { type = "both" }) end
  rig:limit("LeftLeg", "Xrotation", -5, 170)
  rig:limit("RightLeg", "Xrotation", -5, 170)
  rig:stage({ method = "dls_adaptive", max_iterations = 30, tolerance = 1e-4,
              angle_tolerance = 0.05 })
  local dt = clip.frame_time
  return rig:bake(clip, function(frame, pose)
    local t = (frame - 1) * dt
    for i, j in ipairs(ends) do
      local p = pose:world_position(j)
      local d = rigel.vec3(0.3 * math.sin(2 * t + i), 0.2 * math.cos(3 * t + i), 0.3 * math.sin(t + 2 * i))
      rig:target(effectors[i], p + d, pose:world_rotation(j))
    end
    if not solve then return false end
  end)
end

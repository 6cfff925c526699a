-- prop_and_feet: a per-character rig for the CMU skeleton with the joints a production rig adds
-- (walk_prop.bvh, made by make_clip.py), in the form `rigel bake --rig` runs:
--  * a prop parented to the right hand, switched to the left hand at frame 20 (the prop's world
--    transform stays continuous at the switch);
--  * both feet on foot-roll rigs: the leg's goal is the animated (planted) ankle, rolled by a
--    keyed roll curve over the heel, the ball and the toe tip, the toes turned to stay down;
--  * the right forearm's twist shared over two roll bones (33 % and 66 %);
--  * the head aiming at a moving point (LookAt) with its up axis towards the world up.
-- usage: rigel bake --rig samples/prop_and_feet/rig.lua --out out samples/prop_and_feet/walk_prop.bvh
-- check: rigel run samples/prop_and_feet/check.lua out/walk_prop.bvh samples/prop_and_feet/walk_prop.bvh
local rigel = require("rigel")

-- Foot pivots in the ankle's frame (CMU: Y up, Z forward at rest), from the skeleton: the ball
-- is the toe joint, the toe tip its end site, the heel behind the ankle on the sole's level.
local function pivots(skeleton, toe, side)
  local ball = skeleton:rest_offset(toe)
  local tip = ball
  for _, e in ipairs(skeleton:end_sites()) do
    if e.parent == toe then tip = ball + e.offset end
  end
  local out = side * 0.6  -- the outer edge is away from the body
  return {
    heel = rigel.vec3(0, ball.y, -0.8), ball = ball, toe = tip,
    inner = rigel.vec3(-out, ball.y, 1.2), outer = rigel.vec3(out, ball.y, 1.2),
    side = rigel.vec3(1, 0, 0), forward = rigel.vec3(0, 0, side),
  }
end

-- The keyed roll (degrees) of each foot: back on the heel, flat, over the ball, past the break
-- (30) onto the toe tip, and back; the right foot half a cycle later.
local function roll_curve(frame, phase)
  local t = ((frame - 1) / 40 + phase) % 1
  if t < 0.2 then return -15 * math.sin(math.pi * t / 0.2) end
  if t < 0.4 then return 0 end
  return 45 * math.sin(math.pi * (t - 0.4) / 0.6)
end

local function foot(rig, ankle, toe, side)
  local effector = rig:effector(ankle, { type = "both" })
  rig:stage({ method = "two_bone", effectors = { effector } })
  local options = pivots(rig.skeleton, toe, side)
  options.toe_joint = toe
  return { effector = effector, roll = rig:foot_roll(effector, options), ankle = ankle }
end

return function(scene, clip, ctx)
  local rig = rigel.rig(clip.skeleton)
  local feet = { foot(rig, "LeftFoot", "LeftToeBase", 1), foot(rig, "RightFoot", "RightToeBase", -1) }
  -- After the leg stages: the prop changes hands at frame 20, keeping its world transform there.
  rig:constraint("parent", { joint = "Prop", target = "RightHand",
    switch = { { frame = 1, target = "RightHand" }, { frame = 20, target = "LeftHand" } } })
  rig:twist({ driver = "RightHand", joints = { "RightForeArmTwist1", "RightForeArmTwist2" },
    weights = { 0.33, 0.66 } })
  rig:constraint("aim", { joint = "Head", target = "LookAt", aim_axis = { 0, 0, 1 },
    up_axis = { 0, 1, 0 }, up_type = "world", up = { 0, 1, 0 } })
  return rig:bake(clip, function(frame, pose, r)
    -- An animator's key on the wrist: the right hand twists about its bone axis (X).
    pose:set("RightHand", "Xrotation", 50 * math.sin(2 * math.pi * (frame - 1) / 40))
    for i, f in ipairs(feet) do
      r:target(f.effector, pose:world_position(f.ankle), pose:world_rotation(f.ankle))
      r:set_foot_roll(f.roll, { roll = roll_curve(frame, (i - 1) * 0.5) })
    end
  end)
end

-- prop_and_feet: a per-character rig for the CMU walk of ../cmu_walk, written on the humanoid
-- template (scripts/rigs/humanoid.lua) in Lua alone: the joints a production rig adds to a mocap
-- skeleton are added here (no preprocessing step), then
--  * a prop, added under the hips, parented to the right hand and switched to the left hand at
--    frame 20 (the prop's world transform stays continuous at the switch);
--  * both feet on the template's foot-roll rigs: the leg's goal is the animated (planted) ankle,
--    rolled by a keyed roll curve over the heel, the ball and the toe tip, the toes turned to stay
--    down;
--  * the template's forearm roll bones (RightForeArmTwist1/2) sharing the hand's twist (33 % and
--    66 %);
--  * the head aiming at the template's LookAt locator, keyed here on a circle in front of the face.
-- usage: rigel bake --rig samples/prop_and_feet/rig.lua --out out samples/cmu_walk/walk.bvh
-- check: rigel run samples/prop_and_feet/check.lua out/walk.bvh samples/cmu_walk/walk.bvh
local rigel = require("rigel")
local humanoid = require("rigs.humanoid")

-- The prop's place at rest, in the hips' space: in front of the right hip.
local PROP_OFFSET = rigel.vec3(-6, -2, 2)

-- Foot pivots in the ankle's frame (CMU: Y up, Z forward at rest), from the skeleton: the ball
-- is the toe joint, the toe tip its end site, the heel behind the ankle on the sole's level.
local function pivots(skeleton, side, _, toe)
  local ball = skeleton:rest_offset(toe)
  local tip = ball
  for _, e in ipairs(skeleton:end_sites()) do
    if e.parent == toe then tip = ball + e.offset end
  end
  local out = (side == "left" and 1 or -1) * 0.6  -- the outer edge is away from the body
  return { heel = rigel.vec3(0, ball.y, -0.8), ball = ball, toe = tip,
    inner = rigel.vec3(-out, ball.y, 1.2), outer = rigel.vec3(out, ball.y, 1.2),
    side = rigel.vec3(1, 0, 0), forward = rigel.vec3(0, 0, side == "left" and 1 or -1) }
end

-- The keyed roll (degrees) of each foot: back on the heel, flat, over the ball, past the break
-- (30) onto the toe tip, and back; the right foot half a cycle later.
local function roll_curve(frame, side)
  local t = ((frame - 1) / 40 + (side == "left" and 0 or 0.5)) % 1
  if t < 0.2 then return -15 * math.sin(math.pi * t / 0.2) end
  if t < 0.4 then return 0 end
  return 45 * math.sin(math.pi * (t - 0.4) / 0.6)
end

return humanoid.rig({
  props = false,  -- one prop that changes hands, instead of one per hand
  pin = false,    -- the planted foot is the animated ankle
  pivots = pivots,
  roll = roll_curve,
  twist_weights = { 0.33, 0.66 },
  -- The look-at point circles 12 units ahead of the hips, near head height (the hips' space).
  look_at = {
    aim_axis = { 0, 0, 1 }, up_axis = { 0, 1, 0 },
    target = function(frame, pose)
      local t = (frame - 1) / 30
      local here = rigel.vec3(8 * math.cos(2 * math.pi * t), 7 + 2 * math.sin(2 * math.pi * t), 12)
      return pose:world_position("Hips") + pose:world_rotation("Hips"):rotate(here)
    end,
  },
  edit = function(clip)
    return clip:add_locator({ name = "Prop", parent = "Hips", offset = PROP_OFFSET })
  end,
  setup = function(h)
    h.rig:constraint("parent", { joint = "Prop", target = "RightHand",
      switch = { { frame = 1, target = "RightHand" }, { frame = 20, target = "LeftHand" } } })
  end,
  frame = function(frame, pose)
    -- An animator's key on the wrist: the right hand twists about its bone axis (X).
    pose:set("RightHand", "Xrotation", 50 * math.sin(2 * math.pi * (frame - 1) / 40))
  end,
})

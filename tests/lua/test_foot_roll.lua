-- rigel.foot_roll: the reverse-foot rig as a function, checked against the rotation about the
-- ball computed here by hand (x axis, degrees in, degrees out), and its argument errors.
local rigel = require("rigel")
local t = require("harness")
local dir = arg[1]

local pivots = {
  heel = rigel.vec3(0, -0.08, -0.06), ball = rigel.vec3(0, -0.08, 0.14),
  toe = rigel.vec3(0, -0.08, 0.22), inner = rigel.vec3(0.04, -0.08, 0.08),
  outer = rigel.vec3(-0.04, -0.08, 0.08),
}
local function options(extra)
  local o = {}
  for k, v in pairs(pivots) do o[k] = v end
  for k, v in pairs(extra) do o[k] = v end
  return o
end

-- The foot roll as a rig object on fixtures/leg.bvh (its toe joint sits at the ball, its end at
-- the toe tip): the planted ankle is the effector's target, the roll is keyed per frame, and the
-- baked clip is checked by forward kinematics (the pivots stay planted, the toes flat).
local function leg_rig()
  local clip = rigel.load(dir .. "/fixtures/leg.bvh"):clip()
  local rig = rigel.rig(clip.skeleton)
  local foot = rig:effector("LeftFoot", { type = "both" })
  rig:stage({ effectors = { foot }, chain_root = "LeftUpLeg", tolerance = 1e-10,
    angle_tolerance = 1e-10 })
  local handle = rig:foot_roll(foot, options({ toe_joint = "LeftToeBase" }))
  return clip, rig, foot, handle
end
local planted_pos = rigel.vec3(0.12, 0.2, 0.1)
local planted_rot = rigel.quat.axis_angle({ 0, 1, 0 }, 23)

t.run({
  rig_object_keyed_per_frame = function()
    local clip, rig, foot, handle = leg_rig()
    t.eq(handle, 1, "the handle")
    local rolls = { 0, 10, 25, 40 }   -- flat, over the ball twice, past the break
    local baked = rig:bake(clip, function(f, _, r)
      r:target(foot, planted_pos, planted_rot)
      r:set_foot_roll(handle, { roll = rolls[f] })
    end)
    for f = 1, clip.num_frames do
      local pose = baked:pose(f)
      local ankle_rot = pose:world_rotation("LeftFoot")
      local ankle_pos = pose:world_position("LeftFoot")
      local ball = ankle_pos + ankle_rot:rotate(pivots.ball)
      local tip = pose:world_position("LeftToeBase") +
        pose:world_rotation("LeftToeBase"):rotate(rigel.vec3(0, 0, 0.08))
      local planted_tip = planted_pos + planted_rot:rotate(pivots.toe)
      t.vnear(tip, planted_tip, 1e-7, "frame " .. f .. ": the toe tip stays planted")
      if rolls[f] <= 30 then
        t.vnear(ball, planted_pos + planted_rot:rotate(pivots.ball), 1e-7,
          "frame " .. f .. ": the ball stays planted")
        t.near(pose:world_rotation("LeftToeBase"):angle_to(planted_rot), 0, 1e-6,
          "frame " .. f .. ": the toes stay flat")
      end
      t.near(ankle_rot:angle_to(planted_rot), rolls[f], 1e-6,
        "frame " .. f .. ": the foot turned by the roll")
    end
  end,

  rig_object_errors = function()
    local clip, rig, foot = leg_rig()
    t.raises("this effector already has a foot roll", "one per effector", rig.foot_roll, rig, foot,
      options({}))
    local hand = rig:effector("LeftLeg")
    t.raises("a foot roll drives a pose effector", "position effector", rig.foot_roll, rig, hand,
      options({}))
    local other = rigel.rig(clip.skeleton)
    local ankle = other:effector("LeftFoot", { type = "both" })
    t.raises("the toe joint must be a joint below the ankle 'LeftFoot'", "toe above",
      other.foot_roll, other, ankle, options({ toe_joint = "LeftLeg" }))
    t.raises("unknown option 'rol'", "typo in set_foot_roll", rig.set_foot_roll, rig, 1, { rol = 3 })
    t.raises("foot roll", "bad handle", rig.set_foot_roll, rig, 2, { roll = 3 })
  end,

  ball_roll = function()
    local p = rigel.vec3(1, 0.08, 2)
    local pos, rot, toe = rigel.foot_roll(p, rigel.quat.identity(), options({ roll = 20 }))
    -- The ankle turns 20 degrees about x through the ball: p + ball + Rx(20) (-ball).
    local a = math.rad(20)
    local b = pivots.ball
    local y = -b.y * math.cos(a) + b.z * math.sin(a)
    local z = -b.y * math.sin(a) - b.z * math.cos(a)
    t.vnear(pos, rigel.vec3(p.x, p.y + b.y + y, p.z + b.z + z), 1e-12, "ankle about the ball")
    t.near(toe, -20, 1e-12, "toes turn back by the ball roll")
    t.near(math.deg(2 * math.acos(math.min(1, math.abs(rot.w)))), 20, 1e-9, "ankle turned 20 deg")
  end,

  flat_and_toe_tap = function()
    local p = rigel.vec3(0, 0.08, 0)
    local pos, _, toe = rigel.foot_roll(p, rigel.quat.identity(), options({ toe_tap = 15 }))
    t.vnear(pos, p, 0, "toe tap leaves the ankle")
    t.near(toe, 15, 1e-12, "toe tap")
  end,

  errors = function()
    t.raises("unknown option 'rol'", "typo", rigel.foot_roll, rigel.vec3(), rigel.quat.identity(),
      { rol = 3 })
    t.raises("option 'heel' must be a vec3", "heel", rigel.foot_roll, rigel.vec3(),
      rigel.quat.identity(), { heel = "back" })
    t.raises("the side and forward axes are parallel", "axes", rigel.foot_roll, rigel.vec3(),
      rigel.quat.identity(), { side = rigel.vec3(0, 0, 1) })
  end,
})

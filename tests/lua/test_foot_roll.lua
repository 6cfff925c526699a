-- rigel.foot_roll: the reverse-foot rig as a function, checked against the rotation about the
-- ball computed here by hand (x axis, degrees in, degrees out), and its argument errors.
local rigel = require("rigel")
local t = require("harness")

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

t.run({
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

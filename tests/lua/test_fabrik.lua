-- FABRIK stages from a rig script: rig:stage{method = "fabrik"}, rig:cone and rig:hinge (degrees),
-- their errors, and results checked on the pose (world positions and channel values), not on
-- the solver's report.
-- Fixtures: planar.bvh (Base --15-- Middle --10-- Outer --5-- End Site, one Z hinge each) and
-- chain.bvh (Root 6 ch, Upper ZXY --5-- Lower XYZ --2-- Tip ZX --1-- End Site).
local rigel = require("rigel")
local t = require("harness")
local dir = arg[1]
local planar = dir .. "/fixtures/planar.bvh"
local chain = dir .. "/fixtures/chain.bvh"

local function angle(a, b)
  return math.deg(math.atan(a:cross(b):length(), a:dot(b)))
end

t.run({
  planar_goals_reached = function()
    -- The seed's 21 interpolated goals from the start to (-20, 5).
    local clip = rigel.load(planar):clip()
    local rig = rigel.rig(clip.skeleton)
    local tip = rig:effector("Outer", { end_site = true })
    t.eq(rig:stage({ method = "fabrik", max_iterations = 500 }), 1, "stage index")
    local pose = clip:pose(1)
    local start = pose:end_position("Outer")
    local goal = rigel.vec3(-20, 5, 0)
    local worst = 0
    for f = 0, 20 do
      local target = start:lerp(goal, f / 20)
      rig:target(tip, target)
      local report = rig:solve(pose)
      t.eq(report.status, "converged", "frame " .. f)
      worst = math.max(worst, pose:end_position("Outer"):distance(target))
    end
    t.near(worst, 0, 1e-5, "every goal reached (checked on the pose)")
  end,

  unreachable_straightens = function()
    local clip = rigel.load(planar):clip()
    local rig = rigel.rig(clip.skeleton)
    local tip = rig:effector("Outer", { end_site = true })
    rig:stage({ method = "fabrik" })
    local pose = clip:pose(1)
    rig:target(tip, { 0, 100, 0 })
    local report = rig:solve(pose)
    t.ok(not report.converged, "out of reach: not converged")
    t.near(pose:end_position("Outer"):distance({ 0, 30, 0 }), 0, 1e-6,
      "the chain lies straight towards the target (reach 30)")
  end,

  hinge_and_cone_limits = function()
    local clip = rigel.load(planar):clip()
    local rig = rigel.rig(clip.skeleton)
    local tip = rig:effector("Outer", { end_site = true })
    rig:stage({ method = "fabrik", max_iterations = 300 })
    t.eq(rig:hinge("Middle", "z", 0, 60), rig, "rig:hinge returns the rig")
    local kind, axis, lo, hi = rig:get_bone_limit("Middle")
    t.eq(kind, "hinge", "hinge kind")
    t.vnear(axis, { 0, 0, 1 }, 0, "hinge axis")
    t.near(lo, 0, 1e-12, "hinge min (degrees)")
    t.near(hi, 60, 1e-12, "hinge max (degrees)")
    t.eq(rig:get_bone_limit("Outer"), "none", "no limit by default")
    local pose = clip:pose(1)
    for _, goal in ipairs({ { 5, 20, 0 }, { -10, -10, 0 }, { 20, -5, 0 }, { 0, 12, 0 } }) do
      rig:target(tip, goal)
      rig:solve(pose)
      local middle = pose:get("Middle", "Zrotation")
      t.ok(middle >= -1e-9 and middle <= 60 + 1e-9, ("Middle's hinge angle %.3f in [0, 60]"):format(middle))
    end
    -- A reachable goal inside the hinge's range (the pose of Base 10, Middle 30, Outer -20),
    -- solved from the clip's first frame (a start with Middle pinned on its bound can stall:
    -- docs/ik.md, FABRIK).
    pose = clip:pose(1)
    local made = clip:pose(1)
    made:set("Base", "Zrotation", 10)
    made:set("Middle", "Zrotation", 30)
    made:set("Outer", "Zrotation", -20)
    rig:target(tip, made:end_position("Outer"))
    local report = rig:solve(pose)
    t.eq(report.status, "converged", "goal inside the hinge range")
    t.near(pose:end_position("Outer"):distance(made:end_position("Outer")), 0, 1e-5, "reached")

    -- Cone on the 3-D chain: Lower's bone stays within 20 degrees of Upper's.
    local c = rigel.load(chain):clip()
    local r = rigel.rig(c.skeleton)
    local e = r:effector("Tip", { end_site = true })
    r:stage({ method = "fabrik", chain_root = "Upper", max_iterations = 300 })
    t.eq(r:cone("Lower", 20), r, "rig:cone returns the rig")
    local k, deg = r:get_bone_limit("Lower")
    t.eq(k, "cone", "cone kind")
    t.near(deg, 20, 1e-12, "cone degrees")
    local p = c:pose(1)
    for _, goal in ipairs({ { 6, 3, 0 }, { 0, -4, 3 }, { 2, 10, 1 }, { -7, 2, -2 } }) do
      r:target(e, goal)
      local report2 = r:solve(p)
      local up = p:world_position("Lower") - p:world_position("Upper")
      local low = p:world_position("Tip") - p:world_position("Lower")
      t.ok(angle(up, low) <= 20 + 1e-7, ("bone angle %.4f <= 20 degrees"):format(angle(up, low)))
      t.ok(report2.status ~= "invalid_input", "solved")
    end
    r:clear_bone_limit("Lower")
    t.eq(r:get_bone_limit("Lower"), "none", "cleared")
  end,

  errors_name_the_joint = function()
    local clip = rigel.load(planar):clip()
    local rig = rigel.rig(clip.skeleton)
    t.raises("cone of joint 'Middle': expected 0..180 degrees, got 200", "cone range", rig.cone, rig,
      "Middle", 200)
    t.raises("hinge of joint 'Middle': expected -180 <= min <= max <= 180 degrees", "hinge range",
      rig.hinge, rig, "Middle", "z", 50, 10)
    t.raises("hinge of joint 'Middle': the axis is a zero vector", "hinge axis", rig.hinge, rig,
      "Middle", { 0, 0, 0 }, 0, 10)
    t.raises("invalid hinge axis 'w'", "hinge axis name", rig.hinge, rig, "Middle", "w", 0, 10)
    t.raises("no joint 'Midle' (closest: Middle", "joint names", rig.cone, rig, "Midle", 10)
    -- One effector per FABRIK stage.
    rig:effector("Outer", { end_site = true })
    rig:effector("Middle")
    rig:stage({ method = "fabrik" })
    t.raises("FABRIK takes one effector per stage", "validated at solve", rig.solve, rig,
      clip:pose(1))
  end,
})

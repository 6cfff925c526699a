-- rig:constraint: constraints as rig objects, evaluated by rig:solve and rig:bake, checked by FK
-- on the poses they produce. Fixture fixtures/prop.bvh: Hips (6 ch) with RightArm-RightHand,
-- LeftArm-LeftHand, Head (ZXY) and a six-channel Prop under the hips.
local rigel = require("rigel")
local t = require("harness")
local dir = arg[1]
local prop_bvh = dir .. "/fixtures/prop.bvh"
local TOL = 1e-8

local function load()
  local clip = rigel.load(prop_bvh):clip()
  return clip, rigel.rig(clip.skeleton)
end

-- The world transform of `joint` relative to `parent` in `pose`: rotation, position.
local function relative(pose, parent, joint)
  local pr = pose:world_rotation(parent)
  local inv = pr:inverse()
  local d = pose:world_position(joint) - pose:world_position(parent)
  return inv * pose:world_rotation(joint), inv:rotate(d)
end

-- Checks that on frames first..last of `clip`, `joint` keeps the transform (q0, p0) relative to
-- `parent`.
local function expect_kept_relative(clip, parent, joint, q0, p0, first, last)
  for f = first, last do
    local q, p = relative(clip:pose(f), parent, joint)
    t.near(q:angle_to(q0), 0, 1e-6, "frame " .. f .. ": same rotation relative to " .. parent)
    t.vnear(p, p0, TOL, "frame " .. f .. ": same position relative to " .. parent)
  end
end

t.run({
  parent_maintain_offset_in_a_constraint_only_bake = function()
    local clip, rig = load()
    local h = rig:constraint("parent", { joint = "Prop", target = "RightHand" })
    t.eq(h, 1, "the handle is the constraint's index")
    t.eq(rig.num_constraints, 1, "one constraint")
    t.eq(rig.num_effectors, 0, "and no effector")
    local baked = rig:bake(clip)
    local q0, p0 = relative(clip:pose(1), "RightHand", "Prop")
    expect_kept_relative(baked, "RightHand", "Prop", q0, p0, 1, clip.num_frames)
    -- Other joints are untouched.
    t.near(baked:get(4, "Head", "Xrotation"), clip:get(4, "Head", "Xrotation"), 0,
      "the head keeps its channels")
  end,

  parent_switch_keeps_the_prop_continuous = function()
    local clip, rig = load()
    rig:constraint("parent", { joint = "Prop", target = "RightHand",
      switch = { { frame = 1, target = "RightHand" }, { frame = 5, target = "LeftHand" } } })
    local baked = rig:bake(clip)
    local qr, pr = relative(clip:pose(1), "RightHand", "Prop")
    expect_kept_relative(baked, "RightHand", "Prop", qr, pr, 1, 4)
    -- At frame 5 the prop is where the right hand would have put it...
    local src5 = clip:pose(5)
    local hand_rot = src5:world_rotation("RightHand")
    local expected = src5:world_position("RightHand") + hand_rot:rotate(pr)
    t.vnear(baked:pose(5):world_position("Prop"), expected, TOL, "continuous at the switch")
    -- ...and from then on it keeps that offset to the left hand.
    local ql, pl = relative(baked:pose(5), "LeftHand", "Prop")
    expect_kept_relative(baked, "LeftHand", "Prop", ql, pl, 6, clip.num_frames)
  end,

  point_mask_and_influence_by_solve = function()
    local clip, rig = load()
    local h = rig:constraint("point", { joint = "Prop", target = "LeftHand", axes = "xz" })
    local pose = clip:pose(3)
    local own = pose:world_position("Prop")
    local goal = pose:world_position("LeftHand")
    rig:solve(pose)
    local got = pose:world_position("Prop")
    t.vnear(got, { goal.x, own.y, goal.z }, TOL, "x and z on the hand, y kept")
    rig:set_influence(h, 0.5)
    pose = clip:pose(3)
    rig:solve(pose)
    t.vnear(pose:world_position("Prop"), { (own.x + goal.x) / 2, own.y, (own.z + goal.z) / 2 }, TOL,
      "influence 0.5 halfway")
  end,

  aim_with_object_up = function()
    local clip, rig = load()
    rig:constraint("aim", { joint = "Head", target = "Prop", aim_axis = { 0, 1, 0 },
      up_axis = { 0, 0, 1 }, up_type = "object", up_target = "LeftHand" })
    local pose = clip:pose(2)
    rig:solve(pose)
    local head = pose:world_position("Head")
    local dir = (pose:world_position("Prop") - head):normalized()
    local r = pose:world_rotation("Head")
    t.vnear(r:rotate({ 0, 1, 0 }), dir, TOL, "the head's Y points at the prop")
    local up = pose:world_position("LeftHand") - head
    local up_perp = (up - dir * up:dot(dir)):normalized()
    t.vnear(r:rotate({ 0, 0, 1 }), up_perp, TOL, "its Z towards the left hand")
  end,

  copy_rotation_and_location = function()
    local clip, rig = load()
    rig:constraint("copy_rotation", { joint = "Prop", target = "Head" })
    rig:constraint("copy_location", { joint = "Prop", target = "Head", mode = "add", axes = "y" })
    local pose = clip:pose(6)
    local own = pose:world_position("Prop")
    local head = pose:world_position("Head")
    local head_rot = pose:world_rotation("Head")
    rig:solve(pose)
    t.near(pose:world_rotation("Prop"):angle_to(head_rot), 0, 1e-6, "rotation copied")
    t.vnear(pose:world_position("Prop"), { own.x, own.y + head.y, own.z }, TOL, "y added")
  end,

  limits = function()
    local clip, rig = load()
    rig:constraint("limit_rotation", { joint = "Head", axes = "x", min = { -2, 0, 0 },
      max = { 2, 0, 0 } })
    rig:constraint("limit_distance", { joint = "Prop", target = "Hips", distance = 1 })
    local pose = clip:pose(1)
    pose:set("Head", "Xrotation", 30)
    pose:set("Head", "Yrotation", 17)
    rig:solve(pose)
    t.near(pose:get("Head", "Xrotation"), 2, 1e-9, "x clamped to 2 degrees")
    t.near(pose:get("Head", "Yrotation"), 17, 1e-9, "y free")
    t.near(pose:world_position("Prop"):distance(pose:world_position("Hips")), 1, TOL,
      "the prop within 1 of the hips")
  end,

  ordering_with_the_solver = function()
    local clip, rig = load()
    t.eq(rig:constraint("orient", { joint = "Prop", target = "Head" }), 1, "before any stage")
    rig:effector("RightHand", { target = { -6, 9, 2 } })
    rig:stage({ method = "dls_adaptive" })
    rig:constraint("parent", { joint = "Prop", target = "RightHand", maintain_offset = false })
    rig:constraint("point", { joint = "Prop", target = "Head", after_stage = 0 })
    local list = rig:constraints()
    t.eq(#list, 3, "three constraints")
    t.eq(list[1].kind .. list[1].after_stage, "orient0", "orient runs before any stage")
    t.eq(list[2].kind .. list[2].after_stage, "parent1", "parent after stage 1")
    t.eq(list[3].after_stage, 0, "after_stage = 0: before any stage")
    local baked = rig:bake(clip)
    for f = 1, clip.num_frames do
      local pose = baked:pose(f)
      t.vnear(pose:world_position("RightHand"), { -6, 9, 2 }, 1e-5, "the hand solved")
      t.near(pose:world_rotation("Prop"):angle_to(pose:world_rotation("RightHand")), 0, 1e-6,
        "the prop takes the solved hand's rotation (parent after IK)")
      t.vnear(pose:world_position("Prop"), pose:world_position("RightHand"), TOL,
        "and its position (the point before IK is overridden)")
    end
  end,

  between_two_stages = function()
    -- Stage 1 solves the right hand, the orient constraint then turns the left arm like the
    -- right, and stage 2 solves the left hand from there. Declared between the stages, the left
    -- hand ends on its target (stage 2 ran after the constraint); declared after stage 2, the
    -- constraint has the last word and the left arm ends turned like the right. Each hand hangs
    -- 5 from its shoulder, so its targets lie on that sphere.
    local right_dir = rigel.vec3(-3, -2, 1):normalized() * 5
    local left_dir = rigel.vec3(3, -4, 2):normalized() * 5
    local function aim(pose, rig, right, left)
      rig:target(right, pose:world_position("RightArm") + right_dir)
      rig:target(left, pose:world_position("LeftArm") + left_dir)
    end
    local function run(between)
      local clip, rig = load()
      local right = rig:effector("RightHand")
      local left = rig:effector("LeftHand")
      rig:stage({ effectors = { right }, chain_root = "RightArm" })
      if between then
        rig:constraint("orient", { joint = "LeftArm", target = "RightArm" })
      end
      -- Also between (or last): the head takes the solved right arm's rotation, which stage 2
      -- does not touch, so it must hold on every result.
      rig:constraint("orient", { joint = "Head", target = "RightArm" })
      rig:stage({ effectors = { left }, chain_root = "LeftArm" })
      if not between then
        rig:constraint("orient", { joint = "LeftArm", target = "RightArm" })
      end
      local list = rig:constraints()
      local arm = list[between and 1 or 2]
      t.eq(arm.joint .. arm.after_stage, between and "LeftArm1" or "LeftArm2",
        "declared after its stage")
      local pose = clip:pose(2)
      aim(pose, rig, right, left)
      rig:solve(pose, 2)
      local baked = rig:bake(clip, function(_, p, r) aim(p, r, right, left) end)
      return { pose, baked:pose(2), baked:pose(clip.num_frames) }
    end
    for _, between in ipairs({ true, false }) do
      for _, pose in ipairs(run(between)) do
        t.vnear(pose:world_position("RightHand"), pose:world_position("RightArm") + right_dir,
          1e-5, "the right hand solved")
        local left_reached = pose:world_position("LeftHand"):distance(
          pose:world_position("LeftArm") + left_dir) < 1e-5
        local turned = pose:world_rotation("LeftArm"):angle_to(pose:world_rotation("RightArm"))
          < 1e-6
        t.eq(left_reached, between, "left hand on its target iff the constraint ran before it")
        t.eq(turned, not between, "left arm turned like the right iff the constraint ran last")
        t.near(pose:world_rotation("Head"):angle_to(pose:world_rotation("RightArm")), 0, 1e-6,
          "the head turned like the solved right arm")
      end
    end
  end,

  errors = function()
    local clip, rig = load()
    t.raises("invalid constraint kind 'glue', expected one of: parent, point, orient, aim, " ..
      "copy_location, copy_rotation, limit_rotation, limit_distance", "bad kind listed",
      rig.constraint, rig, "glue", { joint = "Prop", target = "Head" })
    t.raises("unknown option 'aim_axis' (expected one of: joint, target, influence, after_stage, " ..
      "maintain_offset, switch)", "options of the kind listed", rig.constraint, rig, "parent",
      { joint = "Prop", target = "Head", aim_axis = { 1, 0, 0 } })
    t.raises("field 'up_type': invalid value 'sky', expected one of: world, object, object_rotation",
      "bad up type", rig.constraint, rig, "aim", { joint = "Head", target = "Prop", up_type = "sky" })
    t.raises("field 'mode': invalid value 'multiply', expected one of: replace, add", "bad mode",
      rig.constraint, rig, "copy_location", { joint = "Prop", target = "Head", mode = "multiply" })
    t.raises("field 'limit': invalid value 'near', expected one of: inside, outside, surface",
      "bad limit", rig.constraint, rig, "limit_distance",
      { joint = "Prop", target = "Head", limit = "near" })
    t.raises("field 'target': joint name or index expected, got nil", "target required",
      rig.constraint, rig, "point", { joint = "Prop" })
    t.raises("no joint 'Hed' (closest: Head", "joint names checked", rig.constraint, rig, "point",
      { joint = "Prop", target = "Hed" })
    t.raises("point: joint 'Head' has no Xposition channel", "channels checked by core",
      rig.constraint, rig, "point", { joint = "Head", target = "Prop" })
    t.raises("field 'influence' must be in [0, 1]", "influence range", rig.constraint, rig,
      "orient", { joint = "Head", target = "Prop", influence = 2 })
    t.raises("aim: up_target is required for this up type", "up target needed", rig.constraint,
      rig, "aim", { joint = "Head", target = "Prop", up_type = "object" })
    t.raises("field 'switch'[2]: frames must increase", "switch order", rig.constraint, rig,
      "parent", { joint = "Prop", target = "Head",
        switch = { { frame = 3, target = "Head" }, { frame = 2, target = "LeftHand" } } })
    t.raises("field 'axes': letters x, y, z expected", "axes letters", rig.constraint, rig,
      "point", { joint = "Prop", target = "Head", axes = "xw" })
    t.eq(rig.num_constraints, 0, "failed declarations add nothing")
    t.raises("the rig has no constraints", "set_influence needs one", rig.set_influence, rig, 1,
      0.5)
    rig:constraint("point", { joint = "Prop", target = "Head" })
    t.raises("influence must be in [0, 1]", "set_influence range", rig.set_influence, rig, 1, 1.5)
    t.raises("Rig was released", "released rig", function()
      local r = rigel.rig(clip.skeleton)
      r:release()
      r:constraint("point", { joint = "Prop", target = "Head" })
    end)
  end,
  twist_distribution = function()
    -- fixtures/twist.bvh: RightForeArm with RightForeArmTwist1, RightForeArmTwist2 and RightHand
    -- beside each other along -X; the hand swings 20 degrees about Z and twists 0, 60, 120, 170,
    -- 200 degrees about X (R = Rz Rx: swing Rz, twist Rx). Each twist bone takes its weight's
    -- share as its own X rotation, the 200 degrees unwrapped from the frame before.
    local clip = rigel.load(dir .. "/fixtures/twist.bvh"):clip()
    local rig = rigel.rig(clip.skeleton)
    local h = rig:twist({ driver = "RightHand", joints = { "RightForeArmTwist1",
      "RightForeArmTwist2" }, weights = { 0.33, 0.66 } })
    t.eq(h, 1, "rig:twist returns the constraint's handle")
    t.eq(rig:constraints()[1].kind, "twist", "listed as a twist")
    t.eq(rig:constraints()[1].joint, "RightForeArmTwist1", "its first twist joint")
    local baked = rig:bake(clip)
    for f, twist in ipairs({ 0, 60, 120, 170, 200 }) do
      for joint, w in pairs({ RightForeArmTwist1 = 0.33, RightForeArmTwist2 = 0.66 }) do
        t.near(baked:get(f, joint, "Xrotation"), w * twist, 1e-9,
          ("frame %d: %s takes %.2f of the twist"):format(f, joint, w))
        t.near(baked:get(f, joint, "Zrotation"), 0, 1e-9, joint .. " keeps its (zero) swing")
        t.near(baked:get(f, joint, "Yrotation"), 0, 1e-9, joint .. " keeps its (zero) swing")
      end
      t.eq(baked:get(f, "RightHand", "Xrotation"), clip:get(f, "RightHand", "Xrotation"),
        "the hand is untouched")
    end
    -- Through rig:solve, with the default weights (1/3, 2/3) and influence keyed to 0.5.
    local solo = rigel.rig(clip.skeleton)
    local th = solo:constraint("twist", { driver = "RightHand",
      joints = { "RightForeArmTwist1", "RightForeArmTwist2" } })
    local pose = clip:pose(3)
    solo:solve(pose)
    t.near(pose:get("RightForeArmTwist2", "Xrotation"), 80, 1e-9, "default weight 2/3 of 120")
    solo:set_influence(th, 0.5)
    pose = clip:pose(3)
    solo:solve(pose)
    t.near(pose:get("RightForeArmTwist1", "Xrotation"), 20, 1e-9, "influence 0.5 of 1/3 of 120")
    -- A thin wrapper in scripts/limbs.lua.
    local limbs = require("limbs")
    local wrapped = rigel.rig(clip.skeleton)
    t.eq(limbs.distribute(wrapped, { driver = "RightHand", joints = { "RightForeArmTwist1" },
      weights = { 0.5 } }), 1, "limbs.distribute(rig, options) is rig:twist")
    pose = clip:pose(2)
    wrapped:solve(pose)
    t.near(pose:get("RightForeArmTwist1", "Xrotation"), 30, 1e-9, "half of 60")
    -- Errors.
    t.raises("unknown option 'joint'", "twist options checked", rig.twist, rig,
      { driver = "RightHand", joint = "RightForeArmTwist1" })
    t.raises("field 'joints'", "joints required", rig.twist, rig, { driver = "RightHand" })
    t.raises("field 'weights' has 1 entries for 2 joints", "one weight per joint", rig.twist, rig,
      { driver = "RightHand", joints = { "RightForeArmTwist1", "RightForeArmTwist2" },
        weights = { 0.5 } })
    t.raises("twist: twist joint 'RightHand' is below the driver 'RightForeArm'",
      "core validation", rig.twist, rig, { driver = "RightForeArm", joints = { "RightHand" } })
    t.raises("no joint 'RightForeArmTwist3'", "joint names checked", rig.twist, rig,
      { driver = "RightHand", joints = { "RightForeArmTwist3" } })
    t.eq(rig.num_constraints, 1, "failed declarations add nothing")
  end,
  limit_location = function()
    -- A world ceiling on the prop: each baked frame's prop height is min(height, ceiling), its x
    -- and z unchanged. Then local bounds on its position channels, and influence.
    local clip, rig = load()
    local heights = {}
    for f = 1, clip.num_frames do heights[f] = clip:pose(f):world_position("Prop").y end
    local ceiling = (math.min(table.unpack(heights)) + math.max(table.unpack(heights))) / 2
    rig:constraint("limit_location", { joint = "Prop", max = { y = ceiling } })
    t.eq(rig:constraints()[1].kind, "limit_location", "listed")
    local baked = rig:bake(clip)
    local clamped = 0
    for f = 1, clip.num_frames do
      local was, got = clip:pose(f):world_position("Prop"), baked:pose(f):world_position("Prop")
      t.near(got.y, math.min(was.y, ceiling), TOL, "frame " .. f .. ": under the ceiling")
      t.near(got.x, was.x, TOL, "frame " .. f .. ": x kept")
      t.near(got.z, was.z, TOL, "frame " .. f .. ": z kept")
      if was.y > ceiling then clamped = clamped + 1 end
    end
    t.ok(clamped > 0 and clamped < clip.num_frames, "some frames clamped, some not")
    local pose = clip:pose(1)
    local x = pose:get("Prop", "Xposition")
    local loc = rigel.rig(clip.skeleton)
    local h = loc:constraint("limit_location", { joint = "Prop", space = "local",
      min = { x + 2 }, influence = 0.5 })
    loc:solve(pose)
    t.near(pose:get("Prop", "Xposition"), x + 1, TOL, "local min on the channel, half influence")
    loc:set_influence(h, 1)
    pose = clip:pose(1)
    loc:solve(pose)
    t.near(pose:get("Prop", "Xposition"), x + 2, TOL, "full influence")
    t.raises("limit_location: no bound given", "a bound is needed", rig.constraint, rig,
      "limit_location", { joint = "Prop" })
    t.raises("min > max on axis z", "bounds ordered", rig.constraint, rig, "limit_location",
      { joint = "Prop", min = { z = 2 }, max = { z = 1 } })
    t.raises("field 'space': invalid value 'parent', expected one of: world, local", "spaces listed",
      rig.constraint, rig, "limit_location", { joint = "Prop", max = { 1, 1, 1 }, space = "parent" })
    t.raises("field 'max'.y: finite number expected", "bounds are numbers", rig.constraint, rig,
      "limit_location", { joint = "Prop", max = { y = "up" } })
    t.raises("has no Xposition channel", "channels checked", rig.constraint, rig,
      "limit_location", { joint = "Head", max = { y = 1 } })
  end,
})

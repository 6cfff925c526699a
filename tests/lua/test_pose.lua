-- rigel.Pose: channel values in degrees, local and world transforms (FK), setters.
-- Fixture drawn in test_skeleton.lua. Frame 2: root at (1,2,3) turned 90 deg about Z.
local rigel = require("rigel")
local t = require("harness")
local dir = arg[1]

local scene = rigel.load(dir .. "/fixtures/chain.bvh")
local skel, clip = scene.skeleton, scene:clip()

t.run({
  rest_pose = function()
    local p = rigel.pose(skel)
    t.vnear(p:world_position("Tip"), { 0, 17, 0 }, 1e-12, "rest Tip")
    t.vnear(p:end_position("Tip"), { 0, 18, 0 }, 1e-12, "rest end site of Tip")
    t.vnear(p:world_position("Side"), { 3, 0, 0 }, 1e-12, "rest Side")
    t.eq(p.num_channels, 18, "pose width")
    t.ok(p.skeleton == skel, "pose knows its skeleton")
  end,

  frames_from_clip = function()
    local p = clip:pose(2)
    t.near(p:get("Root", "Zrotation"), 90, 1e-9, "degrees at the boundary")
    t.near(p:get("Root", "Yposition"), 2, 1e-12, "positions in file units")
    t.vnear(p:world_position("Upper"), { -9, 2, 3 }, 1e-9, "root turn moves Upper")
    t.vnear(p:world_position("Tip"), { -16, 2, 3 }, 1e-9, "and Tip")
    t.vnear(p:world_position("Side"), { 1, 5, 3 }, 1e-9, "and Side")
    local q = p:world_rotation("Root")
    t.near(q:angle_to(rigel.quat.axis_angle({ 0, 0, 1 }, 90)), 0, 1e-9, "root world rotation")
    p = clip:pose(3)
    t.vnear(p:world_position("Lower"), { -5, 10, 0 }, 1e-9, "Upper Zrotation 90")
    t.vnear(p:world_position("Side"), { 3.5, 0, 0 }, 1e-9, "Side Xposition adds to the offset")
    t.vnear(p:local_position("Side"), { 3.5, 0, 0 }, 1e-9, "local position = offset + channels")
    p = clip:pose(4)
    t.vnear(p:world_position("Tip"), { -2, 15, 0 }, 1e-9, "Lower Zrotation 90 (XYZ order)")
    t.vnear(p:end_position("Tip"), { -2 - math.sqrt(0.5), 15 - math.sqrt(0.5), 0 }, 1e-9,
      "two-channel Tip turned 45")
  end,

  pose_into_existing = function()
    local p = rigel.pose(skel)
    local same = clip:pose(2, p)
    t.ok(same == p, "clip:pose(f, pose) fills and returns the given pose")
    t.vnear(p:world_position("Tip"), { -16, 2, 3 }, 1e-9, "filled pose is up to date")
  end,

  setters_refresh_world = function()
    local p = rigel.pose(skel)
    p:set("Upper", "Zrotation", 90)
    t.vnear(p:world_position("Lower"), { -5, 10, 0 }, 1e-9, "set() then world query")
    p:set_angles("Upper", rigel.vec3(0, 0, 0))
    t.vnear(p:world_position("Lower"), { 0, 15, 0 }, 1e-9, "set_angles back to zero")
    p:set_local_rotation("Upper", rigel.quat.axis_angle({ 1, 0, 0 }, 90))
    t.near(p:get("Upper", "Xrotation"), 90, 1e-9, "set_local_rotation writes Euler channels")
    t.vnear(p:world_position("Lower"), { 0, 10, 5 }, 1e-9, "and moves the child")
    p:reset()
    p:set("Root", "Zrotation", 90)
    p:set_world_rotation("Upper", rigel.quat.identity())
    t.near(p:get("Upper", "Zrotation"), -90, 1e-9, "set_world_rotation cancels the parent")
    t.ok(p:world_rotation("Upper"):angle_to(rigel.quat()) < 1e-9, "world rotation is identity")
    p:reset()
    p:set_world_position("Root", { 4, 5, 6 })
    t.vnear(p:world_position("Root"), { 4, 5, 6 }, 1e-12, "set_world_position on the root")
    t.vnear(p:world_position("Tip"), { 4, 22, 6 }, 1e-12, "children follow")
    t.raises("joint 'Lower' has no X position channel", "no position channels",
      p.set_local_position, p, "Lower", { 1, 5, 0 })
    t.raises("joint 'Tip' has 2 rotation channel(s); this needs three",
      "set_local_rotation needs three rotation channels", p.set_local_rotation, p, "Tip",
      rigel.quat())
    t.raises("joint 'Tip' has no Y rotation channel", "set_angles on a missing axis",
      p.set_angles, p, "Tip", { 0, 10, 0 })
  end,

  values_round_trip = function()
    local p = clip:pose(2)
    local v = p:values()
    t.eq(#v, 18, "one value per channel")
    t.near(v[4], 90, 1e-9, "degrees in values()")
    local q = rigel.pose(skel):set_values(v)
    t.vnear(q:world_position("Tip"), { -16, 2, 3 }, 1e-9, "set_values reproduces the pose")
    t.raises("expected 18 values, got 2", "length is checked", q.set_values, q, { 1, 2 })
    t.raises("value 2 is not a finite number", "entries are checked", q.set_values, q,
      { 1, "x", 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18 })
  end,

  copies_are_independent = function()
    local a = clip:pose(1)
    local b = a:copy()
    b:set("Upper", "Zrotation", 90)
    t.near(a:get("Upper", "Zrotation"), 0, 0, "copy does not alias")
    a:copy_from(b)
    t.near(a:get("Upper", "Zrotation"), 90, 1e-12, "copy_from copies")
    local other = rigel.pose(rigel.load(dir .. "/fixtures/chain.bvh").skeleton)
    t.raises("Pose of another skeleton", "copy_from checks the skeleton", a.copy_from, a, other)
  end,

  errors = function()
    local p = rigel.pose(skel)
    t.raises("bad argument #3 to 'set' (number expected, got string)", "value type",
      function() p:set("Upper", "Zrotation", "ninety") end)
    t.raises("number is not finite", "NaN rejected", p.set, p, "Upper", "Zrotation", 0 / 0)
    t.raises("Pose expected, got Skeleton", "self type", p.get, skel, "Upper", "Zrotation")
    t.raises("no joint 'Uper' (closest: Upper", "closest names", p.get, p, "Uper", "Zrotation")
    t.raises("Skeleton expected, got no value", "rigel.pose needs a skeleton", rigel.pose)
  end,

  lazy_world_chains = function()
    -- World transforms refresh per queried chain; interleaving sets and queries on different
    -- branches must give exactly (==) what a pose set all at once gives.
    local a = clip:pose(2)
    t.vnear(a:world_position("Side"), { 1, 5, 3 }, 1e-9, "Side before any set")
    a:set("Upper", "Zrotation", 30)
    local tip_a = a:world_position("Tip")
    a:set("Root", "Yrotation", 20)
    a:set("Side", "Xposition", 0.25)
    local side_a = a:world_position("Side")
    a:set("Lower", "Xrotation", -15)
    local b = rigel.pose(skel)
    b:set_values(a:values())
    t.ok(a:world_position("Tip") == b:world_position("Tip"), "Tip after sets on other branches")
    t.ok(a:world_position("Side") == b:world_position("Side"), "Side after sets below Upper")
    t.ok(a:world_rotation("Lower") == b:world_rotation("Lower"), "Lower rotation")
    t.ok(a:end_position("Tip") == b:end_position("Tip"), "end site")
    t.ok(tip_a ~= a:world_position("Tip"), "a root turn moved Tip")
    t.ok(side_a == b:world_position("Side"), "Side did not change after Lower moved")
    local x, y, z = a:world_xyz("Tip")
    t.ok(rigel.vec3(x, y, z) == a:world_position("Tip"), "world_xyz = world_position")
    t.raises("wrong number of arguments to '?' (expected at most 2, got 3)",
      "world_xyz takes one joint", a.world_xyz, a, "Tip", 1)
    t.raises("no joint 'Tp' (closest: Tip", "world_xyz checks names", a.world_xyz, a, "Tp")
    -- clip:pose(f, into) and copies keep the lazy state consistent.
    clip:pose(3, a)
    t.vnear(a:world_position("Lower"), { -5, 10, 0 }, 1e-9, "pose refilled from a clip")
    local c = a:copy()
    c:set("Upper", "Zrotation", 0)
    t.vnear(c:world_position("Lower"), { 0, 15, 0 }, 1e-9, "copy refreshes its own chain")
    t.vnear(a:world_position("Lower"), { -5, 10, 0 }, 1e-9, "original untouched")
  end,

  release = function()
    local p = rigel.pose(skel)
    p:release()
    t.raises("Pose was released", "use after release", p.get, p, "Upper", "Zrotation")
    t.eq(tostring(p), "Pose (released)", "tostring after release")
    do
      local q <close> = rigel.pose(skel)
      t.ok(q:world_position("Tip") ~= nil, "to-be-closed pose works in scope")
    end
  end,
})

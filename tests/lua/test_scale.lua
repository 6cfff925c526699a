-- Bone scale from Lua (issue 28 item 1): pose:scale / set_scale / world_scale, scale channels by
-- name, and the copy_scale and limit_scale constraints, checked by FK. Fixture
-- fixtures/scaled.gltf (made by fixtures/make_scaled_gltf.py): Root -> Arm -> Hand (-> Finger end)
-- and Root -> Prop; Arm's uniform scale animates 1 -> 2 -> 1.5, Prop's per axis.
local rigel = require("rigel")
local t = require("harness")
local dir = arg[1]
local TOL = 1e-6

local function load()
  local clip = rigel.load(dir .. "/fixtures/scaled.gltf"):clip()
  return clip, rigel.rig(clip.skeleton)
end

t.run({
  scale_read_from_the_file = function()
    local clip = load()
    local pose = clip:pose(3)
    t.vnear(pose:scale("Arm"), rigel.vec3(2, 2, 2), TOL, "Arm doubled on frame 3")
    t.vnear(pose:scale("Prop"), rigel.vec3(0.5, 1, 2), TOL, "Prop per axis on frame 3")
    t.near(pose:get("Arm", "Yscale"), 2, TOL, "a scale channel reads as the factor")
    t.vnear(clip:pose(1):scale("Arm"), rigel.vec3(1, 1, 1), TOL, "rest scale on frame 1")
    t.vnear(pose:scale("Root"), rigel.vec3(1, 1, 1), TOL, "a joint without scale channels: 1")
    -- The child's offset is in the scaled space of its parent: Hand sits 2 above Arm.
    local d = pose:world_position("Hand") - pose:world_position("Arm")
    t.near(d:length(), 2, TOL, "Hand's offset scaled by Arm")
    t.vnear(pose:world_scale("Hand"), rigel.vec3(2, 2, 2), TOL, "Hand inherits Arm's scale")
  end,
  set_scale_keys_and_moves_children = function()
    local clip = load()
    local pose = clip:pose(1)
    pose:set_scale("Arm", 3)
    t.vnear(pose:scale("Arm"), rigel.vec3(3, 3, 3), TOL, "uniform from a number")
    local d = pose:world_position("Hand") - pose:world_position("Arm")
    t.near(d:length(), 3, TOL, "Hand moved with Arm's scale")
    pose:set_scale("Arm", { 1, 0.5, 1 })
    t.near((pose:world_position("Hand") - pose:world_position("Arm")):length(), 0.5, TOL,
      "per axis: Hand's offset along Arm's Y")
    t.raises("has no X scale channel", "joints without scale channels refuse it", pose.set_scale,
      pose, "Root", 2)
    t.raises("must be positive", "positive scale", pose.set_scale, pose, "Arm", 0)
    pose:set("Arm", "Xscale", 1.25)
    t.near(pose:scale("Arm").x, 1.25, TOL, "set by channel name")
  end,
  copy_scale = function()
    local clip, rig = load()
    rig:constraint("copy_scale", { joint = "Prop", target = "Hand" })
    t.eq(rig:constraints()[1].kind, "copy_scale", "listed")
    local baked = rig:bake(clip)
    for f = 1, clip.num_frames do
      local want = clip:pose(f):world_scale("Hand")
      t.vnear(baked:pose(f):world_scale("Prop"), want, TOL, "frame " .. f .. ": Hand's scale")
    end
    local half = rigel.rig(clip.skeleton)
    half:constraint("copy_scale", { joint = "Prop", target = "Hand", axes = "x", influence = 0.5 })
    local pose = clip:pose(3)
    half:solve(pose)
    t.vnear(pose:scale("Prop"), rigel.vec3(0.5 + 0.5 * (2 - 0.5), 1, 2), TOL,
      "x only, half influence")
    t.raises("copy_scale: joint 'Hand' has no Xscale channel", "channels checked", rig.constraint,
      rig, "copy_scale", { joint = "Hand", target = "Prop" })
  end,
  limit_scale = function()
    local clip, rig = load()
    rig:constraint("limit_scale", { joint = "Arm", max = { 1.6, 1.6, 1.6 } })
    local baked = rig:bake(clip)
    for f = 1, clip.num_frames do
      local was = clip:pose(f):scale("Arm").x
      t.near(baked:pose(f):scale("Arm").x, math.min(was, 1.6), TOL, "frame " .. f .. ": capped")
    end
    t.raises("limit_scale: no bound given", "a bound is needed", rig.constraint, rig,
      "limit_scale", { joint = "Arm" })
    t.raises("bound on axis y is not positive", "scale bounds are positive", rig.constraint, rig,
      "limit_scale", { joint = "Arm", min = { y = -1 } })
    t.raises("has no Yscale channel", "channels checked", rig.constraint, rig, "limit_scale",
      { joint = "Root", max = { y = 2 } })
  end,
})

-- rigel.Clip curve methods (core/curves): reduce, filter, mirror, loop, trim, save with reduced
-- keys.
local rigel = require("rigel")
local t = require("harness")
local samples = arg[3]

local function walk() return rigel.load(samples .. "/basics/walk.bvh"):clip() end

t.run({
  reduce = function()
    local clip = walk()
    local r = clip:reduce()
    t.ok(r.keys < r.dense_keys, "fewer keys than tracks x frames")
    t.ok(r.max_error <= 0.1, "within the default bound (mm)")
    t.eq(r.rotation.Hips[1], 1, "keys are 1-based frames, the first frame first")
    t.eq(r.rotation.Hips[#r.rotation.Hips], clip.num_frames, "and the last frame last")
    local loose = clip:reduce{max_error = 5, virtual_vertex = 0, format = "fbx"}
    t.ok(loose.keys < r.keys, "a looser bound keeps fewer keys")
    t.raises("field 'max_error' must be > 0", "bound checked", clip.reduce, clip, {max_error = 0})
    t.raises("unknown option 'error'", "options checked", clip.reduce, clip, {error = 1})
    t.raises("invalid value 'bvh'", "formats checked", clip.reduce, clip, {format = "bvh"})
  end,

  save_reduced = function()
    local clip = walk()
    local before, after, err = clip:save(arg.out .. "/walk_reduced.fbx", {reduce_keys = true})
    t.ok(after < before, "the file holds fewer keys")
    t.ok(err <= 0.1, "within the bound")
    local back = rigel.load(arg.out .. "/walk_reduced.fbx"):clip()
    t.eq(back.num_frames, clip.num_frames, "reads back with every frame")
    t.eq(clip:save(arg.out .. "/walk_dense.glb"), nil, "no figures without reduce_keys")
  end,

  filter = function()
    local clip = walk()
    local smooth = clip:filter{cutoff = 4, order = 2}
    t.eq(smooth.num_frames, clip.num_frames, "same frames")
    local spine = clip:filter{cutoff = 4, joints = {"Spine"}, keep_contacts = false}
    t.near(spine:get(10, "Head", "Xrotation"), clip:get(10, "Head", "Xrotation"), 1e-12,
      "joints not chosen are left alone")
    t.raises("field 'cutoff' must be in (0, 11.99", "cutoff below half the frame rate", clip.filter,
      clip, {cutoff = 20})
    t.raises("no joint 'Nope'", "joint names checked", clip.filter, clip, {joints = {"Nope"}})
  end,

  mirror = function()
    local clip = walk()
    local once = clip:mirror()
    local twice = once:mirror()
    for f = 1, clip.num_frames, 7 do
      local a, b = clip:pose(f), twice:pose(f)
      for _, j in ipairs({"Hips", "LeftHand", "RightToe"}) do
        t.ok((a:world_position(j) - b:world_position(j)):length() < 1e-9, "twice is the clip back")
      end
    end
    local p, m = clip:pose(5), once:pose(5)
    t.near(m:world_position("LeftFoot").y, p:world_position("RightFoot").y, 1e-9,
      "the mirrored left foot is where the right foot was (height)")
  end,

  loop_and_trim = function()
    local clip = walk()
    local part = clip:trim{first = 5, last = 40}
    t.eq(part.num_frames, 36, "frames 5..40")
    local timed = clip:trim{start = 0.5, stop = 1.0}
    t.eq(timed.num_frames, 13, "0.5 s .. 1.0 s at 24 frames/s")
    local loop = part:loop{frames = 8}
    t.near(loop:get(36, "LeftLeg", "Xrotation"), part:get(1, "LeftLeg", "Xrotation"), 1e-6,
      "the last frame meets the first")
    t.raises("give frames (first, last) or seconds (start, stop), not both", "one kind of range",
      clip.trim, clip, {first = 1, stop = 2})
    t.raises("field 'frames'", "blend frames checked", part.loop, part, {frames = 36})
  end,
})

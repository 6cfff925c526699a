-- rigel.Clip: frames, frame time, poses in and out, get/set, slice, resample, save.
local rigel = require("rigel")
local t = require("harness")
local dir = arg[1]

local function fresh() return rigel.load(dir .. "/fixtures/chain.bvh") end

t.run({
  properties = function()
    local clip = fresh():clip()
    t.eq(clip.num_frames, 4, "four frames")
    t.eq(#clip, 4, "# is the frame count")
    t.near(clip.frame_time, 0.1, 1e-12, "frame time")
    t.near(clip.frame_rate, 10, 1e-9, "frame rate")
    t.near(clip.duration, 0.3, 1e-12, "duration = (frames - 1) * frame time")
    t.eq(clip.num_channels, 18, "row width")
    t.eq(clip.skeleton.num_joints, 5, "clip knows its skeleton")
  end,

  get_set = function()
    local clip = fresh():clip()
    t.near(clip:get(2, "Root", "Zrotation"), 90, 1e-9, "get in degrees")
    clip:set(1, "Upper", "Xrotation", 30)
    t.near(clip:get(1, "Upper", "Xrotation"), 30, 1e-9, "set then get")
    t.near(clip:pose(1):get("Upper", "Xrotation"), 30, 1e-9, "pose sees the change")
    t.raises("frame 5 out of range [1, 4]", "frame range", clip.get, clip, 5, "Root", "Xposition")
    t.raises("frame 0 out of range [1, 4]", "frames are 1-based", clip.pose, clip, 0)
    t.raises("frame must be an integer", "fractional frame", clip.pose, clip, 1.5)
  end,

  set_pose = function()
    local clip = fresh():clip()
    local p = clip:pose(2)
    p:set("Lower", "Zrotation", 45)
    clip:set_pose(4, p)
    t.near(clip:get(4, "Lower", "Zrotation"), 45, 1e-9, "set_pose writes the whole row")
    t.near(clip:get(4, "Root", "Xposition"), 1, 1e-12, "including the root")
    local other = rigel.pose(fresh().skeleton)
    t.raises("Pose of another skeleton", "skeleton must match", clip.set_pose, clip, 1, other)
  end,

  scene_clips_are_views = function()
    local scene = fresh()
    local a = scene:clip(1)
    a:set(1, "Root", "Xposition", 7)
    t.near(scene.clips[1]:get(1, "Root", "Xposition"), 7, 0, "clip edits show in the scene")
    t.ok(scene:clip() == scene.clips[1], "same clip twice compares equal")
    t.raises("clip 2 out of range [1, 1]", "clip index", scene.clip, scene, 2)
  end,

  slice = function()
    local clip = fresh():clip()
    local s = clip:slice(2, 3)
    t.eq(s.num_frames, 2, "two frames")
    t.near(s:get(1, "Root", "Zrotation"), 90, 1e-9, "first slice frame is frame 2")
    t.near(s.frame_time, 0.1, 0, "frame time kept")
    s:set(1, "Root", "Zrotation", 0)
    t.near(clip:get(2, "Root", "Zrotation"), 90, 1e-9, "a slice is a copy")
    t.eq(clip:slice(3).num_frames, 2, "slice to the end")
    t.raises("last frame 1 is before first frame 2", "order", clip.slice, clip, 2, 1)
  end,

  resample = function()
    local clip = fresh():clip()
    local r = clip:resample(20)
    t.eq(r.num_frames, 7, "0.3 s at 20 fps = 7 frames")
    t.near(r.frame_time, 0.05, 1e-12, "new frame time")
    t.near(r:get(3, "Root", "Zrotation"), 90, 1e-9, "frame 3 at t=0.1 is source frame 2")
    t.near(r:get(2, "Root", "Zrotation"), 45, 1e-9, "halfway rotation by slerp")
    t.near(r:get(2, "Root", "Xposition"), 0.5, 1e-12, "halfway position by lerp")
    t.near(r:get(6, "Tip", "Zrotation"), 22.5, 1e-9, "two-channel joint lerps")
    t.raises("frame rate must be in (0, 10000]", "positive rate", clip.resample, clip, 0)
  end,

  new_and_resize = function()
    local skel = fresh().skeleton
    local c = rigel.clip(skel, 3, 1 / 24)
    t.eq(c.num_frames, 3, "new clip frames")
    t.near(c.frame_rate, 24, 1e-9, "new clip rate")
    c:resize(5)
    t.eq(#c, 5, "resize grows")
    c:set_frame_time(0.5)
    t.near(c.duration, 2, 1e-12, "set_frame_time")
    t.raises("frame time must be > 0 seconds", "frame time checked", c.set_frame_time, c, -1)
    t.raises("frame count -1 out of range", "count checked", rigel.clip, skel, -1)
  end,

  save_and_reload = function()
    local clip = fresh():clip()
    clip:set(3, "Lower", "Yrotation", 12.5)
    local path = arg.out .. "/clip_roundtrip.bvh"
    clip:save(path)
    local back = rigel.load(path):clip()
    t.eq(back.num_frames, 4, "frames survive")
    t.near(back:get(3, "Lower", "Yrotation"), 12.5, 1e-4, "values survive")
    t.eq(table.concat(back.skeleton:channels("Side"), " "),
      "Xposition Zrotation Yrotation Xrotation", "layout survives")
    rigel.save(arg.out .. "/clip_roundtrip2.bvh", clip)
    t.eq(rigel.load(arg.out .. "/clip_roundtrip2.bvh"):clip().num_frames, 4, "rigel.save works too")
    t.raises("unsupported output format '.xyz'", "unknown extension", clip.save, clip,
      arg.out .. "/x.xyz")
  end,
})

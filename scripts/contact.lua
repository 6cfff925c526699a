--- Foot-contact detection: a thin wrapper over rigel.contacts (core/retarget/contacts.h, the one
--- contact rule rigel has; the retargeter's IK clean-up uses the same).
---
---   local contact = require("contact")
---   local flags = contact.detect(clip, "LeftFoot")            -- flags[f] = true when planted
---   for _, c in ipairs(contact.intervals(flags)) do print(c.first, c.last) end
---   local pins = contact.pins(clip, "LeftFoot", flags)         -- pins[f] = vec3 or nil
local rigel = require("rigel")
local M = {}

--- Up axis ("y" or "z") guessed from frame 1 by the core rule (rigel.up_axis: the larger of the
--- joints' Y and Z extents), and the figure's height along it.
function M.up_axis(clip)
  return rigel.up_axis(clip)
end

--- Per-frame contact flags for `joint`, and its world positions per frame. Planted when its
--- height above the lowest height it reaches in the clip is below `height` and its horizontal
--- speed below `speed` (units per second), for at least `min_frames` frames.
--- options: up ("x"/"y"/"z", default guessed), height (default 0.06 hip heights), speed (default
--- 0.35 hip heights per second), min_frames (default 3). The hip height is rigel.contacts'
--- (the upper legs' height above the ground in frame 1).
function M.detect(clip, joint, options)
  options = options or {}
  if options.up ~= nil and options.up ~= "x" and options.up ~= "y" and options.up ~= "z" then
    error("contact.detect: up must be 'x', 'y' or 'z'", 2)
  end
  -- Given thresholds are absolute (units, units/s): a scale of 1 makes rigel.contacts read them so.
  local absolute = options.height ~= nil or options.speed ~= nil
  local defaults
  if absolute then
    local _, info = rigel.contacts(clip, joint, { up = options.up, min_frames = 1 })
    defaults = info
  end
  local windows = rigel.contacts(clip, joint, {
    up = options.up,
    scale = absolute and 1 or nil,
    height = absolute and (options.height or defaults.height) or nil,
    speed = absolute and (options.speed or defaults.speed) or nil,
    min_frames = options.min_frames,
  })
  local flags, positions = {}, {}
  local pose = rigel.pose(clip.skeleton)
  for f = 1, clip.num_frames do
    flags[f] = false
    positions[f] = clip:pose(f, pose):world_position(joint)
  end
  for _, w in ipairs(windows) do
    for f = w.first, w.last do flags[f] = true end
  end
  return flags, positions
end

--- Runs of true flags as { {first = f, last = g}, ... }.
function M.intervals(flags)
  local out, start = {}, nil
  for f = 1, #flags + 1 do
    if flags[f] and not start then start = f end
    if not flags[f] and start then
      out[#out + 1] = { first = start, last = f - 1 }
      start = nil
    end
  end
  return out
end

--- Where each planted frame should hold the joint, by the rule the retargeter's IK clean-up uses:
--- the mean horizontal position over its contact, at the joint's own height in that frame (the
--- detector lets a planted foot move vertically, not horizontally). `up` ("x"/"y"/"z") defaults
--- to the guessed up axis. Returns pins[f] = vec3 for contact frames, nil elsewhere.
function M.pins(clip, joint, flags, positions, up)
  if not positions then _, positions = M.detect(clip, joint) end
  up = up or M.up_axis(clip)
  local pins = {}
  for _, c in ipairs(M.intervals(flags)) do
    local sum = rigel.vec3()
    for f = c.first, c.last do sum = sum + positions[f] end
    local mean = sum / (c.last - c.first + 1)
    for f = c.first, c.last do
      local p = positions[f]
      pins[f] = rigel.vec3(up == "x" and p.x or mean.x, up == "y" and p.y or mean.y,
        up == "z" and p.z or mean.z)
    end
  end
  return pins
end

return M

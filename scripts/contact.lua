--- Foot-contact detection from height and velocity.
---
---   local contact = require("contact")
---   local flags = contact.detect(clip, "LeftFoot")            -- flags[f] = true when planted
---   for _, c in ipairs(contact.intervals(flags)) do print(c.first, c.last) end
---   local pins = contact.pins(clip, "LeftFoot", flags)         -- pins[f] = vec3 or nil
local rigel = require("rigel")
local M = {}

local AXES = { x = 1, y = 2, z = 3 }

--- Up axis ("y" or "z") guessed from frame 1: the larger vertical extent of the joints.
function M.up_axis(clip)
  local pose = clip:pose(1)
  local lo, hi = { math.huge, math.huge, math.huge }, { -math.huge, -math.huge, -math.huge }
  for j = 1, clip.skeleton.num_joints do
    local p = pose:world_position(j)
    local v = { p.x, p.y, p.z }
    for a = 1, 3 do lo[a], hi[a] = math.min(lo[a], v[a]), math.max(hi[a], v[a]) end
  end
  return (hi[3] - lo[3] > hi[2] - lo[2]) and "z" or "y", math.max(hi[2] - lo[2], hi[3] - lo[3])
end

local function component(v, axis) return axis == 1 and v.x or axis == 2 and v.y or v.z end

--- Per-frame contact flags for `joint`: planted when its height is within `height` of the
--- lowest height it reaches in the clip and its speed is below `speed` (units per second).
--- options: up ("y"/"z", default guessed), height (default 5 % of the figure's height),
--- speed (default 50 % of the figure's height per second), min_frames (default 2: shorter
--- contacts are dropped).
function M.detect(clip, joint, options)
  options = options or {}
  local guessed, size = M.up_axis(clip)
  local up = AXES[options.up or guessed]
  if not up then error("contact.detect: up must be 'x', 'y' or 'z'", 2) end
  local height = options.height or 0.05 * size
  local speed = options.speed or 0.5 * size
  local min_frames = options.min_frames or 2
  local positions, lowest = {}, math.huge
  local pose = rigel.pose(clip.skeleton)
  for f = 1, clip.num_frames do
    positions[f] = clip:pose(f, pose):world_position(joint)
    lowest = math.min(lowest, component(positions[f], up))
  end
  local flags = {}
  for f = 1, clip.num_frames do
    local a, b = positions[math.max(f - 1, 1)], positions[math.min(f + 1, clip.num_frames)]
    local span = (math.min(f + 1, clip.num_frames) - math.max(f - 1, 1)) * clip.frame_time
    local v = span > 0 and a:distance(b) / span or 0
    flags[f] = component(positions[f], up) <= lowest + height and v <= speed
  end
  for _, c in ipairs(M.intervals(flags)) do
    if c.last - c.first + 1 < min_frames then
      for f = c.first, c.last do flags[f] = false end
    end
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

--- Where each planted frame should hold the joint: the mean position over its contact.
--- Returns pins[f] = vec3 for contact frames, nil elsewhere.
function M.pins(clip, joint, flags, positions)
  if not positions then _, positions = M.detect(clip, joint) end
  local pins = {}
  for _, c in ipairs(M.intervals(flags)) do
    local sum = rigel.vec3()
    for f = c.first, c.last do sum = sum + positions[f] end
    local mean = sum / (c.last - c.first + 1)
    for f = c.first, c.last do pins[f] = mean end
  end
  return pins
end

return M

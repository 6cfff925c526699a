--- Humanoid rig template: the rig most characters start from, for any skeleton the automatic
--- bone map classifies (scripts/names.lua, skeleton:humanoid()): CMU, Mixamo, CC, Daz, MakeHuman,
--- Xsens ... names alike. Each part is switched by an option:
---
---   feet    (default on)  both legs two-bone IK, each foot pinned on its contacts
---                         (scripts/contact.lua) and rolled over heel, ball and toe tip
---                         (rig:foot_roll); `roll = function(frame, side, pose) -> degrees`
---                         keys the roll (default 0: flat on the pin). `pin = false` plants
---                         the animated ankle instead of the contact pins; `pivots =
---                         function(skeleton, side, ankle, toe) -> options` replaces the pivots
---                         measured from frame 1 (rig:foot_roll options, ankle space).
---   hands   (default off) { left = {target = fn(frame, pose) -> vec3 | nil, pole = fn | nil},
---                           right = ... }: two-bone arm to the target, elbow towards the pole
---                         (default: the arm's own bend); nil on a frame releases the arm.
---   look_at (default off) { target = fn(frame, pose) -> vec3 } (or a vec3): the head aims its
---                         forward axis at a `LookAt` locator keyed there, its up axis at the
---                         world up (rig:constraint("aim")); `aim_axis`, `up_axis` (head space)
---                         replace the axes measured from the body at frame 1.
---   twist   (default on)  two roll bones added under each forearm (<ForeArm>Twist1/2) sharing
---                         the hand's twist, and beside each upper arm (<Arm>Twist1/2, under the
---                         shoulder, carried by a parent constraint) sharing the arm's twist from
---                         the shoulder (1/3, 2/3; `twist_weights` overrides).
---   props   (default on)  a prop joint (locator) under each hand, <Hand>Prop, that bakes with
---                         the hand; `prop_offset` (vec3, hand space) places it.
---
--- Joints are added with clip:add_joint / add_locator (core/skeleton_edit.h), so they are baked
--- and written to every format like the capture's own. A per-character rig overrides options:
---
---   local humanoid = require("rigs.humanoid")
---   return humanoid.rig({ look_at = { target = function(f, pose) ... end }, twist = false })
---
--- `edit(clip, map) -> clip` adds the character's own joints (clip:add_joint, ...) before the rig,
--- `setup(h)` (after the template's parts, before the bake: h.rig, h.clip, h.map, h.parts) and
--- `frame(frame, pose, rig, h)` (after the template's targets, each frame) add what differs.
local rigel = require("rigel")
local names = require("names")
local contact = require("contact")
local limbs = require("limbs")
local M = {}

M.defaults = { feet = true, hands = false, look_at = false, twist = true, props = true }

local function option(options, key)
  if options[key] == nil then return M.defaults[key] end
  return options[key]
end

-- The body's frame at frame 1: world up (from the up axis), the character's forward and left.
local function body_frame(clip, map)
  local up_axis = rigel.up_axis(clip)
  local up = up_axis == "z" and rigel.vec3(0, 0, 1) or rigel.vec3(0, 1, 0)
  local pose = clip:pose(1)
  local left = pose:world_position(map.left_upleg) - pose:world_position(map.right_upleg)
  left = (left - up * left:dot(up)):normalized()
  return { up = up, up_axis = up_axis, left = left, forward = left:cross(up):normalized(),
    pose = pose }
end

-- Adds a joint unless the skeleton has one of that name; returns the clip.
local function ensure(clip, spec, locator)
  if clip.skeleton:find(spec.name) then return clip end
  return locator and clip:add_locator(spec) or clip:add_joint(spec)
end

-- Two roll bones at 1/3 and 2/3 along the bone from `joint` to `child`, under `joint` (forearm:
-- they hang beside the hand, the twist driver) or, with `beside`, under `joint`'s parent with
-- position channels (upper arm: a parent constraint carries them with the arm, so that the twist
-- constraint's driver, the arm, is not above them).
local function add_twist_bones(clip, joint, child, beside)
  local sk = clip.skeleton
  local along = sk:rest_offset(child)
  local order = sk:rotation_order(joint) or "ZXY"
  local parent = beside and sk:parent(joint) or joint
  local base = beside and sk:rest_offset(joint) or rigel.vec3()
  for i = 1, 2 do
    clip = ensure(clip, { name = joint .. "Twist" .. i, parent = parent,
      offset = base + along * (i / 3), order = order, length = along * (1 / 3),
      channels = beside and "all" or "rotation" })
  end
  return clip
end

--- Adds the template's joints to `clip` (twist bones, props, the look-at locator) as the options
--- ask; returns the edited clip and the name map.
function M.prepare(clip, options)
  options = options or {}
  local map = names.resolve(clip.skeleton, options.convention)
  for _, side in ipairs({ "left", "right" }) do
    if option(options, "twist") and map[side .. "_forearm"] and map[side .. "_hand"] then
      clip = add_twist_bones(clip, map[side .. "_forearm"], map[side .. "_hand"])
      clip = add_twist_bones(clip, map[side .. "_arm"], map[side .. "_forearm"], true)
    end
    if option(options, "props") and map[side .. "_hand"] then
      clip = ensure(clip, { name = map[side .. "_hand"] .. "Prop", parent = map[side .. "_hand"],
        offset = options.prop_offset or rigel.vec3() }, true)
    end
  end
  if option(options, "look_at") then
    clip = ensure(clip, { name = "LookAt", parent = map.hips, channels = "position" }, true)
  end
  if options.edit then clip = options.edit(clip, map) end
  return clip, map
end

-- Foot pivots in the ankle's space from the skeleton at frame 1: the ball is the toe joint, the
-- toe tip its end site (or half a foot past the ball), the heel behind the ankle at the ball's
-- height, the edges beside the ball.
local function pivots(pose, body, sk, ankle, toe, side)
  local a, b = pose:world_position(ankle), pose:world_position(toe)
  local inv = pose:world_rotation(ankle):inverse()
  local tip
  for _, e in ipairs(sk:end_sites()) do
    if e.parent == toe then tip = pose:world_rotation(toe):rotate(e.offset) + b end
  end
  local length = (b - a):length()
  tip = tip or b + body.forward * (0.5 * length)
  local ball_height = (b - a):dot(body.up)
  local heel = a + body.up * ball_height - body.forward * (0.3 * length)
  local out = body.left * (side * 0.15 * length)
  local function here(p) return inv:rotate(p - a) end
  return { heel = here(heel), ball = here(b), toe = here(tip), inner = here(b - out),
    outer = here(b + out), side = inv:rotate(body.left), forward = inv:rotate(body.forward) }
end

-- Feet: two-bone legs pinned on their contacts, with a foot roll each.
local function setup_feet(h)
  local rig, clip, map, body = h.rig, h.clip, h.map, h.body
  local feet = {}
  for i, side in ipairs({ "left", "right" }) do
    local ankle, toe = map[side .. "_foot"], map[side .. "_toe"]
    local e = rig:effector(ankle, { type = "both" })
    rig:stage({ method = "two_bone", effectors = { e }, upper = map[side .. "_upleg"],
      lower = map[side .. "_leg"] })
    local roll
    if toe then
      local o = h.options.pivots and h.options.pivots(clip.skeleton, side, ankle, toe) or
        pivots(body.pose, body, clip.skeleton, ankle, toe, i == 1 and 1 or -1)
      o.toe_joint = toe
      roll = rig:foot_roll(e, o)
    end
    local flags, positions = contact.detect(clip, ankle, h.options.contact)
    local pins = h.options.pin == false and {} or
      contact.pins(clip, ankle, flags, positions, body.up_axis)
    -- A planted foot keeps the rotation it lands with over its whole contact.
    local rotations = {}
    for _, c in ipairs(contact.intervals(flags)) do
      local q = clip:pose(c.first):world_rotation(ankle)
      for f = c.first, c.last do rotations[f] = q end
    end
    feet[#feet + 1] = { side = side, ankle = ankle, effector = e, roll = roll, pins = pins,
      rotations = rotations, flags = flags }
  end
  return feet
end

local function setup_hands(h)
  local hands = {}
  for _, side in ipairs({ "left", "right" }) do
    local spec = h.options.hands[side]
    if spec then
      local leg = limbs.two_bone_leg(h.rig, { hip = h.map[side .. "_arm"],
        knee = h.map[side .. "_forearm"], ankle = h.map[side .. "_hand"],
        name = h.map[side .. "_hand"] .. ".reach" })
      hands[#hands + 1] = { side = side, limb = leg, spec = spec }
    end
  end
  return hands
end

local function setup_twist(h)
  local rig, map, weights = h.rig, h.map, h.options.twist_weights or { 1 / 3, 2 / 3 }
  local rest = rigel.pose(rig.skeleton)
  for _, side in ipairs({ "left", "right" }) do
    local arm = map[side .. "_arm"]
    local forearm, hand = map[side .. "_forearm"], map[side .. "_hand"]
    if forearm and hand then
      rig:twist({ driver = hand, joints = { forearm .. "Twist1", forearm .. "Twist2" },
        weights = weights })
      local reference = rig.skeleton:parent(arm)
      -- The upper arm's bone axis in the shoulder's space at rest.
      local axis = rest:world_rotation(reference):inverse():rotate(
        rest:world_position(forearm) - rest:world_position(arm))
      -- The upper-arm roll bones follow the arm (parent constraint), then take their share of
      -- its twist from the shoulder.
      for i = 1, 2 do rig:constraint("parent", { joint = arm .. "Twist" .. i, target = arm }) end
      rig:twist({ driver = arm, joints = { arm .. "Twist1", arm .. "Twist2" }, weights = weights,
        reference = reference, axis = axis })
    end
  end
end

local function setup_look_at(h)
  local head, spec = h.map.head, h.options.look_at
  local q = h.body.pose:world_rotation(head):inverse()
  local up = h.body.up
  h.rig:constraint("aim", { joint = head, target = "LookAt",
    aim_axis = type(spec) == "table" and spec.aim_axis or q:rotate(h.body.forward),
    up_axis = type(spec) == "table" and spec.up_axis or q:rotate(up), up_type = "world", up = up })
end

--- The template's rig on `clip` (already prepared): returns h = {rig, clip, map, body, parts}.
function M.setup(clip, map, options)
  options = options or {}
  local h = { clip = clip, map = map, options = options, parts = {} }
  h.rig = rigel.rig(clip.skeleton)
  h.body = body_frame(clip, map)
  if option(options, "feet") then h.parts.feet = setup_feet(h) end
  if option(options, "hands") then h.parts.hands = setup_hands(h) end
  if option(options, "twist") then setup_twist(h) end
  if option(options, "look_at") then setup_look_at(h) end
  if options.setup then options.setup(h) end
  return h
end

local function look_at_point(spec, frame, pose)
  if type(spec) ~= "table" then return spec end
  if type(spec.target) == "function" then return spec.target(frame, pose) end
  return spec.target
end

--- Sets the template's targets for one frame.
function M.frame(h, frame, pose, r)
  for _, foot in ipairs(h.parts.feet or {}) do
    local pin = foot.pins[frame]
    r:target(foot.effector, pin or pose:world_position(foot.ankle),
      pin and foot.rotations[frame] or pose:world_rotation(foot.ankle))
    if foot.roll then
      local roll = h.options.roll and h.options.roll(frame, foot.side, pose) or 0
      r:set_foot_roll(foot.roll, { roll = roll })
    end
  end
  for _, hand in ipairs(h.parts.hands or {}) do
    local target = hand.spec.target(frame, pose)
    if target then
      hand.limb:set(pose, target, hand.spec.pole and hand.spec.pole(frame, pose))
    else
      hand.limb:release()
    end
  end
  local look = option(h.options, "look_at")
  if look then pose:set_world_position("LookAt", look_at_point(look, frame, pose)) end
  if h.options.frame then h.options.frame(frame, pose, r, h) end
end

--- Prepares, sets up and bakes `clip`: returns the baked clip and the summary (rig:bake's).
function M.bake(clip, options)
  options = options or {}
  local prepared, map = M.prepare(clip, options)
  local h = M.setup(prepared, map, options)
  return h.rig:bake(prepared, function(frame, pose, r) M.frame(h, frame, pose, r) end)
end

--- A rig script for `rigel bake --rig`: function(scene, clip, ctx) baking with `options`.
function M.rig(options)
  return function(_, clip) return M.bake(clip, options) end
end

return M

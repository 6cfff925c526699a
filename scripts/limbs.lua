--- Limb helpers: two-bone legs with a pole from the knee's bend, arm chains, twist and spine
--- distribution, look-at heads. Each adds effectors and solver stages to a rigel.Rig and
--- returns a handle whose :set(...) places this frame's targets.
---
---   local limbs = require("limbs")
---   local leg = limbs.two_bone_leg(rig, { hip = "LeftUpLeg", knee = "LeftLeg", ankle = "LeftFoot" })
---   rig:bake(clip, function(f, pose) leg:set(pose, target_vec3) end)
local rigel = require("rigel")
local M = {}

-- Near straight (a bend under this share of the limb's length), the hip's hinge decides, blended
-- continuously; the retargeter's clean-up uses the same rule (core/retarget/cleanup.cc).
local HINGE_WEIGHT = 0.02

local function perpendicular(v, axis)
  local n = axis:dot(axis)
  return n > 0 and v - axis * (v:dot(axis) / n) or v
end

--- The direction the knee bends, in the hip joint's own frame, from the skeleton's rest pose:
--- the rest's own bend where the rest is bent (modelled knees and elbows often are), else
--- `fallback` (a world direction at rest, default +Z: knees forward in a Y-up, Z-forward skeleton).
function M.rest_hinge(skeleton, hip, knee, ankle, fallback)
  local rest = rigel.pose(skeleton)
  local h, k, a = rest:world_position(hip), rest:world_position(knee), rest:world_position(ankle)
  local bend = perpendicular(k - h, a - h)
  local hinge = rigel.vec3(fallback or { 0, 0, 1 })
  if bend:length() > HINGE_WEIGHT * (h:distance(k) + k:distance(a)) then
    hinge = bend:normalized()
  end
  return rest:world_rotation(hip):inverse() * hinge
end

--- World pole point from the current bend of hip-knee-ankle: the knee pushed away from the
--- hip-ankle line by `distance` (default: the thigh's length). Near straight, the hip's hinge
--- (`hinge`, in the hip's frame, default limbs.rest_hinge's) turned with the thigh takes over,
--- blended continuously, so a leg that straightens and bends again keeps its plane (a fixed
--- direction for an exactly straight leg flipped the knee when the thigh had turned).
function M.knee_pole(pose, hip, knee, ankle, distance, fallback, hinge)
  local h, k, a = pose:world_position(hip), pose:world_position(knee), pose:world_position(ankle)
  local axis = a - h
  local length = h:distance(k) + k:distance(a)
  distance = distance or h:distance(k)
  hinge = hinge or M.rest_hinge(pose.skeleton, hip, knee, ankle, fallback)
  local dir = length > 0 and perpendicular(k - h, axis) * (1 / length) or rigel.vec3(0, 0, 0)
  local turned = perpendicular(pose:world_rotation(hip) * hinge, axis)
  if turned:length() > 1e-9 then dir = dir + turned:normalized() * HINGE_WEIGHT end
  if dir:length() < 1e-9 then dir = rigel.vec3(fallback or { 0, 0, 1 }) end
  return k + dir:normalized() * distance
end

--- Two-bone leg (or arm): a position effector on `ankle`, a pole effector on the
--- hip-knee plane and a "two_bone" stage. options: hip, knee, ankle (joints), name (effector
--- prefix, default the ankle's name), offset (vec3 in the ankle's space).
--- handle:set(pose, target [, pole]) sets this frame's goal; the pole defaults to the pose's own
--- knee direction, so the knee keeps bending the way the animation bends it.
--- handle:release() switches the leg off for this frame (blend 0); set() switches it on again.
function M.two_bone_leg(rig, options)
  assert(options and options.hip and options.knee and options.ankle,
    "two_bone_leg needs {hip = ..., knee = ..., ankle = ...}")
  local name = options.name or rig.skeleton:name(options.ankle)
  local effector = rig:effector(options.ankle, { name = name, offset = options.offset })
  local pole = rig:effector(options.ankle, { type = "pole", name = name .. ".pole",
    root = options.hip, mid = options.knee })
  rig:stage({ method = "two_bone", effectors = { effector, pole }, upper = options.hip,
    lower = options.knee })
  local handle = { effector = effector, pole = pole, rig = rig, options = options,
    hinge = M.rest_hinge(rig.skeleton, options.hip, options.knee, options.ankle) }
  function handle:set(pose, target, pole_point)
    local o = self.options
    pole_point = pole_point or M.knee_pole(pose, o.hip, o.knee, o.ankle, nil, nil, self.hinge)
    self.rig:blend(self.effector, 1):blend(self.pole, 1)
    self.rig:target(self.effector, target):target(self.pole, pole_point)
  end
  function handle:release()
    self.rig:blend(self.effector, 0):blend(self.pole, 0)
  end
  return handle
end

--- Arm chain solved iteratively: a position effector on `hand` (optionally with orientation)
--- moving the joints from `shoulder` down. options: shoulder, hand, name, orientation (bool),
--- method (default "dls_adaptive"), weight, priority.
function M.arm_chain(rig, options)
  assert(options and options.shoulder and options.hand, "arm_chain needs {shoulder = ..., hand = ...}")
  local effector = rig:effector(options.hand, { name = options.name,
    type = options.orientation and "both" or "position", weight = options.weight,
    priority = options.priority })
  rig:stage({ method = options.method or "dls_adaptive", effectors = { effector },
    chain_root = options.shoulder, max_iterations = options.max_iterations or 50 })
  local handle = { effector = effector, rig = rig }
  function handle:set(target, orientation)
    self.rig:blend(self.effector, 1):target(self.effector, target, orientation)
  end
  function handle:release() self.rig:blend(self.effector, 0) end
  return handle
end

--- Twist distribution, or a rotation spread over a chain.
---
--- limbs.distribute(rig, options) is rig:twist(options) (docs/constraints.md): the driver's twist
--- about its bone axis shared over twist joints by weight, evaluated by rig:solve and rig:bake;
--- returns the constraint's handle.
---   limbs.distribute(rig, { driver = "RightHand", joints = { "RightForeArmTwist1",
---     "RightForeArmTwist2" }, weights = { 0.33, 0.66 } })
---
--- limbs.distribute(pose, joints, rotation) spreads a rotation over a chain of joints on a pose:
--- each joint's local rotation turns by an equal share of `rotation` (a quat), so a spine bends
--- smoothly instead of at one joint. Needs three rotation channels on every joint.
function M.distribute(pose, joints, rotation)
  if type(joints) == "table" and joints.driver ~= nil then return pose:twist(joints) end
  local share = rigel.quat():slerp(rotation, 1 / #joints)
  for _, joint in ipairs(joints) do
    pose:set_local_rotation(joint, pose:local_rotation(joint) * share)
  end
  return pose
end

--- Makes a rig bend a spine evenly: equal strength on every joint and a pull towards the
--- animated angles (preferred values with `gain`, default 0.1) taken from `pose`.
function M.spine(rig, pose, joints, gain)
  for _, joint in ipairs(joints) do
    rig:strength(joint, 1)
    for _, channel in ipairs(rig.skeleton:channels(joint)) do
      if channel:find("rotation") then
        rig:prefer(joint, channel, pose:get(joint, channel), gain or 0.1)
      end
    end
  end
end

--- Look-at: an aim effector turning `head` (down from `chain_root`, default the head itself)
--- so its `axis` (head space, default +Z) points at a target. handle:set(point).
function M.look_at(rig, options)
  assert(options and options.head, "look_at needs {head = ...}")
  local effector = rig:effector(options.head, { type = "aim", name = options.name,
    aim_axis = options.axis or { 0, 0, 1 }, weight = options.weight })
  rig:stage({ method = "dls_adaptive", effectors = { effector },
    chain_root = options.chain_root or options.head, max_iterations = 50 })
  local handle = { effector = effector, rig = rig }
  function handle:set(point) self.rig:blend(self.effector, 1):target(self.effector, point) end
  function handle:release() self.rig:blend(self.effector, 0) end
  return handle
end

--- Both legs pinned on their foot contacts: for "left" and "right", a two_bone_leg from the
--- joints `j` names (canonical keys <side>_upleg, <side>_leg, <side>_foot, as names.resolve
--- returns) and the foot's contacts on `clip` (scripts/contact.lua: flags, positions, pins).
--- `options` go to contact.detect. Returns the list of leg handles, each with .foot, .flags,
--- .positions and .pins added; limbs.pin_legs(legs, pose, frame) sets their goals per frame.
function M.pinned_legs(rig, clip, j, options)
  local contact = require("contact")
  local legs = {}
  for _, side in ipairs({ "left", "right" }) do
    local foot = j[side .. "_foot"]
    local leg = M.two_bone_leg(rig, { hip = j[side .. "_upleg"], knee = j[side .. "_leg"],
      ankle = foot })
    leg.flags, leg.positions = contact.detect(clip, foot, options)
    leg.pins = contact.pins(clip, foot, leg.flags, leg.positions)
    leg.foot = foot
    legs[#legs + 1] = leg
  end
  return legs
end

--- Sets this frame's goals of pinned_legs' legs: planted feet hold their pin, free feet keep the
--- animated position.
function M.pin_legs(legs, pose, frame)
  for _, leg in ipairs(legs) do
    leg:set(pose, leg.pins[frame] or pose:world_position(leg.foot))
  end
end

return M

-- Checks a clip baked by rig.lua against its source, by forward kinematics on the files alone
-- (nothing read from rigel's report): the prop's hold and hand switch, the feet's pivots, the
-- twist shares and the head's aim. Prints each measure; fails (non-zero exit) past a tolerance.
-- usage: rigel run check.lua BAKED.bvh SOURCE.bvh (SOURCE: samples/cmu_walk/walk.bvh)
local rigel = require("rigel")
local baked = rigel.load(arg[1]):clip()
local source = rigel.load(arg[2]):clip()
assert(baked.num_frames == source.num_frames, "frame counts differ")
local n = baked.num_frames
local failures = 0
local function check(ok, what, value)
  print(string.format("%-58s %s  %.3g", what, ok and "ok  " or "FAIL", value))
  if not ok then failures = failures + 1 end
end

-- No NaN or Inf anywhere.
local finite = true
for f = 1, n do
  for _, v in ipairs(baked:pose(f):values()) do
    if v ~= v or v == math.huge or v == -math.huge then finite = false end
  end
end
check(finite, "every value finite", 0)

-- 1. The prop keeps its offset to the right hand on frames 1..19, to the left hand from 20 on,
--    and its world transform is continuous at the switch.
local function relative(pose, parent, joint)
  local inv = pose:world_rotation(parent):inverse()
  return inv * pose:world_rotation(joint),
      inv:rotate(pose:world_position(joint) - pose:world_position(parent))
end
local function hold(first, last, hand)
  local q0, p0 = relative(baked:pose(first), hand, "Prop")
  local worst = 0
  for f = first, last do
    local q, p = relative(baked:pose(f), hand, "Prop")
    worst = math.max(worst, p:distance(p0), q:angle_to(q0) * 0.01)
  end
  return worst
end
local right_hold, left_hold = hold(1, 19, "RightHand"), hold(20, n, "LeftHand")
check(right_hold < 1e-6, "prop held by the right hand, frames 1-19 (units)", right_hold)
check(left_hold < 1e-6, "prop held by the left hand, frames 20-" .. n .. " (units)", left_hold)
do -- at frame 20 the prop is where the right hand would have carried it
  local q0, p0 = relative(baked:pose(1), "RightHand", "Prop")
  local pose = baked:pose(20)
  local r = pose:world_rotation("RightHand")
  local jump = pose:world_position("Prop"):distance(pose:world_position("RightHand") + r:rotate(p0))
  check(jump < 1e-6, "prop continuous at the switch (units)", jump)
  -- rig.lua adds the prop under the hips at (-6, -2, 2) (the hips' space) and the constraint
  -- keeps that offset: at frame 1 it is there on the source's hips.
  local hips = source:pose(1)
  local start = hips:world_position("Hips") + hips:world_rotation("Hips"):rotate({ -6, -2, 2 })
  local moved = baked:pose(1):world_position("Prop"):distance(start)
  check(moved < 1e-9, "prop starts where the rig put it (maintain offset)", moved)
end

-- 2. Feet: with the source's ankle as the planted foot, the pivot the roll turns about stays
--    planted: the heel on a heel roll, the ball (and the flat toes) over the ball, the toe tip
--    past the break. The roll is recovered from the files: the angle between the baked and the
--    planted foot.
local function foot(ankle, toe, phase)
  -- The rig's pivots (rig.lua): the ball at the toe joint, the tip at its end site.
  local ball = baked.skeleton:rest_offset(toe)
  local tip
  for _, e in ipairs(baked.skeleton:end_sites()) do
    if e.parent == toe then tip = ball + e.offset end
  end
  local heel = rigel.vec3(0, ball.y, -0.8)
  local worst, rolled, counts = 0, 0, { heel = 0, ball = 0, tip = 0 }
  for f = 1, n do
    local b, s = baked:pose(f), source:pose(f)
    local planted_q, planted_p = s:world_rotation(ankle), s:world_position(ankle)
    local q, p = b:world_rotation(ankle), b:world_position(ankle)
    local angle = q:angle_to(planted_q)
    rolled = math.max(rolled, angle)
    local function at(rot, pos, point) return pos + rot:rotate(point) end
    local t = ((f - 1) / 40 + phase) % 1
    local err
    if t < 0.2 and angle > 1e-9 then
      err, counts.heel = at(q, p, heel):distance(at(planted_q, planted_p, heel)), counts.heel + 1
    elseif t >= 0.4 and angle <= 30 then
      err = at(q, p, ball):distance(at(planted_q, planted_p, ball))
      -- the toes stay flat: the toe joint keeps the planted foot's toe rotation
      err = math.max(err, b:world_rotation(toe):angle_to(s:world_rotation(toe)) * 0.01)
      counts.ball = counts.ball + 1
    elseif t >= 0.4 then
      local tip_now = b:world_position(toe) + b:world_rotation(toe):rotate(tip - ball)
      err, counts.tip = tip_now:distance(at(planted_q, planted_p, tip)), counts.tip + 1
    else
      err = p:distance(planted_p)  -- flat: the ankle is the planted one
    end
    worst = math.max(worst, err)
  end
  check(worst < 1e-5, string.format("%s pivots planted (heel %d, ball %d, tip %d frames)", ankle,
    counts.heel, counts.ball, counts.tip), worst)
  check(rolled > 40, ankle .. " rolled up to (degrees)", rolled)
end
foot("LeftFoot", "LeftToeBase", 0)
foot("RightFoot", "RightToeBase", 0.5)

-- 3. Twist: each roll bone's twist about the forearm's bone axis (X) is its share of the hand's
--    (swing-twist decomposition of the local rotations, computed here).
local function twist(q)
  return 2 * math.atan(q.x, q.w)
end
local worst_share, hand_max = 0, 0
for f = 1, n do
  local pose = baked:pose(f)
  local h = twist(pose:local_rotation("RightHand"))
  hand_max = math.max(hand_max, math.abs(math.deg(h)))
  for i, w in ipairs({ 0.33, 0.66 }) do
    local got = twist(pose:local_rotation("RightForeArmTwist" .. i))
    worst_share = math.max(worst_share, math.abs(got - w * h))
  end
end
check(worst_share < 1e-6, "roll bones carry 33 % / 66 % of the hand's twist (rad)", worst_share)
check(hand_max > 40, "hand twist reached (degrees)", hand_max)

-- 4. The head's Z axis points at LookAt, its Y axis leans towards the world up.
local worst_aim, worst_up = 0, 0
for f = 1, n do
  local pose = baked:pose(f)
  local q = pose:world_rotation("Head")
  local aim = (pose:world_position("LookAt") - pose:world_position("Head")):normalized()
  worst_aim = math.max(worst_aim, math.acos(math.min(1, q:rotate({ 0, 0, 1 }):dot(aim))))
  local side = aim:cross(rigel.vec3(0, 1, 0)):normalized()
  worst_up = math.max(worst_up, math.abs(q:rotate({ 0, 1, 0 }):dot(side)))
end
check(worst_aim < 1e-6, "head aims at LookAt (rad)", worst_aim)
check(worst_up < 1e-6, "head's up axis in the plane of aim and world up", worst_up)

if failures > 0 then error(failures .. " check(s) failed", 0) end
print("prop_and_feet: all checks passed")

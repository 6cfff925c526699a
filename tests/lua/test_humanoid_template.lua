-- The humanoid template (scripts/rigs/humanoid.lua) on three characters of different naming from
-- the corpus (CMU cgspeed, MocapBank's Hips/Chest/LeftCollar/LeftShoulder/LeftElbow/LeftWrist,
-- Poser/Daz's hip/abdomen/rShldr/rForeArm/rHand), measured on the written files by this test's
-- own forward kinematics (nothing read from rigel's report or its Pose): foot slide on the
-- contacts, hand reach error, the prop's hold on the hand, the head's aim at the look-at point.
-- Skips (passes with a message) when the corpus is absent.
local rigel = require("rigel")
local t = require("harness")
local humanoid = require("rigs.humanoid")
local contact = require("contact")
local data = arg[2]
local out = arg.out

local CHARACTERS = {
  { name = "cmu", file = "cmu_cgspeed/01_01.bvh", frames = 600 },
  -- The corpus has no Mixamo file: the same CMU clip renamed to Mixamo's names
  -- ("mixamorig:LeftArm", ...) with clip:rename_joint, to show the template reads that naming.
  { name = "mixamo_names", file = "cmu_cgspeed/01_01.bvh", frames = 600, rename = "mixamo" },
  { name = "mocapbank", file = "mocapbank/test_mocapbank.bvh" },
  { name = "daz", file = "wild/Sensor-Guided-Living_vr/pirouette.bvh" },
}

-- Own FK: quaternions as {w, x, y, z}, vectors as {x, y, z}.
local function qmul(a, b)
  return { a[1] * b[1] - a[2] * b[2] - a[3] * b[3] - a[4] * b[4],
    a[1] * b[2] + a[2] * b[1] + a[3] * b[4] - a[4] * b[3],
    a[1] * b[3] - a[2] * b[4] + a[3] * b[1] + a[4] * b[2],
    a[1] * b[4] + a[2] * b[3] - a[3] * b[2] + a[4] * b[1] }
end
local function qrot(q, v)
  local p = qmul(qmul(q, { 0, v[1], v[2], v[3] }), { q[1], -q[2], -q[3], -q[4] })
  return { p[2], p[3], p[4] }
end
local function add(a, b) return { a[1] + b[1], a[2] + b[2], a[3] + b[3] } end
local function sub(a, b) return { a[1] - b[1], a[2] - b[2], a[3] - b[3] } end
local function len(a) return math.sqrt(a[1] ^ 2 + a[2] ^ 2 + a[3] ^ 2) end
local AXES = { X = 2, Y = 3, Z = 4 }
local function qinv(q) return { q[1], -q[2], -q[3], -q[4] } end
-- Twist angle of q about the unit axis a (swing-twist decomposition).
local function twist_about(q, a)
  return 2 * math.atan(q[2] * a[1] + q[3] * a[2] + q[4] * a[3], q[1])
end
local function wrap(x) return (x + math.pi) % (2 * math.pi) - math.pi end

-- World positions and rotations of every joint of `clip` at `frame`, from the skeleton's rest
-- offsets and orientations and the clip's channel values (degrees).
local function fk(clip, frame)
  local sk = clip.skeleton
  local pos, rot = {}, {}
  for j = 1, sk.num_joints do
    local name = sk:name(j)
    local offset = sk:rest_offset(j)
    local t3 = { offset.x, offset.y, offset.z }
    local rest = sk:rest_orientation(j)
    local q = { rest.w, rest.x, rest.y, rest.z }
    for _, ch in ipairs(sk:channels(j)) do
      local v = clip:get(frame, j, ch)
      local axis, kind = ch:sub(1, 1), ch:sub(2)
      if kind == "position" then
        t3[AXES[axis] - 1] = t3[AXES[axis] - 1] + v
      elseif kind == "rotation" then
        local r = { math.cos(math.rad(v) / 2), 0, 0, 0 }
        r[AXES[axis]] = math.sin(math.rad(v) / 2)
        q = qmul(q, r)
      end
    end
    local p = sk:parent(j)
    if p then
      pos[name] = add(pos[p], qrot(rot[p], t3))
      rot[name] = qmul(rot[p], q)
    else
      pos[name], rot[name] = t3, q
    end
  end
  return pos, rot
end

local function up_index(axis) return axis == "z" and 3 or 2 end

-- Largest horizontal drift of `joint` within each contact interval (from its first frame).
local function slide(frames_pos, joint, intervals, up)
  local worst = 0
  for _, c in ipairs(intervals) do
    local p0 = frames_pos[c.first][joint]
    for f = c.first, c.last do
      local d = sub(frames_pos[f][joint], p0)
      d[up] = 0
      worst = math.max(worst, len(d))
    end
  end
  return worst
end

local function run_character(c)
  local source = rigel.load(data .. "/" .. c.file):clip()
  if c.frames and #source > c.frames then source = source:slice(1, c.frames) end
  if c.rename then
    local names = require("names")
    for _, n in ipairs(source.skeleton:joints()) do
      local to = names.translate(n, "cmu", c.rename)
      if to then source = source:rename_joint(n, to) end
    end
    t.ok(source.skeleton:find("mixamorig:LeftForeArm"), "renamed to " .. c.rename .. " names")
  end
  local _, height = rigel.up_axis(source)
  local up = up_index(rigel.up_axis(source))
  local map = require("names").resolve(source.skeleton)
  -- Targets: the right hand reaches a point 10 % of the height above its animated place.
  local lift = height * 0.1
  local function reach(_, pose)
    local p = pose:world_position(map.right_hand)
    local d = rigel.vec3(0, 0, 0)
    if up == 3 then d = rigel.vec3(0, 0, lift) else d = rigel.vec3(0, lift, 0) end
    return p + d
  end
  local targets = {}
  local options = {
    hands = { right = { target = function(f, pose)
      targets[f] = reach(f, pose)
      return targets[f]
    end } },
    look_at = { target = function(_, pose)
      local h = pose:world_position(map.head)
      return h + (up == 3 and rigel.vec3(height, 0, 0) or rigel.vec3(0, 0, height))
    end },
  }
  local t0 = os.clock()
  local baked = humanoid.bake(source, options)
  local seconds = os.clock() - t0
  local path = out .. "/" .. c.name .. ".bvh"
  baked:save(path)
  local written = rigel.load(path):clip()
  -- Own FK over every frame of the written file and of the source.
  local wpos, wrot, spos = {}, {}, {}
  for f = 1, #written do
    wpos[f], wrot[f] = fk(written, f)
    spos[f] = fk(source, f)
  end
  local result = { frames = #written, seconds = seconds, height = height }
  -- Foot slide on the source's contacts (rigel's detector on the source; the drift measured here).
  result.slide_source, result.slide_baked = 0, 0
  for _, side in ipairs({ "left", "right" }) do
    local foot = map[side .. "_foot"]
    local flags = contact.detect(source, foot)
    local intervals = contact.intervals(flags)
    result.slide_source = math.max(result.slide_source, slide(spos, foot, intervals, up))
    result.slide_baked = math.max(result.slide_baked, slide(wpos, foot, intervals, up))
    result.contacts = (result.contacts or 0) + #intervals
  end
  -- Reach: the written hand against this frame's target, on the frames where the target is
  -- within the arm's length of the shoulder (upper arm + forearm, from the rest offsets; 1 %
  -- margin).
  result.reach = 0
  local reached, reachable = 0, 0
  local sk = written.skeleton
  local arm_len = sk:rest_offset(map.right_forearm):length() + sk:rest_offset(map.right_hand):length()
  for f = 1, #written do
    local tgt = targets[f]
    local goal = { tgt.x, tgt.y, tgt.z }
    if len(sub(goal, wpos[f][map.right_arm])) < 0.99 * arm_len then
      reachable = reachable + 1
      local e = len(sub(wpos[f][map.right_hand], goal))
      result.reach = math.max(result.reach, e)
      if e < 1e-3 * height then reached = reached + 1 end
    end
  end
  result.reachable = reachable / #written
  result.reached = reached / math.max(reachable, 1)
  -- Props: each hand's prop keeps its offset in the hand's frame (here: zero, at the wrist).
  result.prop = 0
  for f = 1, #written do
    for _, side in ipairs({ "left", "right" }) do
      local hand = map[side .. "_hand"]
      result.prop = math.max(result.prop, len(sub(wpos[f][hand .. "Prop"], wpos[f][hand])))
    end
  end
  -- Aim: angle between the head's aim axis (head space, as the template measured it at frame 1
  -- of the source) and the direction to LookAt.
  result.aim = 0
  local pose1 = source:pose(1)
  local q1 = pose1:world_rotation(map.head):inverse()
  local fwd = up == 3 and rigel.vec3(1, 0, 0) or rigel.vec3(0, 0, 1)
  local left = pose1:world_position(map.left_upleg) - pose1:world_position(map.right_upleg)
  local upv = up == 3 and rigel.vec3(0, 0, 1) or rigel.vec3(0, 1, 0)
  left = (left - upv * left:dot(upv)):normalized()
  fwd = left:cross(upv):normalized()
  local a = q1:rotate(fwd)
  for f = 1, #written do
    local dir = sub(wpos[f].LookAt, wpos[f][map.head])
    local axis = qrot(wrot[f][map.head], { a.x, a.y, a.z })
    local cos = (dir[1] * axis[1] + dir[2] * axis[2] + dir[3] * axis[3]) / len(dir) / len(axis)
    result.aim = math.max(result.aim, math.deg(math.acos(math.min(1, cos))))
  end
  -- Twist shares (BVH: rest orientations are identity, so rotations relative to the reference
  -- joint are relative to the rest pose): each roll bone's twist about the bone axis, measured
  -- from the reference joint, is its weight times the driver's (forearm: the hand's from the
  -- forearm; upper arm: the arm's from the shoulder).
  result.twist, result.twist_max = 0, 0
  for _, side in ipairs({ "left", "right" }) do
    for _, limb in ipairs({ { ref = sk:parent(map[side .. "_arm"]), driver = map[side .. "_arm"],
                              bone = map[side .. "_arm"], tip = map[side .. "_forearm"] },
                            { ref = map[side .. "_forearm"], driver = map[side .. "_hand"],
                              bone = map[side .. "_forearm"], tip = map[side .. "_hand"] } }) do
      local o = sk:rest_offset(limb.tip)
      local n = len({ o.x, o.y, o.z })
      local a = { o.x / n, o.y / n, o.z / n }
      local prev
      for f = 1, #written do
        local ref = qinv(wrot[f][limb.ref])
        -- Unwrapped from frame to frame, as a twist past 180 degrees keeps turning.
        local d = wrap(twist_about(qmul(ref, wrot[f][limb.driver]), a))
        if prev then d = prev + wrap(d - prev) end
        prev = d
        result.twist_max = math.max(result.twist_max, math.abs(d))
        for i, w in ipairs({ 1 / 3, 2 / 3 }) do
          local b = twist_about(qmul(ref, wrot[f][limb.bone .. "Twist" .. i]), a)
          result.twist = math.max(result.twist, math.abs(wrap(b - w * d)))
        end
      end
    end
  end
  -- The plausibility checks (core/check) of the bake against its source, on the source's joints
  -- (the bake is on the edited skeleton: rigel.check pairs it with the source joint for joint).
  local findings = rigel.check(source, baked)
  result.findings = #findings
  local seen = {}
  -- What the rig changes on purpose: the head turned to the look-at point (orientation, and the
  -- turn's speed as pops), the arm lifted to the target (limb_direction).
  local intended = { orientation = true, pops = true, limb_direction = true }
  result.unintended = 0
  for _, finding in ipairs(findings) do
    seen[#seen + 1] = finding.check
    if not intended[finding.check] then
      result.unintended = result.unintended + 1
      print("  " .. finding.check .. ": " .. finding.reason)
    end
  end
  result.finding_names = table.concat(seen, ", ")
  return result
end

local tests = {}
for _, c in ipairs(CHARACTERS) do
  tests[c.name] = function()
    local f = io.open(data .. "/" .. c.file)
    if not f then
      print("skipped " .. c.name .. ": corpus file " .. c.file .. " absent")
      return
    end
    f:close()
    local r = run_character(c)
    print(("%s: %d frames in %.2f s; %d contacts, foot slide %.4f -> %.4f (%.2f %% of height); " ..
      "target reachable on %.1f %% of frames, there reach worst %.2g (%.1f %% within 0.1 %% of the " ..
      "height); prop %.2g; aim worst %.2g deg; twist shares within %.2g rad (twists up to %.0f deg); %d plausibility findings (%s)"):format(c.name, r.frames,
      r.seconds, r.contacts, r.slide_source, r.slide_baked, 100 * r.slide_baked / r.height,
      100 * r.reachable, r.reach, 100 * r.reached, r.prop, r.aim, r.twist, math.deg(r.twist_max), r.findings, r.finding_names))
    t.ok(r.contacts > 0, c.name .. ": contacts found")
    t.ok(r.slide_baked < 1e-3 * r.height, c.name .. ": planted feet do not slide")
    t.ok(r.slide_baked < r.slide_source, c.name .. ": less slide than the source")
    t.ok(r.reachable > 0.5, c.name .. ": the target is reachable on most frames")
    t.ok(r.reached > 0.99, c.name .. ": the hand reaches every reachable target")
    t.ok(r.prop < 1e-6 * r.height, c.name .. ": the props stay in the hands")
    t.ok(r.aim < 1e-3, c.name .. ": the head aims at the look-at point")
    t.ok(r.twist < 1e-6, c.name .. ": roll bones carry 1/3 and 2/3 of the twists")
    t.eq(r.unintended, 0, c.name .. ": no plausibility finding beyond what the rig intends")
  end
end
t.run(tests)

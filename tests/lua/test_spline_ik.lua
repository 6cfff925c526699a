-- rig:constraint("spline_ik", ...): a tail fitted along a curve, checked by FK on the poses the
-- rig produces against curves evaluated here (Bezier by de Casteljau, centripetal Catmull-Rom by
-- the Barry-Goldman pyramid). Fixture fixtures/tail.bvh: Hips (6 ch) with Tail1..Tail4 (rotation
-- channels only; bones 4, 3.54, 3.02) and two 6-channel control joints Ctl1, Ctl2.
local rigel = require("rigel")
local t = require("harness")
local dir = arg[1]
local TOL = 1e-6

local function load()
  local clip = rigel.load(dir .. "/fixtures/tail.bvh"):clip()
  return clip, rigel.rig(clip.skeleton)
end

local TAIL = { "Tail1", "Tail2", "Tail3", "Tail4" }

local function lerp(a, b, u) return a + (b - a) * u end

-- A curve: segments and a point per parameter in [0, segments].
local function bezier(p)
  local n = (#p - 1) // 3
  return n, function(u)
    local k = math.min(math.floor(u), n - 1)
    local s = u - k
    local q = { p[3 * k + 1], p[3 * k + 2], p[3 * k + 3], p[3 * k + 4] }
    for level = 3, 1, -1 do
      for i = 1, level do q[i] = lerp(q[i], q[i + 1], s) end
    end
    return q[1]
  end
end

local function catmull_rom(p)
  local q = { p[1] * 2 - p[2] }
  for _, x in ipairs(p) do q[#q + 1] = x end
  q[#q + 1] = p[#p] * 2 - p[#p - 1]
  local n = #p - 1
  return n, function(u)
    local k = math.min(math.floor(u), n - 1)
    local P = { q[k + 1], q[k + 2], q[k + 3], q[k + 4] }
    local tk = { 0 }
    for i = 2, 4 do tk[i] = tk[i - 1] + math.sqrt(P[i]:distance(P[i - 1])) end
    local x = tk[2] + (u - k) * (tk[3] - tk[2])
    local function l(a, b, ta, tb) return a * ((tb - x) / (tb - ta)) + b * ((x - ta) / (tb - ta)) end
    local a1, a2, a3 = l(P[1], P[2], tk[1], tk[2]), l(P[2], P[3], tk[2], tk[3]), l(P[3], P[4], tk[3], tk[4])
    return l(l(a1, a2, tk[1], tk[3]), l(a2, a3, tk[2], tk[4]), tk[2], tk[3])
  end
end

-- Distance from x to the curve: dense samples, then a golden-section refinement.
local function distance_to(n, at, x)
  local best, best_d = 0, math.huge
  local dense = 2000
  for k = 0, n * dense do
    local d = at(k / dense):distance(x)
    if d < best_d then best, best_d = k, d end
  end
  local lo, hi = math.max(0, (best - 1) / dense), math.min(n, (best + 1) / dense)
  for _ = 1, 100 do
    local a, b = lo + (hi - lo) * 0.382, lo + (hi - lo) * 0.618
    if at(a):distance(x) < at(b):distance(x) then hi = b else lo = a end
  end
  return at((lo + hi) / 2):distance(x)
end

-- Checks a stretch-off fit of the tail on `pose`: Tail1 on the curve's start, Tail2..Tail4 on the
-- curve, the bone lengths of `before` kept.
local function expect_fitted(pose, before, n, at, label)
  t.vnear(pose:world_position("Tail1"), at(0), TOL, label .. ": the root on the curve's start")
  for i = 2, #TAIL do
    local x = pose:world_position(TAIL[i])
    t.near(distance_to(n, at, x), 0, TOL, label .. ": " .. TAIL[i] .. " on the curve")
    local was = before:world_position(TAIL[i]):distance(before:world_position(TAIL[i - 1]))
    t.near(x:distance(pose:world_position(TAIL[i - 1])), was, 1e-9, label .. ": length kept")
  end
end

t.run({
  bezier_through_fixed_points_by_solve = function()
    local clip, rig = load()
    local pose = clip:pose(2)
    local root = pose:world_position("Tail1")
    local p = { root, root + rigel.vec3(0, -2, -3), root + rigel.vec3(2, -3, -5),
      root + rigel.vec3(3, -2, -8), root + rigel.vec3(4, -1, -11), root + rigel.vec3(1, 2, -13),
      root + rigel.vec3(0, 3, -15) }
    local points = { "Tail1" }  -- the root cannot move: it is the first point
    for i = 2, #p do points[i] = p[i] end
    local h = rig:constraint("spline_ik", { joints = TAIL, points = points, curve = "bezier" })
    t.eq(h, 1, "the handle")
    local listed = rig:constraints()[1]
    t.eq(listed.kind, "spline_ik", "listed by kind")
    t.eq(listed.joint, "Tail1", "and by its root")
    local before = clip:pose(2)
    rig:solve(pose)
    local n, at = bezier(p)
    expect_fitted(pose, before, n, at, "bezier")
    -- Influence 0 leaves the pose.
    rig:set_influence(h, 0)
    local again = clip:pose(2)
    rig:solve(again)
    for _, j in ipairs(TAIL) do
      t.vnear(again:world_position(j), before:world_position(j), 1e-9, "influence 0: " .. j)
    end
  end,

  catmull_rom_through_joints_by_bake = function()
    local clip, rig = load()
    rig:constraint("spline_ik", { root = "Tail1", tip = "Tail4", points = { "Tail1", "Ctl1", "Ctl2" } })
    local baked = rig:bake(clip)
    for f = 1, clip.num_frames do
      local src = clip:pose(f)
      local n, at = catmull_rom({ src:world_position("Tail1"), src:world_position("Ctl1"),
        src:world_position("Ctl2") })
      expect_fitted(baked:pose(f), src, n, at, "frame " .. f)
    end
  end,

  ends_twist_rolls_to_the_end_up = function()
    local clip, rig = load()
    local pose = clip:pose(1)
    local root = pose:world_position("Tail1")
    -- A straight curve down -Z: the last bone's up (its Y) turns to the end's up (+X).
    rig:constraint("spline_ik", { joints = TAIL, points = { "Tail1", root + rigel.vec3(0, 0, -20) },
      twist = "ends", up_axis = { 0, 1, 0 }, up_start = rigel.vec3(0, 1, 0),
      up_end = rigel.vec3(1, 0, 0) })
    rig:solve(pose)
    t.vnear(pose:world_rotation("Tail1"):rotate({ 0, 1, 0 }), { 0, 1, 0 }, TOL, "start up")
    t.vnear(pose:world_rotation("Tail4"):rotate({ 0, 1, 0 }), { 1, 0, 0 }, TOL, "end up")
  end,

  errors = function()
    local clip, rig = load()
    t.raises("unknown option 'joint' (expected one of: joints, root, tip, points, curve, stretch, " ..
      "twist, up_axis, up_start, up_end, influence, after_stage)", "options listed",
      rig.constraint, rig, "spline_ik", { joint = "Tail1", points = { "Tail1", "Ctl1" } })
    t.raises("field 'curve': invalid value 'nurbs', expected one of: catmull_rom, bezier",
      "curve types listed", rig.constraint, rig, "spline_ik",
      { joints = TAIL, points = { "Tail1", "Ctl1" }, curve = "nurbs" })
    t.raises("field 'twist': invalid value 'spin', expected one of: keep, ends", "twist modes",
      rig.constraint, rig, "spline_ik", { joints = TAIL, points = { "Tail1", "Ctl1" }, twist = "spin" })
    t.raises("give the chain as 'joints' (root to tip) or as 'root' and 'tip'", "one chain form",
      rig.constraint, rig, "spline_ik", { joints = TAIL, root = "Tail1", points = { "Tail1", "Ctl1" } })
    t.raises("tip 'Ctl1' is not below root 'Tail1'", "tip below root", rig.constraint, rig,
      "spline_ik", { root = "Tail1", tip = "Ctl1", points = { "Tail1", "Ctl1" } })
    t.raises("field 'points'[2]: vec3 or joint name expected", "points checked", rig.constraint,
      rig, "spline_ik", { joints = TAIL, points = { "Tail1", true } })
    t.raises("spline_ik: a Bezier curve needs 3k + 1 points", "bezier count, from core",
      rig.constraint, rig, "spline_ik", { joints = TAIL, points = { "Tail1", "Ctl1", "Ctl2" },
      curve = "bezier" })
    t.raises("spline_ik: control point 2: joint 'Tail3' lies below the chain's root 'Tail1'",
      "control joints not on the chain", rig.constraint, rig, "spline_ik",
      { joints = TAIL, points = { "Tail1", "Tail3" } })
    t.raises("spline_ik: joint 'Tail2' has no Xposition channel", "stretch needs position channels",
      rig.constraint, rig, "spline_ik", { joints = TAIL, points = { "Tail1", "Ctl1" }, stretch = true })
    t.raises("spline_ik: chain joint 'Tail3' is not a child of 'Tail1'", "a chain",
      rig.constraint, rig, "spline_ik", { joints = { "Tail1", "Tail3" }, points = { "Tail1", "Ctl1" } })
    t.eq(rig.num_constraints, 0, "nothing added")
  end,
})

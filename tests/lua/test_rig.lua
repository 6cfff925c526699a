-- rigel.Rig: effectors, targets, limits (degrees), locks, strength, preferred angles, the solver
-- stack, rig:solve(pose) reports and the rig:bake(clip, fn) loop. Results are checked by FK.
-- Planar fixture (fixtures/planar.bvh, as samples/planar_chain), seed 002:
--   Base (Zrot) --15-- Middle (Zrot) --10-- Outer (Zrot) --5-- End Site
local rigel = require("rigel")
local t = require("harness")
local dir = arg[1]
local planar = dir .. "/fixtures/planar.bvh"
local chain = dir .. "/fixtures/chain.bvh"

local function planar_rig()
  local clip = rigel.load(planar):clip()
  local rig = rigel.rig(clip.skeleton)
  local tip = rig:effector("Outer", { end_site = true, axes = "xy" })
  return rig, tip, clip
end

t.run({
  effectors_and_names = function()
    local rig, tip = planar_rig()
    t.eq(tip, "Outer", "a position effector is named after its joint")
    t.eq(rig:effector("Outer", { type = "orientation" }), "Outer.orientation", "typed name")
    t.eq(rig:effector("Middle", { name = "knee", weight = 0.5, priority = 1 }), "knee",
      "explicit name")
    t.eq(rig.num_effectors, 3, "three effectors")
    t.eq(table.concat(rig:effectors(), ","), "Outer,Outer.orientation,knee", "in order")
    t.raises("effector 'Outer' already exists", "duplicate names refused", rig.effector, rig,
      "Outer")
    t.raises("no effector 'Outr' (closest: Outer", "closest effector names", rig.target, rig,
      "Outr", { 0, 0, 0 })
    t.raises("unknown option 'wieght' (expected one of: type, name,", "typo in an option",
      rig.effector, rig, "Base", { wieght = 1 })
    t.raises("invalid effector type 'grab', expected one of: position, orientation, both, aim, pole",
      "bad type", rig.effector, rig, "Base", { type = "grab" })
    t.raises("field 'weight': finite number expected, got string", "option types checked",
      rig.effector, rig, "Base", { weight = "heavy" })
    t.raises("joint 'Base' has no End Site", "end_site needs one", rig.effector, rig, "Base",
      { end_site = true, name = "b" })
    t.raises("a pole needs root and mid joints", "pole chain checked", rig.effector, rig, "Middle",
      { type = "pole" })
    local pos, rot, w = rig:get_target("knee")
    t.eq(pos, rigel.vec3(0, 0, 0), "default target")
    t.eq(w, 1, "default blend")
  end,

  seed_planar_example = function()
    -- 21 interpolated goals from the start to (-20, 5): every one reached, every method.
    for _, method in ipairs({ "dls_adaptive", "dls", "pinv", "svd", "qr", "transpose", "ccd" }) do
      local rig, tip, clip = planar_rig()
      rig:stage({ method = method, max_iterations = 20000, stall_iterations = 50,
        stall_fraction = 0, lambda = method == "dls" and 0.05 or 0.01 })
      local pose = clip:pose(1)
      local start = pose:end_position("Outer")
      local goal = rigel.vec3(-20, 5, 0)
      local worst = 0
      for f = 0, 20 do
        local target = start:lerp(goal, f / 20)
        rig:target(tip, target)
        local report = rig:solve(pose)
        worst = math.max(worst, pose:end_position("Outer"):distance(target))
        t.eq(report.residuals[tip].position <= 1e-5, true, method .. " residual frame " .. f)
      end
      t.near(worst, 0, 1e-5, method .. " reaches every goal (checked by FK)")
    end
  end,

  stage_restarts = function()
    -- restarts: each restart of a stage that stops above tolerance runs a fresh iteration budget.
    local counts = {}
    for _, restarts in ipairs({ 0, 3 }) do
      local rig, tip, clip = planar_rig()
      rig:stage({ method = "dls", max_iterations = 5, stall_iterations = 1000, restarts = restarts })
      rig:target(tip, { 100, 0, 0 })
      counts[restarts] = rig:solve(clip:pose(1)).iterations
    end
    t.eq(counts[0], 5, "no restart: one budget")
    t.eq(counts[3], 20, "three restarts: four budgets")
    local rig = planar_rig()
    t.raises("restarts", "restarts checked", rig.stage, rig, { restarts = -1 })
  end,

  report_fields = function()
    local rig, tip, clip = planar_rig()
    local pose = clip:pose(1)
    rig:target(tip, { 100, 0, 0 })
    local r = rig:solve(pose)
    t.ok(r.status == "unreachable" or r.status == "not_converged", "out of reach: " .. r.status)
    t.eq(r.converged, false, "converged flag")
    t.ok(r.iterations > 0, "iterations counted")
    t.near(r.residuals[tip].position, 70, 0.01, "residual = distance left (100 - 30)")
    t.near(r.max_position_error, r.residuals[tip].position, 0, "max over effectors")
    t.eq(type(r.message), "string", "message")
  end,

  limits_locks_strength = function()
    local rig, tip, clip = planar_rig()
    rig:limit("Middle", "Zrotation", -10, 10)
    local lo, hi = rig:get_limit("Middle", "Zrotation")
    t.near(lo, -10, 1e-12, "limits read back in degrees")
    t.near(hi, 10, 1e-12, "max too")
    local pose = clip:pose(1)
    rig:target(tip, { 8, 4, 0 })  -- close to the base: needs a strong bend
    local r = rig:solve(pose)
    local m = pose:get("Middle", "Zrotation")
    t.ok(m >= -10 - 1e-9 and m <= 10 + 1e-9, "the solve respects the limit (" .. m .. ")")
    t.ok(#r.on_limit >= 1, "report lists channels on a limit")
    t.eq(r.on_limit[1].joint, "Middle", "with the joint")
    t.eq(r.on_limit[1].channel, "Zrotation", "and the channel")
    t.raises("max -20.0 is below min 10.0", "min <= max", rig.limit, rig, "Middle", "Zrotation",
      10, -20)

    rig, tip, clip = planar_rig()
    rig:lock("Base")
    t.eq(rig:is_locked("Base", "Zrotation"), true, "lock a whole joint")
    pose = clip:pose(1)
    rig:target(tip, { 5, 20, 0 })
    rig:solve(pose)
    t.near(pose:get("Base", "Zrotation"), 22.5, 1e-12, "a locked channel never moves")
    rig:unlock("Base", "Zrotation")
    t.eq(rig:is_locked("Base", "Zrotation"), false, "unlock")
    rig:strength("Base", 0)
    pose = clip:pose(1)
    rig:solve(pose)
    t.near(pose:get("Base", "Zrotation"), 22.5, 1e-12, "strength 0 relaxes the joint")
    t.raises("strength must be >= 0", "strength checked", rig.strength, rig, "Base", -1)
    rig:prefer("Middle", "Zrotation", 30, 0.1)
    t.raises("gain must be >= 0", "gain checked", rig.prefer, rig, "Middle", "Zrotation", 0, -1)
  end,

  stages = function()
    local rig, tip = planar_rig()
    t.eq(rig:stage({ method = "ccd", effectors = { tip }, chain_root = "Middle" }), 1, "stage index")
    t.eq(rig.num_stages, 1, "one stage")
    t.raises("invalid solver method 'newton', expected one of: transpose, pinv, svd, qr, dls, "
      .. "dls_adaptive, ccd, two_bone", "methods listed", rig.stage, rig, { method = "newton" })
    t.raises("no effector 'hand'", "stage effectors checked", rig.stage, rig, { effectors = { "hand" } })
    t.raises("unknown option 'iterations'", "stage options checked", rig.stage, rig,
      { iterations = 3 })
    rig:clear_stages()
    t.eq(rig.num_stages, 0, "cleared")
  end,

  two_bone_with_pole = function()
    -- chain.bvh: Upper (ZXY) -- Lower (XYZ) -- Tip: a two-bone chain of lengths 5 and 2.
    local scene = rigel.load(chain)
    local rig = rigel.rig(scene.skeleton)
    local tip = rig:effector("Tip")
    local pole = rig:effector("Tip", { type = "pole", root = "Upper", mid = "Lower" })
    rig:stage({ method = "two_bone", effectors = { tip, pole } })
    local pose = scene:clip():pose(1)
    local goal = rigel.vec3(3, 14, 1)
    rig:target(tip, goal)
    rig:target(pole, { 0, 13, 10 })
    local r = rig:solve(pose)
    t.eq(r.status, "converged", "two-bone reaches a target in range")
    t.vnear(pose:world_position("Tip"), goal, 1e-6, "Tip on the goal (FK)")
    local u, m, e = pose:world_position("Upper"), pose:world_position("Lower"), pose:world_position("Tip")
    local normal = (m - u):cross(e - u)
    t.near(normal:dot(rigel.vec3(0, 13, 10) - u), 0, 1e-6, "the knee plane contains the pole")
  end,

  bake = function()
    local rig, tip, clip = planar_rig()
    local start = clip:pose(1):end_position("Outer")
    local goal = rigel.vec3(-20, 5, 0)
    local seen = {}
    local baked, summary = rig:bake(clip, function(frame, pose, r)
      seen[#seen + 1] = frame
      t.ok(r == rig, "callback gets the rig")
      r:target(tip, start:lerp(goal, (frame - 1) / 20))
      if frame == 21 then return false end
    end)
    t.eq(#seen, 21, "callback once per frame")
    t.eq(summary.frames, 21, "summary frames")
    t.eq(summary.skipped, 1, "returning false skips the solve")
    t.eq(summary.converged, 20, "the other frames converge")
    t.ok(summary.residual_max <= 1e-6 and summary.residual_max == summary.max_position_error,
      "residual_max is the largest position error")
    t.ok(summary.residual_mean <= summary.residual_max, "mean residual below the largest")
    t.near(summary.iterations_mean, summary.iterations / 20, 1e-12, "mean over solved frames")
    t.ok(summary.iterations_max >= summary.iterations_mean and summary.iterations_max > 0,
      "largest iteration count")
    t.eq(summary.frames_unreachable, 0, "every goal reachable")
    t.eq(summary.frames_with_limit_hits, 0, "no limits in this rig")
    t.eq(baked.num_frames, 21, "baked clip")
    t.ok(baked ~= clip, "a new clip")
    t.vnear(baked:pose(11):end_position("Outer"), start:lerp(goal, 0.5), 1e-5, "frame 11 baked")
    t.near(baked:get(21, "Base", "Zrotation"), 22.5, 1e-12, "skipped frame copied unchanged")
    t.near(clip:get(11, "Base", "Zrotation"), 22.5, 1e-12, "the source clip is untouched")
    t.raises("boom", "callback errors propagate", rig.bake, rig, clip, function() error("boom") end)
    local other = rigel.load(chain):clip()
    t.raises("Clip of another skeleton than the rig's", "skeleton checked", rig.bake, rig, other)
    local released = rig:bake(clip, function(f, pose) pose:release() end)
    t.eq(released.num_frames, 21, "releasing the callback's pose cannot break the loop")
  end,

  handles_and_number_targets = function()
    -- Effectors by 1-based handle and targets as three numbers give the same bake as names and
    -- vec3 values; the solve does not depend on whether world transforms were queried first.
    local rig, tip, clip = planar_rig()
    local start = clip:pose(1):end_position("Outer")
    local goal = rigel.vec3(-20, 5, 0)
    local by_name = rig:bake(clip, function(f, pose)
      rig:target(tip, start:lerp(goal, (f - 1) / 20))
    end)
    local by_handle = rig:bake(clip, function(f, pose)
      local p = start:lerp(goal, (f - 1) / 20)
      rig:target(1, p.x, p.y, p.z)
    end)
    local queried = rig:bake(clip, function(f, pose)
      local p = start:lerp(goal, (f - 1) / 20)
      pose:world_position("Outer")
      pose:world_rotation("Middle")
      rig:target(1, p.x, p.y, p.z)
    end)
    for f = 1, 21 do
      t.eq(by_handle:get(f, "Middle", "Zrotation"), by_name:get(f, "Middle", "Zrotation"),
        "frame " .. f .. ": handle = name")
      t.eq(queried:get(f, "Outer", "Zrotation"), by_name:get(f, "Outer", "Zrotation"),
        "frame " .. f .. ": world queries do not change the solve")
    end
    rig:target(1, 1, 2, 3)
    t.eq(rig:get_target(1), rigel.vec3(1, 2, 3), "number form sets the position")
    rig:target(1, 4, 5, 6, rigel.quat.euler("XYZ", 0, 0, 90))
    local pos, rot = rig:get_target(tip)
    t.eq(pos, rigel.vec3(4, 5, 6), "number form with an orientation")
    t.near(rot:angle_to(rigel.quat.axis_angle({ 0, 0, 1 }, 90)), 0, 1e-12, "orientation set")
    t.raises("bad argument #5 to '?' (number expected, got no value)", "three numbers",
      rig.target, rig, 1, 1, 2)
    t.raises("bad argument #4 to '?' (number expected, got string)", "numbers only",
      rig.target, rig, 1, 1, "2", 3)
    t.raises("bad argument #6 to '?' (quat expected, got vec3)", "orientation checked",
      rig.target, rig, 1, 1, 2, 3, rigel.vec3())
    t.raises("effector 2 out of range [1, 1]", "handles checked", rig.target, rig, 2, 1, 2, 3)
    t.raises("wrong number of arguments to '?' (expected at most 6, got 7)", "count checked",
      rig.target, rig, 1, 1, 2, 3, rigel.quat(), 1)
    -- An invalid rig can be solved again (and fixed) without crashing.
    local empty = rigel.rig(clip.skeleton)
    local p0 = clip:pose(1)
    t.raises("no task to solve", "empty rig refused", empty.solve, empty, p0)
    t.raises("no task to solve", "and refused again", empty.solve, empty, p0)
    empty:effector("Outer", { end_site = true, axes = "xy" })
    t.ok(empty:solve(p0).iterations >= 0, "solves once it has an effector")
    -- A pose whose world transforms are stale solves like a refreshed one.
    rig:target(tip, -10, 8, 0)
    local stale, fresh = clip:pose(1), clip:pose(1)
    stale:set("Base", "Zrotation", 40)
    fresh:set("Base", "Zrotation", 40)
    fresh:world_position("Outer")
    rig:solve(stale)
    rig:solve(fresh)
    t.eq(table.concat(stale:values(), ","), table.concat(fresh:values(), ","),
      "solve reads channels only")
    t.vnear(stale:end_position("Outer"), { -10, 8, 0 }, 1e-6, "and reaches the target")
  end,

  ik_fk_blend = function()
    -- chain.bvh's Upper -- Lower -- Tip solved towards a goal; rig:ik_blend interpolates the
    -- solved chain from the animated pose (0) to the solve (1), rotations slerped per joint.
    local scene = rigel.load(chain)
    local clip = scene:clip()
    local function limb_rig()
      local rig = rigel.rig(scene.skeleton)
      local tip = rig:effector("Tip", { end_site = true })
      rig:stage({ effectors = { tip }, chain_root = "Upper", max_iterations = 200 })
      return rig, tip
    end
    local fk = clip:pose(3)
    local goal = fk:end_position("Tip") + rigel.vec3(2, -3, 1.5)
    local function solved(blend, stage_blend)
      local rig, tip = limb_rig()
      rig:target(tip, goal):ik_blend(tip, blend)
      if stage_blend then rig:stage_ik_blend(1, stage_blend) end
      local pose = fk:copy()
      rig:solve(pose)
      return pose, rig
    end
    local ik = solved(1)
    t.vnear(ik:end_position("Tip"), goal, 1e-6, "full IK reaches the goal (FK)")
    local zero = solved(0)
    t.eq(table.concat(zero:values(), ","), table.concat(fk:values(), ","),
      "ik_blend 0: the animated pose exactly")
    for _, w in ipairs({ 0.5, 0.2 }) do
      local got = solved(w)
      for _, j in ipairs({ "Upper", "Lower" }) do
        local expected = fk:local_rotation(j):slerp(ik:local_rotation(j), w)
        t.near(got:local_rotation(j):angle_to(expected), 0, 1e-9,
          ("%s slerped at %.1f"):format(j, w))
      end
      -- Tip has two rotation channels (ZX): they lerp.
      for _, c in ipairs({ "Zrotation", "Xrotation" }) do
        local a, b = fk:get("Tip", c), ik:get("Tip", c)
        t.near(got:get("Tip", c), a + w * (b - a), 1e-9, "Tip " .. c .. " lerped")
      end
      t.eq(got:get("Root", "Xposition"), fk:get("Root", "Xposition"), "above the chain untouched")
    end
    local product = solved(0.5, 0.5)
    for _, j in ipairs({ "Upper", "Lower" }) do
      t.near(product:local_rotation(j):angle_to(fk:local_rotation(j):slerp(ik:local_rotation(j),
        0.25)), 0, 1e-9, j .. ": stage blend times effector blend")
    end
    local _, rig = solved(0.3)
    local _, _, weight, blend = rig:get_target("Tip")
    t.eq(weight, 1, "frame weight untouched")
    t.near(blend, 0.3, 0, "get_target returns the ik blend")
    -- frame_weight (alias blend) is a least-squares weight factor, not a blend: a lone effector
    -- at 0.5 still moves the full distance to its goal.
    local weighted, wtip = limb_rig()
    weighted:target(wtip, goal):frame_weight(wtip, 0.5)
    local pose = fk:copy()
    weighted:solve(pose)
    t.vnear(pose:end_position("Tip"), goal, 1e-6, "frame weight 0.5: the full distance")
    t.eq(select(3, weighted:blend(wtip, 0.25):get_target(wtip)), 0.25, "blend is frame_weight")
    -- Errors.
    t.raises("ik blend must be in [0, 1]", "range checked", weighted.ik_blend, weighted, wtip, 1.5)
    t.raises("ik blend must be in [0, 1]", "stage range checked", weighted.stage_ik_blend,
      weighted, 1, -0.1)
    t.raises("field 'ik_blend' must be in [0, 1]", "stage option checked", weighted.stage,
      weighted, { ik_blend = 2 })
    t.raises("stage 2 out of range", "stage index checked", weighted.stage_ik_blend, weighted, 2, 1)
    local poled = rigel.rig(scene.skeleton)
    local pole = poled:effector("Tip", { type = "pole", root = "Upper", mid = "Lower" })
    t.raises("a pole follows its limb", "poles are not blended", poled.ik_blend, poled, pole, 0.5)
    -- Keyed per frame in a bake: frame 1 at 0 is the clip, frame 4 at 1 the solve.
    local bake_rig, btip = limb_rig()
    local baked = bake_rig:bake(clip, function(frame, p, r)
      r:target(btip, p:end_position("Tip") + rigel.vec3(2, -3, 1.5))
      r:ik_blend(btip, (frame - 1) / 3)
    end)
    t.eq(table.concat(baked:pose(1):values(), ","), table.concat(clip:pose(1):values(), ","),
      "bake frame 1 (blend 0) is the clip's")
    t.vnear(baked:pose(4):end_position("Tip"), clip:pose(4):end_position("Tip") +
      rigel.vec3(2, -3, 1.5), 1e-6, "bake frame 4 (blend 1) reaches its goal")
  end,
})

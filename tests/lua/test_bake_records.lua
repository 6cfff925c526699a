-- rig:bake's per-frame records (the third value, also summary:records()): one per solved frame,
-- with the effector's target and residual. The residual is checked against the distance measured
-- here by FK on the baked clip, not against rigel's own summary.
-- Planar fixture (fixtures/planar.bvh): Base --15-- Middle --10-- Outer --5-- End Site (reach 30).
local rigel = require("rigel")
local t = require("harness")
local dir = arg[1]
local planar = dir .. "/fixtures/planar.bvh"

t.run({
  records = function()
    local clip = rigel.load(planar):clip()
    local rig = rigel.rig(clip.skeleton)
    local tip = rig:effector("Outer", { end_site = true, axes = "xy" })
    local start = clip:pose(1):end_position("Outer")
    -- Frames 1..21 go from the start towards (-40, 5), out of reach from about frame 15 on;
    -- frame 21 is skipped.
    local goal = rigel.vec3(-40, 5, 0)
    local targets = {}
    local baked, summary, records = rig:bake(clip, function(frame, pose, r)
      targets[frame] = start:lerp(goal, (frame - 1) / 20)
      r:target(tip, targets[frame])
      if frame == 21 then return false end
    end)
    t.eq(#records, 20, "one record per solved frame")
    t.eq(#summary:records(), 20, "the summary holds the same records")
    t.eq(records[21], nil, "nothing past the end")
    local unreachable = 0
    for i = 1, #records do
      local r = records[i]
      t.eq(r.frame, i, "frame numbers are the clip's")
      local e = r.effectors.Outer
      t.vnear(e.target, targets[i], 1e-12, "the target of that frame")
      t.ok(e.active, "the effector was on")
      -- The residual, measured here on the baked clip.
      local reached = baked:pose(i):end_position("Outer")
      local dx, dy = reached.x - targets[i].x, reached.y - targets[i].y
      t.near(e.position, math.sqrt(dx * dx + dy * dy), 1e-6, "residual of frame " .. i)
      if r.status == "unreachable" then
        unreachable = unreachable + 1
        t.ok(e.position > 1e-3, "an unreachable frame is short of its target")
      else
        t.ok(e.position <= 1e-6, "a converged frame is on its target")
      end
      t.ok(r.iterations >= 0 and r.swivel_jump == 0, "iterations; no limb, no swivel")
    end
    t.ok(unreachable > 0, "the far frames are unreachable")
    t.eq(unreachable, summary.unreachable, "the records agree with the summary's count")
    t.eq(rigel.bake_summary({ frames = 1 }):records(), nil, "a made-up summary has no records")
  end,
})

-- rigel.check(source, result [, options]): the plausibility checks of core/check on the walk
-- sample: an unchanged clip and a retarget onto itself pass, planted failures are named, and the
-- arguments are checked first.
local rigel = require("rigel")
local t = require("harness")
local samples = arg[3]
local walk = rigel.load(samples .. "/basics/walk.bvh")  -- in place
local cmu = rigel.load(samples .. "/cmu_walk/walk.bvh")  -- travels along +Z

local function names(findings)
  local list = {}
  for _, f in ipairs(findings) do list[#list + 1] = f.check end
  return table.concat(list, ",")
end

local tests = {
  errors = function()
    local clip = walk:clip()
    t.raises("bad argument #1 to 'rigel.check' (Clip or Scene expected, got Skeleton)", "source type",
      rigel.check, walk.skeleton, clip)
    t.raises("bad argument #2 to 'rigel.check' (Clip or Scene expected, got no value)", "result type",
      rigel.check, clip)
    t.raises("unknown option 'knd' (expected one of: kind, travel, scale, source_up, result_up, "
      .. "source_unit, result_unit, floor)", "unknown options list the valid ones",
      rigel.check, clip, clip, { knd = "bake" })
    t.raises("field 'kind': invalid value 'copy', expected one of: convert, bake, retarget", "kinds listed",
      rigel.check, clip, clip, { kind = "copy" })
    t.raises("check: scale must be finite and > 0", "scale checked", rigel.check, clip, clip, { scale = 0 })
  end,

  unchanged_passes = function()
    local findings, info = rigel.check(walk, walk:clip())
    t.eq(#findings, 0, "no finding: " .. names(findings))
    t.eq(info.suspect, false, "not suspect")
    t.eq(info.frames, 48, "frames")
    t.eq(info.humanoid, true, "a humanoid")
    t.eq(#info.ran, 9, "every check of a bake ran (limb directions are the rig's)")
    local _, convert = rigel.check(walk, walk:clip(), { kind = "convert" })
    t.eq(#convert.ran, 10, "every check of a convert ran")
  end,

  retarget_onto_itself_passes = function()
    local out = rigel.retarget(walk, walk)
    local findings, info = rigel.check(walk, out, { kind = "retarget" })
    t.eq(#findings, 0, "no finding: " .. names(findings))
    t.near(info.scale, 1, 1e-9, "scale from the figures")
  end,

  planted_failures_are_named = function()
    -- The root travels 10 times as far.
    local far = cmu:clip():copy()
    local start = far:get(1, "Hips", "Zposition")
    for f = 1, far.num_frames do
      far:set(f, "Hips", "Zposition", start + 10 * (far:get(f, "Hips", "Zposition") - start))
    end
    local findings = rigel.check(cmu, far)
    t.ok(names(findings):find("travel"), "travel named: " .. names(findings))
    -- A foot turned 80 degrees.
    local foot = walk:clip():copy()
    for f = 1, foot.num_frames do
      foot:set(f, "LeftFoot", "Xrotation", foot:get(f, "LeftFoot", "Xrotation") + 80)
    end
    findings = rigel.check(walk, foot)
    t.ok(names(findings):find("orientation"), "orientation named: " .. names(findings))
    t.ok(findings[1].frame >= 1 and findings[1].reason:find("limit"), "frame and reason given")
    -- Told the result is Z up: it lies on its side.
    findings = rigel.check(walk, walk:clip(), { result_up = "z" })
    t.ok(names(findings):find("height"), "height named: " .. names(findings))
    -- Told the result is in another unit than it is.
    findings = rigel.check(walk, walk:clip(), { scale = 10 })
    t.ok(names(findings):find("height"), "unit: height named: " .. names(findings))
  end,
}

t.run(tests)

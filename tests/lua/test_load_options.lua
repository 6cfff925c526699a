-- rigel.load(path, {bvh_translation = ..., unit = ...}): BVH position channel convention and unit.
-- Fixture fixtures/six_channels.bvh: Hips OFFSET (0,100,0) and Head OFFSET (0,60,0), both with
-- 6 channels restating their OFFSET (3ds Max Biped style). Read right, Head is at y = 160 on
-- frame 1; read as deltas every bone doubles: 320.
local rigel = require("rigel")
local t = require("harness")
local dir = arg[1]
local path = dir .. "/fixtures/six_channels.bvh"

local function head_y(scene)
  return scene:clip():pose(1):world_position("Head").y
end

local function has(warnings, needle)
  for _, w in ipairs(warnings) do
    if w:find(needle, 1, true) then return true end
  end
  return false
end

t.run({
  auto_replaces = function()
    local scene = rigel.load(path)
    t.near(head_y(scene), 160, 1e-9, "restated OFFSETs replace it")
    t.ok(has(scene.warnings, "estimated in from the body"), "unit estimate named")
  end,

  forced = function()
    t.near(head_y(rigel.load(path, { bvh_translation = "add" })), 320, 1e-9, "add doubles bones")
    t.near(head_y(rigel.load(path, { bvh_translation = "replace" })), 160, 1e-9, "replace")
  end,

  unit = function()
    local scene = rigel.load(path, { unit = "cm" })
    t.ok(not has(scene.warnings, "estimated"), "a stated unit is not estimated")
  end,

  axes = function()
    -- Issue 26: the scene says its axes and how they were found; up/forward override them.
    local inferred = rigel.load(path).axes
    t.eq(inferred.up, "+Y", "head over hips along +Y")
    t.eq(inferred.up_source, "inferred", "a BVH states no axes: inferred from the body")
    t.ok(has(rigel.load(path).warnings, "does not state its up axis"), "the guess is said")
    local given = rigel.load(path, { up = "z", forward = "-y" }).axes
    t.eq(given.up, "+Z", "--up z")
    t.eq(given.up_source, "user", "given by the user")
    t.eq(given.forward, "-Y", "--forward -y")
    t.raises("invalid value 'w'", "bad axis", rigel.load, path, { up = "w" })
  end,

  bad_options = function()
    t.raises("invalid value 'double', expected one of: auto, add, replace", "bad convention",
      rigel.load, path, { bvh_translation = "double" })
    t.raises("invalid value 'ft', expected one of: m, dm, cm, mm, in", "bad unit",
      rigel.load, path, { unit = "ft" })
    t.raises("unknown option 'units'", "typo in an option name", rigel.load, path, { units = "m" })
    t.raises("table expected", "options must be a table", rigel.load, path, 5)
  end,
})

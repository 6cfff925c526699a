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
    -- Any factor, as --unit-in takes it: scene:save writes metres, so Head (160 units up on
    -- frame 1) is 160 x 0.0254 = 4.064 m up in the saved glTF.
    for i, unit in ipairs({ "2.54cm", "0.0254", "in", 0.0254, "2.54 cm" }) do
      local s = rigel.load(path, { unit = unit })
      t.ok(not has(s.warnings, "estimated"), "a stated factor is not estimated: " .. tostring(unit))
      local out = arg.out .. "/unit_" .. i .. ".glb"
      s:save(out)
      t.near(head_y(rigel.load(out)), 4.064, 1e-6, "saved in metres (glTF floats): " .. tostring(unit))
    end
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
    t.raises("field 'unit': 'ft' is not a length unit (no number and not a unit name): give m, dm, cm, mm, in, or the length of one file unit as a number > 0",
      "bad unit", rigel.load, path, { unit = "ft" })
    t.raises("field 'unit': '2.54ft' is not a length unit (unknown unit 'ft' after the number)",
      "bad unit after a factor", rigel.load, path, { unit = "2.54ft" })
    t.raises("field 'unit': '0' is not a length unit (not > 0)", "zero", rigel.load, path,
      { unit = "0" })
    t.raises("field 'unit': -1", "negative number", rigel.load, path, { unit = -1 })
    t.raises("is not a length unit (metres per file unit must be finite and > 0)",
      "negative number: why", rigel.load, path, { unit = -1 })
    t.raises("field 'unit': string or number expected, got boolean", "wrong type", rigel.load,
      path, { unit = true })
    t.raises("unknown option 'units'", "typo in an option name", rigel.load, path, { units = "m" })
    t.raises("table expected", "options must be a table", rigel.load, path, 5)
  end,
})

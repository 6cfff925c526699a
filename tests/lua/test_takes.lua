-- Takes in Lua: rigel.save(path, {clip, ...}) writes several takes into one glTF or FBX file,
-- scene.clips lists them, scene:clip(name) picks one (an unknown name lists the takes).
local rigel = require("rigel")
local t = require("harness")
local samples = arg[3]
local out = arg.out

local walk = rigel.load(samples .. "/cmu_walk/walk.bvh"):clip()

local function two_takes()
  local a, b = walk:slice(1, 10), walk:slice(11, 40)
  a:set_name("start")
  b:set_name("loop")
  return a, b
end

t.run({
  glb_and_fbx_hold_every_take = function()
    local a, b = two_takes()
    for _, ext in ipairs({ "glb", "fbx" }) do
      local path = out .. "/two." .. ext
      rigel.save(path, { a, b })
      local scene = rigel.load(path)
      t.eq(scene.num_clips, 2, ext .. ": two takes")
      t.eq(scene.clips[1].name, "start", ext .. ": first take's name")
      t.eq(scene.clips[2].name, "loop", ext .. ": second take's name")
      t.eq(scene:clip("loop").num_frames, 30, ext .. ": picked by name")
      t.eq(scene:clip(1).num_frames, 10, ext .. ": picked by index")
      -- The second take's first frame is the walk's frame 11 (float precision in glTF), in
      -- metres: the BVH states no unit and rigel.load estimated the CMU ASF unit, 1/0.45 inch
      -- (the figure stands 24.5 units, head joint over the feet: 1.38 m).
      local p = scene:clip("loop"):pose(1):world_position("LeftFoot")
      local q = walk:pose(11):world_position("LeftFoot") * (0.0254 / 0.45)
      t.near((p - q):length(), 0, 1e-3 * 17, ext .. ": the take's values, in metres")
    end
  end,

  saved_in_the_units_the_scene_states = function()
    -- A unit given when loading goes with the skeleton to every clip on it: glTF is written in
    -- metres, FBX states it (both read back in metres here), BVH keeps the file's numbers.
    local cm = rigel.load(samples .. "/cmu_walk/walk.bvh", { unit = "cm" }):clip()
    local q = cm:pose(5):world_position("LeftFoot")
    for _, ext in ipairs({ "glb", "gltf", "fbx" }) do
      local path = out .. "/unit." .. ext
      cm:slice(5, 8):save(path)
      local p = rigel.load(path):clip():pose(1):world_position("LeftFoot")
      t.near((p - q * 0.01):length(), 0, 1e-4, ext .. ": clip:save writes metres")
      rigel.save(path, cm:slice(5, 8))
      p = rigel.load(path):clip():pose(1):world_position("LeftFoot")
      t.near((p - q * 0.01):length(), 0, 1e-4, ext .. ": rigel.save writes metres")
    end
    cm:slice(5, 8):save(out .. "/unit.bvh")
    local b = rigel.load(out .. "/unit.bvh", { unit = "cm" }):clip():pose(1):world_position("LeftFoot")
    t.near((b - q):length(), 0, 1e-9, "bvh: the file's own numbers")
  end,

  unknown_take_lists_the_takes = function()
    local a, b = two_takes()
    rigel.save(out .. "/names.glb", { a, b })
    local scene = rigel.load(out .. "/names.glb")
    t.raises("no take 'jog' (takes: 'start', 'loop')", "unknown take", scene.clip, scene, "jog")
  end,

  bad_tables = function()
    local a = two_takes()
    local other = rigel.load(samples .. "/cmu_walk/walk.bvh"):clip()
    t.raises("an empty table of clips", "empty", rigel.save, out .. "/x.glb", {})
    t.raises("clip 2 of the table is not a Clip", "not a clip", rigel.save, out .. "/x.glb", { a, 3 })
    t.raises("clip 2 is on another skeleton", "two skeletons", rigel.save, out .. "/x.glb",
      { a, other })
    t.raises("BVH", "BVH holds one take", rigel.save, out .. "/x.bvh", { a, a:copy() })
  end,
})

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
      -- The second take's first frame is the walk's frame 11 (float precision in glTF).
      local p = scene:clip("loop"):pose(1):world_position("LeftFoot")
      local q = walk:pose(11):world_position("LeftFoot")
      t.near((p - q):length(), 0, 1e-3 * 170, ext .. ": the take's values")
    end
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

-- The Lua C module under Debian's stock lua5.4 interpreter (not `rigel run`): no rigel sandbox,
-- the interpreter's own allocator and Lua VM.
--   lua5.4 lua_module_test.lua CMODULE_DIR SCRIPTS_DIR SAMPLES_DIR OUT_DIR
local cmodule_dir, scripts_dir, samples, out = arg[1], arg[2], arg[3], arg[4]
assert(cmodule_dir and scripts_dir and samples and out, "usage: lua5.4 " .. arg[0] ..
  " CMODULE_DIR SCRIPTS_DIR SAMPLES_DIR OUT_DIR")
package.cpath = cmodule_dir .. "/?.so;" .. package.cpath
package.path = scripts_dir .. "/?.lua;" .. package.path

local failures = 0
local function check(ok, what)
  if not ok then
    failures = failures + 1
    io.stderr:write("FAIL: " .. what .. "\n")
  end
end

-- First require from inside a coroutine: the main thread, which was never touched by the
-- module, must then work too (the binding keeps a per-thread cache pointer).
local rigel
coroutine.wrap(function() rigel = require("rigel") end)()
check(type(rigel) == "table", "require('rigel') returns the module")
check(require("rigel") == rigel, "package.loaded keeps one module")
check(package.searchpath("rigel", package.cpath):find(cmodule_dir, 1, true) == 1,
  "the module comes from " .. cmodule_dir)
check(type(rigel.version) == "string" and rigel.version:match("^%d+%.%d+%.%d+"), "rigel.version")
local v = rigel.vec3(1, 2, 3) + rigel.vec3(1, 1, 1)
check(v.x == 2 and v.y == 3 and v.z == 4, "vec3 on the main thread")
local members = rigel.members(rigel.rig(rigel.load(samples .. "/planar_chain/planar.bvh")))
check(#members.methods > 5, "rigel.members of a Rig")

-- A missing file: a Lua error naming the file and the reason.
local ok, message = pcall(rigel.load, out .. "/no_such_file.bvh")
check(not ok, "rigel.load of a missing file raises")
check(type(message) == "string" and message:find("no_such_file.bvh: cannot open", 1, true),
  "clear error: " .. tostring(message))

-- The embed sample's job from Lua: the right hand moved by (0, 1.5, 1), solved on the arm.
local names = require("names")  -- rigel's Lua library, from the installed scripts/
local scene = rigel.load(samples .. "/cmu_walk/walk.bvh")
local clip = scene:clip()
local j = names.resolve(clip.skeleton, "cmu", true)
local rig = rigel.rig(clip.skeleton)
local hand = rig:effector(j.right_hand)
rig:stage({ effectors = { hand }, chain_root = j.right_arm })
local offset = rigel.vec3(0, 1.5, 1)
local baked, summary = rig:bake(clip, function(frame, pose)
  rig:target(hand, pose:world_position(j.right_hand) + offset)
end)
check(summary.frames == #clip and summary.converged == #clip,
  ("every frame converged (%d/%d)"):format(summary.converged, summary.frames))
local path = out .. "/walk_reach.bvh"
baked:save(path)

-- Independent check: read the file back and run FK on both clips.
local back = rigel.load(path):clip()
check(#back == #clip, ("frame count kept (%d, %d)"):format(#back, #clip))
local worst, others = 0, 0
for f = 1, #clip do
  local want = clip:pose(f):world_position(j.right_hand) + offset
  worst = math.max(worst, back:pose(f):world_position(j.right_hand):distance(want))
  -- Joints outside the arm keep their animation.
  others = math.max(others,
    back:pose(f):world_position(j.left_hand):distance(clip:pose(f):world_position(j.left_hand)))
end
check(worst < 1e-4, ("hand on its target on every frame (max %.3g)"):format(worst))
check(others < 1e-9, ("the other arm untouched (max %.3g)"):format(others))

-- The host's rules apply: the full standard library is there (no rigel sandbox).
check(type(os.execute) == "function" and type(io.popen) == "function", "no rigel sandbox")

if failures > 0 then
  io.stderr:write(failures .. " check(s) failed\n")
  os.exit(1)
end
print(("lua_module: %d frames baked, hand max error %.3g, every check passed"):format(#back,
  worst))

-- Reference FK for the browser test: prints, as JSON on stdout, the world position of every joint
-- of the requested frames of FILE's first clip, computed by rigel's Lua API (rigel.load,
-- clip:pose, pose:world_xyz), with 17 significant digits.
-- Usage: rigel run fk_dump.lua FILE FRAME [FRAME ...]   (frames 0-based, as the page counts)
local rigel = require("rigel")
local path = arg[1]
local scene = rigel.load(path)
local clip = scene:clip()
local skeleton = clip.skeleton
local out = {}
for i = 2, #arg do
  local f = math.tointeger(tonumber(arg[i]))
  local pose = clip:pose(f + 1)
  local joints = {}
  for j = 1, skeleton.num_joints do
    local x, y, z = pose:world_xyz(j)
    joints[#joints + 1] = string.format("[%.17g,%.17g,%.17g]", x, y, z)
  end
  out[#out + 1] = string.format('"%d":[%s]', f, table.concat(joints, ","))
end
local names = {}
for j = 1, skeleton.num_joints do names[#names + 1] = string.format("%q", skeleton:name(j)) end
io.write(string.format('{"frames":%d,"names":[%s],"positions":{%s}}\n', clip.num_frames,
                       table.concat(names, ","), table.concat(out, ",")))

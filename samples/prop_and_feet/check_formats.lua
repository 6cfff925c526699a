-- The joints rig.lua adds (Prop, LookAt, roll bones) are in every output format with their motion:
-- the same bake written as BVH, glb and FBX by `rigel bake --format`, read back, and on every
-- frame each added joint's distances to the hips, the head and the right hand, in units of the
-- file's own hips-to-head distance at frame 1 (so the check holds whatever unit and axes a format
-- states), agree with the BVH's within 1e-5.
-- usage: rigel run check_formats.lua BAKED.bvh BAKED.glb BAKED.fbx
local rigel = require("rigel")
local added = { "Prop", "LookAt", "RightForeArmTwist1", "LeftArmTwist2" }
local anchors = { "Hips", "Head", "RightHand" }

local function measures(path)
  local clip = rigel.load(path):clip()
  local p1 = clip:pose(1)
  local unit = (p1:world_position("Head") - p1:world_position("Hips")):length()
  local out = {}
  for f = 1, #clip do
    local p = clip:pose(f)
    for _, n in ipairs(added) do
      for _, a in ipairs(anchors) do
        out[#out + 1] = (p:world_position(n) - p:world_position(a)):length() / unit
      end
    end
  end
  return out
end

local reference = measures(arg[1])
local failures = 0
for i = 2, 3 do
  local got = measures(arg[i])
  local worst = #got == #reference and 0 or math.huge
  for k = 1, math.min(#got, #reference) do worst = math.max(worst, math.abs(got[k] - reference[k])) end
  local ok = worst < 1e-5
  print(string.format("%-60s %s  %.3g", arg[i], ok and "ok  " or "FAIL", worst))
  if not ok then failures = failures + 1 end
end
if failures > 0 then error(failures .. " format(s) differ", 0) end
print("prop_and_feet formats: added joints in BVH, glb and FBX")

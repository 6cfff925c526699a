-- The bake benchmark's rig with the same per-frame Lua callback as fullbody_rig.lua but no solve
-- (the callback returns false): its script time is the Lua callback's share of a bake.
local fullbody = require("fullbody_common")

return function(scene, clip, ctx) return fullbody(clip, false) end

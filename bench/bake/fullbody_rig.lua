-- Full-body rig of the bake benchmark: four six-D effectors solved over the whole body
-- (fullbody_common.lua).
local fullbody = require("fullbody_common")

return function(scene, clip, ctx) return fullbody(clip, true) end

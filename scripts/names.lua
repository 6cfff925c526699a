--- Bone-name maps: one canonical humanoid vocabulary (HumanIK-style keys) and its spelling in
--- common conventions, so one rig script serves skeletons from different sources.
---
---   local names = require("names")
---   local map = names.resolve(skeleton)          -- detects the convention
---   rig:effector(map.left_foot)                   -- "LeftFoot", "mixamorig:LeftFoot", "Foot_L", ...
---
--- Canonical keys: hips, spine, spine1, spine2, neck, head, and for left_/right_: shoulder
--- (clavicle), arm (upper arm), forearm, hand, upleg (thigh), leg (shin), foot, toe.
local M = {}

local SIDES = { left = { "Left", "L", "l" }, right = { "Right", "R", "r" } }

-- Builds a side-symmetric map from a function side -> {key = name}.
local function both(center, limb)
  local map = {}
  for k, v in pairs(center) do map[k] = v end
  for side, s in pairs(SIDES) do
    for k, v in pairs(limb(s[1], s[2], s[3])) do map[side .. "_" .. k] = v end
  end
  return map
end

--- Conventions, by name. Each maps canonical keys to joint names.
M.conventions = {
  -- CMU cgspeed / MotionBuilder-friendly BVH (and HumanIK names without a prefix).
  cmu = both({ hips = "Hips", spine = "LowerBack", spine1 = "Spine", spine2 = "Spine1",
    neck = "Neck", head = "Head" }, function(S, s)
    return { shoulder = S .. "Shoulder", arm = S .. "Arm", forearm = S .. "ForeArm",
      hand = S .. "Hand", upleg = S .. "UpLeg", leg = S .. "Leg", foot = S .. "Foot",
      toe = S .. "ToeBase" }
  end),
  -- Autodesk HumanIK.
  humanik = both({ hips = "Hips", spine = "Spine", spine1 = "Spine1", spine2 = "Spine2",
    neck = "Neck", head = "Head" }, function(S)
    return { shoulder = S .. "Shoulder", arm = S .. "Arm", forearm = S .. "ForeArm",
      hand = S .. "Hand", upleg = S .. "UpLeg", leg = S .. "Leg", foot = S .. "Foot",
      toe = S .. "ToeBase" }
  end),
  -- Mixamo: HumanIK names with the "mixamorig:" prefix.
  mixamo = both({ hips = "mixamorig:Hips", spine = "mixamorig:Spine",
    spine1 = "mixamorig:Spine1", spine2 = "mixamorig:Spine2", neck = "mixamorig:Neck",
    head = "mixamorig:Head" }, function(S)
    local p = "mixamorig:" .. S
    return { shoulder = p .. "Shoulder", arm = p .. "Arm", forearm = p .. "ForeArm",
      hand = p .. "Hand", upleg = p .. "UpLeg", leg = p .. "Leg", foot = p .. "Foot",
      toe = p .. "ToeBase" }
  end),
  -- MakeHuman default rig (163+ joints: spine05..spine01, upperleg01.L ...).
  makehuman = both({ hips = "root", spine = "spine04", spine1 = "spine03", spine2 = "spine02",
    neck = "neck01", head = "head" }, function(_, L)
    return { shoulder = "clavicle." .. L, arm = "upperarm01." .. L,
      forearm = "lowerarm01." .. L, hand = "wrist." .. L, upleg = "upperleg01." .. L,
      leg = "lowerleg01." .. L, foot = "foot." .. L, toe = "toe1-1." .. L }
  end),
  -- MakeHuman legacy rig (Root/Spine1/UpArm_L/LoArm_L/UpLeg_L ...).
  makehuman_legacy = both({ hips = "Hips", spine = "Spine1", spine1 = "Spine2",
    spine2 = "Spine3", neck = "Neck", head = "Head" }, function(_, L)
    return { shoulder = "Clavicle_" .. L, arm = "UpArm_" .. L, forearm = "LoArm_" .. L,
      hand = "Hand_" .. L, upleg = "UpLeg_" .. L, leg = "LoLeg_" .. L, foot = "Foot_" .. L,
      toe = "Toe_" .. L }
  end),
  -- Biovision classic (Hips/Chest/LeftCollar/LeftUpArm/LeftLowArm/LeftUpLeg/LeftLowLeg).
  biovision = both({ hips = "Hips", spine = "Chest", spine1 = "Chest", spine2 = "Chest",
    neck = "Neck", head = "Head" }, function(S)
    return { shoulder = S .. "Collar", arm = S .. "UpArm", forearm = S .. "LowArm",
      hand = S .. "Hand", upleg = S .. "UpLeg", leg = S .. "LowLeg", foot = S .. "Foot",
      toe = S .. "Toe" }
  end),
  -- Motion Analysis / EVaRT (Hips/Ab/Chest/LeftCollar/LeftShoulder/LeftElbow/LeftHip/LeftKnee).
  motion_analysis = both({ hips = "Hips", spine = "Ab", spine1 = "Chest", spine2 = "Chest",
    neck = "Neck", head = "Head" }, function(S)
    return { shoulder = S .. "Collar", arm = S .. "Shoulder", forearm = S .. "Elbow",
      hand = S .. "Wrist", upleg = S .. "Hip", leg = S .. "Knee", foot = S .. "Ankle",
      toe = S .. "Toes" }
  end),
}

--- The canonical keys, in a fixed order.
M.keys = { "hips", "spine", "spine1", "spine2", "neck", "head" }
for _, side in ipairs({ "left", "right" }) do
  for _, k in ipairs({ "shoulder", "arm", "forearm", "hand", "upleg", "leg", "foot", "toe" }) do
    M.keys[#M.keys + 1] = side .. "_" .. k
  end
end

--- Scores every convention against a skeleton: how many of its names the skeleton has.
--- @return string best convention, integer its score, table all scores
function M.detect(skeleton)
  local best, best_score, scores = nil, -1, {}
  local names = {}
  for _, n in ipairs(skeleton:joints()) do names[n] = true end
  local order = {}
  for name in pairs(M.conventions) do order[#order + 1] = name end
  table.sort(order)
  for _, name in ipairs(order) do
    local score = 0
    for _, joint in pairs(M.conventions[name]) do
      if names[joint] then score = score + 1 end
    end
    scores[name] = score
    if score > best_score then best, best_score = name, score end
  end
  return best, best_score, scores
end

--- Canonical key -> joint name of `skeleton`, for `convention` (detected when nil). Keys whose
--- joint the skeleton lacks are left out; `strict` raises instead, naming the missing joints.
function M.resolve(skeleton, convention, strict)
  convention = convention or M.detect(skeleton)
  local map = M.conventions[convention]
  if not map then
    local known = {}
    for name in pairs(M.conventions) do known[#known + 1] = name end
    table.sort(known)
    error(("unknown naming convention '%s' (expected one of: %s)"):format(tostring(convention),
      table.concat(known, ", ")), 2)
  end
  local out, missing = {}, {}
  for _, key in ipairs(M.keys) do
    local joint = map[key]
    if skeleton:find(joint) then out[key] = joint else missing[#missing + 1] = key .. "=" .. joint end
  end
  if strict and #missing > 0 then
    error(("skeleton lacks %s joints: %s"):format(convention, table.concat(missing, ", ")), 2)
  end
  return out, convention
end

--- Translates a joint name between conventions ("LeftFoot", "cmu", "mixamo" -> "mixamorig:LeftFoot").
function M.translate(joint, from, to)
  for key, name in pairs(M.conventions[from] or {}) do
    if name == joint then return M.conventions[to] and M.conventions[to][key] end
  end
  return nil
end

return M

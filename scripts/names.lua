--- Bone-name maps: one canonical humanoid vocabulary (HumanIK-style keys) and its spelling in
--- common conventions, so one rig script serves skeletons from different sources.
---
---   local names = require("names")
---   local map = names.resolve(skeleton)          -- the automatic map's humanoid roles
---   rig:effector(map.left_foot)                   -- "LeftFoot", "Beta:LeftFoot", "Foot_L", ...
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

-- Limb names spelt prefix .. Side .. name, Side being "Left" or "Right" ("mixamorig:LeftHand").
local function side_first(names, prefix)
  return function(S)
    local limb = {}
    for k, v in pairs(names) do limb[k] = (prefix or "") .. S .. v end
    return limb
  end
end

-- Limb names spelt name .. L, L being "L" or "R" ("Hand_L", "wrist.L").
local function side_last(names)
  return function(_, L)
    local limb = {}
    for k, v in pairs(names) do limb[k] = v .. L end
    return limb
  end
end

-- HumanIK limb names (after "Left"/"Right"), shared by HumanIK, CMU and Mixamo.
local HUMANIK_LIMBS = { shoulder = "Shoulder", arm = "Arm", forearm = "ForeArm", hand = "Hand",
  upleg = "UpLeg", leg = "Leg", foot = "Foot", toe = "ToeBase" }

--- Conventions, by name. Each maps canonical keys to joint names.
M.conventions = {
  -- CMU cgspeed / MotionBuilder-friendly BVH (and HumanIK names without a prefix).
  cmu = both({ hips = "Hips", spine = "LowerBack", spine1 = "Spine", spine2 = "Spine1",
    neck = "Neck", head = "Head" }, side_first(HUMANIK_LIMBS)),
  -- Autodesk HumanIK.
  humanik = both({ hips = "Hips", spine = "Spine", spine1 = "Spine1", spine2 = "Spine2",
    neck = "Neck", head = "Head" }, side_first(HUMANIK_LIMBS)),
  -- Mixamo: HumanIK names with the "mixamorig:" prefix.
  mixamo = both({ hips = "mixamorig:Hips", spine = "mixamorig:Spine",
    spine1 = "mixamorig:Spine1", spine2 = "mixamorig:Spine2", neck = "mixamorig:Neck",
    head = "mixamorig:Head" }, side_first(HUMANIK_LIMBS, "mixamorig:")),
  -- MakeHuman default rig (163+ joints: spine05..spine01, upperleg01.L ...).
  makehuman = both({ hips = "root", spine = "spine04", spine1 = "spine03", spine2 = "spine02",
    neck = "neck01", head = "head" }, side_last({ shoulder = "clavicle.", arm = "upperarm01.",
    forearm = "lowerarm01.", hand = "wrist.", upleg = "upperleg01.", leg = "lowerleg01.",
    foot = "foot.", toe = "toe1-1." })),
  -- MakeHuman legacy rig (Root/Spine1/UpArm_L/LoArm_L/UpLeg_L ...).
  makehuman_legacy = both({ hips = "Hips", spine = "Spine1", spine1 = "Spine2",
    spine2 = "Spine3", neck = "Neck", head = "Head" }, side_last({ shoulder = "Clavicle_",
    arm = "UpArm_", forearm = "LoArm_", hand = "Hand_", upleg = "UpLeg_", leg = "LoLeg_",
    foot = "Foot_", toe = "Toe_" })),
  -- Biovision classic (Hips/Chest/LeftCollar/LeftUpArm/LeftLowArm/LeftUpLeg/LeftLowLeg).
  biovision = both({ hips = "Hips", spine = "Chest", spine1 = "Chest", spine2 = "Chest",
    neck = "Neck", head = "Head" }, side_first({ shoulder = "Collar", arm = "UpArm",
    forearm = "LowArm", hand = "Hand", upleg = "UpLeg", leg = "LowLeg", foot = "Foot",
    toe = "Toe" })),
  -- Motion Analysis / EVaRT (Hips/Ab/Chest/LeftCollar/LeftShoulder/LeftElbow/LeftHip/LeftKnee).
  motion_analysis = both({ hips = "Hips", spine = "Ab", spine1 = "Chest", spine2 = "Chest",
    neck = "Neck", head = "Head" }, side_first({ shoulder = "Collar", arm = "Shoulder",
    forearm = "Elbow", hand = "Wrist", upleg = "Hip", leg = "Knee", foot = "Ankle",
    toe = "Toes" })),
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

-- Canonical limb keys -> the automatic map's role names (after "Left"/"Right").
local ROLES = { shoulder = "Shoulder", arm = "UpperArm", forearm = "LowerArm", hand = "Hand",
  upleg = "UpperLeg", leg = "LowerLeg", foot = "Foot", toe = "Toes" }

--- Canonical key -> joint name from the humanoid roles the automatic bone map finds
--- (`skeleton:humanoid()`: names with any "<prefix>:" namespace or rig prefix, confirmed by the
--- hierarchy), the one name table of rigel. The spine chain (hips excluded, chest included) gives
--- spine (its first joint), spine2 (the chest) and spine1 (the joint below the chest on chains of
--- three or more, else the chest).
function M.automatic(skeleton)
  local h = skeleton:humanoid()
  local out = { hips = h.Hips, neck = h.Neck or h.neck_chain[1], head = h.Head }
  local spine, n = h.spine_chain, #h.spine_chain
  if n > 0 then
    out.spine, out.spine2 = spine[1], spine[n]
    out.spine1 = n >= 3 and spine[n - 1] or spine[n]
  end
  for _, side in ipairs({ "left", "right" }) do
    local S = side == "left" and "Left" or "Right"
    for key, role in pairs(ROLES) do out[side .. "_" .. key] = h[S .. role] end
  end
  return out, h.warnings
end

-- Raises naming the canonical keys `map` lacks, when `strict`.
local function check_missing(map, what, strict, spelled)
  if not strict then return end
  local missing = {}
  for _, key in ipairs(M.keys) do
    if map[key] == nil then
      missing[#missing + 1] = spelled and (key .. "=" .. spelled[key]) or key
    end
  end
  if #missing > 0 then
    error(("skeleton lacks %s joints: %s"):format(what, table.concat(missing, ", ")), 3)
  end
end

--- Canonical key -> joint name of `skeleton`. Without `convention`, the automatic map's roles
--- (M.automatic), and the convention whose table spells the same joints is named ("automatic"
--- when none does). With a convention, its table. Keys whose joint the skeleton lacks are left
--- out; `strict` raises instead, naming the missing keys.
--- @return table map, string convention
function M.resolve(skeleton, convention, strict)
  if convention == nil then
    local out = M.automatic(skeleton)
    check_missing(out, "humanoid", strict)
    local best = M.detect(skeleton)
    local same = best ~= nil
    for _, key in ipairs(M.keys) do
      local want = best and M.conventions[best][key]
      if out[key] ~= want or not skeleton:find(want) then same = false end
    end
    return out, same and best or "automatic"
  end
  local map = M.conventions[convention]
  if not map then
    local known = {}
    for name in pairs(M.conventions) do known[#known + 1] = name end
    table.sort(known)
    error(("unknown naming convention '%s' (expected one of: %s)"):format(tostring(convention),
      table.concat(known, ", ")), 2)
  end
  local out = {}
  for _, key in ipairs(M.keys) do
    local joint = map[key]
    if skeleton:find(joint) then out[key] = joint end
  end
  check_missing(out, convention, strict, map)
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

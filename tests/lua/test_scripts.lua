-- scripts/: names (bone-name maps), contact (foot contacts), limbs (rig pieces).
local rigel = require("rigel")
local names = require("names")
local contact = require("contact")
local limbs = require("limbs")
local t = require("harness")
local dir = arg[1]

t.run({
  names = function()
    t.eq(names.translate("LeftFoot", "cmu", "mixamo"), "mixamorig:LeftFoot", "cmu -> mixamo")
    t.eq(names.translate("mixamorig:RightForeArm", "mixamo", "makehuman"), "lowerarm01.R",
      "mixamo -> makehuman")
    t.eq(names.translate("LeftKnee", "motion_analysis", "biovision"), "LeftLowLeg",
      "motion analysis -> biovision")
    t.eq(names.conventions.humanik.right_toe, "RightToeBase", "HumanIK toe")
    t.eq(#names.keys, 22, "22 canonical keys")
    local skel = rigel.load(dir .. "/fixtures/chain.bvh").skeleton
    t.raises("skeleton lacks cmu joints: hips=Hips", "strict resolve names what is missing",
      names.resolve, skel, "cmu", true)
    t.raises("unknown naming convention 'maya'", "unknown convention", names.resolve, skel, "maya")
    t.raises("skeleton lacks humanoid joints: spine, spine1, spine2, neck, head,",
      "strict automatic resolve names what is missing",
      names.resolve, skel, nil, true)
  end,

  -- The automatic map's roles: any "<prefix>:" namespace (issue 27: "Beta:Hips" failed).
  names_any_prefix = function()
    local skel = rigel.load(dir .. "/fixtures/beta_prefix.bvh").skeleton
    local j, convention = names.resolve(skel, nil, true)
    t.eq(convention, "automatic", "no table spells Beta:")
    t.eq(j.hips, "Beta:Hips", "hips")
    t.eq(j.left_foot, "Beta:LeftFoot", "left foot")
    t.eq(j.right_forearm, "Beta:RightForeArm", "right forearm")
    t.eq(j.left_toe, "Beta:LeftToeBase", "left toe")
    t.eq(j.spine, "Beta:LowerBack", "spine: first of the spine chain")
    t.eq(j.spine2, "Beta:Spine1", "spine2: the chest")
    t.eq(j.head, "Beta:Head", "head")
    local h = skel:humanoid()
    t.eq(h.LeftUpperLeg, "Beta:LeftUpLeg", "humanoid() role names")
    t.eq(#h.spine_chain, 3, "spine chain LowerBack, Spine, Spine1")
    -- The same file without the prefix is named by its table, with the same joints.
    local cmu = rigel.load(dir .. "/../../samples/cmu_walk/walk.bvh").skeleton
    local k, label = names.resolve(cmu)
    t.eq(label, "cmu", "the CMU table spells the same joints")
    for key, name in pairs(j) do t.eq("Beta:" .. k[key], name, key) end
  end,

  contact_intervals = function()
    local runs = contact.intervals({ false, true, true, false, true })
    t.eq(#runs, 2, "two runs")
    t.eq(runs[1].first * 10 + runs[1].last, 23, "first run 2..3")
    t.eq(runs[2].first * 10 + runs[2].last, 55, "second run 5..5")
  end,

  contact_detect = function()
    -- chain.bvh frames: Side's End Site parent moves only in frame 3 (Xposition 0.5).
    local clip = rigel.load(dir .. "/fixtures/chain.bvh"):clip()
    local flags = contact.detect(clip, "Side", { up = "y", height = 0.1, speed = 100, min_frames = 1 })
    t.eq(#flags, 4, "one flag per frame")
    t.eq(flags[1], true, "Side at its lowest height is planted")
    t.eq(flags[2], false, "root lifted by 2 in frame 2")
    t.eq(flags[3] and flags[4], true, "planted again in frames 3-4")
    flags = contact.detect(clip, "Side", { up = "y", height = 0.1, speed = 100, min_frames = 2 })
    t.eq(flags[1], false, "with min_frames = 2 a one-frame contact is dropped")
    t.eq(flags[3] and flags[4], true, "a two-frame contact is kept")
    -- The default is the core rule's (rigel.contacts): 3 frames, so both runs are dropped.
    flags = contact.detect(clip, "Side", { up = "y", height = 0.1, speed = 100 })
    t.eq(flags[1] or flags[3] or flags[4], false, "by default contacts shorter than 3 frames are dropped")
    t.raises("up must be 'x', 'y' or 'z'", "up checked", contact.detect, clip, "Side", { up = "w" })
  end,

  knee_pole = function()
    local skel = rigel.load(dir .. "/fixtures/chain.bvh").skeleton
    local pose = rigel.pose(skel)
    pose:set("Lower", "Xrotation", 90)  -- bend: Tip moves to +Z
    local pole = limbs.knee_pole(pose, "Upper", "Lower", "Tip")
    local k = pose:world_position("Lower")
    t.ok((pole - k):dot(rigel.vec3(0, 0, -1)) > 0 or (pole - k):dot(rigel.vec3(0, -1, 0)) ~= 0,
      "pole leaves the knee away from the hip-ankle line")
    local h, a = pose:world_position("Upper"), pose:world_position("Tip")
    local n = (k - h):cross(a - h)
    t.near(n:dot(pole - h), 0, 1e-9, "pole lies in the chain's plane")
  end,

  knee_pole_straight_leg_turns_with_the_thigh = function()
    -- The chain is straight at rest (Upper -> Lower -> Tip along +Y). A straight leg's pole came
    -- from a fixed +Z whatever the thigh did, so a thigh turned about its own axis (a leg
    -- straightening with the knee pointing out) got a pole that swung the knee back to +Z.
    local skel = rigel.load(dir .. "/fixtures/chain.bvh").skeleton
    local pose = rigel.pose(skel)
    local function pole_dir(p)
      return (limbs.knee_pole(p, "Upper", "Lower", "Tip") - p:world_position("Lower")):normalized()
    end
    t.vnear(pole_dir(pose), { 0, 0, 1 }, 1e-9, "straight at rest: the fallback hinge, +Z")
    pose:set("Upper", "Yrotation", 90)  -- the thigh turned a quarter about its own axis
    t.vnear(pole_dir(pose), { 1, 0, 0 }, 1e-9, "straight, thigh turned: the hinge turns with it")
    -- Bent a little either way of straight, the pole stays near the hinge's side: no flip.
    local straight = pole_dir(pose)
    for _, degrees in ipairs({ 0.2, -0.2 }) do
      pose:set("Lower", "Zrotation", degrees)
      t.ok(pole_dir(pose):dot(straight) > math.cos(math.rad(60)),
        "bent " .. degrees .. " degrees: within 60 degrees of the straight leg's pole")
    end
    -- Bent clearly, the leg's own bend decides (the knee pushed away from the hip-ankle line).
    pose:set("Lower", "Zrotation", 0)
    pose:set("Lower", "Xrotation", 30)
    local h, k, a = pose:world_position("Upper"), pose:world_position("Lower"),
      pose:world_position("Tip")
    local axis = (a - h):normalized()
    local bend = ((k - h) - axis * (k - h):dot(axis)):normalized()
    t.ok(pole_dir(pose):dot(bend) > 0.99, "bent 30 degrees: the pole follows the bend")
  end,

  two_bone_leg_handle = function()
    local scene = rigel.load(dir .. "/fixtures/chain.bvh")
    local rig = rigel.rig(scene.skeleton)
    local leg = limbs.two_bone_leg(rig, { hip = "Upper", knee = "Lower", ankle = "Tip" })
    t.eq(leg.effector, "Tip", "effector named after the ankle")
    t.eq(leg.pole, "Tip.pole", "pole effector")
    local pose = scene:clip():pose(1)
    pose:set("Lower", "Xrotation", 30)
    leg:set(pose, rigel.vec3(0, 13, 3))
    local report = rig:solve(pose)
    t.eq(report.status, "converged", "two-bone leg converges")
    t.vnear(pose:world_position("Tip"), { 0, 13, 3 }, 1e-6, "ankle on target")
  end,
})

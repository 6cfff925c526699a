-- Memory safety of rig:bake and rigel.retarget against the Lua code they run (issue 18 item 1).
-- A rig:bake callback, or a metamethod of rigel.retarget's options table, can call anything a
-- script can reach. Every mutating method of every bound type is called from there, on the very
-- objects being worked on: each either works (and the bake still returns a whole clip) or raises
-- the named error "<type>:<method>: <what> is being baked|retargeted". Built with ASan + UBSan
-- (docs/bake.md), this test fails on the old binding: clip:resize(#clip + 200000) in a callback
-- made rig:bake write past the end of the baked clip (heap-buffer-overflow in w_Rig_bake).
local rigel = require("rigel")
local t = require("harness")
local dir = arg[1]
local chain = dir .. "/fixtures/chain.bvh"
local out = arg.out

-- The objects one call may act on: a fresh scene, its clip, a rig on it with one effector and a
-- stage, and (inside a bake) the pose the callback got.
local function fixture()
  local scene = rigel.load(chain)
  local clip = scene:clip()
  local rig = rigel.rig(clip.skeleton)
  rig:effector("Tip", { end_site = true })
  rig:stage({ method = "dls" })
  rig:constraint("orient", { joint = "Side", target = "Tip" })
  rig:foot_roll(rig:effector("Lower", { type = "both", weight = 0 }), {})
  rig:effector("Upper", { type = "both", weight = 0 })  -- effector 3: no foot roll yet
  return { scene = scene, clip = clip, rig = rig, skeleton = clip.skeleton,
           other_pose = clip:pose(1) }
end

-- Every mutating method, with valid arguments. `o` holds the fixture's objects and `pose`.
local mutators = {
  Clip = {
    set_pose = function(o) return o.clip:set_pose(1, o.pose) end,
    set = function(o) return o.clip:set(1, "Upper", "Zrotation", 5) end,
    -- The fixture has no blend shape: the call runs (no lock refuses it) and says so.
    set_weight = function(o)
      local ok, err = pcall(o.clip.set_weight, o.clip, 1, nil, "Smile", 1)
      assert(ok or tostring(err):find("no blend shape 'Smile'", 1, true), err)
    end,
    resize = function(o) return o.clip:resize(#o.clip + 200000) end,
    set_frame_time = function(o) return o.clip:set_frame_time(1 / 60) end,
    set_name = function(o) return o.clip:set_name("renamed") end,
    save = function(o) return o.clip:save(out .. "/saved_during_bake.bvh") end,
    release = function(o) return o.clip:release() end,
  },
  Pose = {
    set = function(o) return o.pose:set("Upper", "Zrotation", 10) end,
    set_weight = function(o)
      local ok, err = pcall(o.pose.set_weight, o.pose, nil, "Smile", 1)
      assert(ok or tostring(err):find("no blend shape 'Smile'", 1, true), err)
    end,
    set_angles = function(o) return o.pose:set_angles("Upper", rigel.vec3(1, 2, 3)) end,
    -- The fixture has no scale channels: a scale of 1 is valid on any joint.
    set_scale = function(o) return o.pose:set_scale("Upper", 1) end,
    set_local_rotation = function(o)
      return o.pose:set_local_rotation("Upper", rigel.quat(1, 0, 0, 0))
    end,
    set_world_rotation = function(o)
      return o.pose:set_world_rotation("Upper", rigel.quat(1, 0, 0, 0))
    end,
    set_local_position = function(o)
      return o.pose:set_local_position("Root", rigel.vec3(1, 2, 3))
    end,
    set_world_position = function(o)
      return o.pose:set_world_position("Root", rigel.vec3(1, 2, 3))
    end,
    set_values = function(o) return o.pose:set_values(o.other_pose:values()) end,
    reset = function(o) return o.pose:reset() end,
    copy_from = function(o) return o.pose:copy_from(o.other_pose) end,
    release = function(o) return o.pose:release() end,
  },
  Rig = {
    effector = function(o) return o.rig:effector("Side", { name = "extra" }) end,
    target = function(o) return o.rig:target(1, rigel.vec3(1, 15, 0)) end,
    blend = function(o) return o.rig:blend(1, 0.5) end,
    frame_weight = function(o) return o.rig:frame_weight(1, 0.5) end,
    ik_blend = function(o) return o.rig:ik_blend(1, 0.5) end,
    stage_ik_blend = function(o) return o.rig:stage_ik_blend(1, 0.5) end,
    set_weight = function(o) return o.rig:set_weight(1, 2) end,
    set_priority = function(o) return o.rig:set_priority(1, 3) end,
    limit = function(o) return o.rig:limit("Upper", "Zrotation", -90, 90) end,
    lock = function(o) return o.rig:lock("Lower") end,
    unlock = function(o) return o.rig:unlock("Lower") end,
    strength = function(o) return o.rig:strength("Upper", 0.5) end,
    prefer = function(o) return o.rig:prefer("Upper", "Zrotation", 10, 0.1) end,
    cone = function(o) return o.rig:cone("Lower", 30) end,
    hinge = function(o) return o.rig:hinge("Lower", "x", -10, 90) end,
    clear_bone_limit = function(o) return o.rig:clear_bone_limit("Lower") end,
    stage = function(o) return o.rig:stage({ method = "ccd" }) end,
    clear_stages = function(o) return o.rig:clear_stages() end,
    constraint = function(o)
      return o.rig:constraint("point", { joint = "Side", target = "Tip", axes = "x" })
    end,
    set_influence = function(o) return o.rig:set_influence(1, 0.5) end,
    twist = function(o) return o.rig:twist({ driver = "Lower", joints = { "Side" } }) end,
    foot_roll = function(o) return o.rig:foot_roll(3, { roll = 5 }) end,
    set_foot_roll = function(o) return o.rig:set_foot_roll(1, { roll = 10 }) end,
    solve = function(o) return o.rig:solve(o.other_pose) end,
    bake = function(o) return o.rig:bake(o.clip) end,
    release = function(o) return o.rig:release() end,
  },
  Scene = {
    release = function(o) return o.scene:release() end,
  },
  Skeleton = {
    release = function(o) return o.skeleton:release() end,
  },
}

-- Methods that change nothing (checked so that a new method must be classified here).
local readers = {
  Clip = { pose = true, get = true, slice = true, resample = true, copy = true, weight = true,
           reduce = true, filter = true, mirror = true, loop = true, trim = true,
           -- Skeleton edits return a new clip on a new skeleton; the clip stays as it was.
           add_joint = true, add_locator = true, rename_joint = true, reparent = true,
           remove_joint = true },
  Pose = { get = true, weight = true, angles = true, world_position = true, world_xyz = true,
           world_rotation = true, local_position = true, local_rotation = true,
           end_position = true, values = true, copy = true, scale = true, world_scale = true },
  Rig = { get_target = true, get_limit = true, is_locked = true, effectors = true,
          constraints = true, get_bone_limit = true },
  Scene = { clip = true, save = true },
  Skeleton = { joint = true, find = true, name = true, parent = true, children = true,
               joints = true, chain = true, humanoid = true, rest_offset = true, rest_orientation = true,
               channels = true, channel_index = true, rotation_order = true, end_sites = true },
  vec3 = { length = true, normalized = true, dot = true, cross = true, distance = true,
           lerp = true, copy = true, unpack = true, table = true },
  quat = { inverse = true, normalized = true, slerp = true, angle_to = true, euler = true,
           axis_angle = true, rotate = true, unpack = true, table = true },
  BakeSummary = { records = true },
}

-- Calls that must refuse while their object is baked / retargeted (the rest must work).
local locked = {
  ["Clip.resize"] = "clip:resize: clip is being",
  ["Clip.release"] = "clip:release: clip is being",
  ["Rig.effector"] = "rig:effector: rig is being",
  ["Rig.stage"] = "rig:stage: rig is being",
  ["Rig.clear_stages"] = "rig:clear_stages: rig is being",
  ["Rig.constraint"] = "rig:constraint: rig is being",
  ["Rig.twist"] = "rig:twist: rig is being",
  ["Rig.foot_roll"] = "rig:foot_roll: rig is being",
  ["Rig.release"] = "rig:release: rig is being",
  ["Scene.release"] = "scene:release: scene is being",
}
-- What a bake locks: the rig and the clip. (Releasing the scene that holds the clip only drops
-- that Lua reference: the clip keeps its data alive.)
local locked_in_bake = {
  ["Clip.resize"] = true, ["Clip.release"] = true, ["Rig.effector"] = true,
  ["Rig.stage"] = true, ["Rig.clear_stages"] = true, ["Rig.release"] = true,
  ["Rig.constraint"] = true, ["Rig.twist"] = true, ["Rig.foot_roll"] = true,
}
-- While retargeting, only the source and target are in use: the rig is not.
local locked_in_retarget = {
  ["Clip.resize"] = true, ["Clip.release"] = true, ["Scene.release"] = true,
}

local function sorted(tbl)
  local keys = {}
  for k in pairs(tbl) do keys[#keys + 1] = k end
  table.sort(keys)
  return keys
end

-- Calls f(type_name, "Type.method", call) for every mutating method, in a fixed order.
local function each_mutator(f)
  for _, type_name in ipairs(sorted(mutators)) do
    for _, method in ipairs(sorted(mutators[type_name])) do
      f(type_name, type_name .. "." .. method, mutators[type_name][method])
    end
  end
end

-- The outcome of one mutator called in the middle of a bake or a retarget (`where`: "a bake
-- callback" or "rigel.retarget"): it ran there, and either was refused with its lock's message
-- (`doing`: "baked" or "retargeted") if `is_locked`, or worked.
local function expect_refused_or_works(name, where, doing, is_locked, tried, ok, err)
  t.ok(tried, name .. ": called inside " .. where)
  if is_locked then
    t.ok(not ok and tostring(err):find(locked[name] .. " " .. doing, 1, true),
      name .. " refused inside " .. where .. ": " .. tostring(err))
  else
    t.ok(ok, name .. " works inside " .. where .. ": " .. tostring(err))
  end
end

t.run({
  every_method_is_classified = function()
    local o = fixture()
    local samples = { Clip = o.clip, Pose = o.other_pose, Rig = o.rig, Scene = o.scene,
                      Skeleton = o.skeleton, vec3 = rigel.vec3(1, 2, 3),
                      quat = rigel.quat(1, 0, 0, 0), BakeSummary = select(2, o.rig:bake(o.clip)) }
    for type_name, object in pairs(samples) do
      for _, method in ipairs(rigel.members(object).methods) do
        local known = (mutators[type_name] and mutators[type_name][method]) or
          readers[type_name][method]
        t.ok(known, type_name .. ":" .. method .. " is classified as mutating or read-only")
      end
    end
  end,

  mutators_inside_bake = function()
    each_mutator(function(type_name, name, call)
      local o = fixture()
      local frames, channels = #o.clip, o.skeleton.num_channels
      local tried, ok, err = false, nil, nil
      local baked, summary = o.rig:bake(o.clip, function(frame, pose)
        if frame == 2 then
          o.pose = pose
          tried = true
          ok, err = pcall(call, o)
        end
      end)
      expect_refused_or_works(name, "a bake callback", "baked", locked_in_bake[name], tried, ok,
        err)
      t.eq(#baked, frames, name .. ": the baked clip has the source's frame count")
      t.eq(summary.frames, frames, name .. ": the summary counts every frame")
      t.eq(baked.num_channels, channels, name .. ": one value per channel")
      -- The locks end with the bake, also when the callback raised.
      if locked_in_bake[name] then
        local again = fixture()
        t.ok(pcall(call, again), name .. " works again after the bake")
      end
    end)
  end,

  locks_end_when_the_callback_raises = function()
    local o = fixture()
    t.raises("stop here", "the callback's error comes out of rig:bake", o.rig.bake, o.rig,
      o.clip, function() error("stop here") end)
    t.ok(pcall(o.clip.resize, o.clip, #o.clip + 1), "the clip can be resized again")
    t.ok(pcall(o.rig.effector, o.rig, "Side", { name = "after" }), "the rig is unlocked")
  end,

  nested_bakes_lock_both = function()
    local o = fixture()
    local inner_err
    o.rig:bake(o.clip, function(frame)
      if frame == 1 then
        o.rig:bake(o.clip, function(f)
          if f == 1 then inner_err = select(2, pcall(o.clip.resize, o.clip, 1)) end
        end)
        -- The inner bake has returned: the outer one still holds the lock.
        local ok, err = pcall(o.clip.resize, o.clip, 1)
        t.ok(not ok and err:find("clip:resize: clip is being baked", 1, true),
          "outer lock still held after the inner bake")
      end
    end)
    t.ok(inner_err and inner_err:find("clip:resize: clip is being baked", 1, true),
      "inner bake: " .. tostring(inner_err))
  end,

  mutators_inside_retarget = function()
    each_mutator(function(type_name, name, call)
      local o = fixture()
      o.pose = o.clip:pose(1)
      local target = fixture()
      local channels = target.skeleton.num_channels
      local source = (type_name == "Scene") and o.scene or o.clip
      local tried, ok, err = false, nil, nil
      -- A metamethod of the options table runs Lua code in the middle of rigel.retarget.
      local options = setmetatable({}, { __index = function(_, key)
        if not tried then
          tried = true
          ok, err = pcall(call, o)
        end
        return nil
      end })
      local result_ok, result = pcall(rigel.retarget, source, target.scene, options)
      expect_refused_or_works(name, "rigel.retarget", "retargeted", locked_in_retarget[name], tried,
        ok, err)
      -- The chain fixture maps onto itself; whatever the result, it is a whole clip.
      if result_ok then
        t.eq(result.num_channels, channels, name .. ": retargeted clip")
      end
    end)
  end,
})

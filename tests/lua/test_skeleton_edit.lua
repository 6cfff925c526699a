-- Skeleton editing from Lua (clip:add_joint, add_locator, rename_joint, reparent, remove_joint;
-- core/skeleton_edit.h): world motion kept, added joints solved, constrained, keyed and baked,
-- and written to BVH, glTF and FBX with their motion.
local rigel = require("rigel")
local t = require("harness")
local dir = arg[1]
local out = arg.out

local function fresh() return rigel.load(dir .. "/fixtures/chain.bvh"):clip() end

-- A clip on the chain whose every joint moves on every frame.
local function moving()
  local clip = fresh():resample(40)
  for f = 1, #clip do
    local p = clip:pose(f)
    p:set("Upper", "Xrotation", 20 * math.sin(f / 3))
    p:set("Lower", "Zrotation", 30 * math.sin(f / 4))
    p:set("Side", "Xposition", math.sin(f / 5))
    clip:set_pose(f, p)
  end
  return clip
end

-- Largest world-position difference of the joints `names` between two clips, over all frames.
local function worst(a, b, names)
  local d = 0
  for f = 1, #a do
    local pa, pb = a:pose(f), b:pose(f)
    for _, n in ipairs(names) do
      d = math.max(d, (pa:world_position(n) - pb:world_position(n)):length())
      local qa, qb = pa:world_rotation(n), pb:world_rotation(n)
      d = math.max(d, math.rad(qa:angle_to(qb)))
    end
  end
  return d
end

local all = { "Root", "Upper", "Lower", "Tip", "Side" }

t.run({
  add_joint = function()
    local clip = moving()
    local prop = clip:add_joint({ name = "Prop", parent = "Tip", offset = rigel.vec3(0, 1, 0.5),
      order = "YXZ", length = rigel.vec3(0, 0.3, 0) })
    t.eq(clip.skeleton.num_joints, 5, "the clip it was called on is unchanged")
    t.eq(prop.skeleton.num_joints, 6, "one joint more")
    t.eq(prop.skeleton:name(prop.skeleton:parent("Prop")), "Tip", "under the tip")
    t.eq(prop.skeleton:rotation_order("Prop"), "YXZ", "its rotation order")
    t.eq(#prop.skeleton:channels("Prop"), 3, "three rotation channels by default")
    t.near(worst(clip, prop, all), 0, 0, "every other joint moves as before")
    local p = prop:pose(7)
    t.vnear(p:world_position("Prop"), p:world_position("Tip") + p:world_rotation("Tip"):rotate(
      rigel.vec3(0, 1, 0.5)), 1e-12, "at its offset in the tip's frame")
    local loc = prop:add_locator({ name = "Target", offset = { 1, 2, 3 } })
    t.eq(loc.skeleton:parent("Target"), nil, "a locator without parent is a root")
    t.eq(#loc.skeleton:channels("Target"), 6, "a locator has position and rotation channels")
    local rotation = prop:add_joint({ name = "R", parent = "Root", channels = { "Zrotation" } })
    t.eq(#rotation.skeleton:channels("R"), 1, "a channel list")
  end,

  errors = function()
    local clip = fresh()
    t.raises("clip:add_joint: a joint named 'Upper' already exists", "duplicate name",
      clip.add_joint, clip, { name = "Upper", parent = "Root" })
    t.raises("no joint 'Uper'", "unknown parent", clip.add_joint, clip,
      { name = "X", parent = "Uper" })
    t.raises("unknown option 'lenght'", "unknown option", clip.add_joint, clip,
      { name = "X", lenght = { 0, 1, 0 } })
    t.raises("invalid channel 'Wrotation'", "bad channel", clip.add_joint, clip,
      { name = "X", channels = { "Wrotation" } })
    t.raises("field 'name': string expected", "name required", clip.add_joint, clip, {})
    t.raises("clip:reparent: cannot parent 'Upper' under 'Tip': a cycle", "cycle",
      clip.reparent, clip, "Upper", "Tip")
    t.raises("clip:rename_joint: a joint named 'Side' already exists", "rename clash",
      clip.rename_joint, clip, "Upper", "Side")
  end,

  rename = function()
    local clip = moving()
    local renamed = clip:rename_joint("Lower", "Forearm")
    t.eq(renamed.skeleton:find("Lower"), nil, "old name gone")
    t.near(renamed:get(9, "Forearm", "Zrotation"), clip:get(9, "Lower", "Zrotation"), 0,
      "values follow the joint")
  end,

  reparent_and_remove_keep_world_motion = function()
    local clip = moving()
    local moved = clip:reparent("Lower", "Side")
    t.eq(moved.skeleton:name(moved.skeleton:parent("Lower")), "Side", "under Side")
    t.near(worst(clip, moved, all), 0, 1e-9, "reparent keeps every joint's world motion")
    local rooted = clip:reparent("Tip", nil)
    t.eq(rooted.skeleton:parent("Tip"), nil, "a new root")
    t.near(worst(clip, rooted, all), 0, 1e-9, "so does a new root")
    local removed = clip:remove_joint("Upper")
    t.eq(removed.skeleton:name(removed.skeleton:parent("Lower")), "Root", "Lower under Root")
    t.near(worst(clip, removed, { "Root", "Lower", "Tip", "Side" }), 0, 1e-9,
      "remove keeps the children's world motion")
    -- The measure can fail: keying the moved joint moves it.
    local p = moved:pose(3)
    p:set("Lower", "Xrotation", p:get("Lower", "Xrotation") + 5)
    moved:set_pose(3, p)
    t.ok(worst(clip, moved, all) > 1e-3, "a changed key shows")
  end,

  added_joints_are_solved_constrained_keyed_and_baked = function()
    local clip = moving()
      :add_joint({ name = "Pointer", parent = "Lower", offset = { 0, 1, 0 }, length = { 0, 1, 0 } })
      :add_locator({ name = "Prop", parent = "Root" })
    local rig = rigel.rig(clip.skeleton)
    local e = rig:effector("Tip", { end_site = true })
    rig:stage({ method = "dls", effectors = { e } })
    rig:constraint("parent", { joint = "Prop", target = "Pointer" })
    local goal = rigel.vec3(2, 14, 1)
    local baked = rig:bake(clip, function(frame, pose)
      rig:target(e, goal)
      pose:set("Pointer", "Yrotation", frame)  -- a key on the added joint
    end)
    local function held(p)
      return p:world_rotation("Pointer"):inverse():rotate(
        p:world_position("Prop") - p:world_position("Pointer"))
    end
    local first = held(baked:pose(1))
    for _, f in ipairs({ 1, 7, #baked }) do
      local p = baked:pose(f)
      t.near(p:get("Pointer", "Yrotation"), f, 1e-9, "the key on the added joint is baked")
      t.vnear(held(p), first, 1e-6, "the locator follows its constraint (offset kept)")
    end
    t.ok((baked:pose(#baked):world_position("Prop") - baked:pose(1):world_position("Prop")):length()
      > 1e-3, "and moves")
    -- Written to every format, with its motion, and read back.
    for _, ext in ipairs({ "bvh", "glb", "fbx" }) do
      local path = out .. "/added." .. ext
      baked:save(path)
      local back = rigel.load(path):clip()
      t.ok(back.skeleton:find("Prop") and back.skeleton:find("Pointer"),
        ext .. ": the added joints are in the file")
      local d = 0
      for _, f in ipairs({ 1, 7, #baked }) do
        local a, b = baked:pose(f), back:pose(f)
        local s = (b:world_position("Tip") - b:world_position("Root")):length() /
          (a:world_position("Tip") - a:world_position("Root")):length()
        for _, n in ipairs({ "Prop", "Pointer" }) do
          local pa = a:world_position(n) - a:world_position("Root")
          local pb = (b:world_position(n) - b:world_position("Root")) * (1 / s)
          d = math.max(d, math.abs(pa:length() - pb:length()))
        end
      end
      t.near(d, 0, 1e-4, ext .. ": the added joints move as baked")
    end
  end,
})

-- Shapes of arguments a script can use against the binding (issue 25): long lists, metatables on
-- option tables, __len / __index that change between calls or raise. Each must end as a Lua
-- error or a result, never a crash of the process (`rigel run` reports a crash by its signal,
-- which fails this test).
local rigel = require("rigel")
local t = require("harness")
local dir = arg[1]
local chain = rigel.load(dir .. "/fixtures/chain.bvh")
local planar = rigel.load(dir .. "/fixtures/planar.bvh")

local function list_of(n, value)
  local list = {}
  for i = 1, n do list[i] = value end
  return list
end

-- A table whose __len answers `first` on the first call and `later` after.
local function shifting_len(entries, first, later)
  local calls = 0
  return setmetatable(entries, { __len = function()
    calls = calls + 1
    return calls == 1 and first or later
  end })
end

t.run({
  stage_long_effector_lists = function()
    -- Used to write past the Lua stack: 100 entries aborted (munmap_chunk), 1,000 crashed.
    for _, n in ipairs({ 100, 1000, 20000 }) do
      local rig = rigel.rig(planar.skeleton)
      rig:effector("Outer", { end_site = true })
      t.eq(rig:stage({ method = "dls", effectors = list_of(n, "Outer") }), 1,
        n .. " effector entries make one stage")
    end
    local rig = rigel.rig(planar.skeleton)
    rig:effector("Outer", { end_site = true })
    t.raises("field 'effectors' has 200000 entries (at most 100000)", "a list too long is refused",
      rig.stage, rig, { method = "dls", effectors = list_of(200000, "Outer") })
    t.raises("field 'effectors' has 4294967296 entries", "a __len far too large is refused",
      rig.stage, rig, { effectors = setmetatable({}, { __len = function() return 2 ^ 32 end }) })
    t.raises("field 'effectors' has -1 entries", "a negative __len is refused",
      rig.stage, rig, { effectors = setmetatable({}, { __len = function() return -1 end }) })
    t.raises("len raised", "a __len that raises is the error", rig.stage, rig,
      { effectors = setmetatable({}, { __len = function() error("len raised") end }) })
    t.raises("index raised", "an options table whose __index raises", rig.stage, rig,
      setmetatable({}, { __index = function() error("index raised") end }))
  end,

  constraint_long_lists = function()
    local rig = rigel.rig(chain.skeleton)
    t.raises("field 'joints' has 200000 entries (at most 100000)", "twist joints bounded",
      rig.constraint, rig, "twist", { driver = "Upper", joints = list_of(200000, "Lower") })
  end,

  contacts_list_read_once = function()
    -- The options' __index rewrites the joint list after it was checked: the contacts use the
    -- joints as checked (the list was read again: index 1000 of a 5-joint skeleton).
    local clip = chain:clip()
    local joints = { "Side", "Tip" }
    local options = setmetatable({}, { __index = function()
      joints[1] = 1000
      joints[2] = {}
      return nil
    end })
    local lists = rigel.contacts(clip, joints, options)
    t.eq(#lists, 2, "one list per joint as checked")
    t.raises("joint list item 1: joint index in [1, 5] expected", "a bad index is still refused",
      rigel.contacts, clip, { 1000 })
  end,

  retarget_map_read_once = function()
    local clip = chain:clip()
    -- __len says 1 to the check, 4 to the second pass, over entries that are not valid: used to
    -- crash in AddEntry (a NULL target).
    local map = { Root = "Root", Upper = shifting_len({ "Upper", {}, {}, {} }, 1, 4) }
    local out = rigel.retarget(clip, chain, { map = map, root_motion = "keep" })
    t.eq(out.num_frames, 4, "the list is read once, as its first __len said")
    -- An entry whose target __index answers a name to the checks (two reads: is it an entry or a
    -- list, then its target), then nil: the second pass must not read it again (a NULL target).
    local reads = 0
    local fickle = setmetatable({}, { __index = function(_, k)
      if k ~= "target" then return nil end
      reads = reads + 1
      return reads <= 2 and "Lower" or nil
    end })
    out = rigel.retarget(clip, chain, { map = { Root = "Root", Lower = fickle },
      root_motion = "keep" })
    t.eq(out.num_frames, 4, "an entry's fields are read once")
    t.raises("map: the entry of 'Upper' needs target = joint name", "{} entries are checked",
      rigel.retarget, clip, chain, { map = { Upper = { "Upper", {} } } })
    t.raises("boom", "an entry whose __index raises", rigel.retarget, clip, chain,
      { map = { Upper = setmetatable({}, { __index = function() error("boom") end }) } })
    t.raises("'Upper' maps to a list of 4294967296 entries", "a huge __len is refused",
      rigel.retarget, clip, chain, { map = { Upper = shifting_len({}, 2 ^ 32, 2 ^ 32) } })
  end,
})

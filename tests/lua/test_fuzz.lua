-- Calls every function of the module and every method of every type with wrong types and
-- counts. Nothing may crash the process: every call either returns or raises a Lua error.
local rigel = require("rigel")
local t = require("harness")
local dir = arg[1]
local fixture = dir .. "/fixtures/chain.bvh"

local function objects()
  local scene = rigel.load(fixture)
  local o = {
    scene = scene,
    skeleton = scene.skeleton,
    clip = scene:clip(),
    pose = scene:clip():pose(2),
    vec3 = rigel.vec3(1, 2, 3),
    quat = rigel.quat.euler("ZXY", 10, 20, 30),
  }
  if rigel.rig then o.rig = rigel.rig(scene.skeleton) end
  return o
end

-- Values to draw arguments from: wrong types, edge numbers, plausible names, other objects.
local function values(o)
  return {
    nil, false, true, 0, -1, 1, 2, 3, 2.5, -0.0, 1e308, -1e308, 0 / 0, math.huge, -math.huge,
    math.maxinteger, math.mininteger, "", "Root", "Tip", "Side", "Zrotation", "Xposition",
    "ZXY", "position", "dls", "nope", {}, { 1, 2 }, { 1, 2, 3 }, { x = 1, y = 2, z = 3 },
    { 1, 2, 3, 4 }, { "Root" }, function() end, function() error("boom") end,
    coroutine.create(function() end), o.vec3, o.quat, o.skeleton, o.clip, o.pose, o.scene,
    o.rig, arg.out .. "/fuzz.bvh", fixture,
  }
end
local NVALUES = 45

-- Deterministic pseudo-random generator (LCG) so failures reproduce.
local seed = 12345
local function rand(n)
  seed = (seed * 1103515245 + 12345) % 2147483648
  return seed % n + 1
end

local calls, errors = 0, 0
local function try(fn, ...)
  calls = calls + 1
  local ok = pcall(fn, ...)
  if not ok then errors = errors + 1 end
end

local function fuzz(fn, self_value, pool)
  for n = 0, 5 do
    for _ = 1, 25 do
      local args = {}
      for i = 1, n do args[i] = pool[rand(NVALUES)] end
      try(fn, table.unpack(args, 1, n))
      if self_value ~= nil then try(fn, self_value, table.unpack(args, 1, n)) end
    end
  end
end

t.run({
  module_functions = function()
    local names = {}
    for name, value in pairs(rigel) do
      if type(value) == "function" then names[#names + 1] = name end
    end
    table.sort(names)
    t.ok(#names >= 8, "module has its functions (" .. #names .. ")")
    for _, name in ipairs(names) do
      local o = objects()
      fuzz(rigel[name], nil, values(o))
    end
    for name, fn in pairs(rigel.quat) do
      if type(fn) == "function" then fuzz(fn, nil, values(objects())) end
    end
  end,

  methods_of_every_type = function()
    local o = objects()
    local kinds = { "scene", "skeleton", "clip", "pose", "vec3", "quat", "rig" }
    local total = 0
    for _, kind in ipairs(kinds) do
      if o[kind] then
        local members = rigel.members(o[kind])
        t.ok(#members.methods > 0, kind .. " lists its methods")
        for _, method in ipairs(members.methods) do
          local fresh = objects()
          fuzz(fresh[kind][method], fresh[kind], values(fresh))
          total = total + 1
        end
        for _, field in ipairs(members.fields) do
          t.ok(pcall(function() return o[kind][field] end), kind .. "." .. field .. " readable")
        end
      end
    end
    t.ok(total >= 60, "every method fuzzed (" .. total .. ")")
  end,

  retarget_options = function()
    -- rigel.retarget with option tables drawn from the valid keys and the value pool.
    local keys = { "map", "root_motion", "pin_feet", "pin_hands", "follow_source",
      "source_reference_frame", "target_reference_frame", "source_up", "target_up", "source_unit",
      "target_unit", "contact_height", "contact_speed", "contact_min_frames", "contact_blend",
      "knee_hyperextension" }
    local o = objects()
    local pool = values(o)
    local extra = { "scale", "keep", "in-place", "y", "z", { Root = "Root" }, { Root = { target = "Root" } },
      { Root = { "Root", "Upper" } }, '<rigel-bone-map version="1"><bone source="Root" target="Root"/></rigel-bone-map>' }
    for _ = 1, 400 do
      local options = {}
      for _ = 1, rand(3) do
        local value = rand(2) == 1 and extra[rand(#extra)] or pool[rand(NVALUES)]
        options[keys[rand(#keys)]] = value
      end
      try(rigel.retarget, o.clip, pool[rand(NVALUES)], options)
      try(rigel.retarget, o.clip, o.scene, options)
    end
  end,

  operators = function()
    local o = objects()
    local pool = values(o)
    local ops = {
      function(a, b) return a + b end, function(a, b) return a - b end,
      function(a, b) return a * b end, function(a, b) return a / b end,
      function(a) return -a end, function(a, b) return a == b end,
      function(a) return tostring(a) end, function(a) return #a end,
      function(a, b) return a[b] end, function(a, b) a[b] = 1 end,
      function(a, b, c) a[b] = c end,
    }
    for _, op in ipairs(ops) do
      for i = 1, NVALUES do
        for j = 1, NVALUES, 3 do try(op, pool[i], pool[j], pool[(i + j) % NVALUES + 1]) end
      end
    end
  end,

  survived = function()
    t.ok(calls > 10000, "many calls made (" .. calls .. ")")
    t.ok(errors > 0, "and wrong arguments raised errors (" .. errors .. ")")
    print(("fuzz: %d calls, %d raised"):format(calls, errors))
  end,
})

-- rigel.Skeleton: joints by name and index, hierarchy, rest offsets, channel layout.
-- Fixture fixtures/chain.bvh:
--   Root (6 ch: pos XYZ, rot ZXY)
--   +-- Upper (0,10,0) rot ZXY
--   |   +-- Lower (0,5,0) rot XYZ
--   |       +-- Tip (0,2,0) rot ZX  [End Site (0,1,0)]
--   +-- Side (3,0,0) Xposition + rot ZYX  [End Site (1,0,0)]
local rigel = require("rigel")
local t = require("harness")
local dir = arg[1]

local skel = rigel.load(dir .. "/fixtures/chain.bvh").skeleton

t.run({
  counts = function()
    t.eq(skel.num_joints, 5, "five joints")
    t.eq(#skel, 5, "# is the joint count")
    t.eq(skel.num_channels, 18, "18 channels")
    t.eq(skel.root, "Root", "root name")
    t.ok(tostring(skel):find("5 joints, 18 channels", 1, true), "tostring summarises")
  end,

  joints_by_name_and_index = function()
    t.eq(skel:joint("Lower"), 3, "Lower is joint 3 (1-based)")
    t.eq(skel:joint(3), 3, "index passes through")
    t.eq(skel:name(4), "Tip", "name of joint 4")
    t.eq(skel:name("Tip"), "Tip", "name of a name")
    t.eq(skel:find("Nope"), nil, "find returns nil for a missing joint")
    t.eq(skel:find("Side"), 5, "find returns the index")
    local names = skel:joints()
    t.eq(#names, 5, "joints() lists every joint")
    t.eq(names[1] .. names[2] .. names[5], "RootUpperSide", "joints() in skeleton order")
  end,

  hierarchy = function()
    t.eq(skel:parent("Root"), nil, "root has no parent")
    local name, index = skel:parent("Lower")
    t.eq(name, "Upper", "parent name")
    t.eq(index, 2, "parent index")
    local children = skel:children("Root")
    t.eq(#children, 2, "Root has two children")
    t.eq(children[1], "Upper", "first child in file order")
    t.eq(children[2], "Side", "second child")
    local chain = skel:chain("Upper", "Tip")
    t.eq(table.concat(chain, ","), "Upper,Lower,Tip", "chain from ancestor to descendant")
    t.raises("'Side' is not an ancestor of 'Tip'", "chain checks ancestry", skel.chain, skel,
      "Side", "Tip")
  end,

  rest = function()
    t.vnear(skel:rest_offset("Lower"), { 0, 5, 0 }, 0, "rest offset of Lower")
    t.vnear(skel:rest_offset("Side"), { 3, 0, 0 }, 0, "rest offset of Side")
    t.eq(skel:rest_orientation("Upper"), rigel.quat(1, 0, 0, 0), "BVH rest orientation is identity")
    local sites = skel:end_sites()
    t.eq(#sites, 2, "two end sites")
    t.eq(sites[1].parent, "Tip", "first end site belongs to Tip")
    t.vnear(sites[1].offset, { 0, 1, 0 }, 0, "end site offset")
  end,

  channel_layout = function()
    local ch = skel:channels("Root")
    t.eq(#ch, 6, "root has six channels")
    t.eq(table.concat(ch, " "), "Xposition Yposition Zposition Zrotation Xrotation Yrotation",
      "root layout as in the file")
    t.eq(table.concat(skel:channels("Side"), " "), "Xposition Zrotation Yrotation Xrotation",
      "odd layout kept")
    t.eq(skel:rotation_order("Upper"), "ZXY", "Upper is ZXY")
    t.eq(skel:rotation_order("Lower"), "XYZ", "Lower is XYZ")
    t.eq(skel:rotation_order("Tip"), nil, "two rotation channels: no Euler order")
    t.eq(skel:channel_index("Upper", "Zrotation"), 7, "column of Upper's Zrotation")
    t.eq(skel:channel_index("Side", "xposition"), 15, "channel names are case-insensitive")
  end,

  errors = function()
    t.raises("no joint 'Lowr' (closest: Lower", "misspelt joint lists the closest names",
      skel.joint, skel, "Lowr")
    t.raises("joint index 6 out of range [1, 5]", "index out of range", skel.joint, skel, 6)
    t.raises("joint name or index expected, got table", "wrong type", skel.joint, skel, {})
    t.raises("joint 'Tip' has no Yrotation channel (it has: Zrotation, Xrotation)",
      "missing channel lists the joint's channels", skel.channel_index, skel, "Tip", "Yrotation")
    t.raises("invalid channel 'spin', expected one of: Xposition", "bad channel name",
      skel.channel_index, skel, "Tip", "spin")
    t.raises("Skeleton expected, got number", "self must be a Skeleton", skel.joint, 5, "Tip")
    t.raises("Skeleton has no field 'num_jionts'", "typo in a field name is an error",
      function() return skel.num_jionts end)
    t.raises("Skeleton is read-only", "fields cannot be assigned",
      function() skel.num_joints = 3 end)
  end,

  equality = function()
    local again = rigel.load(dir .. "/fixtures/chain.bvh").skeleton
    t.ok(skel == skel, "a skeleton equals itself")
    t.ok(skel ~= again, "two loads are two skeletons")
    t.eq(getmetatable(skel), "locked", "metatables are protected")
  end,
})

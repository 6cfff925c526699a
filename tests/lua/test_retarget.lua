-- rigel.retarget / rigel.suggest_map on real mocap (../shared/data, skipped when absent) and on
-- the fixtures: metrics, maps as tables / XML text / files, options and error texts.
-- (tests/lua/retarget_binding_test.cc checks the results equal the C++ API's exactly.)
local rigel = require("rigel")
local t = require("harness")
local dir, data, samples = arg[1], arg[2], arg[3]
local chain = rigel.load(dir .. "/fixtures/chain.bvh")

local function exists(path)
  local f = io.open(path, "r")
  if f then f:close() end
  return f ~= nil
end
local cmu_path = data .. "/cmu_cgspeed/01_01.bvh"
local boxing_path = data .. "/assimp_misc/Boxing_Toes.bvh"
local makehuman_path = data .. "/makehuman/tpose.bvh"
local have_data = exists(cmu_path) and exists(boxing_path) and exists(makehuman_path)
if not have_data then print("skip: ../shared/data not found (" .. data .. "): real-data checks skipped") end

local tests = {
  errors_without_data = function()
    local clip = chain:clip()
    t.raises("bad argument #1 to 'rigel.retarget' (Clip or Scene expected, got Skeleton)", "source type",
      rigel.retarget, chain.skeleton, chain)
    t.raises("bad argument #2 to 'rigel.retarget' (Skeleton, Scene or Clip expected, got no value)", "target type",
      rigel.retarget, clip)
    t.raises("bad argument #3 to 'rigel.retarget' (table expected, got string)", "options type",
      rigel.retarget, clip, chain, "pin")
    t.raises("unknown option 'pin_fet' (expected one of: map, root_motion, root_motion_bone, pin_feet, pin_hands, "
      .. "follow_source, source_reference_frame, target_reference_frame, source_up, target_up, "
      .. "source_unit, target_unit, contact_height, contact_speed, contact_min_frames, "
      .. "contact_blend, knee_hyperextension)", "unknown options list the valid ones",
      rigel.retarget, clip, chain, { pin_fet = true })
    t.raises("field 'pin_feet': boolean expected, got number", "option types",
      rigel.retarget, clip, chain, { pin_feet = 1 })
    t.raises("bad argument #3 to 'rigel.retarget' (field 'root_motion': invalid value 'fly', expected one of: "
      .. "scale, keep, in-place, extract)", "root motion policies listed",
      rigel.retarget, clip, chain, { root_motion = "fly" })
    t.raises("root_motion_bone needs root_motion = \"extract\"", "a root bone needs extract",
      rigel.retarget, clip, chain, { root_motion_bone = "Root" })
    t.raises("field 'root_motion_bone': joint name expected", "root bone type",
      rigel.retarget, clip, chain, { root_motion = "extract", root_motion_bone = 3 })
    t.raises("field 'target_up': invalid value 'x', expected one of: y, z, Y, Z", "up axes",
      rigel.retarget, clip, chain, { target_up = "x" })
    t.raises("field 'source_reference_frame': integer in [1, 4] expected", "1-based frames",
      rigel.retarget, clip, chain, { source_reference_frame = 0 })
    t.raises("field 'target_reference_frame' needs a target with a clip", "target frame needs a clip",
      rigel.retarget, clip, chain.skeleton, { target_reference_frame = 1 })
    t.raises("bad argument #3 to 'rigel.retarget' (map: no source joint 'Uper' (closest: Upper, Lower, Root))", "closest source names",
      rigel.retarget, clip, chain, { map = { Uper = "Upper" } })
    t.raises("map: no target joint 'Lowr' (closest: Lower", "closest target names",
      rigel.retarget, clip, chain, { map = { Root = "Root", Upper = "Lowr" } })
    t.raises("map: 'Root' must map to a joint name, a list of them or {target = ...}, got number",
      "entry types", rigel.retarget, clip, chain, { map = { Root = 1 } })
    t.raises("map: unknown field 'rotation' in the entry of 'Root' (expected one of: target, role, "
      .. "rotate, order)", "entry fields", rigel.retarget, clip, chain,
      { map = { Root = { target = "Root", rotation = { 0, 0, 0 } } } })
    t.raises("map: invalid role 'Hip' for 'Root'", "roles checked", rigel.retarget, clip, chain,
      { map = { Root = { target = "Root", role = "Hip" } } })
    t.raises("map: keys must be source joint names, got number", "keys checked",
      rigel.retarget, clip, chain, { map = { "Root" } })
    t.raises("field 'map': path, XML text or table expected, got boolean", "map type",
      rigel.retarget, clip, chain, { map = true })
    t.raises("map:2: <bone> needs a non-empty target attribute", "XML errors name the line",
      rigel.retarget, clip, chain,
      { map = '<rigel-bone-map version="1">\n  <bone source="Root"/>\n</rigel-bone-map>' })
    t.raises("map: map:3: no source joint 'Nope' (closest:", "XML joint errors name the line",
      rigel.retarget, clip, chain, { map = '<rigel-bone-map version="1">\n'
        .. '  <bone source="Root" target="Root"/>\n  <bone source="Nope" target="Upper"/>\n'
        .. '</rigel-bone-map>' })
    t.raises("wrong number of arguments to '?' (expected at most 3, got 4)", "count checked",
      rigel.retarget, clip, chain, {}, 1)
    t.raises("bad argument #2 to 'rigel.suggest_map' (Skeleton, Scene, Clip or Pose expected, got no value)",
      "suggest_map needs two skeletons", rigel.suggest_map, chain)
  end,

  contacts_known_by_construction = function()
    -- chain.bvh: Side is at its lowest in frames 1, 3 and 4 and lifted by 2 in frame 2.
    local clip = chain:clip()
    local w, info = rigel.contacts(clip, "Side", { up = "y", scale = 1, height = 0.1, speed = 100,
      min_frames = 1 })
    t.eq(#w, 2, "two windows")
    t.eq(w[1].first * 10 + w[1].last, 11, "frame 1")
    t.eq(w[2].first * 10 + w[2].last, 34, "frames 3-4")
    t.eq(w[1].joint, "Side", "windows name their joint")
    t.eq(info.up, "y", "up axis used")
    t.eq(info.scale, 1, "scale used")
    t.near(info.height, 0.1, 1e-15, "absolute height threshold")
    t.near(info.speed, 100, 1e-12, "absolute speed threshold")
    t.eq(#rigel.contacts(clip, "Side", { up = "y", scale = 1, height = 0.1, speed = 100 }), 0,
      "min_frames defaults to 3")
    local lists = rigel.contacts(clip, { "Side", 1 }, { up = "y", scale = 1, height = 0.1,
      speed = 100, min_frames = 1 })
    t.eq(#lists, 2, "a list per joint")
    t.eq(#lists[1], 2, "Side's windows as alone (Root's lowest height is 0 too)")
    t.eq(lists[1][2].first * 10 + lists[1][2].last, 34, "Side frames 3-4")
    t.eq(lists[2][1].joint, "Root", "joint index 1 is Root")
    local _, defaults = rigel.contacts(clip, "Side")
    t.near(defaults.height, 0.06 * defaults.scale, 1e-12, "default height: 0.06 hip heights")
    t.near(defaults.speed, 0.35 * defaults.scale, 1e-12, "default speed: 0.35 hip heights/s")
    local up, height = rigel.up_axis(clip)
    t.eq(up, defaults.up, "the same up guess")
    t.ok(height > 0, "figure height")
    t.raises("bad argument #2 to 'rigel.contacts' (no joint 'Sid' (closest: Side", "joint names",
      rigel.contacts, clip, "Sid")
    t.raises("bad argument #2 to 'rigel.contacts' (joint list item 2: no joint 'Tipp'",
      "list items", rigel.contacts, clip, { "Side", "Tipp" })
    t.raises("unknown option 'hight'", "options checked", rigel.contacts, clip, "Side", { hight = 1 })
    t.raises("field 'up': invalid value 'w', expected one of: x, y, z", "up checked",
      rigel.contacts, clip, "Side", { up = "w" })
    t.raises("field 'scale': the figure's hip height must be > 0", "scale checked",
      rigel.contacts, clip, "Side", { scale = 0 })
    t.raises("bad argument #1 to 'rigel.contacts' (Clip expected", "clip checked",
      rigel.contacts, chain, "Side")
  end,

  onto_itself = function()
    -- A clip onto its own skeleton with an explicit identity map reproduces the clip.
    local clip = chain:clip()
    local map = { Root = "Root", Upper = "Upper", Lower = "Lower", Tip = "Tip", Side = "Side" }
    local out, m = rigel.retarget(clip, chain, { map = map, root_motion = "keep" })
    t.eq(out.num_frames, 4, "every frame")
    t.ok(out.skeleton == chain.skeleton, "on the target skeleton")
    t.eq(m.frames, 4, "metrics frames")
    t.eq(m.mapped_joints, 5, "mapped joints")
    for f = 1, 4 do
      t.vnear(out:pose(f):world_position("Tip"), clip:pose(f):world_position("Tip"), 1e-9,
        "frame " .. f .. " Tip")
    end
    t.near(m.bone_direction_max_deg, 0, 1e-6, "no direction error")
    t.eq(type(m.segments), "table", "segments listed")
    t.eq(type(m.warnings), "table", "warnings listed")
  end,
}

if have_data then
  local cmu = rigel.load(cmu_path)
  local clip = cmu:clip():slice(1, 240)
  local boxing = rigel.load(boxing_path)

  tests.cmu_onto_motion_analysis = function()
    local out, m = rigel.retarget(clip, boxing, { pin_feet = true })
    t.eq(out.num_frames, 240, "240 frames")
    t.ok(out.skeleton == boxing.skeleton, "baked on the target skeleton")
    t.eq(m.frames, 240, "metrics frames")
    t.ok(m.bone_direction_mean_deg < 2, "bone direction mean < 2 deg (" .. m.bone_direction_mean_deg .. ")")
    t.ok(m.bone_direction_max_deg >= m.bone_direction_mean_deg, "max >= mean")
    t.ok(m.contacts > 0 and m.contact_frames > 0, "contacts found (" .. m.contacts .. ")")
    t.ok(m.foot_slide_max_mm < 5, "foot slide < 5 mm (" .. m.foot_slide_max_mm .. ")")
    t.ok(m.ik_applied, "IK pass ran")
    t.eq(m.source_up, "y", "CMU is Y-up")
    t.eq(m.target_up, "y", "Boxing_Toes is Y-up")
    -- Boxing_Toes is in cm, CMU in its own ~5.6 cm unit: the target's hips are more units high.
    t.ok(m.hip_height_ratio > 1, "hip ratio in units " .. m.hip_height_ratio)
    t.ok(#m.segments >= m.bones, "a row per segment")
    t.ok(m.bone_direction_worst:find(" -> ", 1, true) ~= nil, "worst bone named")
    -- Without pinning the feet are where the rotations put them.
    local _, free = rigel.retarget(clip, boxing)
    t.eq(free.ik_applied, false, "no IK without pin_feet")
    t.ok(free.bone_direction_mean_deg < 1e-6, "rotations alone reproduce the directions ("
      .. free.bone_direction_mean_deg .. ")")
    t.ok(free.bone_direction_mean_deg <= m.bone_direction_mean_deg, "pinning bends the legs")
    -- Root motion: in-place keeps the hips' horizontal position.
    local still = rigel.retarget(clip, boxing, { root_motion = "in-place" })
    local a, b = still:pose(1):world_position("Hips"), still:pose(240):world_position("Hips")
    t.near(a.x, b.x, 1e-9, "in-place x")
    t.near(a.z, b.z, 1e-9, "in-place z")
  end

  tests.root_motion_extract_onto_a_new_root_bone = function()
    -- Boxing_Toes's root is its hips: extract adds "Root" above them, on the ground under the
    -- hips; every other joint is where the "scale" result puts it (docs/retarget.md).
    local scaled = rigel.retarget(clip, boxing)
    local out, m = rigel.retarget(clip, boxing, { root_motion = "extract", root_motion_bone = "Root" })
    t.eq(out.skeleton:joints()[1], "Root", "the new root is joint 1")
    t.eq(out.skeleton.num_joints, boxing.skeleton.num_joints + 1, "one joint more")
    t.eq(out.num_channels, scaled.num_channels + 6, "with position and rotation channels")
    t.eq(out.num_frames, clip.num_frames, "every frame")
    local worst = 0
    for _, f in ipairs({ 1, 60, 120, 240 }) do
      for _, j in ipairs({ "Hips", "LeftAnkle", "RightWrist", "Head" }) do
        local d = (out:pose(f):world_position(j) - scaled:pose(f):world_position(j)):length()
        worst = math.max(worst, d)
      end
    end
    t.near(worst, 0, 1e-6, "joints as in the scale result (worst " .. worst .. ")")
    -- The root bone is the hips projected on the ground (Y-up): their x and z, at a constant
    -- height.
    local ground = out:pose(1):world_position("Root").y
    for _, f in ipairs({ 1, 60, 120, 240 }) do
      local root, hips = out:pose(f):world_position("Root"), scaled:pose(f):world_position("Hips")
      t.near(root.y, ground, 1e-9, "root at the ground's height at frame " .. f)
      t.near(root.x, hips.x, 1e-9, "root under the hips (x) at frame " .. f)
      t.near(root.z, hips.z, 1e-9, "root under the hips (z) at frame " .. f)
    end
    t.ok(ground < scaled:pose(1):world_position("Hips").y, "the ground is below the hips")
    t.eq(m.frames, clip.num_frames, "metrics of the extract run")
    -- The new skeleton keeps the target's unit when saved.
    out:save(arg.out .. "/extract.glb")
    local back = rigel.load(arg.out .. "/extract.glb"):clip()
    -- Boxing_Toes.bvh states no unit; rigel.load estimated centimetres (153 units tall).
    local head = out:pose(1):world_position("Head") * 0.01
    t.near((back:pose(1):world_position("Head") - head):length(), 0, 1e-5,
      "saved in metres, from the target's centimetres")
  end

  tests.contacts_on_cmu = function()
    -- Each window obeys the documented rule, recomputed here; the frames around it break it.
    local feet = { "LeftFoot", "RightFoot" }
    local lists, info = rigel.contacts(clip, feet)
    t.eq(info.up, "y", "CMU is Y-up")
    local n = clip.num_frames
    for i, foot in ipairs(feet) do
      local p = {}
      for f = 1, n do p[f] = clip:pose(f):world_position(foot) end
      local function planted(f)
        local a, b = p[math.max(f - 1, 1)], p[math.min(f + 1, n)]
        local span = (math.min(f + 1, n) - math.max(f - 1, 1)) * clip.frame_time
        local v = span > 0 and math.sqrt((b.x - a.x) ^ 2 + (b.z - a.z) ^ 2) / span or 0
        return p[f].y - info.ground < info.height and v < info.speed
      end
      t.ok(#lists[i] > 0, foot .. " has contacts")
      for _, w in ipairs(lists[i]) do
        t.ok(w.last - w.first + 1 >= 3, "at least 3 frames")
        for f = w.first, w.last do t.ok(planted(f), foot .. " planted in frame " .. f) end
        if w.first > 1 then t.ok(not planted(w.first - 1), "not before") end
        if w.last < n then t.ok(not planted(w.last + 1), "not after") end
      end
    end
  end

  tests.maps_as_table_xml_and_file = function()
    local map, notes, xml = rigel.suggest_map(cmu, boxing)
    t.eq(map.LeftUpLeg, "LeftHip", "CMU LeftUpLeg -> Motion Analysis LeftHip")
    t.eq(map.LeftArm, "LeftShoulder", "CMU LeftArm -> LeftShoulder")
    t.eq(map.Hips, "Hips", "hips")
    t.eq(type(notes), "table", "notes")
    t.ok(xml:find('<bone source="LeftUpLeg" target="LeftHip"', 1, true) ~= nil, "XML text")
    local _, auto = rigel.retarget(clip, boxing, { pin_feet = true })
    local _, from_xml = rigel.retarget(clip, boxing, { pin_feet = true, map = xml })
    local _, from_table = rigel.retarget(clip, boxing, { pin_feet = true, map = map })
    t.eq(from_xml.bone_direction_mean_deg, auto.bone_direction_mean_deg, "XML map = automatic")
    t.eq(from_table.bone_direction_mean_deg, auto.bone_direction_mean_deg, "table map = automatic")
    t.eq(from_table.foot_slide_max_mm, auto.foot_slide_max_mm, "same pinning")
    local file = samples .. "/retarget/cmu_to_motion_analysis.xml"
    local _, from_file = rigel.retarget(clip, boxing, { pin_feet = true, map = file })
    t.ok(from_file.bone_direction_mean_deg < 2, "sample map file works")
    -- Entries with roles, rotate offsets and several targets for one source.
    local rich = {}
    for k, v in pairs(map) do rich[k] = v end
    rich.LeftHand = { target = "LeftWrist", role = "LeftHand", rotate = { 10, 0, 0 }, order = "XYZ" }
    local turned = rigel.retarget(clip, boxing, { map = rich })
    local plain = rigel.retarget(clip, boxing, { map = map })
    local angle = turned:pose(1):world_rotation("LeftWrist"):angle_to(plain:pose(1):world_rotation("LeftWrist"))
    t.near(angle, 10, 1e-6, "rotate turns the wrist by 10 degrees")
    t.raises("map: " .. file:gsub("cmu_to_motion_analysis", "cmu_to_makehuman")
      .. ":7: no target joint 'root' (closest:", "a map for another target names file and line",
      rigel.retarget, clip, boxing, { map = file:gsub("cmu_to_motion_analysis", "cmu_to_makehuman") })
  end

  tests.cmu_onto_makehuman_z_up = function()
    -- MakeHuman: Z-up, decimetres, other names; the scene's reference frame as target pose.
    local makehuman = rigel.load(makehuman_path)
    local out, m = rigel.retarget(clip, makehuman, { pin_feet = true, source_reference_frame = 1,
      target_reference_frame = 1 })
    t.eq(out.num_frames, 240, "frames")
    t.eq(m.target_up, "z", "MakeHuman is Z-up")
    t.ok(m.bone_direction_mean_deg < 2, "bone direction mean < 2 deg (" .. m.bone_direction_mean_deg .. ")")
    t.ok(m.foot_slide_max_mm < 5, "foot slide < 5 mm (" .. m.foot_slide_max_mm .. ")")
    t.near(m.target_unit_metres, 0.1, 1e-9, "decimetres found")
    local _, sample = rigel.retarget(clip, makehuman, { pin_feet = true,
      map = samples .. "/retarget/cmu_to_makehuman.xml" })
    print(("MakeHuman, sample map: bone direction mean %.3f deg, foot slide max %.3f mm"):format(
      sample.bone_direction_mean_deg, sample.foot_slide_max_mm))
    -- (samples/retarget/cmu_to_makehuman.xml gives 2.4 deg on this slice where the automatic map
    -- above stays below 2; see notes/issue-6-lua.md.)
    local f = io.open(samples .. "/retarget/cmu_to_makehuman.xml", "r")
    local _, same = rigel.retarget(clip, makehuman, { pin_feet = true, map = f:read("a") })
    f:close()
    t.eq(same.bone_direction_mean_deg, sample.bone_direction_mean_deg, "file = its XML text")
    t.ok(sample.foot_slide_max_mm < 5, "sample map: slide < 5 mm (" .. sample.foot_slide_max_mm .. ")")
    local _, given = rigel.retarget(clip, makehuman, { target_unit = 0.1, source_unit = 0.0564 })
    t.eq(given.target_unit_estimated, false, "units given")
    t.near(given.source_unit_metres, 0.0564, 1e-12, "source unit used")
  end
end

t.run(tests)

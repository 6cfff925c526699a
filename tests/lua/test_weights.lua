-- Blend-shape weights from Lua (issue 28 item 2): clip:weight / set_weight, pose:weight /
-- set_weight, what a bake and slices keep, scene:save(path, clip), and the error texts. Fixture:
-- samples/elbow_corrective/arm.gltf (mesh "Arm", one target "ElbowCorrective", 31 frames).
local rigel = require("rigel")
local t = require("harness")
local dir, samples = arg[1], arg[3]

local scene = rigel.load(samples .. "/elbow_corrective/arm.gltf")
local clip = scene:clip()

t.run({
  clip_weights = function()
    t.eq(clip:weight(1, "Arm", "ElbowCorrective"), 0, "the file's weight")
    local c = clip:copy()
    t.ok(c:set_weight(3, "Arm", "ElbowCorrective", 0.5) == c, "set_weight returns the clip")
    t.eq(c:weight(3, nil, "ElbowCorrective"), 0.5, "mesh nil: the first mesh with that target")
    t.eq(clip:weight(3, "Arm", "ElbowCorrective"), 0, "a copy's weights are its own")
    t.eq(c:slice(2, 4):weight(2, "Arm", "ElbowCorrective"), 0.5, "a slice keeps the weights")
  end,

  pose_weights = function()
    local c = clip:copy()
    local p = c:pose(5)
    t.eq(p.num_weights, 1, "one weight channel")
    t.eq(p:weight("Arm", "ElbowCorrective"), 0, "frame 5's weight")
    t.ok(p:set_weight(nil, "ElbowCorrective", 0.25) == p, "set_weight returns the pose")
    t.eq(p:weight("Arm", "ElbowCorrective"), 0.25, "the pose's weight")
    c:set_pose(7, p)
    t.eq(c:weight(7, "Arm", "ElbowCorrective"), 0.25, "set_pose writes the weights too")
    t.eq(p:copy():weight("Arm", "ElbowCorrective"), 0.25, "a copy keeps them")
  end,

  bake_keys_weights = function()
    local rig = rigel.rig(clip.skeleton)
    local baked = rig:bake(clip, function(frame, pose)
      pose:set_weight("Arm", "ElbowCorrective", frame / 31)
      return false
    end)
    t.near(baked:weight(31, "Arm", "ElbowCorrective"), 1, 1e-12, "the callback's weight, last frame")
    t.near(baked:weight(10, "Arm", "ElbowCorrective"), 10 / 31, 1e-12, "frame 10")
    local path = arg.out .. "/arm_keyed.glb"
    t.eq(#scene:save(path, baked), 0, "glb keeps the mesh, its shape and weights: nothing dropped")
    local dropped = scene:save(arg.out .. "/arm_keyed.bvh", baked)
    t.ok(#dropped >= 2 and dropped[1]:find("BVH holds no mesh: 1 mesh not written", 1, true) and
      dropped[2]:find("BVH holds no blend shape", 1, true),
      "a BVH save names the mesh and the blend shape it drops: " .. table.concat(dropped, " | "))
    local back = rigel.load(path):clip()
    t.eq(back.num_frames, 31, "one take of the baked clip")
    t.near(back:weight(10, "Arm", "ElbowCorrective"), 10 / 31, 1e-6, "weights through glb")
  end,

  errors = function()
    t.raises("no blend shape 'Nope' on mesh 'Arm' (weight channels: Arm/ElbowCorrective)",
      "unknown target", clip.weight, clip, 1, "Arm", "Nope")
    t.raises("no blend shape 'ElbowCorrective' on mesh 'Leg'", "unknown mesh", clip.weight, clip,
      1, "Leg", "ElbowCorrective")
    local p = clip:pose(1)
    t.raises("bad argument #3 to 'set_weight' (number expected, got string)", "not a number",
      function() p:set_weight("Arm", "ElbowCorrective", "x") end)
    t.raises("bad argument #3 to 'set_weight' (number is not finite)", "not finite",
      function() p:set_weight("Arm", "ElbowCorrective", 0 / 0) end)
    t.raises("bad argument #2 to 'weight' (string expected, got table)", "target not a string",
      function() p:weight("Arm", {}) end)
    local chain = rigel.load(dir .. "/fixtures/chain.bvh"):clip()
    t.raises("no blend shape 'Smile' on any mesh (weight channels: none: the clip animates no "
      .. "blend shape)", "a BVH clip has none", chain.weight, chain, 1, nil, "Smile")
    t.eq(chain:pose(1).num_weights, 0, "no weight channel on a BVH pose")
    t.raises("Clip of another skeleton than the scene's", "scene:save with another skeleton's clip",
      scene.save, scene, arg.out .. "/bad.glb", chain)
  end,
})

---@meta rigel
-- LuaLS annotations for the `rigel` module (rigel run / rigel bake scripts). Point
-- lua-language-server at this folder (workspace.library = { "<rigel>/docs/lua", "<rigel>/scripts" })
-- to get completion and type checks. Angles are degrees, frames and joint indices are 1-based.

---A joint: its name, or its 1-based index.
---@alias rigel.JointRef string|integer
---A BVH channel name (case-insensitive).
---@alias rigel.ChannelName "Xposition"|"Yposition"|"Zposition"|"Xrotation"|"Yrotation"|"Zrotation"
---@alias rigel.EulerOrder "XYZ"|"XZY"|"YXZ"|"YZX"|"ZXY"|"ZYX"
---A vec3 or a table {x, y, z} / {x = , y = , z = }.
---@alias rigel.Vec3Like rigel.vec3|number[]|{x: number, y: number, z: number}
---A quat or a table {w, x, y, z} / {w = , x = , y = , z = }.
---@alias rigel.QuatLike rigel.quat|number[]|{w: number, x: number, y: number, z: number}
---@alias rigel.EffectorType "position"|"orientation"|"both"|"aim"|"pole"
---@alias rigel.Method "transpose"|"pinv"|"svd"|"qr"|"dls"|"dls_adaptive"|"ccd"|"two_bone"|"fabrik"
---@alias rigel.Status "converged"|"not_converged"|"unreachable"|"invalid_input"

---@class rigel
---@field version string
local rigel = {}

---@class rigel.LoadOptions
---@field bvh_translation? "auto"|"add"|"replace" how BVH position channels are read
---@field unit? string|number a BVH file's length unit: "m", "dm", "cm", "mm", "in", a factor with a unit ("2.54cm") or metres per file unit ("0.0254", 0.0254)
---@field up? string the up axis of the file's data ("y", "+z", "-y", ...), overriding what the file states or the body suggests (as --up)
---@field forward? string the axis the figure faces ("z", "-y", ...), as --forward

---Reads an animation file (format by extension, see `readable_formats`).
---@param path string
---@param options? rigel.LoadOptions
---@return rigel.Scene
function rigel.load(path, options) end

---Writes a clip (with its skeleton) or a whole scene, atomically; format by extension.
---@param path string
---@param what rigel.Clip|rigel.Scene
function rigel.save(path, what) end

---@return string[] extensions such as ".bvh"
function rigel.readable_formats() end
---@return string[]
function rigel.writable_formats() end

---A clip of `frames` rest-pose frames.
---@param skeleton rigel.Skeleton|rigel.Clip|rigel.Pose|rigel.Scene
---@param frames integer
---@param frame_time? number seconds, default 1/30
---@return rigel.Clip
function rigel.clip(skeleton, frames, frame_time) end

---The rest pose (every channel 0).
---@param skeleton rigel.Skeleton|rigel.Clip|rigel.Pose|rigel.Scene
---@return rigel.Pose
function rigel.pose(skeleton) end

---A new, empty rig on a skeleton.
---@param skeleton rigel.Skeleton|rigel.Clip|rigel.Pose|rigel.Scene
---@return rigel.Rig
function rigel.rig(skeleton) end

---Method and field names of a rigel object.
---@param object any
---@return {methods: string[], fields: string[]}
function rigel.members(object) end
---Solver statistics for `rigel bake`'s report, from a bake the script did its own way. Fields as
---in rigel.BakeSummary (absent = 0; iterations_mean defaults to iterations per solved frame).
---@param fields table<string, number>
---@return rigel.BakeSummary
function rigel.bake_summary(fields) end

---@overload fun(): rigel.vec3
---@overload fun(t: rigel.Vec3Like): rigel.vec3
---@param x number
---@param y number
---@param z number
---@return rigel.vec3
function rigel.vec3(x, y, z) end

---@class rigel.vec3
---@field x number
---@field y number
---@field z number
---@operator add(rigel.Vec3Like): rigel.vec3
---@operator sub(rigel.Vec3Like): rigel.vec3
---@operator mul(number|rigel.Vec3Like): rigel.vec3
---@operator div(number): rigel.vec3
---@operator unm: rigel.vec3
local vec3 = {}
---@return number
function vec3:length() end
---@return rigel.vec3
function vec3:normalized() end
---@param other rigel.Vec3Like
---@return number
function vec3:dot(other) end
---@param other rigel.Vec3Like
---@return rigel.vec3
function vec3:cross(other) end
---@param other rigel.Vec3Like
---@return number
function vec3:distance(other) end
---@param other rigel.Vec3Like
---@param t number
---@return rigel.vec3
function vec3:lerp(other, t) end
---@return rigel.vec3
function vec3:copy() end
---@return number x, number y, number z
function vec3:unpack() end
---@return number[]
function vec3:table() end

---@class rigel.quatlib
---@overload fun(): rigel.quat
---@overload fun(t: rigel.QuatLike): rigel.quat
---@overload fun(w: number, x: number, y: number, z: number): rigel.quat
rigel.quat = {}
---@return rigel.quat
function rigel.quat.identity() end
---Rotation from Euler angles in degrees; x is always the angle about X, whatever the order.
---@param order rigel.EulerOrder
---@param x number
---@param y number
---@param z number
---@return rigel.quat
function rigel.quat.euler(order, x, y, z) end
---@param axis rigel.Vec3Like
---@param degrees number
---@return rigel.quat
function rigel.quat.axis_angle(axis, degrees) end
---The shortest rotation taking direction `from` to direction `to`.
---@param from rigel.Vec3Like
---@param to rigel.Vec3Like
---@return rigel.quat
function rigel.quat.between(from, to) end

---@class rigel.quat
---@field w number
---@field x number
---@field y number
---@field z number
---@operator mul(rigel.quat): rigel.quat
---@operator mul(rigel.vec3): rigel.vec3
---@operator unm: rigel.quat
local quat = {}
---@return rigel.quat
function quat:inverse() end
---@return rigel.quat
function quat:normalized() end
---@param other rigel.QuatLike
---@param t number
---@return rigel.quat
function quat:slerp(other, t) end
---@param other rigel.QuatLike
---@return number degrees
function quat:angle_to(other) end
---@param order? rigel.EulerOrder default "XYZ"
---@return number x, number y, number z degrees
function quat:euler(order) end
---@return rigel.vec3 axis, number degrees
function quat:axis_angle() end
---@param v rigel.Vec3Like
---@return rigel.vec3
function quat:rotate(v) end
---@return number w, number x, number y, number z
function quat:unpack() end
---@return {w: number, x: number, y: number, z: number}
function quat:table() end

---@class rigel.Scene
---@field skeleton rigel.Skeleton
---@field clips rigel.Clip[] views into the scene: editing them edits the scene
---@field num_clips integer
---@field source string
---@field warnings string[]
---@field axes rigel.SceneAxes the axes of the scene's data and how they were found
local Scene = {}

---@class rigel.SceneAxes
---@field up string "+Y", "-Z", ...
---@field up_source "stated"|"inferred"|"user"|"unknown"
---@field up_evidence string
---@field forward string the direction the figure faces
---@field forward_source "stated"|"inferred"|"user"|"unknown"
---@field forward_evidence string
---@field right_handed boolean
---@field original_up? string FBX OriginalUpAxis
---@param index? integer default 1
---@return rigel.Clip
function Scene:clip(index) end
---@param path string
---@param clip? rigel.Clip written as the one take, with the scene's meshes
---@return string[] dropped what the format could not keep, a line each (empty: nothing)
function Scene:save(path, clip) end
function Scene:release() end

---@class rigel.Skeleton
---@field num_joints integer
---@field num_channels integer
---@field root string
local Skeleton = {}
---1-based index of a joint; a wrong name raises, listing the closest names.
---@param joint rigel.JointRef
---@return integer
function Skeleton:joint(joint) end
---@param name string
---@return integer|nil
function Skeleton:find(name) end
---@param joint rigel.JointRef
---@return string
function Skeleton:name(joint) end
---@param joint rigel.JointRef
---@return string|nil name, integer|nil index
function Skeleton:parent(joint) end
---@param joint rigel.JointRef
---@return string[]
function Skeleton:children(joint) end
---@return string[]
function Skeleton:joints() end
---Joint names from `from` down to `to` (`from` must be an ancestor).
---@param from rigel.JointRef
---@param to rigel.JointRef
---@return string[]
function Skeleton:chain(from, to) end
---@param joint rigel.JointRef
---@return rigel.vec3
function Skeleton:rest_offset(joint) end
---@param joint rigel.JointRef
---@return rigel.quat
function Skeleton:rest_orientation(joint) end
---@param joint rigel.JointRef
---@return rigel.ChannelName[]
function Skeleton:channels(joint) end
---@param joint rigel.JointRef
---@param channel rigel.ChannelName
---@return integer column in a clip row (1-based)
function Skeleton:channel_index(joint, channel) end
---@param joint rigel.JointRef
---@return rigel.EulerOrder|nil
function Skeleton:rotation_order(joint) end
---@return {parent: string, offset: rigel.vec3}[]
function Skeleton:end_sites() end
function Skeleton:release() end

---@class rigel.Clip
---@field num_frames integer
---@field num_channels integer
---@field frame_time number seconds
---@field frame_rate number frames per second
---@field duration number seconds, (frames - 1) * frame_time
---@field name string
---@field skeleton rigel.Skeleton
local Clip = {}
---@param frame integer
---@param into? rigel.Pose filled and returned instead of a new pose
---@return rigel.Pose
function Clip:pose(frame, into) end
---@param frame integer
---@param pose rigel.Pose
---@return rigel.Clip self
function Clip:set_pose(frame, pose) end
---@param frame integer
---@param joint rigel.JointRef
---@param channel rigel.ChannelName
---@return number degrees for rotations, file units for positions
function Clip:get(frame, joint, channel) end
---@param frame integer
---@param joint rigel.JointRef
---@param channel rigel.ChannelName
---@param value number
---@return rigel.Clip self
function Clip:set(frame, joint, channel, value) end
---@param first integer
---@param last? integer default the last frame
---@return rigel.Clip a copy
function Clip:slice(first, last) end
---@param fps number
---@return rigel.Clip
function Clip:resample(fps) end
---@return rigel.Clip
function Clip:copy() end
---@param frames integer
---@return rigel.Clip self
function Clip:resize(frames) end
---@param seconds number
---@return rigel.Clip self
function Clip:set_frame_time(seconds) end
---@param name string
---@return rigel.Clip self
function Clip:set_name(name) end
---@class rigel.ReduceSaveOptions
---@field reduce_keys? boolean write the fewest keys within the bound (FBX, glTF; BVH keys every frame)
---@field max_error? number largest world-space error, mm (default 0.1)
---@field virtual_vertex? number distance of the virtual vertices from each joint, mm (default 20)

---@param path string
---@param options? rigel.ReduceSaveOptions
---@return integer? dense_keys with reduce_keys: keys a dense file holds
---@return integer? keys with reduce_keys: keys written
---@return number? max_error with reduce_keys: largest error by FK on the keys written, mm
function Clip:save(path, options) end

---@class rigel.ReduceOptions
---@field max_error? number largest world-space error of any joint or virtual vertex, mm (default 0.1)
---@field virtual_vertex? number distance of the virtual vertices from each joint, mm (default 20)
---@field format? "glb"|"fbx" the file the keys are for: quaternion (glb) or Euler (fbx) curves

---@class rigel.ReducedKeys
---@field dense_keys integer joint tracks x frames
---@field keys integer keys kept
---@field max_error number largest world-space error by FK, mm
---@field rotation table<string, integer[]> per joint name, its rotation key frames (1-based)
---@field translation table<string, integer[]> per joint name, its translation key frames

---Key reduction with a world-space bound (docs/curves.md): the keys a file would hold.
---@param options? rigel.ReduceOptions
---@return rigel.ReducedKeys
function Clip:reduce(options) end

---@class rigel.FilterOptions
---@field cutoff? number Hz, below half the frame rate (default 6)
---@field order? integer Butterworth order of one pass, 1..8 (default 2)
---@field joints? rigel.JointRef[] only these joints (default every joint)
---@field positions? boolean filter position channels (default true)
---@field rotations? boolean filter rotations, as quaternions (default true)
---@field keep_contacts? boolean planted feet stay where they were (default true)
---@field up? "x"|"y"|"z" up axis for the contacts (default "y")

---Zero-phase Butterworth low-pass (scipy.signal.sosfiltfilt's response).
---@param options? rigel.FilterOptions
---@return rigel.Clip a new clip
function Clip:filter(options) end

---Mirrored left to right across the character's own left-right plane (sides from the names).
---@param options? {map?: string[][]} extra counterpart pairs {{"LeftX", "RightX"}, ...}
---@return rigel.Clip a new clip
function Clip:mirror(options) end

---The end blended into the start over `frames` frames; the root keeps its travel per cycle.
---@param options? {frames?: integer, up?: "x"|"y"|"z"} frames default 10
---@return rigel.Clip a new clip
function Clip:loop(options) end

---Frames first..last (1-based, inclusive) or seconds start..stop (nearest frames).
---@param range {first?: integer, last?: integer, start?: number, stop?: number}
---@return rigel.Clip a new clip
function Clip:trim(range) end

---A new clip on a skeleton with one more joint (core/skeleton_edit.h); its channels are zero.
---@param spec {name: string, parent?: string, offset?: rigel.vec3|number[], rotation?: rigel.quat|number[], order?: string, channels?: "rotation"|"position"|"all"|"none"|string[], length?: rigel.vec3|number[]}
---@return rigel.Clip a new clip
function Clip:add_joint(spec) end

---A new clip with a locator: a joint with no bone length (channels default "all").
---@param spec {name: string, parent?: string, offset?: rigel.vec3|number[], rotation?: rigel.quat|number[], order?: string, channels?: "rotation"|"position"|"all"|"none"|string[]}
---@return rigel.Clip a new clip
function Clip:add_locator(spec) end

---A new clip with the joint renamed.
---@param joint string|integer
---@param name string
---@return rigel.Clip a new clip
function Clip:rename_joint(joint, name) end

---A new clip with the joint (and its subtree) under `parent` (nil: a root), world motion kept.
---@param joint string|integer
---@param parent string|integer|nil
---@return rigel.Clip a new clip
function Clip:reparent(joint, parent) end

---A new clip without the joint; its children keep their world motion.
---@param joint string|integer
---@return rigel.Clip a new clip
function Clip:remove_joint(joint) end
---@param frame integer
---@param mesh string|nil nil: the first mesh with that target
---@param target string the blend shape's name
---@return number weight
function Clip:weight(frame, mesh, target) end
---@param frame integer
---@param mesh string|nil nil: every mesh with that target
---@param target string
---@param weight number
---@return rigel.Clip self
function Clip:set_weight(frame, mesh, target, weight) end
function Clip:release() end

---@class rigel.Pose
---@field skeleton rigel.Skeleton
---@field num_channels integer
---@field num_weights integer blend-shape weight channels
local Pose = {}
---@param joint rigel.JointRef
---@param channel rigel.ChannelName
---@return number
function Pose:get(joint, channel) end
---@param joint rigel.JointRef
---@param channel rigel.ChannelName
---@param value number degrees for rotations
---@return rigel.Pose self
function Pose:set(joint, channel, value) end
---@param joint rigel.JointRef
---@return rigel.vec3 degrees about X, Y, Z
function Pose:angles(joint) end
---@param joint rigel.JointRef
---@param xyz rigel.Vec3Like degrees
---@return rigel.Pose self
function Pose:set_angles(joint, xyz) end
---The joint's own scale per axis (1 where it has no scale channel; 1 1 1 at rest).
---@param joint rigel.JointRef
---@return rigel.vec3
function Pose:scale(joint) end
---Keys the joint's own scale (a number: uniform); axes without a scale channel must stay 1.
---@param joint rigel.JointRef
---@param xyz rigel.Vec3Like|number scale factors > 0
---@return rigel.Pose self
function Pose:set_scale(joint, xyz) end
---The lengths of the joint's world axes: its own scale times what it inherits.
---@param joint rigel.JointRef
---@return rigel.vec3
function Pose:world_scale(joint) end
---@param joint rigel.JointRef
---@return rigel.vec3
function Pose:world_position(joint) end
---The world position as three numbers (no vec3 made; for per-frame loops).
---@param joint rigel.JointRef
---@return number x, number y, number z
function Pose:world_xyz(joint) end
---@param joint rigel.JointRef
---@return rigel.quat
function Pose:world_rotation(joint) end
---@param joint rigel.JointRef
---@return rigel.vec3
function Pose:local_position(joint) end
---@param joint rigel.JointRef
---@return rigel.quat
function Pose:local_rotation(joint) end
---@param joint rigel.JointRef
---@param rotation rigel.QuatLike
---@return rigel.Pose self
function Pose:set_local_rotation(joint, rotation) end
---@param joint rigel.JointRef
---@param rotation rigel.QuatLike
---@return rigel.Pose self
function Pose:set_world_rotation(joint, rotation) end
---@param joint rigel.JointRef
---@param position rigel.Vec3Like
---@return rigel.Pose self
function Pose:set_local_position(joint, position) end
---@param joint rigel.JointRef
---@param position rigel.Vec3Like
---@return rigel.Pose self
function Pose:set_world_position(joint, position) end
---World position of the joint's first End Site.
---@param joint rigel.JointRef
---@return rigel.vec3
function Pose:end_position(joint) end
---@return number[]
function Pose:values() end
---@param values number[]
---@return rigel.Pose self
function Pose:set_values(values) end
---@return rigel.Pose self
function Pose:reset() end
---@return rigel.Pose
function Pose:copy() end
---@param other rigel.Pose
---@return rigel.Pose self
function Pose:copy_from(other) end
---@param mesh string|nil nil: the first mesh with that target
---@param target string the blend shape's name
---@return number weight
function Pose:weight(mesh, target) end
---@param mesh string|nil nil: every mesh with that target
---@param target string
---@param weight number
---@return rigel.Pose self
function Pose:set_weight(mesh, target, weight) end
function Pose:release() end

---@class rigel.EffectorOptions
---@field type? rigel.EffectorType default "position"
---@field name? string default the joint's name ("<joint>.<type>" for other types)
---@field offset? rigel.Vec3Like effector point in the joint's space
---@field end_site? boolean use the joint's End Site as the offset
---@field offset_rotation? rigel.QuatLike
---@field axes? string constrained world axes of a position, e.g. "xz"
---@field aim_axis? rigel.Vec3Like aim: the joint-space axis that points at the target (default +X)
---@field root? rigel.JointRef pole: chain root (default the joint's grandparent)
---@field mid? rigel.JointRef pole: chain middle (default the joint's parent)
---@field weight? number default 1
---@field priority? integer 0 = highest
---@field alternate? boolean use the alternate Jacobian
---@field target? rigel.Vec3Like initial target position
---@field orientation? rigel.QuatLike initial target orientation

---@class rigel.StageOptions
---@field method? rigel.Method default "dls_adaptive"
---@field effectors? string[] default every effector
---@field chain_root? rigel.JointRef only this joint and its descendants move
---@field upper? rigel.JointRef two_bone: upper joint
---@field lower? rigel.JointRef two_bone: lower joint
---@field max_iterations? integer default 100
---@field tolerance? number position tolerance, default 1e-6
---@field angle_tolerance? number degrees
---@field stall_fraction? number
---@field stall_iterations? integer
---@field max_step? number degrees per iteration
---@field lambda? number
---@field lambda_min? number
---@field lambda_max? number
---@field svd_threshold? number
---@field preferred_power? integer even, >= 2
---@field preferred_step? number
---@field ik_blend? number IK/FK blend of the stage's effectors, 0..1 (default 1)

---@class rigel.SolveReport
---@field status rigel.Status
---@field converged boolean
---@field iterations integer
---@field message string
---@field residuals table<string, {position: number, angle: number}> per effector; angle in degrees
---@field max_position_error number
---@field max_angle_error number degrees
---@field on_limit {joint: string, channel: rigel.ChannelName}[]

---The per-frame records of a rig:bake (its third result): #records solved frames, records[i] a
---table built on access.
---@class rigel.BakeRecords

---Read-only solver statistics of a bake (rig:bake's second result, or rigel.bake_summary{...}).
---@class rigel.BakeSummary
---@field frames integer
---@field converged integer
---@field not_converged integer
---@field unreachable integer
---@field skipped integer
---@field iterations integer
---@field max_position_error number
---@field max_angle_error number degrees
---@field worst_frame integer
---@field residual_mean number mean over solved frames of the largest position error
---@field residual_max number the largest position error (= max_position_error)
---@field iterations_mean number
---@field iterations_max integer
---@field frames_with_limit_hits integer frames where some channel ended on a limit
---@field frames_unreachable integer
local BakeSummary = {}
---The per-frame records of the rig:bake that returned this summary (nil for rigel.bake_summary).
---@return rigel.BakeRecords|nil
function BakeSummary:records() end

---@class rigel.ConstraintSwitch
---@field frame integer 1-based frame from which `target` is the parent
---@field target rigel.JointRef

---@class rigel.ConstraintOptions
---@field joint? rigel.JointRef the constrained joint (every kind but twist and spline_ik)
---@field target? rigel.JointRef required except for limit_rotation, limit_location, limit_scale, twist, spline_ik
---@field influence? number 0..1, default 1
---@field after_stage? integer 1-based stage the constraint follows; 0 = before any stage
---@field maintain_offset? boolean parent (default true), point, orient (default false)
---@field switch? rigel.ConstraintSwitch[] parent: targets over time, by increasing frame
---@field axes? string "xyz" subsets: point, orient, copy_*, limit_rotation (default "xyz")
---@field aim_axis? rigel.Vec3Like aim: joint-space axis pointing at the target (default +X)
---@field up_axis? rigel.Vec3Like aim: joint-space axis turned towards the up vector (default +Y); spline_ik "ends": the bones' up axis (default +Z)
---@field up_type? "world"|"object"|"object_rotation" aim (default "world")
---@field up_target? rigel.JointRef aim: for "object" and "object_rotation"
---@field up? rigel.Vec3Like aim: world up ("world") or up in up_target's space (default +Y)
---@field mode? "replace"|"add" copy_location, copy_rotation, copy_scale (default "replace")
---@field min? rigel.Vec3Like limit_rotation: degrees per axis (x, y, z); limit_location, limit_scale: {x=, y=, z=} bounds (absent axis: unbounded)
---@field max? rigel.Vec3Like limit_rotation: degrees per axis; limit_location, limit_scale: as min
---@field space? "world"|"local" limit_location (default "world")
---@field distance? number limit_distance: radius (default: the first frame's distance)
---@field limit? "inside"|"outside"|"surface" limit_distance (default "inside")
---@field driver? rigel.JointRef twist: the joint whose twist is shared out
---@field joints? rigel.JointRef[] twist: the twist joints; spline_ik: the chain, root to tip (or root and tip)
---@field weights? number[] twist: each twist joint's share, 0..1 (default i / (n + 1))
---@field axis? rigel.Vec3Like twist: axis in the reference joint's space (default the bone axis)
---@field reference? rigel.JointRef twist: default the nearest joint above driver and twist joints
---@field root? rigel.JointRef spline_ik: the chain's root (with tip, instead of joints)
---@field tip? rigel.JointRef spline_ik: the chain's tip
---@field points? (rigel.Vec3Like|rigel.JointRef)[] spline_ik: control points, fixed (vec3) or joints
---@field curve? "catmull_rom"|"bezier" spline_ik (default "catmull_rom", centripetal; bezier: 3k + 1 points)
---@field stretch? boolean spline_ik: spread the joints over the whole curve (needs position channels)
---@field twist? "keep"|"ends" spline_ik: roll kept (Blender, default) or from up_start to up_end
---@field up_start? rigel.Vec3Like|rigel.JointRef spline_ik "ends": world up, or a joint's rotation times up_axis (default the first point's joint)
---@field up_end? rigel.Vec3Like|rigel.JointRef spline_ik "ends": as up_start (default the last point's joint)

---@class rigel.Rig
---@field skeleton rigel.Skeleton
---@field num_effectors integer
---@field num_stages integer
---@field num_constraints integer
local Rig = {}
---Adds an effector; returns its name.
---@param joint rigel.JointRef
---@param options? rigel.EffectorOptions
---@return string
function Rig:effector(joint, options) end
---Sets this frame's target. A quat as second argument sets the orientation. The effector is its
---name or its handle (1-based index in creation order).
---@param effector string|integer
---@param position? rigel.Vec3Like|rigel.quat
---@param orientation? rigel.QuatLike
---@return rigel.Rig self
---@overload fun(self: rigel.Rig, effector: string|integer, x: number, y: number, z: number, orientation?: rigel.QuatLike): rigel.Rig
function Rig:target(effector, position, orientation) end
---@param effector string|integer
---@return rigel.vec3 position, rigel.quat orientation, number frame_weight, number ik_blend
function Rig:get_target(effector) end
---This frame's least-squares weight factor (0 switches the effector off; otherwise only its share
---against other effectors changes). Not a blend: see Rig:ik_blend.
---@param effector string|integer
---@param weight number
---@return rigel.Rig self
function Rig:frame_weight(effector, weight) end
---Alias of Rig:frame_weight (its older name).
---@param effector string|integer
---@param weight number
---@return rigel.Rig self
function Rig:blend(effector, weight) end
---This frame's IK/FK blend of the effector's chain (Maya's ikBlend): 0 = the animated pose,
---1 = the solve; rotations slerped per joint, positions lerped. Not for poles.
---@param effector string|integer
---@param blend number 0..1
---@return rigel.Rig self
function Rig:ik_blend(effector, blend) end
---The IK/FK blend of every effector of a stage (1-based), multiplying theirs.
---@param stage integer
---@param blend number 0..1
---@return rigel.Rig self
function Rig:stage_ik_blend(stage, blend) end
---@param effector string|integer
---@param weight number
---@return rigel.Rig self
function Rig:set_weight(effector, weight) end
---@param effector string|integer
---@param priority integer
---@return rigel.Rig self
function Rig:set_priority(effector, priority) end
---@param joint rigel.JointRef
---@param channel rigel.ChannelName
---@param min number degrees for rotations
---@param max number
---@return rigel.Rig self
function Rig:limit(joint, channel, min, max) end
---@param joint rigel.JointRef
---@param channel rigel.ChannelName
---@return number min, number max
function Rig:get_limit(joint, channel) end
---@param joint rigel.JointRef
---@param channel? rigel.ChannelName default every channel of the joint
---@return rigel.Rig self
function Rig:lock(joint, channel) end
---@param joint rigel.JointRef
---@param channel? rigel.ChannelName
---@return rigel.Rig self
function Rig:unlock(joint, channel) end
---@param joint rigel.JointRef
---@param channel rigel.ChannelName
---@return boolean
function Rig:is_locked(joint, channel) end
---@param joint rigel.JointRef
---@param strength number 0 relaxes the joint
---@return rigel.Rig self
function Rig:strength(joint, strength) end
---@param joint rigel.JointRef
---@param channel rigel.ChannelName
---@param value number degrees for rotations
---@param gain? number default 1
---@return rigel.Rig self
function Rig:prefer(joint, channel, value, gain) end
---FABRIK: the joint's bone stays within max_degrees of its rest direction.
---@param joint rigel.JointRef
---@param max_degrees number 0..180
---@return rigel.Rig self
function Rig:cone(joint, max_degrees) end
---FABRIK: the joint turns about axis (in the frame its rotation channels act in) by min..max.
---@param joint rigel.JointRef
---@param axis "x"|"y"|"z"|rigel.Vec3Like
---@param min number degrees, >= -180
---@param max number degrees, <= 180
---@return rigel.Rig self
function Rig:hinge(joint, axis, min, max) end
---@param joint rigel.JointRef
---@return "none"|"cone"|"hinge" kind, number|rigel.vec3|nil degrees_or_axis, number? min, number? max
function Rig:get_bone_limit(joint) end
---@param joint rigel.JointRef
---@return rigel.Rig self
function Rig:clear_bone_limit(joint) end
---Appends a solver stage; returns its 1-based index.
---@param options rigel.StageOptions
---@return integer
function Rig:stage(options) end
---@return rigel.Rig self
function Rig:clear_stages() end
---@return string[]
function Rig:effectors() end
---Solves in place; invalid rigs raise. Constraints declared before the first stage run before the
---solve, the others after it; a rig with constraints and no effector is only constrained.
---@param pose rigel.Pose
---@param frame? integer 1-based, selects parent-switch targets (default 1)
---@return rigel.SolveReport
function Rig:solve(pose, frame) end
---Declares a constraint (docs/constraints.md); returns its handle (1-based index). It runs after
---the stages declared so far (before any stage when none), or after options.after_stage.
---@param kind "parent"|"point"|"orient"|"aim"|"copy_location"|"copy_rotation"|"limit_rotation"|"limit_distance"|"limit_location"|"twist"|"spline_ik"|"copy_scale"|"limit_scale"
---@param options rigel.ConstraintOptions
---@return integer
function Rig:constraint(kind, options) end
---Twist distribution: rig:constraint("twist", options), the driver's twist about its bone axis
---shared over the twist joints by weight (docs/constraints.md). Returns the handle.
---@param options rigel.ConstraintOptions driver, joints, weights, axis, reference, influence
---@return integer
function Rig:twist(options) end
---Foot roll as a rig object (docs/constraints.md, Foot roll): the pose effector's target is the
---planted ankle; each solve rolls it by the foot's pivots and turns options.toe_joint. Options:
---those of rigel.foot_roll plus toe_joint. Returns the handle.
---@param effector integer|string a pose effector (type = "both")
---@param options table heel, ball, toe, inner, outer, side, forward, roll, break, bank, toe_tap, toe_joint
---@return integer
function Rig:foot_roll(effector, options) end
---Keys a foot roll's values for the next solves (degrees; absent ones keep theirs).
---@param handle integer
---@param values {roll?: number, bank?: number, toe_tap?: number, break?: number}
---@return rigel.Rig self
function Rig:set_foot_roll(handle, values) end
---Sets a constraint's influence (e.g. keyed per frame from a bake callback).
---@param handle integer
---@param influence number 0..1
---@return rigel.Rig self
function Rig:set_influence(handle, influence) end
---The declared constraints in evaluation order.
---@return {kind: string, joint: string, after_stage: integer}[]
function Rig:constraints() end
---Per frame: pose = the clip's frame, fn(frame, pose, rig) sets targets (return false to skip the
---solve), solve, write. Returns the baked clip, a summary and the per-frame records (one per
---solved frame: records[i] = {frame, status, iterations, restarts, effectors = {name = {position,
---angle, target, active}}, on_limit, swivel_jump}).
---@param clip rigel.Clip
---@param fn? fun(frame: integer, pose: rigel.Pose, rig: rigel.Rig): boolean|nil
---@return rigel.Clip baked, rigel.BakeSummary summary, rigel.BakeRecords records
function Rig:bake(clip, fn) end
function Rig:release() end


---@class rigel.RetargetOptions
---@field map? string|table<string, string|string[]|rigel.MapEntry> path, XML text or table source -> target
---@field root_motion? "scale"|"keep"|"in-place"
---@field pin_feet? boolean
---@field pin_hands? boolean
---@field follow_source? boolean
---@field source_reference_frame? integer 1-based
---@field target_reference_frame? integer 1-based (needs a target Scene or Clip)
---@field source_up? "y"|"z"
---@field target_up? "y"|"z"
---@field source_unit? number metres per unit
---@field target_unit? number metres per unit
---@field contact_height? number fraction of hip height
---@field contact_speed? number hip heights per second
---@field contact_min_frames? integer
---@field contact_blend? number seconds
---@field knee_hyperextension? number degrees

---@class rigel.MapEntry
---@field target string
---@field role? string humanoid role ("Hips", "LeftHand", ...)
---@field rotate? rigel.Vec3Like degrees in the target joint's space
---@field order? "XYZ"|"XZY"|"YXZ"|"YZX"|"ZXY"|"ZYX"

---@class rigel.RetargetSegment
---@field name string
---@field branch boolean
---@field mean_deg number
---@field max_deg number

---@class rigel.RetargetMetrics
---@field frames integer
---@field mapped_joints integer
---@field bones integer
---@field hip_height_ratio number
---@field source_unit_metres number
---@field target_unit_metres number
---@field source_unit_estimated boolean
---@field target_unit_estimated boolean
---@field source_up "y"|"z"
---@field target_up "y"|"z"
---@field bone_direction_mean_deg number
---@field bone_direction_max_deg number
---@field bone_direction_worst string
---@field branch_direction_mean_deg number
---@field branch_direction_max_deg number
---@field contacts integer
---@field contact_frames integer
---@field foot_slide_mean_mm number
---@field foot_slide_max_mm number
---@field foot_error_mean_mm number
---@field foot_error_max_mm number
---@field hand_error_mean_mm number
---@field hand_error_max_mm number
---@field joint_limit_violations integer
---@field knee_hyperextension_frames integer
---@field ik_unreached integer
---@field ik_applied boolean
---@field segments rigel.RetargetSegment[]
---@field warnings string[]

---Plays `source` (a Clip, or a Scene's first clip) on `target`'s skeleton.
---@param source rigel.Clip|rigel.Scene
---@param target rigel.Skeleton|rigel.Scene|rigel.Clip
---@param options? rigel.RetargetOptions
---@return rigel.Clip clip, rigel.RetargetMetrics metrics
function rigel.retarget(source, target, options) end

---@class rigel.ContactOptions
---@field up? "x"|"y"|"z" default: guessed from frame 1
---@field scale? number the figure's hip height in clip units (> 0); default: measured in frame 1
---@field height? number height threshold in hip heights (default 0.06)
---@field speed? number horizontal speed threshold in hip heights per second (default 0.35)
---@field min_frames? integer shortest contact kept (default 3)

---@class rigel.ContactWindow
---@field first integer first frame (1-based)
---@field last integer last frame (inclusive)
---@field joint string

---@class rigel.ContactInfo
---@field up "x"|"y"|"z"
---@field scale number hip height used
---@field height number height threshold, clip units
---@field speed number speed threshold, clip units per second
---@field ground number ground height

---Foot contacts of one joint (a list of windows) or of a list of joints (a list of window lists,
---in the order given), by the core contact rule (core/retarget/contacts.h).
---@param clip rigel.Clip
---@param joints string|integer|(string|integer)[]
---@param options? rigel.ContactOptions
---@return rigel.ContactWindow[]|rigel.ContactWindow[][] windows, rigel.ContactInfo info
function rigel.contacts(clip, joints, options) end

---@class rigel.CheckOptions
---@field kind? "convert"|"bake"|"retarget" default: "bake" on the source's skeleton, else "retarget"
---@field travel? "scaled"|"kept"|"none" the result's travel (default "scaled")
---@field scale? number result length units per source unit (convert, bake; default 1)
---@field source_up? "x"|"y"|"z"|"-x"|"-y"|"-z" default: the scene's, or "y" for a clip
---@field result_up? "x"|"y"|"z"|"-x"|"-y"|"-z" default: the scene's, or the source's for a clip
---@field source_unit? number metres per unit (default: the scene's)
---@field result_unit? number metres per unit (default: the scene's)
---@field floor? rigel.Clip a clip of the result's skeleton showing its floor (retarget)

---@class rigel.CheckFinding
---@field check string "height", "hips_height", "travel", "ground", "orientation", "limb_direction", "bone_length", "foot_slide", "pops" or "pole_flip"
---@field reason string the measured and expected figures and the limit
---@field frame? integer the worst frame (1-based); nil for the whole clip
---@field value number
---@field limit number

---@class rigel.CheckInfo
---@field suspect boolean
---@field ran string[] the checks that ran
---@field scale number result units per source unit used
---@field humanoid boolean
---@field frames integer

---The plausibility checks of `rigel convert`, `rigel bake` and `rigel retarget` (docs/checks.md):
---`result` (a baked, retargeted or converted clip) against `source`, by the checks' own forward
---kinematics. A Scene gives its first clip with the scene's axes and unit.
---@param source rigel.Clip|rigel.Scene
---@param result rigel.Clip|rigel.Scene
---@param options? rigel.CheckOptions
---@return rigel.CheckFinding[] findings, rigel.CheckInfo info
function rigel.check(source, result, options) end

---The up axis guessed from the clip's first frame (the larger of the joints' Y and Z extents) and
---the figure's height along it.
---@param clip rigel.Clip
---@return "y"|"z" up, number height
function rigel.up_axis(clip) end

---The automatic bone map between two skeletons: a table source -> target (a list when one source
---drives several targets), notes, and the XML text of the map.
---@param source rigel.Skeleton|rigel.Scene|rigel.Clip|rigel.Pose
---@param target rigel.Skeleton|rigel.Scene|rigel.Clip|rigel.Pose
---@return table<string, string|string[]> map, string[] notes, string xml
function rigel.suggest_map(source, target) end

return rigel

---@class rigel.FootRollOptions
---@field heel? rigel.vec3 heel pivot, ankle frame
---@field ball? rigel.vec3 ball pivot, ankle frame
---@field toe? rigel.vec3 toe tip pivot, ankle frame
---@field inner? rigel.vec3 inner edge pivot (bank < 0)
---@field outer? rigel.vec3 outer edge pivot (bank > 0)
---@field side? rigel.vec3 roll axis, up x forward (default x)
---@field forward? rigel.vec3 bank axis (default z)
---@field roll? number degrees: < 0 heel, 0..break ball, > break toe tip
---@field break? number degrees (default 30)
---@field bank? number degrees
---@field toe_tap? number degrees

---The reverse-foot rig: where a planted foot rolled by `options` puts the ankle, and the toe
---joint's angle about the side axis (core/constraints/foot_roll.h).
---@param ankle_position rigel.vec3
---@param ankle_rotation rigel.quat
---@param options rigel.FootRollOptions
---@return rigel.vec3 position, rigel.quat rotation, number toe_degrees
function rigel.foot_roll(ankle_position, ankle_rotation, options) end

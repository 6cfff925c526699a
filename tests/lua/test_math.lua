-- rigel.vec3 and rigel.quat: constructors, operators, conversions, tostring.
local rigel = require("rigel")
local t = require("harness")
local vec3, quat = rigel.vec3, rigel.quat

t.run({
  vec3_constructors = function()
    t.eq(vec3(1, 2, 3), vec3({ 1, 2, 3 }), "table form")
    t.eq(vec3({ x = 1, y = 2, z = 3 }), vec3(1, 2, 3), "named table form")
    t.eq(vec3(), vec3(0, 0, 0), "zero")
    t.eq(tostring(vec3(1, 2.5, -3)), "vec3(1.0, 2.5, -3.0)", "tostring")
    local x, y, z = vec3(4, 5, 6):unpack()
    t.eq(x + y + z, 15, "unpack")
    t.eq(vec3(1, 2, 3):table()[3], 3, "to a plain table")
  end,

  vec3_operators = function()
    local a, b = vec3(1, 2, 3), vec3(4, 5, 6)
    t.eq(a + b, vec3(5, 7, 9), "add")
    t.eq(b - a, vec3(3, 3, 3), "sub")
    t.eq(a * 2, vec3(2, 4, 6), "scale")
    t.eq(2 * a, vec3(2, 4, 6), "scale from the left")
    t.eq(a * b, vec3(4, 10, 18), "component-wise product")
    t.eq(b / 2, vec3(2, 2.5, 3), "divide")
    t.eq(-a, vec3(-1, -2, -3), "negate")
    t.eq(a + { 1, 1, 1 }, vec3(2, 3, 4), "tables mix with vec3")
    t.eq(a:dot(b), 32, "dot")
    t.eq(vec3(1, 0, 0):cross({ 0, 1, 0 }), vec3(0, 0, 1), "cross")
    t.near(vec3(3, 4, 0):length(), 5, 0, "length")
    t.near(vec3(3, 4, 0):normalized().x, 0.6, 1e-15, "normalized")
    t.near(a:distance(b), math.sqrt(27), 1e-12, "distance")
    t.eq(a:lerp(b, 0.5), vec3(2.5, 3.5, 4.5), "lerp")
    local c = a:copy()
    c.x = 10
    t.eq(a.x, 1, "copy is independent")
    t.eq(c.x, 10, "fields are writable")
  end,

  vec3_errors = function()
    t.raises("vec3 expected, got string", "wrong type", function() return vec3(1, 2, 3) + "a" end)
    t.raises("without three finite numbers", "short table", vec3, { 1, 2 })
    t.raises("division by zero", "divide by zero", function() return vec3(1, 1, 1) / 0 end)
    t.raises("cannot normalize a zero-length vec3", "zero normalize", vec3().normalized, vec3())
    t.raises("invalid vec3 field 'w', expected one of: x, y, z", "bad field",
      function() local v = vec3(); v.w = 1 end)
    t.raises("vec3 has no field 'q'", "unknown field read", function() return vec3().q end)
    t.raises("number is not finite", "inf rejected", vec3, 1, math.huge, 0)
  end,

  quat_basics = function()
    local q = quat.axis_angle({ 0, 0, 1 }, 90)
    t.vnear(q * vec3(1, 0, 0), { 0, 1, 0 }, 1e-15, "rotate a vector")
    t.vnear(q:rotate({ 1, 0, 0 }), { 0, 1, 0 }, 1e-15, "rotate method")
    t.vnear((q * q) * vec3(1, 0, 0), { -1, 0, 0 }, 1e-15, "compose")
    t.vnear(q:inverse() * (q * vec3(1, 2, 3)), { 1, 2, 3 }, 1e-14, "inverse")
    t.near(q:slerp(quat(), 0.5):angle_to(quat()), 45, 1e-12, "slerp halfway")
    local axis, angle = q:axis_angle()
    t.vnear(axis, { 0, 0, 1 }, 1e-15, "axis")
    t.near(angle, 90, 1e-12, "angle in degrees")
    t.eq(quat(), quat.identity(), "identity")
    t.near(quat(2, 0, 0, 0).w, 1, 0, "quat() normalises")
    t.vnear(quat.between({ 1, 0, 0 }, { 0, 0, 2 }) * vec3(1, 0, 0), { 0, 0, 1 }, 1e-15,
      "between two directions")
    t.eq(tostring(quat()), "quat(1.0, 0.0, 0.0, 0.0)", "tostring")
    t.near(quat({ w = 1, x = 0, y = 0, z = 0 }).w, 1, 0, "from a table")
  end,

  quat_euler = function()
    -- ZXY: R = Rz(z) Rx(x) Ry(y); x is always the angle about X.
    local q = quat.euler("ZXY", 10, 20, 30)
    local r = quat.axis_angle({ 0, 0, 1 }, 30) * quat.axis_angle({ 1, 0, 0 }, 10) *
        quat.axis_angle({ 0, 1, 0 }, 20)
    t.near(q:angle_to(r), 0, 1e-9, "euler matches the product in order")
    local x, y, z = q:euler("ZXY")
    t.near(x, 10, 1e-9, "x back")
    t.near(y, 20, 1e-9, "y back")
    t.near(z, 30, 1e-9, "z back")
    t.raises("invalid rotation order 'ZZY', expected one of: XYZ, XZY, YXZ, YZX, ZXY, ZYX",
      "bad order lists the valid ones", quat.euler, "ZZY", 0, 0, 0)
    t.raises("quat or vec3 expected, got string", "bad multiply",
      function() return quat() * "x" end)
    t.raises("axis must not be zero", "zero axis", quat.axis_angle, { 0, 0, 0 }, 10)
  end,
})

-- Tiny assertion harness for tests/lua: every check carries a message; failures are collected
-- and reported together, then the script raises so `rigel run` exits 1.
local M = { failures = {}, checks = 0 }

local function where(level)
  local info = debug.traceback("", level + 1):match("\n%s*([^\n]-:%d+):")
  return info or "?"
end

local function fail(message, detail)
  M.failures[#M.failures + 1] = where(3) .. ": " .. message .. (detail and (" (" .. detail .. ")") or "")
end

function M.ok(value, message)
  M.checks = M.checks + 1
  if not value then fail(message, "expected a true value, got " .. tostring(value)) end
end

function M.eq(actual, expected, message)
  M.checks = M.checks + 1
  if actual ~= expected then
    fail(message, "expected " .. tostring(expected) .. ", got " .. tostring(actual))
  end
end

function M.near(actual, expected, tolerance, message)
  M.checks = M.checks + 1
  if type(actual) ~= "number" or math.abs(actual - expected) > tolerance then
    fail(message, ("expected %.9g +- %g, got %s"):format(expected, tolerance, tostring(actual)))
  end
end

-- vec3 (or {x,y,z}) closeness.
function M.vnear(actual, expected, tolerance, message)
  M.checks = M.checks + 1
  local ax, ay, az = actual.x or actual[1], actual.y or actual[2], actual.z or actual[3]
  local ex, ey, ez = expected.x or expected[1], expected.y or expected[2], expected.z or expected[3]
  local d = math.max(math.abs(ax - ex), math.abs(ay - ey), math.abs(az - ez))
  if not (d <= tolerance) then
    fail(message, ("expected (%g, %g, %g), got (%g, %g, %g)"):format(ex, ey, ez, ax, ay, az))
  end
end

-- fn(...) must raise an error whose text contains `needle` (plain find).
function M.raises(needle, message, fn, ...)
  M.checks = M.checks + 1
  local ok, err = pcall(fn, ...)
  if ok then
    fail(message, "expected an error containing '" .. needle .. "', got none")
  elseif not tostring(err):find(needle, 1, true) then
    fail(message, "expected an error containing '" .. needle .. "', got '" .. tostring(err) .. "'")
  end
end

-- Runs test functions given as a table name -> function, in name order.
function M.run(tests)
  local names = {}
  for name in pairs(tests) do names[#names + 1] = name end
  table.sort(names)
  for _, name in ipairs(names) do
    local ok, err = xpcall(tests[name], debug.traceback)
    if not ok then M.failures[#M.failures + 1] = name .. ": " .. tostring(err) end
  end
  if #M.failures > 0 then
    error(("%d failure(s) in %d checks:\n  %s"):format(#M.failures, M.checks,
      table.concat(M.failures, "\n  ")), 0)
  end
  print(("ok: %d tests, %d checks"):format(#names, M.checks))
end

return M

-- Escape attempts against `rigel run` without --allow-io (tests/lua/escapes.cmake prepares
-- arg.out/inner/ and the symlink arg.out/dangling -> <out>_escaped, then checks that nothing was
-- created outside). Every attempt must be refused; docs/security.md lists them.
local rigel = require("rigel")
local t = require("harness")
local dir = arg[1]
local out = arg.out
local inner = out .. "/inner"

local B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
local function b64decode(s)
  local bits, n, bytes = 0, 0, {}
  for c in s:gmatch("[^=]") do
    bits = (bits << 6) | (B64:find(c, 1, true) - 1)
    n = n + 6
    if n >= 8 then
      n = n - 8
      bytes[#bytes + 1] = string.char((bits >> n) & 0xff)
    end
  end
  return table.concat(bytes)
end

local function write(path, bytes)
  local f = assert(io.open(path, "wb"))
  f:write(bytes)
  f:close()
end

-- A glTF written by rigel (its buffer embedded as a data: uri), and the same with the buffer in
-- a file named by `uri`.
rigel.save(out .. "/base.gltf", rigel.load(dir .. "/fixtures/chain.bvh"))
local text = io.open(out .. "/base.gltf"):read("a")
local bin = b64decode(assert(text:match('"uri":%s*"data:[^,"]*,([^"]*)"'), "embedded buffer"))
local function with_uri(uri)
  return (text:gsub('"uri":%s*"data:[^"]*"', '"uri": "' .. uri .. '"'))
end
-- "../" enough times to reach / from `inner`.
local up = string.rep("../", select(2, inner:gsub("/[^/]+", "")) + 2)

t.run({
  gltf_buffer_in_its_folder_loads = function()
    write(inner .. "/ok.bin", bin)
    write(inner .. "/ok.gltf", with_uri("ok.bin"))
    t.eq(rigel.load(inner .. "/ok.gltf"):clip().num_frames, 10, "control: same-folder buffer")
  end,

  gltf_buffer_outside_its_folder_is_refused = function()
    -- The buffer exists and the script may read it: only the loader's confinement refuses it.
    write(out .. "/outside.bin", bin)
    write(inner .. "/escape.gltf", with_uri("../outside.bin"))
    t.raises('could not open referenced file "../outside.bin"', "loader confined to the folder",
      rigel.load, inner .. "/escape.gltf")
  end,

  gltf_buffer_etc_passwd_is_refused = function()
    write(inner .. "/passwd.gltf", with_uri(up .. "etc/passwd"))
    local ok, err = pcall(rigel.load, inner .. "/passwd.gltf")
    t.eq(ok, false, "a buffer at /etc/passwd does not load")
    t.ok(tostring(err):find("could not open referenced file", 1, true), "refused at open: " ..
      tostring(err))
    t.ok(not tostring(err):find("root:", 1, true), "no passwd bytes in the message")
  end,

  dangling_symlink_is_not_followed = function()
    t.raises("denied by the sandbox", "write through a dangling symlink", io.open,
      out .. "/dangling", "w")
    t.raises("denied by the sandbox", "append through a dangling symlink", io.open,
      out .. "/dangling", "a")
    t.raises("denied by the sandbox", "save through a dangling symlink",
      rigel.save, out .. "/dangling", rigel.load(dir .. "/fixtures/chain.bvh"))
  end,
})

-- wrk script: the same create-only puts through etcd's JSON gateway (/v3/kv/txn comparing the
-- key's create revision with 0), for a comparison in the same sitting.
-- Keys: http-bench/<run>/<thread>/<n>; <run> is the script's first argument (wrk ... -- RUN), so
-- several wrk processes started in the same second never write the same key.
local run = tostring(os.time())
local next_id = 0

function setup(thread)
  next_id = next_id + 1
  thread:set("tid", next_id)
end

local alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
local function base64(s)
  return ((s:gsub(".", function(x)
    local r, b = "", x:byte()
    for i = 8, 1, -1 do r = r .. (b % 2 ^ i - b % 2 ^ (i - 1) > 0 and "1" or "0") end
    return r
  end) .. "0000"):gsub("%d%d%d?%d?%d?%d?", function(x)
    if #x < 6 then return "" end
    local c = 0
    for i = 1, 6 do c = c + (x:sub(i, i) == "1" and 2 ^ (6 - i) or 0) end
    return alphabet:sub(c + 1, c + 1)
  end) .. ({ "", "==", "=" })[#s % 3 + 1])
end

function init(args)
  if args[1] then run = args[1] end
end

local n = 0
function request()
  n = n + 1
  local key = base64("http-bench/" .. run .. "/" .. tid .. "/" .. n)
  local body = '{"compare":[{"key":"' .. key .. '","result":"EQUAL","target":"CREATE","create_revision":"0"}],'
    .. '"success":[{"request_put":{"key":"' .. key .. '","value":"MQ=="}}]}'
  return wrk.format("POST", "/v3/kv/txn", { ["Content-Type"] = "application/json" }, body)
end

-- wrk script: create-only puts of fresh keys through Ratchet's HTTP API (If-None-Match: *),
-- the HTTP form of `scripts/bench --workload reserve`. Each wrk thread writes its own keys.
-- Keys: http-bench/<run>/<thread>/<n>; <run> is the script's first argument (wrk ... -- RUN), so
-- several wrk processes started in the same second never write the same key.
local run = tostring(os.time())
local next_id = 0

function setup(thread)
  next_id = next_id + 1
  thread:set("tid", next_id)
end

function init(args)
  if args[1] then run = args[1] end
end

local n = 0
function request()
  n = n + 1
  return wrk.format("PUT", "/v1/items/http-bench/" .. run .. "/" .. tid .. "/" .. n,
    { ["If-None-Match"] = "*", ["Content-Type"] = "application/json" }, "1")
end

-- relbench's sysbench 1.0 API: what a sysbench script calls, written in Lua
-- over relbench's primitives (`__relbench`, made by workload/lua/api.rs and
-- taken away before the script runs). Statements go to the client's
-- connections through relbench's wire clients, which time and count them.

local rb = __relbench
__relbench = nil

sysbench.hooks = {}

-- LuaJIT's ffi as sysbench's scripts use it, and no more: ffi.cdef takes
-- declarations; ffi.C has sysbench's counter (an SB_CNT_ERROR counted is
-- an ignored error of the event, as sysbench counts it; the other
-- counters relbench keeps itself) and usleep. Anything else is refused by
-- name: relbench runs as root, and a script's C calls would too.
do
   local SB_CNT = { "SB_CNT_OTHER", "SB_CNT_READ", "SB_CNT_WRITE", "SB_CNT_EVENT", "SB_CNT_ERROR",
                    "SB_CNT_RECONNECT", "SB_CNT_BYTES_READ", "SB_CNT_BYTES_WRITTEN" }
   local C = {}
   for i, name in ipairs(SB_CNT) do C[name] = i - 1 end
   function C.sb_counter_inc(tid, kind)
      if kind == C.SB_CNT_ERROR then rb.count_error() end
   end
   function C.usleep(us) return rb.usleep(tonumber(us) or 0) end
   setmetatable(C, { __index = function(_, k)
      error("ffi.C." .. tostring(k) .. ": relbench's ffi offers sysbench's sb_counter_inc and usleep only "
            .. "(relbench runs as root; a script's C calls would too)", 2)
   end })
   local ffi = { C = C }
   function ffi.cdef(decls) end
   setmetatable(ffi, { __index = function(_, k)
      error("ffi." .. tostring(k) .. " is not offered by relbench's ffi (ffi.cdef, and ffi.C's "
            .. "sb_counter_inc and usleep, are)", 2)
   end })
   package.loaded.ffi = ffi
end

-- sysbench's report functions, callable from a script's own report hooks
-- (sysbench-tpcc's report_intermediate calls report_default or
-- report_csv). relbench never calls report_intermediate or
-- report_cumulative: it reports its own figures (docs/guide/plans.md), so
-- these run only when the script calls them; they write to stderr, as
-- print does here.
local function per_sec(stat, n)
   local t = stat.time_interval or 0
   if t <= 0 then return 0 end
   return (n or 0) / t
end
function sysbench.report_default(stat)
   local q = (stat.reads or 0) + (stat.writes or 0) + (stat.other or 0)
   io.stderr:write(string.format(
      "[ %.0fs ] thds: %d tps: %4.2f qps: %4.2f (r/w/o: %4.2f/%4.2f/%4.2f) lat (ms): %4.2f err/s: %4.2f reconn/s: %4.2f\n",
      stat.time_total or 0, stat.threads_running or 0, per_sec(stat, stat.events), per_sec(stat, q),
      per_sec(stat, stat.reads), per_sec(stat, stat.writes), per_sec(stat, stat.other),
      (stat.latency_pct or 0) * 1000, per_sec(stat, stat.errors), per_sec(stat, stat.reconnects)))
end
function sysbench.report_csv(stat)
   local q = (stat.reads or 0) + (stat.writes or 0) + (stat.other or 0)
   io.stderr:write(string.format("%.0f,%d,%4.2f,%4.2f,%4.2f,%4.2f,%4.2f,%4.2f,%4.2f,%4.2f\n",
      stat.time_total or 0, stat.threads_running or 0, per_sec(stat, stat.events), per_sec(stat, q),
      per_sec(stat, stat.reads), per_sec(stat, stat.writes), per_sec(stat, stat.other),
      (stat.latency_pct or 0) * 1000, per_sec(stat, stat.errors), per_sec(stat, stat.reconnects)))
end
function sysbench.report_json(stat)
   io.stderr:write(string.format(
      '{"time": %.0f, "threads": %d, "tps": %4.2f, "latency": %4.2f, "errors": %4.2f, "reconnects": %4.2f}\n',
      stat.time_total or 0, stat.threads_running or 0, per_sec(stat, stat.events),
      (stat.latency_pct or 0) * 1000, per_sec(stat, stat.errors), per_sec(stat, stat.reconnects)))
end
sysbench.error = { NONE = 0, RESTART_EVENT = 1 }
sysbench.cmdline.PARALLEL_COMMAND = true
sysbench.cmdline.ARG_NULL = 0
sysbench.cmdline.ARG_BOOL = 1
sysbench.cmdline.ARG_INT = 2
sysbench.cmdline.ARG_SIZE = 3
sysbench.cmdline.ARG_DOUBLE = 4
sysbench.cmdline.ARG_STRING = 5
sysbench.cmdline.ARG_LIST = 6
sysbench.cmdline.ARG_FILE = 7
sysbench.cmdline.ARG_MAX = 8

sysbench.rand = {
   uniform_uint64 = rb.uniform_uint64,
   uniform_double = rb.uniform_double,
   default = rb.default,
   uniform = rb.uniform,
   gaussian = rb.gaussian,
   special = rb.special,
   pareto = rb.pareto,
   zipfian = rb.zipfian,
   unique = rb.unique,
   string = rb.string,
   varstring = function(min_len, max_len)
      assert(min_len <= max_len)
      assert(max_len > 0)
      return rb.varstring(min_len, max_len)
   end,
}

local sql = {}
sysbench.sql = sql
sql.type = {
   NONE = 0, TINYINT = 1, SMALLINT = 2, INT = 3, BIGINT = 4, FLOAT = 5,
   DOUBLE = 6, TIME = 7, DATE = 8, DATETIME = 9, TIMESTAMP = 10, CHAR = 11,
   VARCHAR = 12,
}
sql.error = { NONE = 0, IGNORABLE = 1, FATAL = 2 }
local T = sql.type

-- An error the server reported: raised as sysbench raises it, a table
-- that restarts the event when the error is one to ignore, else text that
-- ends the script (where the script called, by `level`).
local function sql_failed(e, query, level)
   e.query = query
   if e.ignorable or (type(sysbench.hooks.sql_error_ignorable) == "function"
                      and sysbench.hooks.sql_error_ignorable(e)) then
      e.errcode = sysbench.error.RESTART_EVENT
      error(e, level + 1)
   end
   error(string.format("SQL error, errno = %d, state = '%s': %s",
                       e.sql_errno, e.sql_state, e.sql_errmsg), level + 1)
end

local result_mt = {}
result_mt.__index = result_mt
result_mt.__tostring = function() return '<sql_result>' end
function result_mt.fetch_row(self)
   if self.rows == nil then
      error("relbench keeps only the row count of a prepared statement's " ..
               "result (rs.nrows); read values with con:query()", 2)
   end
   self.at = self.at + 1
   return self.rows[self.at]
end
function result_mt.free(self) return true end

local function result(nrows, rows, nfields)
   return setmetatable({ nrows = nrows, rows = rows, nfields = nfields,
                         at = 0 }, result_mt)
end

local param_mt = {}
param_mt.__index = param_mt
param_mt.__tostring = function() return '<sql_param>' end
function param_mt.set(self, value)
   if value == nil then
      error("relbench binds no NULL parameters; use con:query() with NULL " ..
               "in the text", 2)
   end
   if self.max_len ~= nil then
      value = tostring(value)
      if #value > self.max_len then value = value:sub(1, self.max_len) end
   elseif self.real then
      -- A number crosses into relbench as an integer (sysbench's INT
      -- buffers truncate too); a FLOAT or DOUBLE goes as its digits.
      value = string.format("%.17g", value)
   end
   self.v = value
end
function param_mt.set_rand_str(self, fmt)
   if self.max_len == nil then
      error("Unsupported argument type: " .. self.type, 2)
   end
   local v = rb.string(fmt)
   if #v > self.max_len then v = v:sub(1, self.max_len) end
   self.v = v
end

local stmt_mt = {}
stmt_mt.__index = stmt_mt
stmt_mt.__tostring = function() return '<sql_statement>' end
function stmt_mt.bind_create(self, btype, max_len)
   local p = setmetatable({ type = btype, v = 0 }, param_mt)
   if btype == T.TINYINT or btype == T.SMALLINT or btype == T.INT or
      btype == T.BIGINT then
      p.max_len = nil
   elseif btype == T.FLOAT or btype == T.DOUBLE then
      p.real = true
   elseif btype == T.CHAR or btype == T.VARCHAR then
      p.max_len = max_len
      p.v = ""
   else
      error("Unsupported argument type: " .. tostring(btype), 2)
   end
   return p
end
function stmt_mt.bind_param(self, ...)
   self.params = { ... }
   self.n = select('#', ...)
   return 0
end
local rb_execute = rb.execute
function stmt_mt.execute(self)
   -- The values go as arguments: no table crosses into relbench.
   local p, v, count = self.params, self.vals, self.n
   for i = 1, count do v[i] = p[i].v end
   local n, e = rb_execute(self.h, unpack(v, 1, count))
   if n == nil then
      if type(e) == "string" then error(e, 2) end
      sql_failed(e, '<prepared statement>', 2)
   end
   return result(n, nil, 0)
end
function stmt_mt.close(self) return 0 end

local con_mt = {}
con_mt.__index = con_mt
con_mt.__tostring = function() return '<sql_connection>' end
function con_mt.query(self, query)
   local n, rows, nfields = rb.query(self.c, query)
   if n == nil then sql_failed(rows, query, 2) end
   if rows == nil then return nil end
   return result(n, rows, nfields)
end
function con_mt.query_row(self, query)
   local rs = self:query(query)
   if rs == nil or rs.nrows == 0 then return nil end
   return unpack(rs:fetch_row(), 1, rs.nfields)
end
function con_mt.prepare(self, query)
   local h, e = rb.prepare(self.c, query)
   if h == nil then sql_failed(e, query, 2) end
   return setmetatable({ h = h, params = {}, vals = {}, n = 0 }, stmt_mt)
end
function con_mt.disconnect(self) return rb.disconnect(self.c) end
function con_mt.reconnect(self) return rb.reconnect() end

-- Multi-row INSERTs as sysbench builds them: rows joined by commas after
-- the INSERT's text, sent before the statement would pass 512 KiB.
local BULK_LIMIT = 512 * 1024
local function bulk_send(self)
   local b = self.bulk
   if b.n == 0 then return end
   local q = table.concat(b.parts)
   b.parts, b.n, b.len = { b.head }, 0, #b.head
   local n, e = rb.query(self.c, q)
   if n == nil then sql_failed(e, q, 3) end
end
function con_mt.bulk_insert_init(self, query)
   self.bulk = { head = query, parts = { query }, n = 0, len = #query }
   return true
end
function con_mt.bulk_insert_next(self, val)
   local b = self.bulk
   assert(b ~= nil, "bulk_insert_next() before bulk_insert_init()")
   local sep = b.n > 0 and 1 or 0
   if b.len + #val + 1 + sep > BULK_LIMIT then
      assert(b.n > 0, "Query length exceeds the maximum value (524288), aborting")
      bulk_send(self)
      sep = 0
   end
   if sep == 1 then b.parts[#b.parts + 1] = "," end
   b.parts[#b.parts + 1] = val
   b.len = b.len + #val + sep
   b.n = b.n + 1
   return true
end
function con_mt.bulk_insert_done(self)
   if self.bulk ~= nil then
      bulk_send(self)
      self.bulk = nil
   end
   return true
end

local drv_mt = {}
drv_mt.__index = drv_mt
drv_mt.__tostring = function() return '<sql_driver>' end
function drv_mt.name(self) return rb.driver_name end
-- Each connection the script holds is one of its thread's (`c`: 0 the
-- engine's first, then the others it opened before the step).
function drv_mt.connect(self)
   return setmetatable({ c = rb.connect() }, con_mt)
end

function sql.driver(name)
   if name ~= nil and name ~= rb.driver_name then
      error("this target's driver is " .. rb.driver_name .. ", not " ..
               tostring(name), 2)
   end
   return setmetatable({}, drv_mt)
end

-- sysbench 0.5's names, which sysbench 1.0 keeps for old scripts.
thread_id = sysbench.tid
sb_rand = sysbench.rand.default
sb_rand_str = sysbench.rand.string
sb_rand_uniform = sysbench.rand.uniform
sb_rand_gaussian = sysbench.rand.gaussian
sb_rand_special = sysbench.rand.special
function sb_rnd()
   return rb.uniform_uint64() % 4294967296
end
function sb_rand_uniq(a, b)
   a = a or 0
   b = b or 4294967295
   local r
   repeat r = sysbench.rand.unique() until r >= a and r <= b
   return r
end

-- One event as sysbench's thread_run runs it: an error the driver says to
-- ignore calls the restart hook and is handed back as a table (the
-- engine counts the failed event and starts the next); any other error
-- ends the client with its text. Returns true when event() asks to stop.
function __relbench_event()
   local ok, ret = pcall(event, sysbench.tid)
   if ok then return ret and true or false end
   if type(ret) == "table" and ret.errcode == sysbench.error.RESTART_EVENT then
      if sysbench.hooks.before_restart_event then
         sysbench.hooks.before_restart_event(ret)
      end
      return ret
   end
   error(ret, 0)
end

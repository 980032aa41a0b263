-- flamediff_suite.lua: helpers shared by flamediff's microbenchmark scripts
-- (package workload/suite). It builds on sysbench 1.0.20's bundled
-- oltp_common.lua, so prepare, cleanup and the sbtest schema are the stock
-- ones; each script defines its statement and how to bind it per event.

require("oltp_common")

sysbench.cmdline.options.zipf_theta =
   {"Skew of update-zipf's key distribution (0 < theta < 1)", 0.99}

-- suite_prepare(sql, types) prepares sql on a new connection with one bind
-- parameter per entry of types (sysbench.sql.type values) and returns the
-- parameters, to be set before each stmt:execute().
function suite_prepare(sql, types)
   drv = sysbench.sql.driver()
   con = drv:connect()
   stmt = con:prepare(sql)
   local params = {}
   for j, t in ipairs(types) do
      if t == sysbench.sql.type.CHAR then
         params[j] = stmt:bind_create(t, 120)
      else
         params[j] = stmt:bind_create(t)
      end
   end
   if #params > 0 then
      stmt:bind_param(unpack(params))
   end
   return params
end

-- c_template is oltp_common's (local) template of column c.
c_template = string.rep("###########-", 9) .. "###########"

function thread_done()
   stmt:close()
   con:disconnect()
end

-- suite_execute runs the prepared statement (sysbench reads and frees
-- its result, as in the stock scripts).
function suite_execute()
   stmt:execute()
end

-- placeholders returns "?, ?, ..., ?" with n marks.
function placeholders(n)
   return string.rep("?, ", n - 1) .. "?"
end

-- int_types returns a list of n INT types.
function int_types(n)
   local t = {}
   for j = 1, n do
      t[j] = sysbench.sql.type.INT
   end
   return t
end

-- random_id returns an id of the table by --rand-type.
function random_id()
   return sysbench.rand.default(1, sysbench.opt.table_size)
end

-- random_start returns the start of a range of --range-size ids (or k
-- values) that lies within the table.
function random_start()
   local hi = sysbench.opt.table_size - sysbench.opt.range_size
   if hi < 1 then
      hi = 1
   end
   return sysbench.rand.default(1, hi)
end

-- Zipfian draws after Gray et al., "Quickly generating billion-record
-- synthetic databases" (SIGMOD 1994), as YCSB does: rank 1 is the most
-- frequent and is id 1. zipf_init costs O(n) once per thread.
function zipf_init(n, theta)
   assert(theta > 0 and theta < 1, "--zipf-theta must be in (0, 1)")
   local zetan = 0
   for i = 1, n do
      zetan = zetan + 1 / math.pow(i, theta)
   end
   local zeta2 = 1 + 1 / math.pow(2, theta)
   zipf = {
      n = n, theta = theta, zetan = zetan,
      alpha = 1 / (1 - theta),
      eta = (1 - math.pow(2 / n, 1 - theta)) / (1 - zeta2 / zetan),
      half = 1 + math.pow(0.5, theta),
   }
end

function zipf_next()
   local u = sysbench.rand.uniform_double()
   local uz = u * zipf.zetan
   if uz < 1 then
      return 1
   end
   if uz < zipf.half then
      return 2
   end
   local r = 1 + math.floor(zipf.n * math.pow(zipf.eta * u - zipf.eta + 1, zipf.alpha))
   if r > zipf.n then
      r = zipf.n
   end
   return r
end

-- points_bench makes the script a points benchmark: each event runs sql
-- (ending in "IN (") with --range-size random ids.
function points_bench(sql)
   function thread_init()
      params = suite_prepare(sql .. placeholders(sysbench.opt.range_size) .. ")",
         int_types(sysbench.opt.range_size))
   end
   function event()
      for j = 1, #params do
         params[j]:set(random_id())
      end
      suite_execute()
   end
end

-- range_bench makes the script a range benchmark: each event runs sql
-- (with "BETWEEN ? AND ?") from a random start to start + --range-size.
function range_bench(sql)
   function thread_init()
      params = suite_prepare(sql, int_types(2))
   end
   function event()
      local x = random_start()
      params[1]:set(x)
      params[2]:set(x + sysbench.opt.range_size)
      suite_execute()
   end
end

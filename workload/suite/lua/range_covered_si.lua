-- range_covered_si: SELECT id, k FROM sbtest1 WHERE k BETWEEN x AND x + --range-size.
require("flamediff_suite")

function thread_init()
   params = suite_prepare("SELECT id, k FROM sbtest1 WHERE k BETWEEN ? AND ?", int_types(2))
end

function event()
   local x = random_start()
   params[1]:set(x)
   params[2]:set(x + sysbench.opt.range_size)
   suite_execute()
end

-- points_notcovered_si: SELECT id, k, c FROM sbtest1 WHERE k IN (--range-size random values).
require("flamediff_suite")

function thread_init()
   params = suite_prepare("SELECT id, k, c FROM sbtest1 WHERE k IN (" ..
      placeholders(sysbench.opt.range_size) .. ")", int_types(sysbench.opt.range_size))
end

function event()
   for j = 1, #params do
      params[j]:set(random_id())
   end
   suite_execute()
end

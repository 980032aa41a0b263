-- points_notcovered_pk: SELECT id, c FROM sbtest1 WHERE id IN (--range-size random values).
require("flamediff_suite")

function thread_init()
   params = suite_prepare("SELECT id, c FROM sbtest1 WHERE id IN (" ..
      placeholders(sysbench.opt.range_size) .. ")", int_types(sysbench.opt.range_size))
end

function event()
   for j = 1, #params do
      params[j]:set(random_id())
   end
   suite_execute()
end

-- hot_points: SELECT c FROM sbtest1 WHERE id IN (the same 100 ids in the
-- middle of the table) in every event.
require("flamediff_suite")

HOT = 100

function hot_first()
   local first = math.floor(sysbench.opt.table_size / 2) - HOT / 2 + 1
   if first < 1 then
      first = 1
   end
   return first
end

function thread_init()
   params = suite_prepare("SELECT c FROM sbtest1 WHERE id IN (" .. placeholders(HOT) .. ")",
      int_types(HOT))
   local first = hot_first()
   for j = 1, HOT do
      params[j]:set(first + j - 1)
   end
end

function event()
   suite_execute()
end
